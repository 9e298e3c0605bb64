//! GPUs a scenario describes from their datasheets, and the 2026 catalogue.

use sim_core::physics::{CustomGpu, Gpu, Topology};
use sim_core::presets::chatbot_h100;
use sim_core::run_scenario;

/// The H100's catalogue figures, as a user would type them from its datasheet.
fn h100_datasheet() -> CustomGpu {
    let s = Gpu::H100.spec();
    CustomGpu {
        bf16_tflops: s.bf16_tflops,
        fp8_tflops: s.fp8_tflops,
        fp4_tflops: None,
        memory_gb: s.memory_gb,
        memory_gb_per_s: s.hbm_gb_per_s,
        link_gb_per_s: s.link_gb_per_s,
        topology: Topology::Switched,
        usd_per_hour: s.usd_per_hour,
        board_w: s.power.map(|p| p.board_w),
        idle_w: s.power.map(|p| p.idle_w),
    }
}

#[test]
fn a_gpu_typed_from_its_datasheet_runs_like_the_catalogue_one() {
    let catalogue = chatbot_h100();
    let mut custom = catalogue.clone();
    custom.serving.gpu = Gpu::Custom(h100_datasheet());
    let (a, b) = (
        run_scenario(catalogue).expect("runs"),
        run_scenario(custom.clone()).expect("runs"),
    );
    // The same step times; only the driver's reported memory is the rule's
    // 1 % (79.2 GiB against the H100's measured 79.19), a few KV blocks.
    let close = |x: f64, y: f64| (x / y - 1.0).abs() < 0.002;
    assert!(close(
        a.overall.ttft.mean_ms.unwrap(),
        b.overall.ttft.mean_ms.unwrap()
    ));
    assert!(close(
        a.overall.tpot.mean_ms.unwrap(),
        b.overall.tpot.mean_ms.unwrap()
    ));
    assert!(
        close(a.cost.total_usd, b.cost.total_usd),
        "{} vs {}",
        a.cost.total_usd,
        b.cost.total_usd
    );
    // It survives the file and the share link unchanged.
    let json = serde_json::to_string(&custom).expect("serialises");
    assert!(json.contains("\"custom\":{\"bf16_tflops\":989.0"), "{json}");
    let back: sim_core::scenario::Scenario = serde_json::from_str(&json).expect("parses");
    assert_eq!(back, custom);
    let link = sim_core::link::encode(&custom);
    assert_eq!(*sim_core::link::decode(&link).expect("decodes"), custom);
}

#[test]
fn a_datasheet_out_of_range_is_refused_by_field() {
    for (edit, says) in [
        (
            (|g: &mut CustomGpu| g.bf16_tflops = 0.0) as fn(&mut CustomGpu),
            "serving.gpu.custom.bf16_tflops must be 1..=100000 TFLOP/s, got 0",
        ),
        (
            |g| g.fp8_tflops = Some(500.0),
            "serving.gpu.custom.fp8_tflops (500) is below serving.gpu.custom.bf16_tflops (989)",
        ),
        (
            |g| g.fp4_tflops = Some(9000.0),
            "serving.gpu.custom.fp4_tflops needs serving.gpu.custom.fp8_tflops too",
        ),
        (
            |g| g.memory_gb_per_s = f64::NAN,
            "serving.gpu.custom.memory_gb_per_s must be 10..=1000000 GB/s",
        ),
    ] {
        let mut g = h100_datasheet();
        if says.contains("needs") {
            g.fp8_tflops = None;
        }
        edit(&mut g);
        let mut s = chatbot_h100();
        s.serving.gpu = Gpu::Custom(g);
        let why = s.validate().expect_err("refused").to_string();
        assert!(why.contains(says), "{why}");
    }
    // An unknown field in a file is named, not ignored.
    let json = serde_json::to_string(&chatbot_h100())
        .expect("serialises")
        .replace("\"gpu\":\"h100\"", "\"gpu\":{\"custom\":{\"bf16_tflops\":1,\"memory_gb\":1,\"memory_gb_per_s\":10,\"link_gb_per_s\":1,\"usd_per_hour\":1,\"tflops\":2}}");
    let err = serde_json::from_str::<sim_core::scenario::Scenario>(&json).expect_err("refused");
    assert!(err.to_string().contains("unknown field `tflops`"), "{err}");
}

#[test]
fn gpus_on_a_shared_bus_pay_for_their_all_reduces() {
    // Llama-3.1-70B on four GPUs: the same datasheet through one shared bus
    // instead of a switch makes every all-reduce slower, so every step is.
    let mut s = chatbot_h100();
    s.serving.model = sim_core::physics::Model::Llama31_70b;
    s.serving.gpus_per_replica = 4;
    s.duration_s = 120.0;
    let mut g = h100_datasheet();
    g.link_gb_per_s = 32.0;
    s.serving.gpu = Gpu::Custom(g);
    let switched = run_scenario(s.clone()).expect("runs");
    g.topology = Topology::SharedBus;
    s.serving.gpu = Gpu::Custom(g);
    let shared = run_scenario(s).expect("runs");
    assert!(
        shared.overall.tpot.mean_ms.unwrap() > switched.overall.tpot.mean_ms.unwrap() * 1.02,
        "{:?} vs {:?}",
        shared.overall.tpot.mean_ms,
        switched.overall.tpot.mean_ms
    );
}
