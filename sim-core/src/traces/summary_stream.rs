//! A trace's summary taken as its requests go by, keeping none of them:
//! arrivals per minute, a count of each length, and for each prefix hash
//! where it was first seen. Its memory is bounded by the minutes of the
//! span (at most a week's), the distinct lengths and the distinct hashes,
//! never by the requests: `tlab trace FILE` summarises a file of 10⁸ lines
//! in what it needs for a thousand. [`super::Imported::summary`] takes the
//! same path over its requests, so the two agree by construction.

use super::formats::{Row, Rows};
use super::summary::{RATE_WINDOWS, Summary, mean_rate_per_s};
use super::{Format, Options};
use crate::scenario::TraceStats;
use std::collections::{BTreeMap, BTreeSet};

/// Hash ids below this are kept in a table indexed by id (4 bytes each, as
/// Mooncake numbers its hashes densely from 0); larger ones in a set.
const DENSE_HASHES: u64 = 1 << 26;

/// The summary's running parts over requests in arrival order, times
/// already from the trace's start at its speed.
#[derive(Default)]
pub(super) struct Tally {
    n: usize,
    last_s: f64,
    per_minute: BTreeMap<u64, u32>,
    input: BTreeMap<u32, u64>,
    output: BTreeMap<u32, u64>,
    /// Per dense hash id, 1 + the position it was first seen at (0: never).
    first_at: Vec<u32>,
    /// (hash, position) pairs seen that the table does not hold: sparse
    /// ids, and dense ones seen at a second position.
    other: BTreeSet<(u64, u32)>,
    blocks: u64,
    reused: u64,
}

impl Tally {
    /// One request at `at_s`, its lengths and its prefix hashes.
    pub(super) fn add(
        &mut self,
        at_s: f64,
        input: u32,
        output: u32,
        hashes: impl Iterator<Item = u64>,
    ) {
        self.n += 1;
        self.last_s = at_s;
        *self.per_minute.entry((at_s / 60.0) as u64).or_default() += 1;
        *self.input.entry(input).or_default() += 1;
        *self.output.entry(output).or_default() += 1;
        for (h, pos) in hashes.zip(0u32..) {
            self.blocks += 1;
            // A block is reusable if the same hash was seen before at the
            // same position: every occurrence but the first of each pair.
            let seen = if h < DENSE_HASHES {
                let i = h as usize;
                if i >= self.first_at.len() {
                    self.first_at.resize(i + 1, 0);
                }
                match self.first_at[i] {
                    0 => {
                        self.first_at[i] = pos + 1;
                        false
                    }
                    p if p == pos + 1 => true,
                    _ => !self.other.insert((h, pos)),
                }
            } else {
                !self.other.insert((h, pos))
            };
            self.reused += u64::from(seen);
        }
    }

    /// The requests in aggregate, as [`crate::scenario::TraceRequests::stats`]
    /// counts them over the same requests held.
    fn stats(&self, classes: usize) -> TraceStats {
        let sum = |m: &BTreeMap<u32, u64>| m.iter().map(|(&v, &c)| u64::from(v) * c).sum();
        TraceStats {
            requests: self.n as u64,
            input_tokens: sum(&self.input),
            output_tokens: sum(&self.output),
            min_input: self.input.keys().next().copied().unwrap_or(0),
            max_input: self.input.keys().next_back().copied().unwrap_or(0),
            last_at_s: self.last_s,
            classes: (classes.max(1) as u32).min(self.n as u32),
            hashes: self.blocks > 0,
        }
    }

    /// The summary; `hashed` when the format names prefix blocks.
    pub(super) fn summary(&self, hashed: bool) -> Summary {
        let n = self.n;
        let span_s = self.last_s;
        let busiest = self.per_minute.values().copied().max().unwrap_or(0);
        let mean_rate = mean_rate_per_s(n, span_s);
        let rate_window_s = ((span_s / RATE_WINDOWS as f64 / 60.0).ceil() * 60.0).max(60.0);
        // Whole windows; a last part shorter than half a window joins the
        // one before it (a few seconds' rate says little).
        let full = (span_s / rate_window_s).floor() as usize;
        let rest = span_s - full as f64 * rate_window_s;
        let windows = if full == 0 {
            1
        } else if rest < rate_window_s / 2.0 {
            full
        } else {
            full + 1
        }
        .min(RATE_WINDOWS + 1);
        // A window is whole minutes: minute m is in window m / its minutes.
        let minutes = (rate_window_s / 60.0) as u64;
        let mut counts = vec![0u32; windows];
        for (&m, &c) in &self.per_minute {
            counts[((m / minutes) as usize).min(windows - 1)] += c;
        }
        let rate_over_time = counts
            .iter()
            .enumerate()
            .map(|(k, &c)| {
                let start = k as f64 * rate_window_s;
                let length = if k + 1 == windows {
                    (span_s - start).max(1.0)
                } else {
                    rate_window_s
                };
                f64::from(c) / length
            })
            .collect();
        Summary {
            requests: n,
            rate_over_time,
            rate_window_s,
            span_s,
            mean_rate_per_s: mean_rate,
            peak_minute_rate_per_s: if span_s < 120.0 {
                mean_rate
            } else {
                f64::from(busiest) / 60.0
            },
            input: mean_and_quantiles(&self.input, n),
            output: mean_and_quantiles(&self.output, n),
            prefix_reuse: hashed.then(|| self.reused as f64 / self.blocks.max(1) as f64),
        }
    }
}

