//! vLLM's async scheduling: the scheduler forms each pass while the one
//! before it runs, so a request reaching a busy engine joins the pass after
//! the next. It costs time to first token (about one pass), never GPU time.

use sim_core::physics::ServingSoftware;
use sim_core::scenario::Arrival;
use sim_core::{Scenario, presets};

fn vllm_chatbot(rate: f64, async_scheduling: Option<bool>) -> Scenario {
    let mut s = presets::chatbot_h100();
    s.serving.software = ServingSoftware::Vllm;
    s.serving.replicas = 1;
    s.workload.arrival = Arrival::Poisson { rate_per_s: rate };
    s.serving.async_scheduling = async_scheduling;
    s
}

fn mean(v: Option<f64>) -> f64 {
    v.expect("a mean")
}

#[test]
fn a_busy_engine_adds_about_one_pass_to_ttft_and_nothing_to_the_time_per_token() {
    let on = sim_core::run_scenario(vllm_chatbot(4.0, None)).expect("runs");
    let off = sim_core::run_scenario(vllm_chatbot(4.0, Some(false))).expect("runs");
    let pass = mean(on.overall.tpot.mean_ms);
    let extra = mean(on.overall.ttft.mean_ms) - mean(off.overall.ttft.mean_ms);
    assert!(
        (0.5 * pass..=1.5 * pass).contains(&extra),
        "TTFT +{extra:.2} ms against a pass of {pass:.2} ms"
    );
    let tpot_off = mean(off.overall.tpot.mean_ms);
    assert!(
        (pass / tpot_off - 1.0).abs() < 0.02,
        "time per token {pass:.3} vs {tpot_off:.3} ms"
    );
    // The GPU does the same work: the same requests finish.
    assert_eq!(on.overall.completed, off.overall.completed);
}

#[test]
fn a_request_that_finds_the_engine_idle_starts_at_once() {
    // At one request a minute nearly every request finds the engine idle.
    let on = sim_core::run_scenario(vllm_chatbot(1.0 / 60.0, None)).expect("runs");
    let off = sim_core::run_scenario(vllm_chatbot(1.0 / 60.0, Some(false))).expect("runs");
    assert_eq!(on.overall.ttft.p50_ms, off.overall.ttft.p50_ms);
}

#[test]
fn the_setting_is_vllm_s_on_by_default_and_refused_where_nothing_models_it() {
    let s = vllm_chatbot(4.0, None);
    assert!(s.serving.async_scheduling_setting());
    let mut trt = presets::chatbot_h100();
    trt.serving.software = ServingSoftware::TensorrtLlm;
    assert!(!trt.serving.async_scheduling_setting());
    trt.serving.async_scheduling = Some(true);
    let e = trt.validate().expect_err("not modelled").to_string();
    assert!(e.contains("serving.async_scheduling"), "{e}");
    // Off travels in a share link and back.
    let off = vllm_chatbot(4.0, Some(false));
    let back = sim_core::link::decode(&sim_core::link::encode(&off)).expect("decodes");
    assert_eq!(back.serving.async_scheduling, Some(false));
}
