//! Hosted APIs: the seed's launch story and "pay for speed", with numbers.

use crate::assert_close;
use crate::run;
use sim_core::Report;
use sim_core::api::{ClientPolicy, Route};
use sim_core::presets::{self, launch_spike, launch_spike_queued};
use sim_core::scenario::{Arrival, Scenario};

fn go(s: &Scenario) -> Report {
    run(s).expect("valid scenario")
}

fn failure_rate(r: &Report) -> f64 {
    r.requests.failed as f64 / r.requests.arrived as f64
}

fn with_client(mut s: Scenario, client: ClientPolicy) -> Scenario {
    s.api.as_mut().expect("api").client = client;
    s
}

fn routed_short_to_small(mut s: Scenario) -> Scenario {
    s.api.as_mut().expect("api").routes = vec![Route {
        class: "short email".into(),
        backend: "small".into(),
        fast: false,
        flex: false,
    }];
    s
}

fn four_x(mut s: Scenario) -> Scenario {
    s.api.as_mut().expect("api").rate_limit_multiplier = 4;
    s
}

#[test]
fn fifty_users_run_clean() {
    let mut s = launch_spike();
    if let Arrival::ClosedLoop { users, .. } = &mut s.workload.arrival {
        users.truncate(1); // 50 users, no launch
    }
    let r = go(&s);
    assert!(r.requests.completed > 300);
    assert_eq!(r.requests.failed, 0);
    assert_eq!(r.api.as_ref().expect("api").throttled_429, 0);
}

#[test]
fn the_launch_turns_the_tpm_cap_into_errors_under_fail_fast() {
    let r = go(&launch_spike());
    let api = r.api.as_ref().expect("api");
    assert!(
        failure_rate(&r) > 0.20,
        "only {:.1} % failed",
        failure_rate(&r) * 100.0
    );
    assert_eq!(api.failed_429, r.requests.failed);
    assert_eq!(api.attempts_per_request, 1.0, "fail-fast never retries");
    // Long threads carry the big token counts: they fail most.
    let long = &r.per_class[1];
    assert!(long.failed as f64 / (long.failed + long.completed) as f64 > 0.4);
    assert!(
        r.series.throttled_per_s.iter().take(100).all(|&x| x == 0.0),
        "no 429 before the launch"
    );
    assert!(
        r.series.throttled_per_s.iter().any(|&x| x > 5.0),
        "429s after it"
    );
}

#[test]
fn sdk_retries_amplify_traffic_but_do_not_save_the_day() {
    let plain = go(&launch_spike());
    let sdk = go(&with_client(
        launch_spike(),
        ClientPolicy::SdkRetries { max_retries: 2 },
    ));
    let api = sdk.api.as_ref().expect("api");
    assert!(
        api.attempts_per_request > 1.5,
        "amplification {}",
        api.attempts_per_request
    );
    assert!(api.retries > 10_000);
    assert!(
        failure_rate(&sdk) > 0.15,
        "retries cannot beat a sustained overload"
    );
    assert!(failure_rate(&sdk) < failure_rate(&plain));
}

#[test]
fn a_client_queue_turns_failures_into_waiting() {
    let fail_fast = go(&launch_spike());
    let queued = go(&launch_spike_queued());
    assert_eq!(queued.requests.failed, 0);
    assert_eq!(queued.requests.rejected, 0);
    assert_eq!(
        queued.api.as_ref().expect("api").throttled_429,
        0,
        "a queued client never sends what the limits refuse"
    );
    let wait_s = queued.overall.queue_wait.mean_ms.expect("waits") / 1000.0;
    assert!(wait_s > 60.0, "mean wait {wait_s:.0} s");
    assert!(queued.overall.e2e.p99_ms > fail_fast.overall.e2e.p99_ms.map(|x| 10.0 * x));
}

#[test]
fn a_four_times_rate_limit_tier_cuts_the_wait() {
    let queued = go(&launch_spike_queued());
    let tier4 = go(&four_x(launch_spike_queued()));
    let (w1, w4) = (
        queued.overall.queue_wait.mean_ms.expect("waits"),
        tier4.overall.queue_wait.mean_ms.expect("waits"),
    );
    assert!(w4 < w1 / 100.0, "wait {w1:.0} ms → {w4:.0} ms");
    assert_eq!(tier4.requests.failed + tier4.requests.rejected, 0);
    assert!(
        tier4.requests.completed as f64 > 1.5 * queued.requests.completed as f64,
        "more users get served"
    );
}

#[test]
fn routing_short_emails_to_the_small_model_cuts_cost_and_429s() {
    let base = go(&launch_spike());
    let routed = go(&routed_short_to_small(launch_spike()));
    let (t0, t1) = (
        base.api.as_ref().expect("api").throttled_429,
        routed.api.as_ref().expect("api").throttled_429,
    );
    assert!((t1 as f64) < 0.5 * t0 as f64, "429s {t0} → {t1}");
    assert_eq!(
        routed.api.as_ref().expect("api").tiers[1].throttled_429,
        0,
        "the small model has room"
    );
    // Compare spend where everyone is served: a 4× tier with a queue.
    let all = go(&four_x(launch_spike_queued()));
    let all_routed = go(&four_x(routed_short_to_small(launch_spike_queued())));
    let (c0, c1) = (all.cost.usd_per_month, all_routed.cost.usd_per_month);
    assert!(c1 < 0.8 * c0, "monthly ${c0:.0} → ${c1:.0}");
    assert!(
        all_routed.per_class[0].api_usd < 0.2 * all.per_class[0].api_usd,
        "short emails got cheap"
    );
    assert_eq!(all.cost.gpus, 0, "an unused fleet is not billed");
}

