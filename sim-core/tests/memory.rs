//! Peak memory of runs that once grew without bound, measured by a counting
//! allocator (`peak_alloc`; its own test binary, one test, so nothing else allocates
//! alongside). Bytes are deterministic for a given build: no timing involved.

use peak_alloc::PeakAlloc;

#[global_allocator]
static ALLOC: PeakAlloc = PeakAlloc;

/// Peak bytes allocated while `f` runs, above what was held before.
fn peak_during(f: impl FnOnce()) -> usize {
    let base = ALLOC.current_usage();
    ALLOC.reset_peak_usage();
    f();
    ALLOC.peak_usage().saturating_sub(base)
}

fn run_file(name: &str, shorten_to_s: Option<f64>) {
    let path = format!("{}/tests/repro/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).expect("repro file");
    let mut s: sim_core::Scenario = serde_json::from_str(&text).expect("scenario");
    if let Some(d) = shorten_to_s {
        s.duration_s = d;
    }
    let r = sim_core::run_scenario(s).expect("valid");
    assert!(r.requests.arrived > 0);
}

#[test]
fn runs_that_once_grew_without_bound_stay_within_their_memory() {
    // Reading a trace: the requests by column, Mooncake's hashes as runs of
    // consecutive ids (≈ 440 bytes a request as a list of objects before).
    let text = include_str!("traces/mooncake-first-2000.jsonl");
    let mut read = None;
    let parse = peak_during(|| read = sim_core::traces::read(text, &Default::default()).ok());
    let n = read.map_or(0, |t| t.requests.len());
    assert_eq!(n, 2000);
    assert!(
        parse / n < 100,
        "parsing Mooncake: {} bytes a request",
        parse / n
    );
    // 10,000 stages with hour-long waits: 3.75 GB of per-stage histograms before.
    let stages = peak_during(|| run_file("stages-10000-hour-waits-3.7GB.json", None));
    assert!(stages < 160 << 20, "10,000 stages: {} MB", stages >> 20);
    // An hour's timeout on refused requests: every one held a timer (632 MB
    // at full length); here 30 s of it, which held ≈ 95 MB.
    let timers = peak_during(|| run_file("stale-timeouts-2e7.json", Some(30.0)));
    assert!(timers < 24 << 20, "stale timeouts: {} MB", timers >> 20);
}
