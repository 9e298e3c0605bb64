//! Peak memory of reading and summarising a trace of 10⁶ lines, measured
//! by a counting allocator (`peak_alloc`; its own test binary, one test, so
//! nothing else allocates alongside). Bytes are deterministic for a given
//! build: no timing involved.

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

/// Line `i` of `n` of a generated Mooncake trace over a day: lengths from
/// a few values, 24 hashes, the prefix of one of 170 conversations (so the distinct
/// hashes, and with them the summary's memory, stop growing early). What a summary
/// holds grows with the span's minutes (at most a week's), the distinct
/// lengths and hashes, never with the lines.
fn mooncake_line(i: u64, n: u64, out: &mut String) {
    use std::fmt::Write;
    out.clear();
    let hashes: Vec<String> = (0..24).map(|k| ((i % 170) * 24 + k).to_string()).collect();
    let _ = write!(
        out,
        "{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": {}, \"hash_ids\": [{}]}}",
        i * 86_400_000 / n,
        12_000 + (i % 97),
        300 + (i % 13),
        hashes.join(", ")
    );
}

#[test]
fn a_trace_is_read_in_tens_of_bytes_a_request_and_summarised_in_memory_its_length_does_not_set() {
    // Read into columns a line at a time, the file's text never held.
    let n = 1_000_000u64;
    let mut line = String::new();
    let mut read = None;
    let columns = peak_during(|| {
        let mut r = sim_core::traces::TraceReader::new(&Default::default(), 0).expect("options");
        for i in 0..n {
            mooncake_line(i, n, &mut line);
            r.line(&line).expect("a line");
        }
        read = r.finish().ok();
    });
    assert_eq!(read.map(|t| t.requests.len()), Some(n as usize));
    assert!(
        columns / (n as usize) <= 100,
        "reading: {} bytes a request",
        columns / n as usize
    );
    // Summarised: the same memory for 10⁵ lines and for 10⁶.
    let summarise = |n: u64| {
        let mut line = String::new();
        peak_during(|| {
            let mut s = sim_core::traces::TraceSummariser::new(&Default::default())
                .expect("options")
                .expect("no rate");
            for i in 0..n {
                mooncake_line(i, n, &mut line);
                s.line(&line).expect("a line");
            }
            let t = s.finish().expect("a summary").expect("in arrival order");
            assert_eq!(t.summary.requests, n as usize);
        })
    };
    let (small, large) = (summarise(100_000), summarise(1_000_000));
    assert!(
        large <= small + (64 << 10),
        "summarising: {small} bytes at 10⁵ lines, {large} at 10⁶"
    );
}
