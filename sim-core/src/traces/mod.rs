//! Real request traces in: the formats production logs and benchmarks come
//! in, read into a scenario's trace arrivals. Pure (text in, requests out):
//! the CLI and the page read the files.
//!
//! Formats, detected from the text itself:
//! - **Mooncake** JSON lines: `timestamp` (ms from the start), `input_length`,
//!   `output_length`, `hash_ids` (prefix blocks of 512 tokens);
//! - **Azure LLM** CSV (2023/2024): `TIMESTAMP` (wall clock), `ContextTokens`,
//!   `GeneratedTokens`;
//! - **BurstGPT** CSV: `Timestamp` (s), `Model`, `Request tokens`,
//!   `Response tokens`, `Total tokens`, `Log Type`;
//! - a **request log**, JSON lines of a measured run: `input_toks`,
//!   `output_toks`, and `queued_ts` (the engine's clock) or `arrival_time`;
//! - **`vllm bench serve --save-detailed`** JSON: `input_lens`, `output_lens`,
//!   and `start_times` when saved (otherwise the benchmark's `request_rate`:
//!   `inf` sends every request at once, a finite rate spreads them evenly).
//!
//! Every line is read or refused: a line that does not parse is an error
//! naming the line and the field, never skipped, so a partial file is never
//! taken for a whole one.

use crate::scenario::TraceRequests;

mod distil;
mod formats;
pub mod measured;
mod measured_files;
mod reader;
mod replay;
mod stats;
mod summary;
mod summary_stream;

pub use distil::{Distilled, FileDigest, exact_replay, link_form, quantile_table, sha256_hex};
use formats::Sink;
pub use replay::LineFeed;
pub use summary::{RATE_WINDOWS, Summary};
pub use summary_stream::TraceSummary;

/// A trace format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Mooncake's JSON lines, with prefix-block hashes.
    Mooncake,
    /// Azure's LLM inference trace CSV.
    Azure,
    /// BurstGPT's CSV.
    BurstGpt,
    /// JSON lines of a measured run, one request each.
    RequestLog,
    /// `vllm bench serve --save-detailed` JSON.
    VllmBench,
}

impl Format {
    /// The format's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::Mooncake => "Mooncake JSON lines",
            Format::Azure => "Azure LLM trace CSV",
            Format::BurstGpt => "BurstGPT CSV",
            Format::RequestLog => "per-request JSON lines",
            Format::VllmBench => "vllm bench serve JSON",
        }
    }
}

/// How to take a trace: faster or slower, which part of it, and which
/// column names each request's class.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Time runs this many times faster (2 = the same requests in half the
    /// time, twice the rate).
    pub speed: f64,
    /// Replay at this mean rate instead, requests per second over the kept
    /// requests' span (their count ÷ first to last arrival, as
    /// [`Summary::mean_rate_per_s`]): every gap scaled alike, as `speed`
    /// does, so counts and order stay. With `speed` left at 1.
    pub rate_per_s: Option<f64>,
    /// Keep requests arriving in `[from, to)` seconds of the trace's own
    /// time (before `speed`), moved to start at 0.
    pub window: Option<(f64, f64)>,
    /// A column whose values are the requests' classes (BurstGPT's `Model`
    /// or `Log Type`): each value becomes a request class of its own,
    /// reported apart.
    pub class_column: Option<String>,
    /// Leave out lines that do not read, counting and naming them
    /// ([`Skipped`]), instead of refusing the file at the first.
    pub skip_bad_lines: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            speed: 1.0,
            rate_per_s: None,
            window: None,
            class_column: None,
            skip_bad_lines: false,
        }
    }
}

/// Lines a read left out because they did not read
/// ([`Options::skip_bad_lines`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Skipped {
    /// How many.
    pub count: u64,
    /// The first few, by line number (at most [`Skipped::LISTED`]).
    pub lines: Vec<usize>,
    /// Why the first one did not read.
    pub first: Option<String>,
}

impl Skipped {
    /// Lines named, at most.
    pub const LISTED: usize = 10;

    fn add(&mut self, line: usize, why: String) {
        self.count += 1;
        if self.lines.len() < Self::LISTED {
            self.lines.push(line);
        }
        self.first.get_or_insert(why);
    }

    /// In words, for a summary (empty when none was).
    pub fn describe(&self) -> String {
        if self.count == 0 {
            return String::new();
        }
        let listed: Vec<String> = self.lines.iter().map(|l| l.to_string()).collect();
        let more = if self.count > self.lines.len() as u64 {
            ", …"
        } else {
            ""
        };
        format!(
            "{} line{} left out as unreadable (line{} {}{more}); the first: {}\n",
            crate::format::thousands(self.count),
            if self.count == 1 { "" } else { "s" },
            if self.count == 1 { "" } else { "s" },
            listed.join(", "),
            self.first.as_deref().unwrap_or_default()
        )
    }
}

