//! The inputs that broke main at 6ec7ebe (issue "No silently wrong number,
//! round two"), kept in `tests/repro/` as users wrote them: each is refused
//! with a message naming the field, or runs with the right numbers. Heavy ones
//! run shortened (same shape, fewer requests); their full-size costs are in the
//! README's table and `cargo bench`.

use sim_core::report::Report;
use sim_core::scenario::{Scenario, ValidScenario};
use std::path::Path;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/repro");

fn read(name: &str) -> String {
    std::fs::read_to_string(Path::new(DIR).join(name)).expect("repro file")
}

fn scenario(name: &str) -> Scenario {
    serde_json::from_str(&read(name)).expect("a scenario as JSON")
}

fn valid(name: &str) -> ValidScenario {
    Scenario::from_json(&read(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn run(s: Scenario) -> Report {
    sim_core::run_scenario(s).expect("valid")
}

/// The same scenario with every class's timeout removed.
fn without_timeouts(mut s: Scenario) -> Scenario {
    for k in &mut s.workload.classes {
        k.timeout_s = None;
    }
    s
}

#[test]
fn a_negative_stage_duration_is_refused_by_name_from_a_file_and_from_a_link() {
    let e = Scenario::from_json(&read("stage-duration-negative-panic.json"))
        .expect_err("a negative duration is invalid");
    assert!(
        e.to_string()
            .contains("workload.arrival.stages[0].duration_s must be > 0"),
        "{e}"
    );
    let link = read("stage-duration-negative-panic.link");
    let payload = link.trim().trim_start_matches('#').trim_start_matches("s=");
    let e = sim_core::link::decode(payload).expect_err("refused");
    assert!(
        e.to_string()
            .contains("workload.arrival.stages[0].duration_s"),
        "{e}"
    );
}

#[test]
fn a_timeout_no_request_reaches_changes_no_number() {
    for name in [
        "timeout-86200-stretch.json",
        "timeout-86400.json",
        "api-timeout-85000-month-cost.json",
    ] {
        let with = run(scenario(name));
        let without = run(without_timeouts(scenario(name)));
        assert_eq!(with.requests.timed_out, 0, "{name}");
        // Stale timers neither move the clock nor count as events.
        assert_eq!(with.events, without.events, "{name}: events");
        assert_eq!(
            with.sim_time_s, without.sim_time_s,
            "{name}: simulated time"
        );
        assert_eq!(with.throughput, without.throughput, "{name}: throughput");
        assert_eq!(with.cost, without.cost, "{name}: cost");
        assert_eq!(with.warnings, without.warnings, "{name}: warnings");
        // The arrival window plus the last answers, not the timeout's 24 hours.
        assert!(with.sim_time_s < 3_700.0, "{name}: {} s", with.sim_time_s);
    }
    // The chatbot's own numbers (the 7.94 req/s and $0.36; 7.93
    // since async scheduling moved the last answers by a pass).
    let r = run(scenario("timeout-86200-stretch.json"));
    assert!(
        (r.throughput.requests_per_s - 7.94).abs() < 0.02,
        "{}",
        r.throughput.requests_per_s
    );
    assert!(
        (r.cost.fleet_usd - 0.36).abs() < 0.01,
        "{}",
        r.cost.fleet_usd
    );
    let api = run(scenario("api-timeout-85000-month-cost.json"));
    assert!(
        (api.cost.usd_per_month - 22_570.0).abs() < 10.0,
        "{}",
        api.cost.usd_per_month
    );
}

#[test]
fn timers_of_requests_that_ended_hold_no_memory_and_no_events() {
    // 10⁵ tasks/s, nearly all refused, each with an hour's timeout: before,
    // every refused request left an event in the heap for an hour (632 MB).
    let mut s = scenario("stale-timeouts-2e7.json");
    s.duration_s = 20.0;
    let v = s.clone().validate().expect("valid");
    let mut sim = sim_core::Simulation::new(&v);
    let mut most = 0;
    while !sim.advance_events(50_000) {
        most = most.max(sim.timers_held());
    }
    assert!(most < 50_000, "held {most} timers");
    let with = sim.report();
    let without = run(without_timeouts(s));
    assert_eq!(with.requests, without.requests);
    assert_eq!(with.events, without.events);
    assert_eq!(with.sim_time_s, without.sim_time_s);
}

#[test]
fn a_request_timed_out_at_the_provider_is_billed_for_what_streamed_and_never_completed() {
    let s = scenario("api-timeout-1.5s-billed-completed-by-tier.json");
    let r = run(s.clone());
    let api = r.api.as_ref().expect("an API run");
    let tier = &api.tiers[0];
    assert!(r.requests.timed_out > 0);
    assert_eq!(tier.completed, r.requests.completed, "tier completions");
    assert_eq!(tier.timed_out, r.requests.timed_out);
    assert!(tier.completed + tier.timed_out <= tier.requests);
    let done_output = (r.throughput.output_tokens_per_s * r.sim_time_s).round() as u64;
    assert!(
        tier.output_tokens <= done_output,
        "tier tokens exceed the run's"
    );
    assert!(
        api.attempts_per_request >= 1.0,
        "{}",
        api.attempts_per_request
    );
    // The same traffic with no timeout is billed in full: more.
    let full = run(without_timeouts(s));
    assert!(tier.usd < full.api.as_ref().expect("api").usd);
    assert!(tier.usd_timed_out > 0.0 && tier.usd_timed_out <= tier.usd);
    assert_eq!(r.cost.api_usd, api.usd);
}

#[test]
fn ten_thousand_stages_run_with_bounded_per_stage_statistics() {
    let v = valid("stages-10000-hour-waits-3.7GB.json");
    let r = sim_core::run(&v);
    assert_eq!(r.stages.len(), 10_000);
    let total: u64 = r.stages.iter().map(|s| s.completed).sum();
    assert_eq!(total, r.requests.completed, "stage counts add up");
    for st in r.stages.iter().filter(|s| s.completed > 0) {
        let (p50, p99, max) = (st.e2e.p50_ms, st.e2e.p99_ms, st.e2e.max_ms);
        assert!(p50 <= p99 && p99 <= max, "{p50:?} {p99:?} {max:?}");
    }
}

#[test]
fn the_prefix_work_bound_uses_the_mean_the_engine_draws() {
    let e = Scenario::from_json(&read("conv-normal-sd-1e6-265cpu-s.json"))
        .expect_err("a normal(1, 10⁶) prompt averages ≈ 4·10⁵ tokens");
    let msg = e.to_string();
    assert!(msg.contains("with prefix caching"), "{msg}");
    assert!(msg.contains("serving.prefix_caching"), "{msg}");
}

#[test]
fn expert_parallel_passes_run_on_a_day_of_traffic() {
    let mut s = scenario("moe-1024-experts-ep2-day-110cpu-s.json");
    s.duration_s = 600.0;
    s.limits.max_sim_time_s = 600.0;
    let r = run(s);
    assert!(r.requests.completed > 500);
    assert!(r.utilisation.forward_passes > 100_000);
}

#[test]
fn one_token_chunks_give_the_same_requests_their_tokens() {
    // Finished prompts leave the prefilling set in one sweep a pass; every
    // request must still get exactly its tokens, in the same order of events.
    for name in [
        "chunk1-partial-prefills-quadratic-108cpu-s.json",
        "chunk2048-control-3cpu-s.json",
    ] {
        let mut s = scenario(name);
        s.duration_s = 2.0;
        let r = run(s);
        assert!(r.complete, "{name}");
        let c = r.requests;
        assert_eq!(
            c.arrived,
            c.completed + c.rejected + c.failed + c.timed_out,
            "{name}"
        );
        let out = r.throughput.output_tokens_per_s * r.sim_time_s;
        let series = r.series.output_tokens_per_s.iter().sum::<f64>() * r.series.window_s;
        assert!((series - out).abs() <= 1e-6 * out.max(1.0), "{name}");
    }
}

#[test]
fn a_toy_custom_model_has_a_finite_physical_limit() {
    let r = sim_core::run(&valid("custom-model-tiny-roofline-null.json"));
    let limit = r.physical_limit.expect("physics");
    assert!(limit.output_tokens_per_s.is_finite() && limit.output_tokens_per_s > 0.0);
    assert!(limit.achieved_fraction > 0.0 && limit.achieved_fraction <= 1.0);
    let json = serde_json::to_string(&r).expect("serialises");
    assert!(!json.contains("null,\"achieved"), "no null in the limit");
}
