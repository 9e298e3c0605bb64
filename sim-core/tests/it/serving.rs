//! What the real runs need: load stages, shared system prompts with automatic
//! prefix caching, multi-turn conversations, client timeouts — under the vLLM
//! profile.

use crate::run;
use sim_core::dist::Dist;
use sim_core::physics::ServingSoftware;
use sim_core::presets::chatbot_h100;
use sim_core::scenario::{Arrival, Conversation, Scenario, SharedPrefix, Stage};

fn vllm(mut s: Scenario) -> Scenario {
    s.serving.software = ServingSoftware::Vllm;
    s
}

fn shared(prompts: u32, tokens: u32, question: f64) -> Scenario {
    let mut s = vllm(chatbot_h100());
    s.duration_s = 120.0;
    s.workload.arrival = Arrival::Poisson { rate_per_s: 2.0 };
    let k = &mut s.workload.classes[0];
    k.input_tokens = Dist::Fixed { value: question };
    k.output_tokens = Dist::Fixed { value: 64.0 };
    k.shared_prefix = Some(SharedPrefix { prompts, tokens });
    s
}

#[test]
fn per_stage_counts_add_up_and_each_stage_runs_at_its_rate() {
    let mut s = vllm(chatbot_h100());
    s.duration_s = 400.0;
    s.workload.arrival = Arrival::Stages {
        stages: vec![
            Stage {
                rate_per_s: 2.0,
                duration_s: 200.0,
            },
            Stage {
                rate_per_s: 8.0,
                duration_s: 200.0,
            },
        ],
    };
    let r = run(&s).expect("valid");
    assert_eq!(r.stages.len(), 2);
    let per_stage: u64 = r.stages.iter().map(|st| st.completed).sum();
    assert_eq!(per_stage, r.requests.completed);
    assert_eq!((r.stages[0].start_s, r.stages[1].end_s), (0.0, 400.0));
    let rate = |i: usize| r.stages[i].completed as f64 / 200.0;
    assert!((rate(0) / 2.0 - 1.0).abs() < 0.15, "{}", rate(0));
    assert!((rate(1) / 8.0 - 1.0).abs() < 0.1, "{}", rate(1));
    assert!(
        r.stages[1].tpot.mean_ms > r.stages[0].tpot.mean_ms,
        "more load, bigger batches, slower steps"
    );
}

#[test]
fn one_shared_system_prompt_is_served_from_the_cache() {
    // 1,000-token system prompt, 200-token questions: all but the first
    // request (and the partial last block) find the system prompt cached.
    let r = run(&shared(1, 1000, 200.0)).expect("valid");
    let expected = (1000 / 16 * 16) as f64 / 1200.0;
    let hit = r.utilisation.prefix_cache_hit_rate;
    assert!(
        hit <= expected && hit > expected * 0.97,
        "{hit} vs {expected}"
    );
    // Many different prompts, each rarely reused, hit less.
    let many = run(&shared(500, 1000, 200.0)).expect("valid");
    assert!(many.utilisation.prefix_cache_hit_rate < hit / 2.0);
}

#[test]
fn a_cache_hit_never_makes_a_request_slower() {
    let on = shared(4, 2000, 300.0);
    let mut off = on.clone();
    off.serving.prefix_caching = Some(false);
    let (a, b) = (run(&on).expect("valid"), run(&off).expect("valid"));
    assert_eq!(b.utilisation.prefix_cache_hit_rate, 0.0);
    assert!(a.utilisation.prefix_cache_hit_rate > 0.5);
    for (got, without) in [
        (a.overall.ttft.p50_ms, b.overall.ttft.p50_ms),
        (a.overall.ttft.p99_ms, b.overall.ttft.p99_ms),
        (a.overall.ttft.max_ms, b.overall.ttft.max_ms),
        (a.overall.ttft.mean_ms, b.overall.ttft.mean_ms),
    ] {
        assert!(
            got <= without,
            "{got:?} with the cache, {without:?} without"
        );
    }
}

#[test]
fn eviction_under_memory_pressure_keeps_every_request_whole() {
    // Long shared prompts in a small cache: blocks are shared, evicted and
    // recomputed; the engine's assertions (KV use within capacity, no block in
    // use evicted) run throughout, and every answer comes out whole.
    let mut s = shared(50, 3000, 500.0);
    s.serving.gpu_memory_utilisation = 0.25;
    s.workload.arrival = Arrival::Poisson { rate_per_s: 6.0 };
    s.workload.classes[0].output_tokens = Dist::Fixed { value: 400.0 };
    let r = run(&s).expect("valid");
    assert!(r.complete && r.requests.completed == r.requests.arrived);
    assert!(
        r.utilisation.preemptions > 0,
        "the cache was under pressure"
    );
    assert!(r.utilisation.prefix_cache_hit_rate > 0.0);
    let out = r.throughput.output_tokens_per_s * r.sim_time_s;
    let series = r.series.output_tokens_per_s.iter().sum::<f64>() * r.series.window_s;
    assert!((series - out).abs() <= 1e-6 * out);
}

#[test]
fn a_conversation_resends_its_history_and_the_cache_shortens_later_turns() {
    let mut s = vllm(chatbot_h100());
    s.duration_s = 300.0;
    s.workload.arrival = Arrival::Poisson { rate_per_s: 0.5 };
    let k = &mut s.workload.classes[0];
    k.input_tokens = Dist::Fixed { value: 100.0 };
    k.output_tokens = Dist::Fixed { value: 300.0 };
    k.calls_per_task = 6;
    k.conversation = Some(Conversation {
        think_time_s: Dist::Fixed { value: 5.0 },
    });
    let r = run(&s).expect("valid");
    // Turn t's prompt is 100 + (t − 1) · 400 tokens; all but the new question
    // and the last partial block come from the cache.
    assert!(
        r.utilisation.prefix_cache_hit_rate > 0.7,
        "{}",
        r.utilisation.prefix_cache_hit_rate
    );
    let task_ms = r.overall.task_latency.mean_ms.expect("tasks");
    assert!(
        task_ms > 25_000.0,
        "five 5 s pauses between six turns: {task_ms} ms"
    );
    let mut off = s.clone();
    off.serving.prefix_caching = Some(false);
    let b = run(&off).expect("valid");
    assert!(r.overall.ttft.mean_ms < b.overall.ttft.mean_ms);
    assert!(b.throughput.input_tokens_per_s > 0.0);
}

#[test]
fn timed_out_requests_leave_and_free_what_they_held() {
    // Three times what one H100 serves, clients who give up after 5 s: the
    // queue stops growing, every answer that arrives came within the timeout,
    // and (the engine asserts it) a drained run returns every KV block.
    let mut s = vllm(chatbot_h100());
    s.duration_s = 60.0;
    s.workload.arrival = Arrival::Poisson { rate_per_s: 60.0 };
    s.workload.classes[0].timeout_s = Some(5.0);
    let r = run(&s).expect("valid");
    let c = &r.requests;
    assert!(c.timed_out > 100, "{c:?}");
    assert_eq!(c.arrived, c.completed + c.rejected + c.failed + c.timed_out);
    assert_eq!(c.in_flight, 0);
    let e2e_max = r.overall.e2e.max_ms.expect("completions");
    assert!(e2e_max <= 5000.0 + 2.0, "{e2e_max} ms");
    assert_eq!(r.overall.timed_out, c.timed_out);
    assert!(r.throughput.goodput_fraction.expect("arrivals") < 0.9);
}
