//! The offered load against the fleet's measured capacity, and which target
//! a missed goodput missed.

use sim_core::compare::{load_check, replica_capacity_per_s};
use sim_core::presets;
use sim_core::scenario::{Arrival, RatePoint, Stage};

#[test]
fn offered_load_is_the_mean_and_peak_of_the_arrival_process() {
    let mut s = presets::chatbot_h100();
    s.duration_s = 100.0;
    s.workload.arrival = Arrival::Stages {
        stages: vec![
            Stage {
                rate_per_s: 2.0,
                duration_s: 50.0,
            },
            Stage {
                rate_per_s: 6.0,
                duration_s: 25.0,
            },
        ],
    };
    // 2 for 50 s, 6 for 25 s, the last rate holding for 25 s more.
    assert_eq!(s.offered_tasks_per_s(), Some((4.0, 6.0)));
    s.workload.arrival = Arrival::Schedule {
        points: vec![
            RatePoint {
                at_s: 0.0,
                rate_per_s: 0.0,
            },
            RatePoint {
                at_s: 50.0,
                rate_per_s: 10.0,
            },
        ],
        cv: None,
    };
    // A ramp to 10 over 50 s (mean 5), then 10 for 50 s.
    assert_eq!(s.offered_tasks_per_s(), Some((7.5, 10.0)));
    assert_eq!(presets::launch_spike().offered_tasks_per_s(), None);
}

#[test]
fn a_load_past_capacity_is_flagged_with_demand_and_capacity_in_tokens() {
    let tuning = presets::self_hosted_tuning();
    let c = replica_capacity_per_s(&tuning).expect("valid");
    let healthy = load_check(&tuning, c).expect("a fleet scenario");
    assert!(!healthy.overloaded, "{healthy:?}");
    assert_eq!(healthy.replicas_needed, 1);
    assert!(healthy.demand_tokens_per_s < healthy.capacity_tokens_per_s);
    let mut busy = tuning.clone();
    busy.workload.arrival = Arrival::Poisson {
        rate_per_s: 3.0 * c,
    };
    let over = load_check(&busy, c).expect("a fleet scenario");
    assert!(over.overloaded);
    assert_eq!(over.replicas_needed, 3);
    assert!((over.demand_tokens_per_s / over.capacity_tokens_per_s - 3.0).abs() < 1e-9);
    // Tuned (continuous batching with chunked prefill, FP8): the same traffic
    // on fewer than half as many servers.
    let tuned = presets::self_hosted_tuned();
    let c_tuned = replica_capacity_per_s(&tuned).expect("valid");
    assert!(c_tuned > 2.0 * c, "{c_tuned} vs {c}");
    // API-served scenarios have no fleet capacity to check.
    assert!(load_check(&presets::pay_for_speed(), 1.0).is_none());
}

#[test]
fn goodput_says_which_target_was_missed() {
    // 60 tokens/s is 16.7 ms a token: every answer misses the 10 ms target.
    let r = sim_core::run_scenario(presets::pay_for_speed()).expect("valid");
    let o = &r.overall;
    assert_eq!(o.slo_met_fraction, Some(0.0));
    assert_eq!(o.tpot_target_missed, o.completed);
    assert_eq!(o.ttft_target_missed, 0);
}
