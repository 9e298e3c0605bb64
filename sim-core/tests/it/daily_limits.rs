//! Daily limits (requests and tokens per day): each day admits exactly its
//! cap, the rest are refused with a 429 until the next day.

use sim_core::api::{ClientPolicy, LimitStyle, Limiter, RateLimits};
use sim_core::presets;
use sim_core::scenario::{Arrival, Scenario};

const DAY_NS: u64 = 86_400 * 1_000_000_000;

fn limits(rpd: u64, tpd: u64) -> RateLimits {
    RateLimits {
        style: LimitStyle::OpenAi,
        rpm: 10_000,
        tpm: 10_000_000,
        output_tpm: 0,
        rpd,
        tpd,
        max_concurrent: 0,
    }
}

#[test]
fn a_day_admits_its_cap_and_the_next_day_admits_again() {
    let mut l = Limiter::new(&limits(3, 0), 1);
    for s in 0..3 {
        assert!(l.try_admit(s * 1_000_000_000, 100, 50).is_ok());
    }
    // The fourth waits for the next day, to the nanosecond.
    let now = 3_000_000_000;
    assert_eq!(l.try_admit(now, 100, 50).err(), Some(DAY_NS - now));
    assert!(l.try_admit(DAY_NS, 100, 50).is_ok());
    // Tokens per day count as the TPM counts them (input + max_tokens here).
    let mut t = Limiter::new(&limits(0, 1000), 1);
    assert!(t.try_admit(0, 400, 100).is_ok());
    assert!(t.try_admit(1, 400, 100).is_ok());
    assert_eq!(t.try_admit(2, 1, 0).err(), Some(DAY_NS - 2));
    let why = t.fits(1200, 100).expect_err("larger than a day's tokens");
    assert!(why.contains("daily token limit of 1000"), "{why}");
    // The rate-limit tier multiplier multiplies the daily caps too.
    let mut m = Limiter::new(&limits(1, 0), 2);
    assert!(m.try_admit(0, 1, 1).is_ok() && m.try_admit(1, 1, 1).is_ok());
    assert!(m.try_admit(2, 1, 1).is_err());
}

/// `per_day` requests a day, evenly spaced, for `days` days, on the
/// frontier tier with a fail-fast client.
fn daily(per_day: u32, days: u32, rpd: u64) -> Scenario {
    let mut s = presets::launch_spike();
    s.workload.arrival = evenly(per_day * days, 86_400.0 / f64::from(per_day));
    s.duration_s = 86_400.0 * f64::from(days);
    s.limits.max_sim_time_s = s.duration_s + 3_600.0;
    let api = s.api.as_mut().expect("api");
    api.client = ClientPolicy::FailFast;
    api.routes.clear();
    api.default_backend = "frontier".into();
    api.tiers[0].limits.rpd = rpd;
    s
}

/// `n` requests of 500 tokens in and 100 out, `gap_s` apart from 0.
fn evenly(n: u32, gap_s: f64) -> Arrival {
    arriving((0..n).map(|i| f64::from(i) * gap_s))
}

/// Requests of 500 tokens in and 100 out, arriving at `times`.
fn arriving(times: impl Iterator<Item = f64>) -> Arrival {
    crate::trace_at(times, 500, 100)
}

#[test]
fn over_days_each_day_serves_exactly_its_cap() {
    let r = crate::run(&daily(700, 2, 500)).expect("valid");
    assert_eq!(r.requests.arrived, 1400);
    assert_eq!(r.requests.completed, 1000, "500 a day for two days");
    let api = r.api.expect("api");
    assert_eq!(api.failed_429, 400);
    assert_eq!(api.tiers[0].throttled_429, 400);
    // Under the cap nothing is refused, and a scenario without one runs as before.
    let under = crate::run(&daily(700, 2, 700)).expect("valid");
    let none = crate::run(&daily(700, 2, 0)).expect("valid");
    assert_eq!(under.requests.completed, 1400);
    assert_eq!(
        serde_json::to_string(&under).expect("json"),
        serde_json::to_string(&none).expect("json")
    );
}

#[test]
fn a_daily_cap_is_an_edit_and_is_checked_by_name() {
    let mut s = presets::launch_spike();
    sim_core::params::apply(&mut s, "api.rpd", "2000").expect("rpd");
    sim_core::params::apply(&mut s, "api.tpd", "5000000").expect("tpd");
    let t = &s.api.as_ref().expect("api").tiers[0].limits;
    assert_eq!((t.rpd, t.tpd), (2000, 5_000_000));
    let e = sim_core::params::apply(&mut s, "api.rpd", "-1").expect_err("negative");
    assert!(
        e.contains("api.rpd") || e.contains("≥ 0") || e.contains("0"),
        "{e}"
    );
    // A scenario without daily caps serialises as before (old links unchanged).
    let plain = serde_json::to_string(&presets::launch_spike()).expect("json");
    assert!(!plain.contains("rpd") && !plain.contains("tpd"));
}

/// Requests at `times` on the frontier tier, each taking 0.5 s to its first
/// token and 100 tokens at 100 tok/s after it (about 1.5 s in all), with at
/// most `cap` at once.
fn at_once(times: &[f64], cap: u64, client: ClientPolicy) -> Scenario {
    let mut s = daily(1, 1, 0);
    s.workload.arrival = arriving(times.iter().copied());
    s.duration_s = times.last().copied().unwrap_or(0.0) + 1.0;
    let api = s.api.as_mut().expect("api");
    api.client = client;
    let t = &mut api.tiers[0];
    t.ttft_s = sim_core::dist::Dist::Fixed { value: 0.5 };
    t.output_tokens_per_s = sim_core::dist::Dist::Fixed { value: 100.0 };
    t.limits.max_concurrent = cap;
    s
}

#[test]
fn a_tier_holding_its_most_requests_refuses_one_more() {
    // One a second, each still running when the next arrives: with one at
    // a time, every other one is refused; two at a time hold them all.
    let each_second: Vec<f64> = (0..10).map(f64::from).collect();
    let r = crate::run(&at_once(&each_second, 1, ClientPolicy::FailFast)).expect("valid");
    assert_eq!(r.requests.completed, 5);
    assert_eq!(r.api.expect("api").failed_429, 5);
    let two = crate::run(&at_once(&each_second, 2, ClientPolicy::FailFast)).expect("valid");
    assert_eq!(two.requests.completed, 10);
    // Pairs arriving together every 4 s: one of each is refused, and the
    // SDK's retries (a second apart) get it through once the first is done.
    let pairs: Vec<f64> = (0..10).map(|i| f64::from(i / 2 * 4)).collect();
    let fail_fast = crate::run(&at_once(&pairs, 1, ClientPolicy::FailFast)).expect("valid");
    assert_eq!(fail_fast.requests.completed, 5);
    let retried = crate::run(&at_once(
        &pairs,
        1,
        ClientPolicy::SdkRetries { max_retries: 2 },
    ))
    .expect("valid");
    assert_eq!(retried.requests.completed, 10);
    let api = retried.api.expect("api");
    assert_eq!(
        api.tiers[0].throttled_429, 10,
        "each second of a pair refused twice"
    );
    assert!(retried.overall.ttft.max_ms.expect("ttft") >= 2_000.0);
}
