//! A provider's errors and incidents, against exact oracles: failures at
//! the error rate without retries and at its (k+1)-th power with k, every
//! attempt in an all-failing incident lost, an incident's slowdown, errors
//! never billed, and every request accounted for under any mix.

use crate::{assert_close, binomial, run};
use proptest::prelude::*;
use sim_core::api::{ClientPolicy, Incident, ProviderErrors};
use sim_core::dist::Dist;
use sim_core::presets;
use sim_core::scenario::{Arrival, Scenario, TraceRequest};

/// Pay-for-speed's voice answers (1,000 in, 200 out, 0.3 s to the first
/// token at 60 tokens/s) at 20 a second for 10 minutes, with `errors`.
fn voice(errors: ProviderErrors, client: ClientPolicy) -> Scenario {
    let mut s = presets::pay_for_speed();
    s.workload.arrival = Arrival::Poisson { rate_per_s: 20.0 };
    s.duration_s = 600.0;
    let api = s.api.as_mut().expect("api");
    api.client = client;
    api.tiers[0].errors = Some(errors);
    s
}

fn rate(p: f64) -> ProviderErrors {
    ProviderErrors {
        base_rate: p,
        incidents: Vec::new(),
        diurnal: Vec::new(),
    }
}

#[test]
fn without_retries_a_request_fails_at_the_error_rate_and_errors_are_free() {
    let r = run(&voice(rate(0.05), ClientPolicy::FailFast)).expect("valid");
    let a = r.api.as_ref().expect("api");
    let n = r.requests.arrived;
    binomial("failed", r.requests.failed, n, 0.05);
    assert_eq!(
        (a.failed_errors, a.errors),
        (r.requests.failed, r.requests.failed)
    );
    assert_eq!(a.tiers[0].errors, a.errors);
    assert_eq!(r.requests.completed + r.requests.failed, n);
    // Only the answered requests are billed: 1,000 in at $1/M, 200 out at $12/M.
    let per = (1000.0 * 1.0 + 200.0 * 12.0) / 1e6;
    assert_close("the bill", a.usd, r.requests.completed as f64 * per, 1e-9);
}

#[test]
fn with_k_retries_a_request_fails_at_the_rate_to_the_power_k_plus_one() {
    for k in [1, 2] {
        let p = 0.2;
        let r = run(&voice(rate(p), ClientPolicy::SdkRetries { max_retries: k })).expect("valid");
        let a = r.api.as_ref().expect("api");
        let n = r.requests.arrived;
        binomial(
            &format!("{k} retries"),
            r.requests.failed,
            n,
            p.powi(k as i32 + 1),
        );
        assert_eq!(a.failed_errors, r.requests.failed);
        assert_eq!(r.requests.completed + r.requests.failed, n);
        // Each attempt errs with p: attempts = requests + retries.
        assert_eq!(a.attempts, n + a.retries);
        binomial("errors per attempt", a.errors, a.attempts, p);
    }
}

#[test]
fn an_incident_loses_exactly_its_window_and_slows_what_it_answers() {
    // One request a second for 100 s; every attempt from 30 s to 50 s errs.
    let mut s = bad_spell(None);
    let r = run(&s).expect("valid");
    assert_eq!((r.requests.failed, r.requests.completed), (20, 80));
    // A slowdown ×3 instead: nothing fails, those 20 answers take 3 times
    // as long (0.3 s + 200 tokens at 60 a second, ×3).
    let i = &mut s.api.as_mut().expect("api").tiers[0]
        .errors
        .as_mut()
        .expect("errors")
        .incidents[0];
    (i.error_rate, i.latency_multiplier) = (0.0, 3.0);
    let r = run(&s).expect("valid");
    assert_eq!(r.requests.completed, 100);
    let normal = 300.0 + 200.0 / 60.0 * 1000.0;
    assert_close("p50", r.overall.e2e.p50_ms.expect("p50"), normal, 0.01);
    assert_close(
        "max",
        r.overall.e2e.max_ms.expect("max"),
        3.0 * normal,
        0.01,
    );
    // The page's text for incidents reads back.
    let text = "at 30 for 20: 100 %, ×1";
    assert_eq!(
        ProviderErrors::parse_incidents(text).expect("reads")[0],
        Incident {
            start_s: 30.0,
            duration_s: 20.0,
            error_rate: 1.0,
            latency_multiplier: 1.0
        }
    );
}

