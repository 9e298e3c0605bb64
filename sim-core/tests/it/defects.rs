//! Regression tests, one per defect found by reading the engine and pushing its
//! inputs (issue "Correct under every valid input"): each failed before its fix.

use crate::{fixed_class, run, simulation};
use sim_core::Report;
use sim_core::dist::Dist;
use sim_core::presets::{self, chatbot_h100};
use sim_core::scenario::{Arrival, Batching, Limits, Scenario, ServiceModel, UserStep};

/// Output tokens in the windowed series (each window's rate × its width).
fn series_output_tokens(r: &Report) -> f64 {
    r.series.output_tokens_per_s.iter().sum::<f64>() * r.series.window_s
}

/// A small KV cache (low memory utilisation) under long answers: preemptions.
fn kv_pressure(batching: Batching) -> Scenario {
    let mut s = chatbot_h100();
    s.duration_s = 60.0;
    s.serving.gpu_memory_utilisation = 0.26;
    s.serving.batching = batching;
    s.workload.arrival = Arrival::Poisson { rate_per_s: 12.0 };
    s.workload.classes[0].output_tokens = Dist::LogNormal {
        median: 600.0,
        p90: 1000.0,
    };
    s
}

#[test]
fn preemption_keeps_decode_progress() {
    for batching in [
        Batching::ChunkedPrefill {
            max_num_seqs: 256,
            max_num_batched_tokens: 2048,
            chunk_tokens: 2048,
        },
        Batching::Continuous {
            max_num_seqs: 256,
            max_num_batched_tokens: 16_384,
        },
    ] {
        let r = run(&kv_pressure(batching.clone())).expect("valid");
        assert!(r.utilisation.preemptions > 100, "{batching:?}: KV pressure");
        assert!(r.complete && r.requests.completed == r.requests.arrived);
        // Every token counted in the series belongs to a completed request's
        // answer: none decoded twice, none skipped.
        let out = r.throughput.output_tokens_per_s * r.sim_time_s;
        let series = series_output_tokens(&r);
        assert!(
            (series - out).abs() <= 1e-6 * out,
            "{batching:?}: series {series} vs report {out} output tokens"
        );
    }
}

#[test]
fn a_stale_finish_entry_never_completes_a_newcomer() {
    // One long answer outgrows a tiny cache alone and is refused while
    // decoding; its slot goes to the next request, which must still produce
    // every one of its tokens.
    let mut s = chatbot_h100();
    s.duration_s = 30.0;
    s.serving.gpu_memory_utilisation = 0.23;
    s.workload.arrival = Arrival::Poisson { rate_per_s: 2.0 };
    s.workload.classes = vec![fixed_class(200, 400_000)];
    s.workload.classes[0].share = 1.0;
    let mut short = fixed_class(100, 50);
    short.name = "short".into();
    short.share = 9.0;
    s.workload.classes.push(short);
    let r = run(&s).expect("valid");
    assert!(r.per_class[0].rejected > 0, "the long answers are refused");
    assert!(r.per_class[1].completed > 0);
    let done_tokens = r.per_class[1].completed as f64 * 50.0;
    let out = r.throughput.output_tokens_per_s * r.sim_time_s;
    assert!((out - done_tokens).abs() < 1e-6 * done_tokens);
    assert!(
        r.per_class[1].tpot.max_ms.expect("tpot") > 0.0,
        "no short request finished instantly"
    );
}

