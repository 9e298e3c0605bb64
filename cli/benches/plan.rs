//! Planner benchmark (`cargo bench -p tlab`): the "Chatbot on one H100" workload
//! at 5 minutes of simulated traffic, the default search space (six GPUs:
//! 288 hardware configurations, 18,432 candidate setups),
//! searched in parallel on all cores, in as many passes as the work budget
//! allows (`sim_core::plan::budget`).

use sim_core::plan::{PlanSlo, Space};

fn main() {
    divan::main();
}

#[divan::bench(sample_count = 3)]
fn plan_chatbot_h100(bencher: divan::Bencher) {
    let s = sim_core::presets::chatbot_h100();
    assert_eq!(s.duration_s, 300.0);
    let slo = PlanSlo {
        ttft_p99_ms: 500.0,
        tpot_p99_ms: 50.0,
        max_error_fraction: 0.01,
        min_goodput: 0.9,
    };
    let space = Space::default();
    bencher.bench(|| {
        let p = tlab::analysis::plan_parallel(divan::black_box(&s), slo, &space, true);
        assert!(p.candidates >= 500 && !p.feasible.is_empty());
        p.simulations
    });
}
