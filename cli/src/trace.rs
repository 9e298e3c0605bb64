//! `tlab trace FILE` and `tlab run --trace FILE`: a real request trace read
//! in (`sim_core::traces`: the format detected, every line read or refused),
//! what it holds, and a scenario that replays it.

use sim_core::traces::{self, Imported, Options};
use std::io::Read as _;
use std::path::Path;

/// Largest trace file read, bytes: it is read a line at a time, so this
/// bounds the time a read takes, not its memory (the requests kept are
/// bounded by `bounds::TRACE_REQUESTS`).
const MAX_TRACE_BYTES: u64 = 64 << 30;

/// How a trace is taken, as the command line says it.
#[derive(Clone, Debug, clap::Args)]
pub struct TraceArgs {
    /// Replay time this many times faster (2 = the same requests in half the
    /// time).
    #[arg(long = "trace-speed", default_value_t = 1.0)]
    pub speed: f64,
    /// Replay at this mean rate instead, requests per second: every gap
    /// scaled alike, counts and order kept.
    #[arg(
        long = "trace-rate",
        value_name = "REQ_PER_S",
        conflicts_with = "speed"
    )]
    pub rate: Option<f64>,
    /// Keep the requests arriving in FROM:TO seconds of the trace, moved to
    /// start at 0.
    #[arg(long = "trace-window", value_name = "FROM:TO")]
    pub window: Option<String>,
    /// Take each request's class from this column (BurstGPT's Model or Log
    /// Type): each value a class of its own, reported apart.
    #[arg(long = "trace-classes", value_name = "COLUMN")]
    pub classes: Option<String>,
    /// Leave out lines that do not read (the summary counts and names
    /// them) instead of refusing the file at the first.
    #[arg(long = "trace-skip-bad-lines")]
    pub skip_bad_lines: bool,
}

impl Default for TraceArgs {
    fn default() -> Self {
        TraceArgs {
            speed: 1.0,
            rate: None,
            window: None,
            classes: None,
            skip_bad_lines: false,
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
            rate_per_s: self.rate,
            window,
            class_column: self.classes.clone(),
            skip_bad_lines: self.skip_bad_lines,
        })
    }
}

/// The name a trace file goes by: its file name, or the path without one.
pub fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The lines of a file (without their line breaks), read a buffer at a
/// time: the file's text is never held whole.
struct FileLines {
    reader: std::io::BufReader<std::io::Take<std::fs::File>>,
    shown: String,
    buf: Vec<u8>,
    read: u64,
    n: usize,
}

impl FileLines {
    fn open(path: &Path) -> Result<FileLines, String> {
        let shown = path.display().to_string();
        let file = std::fs::File::open(path).map_err(|e| format!("{shown}: {e}"))?;
        Ok(FileLines {
            reader: std::io::BufReader::with_capacity(1 << 20, file.take(MAX_TRACE_BYTES + 1)),
            shown,
            buf: Vec::new(),
            read: 0,
            n: 0,
        })
    }

    /// The next line's text, without its break as `str::lines` cuts them
    /// ("\n" or "\r\n"), its bytes (break included) into `digest` when
    /// given; None at the end.
    fn next_line(
        &mut self,
        digest: Option<&mut traces::FileDigest>,
    ) -> Option<Result<&str, String>> {
        use std::io::BufRead;
        self.buf.clear();
        let got = match self.reader.read_until(b'\n', &mut self.buf) {
            Ok(0) => return None,
            Ok(got) => got,
            Err(e) => return Some(Err(format!("{}: {e}", self.shown))),
        };
        self.read += got as u64;
        self.n += 1;
        if self.read > MAX_TRACE_BYTES {
            return Some(Err(format!(
                "{}: larger than {} GB; cut it first",
                self.shown,
                MAX_TRACE_BYTES >> 30
            )));
        }
        if let Some(d) = digest {
            d.update(&self.buf);
        }
        let mut bytes = &self.buf[..];
        if let Some(b) = bytes.strip_suffix(b"\n") {
            bytes = b.strip_suffix(b"\r").unwrap_or(b);
        }
        Some(std::str::from_utf8(bytes).map_err(|e| {
            format!(
                "{}: line {} is not UTF-8 text (byte {})",
                self.shown,
                self.n,
                e.valid_up_to() + 1
            )
        }))
    }
}

impl Iterator for FileLines {
    type Item = Result<String, String>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_line(None).map(|l| l.map(str::to_owned))
    }
}

