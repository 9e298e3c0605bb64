use super::*;

#[test]
fn derived_params_and_kv_match_the_published_table() {
    // (model, params in billions, KV bytes/token in BF16) from reference §2.
    let table = [
        (Model::Llama31_8b, 8.03, 131_072.0),
        (Model::Llama31_70b, 70.6, 327_680.0),
        (Model::Llama31_405b, 405.85, 516_096.0), // HF safetensors total, not in reference §2
        (Model::Mistral7b, 7.24, 131_072.0),
        (Model::Qwen25_7b, 7.62, 57_344.0),
        (Model::Qwen25_72b, 72.7, 327_680.0),
        (Model::Llama2_7b, 6.74, 524_288.0),
    ];
    for (m, params_b, kv) in table {
        let d = m.dims();
        let p = d.params() / 1e9;
        assert!(
            (p - params_b).abs() / params_b < 0.005,
            "{}: {p:.3} B vs {params_b} B",
            m.name()
        );
        assert_eq!(d.kv_bytes_per_token(Precision::Bf16), kv, "{}", m.name());
    }
}

fn h100_8b() -> Deployment {
    Deployment {
        gpu: Gpu::H100,
        tp: 1,
        model: Model::Llama31_8b,
        weights: Precision::Bf16,
        kv: Precision::Bf16,
        memory_utilisation: 0.9,
        max_batched_tokens: 2048,
        max_seqs: 256,
        profile: ServingSoftware::TensorrtLlm.profile(),
        expert_parallel: false,
        draft: None,
    }
}

#[test]
fn batch_one_decode_is_bounded_by_the_weight_read() {
    // 8.03 B params × 2 bytes ≈ 16.1 GB; at 3.35 TB/s that is ≥ 4.8 ms.
    let dep = h100_8b();
    assert!((dep.weight_bytes() / 1e9 - 16.06).abs() < 0.05);
    let m = dep.step_model(Efficiency::PEAK);
    let t = m.step_time_ns(&BatchShape {
        decode_seqs: 1,
        decode_context_tokens: 1,
        ..Default::default()
    });
    assert!((4_750_000..4_850_000).contains(&t), "{t} ns");
}

#[test]
fn kv_capacity_of_llama_8b_on_an_h100() {
    // (80 GB · 0.9 − 16.06 GB − activations) / 131,072 B per token ≈ 420k tokens.
    let blocks = h100_8b().kv_capacity_blocks().expect("fits");
    let tokens = blocks * u64::from(KV_BLOCK_TOKENS);
    assert!((380_000..430_000).contains(&tokens), "{tokens}");
}

#[test]
fn a_model_that_does_not_fit_says_how_much_memory_it_needs() {
    let dep = Deployment {
        gpu: Gpu::L4,
        model: Model::Llama31_70b,
        ..h100_8b()
    };
    let err = dep
        .kv_capacity_blocks()
        .expect_err("70B does not fit on one L4");
    assert!(err.contains("needs 14"), "{err}");
    assert!(err.contains("21.6 GB is usable"), "{err}");
}

#[test]
fn bigger_batches_never_take_less_time_and_more_bandwidth_never_slows_decode() {
    let dep = h100_8b();
    let m = dep.step_model(Efficiency::CALIBRATED);
    let mut last = 0;
    for b in [1u64, 2, 8, 32, 64, 128, 256, 512, 1024] {
        let t = m.step_time_ns(&BatchShape {
            decode_seqs: b,
            decode_context_tokens: b * 1000,
            ..Default::default()
        });
        assert!(t >= last);
        last = t;
    }
    let fast = Deployment {
        gpu: Gpu::H200,
        ..dep
    }
    .step_model(Efficiency::CALIBRATED);
    let shape = BatchShape {
        decode_seqs: 16,
        decode_context_tokens: 16_000,
        ..Default::default()
    };
    assert!(fast.step_time_ns(&shape) <= m.step_time_ns(&shape));
    let fp8 = Deployment {
        weights: Precision::Fp8,
        ..dep
    }
    .step_model(Efficiency::CALIBRATED);
    assert!(fp8.step_time_ns(&shape) <= m.step_time_ns(&shape));
}

