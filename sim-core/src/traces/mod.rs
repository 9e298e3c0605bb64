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
use serde_json::Value;

mod distil;
mod formats;
pub mod measured;
mod measured_files;
mod stats;
mod summary;

pub use distil::{Distilled, exact_replay, link_form, quantile_table, sha256_hex};
use formats::{Sink, azure, burst_gpt, mooncake, request_log, vllm_bench};
pub use summary::{RATE_WINDOWS, Summary};

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
}

impl Default for Options {
    fn default() -> Self {
        Options {
            speed: 1.0,
            rate_per_s: None,
            window: None,
            class_column: None,
        }
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
}

/// A bounded error: what is wrong, where.
pub(super) fn at(format: Format, line: usize, what: impl std::fmt::Display) -> String {
    format!("{} line {line}: {what}", format.name())
}

/// Which format `text` is in, from its first line (or its keys).
pub fn detect(text: &str) -> Result<Format, String> {
    let text = crate::text::without_bom(text);
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .ok_or("the trace is empty")?;
    if first.starts_with('{') {
        // One JSON document (vllm bench) or JSON lines.
        if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(first) {
            if o.contains_key("hash_ids") || o.contains_key("input_length") {
                return Ok(Format::Mooncake);
            }
            if o.contains_key("input_toks") {
                return Ok(Format::RequestLog);
            }
            if o.contains_key("input_lens") {
                return Ok(Format::VllmBench);
            }
        }
        if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(text)
            && o.contains_key("input_lens")
        {
            return Ok(Format::VllmBench);
        }
        // A first line that is not JSON but names a format's keys: that
        // format, whose reader then says what is wrong with the line.
        if first.contains("\"hash_ids\"") || first.contains("\"input_length\"") {
            return Ok(Format::Mooncake);
        }
        if first.contains("\"input_toks\"") {
            return Ok(Format::RequestLog);
        }
        return Err(format!(
            "JSON, but not a trace format this reads: its first line has none of the keys hash_ids/input_length (Mooncake), input_toks (a request log) or input_lens (vllm bench serve); it starts {:?}",
            first.chars().take(80).collect::<String>()
        ));
    }
    let header: Vec<&str> = first.split(',').map(str::trim).collect();
    // Either column names the format; its reader then names a missing one.
    if header.contains(&"ContextTokens") || header.contains(&"GeneratedTokens") {
        return Ok(Format::Azure);
    }
    if header.contains(&"Request tokens") || header.contains(&"Response tokens") {
        return Ok(Format::BurstGpt);
    }
    Err(format!(
        "not a trace format this reads: expected JSON lines (Mooncake, a request log), vllm bench serve JSON, or a CSV header with ContextTokens,GeneratedTokens (Azure) or Request tokens,Response tokens (BurstGPT); the first line is {:?}",
        first.chars().take(80).collect::<String>()
    ))
}

/// Read `text` in `format`, then apply `options`.
pub fn parse(text: &str, format: Format, options: &Options) -> Result<Imported, String> {
    let text = crate::text::without_bom(text);
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
    if options.class_column.is_some() && format != Format::BurstGpt {
        return Err(format!(
            "the {} has no column to take classes from (BurstGPT CSV has Model and Log Type)",
            format.name()
        ));
    }
    let mut sink = Sink::for_text(text);
    match format {
        Format::Mooncake => mooncake(text, &mut sink)?,
        Format::Azure => azure(text, &mut sink)?,
        Format::BurstGpt => burst_gpt(text, options.class_column.as_deref(), &mut sink)?,
        Format::RequestLog => request_log(text, &mut sink)?,
        Format::VllmBench => vllm_bench(text, &mut sink)?,
    };
    // Arrival order, ties kept in file order (a stable sort).
    let all = sink.requests.sorted_by_time();
    let start = all.first().map_or(0.0, |r| r.at_s);
    let (from, to) = options.window.unwrap_or((f64::NEG_INFINITY, f64::INFINITY));
    if from >= to {
        return Err(format!(
            "the trace's window must end after it starts, got {from}..{to}"
        ));
    }
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
    let replayed = span / speed;
    if replayed > crate::scenario::bounds::DURATION_S {
        let s = |v: f64| {
            if v < 1e15 {
                format!("{} s", crate::format::rounded(v))
            } else {
                format!("{v:e} s")
            }
        };
        let (from, to) = (sink.earliest, sink.latest);
        let whole = if options.window.is_none() {
            format!(" (from line {} to line {})", from.1, to.1)
        } else {
            " in the window".to_owned()
        };
        let faster = if speed == 1.0 {
            String::new()
        } else {
            format!(", {} at speed {}", s(replayed), crate::format::show(speed))
        };
        return Err(format!(
            "the {} trace spans {}{whole}{faster}; a run covers at most {} (a week): replay part of it with a window, or faster",
            format.name(),
            s(span),
            s(crate::scenario::bounds::DURATION_S)
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
    })
}

/// Detect the format, then read.
pub fn read(text: &str, options: &Options) -> Result<Imported, String> {
    parse(text, detect(text)?, options)
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
        let last = self.requests.last().map_or(0.0, |r| r.at_s);
        s.set_duration(last.ceil().max(1.0));
        // Named classes: each a copy of the scenario's first class (its
        // backend, targets, timeout) under its own name, with its share of
        // the trace.
        if !self.classes.is_empty()
            && let Some(first) = s.workload.classes.first().cloned()
        {
            let counts = self.class_counts();
            let total = self.requests.len().max(1) as f64;
            s.workload.classes = self
                .classes
                .iter()
                .zip(&counts)
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
            requests: self.requests.clone(),
            prefix_block_tokens: self.prefix_block_tokens,
        };
    }
}