/// Each line of the file at `path` (without its line break), read a
/// buffer at a time: the file's text is never held whole. Its bytes go to
/// `digest` too when given.
fn each_line(
    path: &Path,
    mut digest: Option<&mut traces::FileDigest>,
    mut line: impl FnMut(&str) -> Result<(), String>,
) -> Result<(), String> {
    let mut lines = FileLines::open(path)?;
    let shown = lines.shown.clone();
    while let Some(text) = lines.next_line(digest.as_deref_mut()) {
        line(text?).map_err(|e| format!("{shown}: {e}"))?;
    }
    Ok(())
}

/// A line's refusal, with how to leave such lines out when it could be.
fn skip_hint(e: String, skippable: bool) -> String {
    if skippable {
        format!("{e} (--trace-skip-bad-lines leaves out lines that do not read)")
    } else {
        e
    }
}

/// Read the trace at `path`, a line at a time (with its SHA-256 when
/// `digest`).
fn read_streamed(
    path: &Path,
    options: &Options,
    digest: Option<&mut traces::FileDigest>,
) -> Result<Imported, String> {
    // Room for about a request per 100 bytes; it grows past that.
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    let lines = usize::try_from(size / 100).unwrap_or(usize::MAX);
    let mut r =
        traces::TraceReader::new(options, lines).map_err(|e| format!("{}: {e}", path.display()))?;
    each_line(path, digest, |l| {
        let read = r.line(l);
        read.map_err(|e| skip_hint(e, r.skippable()))
    })?;
    r.finish().map_err(|e| format!("{}: {e}", path.display()))
}

/// Read the trace at `path`.
pub fn read(path: &Path, args: &TraceArgs) -> Result<Imported, String> {
    read_streamed(path, &args.options()?, None)
}

/// [`read`], and the reference a link names the file by (its SHA-256 and
/// summary: work only a distillation needs).
pub fn read_with_ref(
    path: &Path,
    args: &TraceArgs,
) -> Result<(Imported, sim_core::scenario::TraceRef), String> {
    let options = args.options()?;
    let mut digest = traces::FileDigest::default();
    let t = read_streamed(path, &options, Some(&mut digest))?;
    let r = sim_core::scenario::TraceRef::with_digest(&file_name(path), digest.hex(), &t, &options);
    Ok((t, r))
}

/// What the trace at `path` holds, in words: summarised in one pass that
/// keeps no request (memory bounded by the span's minutes, the distinct
/// lengths and hashes, not the file's length); a file out of arrival
/// order, or one taken at a target rate, is read whole instead.
pub fn summary_text(path: &Path, args: &TraceArgs) -> Result<String, String> {
    let options = args.options()?;
    let name = file_name(path);
    if let Some(mut s) =
        traces::TraceSummariser::new(&options).map_err(|e| format!("{}: {e}", path.display()))?
    {
        match each_line(path, None, |l| {
            let read = s.line(l);
            read.map_err(|e| skip_hint(e, s.skippable()))
        }) {
            Ok(()) => {
                if let Some(t) = s.finish().map_err(|e| format!("{}: {e}", path.display()))? {
                    return Ok(t.describe(&name));
                }
            }
            Err(e) if s.unsorted().is_none() => return Err(e),
            Err(_) => {}
        }
    }
    Ok(read_streamed(path, &options, None)?.describe(&name))
}

/// `tlab run --trace FILE`: `base` replaying the trace, and its report.
/// A file in arrival order is streamed: read once to check and summarise
/// it, the scenario made from that summary, then read again as the run
/// goes, so memory holds the requests in flight, not the trace (10⁷ lines
/// replay in the memory of a few thousand). A file out of order, or taken
/// at a target rate, is read whole instead (at most
/// `bounds::TRACE_REQUESTS` requests). The trace's description goes to
/// standard error.
pub fn replay(
    path: &Path,
    args: &TraceArgs,
    base: sim_core::Scenario,
) -> Result<(sim_core::ValidScenario, sim_core::Report), String> {
    let options = args.options()?;
    let name = file_name(path);
    let shown = path.display();
    if let Some(mut s) =
        traces::TraceSummariser::new(&options).map_err(|e| format!("{shown}: {e}"))?
    {
        match each_line(path, None, |l| {
            let read = s.line(l);
            read.map_err(|e| skip_hint(e, s.skippable()))
        }) {
            Ok(()) => {
                if let Some(t) = s
                    .finish()
                    .map_err(|e| format!("{shown}: {e}"))?
                    .filter(|t| t.streamable())
                {
                    eprint!("{}", t.describe(&name));
                    let mut edited = base;
                    t.apply_to(&mut edited);
                    let valid = edited.validate().map_err(|e| e.to_string())?;
                    let feed = traces::LineFeed::new(FileLines::open(path)?, &options, &t);
                    let report = sim_core::run_with_feed(&valid, Box::new(feed))
                        .map_err(|e| format!("{shown}: {e}"))?;
                    return Ok((valid, report));
                }
            }
            Err(e) if s.unsorted().is_none() => return Err(e),
            Err(_) => {}
        }
    }
    let t = read(path, args)?;
    eprint!("{}", t.describe(&name));
    let mut edited = base;
    t.apply_to(&mut edited);
    let valid = edited.validate().map_err(|e| e.to_string())?;
    let report = sim_core::run(&valid);
    Ok((valid, report))
}

