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
    /// Prompt tokens: mean, p50, p90, p99.
    pub input: [f64; 4],
    /// Generated tokens: mean, p50, p90, p99.
    pub output: [f64; 4],
    /// Share of prompt blocks (where the format names them) already seen in
    /// an earlier request at the same position: what a cache that never
    /// evicts could reuse.
    pub prefix_reuse: Option<f64>,
}

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
        let mean_rate = if span_s > 0.0 {
            n as f64 / span_s
        } else {
            n as f64
        };
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
        Summary {
            requests: n,
            span_s,
            mean_rate_per_s: if span_s > 0.0 {
                n as f64 / span_s
            } else {
                n as f64
            },
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
