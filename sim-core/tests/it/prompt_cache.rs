//! Prompt caching at a provider tier, against exact oracles: the bill token
//! for token, a prefix's lifetime, the write price, and Anthropic's input
//! TPM that leaves cached input out.

use crate::{assert_close, run};
use sim_core::api::{ClientPolicy, LimitStyle, PromptCache};
use sim_core::dist::Dist;
use sim_core::presets;
use sim_core::report::TierReport;
use sim_core::scenario::{Arrival, Scenario, SharedPrefix, TraceRequest};

/// One class of 100-token questions after a 2,048-token system prompt, 50
/// tokens out, on the frontier tier ($2.50 in, $10 out, 0.5 s to the first
/// token, 20,000 prompt tokens/s) with `cache`.
fn cached(cache: Option<PromptCache>, style: LimitStyle) -> Scenario {
    let mut s = presets::launch_spike();
    s.workload.classes.truncate(1);
    let k = &mut s.workload.classes[0];
    k.share = 1.0;
    k.input_tokens = Dist::Fixed { value: 100.0 };
    k.output_tokens = Dist::Fixed { value: 50.0 };
    k.shared_prefix = Some(SharedPrefix {
        prompts: 1,
        tokens: 2048,
    });
    k.calls_per_task = 1;
    k.timeout_s = None;
    s.workload.arrival = Arrival::Poisson { rate_per_s: 2.0 };
    s.duration_s = 600.0;
    let api = s.api.as_mut().expect("api");
    api.routes.clear();
    api.default_backend = "frontier".into();
    api.client = ClientPolicy::QUEUE;
    let tier = &mut api.tiers[0];
    assert_eq!(tier.name, "frontier");
    tier.ttft_s = Dist::Fixed { value: 0.5 };
    tier.limits.style = style;
    tier.limits.output_tpm = 10_000_000;
    tier.prompt_cache = cache;
    s
}

fn frontier(s: &Scenario) -> TierReport {
    let r = run(s).expect("valid");
    assert_eq!(
        r.requests.arrived, r.requests.completed,
        "every request completes"
    );
    r.api.expect("api").tiers[0].clone()
}

/// Requests of 2,148 tokens whose first 2,048 are four hashed 512-token
/// blocks, arriving at `at_s`.
fn hashed_at(mut s: Scenario, at_s: &[f64]) -> Scenario {
    s.workload.classes[0].shared_prefix = None;
    let requests: Vec<TraceRequest> = at_s
        .iter()
        .map(|&at_s| TraceRequest {
            at_s,
            input_tokens: 2148,
            output_tokens: 50,
            class: 0,
            prefix_blocks: vec![11, 12, 13, 14],
        })
        .collect();
    s.workload.arrival = Arrival::Trace {
        requests: requests.into(),
        prefix_block_tokens: Some(512),
    };
    s.duration_s = at_s.last().copied().unwrap_or(0.0) + 1.0;
    s
}

#[test]
fn a_cached_token_is_billed_at_the_cached_price_over_a_whole_run() {
    let plain = frontier(&cached(None, LimitStyle::OpenAi));
    let t = frontier(&cached(
        Some(PromptCache::automatic(0.25)),
        LimitStyle::OpenAi,
    ));
    // The same requests, whatever the cache.
    assert_eq!(
        (t.input_tokens, t.output_tokens),
        (plain.input_tokens, plain.output_tokens)
    );
    assert!(t.completed > 1000, "{}", t.completed);
    // Every hit is the whole 2,048-token system prompt (a multiple of 128);
    // only the requests sent before the first one's prompt was processed miss.
    assert_eq!(t.cached_input_tokens, 2048 * t.cache_hits);
    assert!(
        t.cache_hits + 5 >= t.completed,
        "{} of {}",
        t.cache_hits,
        t.completed
    );
    assert_eq!(
        t.cache_write_tokens, 0,
        "an automatic cache bills no writes"
    );
    let (input, cached, output) = (
        t.input_tokens as f64,
        t.cached_input_tokens as f64,
        t.output_tokens as f64,
    );
    let want = ((input - cached) * 2.5 + cached * 0.25 + output * 10.0) / 1e6;
    assert_close("the bill", t.usd, want, 1e-12);
    assert_close(
        "without the cache",
        plain.usd,
        (input * 2.5 + output * 10.0) / 1e6,
        1e-12,
    );
    assert_close(
        "the saving",
        t.usd_saved_by_cache,
        cached * 2.25 / 1e6,
        1e-12,
    );
    assert_close(
        "the saving is the difference",
        plain.usd - t.usd,
        t.usd_saved_by_cache,
        1e-9,
    );
    assert_eq!(plain.cache_hits + plain.cached_input_tokens, 0);
}

