//! Run the benchmark workload once, for measuring peak memory with
//! `/usr/bin/time -v cargo run --release -p sim-core --example peak_memory -- 50000`.

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(50_000);
    let r = sim_core::run(&sim_core::presets::bench_h100(n)).expect("valid");
    println!(
        "{} requests, {} forward passes, {:.0} output tok/s, p99 TTFT {:?} ms",
        r.requests.completed,
        r.utilisation.forward_passes,
        r.throughput.output_tokens_per_s,
        r.overall.ttft.p99_ms
    );
}