#[test]
fn tensor_parallelism_splits_the_work_and_adds_all_reduces() {
    let tp1 = Deployment {
        model: Model::Llama31_70b,
        weights: Precision::Fp8,
        ..h100_8b()
    };
    assert!(
        tp1.kv_capacity_blocks().is_err(),
        "70B FP8 does not fit one H100 with room for KV"
    );
    let tp4 = Deployment { tp: 4, ..tp1 };
    let blocks = tp4.kv_capacity_blocks().expect("fits on four");
    assert!(blocks > 10_000);
    let shape = BatchShape {
        prefill_tokens: 2048,
        prefill_attention_pairs: 2048 * 1024,
        ..Default::default()
    };
    let one = Deployment { tp: 1, ..tp4 }
        .step_model(Efficiency::PEAK)
        .step(&shape);
    let four = tp4.step_model(Efficiency::PEAK).step(&shape);
    // Same total work; a quarter per GPU, plus 2 × 80 all-reduces of
    // 2048 × 8192 × 2 bytes moving 2·3/4 of that over 450 GB/s links.
    assert_eq!(one.flops, four.flops);
    let comm_ns = 160.0 * (2048.0 * 8192.0 * 2.0 * 1.5 / 450e9) * 1e9;
    let expected = one.time_ns as f64 / 4.0 + comm_ns;
    assert!(
        (four.time_ns as f64 / expected - 1.0).abs() < 0.01,
        "{} vs {expected}",
        four.time_ns
    );
}

#[test]
fn fp8_kv_halves_the_bytes_per_token_and_int4_shrinks_weights() {
    let d = Model::Llama31_8b.dims();
    assert_eq!(
        d.kv_bytes_per_token(Precision::Fp8) * 2.0,
        d.kv_bytes_per_token(Precision::Bf16)
    );
    let bf16 = h100_8b();
    let fp8_kv = Deployment {
        kv: Precision::Fp8,
        ..bf16
    };
    let ratio = fp8_kv.kv_capacity_blocks().expect("fits") as f64
        / bf16.kv_capacity_blocks().expect("fits") as f64;
    assert!((ratio - 2.0).abs() < 0.01, "{ratio}");
    let int4 = Deployment {
        weights: Precision::Int4,
        ..bf16
    };
    assert!((int4.weight_bytes() / bf16.weight_bytes() - 0.2578).abs() < 0.001);
}

fn any_deployment() -> impl Strategy<Value = Deployment> {
    (
        prop::sample::select(Gpu::ALL.to_vec()),
        prop::sample::select(Model::NAMED.to_vec()),
        prop::sample::select(vec![
            Precision::Bf16,
            Precision::Fp8,
            Precision::Int8,
            Precision::Int4,
            Precision::Mxfp4,
        ]),
        prop::sample::select(vec![1u32, 2, 4, 8]),
    )
        .prop_map(|(gpu, model, weights, tp)| Deployment {
            gpu,
            model,
            weights,
            tp,
            ..h100_8b()
        })
}

use proptest::prelude::*;

