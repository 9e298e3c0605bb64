//! Reasoning models: hidden thinking tokens before the visible answer.

use sim_core::dist::Dist;
use sim_core::presets::{chatbot_h100, pay_for_speed};
use sim_core::run_scenario;

fn thinking(mut s: sim_core::Scenario, tokens: f64) -> sim_core::Scenario {
    for k in &mut s.workload.classes {
        k.reasoning_tokens = Some(Dist::Fixed { value: tokens });
    }
    s
}

#[test]
fn the_first_visible_token_waits_for_the_thinking() {
    let mut base = chatbot_h100();
    base.duration_s = 120.0;
    for k in &mut base.workload.classes {
        k.output_tokens = Dist::Fixed { value: 100.0 };
        k.input_tokens = Dist::Fixed { value: 300.0 };
    }
    let plain = run_scenario(base.clone()).expect("valid");
    let r = run_scenario(thinking(base, 500.0)).expect("valid");
    let o = &r.overall;
    let (ttft, visible, think, tpot) = (
        o.ttft.mean_ms.expect("ttft"),
        o.first_visible.mean_ms.expect("visible"),
        o.thinking.mean_ms.expect("thinking"),
        o.tpot.mean_ms.expect("tpot"),
    );
    // The user's wait: at least the thinking tokens × the time per token.
    assert!(visible >= 500.0 * tpot * 0.999, "{visible} vs 500 × {tpot}");
    assert!(
        (visible - (ttft + think)).abs() < 0.01 * visible,
        "{visible} {ttft} {think}"
    );
    assert_eq!(o.thinking.count, r.requests.completed);
    // Every request generates its thinking: 600 tokens each, billed and
    // counted as output, holding KV and batch slots meanwhile.
    let per_request = r.throughput.output_tokens_per_s / r.throughput.requests_per_s;
    assert!((per_request - 600.0).abs() < 1.0, "{per_request}");
    assert!(r.utilisation.mean_batch_size > plain.utilisation.mean_batch_size * 2.0);
    assert!(r.utilisation.kv_use_peak > plain.utilisation.kv_use_peak);
    // Without reasoning the visible token is the first token.
    assert_eq!(plain.overall.first_visible, plain.overall.ttft);
    assert_eq!(plain.overall.thinking.count, 0);
    assert!(plain.series.first_visible_p50_ms.is_empty());
    assert!(!r.series.first_visible_p50_ms.is_empty());
    // Thinking draws from its own stream: arrivals do not move.
    assert_eq!(r.requests.arrived, plain.requests.arrived);
}

#[test]
fn an_api_bills_the_thinking_as_output() {
    let s = pay_for_speed();
    let plain = run_scenario(s.clone()).expect("valid");
    let r = run_scenario(thinking(s, 400.0)).expect("valid");
    // 1,000 in at $1/M and 200 (+400 thinking) out at $12/M.
    let per =
        |rep: &sim_core::Report| rep.api.as_ref().expect("api").usd / rep.requests.completed as f64;
    assert!((per(&plain) - (1000.0 * 1.0 + 200.0 * 12.0) / 1e6).abs() < 1e-9);
    assert!((per(&r) - (1000.0 * 1.0 + 600.0 * 12.0) / 1e6).abs() < 1e-9);
    // The cost-vs-load comparison prices a request the way the run bills it.
    let thinking_s = thinking(pay_for_speed(), 400.0);
    let tier = &thinking_s.api.as_ref().expect("api").tiers[0];
    let priced = sim_core::compare::api_usd_per_request(&thinking_s, tier);
    assert!((priced - per(&r)).abs() < 1e-9, "{priced} vs {}", per(&r));
    // At 60 tokens/s the thinking takes about 400 / 60 s before the first
    // word: 400 × the time per output token.
    let think = r.overall.thinking.mean_ms.expect("thinking");
    let tpot = r.overall.tpot.mean_ms.expect("tpot");
    assert!(
        (think - 400.0 * tpot).abs() < 0.01 * think,
        "{think} vs 400 × {tpot}"
    );
    assert!(
        (think / (400.0 / 60.0 * 1000.0) - 1.0).abs() < 0.01,
        "{think}"
    );
}

#[test]
fn the_thinking_agent_preset_says_what_its_run_shows() {
    let r = run_scenario(sim_core::presets::thinking_agent()).expect("valid");
    let class = |name: &str| {
        r.per_class
            .iter()
            .find(|k| k.name == name)
            .expect("class")
            .clone()
    };
    let (reason, instant) = (class("reasoning model"), class("instant model"));
    let p50 = |s: &sim_core::report::LatencyStats| s.p50_ms.expect("p50");
    // "its first visible word comes after about 5.7 s (median)"
    assert!((5_200.0..6_200.0).contains(&p50(&reason.first_visible)));
    // "the instant model answers in about 0.5 s"
    assert!((400.0..650.0).contains(&p50(&instant.first_visible)));
    // High output speed nonetheless: 5 ms a token against 12.5.
    assert!(p50(&reason.tpot) < 0.5 * p50(&instant.tpot));
    // "about 2.9 minutes … against about 1 minute"
    let minutes = |k: &sim_core::report::ClassReport| p50(&k.task_latency) / 60_000.0;
    assert!(
        (2.6..3.2).contains(&minutes(&reason)),
        "{}",
        minutes(&reason)
    );
    assert!(
        (0.9..1.15).contains(&minutes(&instant)),
        "{}",
        minutes(&instant)
    );
    // "each call costs about 3 times as much"
    let per_call = |k: &sim_core::report::ClassReport| k.api_usd / k.completed as f64;
    let ratio = per_call(&reason) / per_call(&instant);
    assert!((2.6..3.6).contains(&ratio), "{ratio}");
}
