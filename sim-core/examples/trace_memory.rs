//! Peak memory and time of reading a trace file, per request:
//! `cargo run --release -p sim-core --example trace_memory -- FILE`.
//! Peak is the counting allocator's (`peak_alloc`, which counts a
//! reallocation as old and new at once), above the file's text.

use peak_alloc::PeakAlloc;

#[global_allocator]
static ALLOC: PeakAlloc = PeakAlloc;

fn main() {
    let path = std::env::args().nth(1).expect("usage: trace_memory FILE");
    let text = std::fs::read_to_string(&path).expect("readable file");
    let base = ALLOC.current_usage();
    ALLOC.reset_peak_usage();
    let t = sim_core::traces::read(&text, &Default::default()).expect("a trace");
    let peak = ALLOC.peak_usage() - base;
    let held = ALLOC.current_usage() - base;
    let n = t.requests.len();
    // Time: the best of five reads (the first warms the allocator).
    let best = (0..5)
        .map(|_| {
            let start = std::time::Instant::now();
            let again = sim_core::traces::read(&text, &Default::default()).expect("a trace");
            assert_eq!(again.requests.len(), n);
            start.elapsed()
        })
        .min()
        .unwrap_or_default();
    println!(
        "{path}: {n} requests, text {} B a request; parsing: peak {} B a request, held {} B, {:.2} µs a request",
        text.len() / n,
        peak / n,
        held / n,
        best.as_secs_f64() * 1e6 / n as f64
    );
}
