//! Same scenario and seed ⇒ the same numbers; streams are independent.

use crate::{run, simulation};
use sim_core::presets;
use sim_core::scenario::Batching;

#[test]
fn the_same_scenario_twice_gives_equal_reports() {
    let s = presets::chatbot_h100();
    let a = run(&s).expect("valid");
    let b = run(&s).expect("valid");
    assert_eq!(a, b);
    assert_eq!(
        serde_json::to_string(&a).expect("serialises"),
        serde_json::to_string(&b).expect("serialises")
    );
}

#[test]
fn another_seed_gives_different_numbers() {
    let s = presets::chatbot_h100();
    let mut t = s.clone();
    t.seed += 1;
    let a = run(&s).expect("valid");
    let b = run(&t).expect("valid");
    assert_ne!(a.requests.arrived, 0);
    assert_ne!(a.overall.e2e, b.overall.e2e);
}

fn arrivals(s: &sim_core::Scenario) -> Vec<sim_core::trace::ArrivalRecord> {
    let mut sim = simulation(s).expect("valid");
    sim.record_trace(100_000);
    sim.advance_until(u64::MAX);
    sim.trace().expect("recording").arrivals.clone()
}

#[test]
fn changing_the_batching_policy_leaves_arrivals_unchanged() {
    let s = presets::chatbot_h100();
    let base = arrivals(&s);
    assert!(base.len() > 1000);
    for batching in [
        Batching::None,
        Batching::Static {
            max_batch: 16,
            max_wait_ms: 50.0,
        },
        Batching::Continuous {
            max_num_seqs: 64,
            max_num_batched_tokens: 16_384,
        },
    ] {
        let mut t = s.clone();
        t.serving.batching = batching.clone();
        // Cap the run at the arrival window: slow policies drain for a long time.
        let other = arrivals(&t);
        assert_eq!(other, base, "arrivals changed under {batching:?}");
    }
}

#[test]
fn stepping_in_slices_gives_the_same_report_as_one_run() {
    let s = presets::chatbot_h100();
    let whole = run(&s).expect("valid");
    let mut sim = simulation(&s).expect("valid");
    let mut t = 0u64;
    let mut slices = 0;
    while !sim.advance_until(t) {
        t += 1_700_000_000; // 1.7 s slices, deliberately not aligned to windows
        slices += 1;
        assert!(slices < 100_000, "stepping never finished");
    }
    assert_eq!(sim.report(), whole);
    let mut by_events = simulation(&s).expect("valid");
    while !by_events.advance_events(777) {}
    assert_eq!(by_events.report(), whole);
}
