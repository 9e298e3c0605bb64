//! `tlab` as a shell runs it: a reader that stops early is not a crash.

use std::io::Read;
use std::process::{Command, Stdio};

#[test]
fn a_reader_that_stops_early_is_not_a_crash() {
    // `tlab run --json … | head -c 10`: read a little, then close the pipe
    // while tlab still has most of its output to write (a report of more
    // than a pipe's 64 KB).
    let dir = std::env::temp_dir().join(format!("tlab-pipe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let scenario = dir.join("launch-day-gpus.json");
    let preset = Command::new(env!("CARGO_BIN_EXE_tlab"))
        .args(["preset", "launch-day-gpus"])
        .output()
        .expect("tlab preset");
    std::fs::write(&scenario, preset.stdout).expect("the scenario");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tlab"))
        .arg("run")
        .arg(&scenario)
        .arg("--json")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tlab starts");
    let mut first = [0u8; 10];
    child
        .stdout
        .take()
        .expect("stdout")
        .read_exact(&mut first)
        .expect("some output");
    let out = child.wait_with_output().expect("tlab ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert_eq!(&first[..1], b"{");
    std::fs::remove_dir_all(&dir).ok();
}
