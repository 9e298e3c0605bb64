//! Priority scheduling (vLLM's `--scheduling-policy priority`): the more
//! urgent class is admitted first and preempted last.

use crate::{assert_close, fixed_class, run, textbook};
use proptest::prelude::*;
use sim_core::dist::Dist;
use sim_core::scenario::{
    Arrival, Batching, RequestClass, Router, SchedulingPolicy, TraceRequest, TraceRequests,
};

/// Two classes of the textbook server, equal shares, `urgent` first.
fn two_classes(urgent: u32, batch: u32) -> Vec<RequestClass> {
    let class = |name: &str, priority: u32| RequestClass {
        name: name.into(),
        share: 1.0,
        priority: Some(priority),
        ..fixed_class(1, 1)
    };
    vec![class("urgent", urgent), class("batch", batch)]
}

#[test]
fn a_two_class_priority_m_m_1_matches_cobhams_waiting_times() {
    // λ = 0.4 + 0.4, μ = 1 for both (exponential), non-preemptive priority:
    // W₀ = Σ λᵢ E[Sᵢ²] / 2 = 0.8; W_q1 = W₀ / (1 − ρ₁) = 4/3,
    // W_q2 = W₀ / ((1 − ρ₁)(1 − ρ)) = 20/3 (their mean, 4, is FCFS's W_q).
    const UNIT_S: f64 = 1e-3;
    let mut s = textbook(
        0.8 / UNIT_S,
        1,
        Router::RoundRobin,
        Batching::None,
        Dist::Exponential { mean: UNIT_S },
        1_000_000.0,
    );
    s.workload.classes = two_classes(0, 1);
    let units = |ms: Option<f64>| ms.expect("recorded") / 1e3 / UNIT_S;
    let fcfs = run(&s).expect("valid");
    for c in &fcfs.per_class {
        assert_close(&c.name, units(c.queue_wait.mean_ms), 4.0, 0.03);
    }
    s.serving.scheduling_policy = Some(SchedulingPolicy::Priority);
    let r = run(&s).expect("valid");
    let wait = |name: &str| {
        let c = r.per_class.iter().find(|c| c.name == name).expect("class");
        units(c.queue_wait.mean_ms)
    };
    assert_close("W_q of the urgent class", wait("urgent"), 4.0 / 3.0, 0.03);
    assert_close("W_q of the batch class", wait("batch"), 20.0 / 3.0, 0.03);
    assert_close(
        "W_q overall (work-conserving)",
        units(r.overall.queue_wait.mean_ms),
        4.0,
        0.03,
    );
}

/// Pairs of requests arriving at once on one H100 replica, the batch one
/// first in the file (so first come, first served would take it first).
fn pairs(lengths: &[(u32, u32)], gap_s: f64) -> sim_core::Scenario {
    let mut s = sim_core::presets::chatbot_h100();
    s.serving.replicas = 1;
    s.workload.classes = two_classes(0, 5)
        .into_iter()
        .map(|k| RequestClass {
            max_tokens: 4096,
            ..k
        })
        .collect();
    let mut list = Vec::new();
    for (i, &(input, output)) in lengths.iter().enumerate() {
        for class in [1, 0] {
            list.push(TraceRequest {
                at_s: i as f64 * gap_s,
                input_tokens: input,
                output_tokens: output,
                class,
                prefix_blocks: Vec::new(),
            });
        }
    }
    s.duration_s = (lengths.len() as f64 * gap_s).ceil().max(1.0);
    s.workload.arrival = Arrival::Trace {
        requests: TraceRequests::from(list),
        prefix_block_tokens: None,
    };
    s.serving.scheduling_policy = Some(SchedulingPolicy::Priority);
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn at_equal_arrival_the_urgent_class_never_waits_longer(
        lengths in prop::collection::vec((1u32..6000, 1u32..400), 20..120),
        gap_ms in 5u32..200,
    ) {
        // Pairwise no longer ⇒ every quantile no longer.
        let r = run(&pairs(&lengths, f64::from(gap_ms) / 1e3)).expect("valid");
        let class = |n: &str| r.per_class.iter().find(|c| c.name == n).expect("class").queue_wait;
        let (u, b) = (class("urgent"), class("batch"));
        for (q, x, y) in [
            ("mean", u.mean_ms, b.mean_ms),
            ("p50", u.p50_ms, b.p50_ms),
            ("p90", u.p90_ms, b.p90_ms),
            ("p99", u.p99_ms, b.p99_ms),
            ("max", u.max_ms, b.max_ms),
        ] {
            let (x, y) = (x.unwrap_or(0.0), y.unwrap_or(0.0));
            prop_assert!(x <= y * 1.001 + 1e-6, "{q}: urgent {x} ms, batch {y} ms");
        }
    }
}

#[test]
fn when_memory_runs_short_the_urgent_class_keeps_its_pace() {
    // Long batch answers fill a small KV cache; urgent questions arrive
    // among them. By priority they are admitted ahead and the batch
    // sequences are the ones preempted.
    let lengths: Vec<(u32, u32)> = (0..300).map(|i| (2000 + 37 * (i % 50), 300)).collect();
    let mut s = pairs(&lengths, 0.05);
    s.serving.gpu_memory_utilisation = 0.3;
    let prio = run(&s).expect("valid");
    s.serving.scheduling_policy = None;
    let fcfs = run(&s).expect("valid");
    let of = |r: &sim_core::Report, n: &str| {
        r.per_class
            .iter()
            .find(|c| c.name == n)
            .expect("class")
            .clone()
    };
    assert!(fcfs.utilisation.preemptions > 0, "memory is short");
    let (u_prio, u_fcfs) = (of(&prio, "urgent"), of(&fcfs, "urgent"));
    let p99 = |c: &sim_core::report::ClassReport| c.e2e.p99_ms.expect("recorded");
    assert!(
        p99(&u_prio) < 0.7 * p99(&u_fcfs),
        "urgent e2e p99 {} ms by priority against {} first come, first served",
        p99(&u_prio),
        p99(&u_fcfs)
    );
    // The batch class pays for it, and nothing is lost.
    assert!(p99(&of(&prio, "batch")) > p99(&of(&fcfs, "batch")));
    assert_eq!(prio.requests.completed, fcfs.requests.completed);
}
