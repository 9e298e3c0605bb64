//! The analyses behind `tlab` (sweeps, curves, plans), shared with its benchmarks.

pub mod analysis;
pub mod calibrate;
pub mod measured;
pub mod measured_fit;
pub mod plan_ask;
pub mod profile_file;
pub mod scenario_file;
pub mod summary;
pub mod trace;

/// Write a command's output to standard output. A reader that stops early
/// (`tlab … | head`) closes the pipe: the output was wanted only so far,
/// which is not a failure.
pub fn write_output(out: &str) -> std::process::ExitCode {
    use std::io::Write;
    match std::io::stdout().lock().write_all(out.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("tlab: writing the output: {e}");
            std::process::ExitCode::FAILURE
        }
        _ => std::process::ExitCode::SUCCESS,
    }
}