proptest! {
    #[test]
    fn a_larger_batch_never_takes_less_time(dep in any_deployment(), b in 1u64..2048, extra in 1u64..512, ctx in 1u64..32_768, prefill in 0u64..8192) {
        let m = dep.step_model(Efficiency::CALIBRATED);
        let shape = |d: u64| BatchShape { decode_seqs: d, decode_context_tokens: d * ctx, prefill_tokens: prefill, prefill_attention_pairs: prefill * prefill / 2, ..Default::default() };
        prop_assert!(m.step_time_ns(&shape(b + extra)) >= m.step_time_ns(&shape(b)));
    }

    #[test]
    fn more_bandwidth_never_slows_a_decode_step(dep in any_deployment(), b in 1u64..1024, ctx in 1u64..32_768) {
        let shape = BatchShape { decode_seqs: b, decode_context_tokens: b * ctx, ..Default::default() };
        let slow = dep.step_model(Efficiency::CALIBRATED).step_time_ns(&shape);
        let fast = dep.step_model(Efficiency { bandwidth: 0.95, ..Efficiency::CALIBRATED }).step_time_ns(&shape);
        prop_assert!(fast <= slow);
        // H200 is an H100 with more bandwidth and memory.
        let h100 = Deployment { gpu: Gpu::H100, ..dep }.step_model(Efficiency::CALIBRATED).step_time_ns(&shape);
        let h200 = Deployment { gpu: Gpu::H200, ..dep }.step_model(Efficiency::CALIBRATED).step_time_ns(&shape);
        prop_assert!(h200 <= h100);
    }

    #[test]
    fn fp8_weights_never_slow_a_memory_bound_step(dep in any_deployment(), b in 1u64..64, ctx in 1u64..8192) {
        let shape = BatchShape { decode_seqs: b, decode_context_tokens: b * ctx, ..Default::default() };
        let bf16 = Deployment { weights: Precision::Bf16, ..dep }.step_model(Efficiency::CALIBRATED).step_time_ns(&shape);
        let fp8 = Deployment { weights: Precision::Fp8, ..dep }.step_model(Efficiency::CALIBRATED).step_time_ns(&shape);
        prop_assert!(fp8 <= bf16, "fp8 {fp8} ns > bf16 {bf16} ns");
    }
}

#[test]
fn tools_names_for_the_2026_gpus_mean_those_gpus_and_no_other() {
    for (name, gpu) in [
        ("NVIDIA B200", Some(Gpu::B200)),
        ("NVIDIA B300 SXM6 AC", Some(Gpu::B300)),
        ("NVIDIA H20", Some(Gpu::H20)),
        ("NVIDIA H200", Some(Gpu::H200)),
        (
            "NVIDIA RTX PRO 6000 Blackwell Server Edition",
            Some(Gpu::RtxPro6000),
        ),
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", None),
        ("NVIDIA GeForce RTX 4090", Some(Gpu::Rtx4090)),
        ("NVIDIA GeForce RTX 4090 Laptop GPU", None),
        ("AMD Instinct MI325X", Some(Gpu::Mi325x)),
        ("AMD Instinct MI355X", Some(Gpu::Mi355x)),
    ] {
        assert_eq!(Gpu::from_name(name), gpu, "{name}");
    }
}

#[test]
fn every_catalogue_gpu_has_a_consistent_datasheet_with_a_source() {
    for g in Gpu::ALL {
        let s = g.spec();
        assert!(!s.source.is_empty(), "{}", s.name);
        // Lower precision never has a lower peak, and 4-bit tensor cores
        // come only with 8-bit ones.
        if let Some(fp8) = s.fp8_tflops {
            assert!(fp8 >= s.bf16_tflops, "{}", s.name);
        }
        if let Some(fp4) = s.fp4_tflops {
            assert!(fp4 >= s.fp8_tflops.expect("FP8 with FP4"), "{}", s.name);
        }
        // The driver reports a little less than the datasheet's capacity
        // (read as GiB), never more.
        let gib = s.memory_gb * 1e9 / f64::from(1u32 << 30);
        assert!(
            s.reported_gib <= s.memory_gb && s.reported_gib > 0.9 * gib,
            "{}: {} GiB reported of {} GB",
            s.name,
            s.reported_gib,
            s.memory_gb
        );
        assert!(s.hbm_gb_per_s > 0.0 && s.link_gb_per_s > 0.0 && s.usd_per_hour > 0.0);
        assert_eq!(Gpu::from_name(s.name), Some(g), "{} round-trips", s.name);
    }
}

