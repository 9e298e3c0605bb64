//! Time and peak memory of replaying a trace streamed from its lines, as
//! `tlab run --trace` replays a file in arrival order:
//! `cargo run --release -p sim-core --example replay_stream -- N [FILE]`.
//! N Mooncake lines at 115 a second (a day at 10⁷), made as they are read:
//! prompts of 1,024–1,624 tokens whose one or two hashes come from 5,000
//! conversations, 100–220 tokens out, on six H100 replicas of the chatbot
//! preset with prefix caching. With FILE, the lines are written there too,
//! for `tlab run SCENARIO --set replicas=6 --trace FILE`. Peak is the
//! counting allocator's (`peak_alloc`).

use peak_alloc::PeakAlloc;
use sim_core::traces::{self, LineFeed, Options};
use std::io::Write as _;

#[global_allocator]
static ALLOC: PeakAlloc = PeakAlloc;

/// Line `i`: 115.74 a second, a day at 10⁷.
fn line(i: u64) -> String {
    let c = i % 5000;
    let hashes: Vec<String> = (0..1 + i % 2).map(|j| (c * 8 + j).to_string()).collect();
    format!(
        "{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": {}, \"hash_ids\": [{}]}}",
        i * 864 / 100,
        1024 + (i % 7) * 100,
        100 + (i % 13) * 10,
        hashes.join(", ")
    )
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .expect("usage: replay_stream N [FILE]");
    if let Some(path) = args.next() {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).expect("writable"));
        for i in 0..n {
            writeln!(out, "{}", line(i)).expect("written");
        }
        println!("{n} lines written to {path}");
    }
    let lines = move || (0..n).map(|i| Ok::<_, String>(line(i)));
    let options = Options::default();
    let start = std::time::Instant::now();
    let mut summariser = traces::TraceSummariser::new(&options)
        .expect("options")
        .expect("no rate");
    for l in lines() {
        summariser.line(&l.expect("a line")).expect("read");
    }
    let summary = summariser.finish().expect("a summary").expect("in order");
    let first = start.elapsed();
    let mut s = sim_core::presets::chatbot_h100();
    s.serving.replicas = 6;
    s.serving.prefix_caching = Some(true);
    summary.apply_to(&mut s);
    let s = s.validate().expect("valid");
    let base = ALLOC.current_usage();
    ALLOC.reset_peak_usage();
    let start = std::time::Instant::now();
    let feed = LineFeed::new(lines(), &options, &summary);
    let report = sim_core::run_with_feed(&s, Box::new(feed)).expect("every line read");
    let run = start.elapsed();
    let peak = ALLOC.peak_usage().saturating_sub(base);
    println!(
        "{n} requests: first reading {:.2} s; replay {:.2} s ({:.2} µs a request), peak {:.1} MB; {} completed, complete: {}",
        first.as_secs_f64(),
        run.as_secs_f64(),
        run.as_secs_f64() * 1e6 / n as f64,
        peak as f64 / 1e6,
        report.requests.completed,
        report.complete
    );
}
