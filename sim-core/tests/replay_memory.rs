//! Peak memory of replaying a trace streamed from its lines
//! (`traces::LineFeed`, what `tlab run --trace` does with a file in arrival
//! order): it holds the requests in flight, so ten times the lines at the
//! same rate cost the same memory. Counted by `peak_alloc` in a test binary
//! of its own (one test: nothing else allocates alongside); bytes are
//! deterministic for a build, no timing involved.

use peak_alloc::PeakAlloc;
use sim_core::traces::{self, LineFeed, Options};

#[global_allocator]
static ALLOC: PeakAlloc = PeakAlloc;

/// The lines of a Mooncake trace of `n` requests at 50 a second, made as
/// they are read (no file, no text held): prompts of 1,024–1,624 tokens
/// whose one or two hashes come from 5,000 conversations (every third a
/// large value, as content hashes are), 100–220 tokens out.
struct Lines {
    i: u64,
    n: u64,
}

impl Iterator for Lines {
    type Item = Result<String, String>;
    fn next(&mut self) -> Option<Self::Item> {
        let i = self.i;
        if i >= self.n {
            return None;
        }
        self.i += 1;
        let c = i % 5000;
        let big = if i.is_multiple_of(3) { 1u64 << 40 } else { 0 };
        let hashes: Vec<String> = (0..1 + i % 2)
            .map(|j| (big | (c * 8 + j)).to_string())
            .collect();
        Some(Ok(format!(
            "{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": {}, \"hash_ids\": [{}]}}",
            i * 20,
            1024 + (i % 7) * 100,
            100 + (i % 13) * 10,
            hashes.join(", ")
        )))
    }
}

/// Peak bytes allocated while replaying `n` requests streamed, above what
/// was held before; and the requests completed.
fn replay(n: u64) -> (usize, u64) {
    let options = Options::default();
    let mut summariser = traces::TraceSummariser::new(&options)
        .expect("options")
        .expect("no rate");
    for l in (Lines { i: 0, n }) {
        summariser.line(&l.expect("a line")).expect("read");
    }
    let summary = summariser.finish().expect("a summary").expect("in order");
    let mut s = sim_core::presets::chatbot_h100();
    s.serving.replicas = 3;
    s.serving.prefix_caching = Some(true);
    summary.apply_to(&mut s);
    let s = s.validate().expect("valid");
    let base = ALLOC.current_usage();
    ALLOC.reset_peak_usage();
    let report = sim_core::run_with_feed(
        &s,
        Box::new(LineFeed::new(Lines { i: 0, n }, &options, &summary)),
    )
    .expect("every line read");
    let peak = ALLOC.peak_usage().saturating_sub(base);
    assert!(report.complete, "{:?}", report.warnings);
    (peak, report.requests.completed)
}

#[test]
fn a_streamed_replay_holds_the_requests_in_flight_not_the_trace() {
    let (small, done_small) = replay(50_000);
    let (large, done_large) = replay(500_000);
    assert_eq!((done_small, done_large), (50_000, 500_000));
    // About 5 MB either way (the fleet, the recorder, the requests in
    // flight); ten times the lines add nothing but noise.
    assert!(
        large <= small + (64 << 10),
        "replaying: {small} bytes for 5·10⁴ requests, {large} for 5·10⁵"
    );
}