/// A trace read from a file.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    /// Which format it was.
    pub format: Format,
    /// How many times faster than recorded it replays: the options' speed,
    /// or the one their rate implied.
    pub speed: f64,
    /// The requests, in arrival order, times from 0.
    pub requests: TraceRequests,
    /// Tokens each of the requests' `prefix_blocks` hashes covers, when the
    /// format has hashes (512 for Mooncake).
    pub prefix_block_tokens: Option<u32>,
    /// The classes named by `Options::class_column`, in order of first
    /// appearance (each request's `class` indexes them); empty without one.
    pub classes: Vec<String>,
    /// Lines left out as unreadable (with [`Options::skip_bad_lines`]).
    pub skipped: Skipped,
}

/// A bounded error: what is wrong, where.
pub(super) fn at(format: Format, line: usize, what: impl std::fmt::Display) -> String {
    format!("{} line {line}: {what}", format.name())
}

/// Which format `text` is in, from its first line with text (or, for a
/// JSON document over several lines, from the whole of it).
pub fn detect(text: &str) -> Result<Format, String> {
    let text = crate::text::without_bom(text);
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .ok_or("the trace is empty")?;
    match reader::detect_first(first)? {
        Some(f) => Ok(f),
        None => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::Object(o)) if o.contains_key("input_lens") => {
                Ok(Format::VllmBench)
            }
            _ => Err(reader::not_json_trace(first)),
        },
    }
}

/// A trace read a line at a time into its requests: [`Self::line`] for
/// each line of the file as it is read (never the whole text held), then
/// [`Self::finish`] with the options applied. [`read`] is this over a text.
pub struct TraceReader {
    reader: reader::Reader<Sink>,
    options: Options,
}

impl TraceReader {
    /// A reader taking the trace with `options`, with room for about
    /// `lines` requests (a guess: it grows past them).
    pub fn new(options: &Options, lines: usize) -> Result<TraceReader, String> {
        Self::of_format(options, lines, None)
    }

    fn of_format(
        options: &Options,
        lines: usize,
        format: Option<Format>,
    ) -> Result<TraceReader, String> {
        check(options)?;
        Ok(TraceReader {
            reader: reader::Reader::new(
                Sink::with_room(lines),
                options.class_column.clone(),
                format,
            )
            .skipping(options.skip_bad_lines),
            options: options.clone(),
        })
    }

    /// Read the file's next line (without its line break).
    pub fn line(&mut self, line: &str) -> Result<(), String> {
        self.reader.line(line)
    }

    /// Whether the line just refused is one [`Options::skip_bad_lines`]
    /// would have left out (a header, a file in no format, or a bound is
    /// not).
    pub fn skippable(&self) -> bool {
        self.reader.skippable
    }

    /// The trace, once every line is read.
    pub fn finish(self) -> Result<Imported, String> {
        let skipped = self.reader.skipped.clone();
        let (format, sink) = self.reader.end();
        let mut t = finish(format?, sink, &self.options)?;
        t.skipped = skipped;
        Ok(t)
    }
}

/// The options' own bounds, before any line is read.
fn check(options: &Options) -> Result<(), String> {
    if !(options.speed.is_finite() && options.speed > 0.0 && options.speed <= 1e6) {
        return Err(format!(
            "the trace's speed must be > 0 and ≤ 1000000, got {}",
            options.speed
        ));
    }
    if let Some(rate) = options.rate_per_s {
        if !(rate.is_finite() && rate > 0.0 && rate <= 1e6) {
            return Err(format!(
                "the trace's rate must be > 0 and ≤ 1000000 requests/s, got {rate}"
            ));
        }
        if options.speed != 1.0 {
            return Err(format!(
                "give the trace a speed or a rate, not both (speed {}, rate {rate} requests/s)",
                options.speed
            ));
        }
    }
    if let Some((from, to)) = options.window
        && from >= to
    {
        return Err(format!(
            "the trace's window must end after it starts, got {from}..{to}"
        ));
    }
    Ok(())
}

/// Lines in `text`: the room a reader of it starts with.
fn lines_in(text: &str) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1
}

/// Read `text` in `format`, then apply `options`.
pub fn parse(text: &str, format: Format, options: &Options) -> Result<Imported, String> {
    let mut r = TraceReader::of_format(options, lines_in(text), Some(format))?;
    for l in text.lines() {
        r.line(l)?;
    }
    r.finish()
}

/// Detect the format, then read.
pub fn read(text: &str, options: &Options) -> Result<Imported, String> {
    let mut r = TraceReader::new(options, lines_in(text))?;
    for l in text.lines() {
        r.line(l)?;
    }
    r.finish()
}

