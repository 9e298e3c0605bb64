//! Speculative decoding: a proposer drafts k tokens a sequence, each decode
//! step verifies them and keeps the accepted ones and one of its own.

use crate::{assert_close, fixed_class, run};
use sim_core::presets;
use sim_core::scenario::{Arrival, Scenario, Speculative, SpeculativeMethod, UserStep};

/// The default chatbot's server (Llama-3.1-8B on one H100, vLLM) with `users`
/// clients sending back to back (a batch of about `users`), prompts of 512
/// tokens and answers of 256.
fn batch(users: u32, spec: Option<Speculative>) -> Scenario {
    let mut s = presets::chatbot_h100();
    s.workload.arrival = Arrival::ClosedLoop {
        users: vec![UserStep { at_s: 0.0, users }],
        think_time_s: sim_core::dist::Dist::Fixed { value: 0.0 },
    };
    s.workload.classes = vec![fixed_class(512, 256)];
    s.duration_s = 60.0;
    s.serving.speculative = spec;
    s
}

fn eagle(tokens: u32, acceptance: f64) -> Option<Speculative> {
    Some(Speculative {
        method: SpeculativeMethod::Eagle,
        tokens,
        acceptance,
    })
}

fn tpot(s: &Scenario) -> f64 {
    let r = run(s).expect("valid");
    assert!(r.complete, "{:?}", r.warnings);
    r.overall.tpot.mean_ms.expect("tokens")
}

#[test]
fn with_nothing_accepted_speculation_is_never_faster_it_pays_the_drafts() {
    for users in [1, 16, 128] {
        let plain = tpot(&batch(users, None));
        let spec = tpot(&batch(users, eagle(3, 0.0)));
        assert!(
            spec > plain,
            "{users} users: α = 0 gives {spec} ms a token against {plain} plain"
        );
        let r = run(&batch(users, eagle(3, 0.0))).unwrap();
        assert_eq!(
            r.speculative.unwrap().tokens_per_step,
            Some(1.0),
            "nothing accepted: one token a step"
        );
    }
}

#[test]
fn as_acceptance_nears_one_a_step_yields_nearly_k_plus_one_tokens() {
    for k in [1, 3, 5] {
        let r = run(&batch(4, eagle(k, 0.99))).unwrap();
        let s = r.speculative.unwrap();
        let want = sim_core::scenario::expected_tokens(0.99, k);
        assert!(want > f64::from(k) + 0.8, "{want}");
        let got = s.tokens_per_step.unwrap();
        assert_close(&format!("k = {k}: tokens a step"), got, want, 0.02);
        assert!(got <= f64::from(k) + 1.0);
    }
    // And in between, the drawn steps yield what (1 − α^(k+1)) / (1 − α) says.
    let r = run(&batch(16, eagle(3, 0.7))).unwrap();
    assert_close(
        "α = 0.7, k = 3",
        r.speculative.unwrap().tokens_per_step.unwrap(),
        (1.0 - 0.7f64.powi(4)) / 0.3,
        0.02,
    );
}

#[test]
fn the_gain_is_large_at_batch_one_and_shrinks_as_batches_grow() {
    // The known shape: at batch 1 a pass reads the weights once whatever it
    // computes, so verifying four tokens costs about one; as the batch grows
    // the verify pass becomes compute-bound and the gain shrinks.
    let speedup = |users| tpot(&batch(users, None)) / tpot(&batch(users, eagle(3, 0.7)));
    let gains: Vec<f64> = [1, 16, 64, 256].into_iter().map(speedup).collect();
    assert!(gains[0] > 1.8, "batch 1: {gains:?}");
    assert!(
        gains.windows(2).all(|w| w[1] <= w[0] * 1.01),
        "shrinking: {gains:?}"
    );
    assert!(gains[3] < 0.7 * gains[0], "batch 256: {gains:?}");
}

#[test]
fn the_proposer_takes_memory_from_the_kv_cache() {
    let kv = |spec| run(&batch(1, spec)).unwrap().utilisation.kv_capacity_tokens;
    let (plain, head) = (kv(None), kv(eagle(3, 0.7)));
    assert!(head < plain, "{head} against {plain}");
    // A draft model holds more than a one-layer head.
    let mut big = batch(1, None);
    big.serving.model = sim_core::physics::Model::Llama31_70b;
    big.serving.gpus_per_replica = 4;
    let with = |m| {
        let mut s = big.clone();
        s.serving.speculative = Some(Speculative {
            method: m,
            tokens: 4,
            acceptance: 0.7,
        });
        run(&s).unwrap().utilisation.kv_capacity_tokens
    };
    let draft = with(SpeculativeMethod::Draft {
        model: sim_core::physics::Model::Llama31_8b,
    });
    assert!(
        draft < with(SpeculativeMethod::Eagle),
        "an 8B draft holds more than a head"
    );
}

