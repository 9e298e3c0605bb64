//! Engine benchmarks (`cargo bench -p sim-core`): the reference workload,
//! Llama-3.1-8B on one H100 with chunked prefill at 40 req/s, 512 in / 256 out.

use sim_core::presets::bench_h100;

fn main() {
    divan::main();
}

/// 50,000 requests (≈ 90,000 forward passes). Target: under 30 ms.
#[divan::bench(sample_count = 20)]
fn requests_50k(bencher: divan::Bencher) {
    let s = bench_h100(50_000).validate().expect("valid");
    bencher.bench(|| {
        let r = sim_core::run(divan::black_box(&s));
        assert_eq!(r.requests.completed, r.requests.arrived);
        r.utilisation.forward_passes
    });
}

/// 10⁶ requests. Target: under 0.5 s with flat memory.
#[divan::bench(sample_count = 3)]
fn requests_1m(bencher: divan::Bencher) {
    let s = bench_h100(1_000_000).validate().expect("valid");
    bencher.bench(|| sim_core::run(divan::black_box(&s)).requests.completed);
}

/// The page's default scenario (a slider drag re-runs it).
#[divan::bench(sample_count = 20)]
fn default_scenario(bencher: divan::Bencher) {
    let s = sim_core::presets::chatbot_h100().validate().expect("valid");
    bencher.bench(|| sim_core::run(divan::black_box(&s)).requests.completed);
}
