//! `tlab trace FILE` and `tlab run --trace FILE`: a real request trace read
//! in (`sim_core::traces`: the format detected, every line read or refused),
//! what it holds, and a scenario that replays it.

use sim_core::traces::{self, Imported, Options};
use std::io::Read;
use std::path::Path;

/// Largest trace file read (the engine replays at most 5 M requests).
const MAX_TRACE_BYTES: u64 = 2 * 1024 * 1024 * 1024;

/// How a trace is taken, as the command line says it.
#[derive(Clone, Debug, clap::Args)]
pub struct TraceArgs {
    /// Replay time this many times faster (2 = the same requests in half the
    /// time).
    #[arg(long = "trace-speed", default_value_t = 1.0)]
    pub speed: f64,
    /// Keep the requests arriving in FROM:TO seconds of the trace, moved to
    /// start at 0.
    #[arg(long = "trace-window", value_name = "FROM:TO")]
    pub window: Option<String>,
    /// Take each request's class from this column (BurstGPT's Model or Log
    /// Type): each value a class of its own, reported apart.
    #[arg(long = "trace-classes", value_name = "COLUMN")]
    pub classes: Option<String>,
}

impl Default for TraceArgs {
    fn default() -> Self {
        TraceArgs {
            speed: 1.0,
            window: None,
            classes: None,
        }
    }
}

impl TraceArgs {
    fn options(&self) -> Result<Options, String> {
        let window = match &self.window {
            None => None,
            Some(w) => {
                let (a, b) = w
                    .split_once(':')
                    .ok_or_else(|| format!("--trace-window {w:?}: expected FROM:TO in seconds"))?;
                let num = |s: &str| {
                    s.trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|v| v.is_finite())
                        .ok_or_else(|| {
                            format!("--trace-window {w:?}: {s:?} is not a number of seconds")
                        })
                };
                Some((num(a)?, num(b)?))
            }
        };
        Ok(Options {
            speed: self.speed,
            window,
            class_column: self.classes.clone(),
        })
    }
}

/// Read the trace at `path`.
pub fn read(path: &Path, args: &TraceArgs) -> Result<Imported, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut text = String::new();
    file.take(MAX_TRACE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if text.len() as u64 > MAX_TRACE_BYTES {
        return Err(format!(
            "{}: larger than {} GB; cut it first",
            path.display(),
            MAX_TRACE_BYTES >> 30
        ));
    }
    traces::read(&text, &args.options()?).map_err(|e| format!("{}: {e}", path.display()))
}

/// What the trace holds, in words.
pub fn summary_text(path: &Path, t: &Imported) -> String {
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    t.describe(&name)
}