/// A trace summarised as it is read, keeping none of its requests:
/// [`Self::line`] for each line, then [`Self::finish`]. A file not in
/// arrival order is refused at its first line out of order
/// ([`Self::unsorted`] says which): summarise it from [`read`] instead.
/// Options with a target rate are summarised from [`read`] too (the
/// speed they imply needs the whole trace).
pub struct TraceSummariser {
    reader: reader::Reader<summary_stream::Streamed>,
}

impl TraceSummariser {
    /// A summariser taking the trace with `options`; None when they ask for
    /// a rate (see the type's documentation).
    pub fn new(options: &Options) -> Result<Option<TraceSummariser>, String> {
        check(options)?;
        if options.rate_per_s.is_some() {
            return Ok(None);
        }
        Ok(Some(TraceSummariser {
            reader: reader::Reader::new(
                summary_stream::Streamed::new(options),
                options.class_column.clone(),
                None,
            )
            .skipping(options.skip_bad_lines),
        }))
    }

    /// Read the file's next line (without its line break).
    pub fn line(&mut self, line: &str) -> Result<(), String> {
        self.reader.line(line)
    }

    /// Whether the line just refused is one [`Options::skip_bad_lines`]
    /// would have left out ([`TraceReader::skippable`]).
    pub fn skippable(&self) -> bool {
        self.reader.skippable
    }

    /// The line that came before the line above it, if one did (the read
    /// then stopped there).
    pub fn unsorted(&self) -> Option<usize> {
        self.reader.rows.unsorted
    }

    /// The summary, once every line is read; None when the trace is not
    /// in arrival order (a `vllm bench serve` document's times are read
    /// only here): summarise it from [`read`] instead.
    pub fn finish(self) -> Result<Option<TraceSummary>, String> {
        let skipped = self.reader.skipped.clone();
        match self.reader.end() {
            (Ok(format), rows) => rows.finish(format).map(|mut t| {
                t.skipped = skipped;
                Some(t)
            }),
            (Err(_), rows) if rows.unsorted.is_some() => Ok(None),
            (Err(e), _) => Err(e),
        }
    }
}

/// The refusal of a trace whose kept part spans `span` seconds of its own
/// time (more than a week at `speed`), naming its first and last lines.
fn span_refusal(
    format: Format,
    span: f64,
    speed: f64,
    windowed: bool,
    (first, last): (usize, usize),
) -> String {
    let s = |v: f64| {
        if v < 1e15 {
            format!("{} s", crate::format::rounded(v))
        } else {
            format!("{v:e} s")
        }
    };
    let whole = if windowed {
        " in the window".to_owned()
    } else {
        format!(" (from line {first} to line {last})")
    };
    let faster = if speed == 1.0 {
        String::new()
    } else {
        format!(
            ", {} at speed {}",
            s(span / speed),
            crate::format::show(speed)
        )
    };
    format!(
        "the {} trace spans {}{whole}{faster}; a run covers at most {} (a week): replay part of it with a window, or faster",
        format.name(),
        s(span),
        s(crate::scenario::bounds::DURATION_S)
    )
}

/// What the readers read, as a trace: in arrival order from 0, the window
/// kept, at the speed asked, its classes numbered by first appearance.
fn finish(format: Format, sink: Sink, options: &Options) -> Result<Imported, String> {
    // Arrival order, ties kept in file order (a stable sort).
    let all = sink.requests.sorted_by_time();
    let start = all.first().map_or(0.0, |r| r.at_s);
    let (from, to) = options.window.unwrap_or((f64::NEG_INFINITY, f64::INFINITY));
    let inside = |t: f64| t - start >= from && t - start < to;
    let mut requests = if all.iter().all(|r| inside(r.at_s)) {
        all
    } else {
        let kept: Vec<usize> = (0..all.len())
            .filter(|&i| inside(all.get(i).at_s))
            .collect();
        all.pick(kept)
    };
    let Some(first) = requests.first() else {
        return Err(format!(
            "no request of the {} trace arrives in the window {from}..{to} s",
            format.name()
        ));
    };
    let origin = first.at_s;
    let span = requests.last().map_or(0.0, |r| r.at_s) - origin;
    let speed = match options.rate_per_s {
        None => options.speed,
        Some(_) if span <= 0.0 => {
            return Err(format!(
                "the {} trace's requests all arrive at once: no rate to scale (give it a speed, or a window with more than one instant)",
                format.name()
            ));
        }
        Some(rate) => rate / summary::mean_rate_per_s(requests.len(), span),
    };
    if !(speed.is_finite() && speed > 0.0 && speed <= 1e6) {
        return Err(format!(
            "a rate of {} requests/s replays the trace {speed} times faster; at most 1000000",
            options.rate_per_s.unwrap_or_default()
        ));
    }
    if span / speed > crate::scenario::bounds::DURATION_S {
        return Err(span_refusal(
            format,
            span,
            speed,
            options.window.is_some(),
            (sink.earliest.1, sink.latest.1),
        ));
    }
    requests.map_times(|t| (t - origin) / speed);
    // The class column's values the window keeps, in order of first
    // appearance.
    let mut classes: Vec<String> = Vec::new();
    if !sink.class_names.is_empty() {
        let mut new_index = vec![u32::MAX; sink.class_names.len()];
        for r in requests.iter() {
            let slot = &mut new_index[r.class as usize];
            if *slot == u32::MAX {
                if classes.len() == crate::scenario::bounds::CLASSES {
                    return Err(format!(
                        "the column {:?} has more than {} different values; at most that many classes",
                        options.class_column.as_deref().unwrap_or_default(),
                        crate::scenario::bounds::CLASSES
                    ));
                }
                *slot = classes.len() as u32;
                classes.push(sink.class_names[r.class as usize].clone());
            }
        }
        requests.map_classes(|c| new_index[c as usize]);
    }
    // A format with hashes says so even where a line's list is empty.
    let with_blocks = requests.has_hashes() || sink.hashed;
    Ok(Imported {
        format,
        speed,
        requests,
        prefix_block_tokens: with_blocks.then_some(formats::MOONCAKE_BLOCK_TOKENS),
        classes,
        skipped: Skipped::default(),
    })
}

