//! Energy: the GPUs' power while up and running passes, joules per token,
//! and electricity in the bill.

use sim_core::physics::{CustomGpu, Gpu, Topology};
use sim_core::presets::chatbot_h100;
use sim_core::run_scenario;
use sim_core::scenario::Arrival;

fn at_rate(rate_per_s: f64) -> sim_core::Scenario {
    let mut s = chatbot_h100();
    s.duration_s = 120.0;
    s.workload.arrival = Arrival::Poisson { rate_per_s };
    s
}

#[test]
fn a_gpu_draws_between_idle_and_board_power_and_more_when_busier() {
    let power = Gpu::H100.spec().power.expect("the H100 has power figures");
    let light = run_scenario(at_rate(0.2)).expect("runs");
    let busy = run_scenario(at_rate(8.0)).expect("runs");
    let (l, b) = (light.energy.expect("energy"), busy.energy.expect("energy"));
    for e in [l, b] {
        assert!(
            e.mean_watts_per_gpu > power.idle_w && e.mean_watts_per_gpu < power.board_w,
            "{} W",
            e.mean_watts_per_gpu
        );
    }
    assert!(b.mean_watts_per_gpu > l.mean_watts_per_gpu + 50.0);
    // Idle power spread over few tokens costs more per token than a busy GPU's.
    let (jl, jb) = (
        l.joules_per_output_token.expect("tokens"),
        b.joules_per_output_token.expect("tokens"),
    );
    assert!(jl > 3.0 * jb, "{jl} J vs {jb} J per token");
    // The energy is the mean power over the GPU-time the fleet was up.
    let gpu_s = f64::from(busy.cost.gpus) * busy.sim_time_s;
    assert!((b.kwh * 3.6e6 / gpu_s / b.mean_watts_per_gpu - 1.0).abs() < 1e-9);
}

#[test]
fn electricity_is_priced_into_the_bill_only_when_asked() {
    let free = run_scenario(at_rate(4.0)).expect("runs");
    assert_eq!(free.cost.electricity_usd, 0.0);
    let mut priced = at_rate(4.0);
    priced.serving.usd_per_kwh = Some(0.15);
    let paid = run_scenario(priced).expect("runs");
    let e = paid.energy.expect("energy");
    let unpriced = free.energy.expect("energy");
    assert_eq!(
        (e.kwh, e.mean_watts_per_gpu),
        (unpriced.kwh, unpriced.mean_watts_per_gpu)
    );
    assert_eq!(e.usd, paid.cost.electricity_usd);
    assert!((e.usd_per_month - e.kwh_per_month * 0.15).abs() < 1e-9);
    assert!((paid.cost.electricity_usd - e.kwh * 0.15).abs() < 1e-12);
    assert!((paid.cost.total_usd - free.cost.total_usd - paid.cost.electricity_usd).abs() < 1e-9);
    assert!(paid.cost.usd_per_month > free.cost.usd_per_month + e.kwh_per_month * 0.15 * 0.99);
    let mut bad = at_rate(4.0);
    bad.serving.usd_per_kwh = Some(-0.1);
    let err = run_scenario(bad).expect_err("a negative price");
    assert!(
        err.to_string()
            .contains("serving.usd_per_kwh must be 0..=10 $/kWh, got -0.1"),
        "{err}"
    );
}

fn custom(board_w: Option<f64>, idle_w: Option<f64>) -> sim_core::Scenario {
    let spec = Gpu::H100.spec();
    let mut s = at_rate(4.0);
    s.serving.gpu = Gpu::Custom(CustomGpu {
        bf16_tflops: spec.bf16_tflops,
        fp8_tflops: spec.fp8_tflops,
        fp4_tflops: None,
        memory_gb: spec.memory_gb,
        memory_gb_per_s: spec.hbm_gb_per_s,
        link_gb_per_s: spec.link_gb_per_s,
        topology: Topology::Switched,
        usd_per_hour: spec.usd_per_hour,
        board_w,
        idle_w,
    });
    s
}

#[test]
fn a_custom_gpu_reports_energy_only_with_its_board_power() {
    assert!(
        run_scenario(custom(None, None))
            .expect("runs")
            .energy
            .is_none()
    );
    let power = Gpu::H100.spec().power.expect("figures");
    let catalogue = run_scenario(at_rate(4.0))
        .expect("runs")
        .energy
        .expect("energy");
    let typed = run_scenario(custom(Some(power.board_w), Some(power.idle_w)))
        .expect("runs")
        .energy
        .expect("energy");
    assert!((typed.mean_watts_per_gpu / catalogue.mean_watts_per_gpu - 1.0).abs() < 0.01);
    let err = run_scenario(custom(Some(700.0), Some(800.0))).expect_err("idle above board");
    assert!(
        err.to_string()
            .contains("serving.gpu.custom.idle_w must be 0..=700 W, got 800"),
        "{err}"
    );
    let err = run_scenario(custom(None, Some(80.0))).expect_err("idle alone");
    assert!(
        err.to_string()
            .contains("serving.gpu.custom.idle_w needs serving.gpu.custom.board_w too"),
        "{err}"
    );
}

#[test]
fn every_catalogue_gpu_idles_below_its_board_power() {
    for g in Gpu::ALL {
        let p = g
            .spec()
            .power
            .expect("every catalogue GPU has power figures");
        assert!(p.idle_w > 0.0 && p.idle_w < 0.25 * p.board_w, "{:?}", g);
        assert!(!p.source.is_empty());
    }
}

#[test]
fn a_run_on_hosted_apis_alone_reports_no_energy() {
    // No GPUs of its own: no energy to report, rather than 0 W a GPU.
    let api = sim_core::run(
        &sim_core::presets::pay_for_speed()
            .validate()
            .expect("valid"),
    );
    assert!(api.energy.is_none(), "{:?}", api.energy);
    let gpus = sim_core::run(&sim_core::presets::chatbot_h100().validate().expect("valid"));
    assert!(gpus.energy.is_some_and(|e| e.mean_watts_per_gpu > 0.0));
}
