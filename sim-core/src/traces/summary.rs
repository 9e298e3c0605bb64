//! A trace in numbers: its rate, its lengths, its prefix reuse.

use super::Imported;
use super::summary_stream::TraceSummary;

/// What a trace holds, as the page and `tlab trace` show it.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Requests.
    pub requests: usize,
    /// From the first arrival to the last, seconds.
    pub span_s: f64,
    /// Requests per second over the span.
    pub mean_rate_per_s: f64,
    /// The busiest minute's requests per second (the whole trace's rate
    /// when it is shorter than two minutes).
    pub peak_minute_rate_per_s: f64,
    /// Requests per second over time: one rate per window of
    /// [`Self::rate_window_s`] from the first arrival (at most
    /// [`RATE_WINDOWS`] of them and one more; the last runs to the last
    /// arrival, from half a window to one and a half).
    pub rate_over_time: Vec<f64>,
    /// The windows' length, seconds: whole minutes, at least one.
    pub rate_window_s: f64,
    /// Prompt tokens: mean, p50, p90, p99.
    pub input: [f64; 4],
    /// Generated tokens: mean, p50, p90, p99.
    pub output: [f64; 4],
    /// Share of prompt blocks (where the format names them) already seen in
    /// an earlier request at the same position: what a cache that never
    /// evicts could reuse.
    pub prefix_reuse: Option<f64>,
}

/// A trace's mean rate, requests per second: `n` requests over `span_s`
/// from the first arrival to the last (all `n` in one second when they
/// arrive at once). The summary and `Options::rate_per_s` both mean this.
pub(super) fn mean_rate_per_s(n: usize, span_s: f64) -> f64 {
    if span_s > 0.0 {
        n as f64 / span_s
    } else {
        n as f64
    }
}

/// At most this many windows of [`Summary::rate_over_time`].
pub const RATE_WINDOWS: usize = 24;

impl Imported {
    /// The trace in numbers (as [`super::summarise`] takes them while
    /// reading a file, over the same running tally).
    pub fn summary(&self) -> Summary {
        let mut tally = super::summary_stream::Tally::default();
        for (i, r) in self.requests.iter().enumerate() {
            tally.add(
                r.at_s,
                r.input_tokens,
                r.output_tokens,
                self.requests.hashes(i),
            );
        }
        tally.summary(self.prefix_block_tokens.is_some())
    }

    /// What the trace holds: its summary, classes and prefix blocks.
    pub fn trace_summary(&self) -> TraceSummary {
        TraceSummary {
            format: self.format,
            summary: self.summary(),
            classes: self
                .classes
                .iter()
                .cloned()
                .zip(self.class_counts())
                .collect(),
            prefix_block_tokens: self.prefix_block_tokens,
            stats: self.requests.stats(),
            skipped: self.skipped.clone(),
        }
    }

    /// The trace in words, as `tlab trace` and the page's import show it
    /// ([`TraceSummary::describe`]).
    pub fn describe(&self, name: &str) -> String {
        self.trace_summary().describe(name)
    }
}

impl TraceSummary {
    /// The trace in words, as `tlab trace` and the page's import show it:
    /// format, requests, span and rate, length quantiles, classes, and the
    /// prefix reuse its hashes imply.
    pub fn describe(&self, name: &str) -> String {
        use crate::format::{duration_ms, rounded, thousands};
        let s = &self.summary;
        let lengths = |what: &str, q: [f64; 4]| {
            format!(
                "{what}: mean {}, p50 {}, p90 {}, p99 {}\n",
                rounded(q[0]),
                thousands(q[1] as u64),
                thousands(q[2] as u64),
                thousands(q[3] as u64)
            )
        };
        let mut out = format!(
            "{name}: {}, {} requests over {} ({:.2} req/s; the busiest minute {:.2} req/s)\n",
            self.format.name(),
            thousands(s.requests as u64),
            duration_ms(Some(s.span_s * 1e3)),
            s.mean_rate_per_s,
            s.peak_minute_rate_per_s
        );
        if s.rate_over_time.len() > 1 {
            let rates: Vec<String> = s.rate_over_time.iter().map(|r| format!("{r:.2}")).collect();
            out += &format!(
                "requests/s per {} from the start: {}\n",
                duration_ms(Some(s.rate_window_s * 1e3)),
                rates.join(" ")
            );
        }
        out += &lengths("prompt tokens", s.input);
        out += &lengths("generated tokens", s.output);
        if !self.classes.is_empty() {
            let list: Vec<String> = self
                .classes
                .iter()
                .map(|(c, n)| format!("{c} {}", thousands(*n)))
                .collect();
            out += &format!("classes: {}\n", list.join(", "));
        }
        if let (Some(reuse), Some(tokens)) = (s.prefix_reuse, self.prefix_block_tokens) {
            out += &format!(
                "prefix blocks ({tokens} tokens) already seen at the same place in an earlier request: {:.1} % (what a cache that never evicts could reuse)\n",
                reuse * 100.0
            );
        }
        out += &self.skipped.describe();
        out
    }
}
