//! A tier's flex variant and its provisioned units, against exact oracles:
//! flex refusals at their rate without retries and at its (k+1)-th power
//! with k, more of them at the provider's slow hours, flex answers at half
//! price and twice the time; provisioned units billed by the hour whether
//! used or not, the requests they admit free of the rate limits and of the
//! per-token price, the rest billed as pay-as-you-go; every request
//! accounted for under any mix.

use crate::{assert_close, binomial, run};
use proptest::prelude::*;
use sim_core::api::{ClientPolicy, FlexVariant, ProviderErrors, Provisioned};
use sim_core::dist::Dist;
use sim_core::presets;
use sim_core::scenario::{Arrival, Scenario};

/// Pay-for-speed's voice answers (1,000 in, 200 out, 0.3 s to the first
/// token at 60 tokens/s, $1/M in and $12/M out) at 20 a second for 10
/// minutes, every one sent to the tier's flex variant.
fn flex(refusal_rate: f64, client: ClientPolicy) -> Scenario {
    let mut s = presets::pay_for_speed();
    s.workload.arrival = Arrival::Poisson { rate_per_s: 20.0 };
    s.duration_s = 600.0;
    let api = s.api.as_mut().expect("api");
    api.client = client;
    api.tiers[0].flex = Some(FlexVariant {
        refusal_rate,
        ..FlexVariant::OPENAI
    });
    api.route("voice answer".into(), "voice-llm+flex");
    s
}

#[test]
fn flex_refusals_fail_at_their_rate_and_at_its_power_with_retries() {
    let p = 0.2;
    let r = run(&flex(p, ClientPolicy::FailFast)).expect("valid");
    let a = r.api.as_ref().expect("api");
    let n = r.requests.arrived;
    binomial("failed fail-fast", r.requests.failed, n, p);
    assert_eq!(a.failed_429, r.requests.failed);
    assert_eq!(a.tiers[0].flex_refused, a.throttled_429);
    assert_eq!(r.requests.completed + r.requests.failed, n);
    for k in [1u32, 2] {
        let r = run(&flex(p, ClientPolicy::SdkRetries { max_retries: k })).expect("valid");
        let a = r.api.as_ref().expect("api");
        let n = r.requests.arrived;
        binomial(
            &format!("failed with {k} retries"),
            r.requests.failed,
            n,
            p.powi(k as i32 + 1),
        );
        // Each attempt is refused with p; a refusal is a 429 with no bill.
        assert_eq!(a.attempts, n + a.retries);
        binomial(
            "refusals per attempt",
            a.tiers[0].flex_refused,
            a.attempts,
            p,
        );
        assert_eq!(r.requests.completed + r.requests.failed, n);
    }
}

#[test]
fn flex_answers_cost_half_and_take_twice_as_long() {
    let flexed = run(&flex(0.0, ClientPolicy::FailFast)).expect("valid");
    let mut standard = flex(0.0, ClientPolicy::FailFast);
    standard.api.as_mut().expect("api").routes.clear();
    let standard = run(&standard).expect("valid");
    let (f, s) = (
        flexed.api.as_ref().expect("api"),
        standard.api.as_ref().expect("api"),
    );
    assert_eq!(flexed.requests.completed, standard.requests.completed);
    // Halving is exact in binary floating point, request by request.
    assert_eq!(f.usd, 0.5 * s.usd);
    assert_eq!(f.tiers[0].bill.output_usd, 0.5 * s.tiers[0].bill.output_usd);
    let per = (1000.0 * 1.0 + 200.0 * 12.0) / 1e6;
    assert_close(
        "the flex bill",
        f.usd,
        0.5 * per * flexed.requests.completed as f64,
        1e-9,
    );
    // 0.3 s + 1,000 / 50,000 s to the first token, 200 / 60 s after it.
    let mean = |r: &sim_core::Report, e2e: bool| {
        let stats = if e2e { &r.overall.e2e } else { &r.overall.ttft };
        stats.mean_ms.expect("answers")
    };
    let ttft = mean(&flexed, false);
    assert_close("flex TTFT", ttft, 2.0 * mean(&standard, false), 1e-6);
    assert_close("flex TTFT", ttft, 2.0 * 320.0, 1e-6);
    assert_close(
        "flex end to end",
        mean(&flexed, true),
        2.0 * (320.0 + 200.0 / 60.0 * 1e3),
        1e-6,
    );
}