#[test]
fn nvfp4_runs_fp4_matrix_multiplies_only_where_the_gpu_has_fp4_tensor_cores() {
    // A 2,048-token prompt on Llama-3.1-70B is compute-bound: FP4 tensor
    // cores make it faster than FP8 on a B200; an H100 has none, so NVFP4
    // there is weight-only (16-bit multiplies), slower than FP8's.
    let shape = BatchShape {
        prefill_tokens: 2048,
        prefill_attention_pairs: 2048 * 1024,
        prefill_seqs: 1,
        ..Default::default()
    };
    let time = |gpu, weights| {
        let dep = Deployment {
            gpu,
            model: Model::Llama31_70b,
            weights,
            tp: 4,
            profile: ServingSoftware::Vllm.profile(),
            ..h100_8b()
        };
        dep.serving_step_model().step_time_ns(&shape)
    };
    assert!(time(Gpu::B200, Precision::Nvfp4) < time(Gpu::B200, Precision::Fp8));
    assert!(time(Gpu::H100, Precision::Nvfp4) > time(Gpu::H100, Precision::Fp8));
    assert_eq!(
        Deployment {
            weights: Precision::Nvfp4,
            ..h100_8b()
        }
        .low_precision_tflops(),
        None
    );
    assert_eq!(
        Deployment {
            gpu: Gpu::B300,
            weights: Precision::Nvfp4,
            ..h100_8b()
        }
        .low_precision_tflops(),
        Some(13_500.0)
    );
}

#[test]
fn the_trust_statement_names_what_was_measured_for_that_gpu_and_model() {
    let vllm = ServingSoftware::Vllm;
    let dense = vllm.trust(Gpu::H100, &Model::Llama31_70b.dims());
    assert!(dense.contains("6–8 %") && dense.contains("H100"), "{dense}");
    let moe = vllm.trust(Gpu::H100, &Model::Mixtral8x7b.dims());
    assert!(moe.contains("Mixtral") && moe.contains("1–8 %"), "{moe}");
    // Latent attention or hundreds of experts: no runs, only published
    // figures (sim_core::anchors), and those say which way the error goes.
    for m in [Model::DeepseekV3, Model::Qwen3_30bA3b, Model::GptOss120b] {
        let t = vllm.trust(Gpu::H100, &m.dims());
        assert!(
            t.contains("no runs to fit") && t.contains("upper bound"),
            "{}: {t}",
            m.name()
        );
    }
    // Another GPU: its datasheet through H100-fitted constants.
    let b200 = vllm.trust(Gpu::B200, &Model::Llama31_8b.dims());
    assert!(b200.contains("no real B200 runs"), "{b200}");
    assert!(
        !b200.contains("MLPerf"),
        "no vLLM results on B200 were compared: {b200}"
    );
    // The RTX 4090: the one measured run (docs/calibration.md).
    let rtx = vllm.trust(Gpu::Rtx4090, &Model::Llama31_8b.dims());
    assert!(
        rtx.contains("one real vLLM 0.19 run on an RTX 4090") && rtx.contains("25–39 %"),
        "{rtx}"
    );
    let trt = ServingSoftware::TensorrtLlm.trust(Gpu::H100, &Model::Llama31_8b.dims());
    assert!(
        trt.contains("NVIDIA's published") && trt.contains("Llama-3.1-405B"),
        "{trt}"
    );
    // MLPerf Inference, compared and not fitted: said per GPU where results
    // were compared, the MoE error where the model is one, nothing elsewhere.
    assert!(
        trt.contains("MLPerf Inference on H100 SXM") && trt.contains("within 11 %"),
        "{trt}"
    );
    let h200 = ServingSoftware::TensorrtLlm.trust(Gpu::H200, &Model::Mixtral8x7b.dims());
    assert!(
        h200.contains("23 % low") && h200.contains("mixture-of-experts models 20–120 % too fast"),
        "{h200}"
    );
    let a100 = ServingSoftware::TensorrtLlm.trust(Gpu::A100, &Model::Llama31_8b.dims());
    assert!(!a100.contains("MLPerf"), "{a100}");
    // TensorRT-LLM 1.x: held-out figures where the GPU was held out of the
    // fit, "an estimate" with the held-out errors everywhere else.
    let trt1 = ServingSoftware::TensorrtLlm1;
    let b200 = trt1.trust(Gpu::B200, &Model::DeepseekV3.dims());
    assert!(
        b200.contains("held out of the fit")
            && b200.contains("16 % low")
            && b200.contains("DeepSeek-R1"),
        "{b200}"
    );
    let dense = trt1.trust(Gpu::H200, &Model::Llama31_70b.dims());
    assert!(
        dense.contains("37 % high") && !dense.contains("DeepSeek"),
        "{dense}"
    );
    let h100 = trt1.trust(Gpu::H100, &Model::Llama31_70b.dims());
    assert!(
        h100.contains("held out") && h100.contains("within 11 %"),
        "{h100}"
    );
    let rtx = trt1.trust(Gpu::RtxPro6000, &Model::Mixtral8x7b.dims());
    assert!(
        rtx.contains("held out")
            && rtx.contains("within 3 %")
            && rtx.contains("67 % low")
            && rtx.contains("median 0.62×"),
        "{rtx}"
    );
    let b300 = trt1.trust(Gpu::B300, &Model::DeepseekV3.dims());
    assert!(
        b300.contains("held out")
            && b300.contains("14 % low")
            && b300.contains("DeepSeek-R1's 20 % low"),
        "{b300}"
    );
    for gpu in [Gpu::L40s, Gpu::Mi300x] {
        let t = trt1.trust(gpu, &Model::Llama31_70b.dims());
        assert!(
            t.contains("an estimate") && t.contains("14 % (B300)") && t.contains("37 %"),
            "{t}"
        );
    }
    let mi325 = vllm.trust(Gpu::Mi325x, &Model::Llama31_70b.dims());
    assert!(
        mi325.contains("within 3 %") && mi325.contains("vLLM on ROCm"),
        "{mi325}"
    );
}

