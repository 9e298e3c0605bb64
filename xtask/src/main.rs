//! Build, serve and test automation for Throughput Lab.
//!
//! `cargo xtask serve` serves the app at http://127.0.0.1:8080 with rebuild on change;
//! `cargo xtask test` runs every check, in order, and stops at the first failure.
//! Both first install what is missing (idempotently, one line per install) and never
//! download anything from outside the package registries: Trunk runs offline with
//! the tool versions pinned in `Trunk.toml`, `Cargo.lock` and `package-lock.json`.

mod bench;
mod python;
mod tools;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  serve [--dev]   install what is missing, then serve the app at http://127.0.0.1:8080
                  (rebuilds on change; --dev skips optimisation for faster rebuilds)
  test            install what is missing, then run every check:
                  fmt, clippy, native tests, Python package tests,
                  release web build, browser tests
  build           release web build into dist/
  e2e             browser tests only, against the existing dist/
  bench-web       browser benchmark (headless Chromium) against the existing dist/
  bench           the native benchmarks (engine, planner); their medians
                  written into docs/benchmarks.md with the machine
  fuzz [CASES]    the input fuzzers at CASES cases a surface (default 100000;
                  the test gate runs a few hundred to a few thousand)
";

/// A failure that ends the command, with the message to print.
#[derive(Debug)]
pub struct Failure(pub String);

impl<E: std::error::Error> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure(e.to_string())
    }
}

type Result<T, E = Failure> = std::result::Result<T, E>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = repo_root();
    let outcome = match args.first().map(String::as_str) {
        Some("serve") => serve(&root, args.iter().any(|a| a == "--dev")),
        Some("test") => return test(&root),
        Some("build") => tools::ensure_build_tools(&root).and_then(|env| trunk_build(&root, &env)),
        Some("e2e") => tools::ensure_browser_tools(&root)
            .and_then(|env| merge(&mut Tally::default(), run_e2e(&root, &env, false))),
        Some("bench") => bench::bench(&root),
        Some("fuzz") => fuzz(&root, args.get(1).map(String::as_str)),
        Some("bench-web") => tools::ensure_browser_tools(&root).and_then(|env| {
            run(Command::new("node")
                .arg("tests/bench/web-bench.mjs")
                .current_dir(&root)
                .envs(env.vars()))
        }),
        _ => {
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(msg)) => {
            eprintln!("xtask: error: {msg}");
            ExitCode::FAILURE
        }
    }
}

/// `cargo xtask fuzz [CASES]`: the property-based fuzzers of every input
/// surface (`sim-core/tests/it/fuzz_traces.rs`, `fuzz_text.rs`), optimised, at CASES cases
/// each.
fn fuzz(root: &Path, cases: Option<&str>) -> Result<()> {
    let cases = cases.unwrap_or("100000");
    if cases.parse::<u32>().is_err() {
        return Err(Failure(format!(
            "fuzz: CASES must be a whole number, got {cases:?}"
        )));
    }
    println!("xtask: fuzzing every input surface, {cases} cases each");
    run(Command::new("cargo")
        .args([
            "test",
            "-p",
            "sim-core",
            "--release",
            "--test",
            "it",
            "fuzz_t",
            "--",
            "--nocapture",
        ])
        .env("TLAB_FUZZ_CASES", cases)
        .current_dir(root))
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn serve(root: &Path, dev: bool) -> Result<()> {
    let env = tools::ensure_build_tools(root)?;
    println!("xtask: serving Throughput Lab at http://127.0.0.1:8080 (Ctrl-C stops)");
    let mut cmd = Command::new("trunk");
    cmd.arg("serve").arg("index.html");
    if !dev {
        cmd.arg("--release");
    }
    let status = cmd
        .current_dir(root)
        .envs(env.vars())
        .status()
        .map_err(|e| Failure(format!("cannot start trunk: {e}")))?;
    // Ctrl-C (or a kill) is how a server is meant to end: not an error.
    if status.success() || status.code().is_none() {
        println!("xtask: server stopped");
        Ok(())
    } else {
        Err(Failure(format!("trunk serve exited with {status}")))
    }
}

fn trunk_build(root: &Path, env: &tools::Env) -> Result<()> {
    run(Command::new("trunk")
        .args(["build", "index.html", "--release"])
        .current_dir(root)
        .envs(env.vars()))
}

/// Run a command with inherited output; fail if it exits non-zero.
fn run(cmd: &mut Command) -> Result<()> {
    let status = cmd
        .status()
        .map_err(|e| Failure(format!("cannot start {:?}: {e}", cmd.get_program())))?;
    if status.success() {
        Ok(())
    } else {
        Err(Failure(format!("{} exited with {status}", describe(cmd))))
    }
}

fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// Passed and failed test counts, summed over every runner.
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    passed: u64,
    failed: u64,
}

/// Run a command, echo its standard output line by line, and count tests from it
/// with `parse` (each line may add to the tally).
fn run_counting(cmd: &mut Command, parse: fn(&str, &mut Tally)) -> Result<Tally, (Tally, Failure)> {
    let mut tally = Tally::default();
    let mut child = match cmd.stdout(Stdio::piped()).spawn() {
        Ok(c) => c,
        Err(e) => {
            return Err((
                tally,
                Failure(format!("cannot start {}: {e}", describe(cmd))),
            ));
        }
    };
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out)
            .lines()
            .map_while(std::result::Result::ok)
        {
            println!("{line}");
            parse(&line, &mut tally);
        }
    }
    match child.wait() {
        Ok(s) if s.success() => Ok(tally),
        Ok(s) => Err((tally, Failure(format!("{} exited with {s}", describe(cmd))))),
        Err(e) => Err((tally, Failure(e.to_string()))),
    }
}

