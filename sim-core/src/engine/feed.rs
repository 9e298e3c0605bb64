//! A replayed trace's requests as the run takes them: one at a time, in
//! arrival order, from the scenario's columns or from a [`TraceFeed`] that
//! reads a file as the run goes (so a trace of 10⁷ requests costs the
//! memory of those in flight). Each request is checked as it comes against
//! what the scenario was validated with; one that does not fit stops the
//! run, saying which and why.

use crate::scenario::{TraceEntry, TraceRequests, TraceStats, bounds};

/// A trace's requests, handed to a run one at a time in arrival order.
pub trait TraceFeed: Send {
    /// The next request, its prefix-block hashes written into `hashes`
    /// (cleared first); None after the last, or when the source fails (the
    /// feed then keeps its error for whoever made it).
    fn next(&mut self, hashes: &mut Vec<u64>) -> Option<TraceEntry>;

    /// Why the feed ended before its last request, if it did.
    fn error(&self) -> Option<String> {
        None
    }
}

/// A trace held by column, read in order.
pub(super) struct Columns {
    requests: TraceRequests,
    next: usize,
}

impl Columns {
    pub(super) fn new(requests: TraceRequests) -> Self {
        Columns { requests, next: 0 }
    }
}

impl TraceFeed for Columns {
    fn next(&mut self, hashes: &mut Vec<u64>) -> Option<TraceEntry> {
        hashes.clear();
        if self.next >= self.requests.len() {
            return None;
        }
        let i = self.next;
        self.next += 1;
        hashes.extend(self.requests.hashes(i));
        Some(self.requests.get(i))
    }
}

/// The run's side of a feed: the request read ahead (its time schedules
/// its arrival), how many came, and what the scenario was validated with.
pub(super) struct Feeding {
    feed: Box<dyn TraceFeed>,
    pub(super) ahead: Option<TraceEntry>,
    pub(super) ahead_hashes: Vec<u64>,
    /// Requests handed to the run so far.
    pub(super) fed: u64,
    /// What the scenario says of the trace.
    pub(super) stats: TraceStats,
    classes: u32,
    previous_s: f64,
    /// Why the replay stopped before the trace's end, if it did.
    pub(super) failed: Option<String>,
}

impl Feeding {
    pub(super) fn new(feed: Box<dyn TraceFeed>, stats: TraceStats, classes: usize) -> Self {
        Feeding {
            feed,
            ahead: None,
            ahead_hashes: Vec::new(),
            fed: 0,
            stats,
            classes: classes.max(1) as u32,
            previous_s: 0.0,
            failed: None,
        }
    }

    /// Read the next request ahead; Err says why it cannot be replayed (out
    /// of order, out of range, or more than the trace was validated with).
    pub(super) fn read_ahead(&mut self) -> Result<(), String> {
        self.ahead = self.feed.next(&mut self.ahead_hashes);
        let Some(e) = self.ahead else {
            if let Some(why) = self.feed.error() {
                return Err(why);
            }
            if self.fed < self.stats.requests {
                return Err(format!(
                    "the trace ended after {} of the {} requests it was checked with",
                    self.fed, self.stats.requests
                ));
            }
            return Ok(());
        };
        // Its number in the trace, from 1.
        let n = self.fed + 1;
        let tokens = 1..=bounds::TOKENS;
        let problem = if n > self.stats.requests {
            Some(format!(
                "more than the {} requests it was checked with",
                self.stats.requests
            ))
        } else if !(e.at_s.is_finite() && e.at_s >= self.previous_s && e.at_s <= bounds::DURATION_S)
        {
            Some(format!(
                "arrives at {} s, before the request above it or outside 0..={} s",
                e.at_s,
                bounds::DURATION_S
            ))
        } else if !tokens.contains(&e.input_tokens) || !tokens.contains(&e.output_tokens) {
            Some(format!(
                "has {} prompt and {} generated tokens, outside 1..={}",
                e.input_tokens,
                e.output_tokens,
                bounds::TOKENS
            ))
        } else if let Some(h) = crate::scenario::repeated_hash(self.ahead_hashes.iter().copied()) {
            Some(format!("names the prefix hash {h} twice"))
        } else if e.class >= self.classes {
            Some(format!(
                "names class {}, the scenario has {}",
                e.class, self.classes
            ))
        } else {
            None
        };
        match problem {
            Some(p) => {
                self.ahead = None;
                Err(format!("the trace's request {n} {p}"))
            }
            None => {
                debug_assert!(n <= self.stats.requests && e.at_s >= self.previous_s);
                self.previous_s = e.at_s;
                Ok(())
            }
        }
    }
}
