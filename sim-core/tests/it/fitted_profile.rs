//! A user's fitted profile in a scenario (`serving.profile`): it times the
//! run in place of the software's constants, is validated field by field,
//! travels in a share link, and says where it may be trusted.

use sim_core::physics::ServingSoftware;
use sim_core::physics::{FittedProfile, Gpu, Model, Validated};
use sim_core::{Scenario, presets};

/// vLLM's own constants as a fitted profile, validated on the chatbot's setup.
fn vllm_as_fitted() -> FittedProfile {
    FittedProfile::from_vllm(
        "mine",
        Validated {
            source: "a test".into(),
            gpu: Gpu::H100,
            model: Model::Llama31_8b,
            tp: 1,
            tokens_per_s: 1e6,
            error_pct: [3.0, 2.0, 4.0],
        },
    )
}

fn chatbot() -> Scenario {
    let mut s = presets::chatbot_h100();
    s.serving.software = ServingSoftware::Vllm;
    s
}

#[test]
fn a_profile_equal_to_vllm_s_runs_bit_for_bit_as_vllm() {
    let plain = sim_core::run_scenario(chatbot()).expect("runs");
    let mut s = chatbot();
    s.serving.fitted_profile = Some(Box::new(vllm_as_fitted()));
    let fitted = sim_core::run_scenario(s.clone()).expect("runs");
    assert_eq!(plain, fitted);
    // A slower profile is slower: the profile, not the software, times it.
    let mut slow = vllm_as_fitted();
    slow.costs.step_ns *= 4;
    s.serving.fitted_profile = Some(Box::new(slow));
    let slower = sim_core::run_scenario(s).expect("runs");
    assert!(
        slower.overall.tpot.mean_ms > plain.overall.tpot.mean_ms,
        "{:?} vs {:?}",
        slower.overall.tpot.mean_ms,
        plain.overall.tpot.mean_ms
    );
}

#[test]
fn a_profile_out_of_range_or_on_other_software_is_refused_by_field() {
    let mut s = chatbot();
    let mut p = vllm_as_fitted();
    p.costs.compute_decode = 1.5;
    p.non_torch_bytes = -1.0;
    s.serving.fitted_profile = Some(Box::new(p));
    let e = s.clone().validate().expect_err("out of range").to_string();
    assert!(
        e.contains("serving.profile.costs.compute_decode must be 0.05..=0.85, got 1.5"),
        "{e}"
    );
    assert!(e.contains("serving.profile.non_torch_bytes must be"), "{e}");
    s.serving.fitted_profile = Some(Box::new(vllm_as_fitted()));
    s.serving.software = ServingSoftware::TensorrtLlm;
    let e = s.validate().expect_err("not vLLM").to_string();
    assert!(e.contains("serving.software must be \"vllm\""), "{e}");
    // A file name reaches sim-core only through the CLI, which inlines it.
    let mut doc = serde_json::to_value(chatbot()).expect("json");
    doc["serving"]["profile"] = "mine.json".into();
    let e = Scenario::from_json(&doc.to_string())
        .expect_err("a file name")
        .to_string();
    assert!(
        e.contains("serving.profile: a file name is read by the CLI"),
        "{e}"
    );
}

#[test]
fn a_fitted_profile_travels_in_the_share_link() {
    let mut s = chatbot();
    s.serving.fitted_profile = Some(Box::new(vllm_as_fitted()));
    let link = sim_core::link::encode(&s);
    let back = sim_core::link::decode(&link).expect("decodes").into_inner();
    assert_eq!(back.serving.fitted_profile, s.serving.fitted_profile);
}

#[test]
fn trust_is_validated_on_the_fitted_setup_and_an_estimate_elsewhere() {
    let mut s = chatbot();
    s.serving.fitted_profile = Some(Box::new(vllm_as_fitted()));
    let load = s.offered_tokens_per_s_per_replica();
    assert!(load > 0.0);
    let t = s.serving.profile_statement(load);
    assert_eq!(t.name, "mine (your own)");
    assert!(
        t.trust
            .starts_with("Trust: validated on your own run: TTFT 3 %"),
        "{}",
        t.trust
    );
    s.serving.gpu = Gpu::B200;
    s.serving.gpus_per_replica = 2;
    let t = s.serving.profile_statement(load).trust;
    assert!(t.starts_with("Trust: an estimate"), "{t}");
    assert!(
        t.contains("GPU B200 (fitted on H100 SXM)")
            && t.contains("2 GPUs per replica (fitted on 1)"),
        "{t}"
    );
    // Beyond a fifth over the load it was fitted at.
    let mut s = chatbot();
    let mut p = vllm_as_fitted();
    p.validated.tokens_per_s = load / 2.0;
    s.serving.fitted_profile = Some(Box::new(p));
    let t = s.serving.profile_statement(load).trust;
    assert!(t.contains("tokens/s per replica (fitted up to"), "{t}");
}
