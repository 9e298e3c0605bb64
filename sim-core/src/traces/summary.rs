//! A trace in numbers: its rate, its lengths, its prefix reuse.

use super::Imported;

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
    /// The trace in numbers.
    pub fn summary(&self) -> Summary {
        let n = self.requests.len();
        let span_s = self.requests.last().map_or(0.0, |r| r.at_s);
        let mut per_minute = std::collections::BTreeMap::<u64, u32>::new();
        for r in self.requests.iter() {
            *per_minute.entry((r.at_s / 60.0) as u64).or_default() += 1;
        }
        let busiest = per_minute.values().copied().max().unwrap_or(0);
        let mean_rate = mean_rate_per_s(n, span_s);
        // A trace holds at least one request, so these are numbers.
        let stats = super::measured::mean_and_quantiles;
        let prefix_reuse = self.prefix_block_tokens.map(|_| {
            // A block is reusable if the same hash was seen before at the same
            // position (the hashes chain the prefix, so the id says it all):
            // every occurrence but the first of each (position, hash).
            let requests = &self.requests;
            let mut seen: Vec<(u64, u32)> = (0..requests.len())
                .flat_map(|i| requests.hashes(i).zip(0u32..))
                .collect();
            let total = seen.len() as u64;
            seen.sort_unstable();
            seen.dedup();
            let reused = total - seen.len() as u64;
            reused as f64 / total.max(1) as f64
        });
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
        let mut counts = vec![0u32; windows];
        for r in self.requests.iter() {
            counts[((r.at_s / rate_window_s) as usize).min(windows - 1)] += 1;
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
            input: stats(
                self.requests
                    .iter()
                    .map(|r| f64::from(r.input_tokens))
                    .collect(),
            ),
            output: stats(
                self.requests
                    .iter()
                    .map(|r| f64::from(r.output_tokens))
                    .collect(),
            ),
            prefix_reuse,
        }
    }

    /// The trace in words, as `tlab trace` and the page's import show it:
    /// format, requests, span and rate, length quantiles, classes, and the
    /// prefix reuse its hashes imply.
    pub fn describe(&self, name: &str) -> String {
        use crate::format::{duration_ms, rounded, thousands};
        let s = self.summary();
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
                .zip(self.class_counts())
                .map(|(c, n)| format!("{c} {}", thousands(n)))
                .collect();
            out += &format!("classes: {}\n", list.join(", "));
        }
        if let (Some(reuse), Some(tokens)) = (s.prefix_reuse, self.prefix_block_tokens) {
            out += &format!(
                "prefix blocks ({tokens} tokens) already seen at the same place in an earlier request: {:.1} % (what a cache that never evicts could reuse)\n",
                reuse * 100.0
            );
        }
        out
    }
}