#[test]
fn an_error_free_tier_runs_as_it_did() {
    let plain = presets::pay_for_speed();
    let mut s = plain.clone();
    s.api.as_mut().expect("api").tiers[0].errors = Some(rate(0.0));
    assert_eq!(run(&s).expect("valid"), run(&plain).expect("valid"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn every_request_ends_once_whatever_the_errors_and_the_client(
        p in 0.0..1.0f64,
        start in 0.0..200.0f64,
        length in 1.0..200.0f64,
        burst in 0.0..1.0f64,
        slower in 1.0..5.0f64,
        client in 0..4usize,
        timeout in prop::option::of(1.0..30.0f64),
        fallback in any::<bool>(),
        breaker in prop::option::of((1u32..5, 1.0..60.0f64, 1.0..120.0f64)),
        seed in any::<u64>(),
    ) {
        let client = [
            ClientPolicy::FailFast,
            ClientPolicy::SdkRetries { max_retries: 2 },
            ClientPolicy::FullJitter { max_retries: 3, base_s: 0.5, cap_s: 8.0 },
            ClientPolicy::QUEUE,
        ][client].clone();
        let mut s = voice(
            ProviderErrors {
                base_rate: p,
                incidents: vec![Incident { start_s: start, duration_s: length, error_rate: burst, latency_multiplier: slower }],
                diurnal: Vec::new(),
            },
            client,
        );
        s.seed = seed;
        s.duration_s = 300.0;
        s.workload.classes[0].timeout_s = timeout;
        s.workload.classes[0].output_tokens = Dist::Fixed { value: 50.0 };
        s.api.as_mut().expect("api").fallback = fallback.then(|| "self-hosted".to_owned()).into_iter().collect();
        s.api.as_mut().expect("api").breaker = breaker.map(|(errors, window_s, cool_down_s)| {
            sim_core::api::Breaker { errors, window_s, cool_down_s }
        });
        let r = run(&s).expect("valid");
        let c = &r.requests;
        prop_assert!(r.complete);
        prop_assert_eq!(c.completed + c.failed + c.rejected + c.timed_out + c.in_flight, c.arrived);
        prop_assert_eq!(c.in_flight, 0);
        let a = r.api.as_ref().expect("api");
        prop_assert!(a.usd.is_finite() && a.usd >= 0.0);
        prop_assert!(a.failed_errors <= a.errors);
        prop_assert_eq!(&run(&s).expect("valid"), &r);
    }
}

/// The incident scenario: one request a second for 100 s, every attempt
/// from 30 s to 50 s failing, a fail-fast client, and `fallback`.
fn bad_spell(fallback: Option<&str>) -> Scenario {
    let mut s = voice(
        ProviderErrors {
            base_rate: 0.0,
            incidents: vec![Incident {
                start_s: 30.0,
                duration_s: 20.0,
                error_rate: 1.0,
                latency_multiplier: 1.0,
            }],
            diurnal: Vec::new(),
        },
        ClientPolicy::FailFast,
    );
    s.workload.arrival = each_second(100);
    s.duration_s = 100.0;
    s.api.as_mut().expect("api").fallback = fallback.map(str::to_owned).into_iter().collect();
    s
}

/// One voice request a second for `n` seconds.
fn each_second(n: u32) -> Arrival {
    crate::trace_at((0..n).map(f64::from), 1000, 200)
}

#[test]
fn a_breaker_never_sends_while_open_and_closes_on_its_trial() {
    // Three errors within 10 s open it for 100 s: the errors of the
    // requests sent at 30, 31 and 32 s come back 0.3 s later, and it stays
    // open until 132.3 s, so the requests of 33–132 s never reach the tier.
    // The one at 133 s is the trial; while it is out (its answer takes 3.6
    // s) those of 134–136 s are held back too. The bad spell is over, the
    // trial is answered, and the breaker closes.
    let mut s = bad_spell(Some("self-hosted"));
    s.workload.arrival = each_second(200);
    s.duration_s = 200.0;
    s.api.as_mut().expect("api").breaker = Some(sim_core::api::Breaker {
        errors: 3,
        window_s: 10.0,
        cool_down_s: 100.0,
    });
    let r = run(&s).expect("valid");
    let a = r.api.as_ref().expect("api");
    let t = &a.tiers[0];
    assert_eq!((r.requests.completed, r.requests.failed), (200, 0));
    assert_eq!(a.attempts, 33 + 1 + 63, "0–32 s, 133 s, then 137–199 s");
    assert_eq!((a.errors, a.fallbacks), (3, 3 + 100 + 3));
    assert_eq!((t.breaker_opened, t.breaker_open_s), (1, 100.0));
    // Without a fallback, what the open breaker holds back fails.
    s.api.as_mut().expect("api").fallback = Vec::new();
    let r = run(&s).expect("valid");
    let a = r.api.as_ref().expect("api");
    assert_eq!(
        (a.failed_breaker, a.failed_errors, r.requests.failed),
        (103, 3, 106)
    );
}

#[test]
fn a_fallback_takes_what_the_tier_gave_up_on_once() {
    // To the self-hosted fleet: the 20 requests of the bad spell are served
    // there, and none fails; the API bills the 80 it answered.
    let r = run(&bad_spell(Some("self-hosted"))).expect("valid");
    let a = r.api.as_ref().expect("api");
    assert_eq!((r.requests.completed, r.requests.failed), (100, 0));
    assert_eq!((a.fallbacks, a.errors, a.failed_errors), (20, 20, 0));
    assert_eq!((a.requests, a.tiers[0].completed), (100, 80));
    let per = (1000.0 * 1.0 + 200.0 * 12.0) / 1e6;
    assert_close("the API bill", a.usd, 80.0 * per, 1e-9);
    // To a second tier having the same bad spell: they fall back once, fail
    // there, and fail for good.
    let mut s = bad_spell(Some("backup"));
    let api = s.api.as_mut().expect("api");
    let mut backup = api.tiers[0].clone();
    backup.name = "backup".into();
    backup.fast = None;
    api.tiers.push(backup);
    let r = run(&s).expect("valid");
    let a = r.api.as_ref().expect("api");
    assert_eq!((r.requests.completed, r.requests.failed), (80, 20));
    assert_eq!((a.fallbacks, a.errors, a.failed_errors), (20, 40, 20));
    assert_eq!((a.tiers[1].requests, a.tiers[1].errors), (20, 20));
    // A fallback must name a backend.
    let err = run(&bad_spell(Some("nowhere")))
        .expect_err("refused")
        .to_string();
    assert!(
        err.contains(
            "api.fallback[0] must be \"self-hosted\", a pool or a tier name, got \"nowhere\""
        ),
        "{err}"
    );
}

#[test]
fn a_fallback_chain_takes_each_give_up_one_step_further_and_loses_none() {
    // The backup tier has the same bad spell: what the main tier gives up
    // on fails there too and goes on to the self-hosted fleet.
    let mut s = bad_spell(None);
    let api = s.api.as_mut().expect("api");
    let mut backup = api.tiers[0].clone();
    backup.name = "backup".into();
    backup.fast = None;
    api.tiers.push(backup);
    api.fallback = vec!["backup".into(), "self-hosted".into()];
    let r = run(&s).expect("valid");
    let a = r.api.as_ref().expect("api");
    assert_eq!((r.requests.completed, r.requests.failed), (100, 0));
    assert_eq!(a.fallbacks, 40);
    let steps: Vec<(&str, u64)> = a
        .fallbacks_by_step
        .iter()
        .map(|f| (f.to.as_str(), f.requests))
        .collect();
    assert_eq!(steps, [("backup", 20), ("self-hosted", 20)]);
    // At every tier, what arrived either completed or was given up on.
    for t in &a.tiers {
        assert_eq!(
            t.requests,
            t.completed + t.timed_out + t.gave_up,
            "{}",
            t.name
        );
    }
    assert_eq!((a.tiers[0].gave_up, a.tiers[1].gave_up), (20, 20));
    // Counted once where it began.
    assert_eq!(a.requests, 100);
    // A chain of one writes as the name it always was; a longer one as a list.
    let json = serde_json::to_string(&s).expect("serialises");
    assert!(
        json.contains(r#""fallback":["backup","self-hosted"]"#),
        "{json}"
    );
    let mut five = s.clone();
    five.api.as_mut().expect("api").fallback = vec!["backup".into(); 5];
    let err = run(&five).expect_err("refused").to_string();
    assert!(err.contains("at most 4 may follow one another"), "{err}");
}

#[test]
fn a_fleet_kept_to_fall_back_to_is_billed_whether_or_not_it_is_used() {
    // Without a fallback the API serves everything and no GPU is billed.
    let api_only = run(&bad_spell(None)).expect("valid");
    assert_eq!((api_only.cost.gpus, api_only.cost.fleet_usd), (0, 0.0));
    // A fleet kept for the tier's failures is provisioned for the whole run:
    // billed as its GPUs' hours, as much on a run where nothing falls back.
    let s = bad_spell(Some("self-hosted"));
    assert!(s.uses_fleet());
    let kept = run(&s).expect("valid");
    assert_eq!(
        kept.cost.gpus,
        s.serving.gpus_per_replica * s.serving.replicas
    );
    let hours = kept.sim_time_s / 3600.0;
    assert_close(
        "the fleet's bill",
        kept.cost.fleet_usd,
        f64::from(kept.cost.gpus) * kept.cost.usd_per_gpu_hour * hours,
        1e-9,
    );
    let mut calm = bad_spell(Some("self-hosted"));
    calm.api.as_mut().expect("api").tiers[0].errors = None;
    let unused = run(&calm).expect("valid");
    assert_eq!(unused.cost.gpus, kept.cost.gpus);
    assert!(unused.cost.fleet_usd > 0.0);
    assert!(kept.api.as_ref().expect("api").fallbacks > 0);
}

#[test]
fn a_slow_hour_slows_every_answer_in_it_by_its_multiplier() {
    // One request, alone, at `at_s`, on a tier whose first token takes a
    // fixed 0.5 s (plus its prompt's processing), slower from 1 to 2 a.m.
    let ttft_at = |at_s: f64, diurnal: &str| {
        let mut s = voice(ProviderErrors::default(), ClientPolicy::FailFast);
        s.workload.arrival = Arrival::Trace {
            requests: vec![TraceRequest {
                at_s,
                input_tokens: 1000,
                output_tokens: 200,
                class: 0,
                prefix_blocks: Vec::new(),
            }]
            .into(),
            prefix_block_tokens: None,
        };
        s.duration_s = at_s + 60.0;
        s.limits.max_sim_time_s = s.duration_s + 3_600.0;
        let api = s.api.as_mut().expect("api");
        api.tiers[0].ttft_s = Dist::Fixed { value: 0.5 };
        api.tiers[0].errors = None;
        sim_core::params::apply(&mut s, "api.diurnal", diurnal).expect("hours");
        let r = run(&s).expect("valid");
        assert_eq!(r.requests.completed, 1);
        r.overall.ttft.max_ms.expect("ttft")
    };
    let (night, peak) = (ttft_at(100.0, "1–2 h ×3"), ttft_at(3_700.0, "1–2 h ×3"));
    assert_close(
        "three times slower in the slow hour",
        peak,
        3.0 * night,
        2e-3,
    );
    // The next day's slow hour too, and none without the curve.
    assert_close(
        "a day later",
        ttft_at(86_400.0 + 3_700.0, "1–2 h ×3"),
        peak,
        2e-3,
    );
    assert_eq!(ttft_at(3_700.0, ""), night);
}
