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

/// Every preset's plan, as `tlab plan PRESET.json` asks it, with each flag
/// that applies to it: the default question (within the work budget, the
/// smaller question the budget asks instead when it does), `--self-hosted`
/// where API tiers serve it, `--pools` and `--split`. Target: each within
/// 10 s on 2 cores (`docs/benchmarks.md` records them).
#[divan::bench(
    args = [
        "chatbot-h100", "chatbot-h100 --pools", "chatbot-h100 --split",
        "launch-spike", "launch-spike --self-hosted", "launch-spike --pools",
        "pay-for-speed", "pay-for-speed --self-hosted",
        "self-hosted-tuning",
        "overnight-batch", "overnight-batch --self-hosted",
        "classification", "classification --self-hosted",
        "thinking-agent", "thinking-agent --self-hosted",
        "two-models", "two-models --pools",
        "launch-day-gpus", "launch-day-gpus --pools",
        "chat-and-batch", "chat-and-batch --pools",
        "split-prefill-decode", "split-prefill-decode --split",
    ],
    sample_count = 1,
    sample_size = 1
)]
fn plan_every_preset(bencher: divan::Bencher, question: &str) {
    let (id, flag) = question.split_once(' ').unwrap_or((question, ""));
    let s = sim_core::presets::all()
        .into_iter()
        .find(|p| p.id == id)
        .expect("a preset")
        .scenario;
    let slo = sim_core::plan::PlanSlo::for_scenario(&s);
    let space = Space {
        self_hosted: flag == "--self-hosted" || s.uses_fleet(),
        ..Space::default()
    };
    bencher.bench(|| match flag {
        "--pools" => tlab::analysis::pool_plan_parallel(&s, slo, &space, true)
            .map(|p| p.classes.len() as u64)
            .expect("a pool plan"),
        "--split" => sim_core::plan::disaggregation::plan_disaggregation(
            &s,
            slo,
            None,
            sim_core::plan::budget::PLAN_EVENTS,
        )
        .map(|p| p.events)
        .expect("a split plan"),
        _ => {
            let q = sim_core::plan::budget::question(&s, slo, &space);
            tlab::analysis::plan_parallel(&q.scenario, slo, &space, true).simulations as u64
        }
    });
}