/// The trace at `path`, read as `args` say, distilled onto `base`'s fleet:
/// the scenario (naming the file it came from) and what it loses.
pub fn distil(
    path: &Path,
    args: &TraceArgs,
    base: &sim_core::Scenario,
) -> Result<traces::Distilled, String> {
    let (t, reference) = read_with_ref(path, args)?;
    distilled(path, &t, reference, base)
}

fn distilled(
    path: &Path,
    t: &Imported,
    reference: sim_core::scenario::TraceRef,
    base: &sim_core::Scenario,
) -> Result<traces::Distilled, String> {
    let mut d = t
        .distil(base, &file_name(path))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    d.scenario.distilled_from = Some(reference);
    Ok(d)
}

/// `tlab trace FILE --distil SCENARIO`: the distilled scenario and the exact
/// replay run on the same fleet, side by side, with what the distillation
/// loses; the scenario written to `out` when given.
pub fn distil_text(
    path: &Path,
    (t, reference): (&Imported, sim_core::scenario::TraceRef),
    base: &sim_core::Scenario,
    out: Option<&Path>,
) -> Result<String, String> {
    use sim_core::format::{duration_ms, rounded, thousands};
    let d = distilled(path, t, reference, base)?;
    let mut exact = base.clone();
    t.apply_to(&mut exact);
    let run = |s: &sim_core::Scenario| -> Result<sim_core::Report, String> {
        sim_core::run_scenario(s.clone()).map_err(|e| e.to_string())
    };
    let (a, b) = (run(&exact)?, run(&d.scenario)?);
    let link = |s: &sim_core::Scenario| sim_core::link::encode_fragment(s).len();
    let mut o = format!(
        "\nDistilled into \"{}\": {} class{}, rate over {} schedule points; its link is {} characters (the exact replay's {})\n",
        d.scenario.name,
        d.scenario.workload.classes.len(),
        if d.scenario.workload.classes.len() == 1 {
            ""
        } else {
            "es"
        },
        match &d.scenario.workload.arrival {
            sim_core::scenario::Arrival::Schedule { points, .. } => points.len(),
            _ => 1,
        },
        thousands(link(&d.scenario) as u64),
        thousands(link(&exact) as u64),
    );
    o += &format!(
        "{:<28} {:>16} {:>16}\n",
        "on this fleet", "exact replay", "distilled"
    );
    let row = |what: &str, x: String, y: String| format!("{what:<28} {x:>16} {y:>16}\n");
    o += &row(
        "requests completed",
        thousands(a.requests.completed),
        thousands(b.requests.completed),
    );
    for (what, f) in [
        (
            "TTFT mean",
            (|r: &sim_core::Report| r.overall.ttft.mean_ms) as fn(&sim_core::Report) -> Option<f64>,
        ),
        ("TTFT p99", |r| r.overall.ttft.p99_ms),
        ("time per token mean", |r| r.overall.tpot.mean_ms),
        ("time per token p99", |r| r.overall.tpot.p99_ms),
        ("end-to-end mean", |r| r.overall.e2e.mean_ms),
        ("end-to-end p99", |r| r.overall.e2e.p99_ms),
    ] {
        o += &row(what, duration_ms(f(&a)), duration_ms(f(&b)));
    }
    o += &row(
        "generated tokens/s",
        rounded(a.throughput.output_tokens_per_s),
        rounded(b.throughput.output_tokens_per_s),
    );
    o += &row(
        "prompt tokens from cache",
        format!("{:.1} %", a.utilisation.prefix_cache_hit_rate * 100.0),
        format!("{:.1} %", b.utilisation.prefix_cache_hit_rate * 100.0),
    );
    o += "The distilled scenario loses:\n";
    for l in &d.loses {
        o += &format!("  - {l}\n");
    }
    if let Some(out) = out {
        let json = serde_json::to_string_pretty(&d.scenario).map_err(|e| e.to_string())?;
        std::fs::write(out, json + "\n").map_err(|e| format!("{}: {e}", out.display()))?;
        o += &format!("Distilled scenario written to {}\n", out.display());
    }
    Ok(o)
}
