//! The Python package's tests: a virtual environment in `target/python-venv`
//! with the pinned test tools (`python/requirements-test.txt`: maturin,
//! pytest, pandas, tqdm, Ray, nbclient and matplotlib for the notebook), the package built from `python/` and
//! installed into it as a user's `pip install ./python` does, then pytest.

use crate::{Failure, Result, Tally, describe, run_counting, tools};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The environment's Python, created with the test tools when missing;
/// the tools are (re)installed when the pinned list is newer than the
/// environment's record of it.
fn ensure_venv(root: &Path, env: &tools::Env) -> Result<PathBuf> {
    let venv = root.join("target/python-venv");
    let python = venv.join("bin/python");
    if !python.exists() {
        let mut cmd = Command::new("python3");
        cmd.args(["-m", "venv"]).arg(&venv).envs(env.vars());
        if tools::install("a Python environment for the package's tests", &mut cmd).is_err() {
            // Debian's own Python keeps venv in a package of its own.
            if !(Path::new("/usr/bin/apt-get").exists() && tools::is_root()) {
                return Err(Failure(
                    "the Python tests need `python3 -m venv`, and this user cannot install it. \
                     Install it by hand (Debian/Ubuntu: `sudo apt-get install -y python3-venv`), \
                     then run this again"
                        .into(),
                ));
            }
            let _ = std::fs::remove_dir_all(&venv);
            tools::install(
                "the package lists for apt",
                Command::new("apt-get").arg("update").envs(env.vars()),
            )?;
            tools::install(
                "Python's venv module from apt",
                Command::new("apt-get")
                    .args(["install", "-y", "--no-install-recommends", "python3-venv"])
                    .env("DEBIAN_FRONTEND", "noninteractive")
                    .envs(env.vars()),
            )?;
            let mut again = Command::new("python3");
            again.args(["-m", "venv"]).arg(&venv).envs(env.vars());
            tools::install("a Python environment for the package's tests", &mut again)?;
        }
    }
    let pinned = root.join("python/requirements-test.txt");
    let stamp = venv.join("requirements-test.installed");
    let wanted = std::fs::read_to_string(&pinned)
        .map_err(|e| Failure(format!("{}: {e}", pinned.display())))?;
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(wanted.as_str()) {
        let mut cmd = Command::new(&python);
        cmd.args(["-m", "pip", "install", "-q", "-r"])
            .arg(&pinned)
            .envs(env.vars());
        tools::install("the Python test tools (pinned)", &mut cmd)?;
        std::fs::write(&stamp, wanted)?;
    }
    Ok(python)
}

/// `dir` in front of the tools' PATH.
fn path_with(dir: &Path, env: &tools::Env) -> Result<std::ffi::OsString> {
    let tools_path = env
        .vars()
        .into_iter()
        .find(|(k, _)| *k == "PATH")
        .map(|(_, v)| v)
        .unwrap_or_default();
    let dirs = std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&tools_path));
    std::env::join_paths(dirs).map_err(|e| Failure(format!("PATH: {e}")))
}

/// `pytest -v` lines: `path::test PASSED [ 50%]`, `FAILED`, `ERROR`.
fn parse_pytest(line: &str, t: &mut Tally) {
    let mut words = line.split_whitespace();
    let (Some(test), Some(outcome)) = (words.next(), words.next()) else {
        return;
    };
    if !test.contains("::") {
        return;
    }
    match outcome {
        "PASSED" => t.passed += 1,
        "FAILED" | "ERROR" => t.failed += 1,
        _ => {}
    }
}

/// Build and install the package, then run its tests against the `tlab`
/// binary the native tests built.
pub fn run_tests(root: &Path, env: &tools::Env) -> Result<Tally, (Tally, Failure)> {
    let fail = |f: Failure| (Tally::default(), f);
    let python = ensure_venv(root, env).map_err(fail)?;
    // The environment's tools (maturin, which pip calls to build) first.
    let path = path_with(&root.join("target/python-venv/bin"), env).map_err(fail)?;
    let mut install = Command::new(&python);
    install
        .args([
            "-m",
            "pip",
            "install",
            "-q",
            "--no-build-isolation",
            "--no-deps",
            "--force-reinstall",
            "./python",
        ])
        .current_dir(root)
        .envs(env.vars())
        .env("PATH", &path);
    println!("xtask: {}", describe(&install));
    crate::run(&mut install).map_err(fail)?;
    let mut cmd = Command::new(&python);
    cmd.args([
        "-m",
        "pytest",
        "-v",
        "-p",
        "no:cacheprovider",
        "python/tests",
    ])
    .current_dir(root)
    .env("TLAB_BIN", root.join("target/debug/tlab"))
    .env("TLAB_REQUIRE_ALL", "1")
    .envs(env.vars());
    run_counting(&mut cmd, parse_pytest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_lines_are_counted_and_nothing_else() {
        let mut t = Tally::default();
        for line in [
            "python/tests/test_run.py::test_a[chatbot-h100] PASSED          [ 12%]",
            "python/tests/test_run.py::test_b FAILED                       [ 25%]",
            "python/tests/test_many.py::test_c ERROR",
            "python/tests/test_ray.py::test_d SKIPPED (no ray)",
            "PASSED is not a test name",
            "===== 2 passed, 1 failed in 3.1s =====",
        ] {
            parse_pytest(line, &mut t);
        }
        assert_eq!((t.passed, t.failed), (1, 2));
    }
}
