//! Installs the tools the build and the tests need, only when missing.
//!
//! Each install prints one line saying what it installs and why. Versions are
//! pinned: Trunk here, wasm-bindgen by `Cargo.lock`, npm packages by
//! `package-lock.json`, Chromium by the distribution.

use crate::{Failure, Result, describe};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Trunk release that builds with this machine's Rust (0.22 needs a newer rustc).
pub const TRUNK_VERSION: &str = "0.21.14";

/// Environment additions for child processes: the directories the tools live in.
pub struct Env {
    path: OsString,
}

impl Env {
    /// Variables to set on a child process.
    pub fn vars(&self) -> Vec<(&'static str, OsString)> {
        vec![("PATH", self.path.clone())]
    }
}

fn cargo_bin_dir() -> PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cargo")
        });
    home.join("bin")
}

/// PATH with cargo's install directory and the npm tools (wasm-opt) in front, so a
/// fresh `CARGO_HOME` or an unusual shell PATH still finds what we install.
fn env_for(root: &Path) -> Result<Env> {
    let mut dirs = vec![cargo_bin_dir(), root.join("node_modules/.bin")];
    if let Some(p) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    let path = std::env::join_paths(dirs).map_err(|e| Failure(format!("PATH: {e}")))?;
    Ok(Env { path })
}

/// First line of `cmd --version`, or None if it cannot run.
fn version_of(env: &Env, program: &str) -> Option<String> {
    let out = Command::new(program)
        .arg("--version")
        .envs(env.vars())
        .output()
        .ok()?;
    out.status.success().then(|| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_owned()
    })
}

pub fn install(what: &str, cmd: &mut Command) -> Result<()> {
    println!("xtask: installing {what}: {}", describe(cmd));
    let status = cmd
        .status()
        .map_err(|e| Failure(format!("cannot start {}: {e}", describe(cmd))))?;
    if status.success() {
        Ok(())
    } else {
        Err(Failure(format!(
            "installing {what} failed ({status}): {}",
            describe(cmd)
        )))
    }
}

/// The `wasm-bindgen` version recorded in Cargo.lock.
pub fn locked_wasm_bindgen(root: &Path) -> Result<String> {
    let lock = std::fs::read_to_string(root.join("Cargo.lock"))
        .map_err(|e| Failure(format!("Cargo.lock: {e}")))?;
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "name = \"wasm-bindgen\""
            && let Some(v) = lines
                .next()
                .and_then(|l| l.trim().strip_prefix("version = \""))
                .and_then(|l| l.strip_suffix('"'))
        {
            return Ok(v.to_owned());
        }
    }
    Err(Failure("Cargo.lock has no wasm-bindgen package".into()))
}

fn ensure_wasm_target(env: &Env) -> Result<()> {
    let out = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .envs(env.vars())
        .output()
        .map_err(|_| {
            Failure(
                "rustup not found: install the wasm32-unknown-unknown target for your Rust \
                 toolchain by hand, then run this again"
                    .into(),
            )
        })?;
    if String::from_utf8_lossy(&out.stdout)
        .lines()
        .any(|l| l.trim() == "wasm32-unknown-unknown")
    {
        return Ok(());
    }
    install(
        "the wasm32-unknown-unknown Rust target",
        Command::new("rustup")
            .args(["target", "add", "wasm32-unknown-unknown"])
            .envs(env.vars()),
    )
}

fn ensure_trunk(env: &Env) -> Result<()> {
    let want = format!("trunk {TRUNK_VERSION}");
    if version_of(env, "trunk").as_deref() == Some(want.as_str()) {
        return Ok(());
    }
    install(
        &format!("Trunk {TRUNK_VERSION} (≈ 8 min on 2 cores, once)"),
        Command::new("cargo")
            .args([
                "install",
                "trunk",
                "--version",
                TRUNK_VERSION,
                "--locked",
                "--force",
            ])
            .envs(env.vars()),
    )
}

fn ensure_wasm_bindgen(root: &Path, env: &Env) -> Result<()> {
    let version = locked_wasm_bindgen(root)?;
    if version_of(env, "wasm-bindgen").as_deref()
        == Some(format!("wasm-bindgen {version}").as_str())
    {
        return Ok(());
    }
    // Not --locked: its lockfile wants a webpki-roots release the registry lacks.
    install(
        &format!("wasm-bindgen-cli {version}, the version in Cargo.lock (≈ 4 min, once)"),
        Command::new("cargo")
            .args([
                "install",
                "wasm-bindgen-cli",
                "--version",
                &version,
                "--force",
            ])
            .envs(env.vars()),
    )
}

fn ensure_node(env: &Env) -> Result<()> {
    let v = version_of(env, "node").ok_or_else(|| {
        Failure("Node.js not found: install Node.js 20 or newer (e.g. `apt-get install nodejs npm`), then run this again".into())
    })?;
    let major: u32 = v
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    if major < 20 {
        return Err(Failure(format!(
            "Node.js {v} is too old: install Node.js 20 or newer"
        )));
    }
    Ok(())
}

/// `npm ci` unless node_modules already matches package-lock.json.
fn ensure_npm_packages(root: &Path, env: &Env) -> Result<()> {
    let lock = root.join("package-lock.json");
    let installed = root.join("node_modules/.package-lock.json");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let fresh = match (modified(&lock), modified(&installed)) {
        (Some(l), Some(i)) => i >= l,
        _ => false,
    } && root.join("node_modules/binaryen/package.json").exists()
        && root
            .join("node_modules/playwright-core/package.json")
            .exists();
    if fresh {
        return Ok(());
    }
    install(
        "npm packages from package-lock.json (binaryen for wasm-opt, playwright-core)",
        Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(root)
            .envs(env.vars()),
    )
}

pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn ensure_chromium(env: &Env) -> Result<()> {
    let chromium = std::env::var_os("CHROMIUM_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if chromium.exists() && Path::new("/usr/bin/chromedriver").exists() {
        return Ok(());
    }
    let have_apt = Path::new("/usr/bin/apt-get").exists();
    if !have_apt || !is_root() {
        return Err(Failure(
            "the browser tests need Chromium and ChromeDriver, and this user cannot install them. \
             Install them by hand (Debian/Ubuntu: `sudo apt-get update && sudo apt-get install -y \
             chromium chromium-driver`), or set CHROMIUM_PATH to a Chromium binary, then run this again"
                .into(),
        ));
    }
    install(
        "the package lists for apt",
        Command::new("apt-get").arg("update").envs(env.vars()),
    )?;
    install(
        "Chromium and ChromeDriver from apt (≈ 1 min, once)",
        Command::new("apt-get")
            .args([
                "install",
                "-y",
                "--no-install-recommends",
                "chromium",
                "chromium-driver",
            ])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .envs(env.vars()),
    )
}

/// Everything `trunk build` and `trunk serve` need.
pub fn ensure_build_tools(root: &Path) -> Result<Env> {
    let env = env_for(root)?;
    ensure_wasm_target(&env)?;
    ensure_node(&env)?;
    ensure_npm_packages(root, &env)?;
    ensure_trunk(&env)?;
    ensure_wasm_bindgen(root, &env)?;
    Ok(env)
}

/// Everything the build needs plus a browser for the end-to-end tests.
pub fn ensure_browser_tools(root: &Path) -> Result<Env> {
    let env = ensure_build_tools(root)?;
    ensure_chromium(&env)?;
    Ok(env)
}