#[test]
fn static_batching_reserves_kv_for_max_tokens() {
    // The server knows max_tokens, not the answer's length: a static batch
    // reserves prompt + max_tokens for every member.
    let mut s = chatbot_h100();
    s.duration_s = 10.0;
    s.serving.gpu_memory_utilisation = 0.35;
    s.serving.batching = Batching::Static {
        max_batch: 256,
        max_wait_ms: 200.0,
    };
    s.workload.arrival = Arrival::Poisson { rate_per_s: 200.0 };
    s.workload.classes = vec![fixed_class(100, 20)];
    s.workload.classes[0].max_tokens = 4000;
    let mut sim = simulation(&s).expect("valid");
    sim.record_trace(50);
    sim.advance_until(u64::MAX);
    let r = sim.report();
    let per_member_blocks = (100u64 + 4000).div_ceil(16);
    let fits = r.utilisation.kv_capacity_tokens / 16 / per_member_blocks;
    let largest = sim
        .trace()
        .expect("trace")
        .passes
        .iter()
        .map(|p| u64::from(p.prefill_seqs))
        .max()
        .expect("passes");
    assert!(
        largest <= fits,
        "a batch of {largest} reserved more than the {fits} that fit"
    );
}

#[test]
fn chunked_prefill_allocates_kv_per_chunk_and_can_preempt_prefills() {
    // Long prompts, answers of one token: nothing ever decodes, so only
    // prefilling sequences hold memory. Reserving whole prompts at admission
    // admits one prompt at a time; chunk by chunk, several start together, and
    // when memory runs out a prefilling sequence is preempted instead of
    // every prompt waiting on every other.
    let mut s = chatbot_h100();
    s.duration_s = 20.0;
    s.serving.gpu_memory_utilisation = 0.24;
    s.serving.batching = Batching::ChunkedPrefill {
        max_num_seqs: 64,
        max_num_batched_tokens: 2048,
        chunk_tokens: 512,
    };
    s.workload.arrival = Arrival::Poisson { rate_per_s: 3.0 };
    s.workload.classes = vec![fixed_class(8_000, 1)];
    let mut sim = simulation(&s).expect("valid");
    sim.record_trace(100);
    sim.advance_until(u64::MAX);
    let r = sim.report();
    let trace = sim.trace().expect("trace");
    let most_in_prefill = trace.passes.iter().map(|p| p.prefill_seqs).max();
    assert!(most_in_prefill >= Some(2), "{most_in_prefill:?}");
    assert!(r.complete && r.requests.completed == r.requests.arrived);
    assert!(r.utilisation.preemptions > 0, "prefills were preempted");
}

fn api_scenario(tier: impl FnOnce(&mut sim_core::api::ProviderTier)) -> Scenario {
    let mut s = presets::pay_for_speed();
    s.duration_s = 20.0;
    if let Some(a) = s.api.as_mut() {
        tier(&mut a.tiers[0]);
    }
    s
}

fn assert_times_are_sane(what: &str, r: &Report) {
    let end_ms = r.sim_time_s * 1000.0;
    for (name, l) in [
        ("ttft", &r.overall.ttft),
        ("e2e", &r.overall.e2e),
        ("tpot", &r.overall.tpot),
    ] {
        if let Some(m) = l.max_ms {
            assert!(
                m <= end_ms + 1e-6,
                "{what}: {name} max {m} ms > run {end_ms} ms"
            );
        }
    }
    if let (Some(t), Some(e)) = (r.overall.ttft.max_ms, r.overall.e2e.max_ms) {
        assert!(t <= e, "{what}: TTFT {t} above end-to-end {e}");
    }
    if !r.complete {
        assert!(!r.warnings.is_empty(), "{what}: a partial run says why");
    }
}

