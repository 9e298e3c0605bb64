//! A replayed trace's requests, kept by column: arrival times, prompt and
//! output lengths, classes (only when some request is not class 0), and the
//! prefix-block hashes as runs of consecutive values (Mooncake's 24 hashes a
//! prompt are 2.8 runs). A request costs ≈ 20 bytes plus 12 per run, against
//! ≈ 250 as a list of objects with a vector of hashes each. Its JSON is that
//! list of objects ([`TraceRequest`]), so links and files read as before.

use super::{TraceRequest, TraceStats};
use serde::de::{SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One request of a trace, without its hashes ([`TraceRequests::hashes`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceEntry {
    /// Arrival time, seconds from the start.
    pub at_s: f64,
    /// Prompt tokens.
    pub input_tokens: u32,
    /// Generated tokens.
    pub output_tokens: u32,
    /// Index into `workload.classes` the request is reported under.
    pub class: u32,
}

/// Hashes `start..start + len`: the low and high halves of `start`, and `len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run([u32; 3]);

impl Run {
    fn start(self) -> u64 {
        u64::from(self.0[0]) | (u64::from(self.0[1]) << 32)
    }
    fn len(self) -> u32 {
        self.0[2]
    }
}

/// Runs kept in chunks of fixed size, so growing never copies them (the
/// peak is the runs themselves, not twice or three times them).
#[derive(Clone, Debug, Default, PartialEq)]
struct Chunked {
    chunks: Vec<Vec<Run>>,
    len: usize,
}

const CHUNK: usize = 1 << 12;

impl Chunked {
    fn push(&mut self, r: Run) {
        if self.len.is_multiple_of(CHUNK) {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        self.chunks[self.len / CHUNK].push(r);
        self.len += 1;
    }
    fn get(&self, i: usize) -> Run {
        self.chunks[i / CHUNK][i % CHUNK]
    }
    fn last_mut(&mut self) -> Option<&mut Run> {
        self.chunks.last_mut().and_then(|c| c.last_mut())
    }
}

/// A trace's requests in arrival order (see the module's documentation).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceRequests {
    at_s: Vec<f64>,
    input: Vec<u32>,
    output: Vec<u32>,
    /// None while every request is class 0.
    class: Option<Vec<u32>>,
    /// Per request, its first run; the next request's first is its end.
    /// None while no request has hashes.
    first_run: Option<Vec<u32>>,
    runs: Chunked,
    /// A trace streamed from its file during the run: its numbers only,
    /// no column held (see [`TraceRequests::streamed`]).
    streamed: Option<TraceStats>,
}

impl TraceRequests {
    /// Room for `n` requests (their runs grow a chunk at a time).
    pub fn with_capacity(n: usize) -> Self {
        TraceRequests {
            at_s: Vec::with_capacity(n),
            input: Vec::with_capacity(n),
            output: Vec::with_capacity(n),
            class: None,
            first_run: None,
            runs: Chunked::default(),
            streamed: None,
        }
    }

    /// A trace too long to hold, streamed from its file during the run: it
    /// holds its numbers (`stats`, taken from a first reading of the file)
    /// and no request. The scenario is checked and estimated from those;
    /// the requests come from a [`crate::engine::TraceFeed`] given to
    /// [`crate::Simulation::with_feed`], which checks each as it reads it.
    /// Such a scenario cannot be written (a link names the file instead).
    pub fn streamed(stats: TraceStats) -> Self {
        TraceRequests {
            streamed: Some(stats),
            ..TraceRequests::default()
        }
    }

    /// Whether the requests are streamed rather than held.
    pub fn is_streamed(&self) -> bool {
        self.streamed.is_some()
    }

    /// A streamed trace's numbers (None while its requests are held).
    pub(super) fn streamed_stats(&self) -> Option<TraceStats> {
        self.streamed
    }

    /// The requests in aggregate: counted over the columns, or as given to
    /// a streamed trace.
    pub fn stats(&self) -> TraceStats {
        if let Some(s) = self.streamed {
            return s;
        }
        let mut s = TraceStats::default();
        for e in self.iter() {
            s.add(&e, false);
        }
        s.hashes = self.has_hashes();
        s
    }

    /// Requests held (none when streamed: see [`Self::stats`]).
    pub fn len(&self) -> usize {
        self.at_s.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.at_s.is_empty()
    }

    /// Request `i`, without its hashes.
    pub fn get(&self, i: usize) -> TraceEntry {
        TraceEntry {
            at_s: self.at_s[i],
            input_tokens: self.input[i],
            output_tokens: self.output[i],
            class: self.class.as_ref().map_or(0, |c| c[i]),
        }
    }

    /// The first request.
    pub fn first(&self) -> Option<TraceEntry> {
        (!self.is_empty()).then(|| self.get(0))
    }

    /// The last request.
    pub fn last(&self) -> Option<TraceEntry> {
        self.len().checked_sub(1).map(|i| self.get(i))
    }

    /// Every request in order, without its hashes.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = TraceEntry> + ExactSizeIterator + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    fn run_range(&self, i: usize) -> std::ops::Range<usize> {
        let Some(first_run) = &self.first_run else {
            return 0..0;
        };
        let from = first_run[i] as usize;
        let to = first_run.get(i + 1).map_or(self.runs.len, |&t| t as usize);
        from..to
    }

    /// Request `i`'s prefix-block hashes, in order.
    pub fn hashes(&self, i: usize) -> impl Iterator<Item = u64> + Clone + '_ {
        self.run_range(i).flat_map(move |k| {
            let r = self.runs.get(k);
            (0..u64::from(r.len())).map(move |j| r.start() + j)
        })
    }

    /// How many hashes request `i` has.
    pub fn hash_count(&self, i: usize) -> usize {
        self.run_range(i)
            .map(|k| self.runs.get(k).len() as usize)
            .sum()
    }

    /// Whether any request has hashes.
    pub fn has_hashes(&self) -> bool {
        self.runs.len > 0
    }

    /// Request `i` as an object with its hashes.
    pub fn request(&self, i: usize) -> TraceRequest {
        let e = self.get(i);
        TraceRequest {
            at_s: e.at_s,
            input_tokens: e.input_tokens,
            output_tokens: e.output_tokens,
            class: e.class,
            prefix_blocks: self.hashes(i).collect(),
        }
    }

    /// Add a request at the end.
    pub fn push(&mut self, e: TraceEntry, hashes: impl IntoIterator<Item = u64>) {
        let n = self.len();
        if e.class != 0 && self.class.is_none() {
            self.class = Some(vec![0; n]);
        }
        if let Some(c) = &mut self.class {
            c.push(e.class);
        }
        let mut hashes = hashes.into_iter().peekable();
        if hashes.peek().is_some() && self.first_run.is_none() {
            self.first_run = Some(vec![0; n]);
        }
        if let Some(f) = &mut self.first_run {
            f.push(self.runs.len as u32);
        }
        self.at_s.push(e.at_s);
        self.input.push(e.input_tokens);
        self.output.push(e.output_tokens);
        let mut open = false;
        for h in hashes {
            if open
                && let Some(last) = self.runs.last_mut()
                && last.len() < u32::MAX
                && last.start().checked_add(u64::from(last.len())) == Some(h)
            {
                last.0[2] += 1;
                continue;
            }
            self.runs.push(Run([h as u32, (h >> 32) as u32, 1]));
            open = true;
        }
    }

    /// Add a request given as an object at the end.
    pub fn push_request(&mut self, r: TraceRequest) {
        let e = TraceEntry {
            at_s: r.at_s,
            input_tokens: r.input_tokens,
            output_tokens: r.output_tokens,
            class: r.class,
        };
        self.push(e, r.prefix_blocks);
    }

    /// Every arrival time through `f`, in place.
    pub fn map_times(&mut self, f: impl Fn(f64) -> f64) {
        for t in &mut self.at_s {
            *t = f(*t);
        }
    }

    /// Every class through `f`, in place.
    pub fn map_classes(&mut self, f: impl Fn(u32) -> u32) {
        if let Some(classes) = &mut self.class {
            for c in classes.iter_mut() {
                *c = f(*c);
            }
            if classes.iter().all(|&c| c == 0) {
                self.class = None;
            }
        }
    }

    /// The requests `keep` picks, in the order it gives them.
    pub fn pick(&self, keep: impl IntoIterator<Item = usize>) -> TraceRequests {
        let mut out = TraceRequests::default();
        for i in keep {
            out.push(self.get(i), self.hashes(i));
        }
        out
    }

    /// Arrival order, ties in their order here (a stable sort; nothing is
    /// copied when already in order).
    pub fn sorted_by_time(self) -> TraceRequests {
        if self.at_s.is_sorted_by(|a, b| a.total_cmp(b).is_le()) {
            return self;
        }
        let mut order: Vec<usize> = (0..self.len()).collect();
        order.sort_by(|&a, &b| self.at_s[a].total_cmp(&self.at_s[b]));
        self.pick(order)
    }
}

impl From<Vec<TraceRequest>> for TraceRequests {
    fn from(v: Vec<TraceRequest>) -> Self {
        v.into_iter().collect()
    }
}

impl FromIterator<TraceRequest> for TraceRequests {
    fn from_iter<I: IntoIterator<Item = TraceRequest>>(it: I) -> Self {
        let mut out = TraceRequests::default();
        for r in it {
            out.push_request(r);
        }
        out
    }
}

impl Serialize for TraceRequests {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.is_streamed() {
            return Err(serde::ser::Error::custom(
                "a trace streamed from its file cannot be written as requests; name the file instead",
            ));
        }
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for i in 0..self.len() {
            seq.serialize_element(&self.request(i))?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for TraceRequests {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Requests;
        impl<'de> Visitor<'de> for Requests {
            type Value = TraceRequests;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a sequence")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out =
                    TraceRequests::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
                while let Some(r) = seq.next_element::<TraceRequest>()? {
                    out.push_request(r);
                }
                Ok(out)
            }
        }
        d.deserialize_seq(Requests)
    }
}

impl<'a> IntoIterator for &'a TraceRequests {
    type Item = TraceEntry;
    type IntoIter = Box<dyn DoubleEndedIterator<Item = TraceEntry> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(at_s: f64, class: u32, prefix_blocks: Vec<u64>) -> TraceRequest {
        TraceRequest {
            at_s,
            input_tokens: 1024,
            output_tokens: 8,
            class,
            prefix_blocks,
        }
    }

    #[test]
    fn columns_read_and_write_the_list_of_objects_a_link_holds() {
        let list = vec![
            request(0.0, 0, vec![0, 1, 2, 3]),
            request(0.5, 0, vec![0, 1, 9, 10, u64::MAX]),
            request(0.5, 2, vec![]),
            request(1.0, 0, vec![1 << 40, (1 << 40) + 1]),
        ];
        let columns = TraceRequests::from(list.clone());
        assert_eq!(columns.len(), 4);
        // Runs of consecutive hashes: 1, then 3 (0–1, 9–10, MAX), none, 1.
        assert_eq!(columns.runs.len, 5);
        for (i, r) in list.iter().enumerate() {
            assert_eq!(&columns.request(i), r);
            assert_eq!(columns.hash_count(i), r.prefix_blocks.len());
        }
        let json = serde_json::to_string(&columns).expect("json");
        assert_eq!(json, serde_json::to_string(&list).expect("json"));
        let back: TraceRequests = serde_json::from_str(&json).expect("parses");
        assert_eq!(back, columns);
        // A request that is not one is named by its place in the list.
        let bad = r#"[{"at_s": 0, "input_tokens": 1, "output_tokens": 1}, {"at_s": 1, "input_tokens": -4, "output_tokens": 1}]"#;
        let mut de = serde_json::Deserializer::from_str(bad);
        let e = serde_path_to_error::deserialize::<_, TraceRequests>(&mut de).unwrap_err();
        assert_eq!(e.path().to_string(), "[1].input_tokens");
    }

    #[test]
    fn classes_and_hashes_cost_nothing_until_a_request_has_them() {
        let mut t = TraceRequests::default();
        t.push(request_entry(0.0, 0), []);
        t.push(request_entry(1.0, 0), []);
        assert!(t.class.is_none() && t.first_run.is_none());
        t.push(request_entry(2.0, 3), [7, 8]);
        assert_eq!(t.class, Some(vec![0, 0, 3]));
        assert_eq!(t.first_run, Some(vec![0, 0, 0]));
        assert_eq!(t.hashes(2).collect::<Vec<_>>(), vec![7, 8]);
        assert_eq!(t.hash_count(0), 0);
        t.map_classes(|_| 0);
        assert!(t.class.is_none(), "all class 0 again: no column");
        let stats = t.stats();
        assert_eq!(
            (stats.requests, stats.input_tokens, stats.output_tokens),
            (3, 300, 30)
        );
        assert!(stats.hashes && stats.last_at_s == 2.0 && stats.classes == 1);
        // Streamed: the numbers, no request held, and nothing to write.
        let s = TraceRequests::streamed(stats);
        assert!(s.is_streamed() && s.is_empty() && s.stats() == stats);
        assert!(serde_json::to_string(&s).is_err());
    }

    fn request_entry(at_s: f64, class: u32) -> TraceEntry {
        TraceEntry {
            at_s,
            input_tokens: 100,
            output_tokens: 10,
            class,
        }
    }

    #[test]
    fn sorting_by_time_is_stable_and_keeps_each_requests_hashes() {
        let t = TraceRequests::from(vec![
            request(2.0, 0, vec![5]),
            request(1.0, 1, vec![6, 7]),
            request(2.0, 2, vec![]),
            request(0.0, 3, vec![8]),
        ]);
        // The first request alone has hashes, or a class.
        let one = TraceRequests::from(vec![request(0.0, 1, vec![4]), request(1.0, 0, vec![])]);
        assert_eq!(one.hashes(0).collect::<Vec<_>>(), vec![4]);
        assert_eq!((one.get(0).class, one.get(1).class), (1, 0));
        let s = t.sorted_by_time();
        let classes: Vec<u32> = s.iter().map(|r| r.class).collect();
        assert_eq!(classes, vec![3, 1, 0, 2]);
        assert_eq!(s.hashes(1).collect::<Vec<_>>(), vec![6, 7]);
        assert_eq!(s.hash_count(3), 0);
        // Chunks: more runs than one chunk holds.
        let many: TraceRequests = (0..3 * CHUNK as u64)
            .map(|i| request(i as f64, 0, vec![2 * i]))
            .collect();
        assert_eq!(many.runs.chunks.len(), 3);
        assert_eq!(
            many.hashes(CHUNK + 1).collect::<Vec<_>>(),
            vec![2 * (CHUNK as u64 + 1)]
        );
    }
}