#[test]
fn a_speculating_fleet_under_kv_pressure_preempts_and_returns_every_block() {
    // Long answers on a cache too small for them all: sequences are
    // preempted and recomputed; every request completes with its own
    // length, and the drained run holds no block (debug-asserted).
    let mut s = batch(200, eagle(4, 0.6));
    s.workload.classes = vec![fixed_class(3000, 2000)];
    s.serving.gpu_memory_utilisation = 0.3;
    s.duration_s = 30.0;
    let r = run(&s).expect("valid");
    assert!(r.complete, "{:?}", r.warnings);
    assert!(r.utilisation.preemptions > 0, "the cache is tight");
    let n = r.requests;
    assert_eq!(n.arrived, n.completed + n.rejected + n.failed + n.timed_out);
    // Every answer is its full length: the output tokens/s is 2000 a request.
    assert_close(
        "tokens per completed request",
        r.throughput.output_tokens_per_s * r.sim_time_s / n.completed as f64,
        2000.0,
        1e-6,
    );
}

#[test]
fn deepseek_v3_mtp_speed_up_matches_the_published_figure() {
    // DeepSeek-V3's technical report (§5.4.3): its MTP module's second
    // token is accepted 85–90 % of the time, and decoding runs 1.8× the
    // tokens per second. On 8 × H200 in FP8 with many sequences at once
    // (the report's serving runs large batches), k = 1 at α 0.85–0.9:
    // within 20 % (docs/speculative.md).
    let ds = |spec: Option<Speculative>| {
        let mut s = batch(256, spec);
        s.serving.model = sim_core::physics::Model::DeepseekV3;
        s.serving.gpu = sim_core::physics::Gpu::H200;
        s.serving.gpus_per_replica = 8;
        s.serving.weights = sim_core::physics::Precision::Fp8;
        s.serving.batching = sim_core::scenario::Batching::ChunkedPrefill {
            max_num_seqs: 1024,
            max_num_batched_tokens: 8192,
            chunk_tokens: 8192,
        };
        s.workload.classes = vec![fixed_class(1000, 1000)];
        s.duration_s = 60.0;
        let r = run(&s).unwrap();
        r.throughput.output_tokens_per_s
    };
    let plain = ds(None);
    for alpha in [0.85, 0.9] {
        let mtp = ds(Some(Speculative {
            method: SpeculativeMethod::Mtp,
            tokens: 1,
            acceptance: alpha,
        }));
        assert_close(
            &format!("MTP at α {alpha}: speed-up"),
            mtp / plain,
            1.8,
            0.2,
        );
    }
}

#[test]
fn invalid_speculation_says_what_is_wrong() {
    let problems = |s: Scenario| {
        s.validate()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    assert_eq!(problems(batch(1, eagle(3, 0.7))), "");
    assert!(problems(batch(1, eagle(0, 0.7))).contains("speculative.tokens must be 1..=8"));
    assert!(problems(batch(1, eagle(3, 1.0))).contains("speculative.acceptance must be 0..=0.99"));
    let mut s = batch(1, None);
    s.serving.speculative = Some(Speculative {
        method: SpeculativeMethod::Draft {
            model: sim_core::physics::Model::Qwen25_7b,
        },
        tokens: 3,
        acceptance: 0.7,
    });
    assert!(problems(s.clone()).contains("share the target's vocabulary"));
    s.serving.speculative = Some(Speculative {
        method: SpeculativeMethod::Draft {
            model: sim_core::physics::Model::Llama31_70b,
        },
        tokens: 3,
        acceptance: 0.7,
    });
    assert!(problems(s).contains("is not smaller than"));
    let split = batch(1, eagle(3, 0.7)).disaggregated(1, 1, sim_core::scenario::KvLink::Nvlink);
    assert!(
        problems(split)
            .contains("speculative decoding on a disaggregated pool is not modelled yet")
    );
}

#[test]
fn a_speculating_scenario_round_trips_a_link_and_reruns_identically() {
    let s = batch(8, eagle(3, 0.75));
    let back = sim_core::link::decode(&sim_core::link::encode(&s)).expect("decodes");
    assert_eq!(&*back, &s);
    assert_eq!(
        serde_json::to_string(&sim_core::run(&back)).unwrap(),
        serde_json::to_string(&run(&s).unwrap()).unwrap()
    );
}

#[test]
fn the_planner_plans_with_speculation_and_its_bounds_allow_for_it() {
    // A 3 ms p99 TPOT target for Llama-3.1-8B on H100s: plain, only eight
    // GPUs tensor-parallel keep each token that fast; an EAGLE head's
    // k + 1 tokens a step let far fewer do it (the pruning bounds allow for
    // them: one sequence at the datasheet peak, divided by k + 1).
    let mut s = presets::chatbot_h100();
    s.duration_s = 120.0;
    let slo = sim_core::plan::PlanSlo {
        tpot_p99_ms: 3.0,
        ..sim_core::plan::PlanSlo::for_scenario(&s)
    };
    let space = sim_core::plan::Space {
        gpus: vec![sim_core::physics::Gpu::H100],
        ..sim_core::plan::Space::default()
    };
    let cheapest = |s: &Scenario| {
        sim_core::plan::plan(s, slo, &space)
            .feasible
            .first()
            .map(|e| e.usd_per_month)
            .expect("a setup meets the targets")
    };
    let plain = cheapest(&s);
    s.serving.speculative = eagle(3, 0.7);
    let spec = cheapest(&s);
    assert!(
        spec < 0.5 * plain,
        "with EAGLE {spec} against {plain} plain"
    );
}