#[test]
fn paying_for_speed_adds_nine_thousand_a_month_and_reads_an_answer_in_one_second() {
    let slow = go(&presets::pay_for_speed());
    let fast = go(&presets::pay_for_speed_fast());
    assert_close(
        "monthly bill at 60 tok/s",
        slow.cost.usd_per_month,
        22_500.0,
        0.03,
    );
    assert_close(
        "extra for 200 tok/s",
        fast.cost.usd_per_month - slow.cost.usd_per_month,
        9_000.0,
        0.05,
    );
    assert_close(
        "fast premium on the same requests",
        fast.cost.api_usd / slow.cost.api_usd,
        1.4,
        1e-9,
    );
    let read = |r: &Report| {
        (r.overall.e2e.mean_ms.expect("e2e") - r.overall.ttft.mean_ms.expect("ttft")) / 1000.0
    };
    assert_close(
        "read a 200-token answer at 60 tok/s",
        read(&slow),
        3.333,
        0.01,
    );
    assert_close("read it at 200 tok/s", read(&fast), 1.0, 0.01);
}

#[test]
fn an_unbounded_prompt_larger_than_the_limit_fails_once_with_a_warning() {
    let mut s = launch_spike();
    s.api.as_mut().expect("api").tiers[0].limits.tpm = 8_000;
    s.workload.arrival = Arrival::Poisson { rate_per_s: 1.0 };
    s = with_client(s, ClientPolicy::SdkRetries { max_retries: 5 });
    let r = go(&s);
    let api = r.api.as_ref().expect("api");
    assert!(
        api.failed_too_large > 0,
        "some long threads exceed 8,000 tokens"
    );
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("can never fit the rate limits")),
        "{:?}",
        r.warnings
    );
    assert_eq!(
        r.requests.arrived,
        r.requests.completed + r.requests.failed + r.requests.rejected
    );
}

#[test]
fn a_bounded_request_larger_than_the_limit_is_a_validation_error() {
    let mut s = presets::pay_for_speed();
    s.api.as_mut().expect("api").tiers[0].limits.tpm = 1_000;
    let err = s.validate().expect_err("1,300 tokens cannot fit 1,000 TPM");
    assert!(
        err.problems[0].contains(
            "can never be admitted by tier \"voice-llm\": 1300 tokens exceed the TPM limit of 1000"
        ),
        "{err}"
    );
}

#[test]
fn api_scenarios_are_deterministic_and_conserve_requests() {
    let s = with_client(
        launch_spike(),
        ClientPolicy::FullJitter {
            max_retries: 3,
            base_s: 1.0,
            cap_s: 30.0,
        },
    );
    let a = go(&s);
    assert_eq!(a, go(&s));
    assert_eq!(
        a.requests.arrived,
        a.requests.completed + a.requests.failed + a.requests.rejected + a.requests.in_flight
    );
    let mut sim = crate::simulation(&s).expect("valid");
    while !sim.advance_events(997) {
        let snap = sim.snapshot();
        assert_eq!(
            snap.arrived,
            snap.completed + snap.rejected + snap.failed + snap.waiting + snap.running
        );
    }
}

#[test]
fn a_listed_model_bills_every_token_at_its_list_price() {
    let mut s = presets::pay_for_speed();
    s.duration_s = 120.0;
    s.api.as_mut().expect("api").client = ClientPolicy::FailFast;
    let param = sim_core::params::find("api.price_list").expect("a parameter");
    param
        .set_text(&mut s, 0, "openai-gpt-5.4-mini")
        .expect("a listing");
    // The control reads back the listing the tier is priced at.
    assert_eq!(
        param.get_text(&s, 0).as_deref(),
        Some("openai-gpt-5.4-mini")
    );
    let r = go(&s);
    let t = &r.api.as_ref().expect("api").tiers[0];
    assert!(t.completed > 0 && t.timed_out == 0);
    // $0.75 a million in, $4.50 out, token for token.
    assert_close(
        "input",
        t.bill.input_usd,
        t.input_tokens as f64 * 0.75 / 1e6,
        1e-9,
    );
    assert_close(
        "output",
        t.bill.output_usd,
        t.output_tokens as f64 * 4.50 / 1e6,
        1e-9,
    );
    // A key not listed is refused, naming the ones that are.
    let e = param.set_text(&mut s, 0, "gpt-9").expect_err("not listed");
    assert!(
        e.contains("api.price_list") && e.contains("anthropic-sonnet-5.5"),
        "{e}"
    );
}