impl Imported {
    /// Requests per class of [`Self::classes`], in its order.
    pub fn class_counts(&self) -> Vec<u64> {
        let mut counts = vec![0u64; self.classes.len()];
        for r in self.requests.iter() {
            if let Some(n) = counts.get_mut(r.class as usize) {
                *n += 1;
            }
        }
        counts
    }

    /// Make `s` replay the trace: its arrivals become the trace's requests
    /// (reported under the first class, or under the trace's own classes),
    /// each one call with the trace's own prompt and output (no system
    /// prompt, history, reasoning or further calls added), and the run lasts
    /// until the last one arrives. Everything else (the fleet, the targets,
    /// the classes' timeouts) stays.
    pub fn apply_to(&self, s: &mut crate::Scenario) {
        let classes: Vec<(String, u64)> = self
            .classes
            .iter()
            .cloned()
            .zip(self.class_counts())
            .collect();
        replay_into(s, &classes, self.requests.clone(), self.prefix_block_tokens);
    }
}

/// Events a replayed request is given room for (a request takes about five
/// on a busy fleet: its arrival, admission, passes shared with its batch,
/// its end).
const EVENTS_PER_REQUEST: u64 = 20;

/// Make `s` replay `requests` (held or streamed), with the trace's named
/// `classes` and their counts: see [`Imported::apply_to`].
fn replay_into(
    s: &mut crate::Scenario,
    classes: &[(String, u64)],
    requests: TraceRequests,
    prefix_block_tokens: Option<u32>,
) {
    let stats = requests.stats();
    // The run lasts until the last request arrives, and keeps the room the
    // scenario gave its requests to finish after that.
    let drain_s = (s.limits.max_sim_time_s - s.duration_s).max(0.0);
    s.set_duration(stats.last_at_s.ceil().max(1.0));
    s.limits.max_sim_time_s = s
        .limits
        .max_sim_time_s
        .max(s.duration_s + drain_s)
        .min(crate::scenario::bounds::SIM_TIME_S);
    // Room for the whole trace, as the time limit follows its span: about
    // twenty events a request, within the simulator's own bound.
    let room = stats.requests.saturating_mul(EVENTS_PER_REQUEST);
    s.limits.max_events = s
        .limits
        .max_events
        .max(room.min(crate::scenario::bounds::EVENTS));
    // Named classes: each a copy of the scenario's first class (its
    // backend, targets, timeout) under its own name, with its share of
    // the trace.
    if !classes.is_empty()
        && let Some(first) = s.workload.classes.first().cloned()
    {
        let total = stats.requests.max(1) as f64;
        s.workload.classes = classes
            .iter()
            .map(|(name, n)| crate::scenario::RequestClass {
                name: name.clone(),
                share: *n as f64 / total,
                ..first.clone()
            })
            .collect();
    }
    // The trace gives each request's whole prompt and output: nothing of
    // the classes' own traffic shape (system prompts, conversation
    // history, hidden reasoning, calls per task) is added to it.
    for k in &mut s.workload.classes {
        k.calls_per_task = 1;
        k.shared_prefix = None;
        k.conversation = None;
        k.reasoning_tokens = None;
    }
    s.workload.arrival = crate::scenario::Arrival::Trace {
        requests,
        prefix_block_tokens,
    };
}
