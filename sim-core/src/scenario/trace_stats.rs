//! A replayed trace in the few numbers the scenario's checks and estimates
//! read (how many requests, their tokens, the last arrival), whether its
//! requests are held by column or streamed from a file during the run.

use super::{TraceEntry, TraceRequests};

/// A hash a prompt names twice, if any: each of a prompt's blocks has its
/// own (chained) hash, so a repeat is a file that does not mean what it
/// says. O(n) without copying when the hashes rise, as they do in traces;
/// else sorted.
pub fn repeated_hash<I: Iterator<Item = u64> + Clone>(hashes: I) -> Option<u64> {
    let mut previous = None;
    if hashes.clone().all(|h| {
        let rising = previous.is_none_or(|p| h > p);
        previous = Some(h);
        rising
    }) {
        return None;
    }
    let mut sorted: Vec<u64> = hashes.collect();
    sorted.sort_unstable();
    sorted.windows(2).find(|w| w[0] == w[1]).map(|w| w[0])
}

/// A trace's requests in aggregate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceStats {
    /// Requests.
    pub requests: u64,
    /// Prompt tokens over all requests.
    pub input_tokens: u64,
    /// Generated tokens over all requests.
    pub output_tokens: u64,
    /// The shortest prompt (0 without requests).
    pub min_input: u32,
    /// The longest prompt (0 without requests).
    pub max_input: u32,
    /// The last arrival, seconds from the start.
    pub last_at_s: f64,
    /// One more than the highest class index.
    pub classes: u32,
    /// Whether some request names prefix-block hashes.
    pub hashes: bool,
}

impl Default for TraceStats {
    fn default() -> Self {
        TraceStats {
            requests: 0,
            input_tokens: 0,
            output_tokens: 0,
            min_input: 0,
            max_input: 0,
            last_at_s: 0.0,
            classes: 0,
            hashes: false,
        }
    }
}

impl TraceStats {
    /// Add a request arriving after those added before.
    pub fn add(&mut self, e: &TraceEntry, hashes: bool) {
        self.min_input = if self.requests == 0 {
            e.input_tokens
        } else {
            self.min_input.min(e.input_tokens)
        };
        self.requests += 1;
        self.input_tokens += u64::from(e.input_tokens);
        self.output_tokens += u64::from(e.output_tokens);
        self.max_input = self.max_input.max(e.input_tokens);
        self.last_at_s = e.at_s;
        self.classes = self.classes.max(e.class.saturating_add(1));
        self.hashes |= hashes;
    }
}

impl TraceRequests {
    /// Requests, held or streamed (O(1)).
    pub fn count(&self) -> u64 {
        match &self.streamed_stats() {
            Some(s) => s.requests,
            None => self.len() as u64,
        }
    }

    /// Requests arriving at or before `t` seconds: all of them from the
    /// last arrival on; before it, for a streamed trace (whose times are
    /// not held), the share of the span `t` covers.
    pub(super) fn arrived_by(&self, t: f64) -> f64 {
        match self.streamed_stats() {
            Some(s) if t >= s.last_at_s => s.requests as f64,
            Some(s) => s.requests as f64 * (t / s.last_at_s).clamp(0.0, 1.0),
            None => self.iter().take_while(|r| r.at_s <= t).count() as f64,
        }
    }
}