#[test]
fn a_hit_skips_the_cached_prompt_processing() {
    let plain = run(&cached(None, LimitStyle::OpenAi)).expect("valid");
    let hit = run(&cached(
        Some(PromptCache::automatic(0.25)),
        LimitStyle::OpenAi,
    ))
    .expect("valid");
    // 0.5 s, then 2,148 or (on a hit) 100 prompt tokens at 20,000 a second.
    assert_close(
        "TTFT without",
        plain.overall.ttft.p50_ms.expect("TTFT"),
        500.0 + 2148.0 / 20.0,
        0.01,
    );
    assert_close(
        "TTFT on a hit",
        hit.overall.ttft.p50_ms.expect("TTFT"),
        500.0 + 100.0 / 20.0,
        0.01,
    );
}

#[test]
fn a_cached_prefix_lives_its_lifetime_after_its_last_use() {
    let base = cached(Some(PromptCache::automatic(0.25)), LimitStyle::OpenAi);
    // Written by the first (usable 0.61 s later), read at 1 s and 100 s:
    // it lives until 400 s. At 400.5 s it has expired: a miss, which writes
    // it again for the request at 401.5 s.
    let t = frontier(&hashed_at(base.clone(), &[0.0, 1.0, 100.0, 400.5, 401.5]));
    assert_eq!((t.cache_hits, t.cached_input_tokens), (3, 3 * 2048));
    // Read at 399.5 s, just inside its lifetime, it lives on.
    let t = frontier(&hashed_at(base.clone(), &[0.0, 1.0, 100.0, 399.5, 401.5]));
    assert_eq!(t.cache_hits, 4);
    // A second request sent before the first's prompt is processed misses.
    let t = frontier(&hashed_at(base, &[0.0, 0.3, 1.0]));
    assert_eq!(t.cache_hits, 1);
}

#[test]
fn an_explicit_cache_bills_what_it_writes_at_the_write_price() {
    let base = cached(Some(PromptCache::explicit(2.5, false)), LimitStyle::OpenAi);
    let t = frontier(&hashed_at(base, &[0.0, 1.0, 100.0, 400.5, 401.5]));
    // Two writes of the 2,048 hashed tokens, three reads.
    assert_eq!(t.cache_write_tokens, 2 * 2048);
    assert_eq!(t.cached_input_tokens, 3 * 2048);
    let want =
        (5.0 * 100.0 * 2.5 + 2.0 * 2048.0 * 2.5 * 1.25 + 3.0 * 2048.0 * 0.25 + 5.0 * 50.0 * 10.0)
            / 1e6;
    assert_close("the bill", t.usd, want, 1e-12);
    // The saving nets the writes' premium against the reads' discount.
    let saved = (3.0 * 2048.0 * 2.25 - 2.0 * 2048.0 * 2.5 * 0.25) / 1e6;
    assert_close("the saving", t.usd_saved_by_cache, saved, 1e-12);
    // The bill by line: each line its tokens at its price, the lines the whole.
    let b = t.bill;
    assert_close(
        "uncached input",
        b.input_usd,
        5.0 * 100.0 * 2.5 / 1e6,
        1e-12,
    );
    assert_close(
        "writes",
        b.cache_write_usd,
        2.0 * 2048.0 * 2.5 * 1.25 / 1e6,
        1e-12,
    );
    assert_close(
        "reads",
        b.cached_input_usd,
        3.0 * 2048.0 * 0.25 / 1e6,
        1e-12,
    );
    assert_close("output", b.output_usd, 5.0 * 50.0 * 10.0 / 1e6, 1e-12);
    assert_close("the lines add up", b.total(), t.usd, 1e-12);
    // A one-hour cache keeps it past 400 s: one write, four reads.
    let hour = cached(Some(PromptCache::explicit(2.5, true)), LimitStyle::OpenAi);
    let t = frontier(&hashed_at(hour, &[0.0, 1.0, 100.0, 400.5, 401.5]));
    assert_eq!((t.cache_write_tokens, t.cache_hits), (2048, 4));
}

#[test]
fn anthropic_leaves_cached_input_out_of_its_input_tpm() {
    // 10 prompts a second of 2,148 tokens: 1.3 M input tokens a minute,
    // against a limit of 300,000.
    let tight = |cache: Option<PromptCache>, style| {
        let mut s = cached(cache, style);
        s.workload.arrival = Arrival::Poisson { rate_per_s: 10.0 };
        s.duration_s = 300.0;
        let api = s.api.as_mut().expect("api");
        api.client = ClientPolicy::FailFast;
        api.tiers[0].limits.tpm = 300_000;
        api.tiers[0].limits.rpm = 100_000;
        let r = run(&s).expect("valid");
        r.requests.failed as f64 / r.requests.arrived as f64
    };
    let explicit = Some(PromptCache::explicit(3.0, false));
    let anthropic_cached = tight(explicit.clone(), LimitStyle::Anthropic);
    let anthropic_plain = tight(None, LimitStyle::Anthropic);
    let openai_cached = tight(explicit, LimitStyle::OpenAi);
    assert!(anthropic_cached < 0.01, "{anthropic_cached}");
    assert!(anthropic_plain > 0.5, "{anthropic_plain}");
    // OpenAI counts cached input towards its TPM: the cache does not help.
    assert!(openai_cached > 0.5, "{openai_cached}");
}

