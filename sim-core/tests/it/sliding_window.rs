//! Sliding-window attention (gpt-oss: every other layer attends to the last
//! 128 tokens): those layers hold a window of KV per sequence, not the whole
//! context, so the KV pool holds about twice the tokens and a long-context
//! step reads about half the cache.

use sim_core::physics::{BatchShape, Model, Precision, ServingSoftware, SlidingWindow};
use sim_core::{Scenario, presets};

fn gpt_oss(model: Model) -> Scenario {
    let mut s = presets::chatbot_h100();
    s.serving.software = ServingSoftware::Vllm;
    s.serving.model = model;
    s.serving.weights = Precision::Mxfp4;
    s
}

/// The same model with every layer keeping the whole context.
fn without_window(s: &Scenario) -> Scenario {
    let mut s = s.clone();
    let mut dims = s.serving.model.dims();
    dims.sliding_window = None;
    s.serving.model = Model::Custom(dims);
    s
}

#[test]
fn gpt_oss_keeps_the_window_in_half_its_layers_and_twice_the_tokens_in_its_pool() {
    let d = Model::GptOss120b.dims();
    assert_eq!(
        d.sliding_window,
        Some(SlidingWindow {
            window: 128,
            layers: 18
        })
    );
    // 18 full-context layers × K and V × 8 heads × 64 × 2 bytes.
    assert_eq!(d.kv_bytes_per_token(Precision::Bf16), 36_864.0);
    assert_eq!(d.sliding_kv_bytes_per_token(Precision::Bf16), 36_864.0);
    let s = gpt_oss(Model::GptOss120b).validate().expect("valid");
    let dep = s.deployment();
    // 128 tokens are 8 blocks, and one more is being written.
    assert_eq!(dep.sequence_kv_blocks(), 9);
    let all = without_window(&s).validate().expect("valid").deployment();
    let (sliding, whole) = (
        dep.kv_capacity_blocks().expect("fits"),
        all.kv_capacity_blocks().expect("fits"),
    );
    // Half the bytes a token: twice the blocks, give or take the rounding.
    assert!(
        (2 * whole..=2 * whole + 1).contains(&sliding),
        "{sliding} vs {whole}"
    );
}

#[test]
fn a_long_context_step_reads_the_window_in_the_sliding_layers() {
    let s = gpt_oss(Model::GptOss120b).validate().expect("valid");
    let timing = s.serving.profile().timing;
    let sliding = s.deployment().step_model_for(timing);
    let whole = without_window(&s)
        .validate()
        .expect("valid")
        .deployment()
        .step_model_for(timing);
    let shape = BatchShape {
        decode_seqs: 64,
        decode_context_tokens: 64 * 4_000,
        ..Default::default()
    };
    let kv = |m: &sim_core::physics::StepModel| {
        m.step(&shape).bytes
            - m.step(&BatchShape {
                decode_context_tokens: 64,
                ..shape
            })
            .bytes
    };
    // Full layers read 4,000 tokens a sequence; sliding ones 128 of them.
    let ratio = kv(&sliding) / kv(&whole);
    let expected = (4_000.0 + 128.0 - 2.0) / (2.0 * 4_000.0 - 2.0);
    assert!((ratio - expected).abs() < 0.01, "{ratio} vs {expected}");
    assert!(sliding.step(&shape).time_ns < whole.step(&shape).time_ns);
}

#[test]
fn a_gpt_oss_run_returns_every_block_and_a_model_all_sliding_is_refused() {
    // Debug builds assert that a drained run has returned every KV block:
    // the window's blocks are taken at admission and freed with the rest.
    let mut s = gpt_oss(Model::GptOss20b);
    s.duration_s = 60.0;
    let r = sim_core::run_scenario(s.clone()).expect("runs");
    assert_eq!(r.overall.completed, r.requests.arrived);
    let mut too_many = s.clone();
    if let Model::Custom(mut d) = without_window(&s).serving.model {
        d.sliding_window = Some(SlidingWindow {
            window: 128,
            layers: d.layers,
        });
        too_many.serving.model = Model::Custom(d);
    }
    let e = too_many
        .validate()
        .expect_err("every layer sliding")
        .to_string();
    assert!(
        e.contains("serving.model.custom.sliding_window.layers must be 1..=23"),
        "{e}"
    );
}
