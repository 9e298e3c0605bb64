//! A provider's batch API, against exact oracles: every result within the
//! window, the bill exactly the batch price, the queue's token limit never
//! exceeded, and every request accounted for.

use crate::{assert_close, run};
use sim_core::api::{BatchApi, ClientPolicy};
use sim_core::dist::Dist;
use sim_core::params::apply;
use sim_core::presets;
use sim_core::scenario::{Arrival, Scenario};

/// Launch-spike's long threads at 2 a second for 20 minutes, on the
/// frontier tier or (`batch`) its batch API.
fn threads(batch: bool) -> Scenario {
    let mut s = presets::launch_spike();
    s.workload.classes.retain(|k| k.name == "long thread");
    s.workload.classes[0].share = 1.0;
    s.workload.arrival = Arrival::Poisson { rate_per_s: 2.0 };
    s.duration_s = 1200.0;
    let api = s.api.as_mut().expect("api");
    api.client = ClientPolicy::QUEUE;
    api.tiers[0].limits.tpm = 100_000_000;
    api.tiers[0].limits.rpm = 1_000_000;
    if batch {
        apply(&mut s, "api.batch", "on").expect("batch");
        apply(&mut s, "backend[long thread]", "frontier-batch").expect("route");
    }
    s
}

#[test]
fn a_batch_bills_exactly_its_price_and_answers_within_the_window() {
    let sync = run(&threads(false)).expect("valid");
    let mut s = threads(true);
    // Turnarounds past the window are cut at it.
    let b = s.api.as_mut().expect("api").tiers[2]
        .batch
        .as_mut()
        .expect("batch");
    b.turnaround_s = Dist::LogNormal {
        median: 40_000.0,
        p90: 200_000.0,
    };
    let r = run(&s).expect("valid");
    assert_eq!(
        r.requests.arrived, sync.requests.arrived,
        "the same requests"
    );
    assert_eq!(r.requests.completed, r.requests.arrived);
    let (a, t) = (
        r.api.as_ref().expect("api"),
        &r.api.as_ref().expect("api").tiers,
    );
    assert_eq!(t[2].name, "frontier-batch");
    assert_eq!(t[2].completed, r.requests.completed);
    assert_eq!(
        (t[0].requests, a.throttled_429),
        (0, 0),
        "outside the rate limits"
    );
    // The same tokens at half the price, token for token.
    let st = &sync.api.as_ref().expect("api").tiers[0];
    assert_eq!(
        (t[2].input_tokens, t[2].output_tokens),
        (st.input_tokens, st.output_tokens)
    );
    assert_close("the batch bill", t[2].usd, 0.5 * st.usd, 1e-12);
    // The month scales from the 20 minutes requests arrived over, not the
    // day their answers took.
    let month = sim_core::report::HOURS_PER_MONTH * 3600.0 / 1200.0;
    assert!(r.sim_time_s > 20_000.0, "{}", r.sim_time_s);
    assert_close("per month", t[2].usd_per_month, t[2].usd * month, 1e-9);
    // A result arrives whole, at most a day after it was sent.
    let e2e = &r.overall.e2e;
    assert!(
        e2e.max_ms.expect("max") <= 86_400_000.0 + 1.0,
        "{:?}",
        e2e.max_ms
    );
    assert!(
        e2e.p99_ms.expect("p99") > 80_000_000.0,
        "some are cut at the window: {e2e:?}"
    );
    assert_eq!(
        r.overall.ttft.p50_ms, r.overall.e2e.p50_ms,
        "the first token is the answer"
    );
    assert_eq!(r.overall.tpot.p50_ms, None, "no time per token");
}

#[test]
fn the_queue_never_holds_more_than_its_limit_and_what_waits_is_sent_in_order() {
    let mut s = threads(true);
    let limit = 2_000_000;
    s.api.as_mut().expect("api").tiers[2].batch = Some(BatchApi {
        window_s: 86_400.0,
        turnaround_s: Dist::Fixed { value: 600.0 },
        enqueued_tokens: limit,
    });
    let r = run(&s).expect("valid");
    let t = &r.api.as_ref().expect("api").tiers[2];
    assert!(
        t.batch_enqueued_peak_tokens <= limit,
        "{}",
        t.batch_enqueued_peak_tokens
    );
    assert!(
        t.batch_enqueued_peak_tokens > limit * 9 / 10,
        "the queue fills"
    );
    // 2 a second of prompts averaging thousands of tokens fill 2 M tokens in
    // well under 600 s: later requests wait for room, so results come later
    // than the 600 s turnaround, and all of them come.
    assert_eq!(r.requests.completed, r.requests.arrived);
    assert!(
        r.overall.e2e.p99_ms.expect("p99") > 1_000_000.0,
        "{:?}",
        r.overall.e2e
    );
    assert!(
        r.overall.e2e.p50_ms.expect("p50") >= 600_000.0,
        "no result before its turnaround"
    );
}

#[test]
fn a_prompt_larger_than_the_queue_fails_and_a_batch_tier_is_removed_cleanly() {
    let mut s = threads(true);
    let b = s.api.as_mut().expect("api").tiers[2]
        .batch
        .as_mut()
        .expect("batch");
    b.enqueued_tokens = 100;
    // Prompt lengths without a bound are checked as they come: each fails,
    // and the report says why.
    let r = run(&s).expect("valid");
    assert_eq!(r.requests.failed, r.requests.arrived);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("more than its batch queue of 100 enqueued tokens")),
        "{:?}",
        r.warnings
    );
    // A class whose prompts have a bound is refused up front.
    s.workload.classes[0].input_tokens = Dist::Fixed { value: 500.0 };
    let err = run(&s).expect_err("refused").to_string();
    assert!(
        err.contains(
            "can never enter tier \"frontier-batch\"'s batch queue of 100 enqueued tokens"
        ),
        "{err}"
    );
    // Off again: the class goes back to the main tier and the run is the
    // synchronous one.
    let mut s = threads(true);
    apply(&mut s, "api.batch", "off").expect("off");
    assert_eq!(
        run(&s).expect("valid"),
        run(&threads(false)).expect("valid")
    );
}