#[test]
fn flex_refusals_grow_with_the_providers_slow_hours() {
    // Hours count from the run's start: the first hour ×3, the second as usual.
    let mut s = flex(0.1, ClientPolicy::FailFast);
    s.duration_s = 7_200.0;
    s.workload.arrival = Arrival::Poisson { rate_per_s: 2.0 };
    let errors = ProviderErrors {
        diurnal: ProviderErrors::parse_diurnal("0–1 h ×3").expect("parses"),
        ..ProviderErrors::default()
    };
    s.api.as_mut().expect("api").tiers[0].errors = Some(errors);
    let r = run(&s).expect("valid");
    let n = r.requests.arrived;
    // Half the arrivals in each hour: 30 % refused in the first, 10 % after.
    binomial(
        "refused over both hours",
        r.requests.failed,
        n,
        0.5 * 0.3 + 0.5 * 0.1,
    );
}

#[test]
fn a_routing_rule_sends_to_the_flex_service_by_its_key() {
    // The route alone, and a routing rule naming `voice-llm+flex` instead.
    let by_route = run(&flex(0.0, ClientPolicy::FailFast)).expect("valid");
    let mut s = flex(0.0, ClientPolicy::FailFast);
    s.api.as_mut().expect("api").routes.clear();
    s.routing = sim_core::params::parse_routing(r#"class "voice answer" -> voice-llm+flex"#)
        .expect("reads");
    let by_rule = run(&s).expect("valid");
    assert_eq!(by_rule.api, by_route.api);
    // A tier without a flex variant has no such key.
    s.api.as_mut().expect("api").tiers[0].flex = None;
    let err = run(&s).expect_err("refused").to_string();
    assert!(err.contains("voice-llm+flex"), "{err}");
}

#[test]
fn a_tier_without_services_runs_as_it_did() {
    let plain = presets::pay_for_speed();
    let mut s = plain.clone();
    // A flex variant nobody is sent to changes nothing.
    s.api.as_mut().expect("api").tiers[0].flex = Some(FlexVariant::OPENAI);
    let (a, b) = (run(&s).expect("valid"), run(&plain).expect("valid"));
    assert_eq!(a, b);
    let json = serde_json::to_string(&b).expect("serialises");
    assert!(
        !json.contains("provisioned") && !json.contains("flex_refused"),
        "reports without them keep their fields"
    );
}

/// The voice answers at 20 a second for 10 minutes on `units` provisioned
/// units of 60,000 tokens a minute ($3 a unit-hour), the tier's own limits
/// only 60 requests a minute, a fail-fast client.
fn provisioned(units: u32) -> Scenario {
    let mut s = presets::pay_for_speed();
    s.workload.arrival = Arrival::Poisson { rate_per_s: 20.0 };
    s.duration_s = 600.0;
    s.workload.classes[0].output_tokens = Dist::Fixed { value: 200.0 };
    let api = s.api.as_mut().expect("api");
    api.client = ClientPolicy::FailFast;
    api.tiers[0].limits.rpm = 60;
    api.tiers[0].provisioned = Some(Provisioned {
        units,
        tokens_per_minute_per_unit: 60_000,
        usd_per_unit_hour: 3.0,
    });
    s
}

#[test]
fn provisioned_units_are_billed_by_the_hour_and_skip_the_limits() {
    // 20 requests a second of 1,000 + max_tokens: 100 units hold them all.
    let r = run(&provisioned(100)).expect("valid");
    let a = r.api.as_ref().expect("api");
    let t = &a.tiers[0];
    assert_eq!(r.requests.failed, 0, "the 60 RPM limit never applied");
    assert_eq!(t.provisioned_requests, r.requests.arrived);
    // Only the units are billed: 100 × $3 an hour over the run.
    let secs = a.usd / (100.0 * 3.0 / 3600.0);
    assert!(
        (secs - r.sim_time_s).abs() < 1e-6 * secs,
        "{secs} s billed, {} simulated",
        r.sim_time_s
    );
    assert_eq!(t.bill.provisioned_usd, t.usd);
    assert_eq!(t.bill.input_usd + t.bill.output_usd, 0.0);
    assert_close(
        "a month of units",
        t.usd_per_month,
        100.0 * 3.0 * 730.0,
        1e-9,
    );
}

#[test]
fn what_the_units_cannot_hold_overflows_to_pay_as_you_go() {
    // One unit holds about 60,000 / 1,000-odd tokens: a request a second.
    let r = run(&provisioned(1)).expect("valid");
    let a = r.api.as_ref().expect("api");
    let t = &a.tiers[0];
    let n = r.requests.arrived;
    assert!(
        t.provisioned_requests > 0 && t.provisioned_requests < n / 5,
        "{} of {n}",
        t.provisioned_requests
    );
    // The overflow meets the tier's own 60 RPM, and a fail-fast client fails
    // the rest: every request ends once.
    assert_eq!(r.requests.completed + r.requests.failed, n);
    let paid = t.completed - t.provisioned_requests;
    let per = (1000.0 * 1.0 + 200.0 * 12.0) / 1e6;
    assert_close(
        "pay-as-you-go lines",
        t.bill.input_usd + t.bill.output_usd,
        paid as f64 * per,
        1e-9,
    );
    assert_close("the lines add up", t.bill.total(), t.usd, 1e-12);
    assert_close(
        "the units' line",
        t.bill.provisioned_usd,
        3.0 * r.sim_time_s / 3600.0,
        1e-9,
    );
}

/// The voice answers with a heavy-tailed time to the first token (median
/// 0.3 s, 90 % within 2 s) and, with `after_s`, hedged after that long.
fn hedged(after_s: Option<f64>) -> Scenario {
    let mut s = presets::pay_for_speed();
    s.workload.arrival = Arrival::Poisson { rate_per_s: 20.0 };
    s.duration_s = 600.0;
    let api = s.api.as_mut().expect("api");
    api.client = ClientPolicy::FailFast;
    api.tiers[0].ttft_s = Dist::LogNormal {
        median: 0.3,
        p90: 2.0,
    };
    api.hedge = after_s.map(sim_core::api::Hedge::after);
    s
}

#[test]
fn a_hedge_counts_once_cuts_the_tail_and_bills_the_cancelled_copy_its_prompt() {
    let plain = run(&hedged(None)).expect("valid");
    let r = run(&hedged(Some(0.5))).expect("valid");
    let a = r.api.as_ref().expect("api");
    let n = r.requests.arrived;
    // Every request answered once, whichever copy answered it.
    assert_eq!(r.requests.completed, n);
    assert_eq!(a.tiers[0].completed, n);
    assert!(
        a.hedges > n / 10 && a.hedges_won > 0 && a.hedges_won < a.hedges,
        "{} hedges, {} won, of {n}",
        a.hedges,
        a.hedges_won
    );
    assert_eq!(a.attempts, n + a.hedges);
    // Each answer is billed its prompt and output, each cancelled copy its
    // prompt alone: 1,000 in at $1/M, 200 out at $12/M.
    let (prompt, output) = (1000.0 * 1.0 / 1e6, 200.0 * 12.0 / 1e6);
    assert_close(
        "the bill",
        a.usd,
        n as f64 * (prompt + output) + a.hedges as f64 * prompt,
        1e-9,
    );
    assert_close(
        "the cancelled copies",
        a.usd_hedges_cancelled,
        a.hedges as f64 * prompt,
        1e-9,
    );
    assert_close("the lines add up", a.tiers[0].bill.total(), a.usd, 1e-12);
    // The tail of the time to the first token is cut.
    let p99 = |r: &sim_core::Report| r.overall.ttft.p99_ms.expect("answers");
    assert!(
        p99(&r) < 0.5 * p99(&plain),
        "p99 TTFT {} ms hedged, {} ms not",
        p99(&r),
        p99(&plain)
    );
    // Hedging after longer than any first token sends nothing.
    let late = run(&hedged(Some(3600.0))).expect("valid");
    assert_eq!(late.api.as_ref().expect("api").hedges, 0);
    assert_eq!(late.requests, plain.requests);
}

/// [`hedged`] after 0.5 s to a second tier, `backup`: its first token in
/// 0.1 s every time, at $2/M in and $20/M out.
fn hedged_to_backup() -> Scenario {
    let mut s = hedged(Some(0.5));
    let api = s.api.as_mut().expect("api");
    let mut backup = api.tiers[0].clone();
    backup.name = "backup".into();
    backup.ttft_s = Dist::Fixed { value: 0.1 };
    backup.usd_per_mtok_input = 2.0;
    backup.usd_per_mtok_output = 20.0;
    backup.fast = None;
    api.tiers.push(backup);
    api.hedge = Some(sim_core::api::Hedge {
        after_s: 0.5,
        to: Some("backup".into()),
    });
    s
}

#[test]
fn a_hedge_to_another_tier_moves_the_requests_it_wins_there_and_bills_each_tier_its_part() {
    let r = run(&hedged_to_backup()).expect("valid");
    let same = run(&hedged(Some(0.5))).expect("valid");
    let a = r.api.as_ref().expect("api");
    let n = r.requests.arrived;
    let (main, backup) = (&a.tiers[0], &a.tiers[1]);
    // Every request answered once, by one tier or the other.
    assert_eq!(r.requests.completed, n);
    assert_eq!(main.completed + backup.completed, n);
    assert!(
        a.hedges > n / 10 && a.hedges_won > a.hedges / 2,
        "{} hedges, {} won, of {n}",
        a.hedges,
        a.hedges_won
    );
    assert_eq!(a.attempts, n + a.hedges);
    // A request the copy won moves to the backup, and is counted there.
    assert_eq!(main.requests, n);
    assert_eq!(main.hedged_away, a.hedges_won);
    assert_eq!(main.requests, main.completed + main.hedged_away);
    assert_eq!(backup.requests, a.hedges_won);
    assert_eq!(backup.requests, backup.completed);
    // Each tier bills what it processed at its own prices: the main tier a
    // prompt for every request and the output of those it answered, the
    // backup a prompt for every copy and the output of those it answered.
    let (prompt, output) = (1000.0 * 1.0 / 1e6, 200.0 * 12.0 / 1e6);
    let (prompt_b, output_b) = (1000.0 * 2.0 / 1e6, 200.0 * 20.0 / 1e6);
    assert_close(
        "the main tier's bill",
        main.usd,
        n as f64 * prompt + main.completed as f64 * output,
        1e-9,
    );
    assert_close(
        "the backup's bill",
        backup.usd,
        a.hedges as f64 * prompt_b + backup.completed as f64 * output_b,
        1e-9,
    );
    let lost_copies = (a.hedges - a.hedges_won) as f64 * prompt_b;
    assert_close(
        "the cancelled attempts and copies",
        a.usd_hedges_cancelled,
        a.hedges_won as f64 * prompt + lost_copies,
        1e-9,
    );
    for t in [main, backup] {
        assert_close("the lines add up", t.bill.total(), t.usd, 1e-12);
    }
    // A copy at a tier that answers in 0.1 s cuts the tail below what a
    // copy at the same slow tier does.
    let p99 = |r: &sim_core::Report| r.overall.ttft.p99_ms.expect("answers");
    assert!(
        p99(&r) < 0.6 * p99(&same) && p99(&r) < 800.0,
        "p99 TTFT {} ms to the backup, {} ms to the same tier",
        p99(&r),
        p99(&same)
    );
}

#[test]
fn a_hedge_must_go_to_a_tier_that_exists_and_answers_in_time() {
    let mut s = hedged_to_backup();
    s.api
        .as_mut()
        .expect("api")
        .hedge
        .as_mut()
        .expect("hedge")
        .to = Some("nowhere".into());
    let e = s.check().expect_err("no such tier").problems;
    assert!(
        e.iter()
            .any(|p| p.contains("api.hedge.to") && p.contains("nowhere")),
        "{e:?}"
    );
    let mut s = hedged_to_backup();
    s.api.as_mut().expect("api").tiers[1].batch = Some(sim_core::api::BatchApi::day(1_000_000));
    let e = s.check().expect_err("a batch tier").problems;
    assert!(
        e.iter()
            .any(|p| p.contains("api.hedge.to") && p.contains("batch")),
        "{e:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn every_request_ends_once_whatever_the_services_and_the_client(
        refusal in 0.0..1.0f64,
        units in prop::option::of(1u32..20),
        share_flex in any::<bool>(),
        error_rate in 0.0..0.5f64,
        client_kind in 0..4usize,
        timeout in prop::option::of(1.0..30.0f64),
        fallback in any::<bool>(),
        hedge in prop::option::of(0.01..3.0f64),
        hedge_elsewhere in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let client = [
            ClientPolicy::FailFast,
            ClientPolicy::SdkRetries { max_retries: 2 },
            ClientPolicy::FullJitter { max_retries: 3, base_s: 0.5, cap_s: 8.0 },
            ClientPolicy::QUEUE,
        ][client_kind].clone();
        let mut s = flex(refusal, client);
        if !share_flex {
            s.api.as_mut().expect("api").routes.clear();
        }
        s.seed = seed;
        s.duration_s = 200.0;
        s.workload.classes[0].timeout_s = timeout;
        s.workload.classes[0].output_tokens = Dist::Fixed { value: 50.0 };
        let api = s.api.as_mut().expect("api");
        api.fallback = fallback.then(|| "self-hosted".to_owned()).into_iter().collect();
        api.tiers[0].limits.rpm = 300;
        api.tiers[0].errors = (error_rate > 0.0).then(|| ProviderErrors { base_rate: error_rate, ..ProviderErrors::default() });
        api.hedge = hedge.map(sim_core::api::Hedge::after);
        api.tiers[0].ttft_s = Dist::LogNormal { median: 0.3, p90: 2.0 };
        if hedge_elsewhere {
            // A second tier, as tight on requests, takes the copies.
            let mut backup = api.tiers[0].clone();
            backup.name = "backup".into();
            backup.ttft_s = Dist::LogNormal { median: 0.2, p90: 1.0 };
            api.tiers.push(backup);
            if let Some(h) = api.hedge.as_mut() {
                h.to = Some("backup".into());
            }
        }
        api.tiers[0].provisioned = units.map(|units| Provisioned { units, tokens_per_minute_per_unit: 30_000, usd_per_unit_hour: 2.0 });
        let r = run(&s).expect("valid");
        let c = &r.requests;
        prop_assert!(r.complete);
        prop_assert_eq!(c.completed + c.failed + c.rejected + c.timed_out + c.in_flight, c.arrived);
        prop_assert_eq!(c.in_flight, 0);
        let a = r.api.as_ref().expect("api");
        prop_assert!(a.usd.is_finite() && a.usd >= 0.0);
        for t in &a.tiers {
            prop_assert!((t.bill.total() - t.usd).abs() <= 1e-9 * t.usd.max(1.0));
            prop_assert!(t.flex_refused <= t.throttled_429);
            // What came to a tier completed, timed out, was given up on, or
            // moved to where its hedge answered it (or was turned away by
            // the client's queue, or timed out waiting to retry: counted
            // for the run, not the tier).
            let ended = t.completed + t.timed_out + t.gave_up + t.hedged_away;
            if client_kind == 3 || timeout.is_some() {
                prop_assert!(ended <= t.requests, "{}", t.name);
            } else {
                prop_assert_eq!(t.requests, ended, "{}", t.name);
            }
        }
        let moved: u64 = a.tiers.iter().map(|t| t.hedged_away).sum();
        prop_assert_eq!(moved, a.tiers.get(1).map_or(0, |b| b.requests));
        prop_assert_eq!(&run(&s).expect("valid"), &r);
    }
}