/// Mean, p50, p90, p99 of `n` values counted by value: the same numbers as
/// [`super::measured::mean_and_quantiles`] of the values themselves (an
/// exact sum of whole numbers, order statistics interpolated alike).
fn mean_and_quantiles(counts: &BTreeMap<u32, u64>, n: usize) -> [f64; 4] {
    if n == 0 {
        return [f64::NAN; 4];
    }
    let sum: u128 = counts
        .iter()
        .map(|(&v, &c)| u128::from(v) * u128::from(c))
        .sum();
    // The k-th smallest value (from 0).
    let nth = |k: usize| -> f64 {
        let mut seen = 0u64;
        for (&v, &c) in counts {
            seen += c;
            if seen > k as u64 {
                return f64::from(v);
            }
        }
        f64::NAN
    };
    let q = |p: f64| {
        let x = (n - 1) as f64 * p;
        let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
        let (a, b) = (nth(lo), nth(hi));
        a + (b - a) * (x - lo as f64)
    };
    [sum as f64 / n as f64, q(0.5), q(0.9), q(0.99)]
}

/// What a trace holds, taken as it is read: its summary, its classes with
/// their counts, and whether it names prefix blocks.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceSummary {
    /// Which format it was.
    pub format: Format,
    /// The trace in numbers.
    pub summary: Summary,
    /// The class column's values in order of first appearance, with their
    /// requests (empty without a class column).
    pub classes: Vec<(String, u64)>,
    /// Tokens each prefix hash covers, when the format names them.
    pub prefix_block_tokens: Option<u32>,
    /// The requests in aggregate: what a scenario replaying the trace
    /// streamed is checked with.
    pub stats: TraceStats,
    /// Lines left out as unreadable.
    pub skipped: super::Skipped,
}

/// Rows summarised as they come, for a file in arrival order: its options'
/// window and speed applied on the way. A row earlier than the one before
/// ends it (`unsorted`): such a file is summarised by reading its requests.
pub(super) struct Streamed {
    window: (f64, f64),
    speed: f64,
    /// The trace's first arrival (the window is from it), and the first
    /// kept one (times are from it).
    start: Option<f64>,
    origin: Option<f64>,
    previous: f64,
    pub(super) unsorted: Option<usize>,
    hashed: bool,
    classes: Vec<(String, u64)>,
    tally: Tally,
    /// The first and last kept arrival's lines, for a refusal of the span.
    lines: (usize, usize),
}

impl Streamed {
    pub(super) fn new(options: &Options) -> Streamed {
        Streamed {
            window: options.window.unwrap_or((f64::NEG_INFINITY, f64::INFINITY)),
            speed: options.speed,
            start: None,
            origin: None,
            previous: f64::NEG_INFINITY,
            unsorted: None,
            hashed: false,
            classes: Vec::new(),
            tally: Tally::default(),
            lines: (0, 0),
        }
    }

    /// The summary, once every line is read (None when no request was kept).
    pub(super) fn finish(self, format: Format) -> Result<TraceSummary, String> {
        let Some(_) = self.origin else {
            let (from, to) = self.window;
            return Err(format!(
                "no request of the {} trace arrives in the window {from}..{to} s",
                format.name()
            ));
        };
        let summary = self.tally.summary(self.hashed);
        let span = summary.span_s;
        if span > crate::scenario::bounds::DURATION_S {
            return Err(super::span_refusal(
                format,
                span * self.speed,
                self.speed,
                self.window != (f64::NEG_INFINITY, f64::INFINITY),
                self.lines,
            ));
        }
        Ok(TraceSummary {
            format,
            summary,
            stats: self.tally.stats(self.classes.len()),
            skipped: super::Skipped::default(),
            classes: self.classes,
            prefix_block_tokens: self.hashed.then_some(super::formats::MOONCAKE_BLOCK_TOKENS),
        })
    }
}

impl Rows for Streamed {
    fn row(&mut self, format: Format, line: usize, row: Row) -> Result<(), String> {
        if row.at_s < self.previous {
            // Not in arrival order: summarised from its requests instead.
            self.unsorted = Some(line);
            return Err(format!(
                "{} line {line} arrives before the line above it",
                format.name()
            ));
        }
        self.previous = row.at_s;
        let start = *self.start.get_or_insert(row.at_s);
        self.hashed |= row.blocks.is_some();
        let (from, to) = self.window;
        if !(row.at_s - start >= from && row.at_s - start < to) {
            return Ok(());
        }
        let origin = *self.origin.get_or_insert(row.at_s);
        if self.lines.0 == 0 {
            self.lines.0 = line;
        }
        self.lines.1 = line;
        if let Some(name) = row.class {
            match self.classes.iter().position(|(c, _)| *c == name) {
                Some(i) => self.classes[i].1 += 1,
                None if self.classes.len() < crate::scenario::bounds::CLASSES => {
                    self.classes.push((name, 1));
                }
                None => {
                    return Err(format!(
                        "the class column has more than {} different values; at most that many classes",
                        crate::scenario::bounds::CLASSES
                    ));
                }
            }
        }
        let hashes = row.blocks.unwrap_or_default();
        self.tally.add(
            (row.at_s - origin) / self.speed,
            row.input,
            row.output,
            hashes.into_iter(),
        );
        Ok(())
    }
}