/// `test result: ok. 12 passed; 0 failed; ...` from libtest.
fn parse_libtest(line: &str, t: &mut Tally) {
    let Some(rest) = line.trim().strip_prefix("test result: ") else {
        return;
    };
    for part in rest.split(';') {
        let words: Vec<&str> = part.split_whitespace().collect();
        let n = |w: &str| w.parse::<u64>().ok();
        match words.as_slice() {
            [.., num, "passed"] => t.passed += n(num).unwrap_or(0),
            [num, "failed"] => t.failed += n(num).unwrap_or(0),
            _ => {}
        }
    }
}

/// `# pass 3` / `# fail 0` from node's TAP reporter.
fn parse_tap(line: &str, t: &mut Tally) {
    let mut words = line.split_whitespace();
    match (
        words.next(),
        words.next(),
        words.next().and_then(|w| w.parse::<u64>().ok()),
    ) {
        (Some("#"), Some("pass"), Some(n)) => t.passed += n,
        (Some("#"), Some("fail"), Some(n)) => t.failed += n,
        _ => {}
    }
}

/// The browser tests; `strict` (the whole test run) fails a test whose
/// input from an earlier stage is missing instead of skipping it.
fn run_e2e(root: &Path, env: &tools::Env, strict: bool) -> Result<Tally, (Tally, Failure)> {
    let dir = root.join("tests/e2e");
    let mut specs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| (Tally::default(), Failure(format!("{}: {e}", dir.display()))))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".test.mjs"))
        .collect();
    specs.sort();
    if specs.is_empty() {
        return Err((
            Tally::default(),
            Failure("no browser tests found in tests/e2e".into()),
        ));
    }
    let mut cmd = Command::new("node");
    cmd.args(["--test", "--test-reporter=tap", "--test-concurrency=1"])
        .args(&specs)
        .current_dir(root)
        .envs(env.vars());
    if strict {
        cmd.env("TLAB_REQUIRE_ALL", "1");
    }
    run_counting(&mut cmd, parse_tap)
}

fn test(root: &Path) -> ExitCode {
    let started = Instant::now();
    let mut total = Tally::default();
    let result = test_stages(root, &mut total);
    let secs = started.elapsed().as_secs();
    match result {
        Ok(()) => {
            println!(
                "xtask: all checks passed in {}m{:02}s",
                secs / 60,
                secs % 60
            );
            println!("{} passed, {} failed", total.passed, total.failed);
            ExitCode::SUCCESS
        }
        Err(Failure(msg)) => {
            eprintln!("xtask: FAILED after {}m{:02}s: {msg}", secs / 60, secs % 60);
            // A failing stage that is not itself a test runner counts as one failure.
            println!("{} passed, {} failed", total.passed, total.failed.max(1));
            ExitCode::FAILURE
        }
    }
}

fn test_stages(root: &Path, total: &mut Tally) -> Result<()> {
    let env = tools::ensure_browser_tools(root)?;
    let stage = |n: u32, what: &str| println!("\n==> [{n}/6] {what}");

    stage(1, "cargo fmt --check");
    run(Command::new("cargo")
        .args(["fmt", "--all", "--check"])
        .current_dir(root)
        .envs(env.vars()))
    .map_err(|f| Failure(format!("formatting: {} (run `cargo fmt`)", f.0)))?;

    stage(2, "cargo clippy --workspace --all-targets -- -D warnings");
    run(Command::new("cargo")
        .args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ])
        .current_dir(root)
        .envs(env.vars()))
    .map_err(|f| Failure(format!("clippy: {}", f.0)))?;

    stage(3, "cargo test --workspace (native)");
    let native = run_counting(
        Command::new("cargo")
            .args(["test", "--workspace", "--no-fail-fast"])
            .current_dir(root)
            .envs(env.vars()),
        parse_libtest,
    );
    merge(total, native).map_err(|f| Failure(format!("native tests: {}", f.0)))?;

    stage(
        4,
        "Python package: pip install ./python, pytest (python/tests)",
    );
    merge(total, python::run_tests(root, &env))
        .map_err(|f| Failure(format!("Python tests: {}", f.0)))?;

    stage(5, "trunk build --release (web bundle into dist/)");
    trunk_build(root, &env).map_err(|f| Failure(format!("web build: {}", f.0)))?;

    stage(6, "browser end-to-end tests (headless Chromium)");
    merge(total, run_e2e(root, &env, true))
        .map_err(|f| Failure(format!("browser tests: {}", f.0)))?;
    Ok(())
}

fn merge(total: &mut Tally, r: Result<Tally, (Tally, Failure)>) -> Result<()> {
    let (t, err) = match r {
        Ok(t) => (t, None),
        Err((t, e)) => (t, Some(e)),
    };
    total.passed += t.passed;
    total.failed += t.failed;
    match err {
        None if t.failed == 0 => Ok(()),
        None => Err(Failure(format!("{} test(s) failed", t.failed))),
        Some(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_libtest_summaries() {
        let mut t = Tally::default();
        parse_libtest(
            "test result: ok. 12 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s",
            &mut t,
        );
        parse_libtest("test result: FAILED. 3 passed; 2 failed; 0 ignored", &mut t);
        parse_libtest("running 12 tests", &mut t);
        assert_eq!((t.passed, t.failed), (15, 2));
    }

    #[test]
    fn counts_tap_summaries() {
        let mut t = Tally::default();
        for line in [
            "# tests 4",
            "# pass 3",
            "# fail 1",
            "ok 1 - x",
            "# passes 9",
        ] {
            parse_tap(line, &mut t);
        }
        assert_eq!((t.passed, t.failed), (3, 1));
    }
}