#[test]
fn every_profiles_key_is_its_name_in_scenarios_and_reads_back() {
    for w in ServingSoftware::ALL {
        let json = serde_json::to_value(w).expect("serialises");
        assert_eq!(json, serde_json::Value::from(w.key()), "{}", w.name());
        let back: ServingSoftware = serde_json::from_value(json).expect("reads back");
        assert_eq!(back, w);
        // Each runs its own constants: no two profiles share a definition.
        assert_eq!(
            ServingSoftware::ALL
                .iter()
                .filter(|o| o.profile() == w.profile())
                .count(),
            1,
            "{}",
            w.name()
        );
    }
}

#[test]
fn sglang_runs_its_rocm_builds_constants_on_amd_gpus_and_says_what_was_held_out() {
    let sglang = ServingSoftware::Sglang;
    // One choice for the user; the GPU's platform picks the build.
    assert_eq!(sglang.profile_on(&Gpu::B200), Profile::SGLANG);
    assert_eq!(sglang.profile_on(&Gpu::Mi355x), Profile::SGLANG_ROCM);
    assert_ne!(Profile::SGLANG, Profile::SGLANG_ROCM);
    for other in [ServingSoftware::Vllm, ServingSoftware::TensorrtLlm1] {
        assert_eq!(other.profile_on(&Gpu::Mi300x), other.profile());
    }
    // A scenario on an MI300X that names SGLang runs the ROCm build.
    let mut s = crate::presets::chatbot_h100();
    s.serving.software = sglang;
    s.serving.gpu = Gpu::Mi300x;
    assert_eq!(s.serving.profile(), Profile::SGLANG_ROCM);
    // Held out: DeepSeek-R1's figures; other models are an estimate.
    let r1 = sglang.trust(Gpu::Mi355x, &Model::DeepseekV3.dims());
    assert!(
        r1.contains("held out of the fit") && r1.contains("MI355X") && !r1.contains("estimate"),
        "{r1}"
    );
    let dense = sglang.trust(Gpu::B200, &Model::Llama31_70b.dims());
    assert!(
        dense.contains("held out") && dense.contains("Only DeepSeek-R1 was measured"),
        "{dense}"
    );
    let h100 = sglang.trust(Gpu::H100, &Model::DeepseekV3.dims());
    assert!(
        h100.contains("an estimate") && h100.contains("±50 %"),
        "{h100}"
    );
}
