//! Run the benchmark workload once, for measuring peak memory with
//! `/usr/bin/time -v target/release/examples/peak_memory REQUESTS [RATE]`
//! (RATE in requests/s, default 40 as in the benchmark).

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(50_000);
    let rate: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(40.0);
    let mut s = sim_core::presets::bench_h100(n);
    s.duration_s = n as f64 / rate;
    s.workload.arrival = sim_core::scenario::Arrival::Poisson { rate_per_s: rate };
    let r = sim_core::run_scenario(s).expect("valid");
    println!(
        "{} arrived, {} completed, {} rejected, {} forward passes, {:.0} output tok/s, p99 TTFT {:?} ms",
        r.requests.arrived,
        r.requests.completed,
        r.requests.rejected,
        r.utilisation.forward_passes,
        r.throughput.output_tokens_per_s,
        r.overall.ttft.p99_ms
    );
}