#[test]
fn a_cached_run_repeats_itself_and_a_bad_cache_is_refused_by_name() {
    let s = cached(
        Some(PromptCache::explicit(2.5, true)),
        LimitStyle::Anthropic,
    );
    assert_eq!(run(&s).expect("valid"), run(&s).expect("valid"));
    let mut bad = s.clone();
    let c = bad.api.as_mut().expect("api").tiers[0]
        .prompt_cache
        .as_mut()
        .expect("cache");
    c.usd_per_mtok_cached = 3.0;
    c.ttl_s = 0.0;
    let err = run(&bad).expect_err("refused").to_string();
    assert!(
        err.contains("api.tiers[0].prompt_cache.usd_per_mtok_cached must not exceed the tier's input price (2.5), got 3"),
        "{err}"
    );
    assert!(
        err.contains("api.tiers[0].prompt_cache.ttl_s must be > 0"),
        "{err}"
    );
}

/// The cost-against-load comparison's price of a task (a formula) against
/// the bill the run adds up, request by request.
#[test]
fn the_priced_task_agrees_with_the_simulated_bill_at_every_load() {
    use sim_core::scenario::Conversation;
    let caches = [
        (None, "no cache"),
        (Some(PromptCache::automatic(0.25)), "automatic"),
        (Some(PromptCache::explicit(2.5, false)), "explicit"),
    ];
    for ((cache, label), turns) in caches.iter().flat_map(|c| [(c, 1), (c, 3)]) {
        // Three-turn conversations (or single calls) after one of four
        // 2,048-token system prompts, the user thinking two minutes on
        // average between turns.
        let mut s = cached(cache.clone(), LimitStyle::OpenAi);
        let k = &mut s.workload.classes[0];
        k.calls_per_task = turns;
        k.input_tokens = Dist::Fixed { value: 200.0 };
        k.output_tokens = Dist::Fixed { value: 100.0 };
        k.shared_prefix = Some(SharedPrefix {
            prompts: 4,
            tokens: 2048,
        });
        k.conversation = (turns > 1).then_some(Conversation {
            think_time_s: Dist::Exponential { mean: 120.0 },
        });
        let api = s.api.as_mut().expect("api");
        api.tiers[0].limits.tpm = 100_000_000;
        api.tiers[0].limits.rpm = 1_000_000;
        let tier = api.tiers[0].clone();
        for tasks_per_s in [0.003, 0.03, 0.3] {
            s.workload.arrival = Arrival::Poisson {
                rate_per_s: tasks_per_s,
            };
            s.duration_s = 1500.0 / tasks_per_s;
            s.limits.max_sim_time_s = 2.0 * s.duration_s;
            let r = run(&s).expect("valid");
            let a = r.api.as_ref().expect("api");
            let tasks = r.requests.completed as f64 / f64::from(turns);
            let simulated = a.usd / tasks;
            let priced = sim_core::compare::price::usd_per_task(&s, &tier, tasks_per_s);
            assert_close(
                &format!("{label}, {turns} turns, at {tasks_per_s} tasks/s"),
                priced,
                simulated,
                0.02,
            );
        }
    }
}

#[test]
fn every_tier_bills_by_line_and_the_lines_add_up_to_its_spend() {
    // The preset with its cache on and the busy hours' 429s and retries, then
    // the same sent to its batch tier: each tier's lines are its spend.
    let mut s = presets::prompt_caching();
    s.duration_s = 600.0;
    sim_core::params::apply(&mut s, "api.prompt_cache", "explicit_5m").expect("cache");
    sim_core::params::apply(&mut s, "api.batch", "on").expect("batch");
    let live = run(&s).expect("valid").api.expect("api").tiers[0].clone();
    sim_core::params::apply(&mut s, "backend[support chat]", "assistant-batch").expect("route");
    let batch = run(&s).expect("valid").api.expect("api").tiers[1].clone();
    assert!(live.bill.cached_input_usd > 0.0 && live.bill.cache_write_usd > 0.0);
    assert!(batch.requests > 0 && batch.bill.output_usd > 0.0);
    for t in [&live, &batch] {
        assert_close(&t.name, t.bill.total(), t.usd, 1e-9);
    }
}