#[test]
fn simulated_time_never_wraps_around() {
    let slow_input = api_scenario(|t| t.input_tokens_per_s = 1e-8);
    let r = run(&slow_input).expect("valid");
    assert_times_are_sane("input speed 1e-8", &r);
    assert!(!r.complete, "requests that take 10¹⁰ s do not finish");
    let wide = Dist::LogNormal {
        median: 1e-300,
        p90: 3600.0,
    };
    let ttft = api_scenario(|t| t.ttft_s = wide.clone());
    assert_times_are_sane("lognormal TTFT", &run(&ttft).expect("valid"));
    let mut service = crate::textbook(
        1.0,
        1,
        sim_core::scenario::Router::RoundRobin,
        Batching::None,
        wide.clone(),
        100.0,
    );
    service.limits.max_sim_time_s = 1e6;
    assert_times_are_sane("lognormal service", &run(&service).expect("valid"));
    let mut think = presets::launch_spike();
    think.duration_s = 60.0;
    if let Arrival::ClosedLoop { think_time_s, .. } = &mut think.workload.arrival {
        *think_time_s = wide;
    }
    assert_times_are_sane("lognormal think time", &run(&think).expect("valid"));
    // A limit near u64::MAX is refused, not overflowed.
    let mut azure = presets::launch_spike();
    if let Some(a) = azure.api.as_mut() {
        a.tiers[0].limits.style = sim_core::api::LimitStyle::Azure;
        a.tiers[0].limits.tpm = u64::MAX - 3;
    }
    let err = azure.validate().expect_err("beyond the limit's bound");
    assert!(err.to_string().contains("limits.tpm"), "{err}");
}

#[test]
fn idle_closed_loop_timers_never_extend_the_measured_window() {
    let s = presets::launch_spike();
    let r = run(&s).expect("valid");
    assert!(r.complete);
    // The window is the arrival window plus the drain of work in flight:
    // nothing ends after it, and idle users' think timers do not stretch it.
    let last_finish_s = r.overall.e2e.max_ms.expect("completions") / 1000.0 + s.duration_s;
    assert!(
        r.sim_time_s <= last_finish_s,
        "{} s measured, the last request ended by {last_finish_s} s",
        r.sim_time_s
    );
    let mut idle = presets::launch_spike();
    idle.duration_s = 120.0;
    if let Arrival::ClosedLoop { think_time_s, .. } = &mut idle.workload.arrival {
        *think_time_s = Dist::Fixed { value: 3000.0 };
    }
    let r = run(&idle).expect("valid");
    assert!(r.complete, "{:?}", r.warnings);
    assert!(r.sim_time_s < 200.0, "{} s", r.sim_time_s);
}

#[test]
fn ratios_stay_within_zero_and_one() {
    let mut s = chatbot_h100();
    s.duration_s = 30.0;
    s.workload.classes[0].input_tokens = Dist::LogNormal {
        median: 100.0,
        p90: 100_000.0,
    };
    s.workload.classes[0].max_tokens = 256;
    let r = run(&s).expect("valid");
    let limit = r.physical_limit.expect("physics");
    assert!(
        (0.0..=1.0).contains(&limit.achieved_fraction),
        "{}",
        limit.achieved_fraction
    );
    for max_events in [10, 333, 5_000, 77_777] {
        let mut partial = chatbot_h100();
        partial.limits = Limits {
            max_events,
            ..Limits::default()
        };
        let r = run(&partial).expect("valid");
        let busy = r.utilisation.gpu_busy_fraction;
        assert!(
            (0.0..=1.0).contains(&busy),
            "{max_events} events: busy {busy}"
        );
        if let Some(l) = r.physical_limit {
            assert!((0.0..=1.0).contains(&l.achieved_fraction));
        }
    }
}

#[test]
fn max_events_stops_the_run_at_the_cap() {
    // Zero think time and zero service time: work without end at t = 0.
    let mut s = crate::textbook(
        1.0,
        1,
        sim_core::scenario::Router::RoundRobin,
        Batching::None,
        Dist::Fixed { value: 0.0 },
        10.0,
    );
    s.workload.arrival = Arrival::ClosedLoop {
        users: vec![UserStep {
            at_s: 0.0,
            users: 50,
        }],
        think_time_s: Dist::Fixed { value: 0.0 },
    };
    s.serving.service = ServiceModel::Abstract {
        time_s: Dist::Fixed { value: 0.0 },
        join_in_progress: false,
    };
    s.limits.max_events = 100_000;
    let r = run(&s).expect("valid");
    assert!(r.events <= 100_000, "{} events", r.events);
    assert!(!r.complete && r.warnings.iter().any(|w| w.contains("max_events")));
}
