//! Mixture-of-experts and latent-attention physics against published figures
//! and against direct simulation.

use super::*;
use crate::rng::{Stream, StreamId};

#[test]
fn moe_parameter_counts_match_the_published_totals_and_active_counts() {
    // (model, total, active) in billions, from each model's card. OpenAI's
    // gpt-oss figures count active parameters without the input embedding
    // table (a lookup); the others count it, as `active_params` does.
    let table = [
        (Model::Mixtral8x7b, 46.7, 12.9),
        (Model::Mixtral8x22b, 141.0, 39.0),
        (Model::Llama4Scout, 109.0, 17.0),
        (Model::Qwen3_30bA3b, 30.5, 3.3),
        (Model::DeepseekV3, 671.0, 37.0),
        (Model::GptOss120b, 116.8, 5.13),
        (Model::GptOss20b, 20.9, 3.61),
    ];
    for (m, total, active) in table {
        let d = m.dims();
        let t = d.params() / 1e9;
        let mut a = d.active_params() / 1e9;
        if matches!(m, Model::GptOss120b | Model::GptOss20b) {
            a -= f64::from(d.vocab) * f64::from(d.hidden) / 1e9;
        }
        assert!(
            (t / total - 1.0).abs() < 0.02,
            "{}: total {t:.2} B vs {total} B",
            m.name()
        );
        assert!(
            (a / active - 1.0).abs() < 0.02,
            "{}: active {a:.2} B vs {active} B",
            m.name()
        );
        assert!(d.routed_expert_params() < d.params());
    }
    // A dense model's active parameters are all of them.
    let dense = Model::Llama31_8b.dims();
    assert_eq!(dense.active_params(), dense.params());
    assert_eq!(dense.routed_expert_params(), 0.0);
}

#[test]
fn the_expected_distinct_experts_match_a_simulation_of_top_k_routing() {
    let mut rng = Stream::new(11, StreamId(99));
    for (experts, k) in [(8u32, 2u32), (16, 1), (128, 8), (256, 8)] {
        let m = Moe {
            experts,
            experts_per_token: k,
            shared_experts: 0,
            expert_ffn: 1,
            first_dense_layers: 0,
            every: 1,
            expert_bias: false,
        };
        for tokens in [1u32, 4, 16, 64, 256] {
            let trials = 2000;
            let mut sum = 0usize;
            for _ in 0..trials {
                let mut touched = vec![false; experts as usize];
                for _ in 0..tokens {
                    // k distinct experts, uniformly (partial Fisher–Yates).
                    let mut pool: Vec<u32> = (0..experts).collect();
                    for j in 0..k as usize {
                        let last = pool.len() - 1;
                        let r = j + (rng.uniform() * (pool.len() - j) as f64) as usize;
                        pool.swap(j, r.min(last));
                        touched[pool[j] as usize] = true;
                    }
                }
                sum += touched.iter().filter(|t| **t).count();
            }
            let simulated = sum as f64 / f64::from(trials);
            let formula = m.expected_distinct(f64::from(tokens));
            assert!(
                (formula / simulated - 1.0).abs() < 0.03,
                "E={experts} k={k} T={tokens}: formula {formula:.2}, simulated {simulated:.2}"
            );
        }
    }
}

fn deployment(model: Model, weights: Precision, tp: u32) -> Deployment {
    Deployment {
        gpu: Gpu::H100,
        tp,
        model,
        weights,
        kv: Precision::Bf16,
        memory_utilisation: 0.9,
        max_batched_tokens: 8192,
        max_seqs: 256,
        profile: ServingSoftware::Vllm.profile(),
        expert_parallel: false,
        draft: None,
    }
}

fn decode_bytes(dep: &Deployment, batch: u64) -> f64 {
    let shape = BatchShape {
        decode_seqs: batch,
        decode_context_tokens: batch,
        ..BatchShape::default()
    };
    let c = dep.serving_step_model().step(&shape);
    // Less the KV cache read (one token of context each).
    c.bytes - batch as f64 * dep.model.dims().kv_bytes_per_token(dep.kv)
}

#[test]
fn a_decode_step_reads_the_active_experts_at_batch_1_and_all_of_them_at_batch_256() {
    for model in [
        Model::Mixtral8x7b,
        Model::Qwen3_30bA3b,
        Model::DeepseekV3,
        Model::GptOss120b,
    ] {
        let d = model.dims();
        let dep = deployment(model, Precision::Bf16, 8);
        let embedding = f64::from(d.vocab) * f64::from(d.hidden);
        let active = (d.active_params() - embedding) * 2.0;
        let total = (d.params() - embedding) * 2.0;
        let one = decode_bytes(&dep, 1);
        let many = decode_bytes(&dep, 256);
        assert!(
            (one / active - 1.0).abs() < 0.02,
            "{}: batch 1 reads {:.1} GB, active weights are {:.1} GB",
            model.name(),
            one / 1e9,
            active / 1e9
        );
        assert!(
            (many / total - 1.0).abs() < 0.02,
            "{}: batch 256 reads {:.1} GB, all weights are {:.1} GB",
            model.name(),
            many / 1e9,
            total / 1e9
        );
        // FLOPs follow the active parameters, not the total.
        let shape = BatchShape {
            decode_seqs: 1,
            decode_context_tokens: 1,
            ..BatchShape::default()
        };
        let flops = dep.serving_step_model().step(&shape).flops;
        assert!((flops / (active) - 1.0).abs() < 0.02, "{}", model.name());
    }
}

#[test]
fn expert_parallelism_waits_for_its_busiest_gpu() {
    let tp = deployment(Model::Mixtral8x7b, Precision::Bf16, 8);
    let ep = Deployment {
        expert_parallel: true,
        draft: None,
        ..tp
    };
    // One token touches 2 of 8 experts: split across 8 GPUs each reads a
    // quarter of an expert per layer; spread whole, two GPUs read a whole one.
    assert!(decode_bytes(&ep, 1) > 1.5 * decode_bytes(&tp, 1));
    // A large batch touches every expert either way.
    let (a, b) = (decode_bytes(&ep, 512), decode_bytes(&tp, 512));
    assert!((a / b - 1.0).abs() < 0.01, "{a} vs {b}");
    // The busiest GPU's expected load against a simulation of top-k routing
    // over experts spread whole across the GPUs.
    let mut rng = Stream::new(5, StreamId(98));
    for (model, gpus) in [
        (Model::Mixtral8x7b, 8u32),
        (Model::Qwen3_30bA3b, 4),
        (Model::DeepseekV3, 8),
    ] {
        let m = model.dims().moe.expect("moe");
        let per_gpu = (m.experts / gpus) as usize;
        for tokens in [1u32, 3, 16, 128] {
            let trials = 1000;
            let mut sum = 0usize;
            for _ in 0..trials {
                let mut touched = vec![false; m.experts as usize];
                for _ in 0..tokens {
                    let mut pool: Vec<u32> = (0..m.experts).collect();
                    for j in 0..m.experts_per_token as usize {
                        let last = pool.len() - 1;
                        let r = j + (rng.uniform() * (pool.len() - j) as f64) as usize;
                        pool.swap(j, r.min(last));
                        touched[pool[j] as usize] = true;
                    }
                }
                sum += touched
                    .chunks(per_gpu)
                    .map(|g| g.iter().filter(|t| **t).count())
                    .max()
                    .unwrap_or(0);
            }
            let simulated = sum as f64 / f64::from(trials);
            let formula = m.expected_busiest(f64::from(tokens), gpus);
            assert!(
                (formula / simulated - 1.0).abs() < 0.12,
                "{} on {gpus} GPUs, {tokens} tokens: formula {formula:.2}, simulated {simulated:.2}",
                model.name()
            );
        }
    }
}

#[test]
fn mla_caches_a_latent_per_token() {
    let d = Model::DeepseekV3.dims();
    // 61 layers × (512 latent + 64 rotary key) × 2 bytes.
    assert_eq!(d.kv_bytes_per_token(Precision::Bf16), 61.0 * 576.0 * 2.0);
    assert_eq!(d.kv_bytes_per_token(Precision::Fp8), 61.0 * 576.0);
    // Grouped-query attention would have cached 2 × 128 heads × 128 per layer.
    assert!(d.kv_bytes_per_token(Precision::Bf16) * 50.0 < 2.0 * 61.0 * 128.0 * 128.0 * 2.0);
    let (prefill, decode) = d.attn_flops_per_pair();
    assert!(
        decode > prefill,
        "decoding on the latent costs more per pair"
    );
}

#[test]
fn deepseek_v3_needs_fp8_and_h200s_on_one_node() {
    let bf16 = deployment(Model::DeepseekV3, Precision::Bf16, 8);
    let err = bf16
        .kv_capacity_blocks()
        .expect_err("671 B in BF16 is 1.3 TB");
    assert!(
        err.contains("DeepSeek-V3 in BF16 does not fit on 8 × H100 SXM"),
        "{err}"
    );
    assert!(err.contains("weights 1342."), "{err}");
    let fp8_h100 = deployment(Model::DeepseekV3, Precision::Fp8, 8);
    assert!(
        fp8_h100.kv_capacity_blocks().is_err(),
        "671 GB of FP8 on 8 × 80 GB"
    );
    let fp8_h200 = Deployment {
        gpu: Gpu::H200,
        ..fp8_h100
    };
    let blocks = fp8_h200.kv_capacity_blocks().expect("fits on 8 × H200");
    // A few hundred thousand tokens of latent KV cache.
    assert!(blocks * 16 > 100_000, "{blocks} blocks");
}

#[test]
fn gpt_oss_ships_in_mxfp4_at_its_checkpoint_size() {
    // The published checkpoints: 60.8 GiB (120b) and 12.8 GiB (20b).
    for (m, gib) in [(Model::GptOss120b, 60.8), (Model::GptOss20b, 12.8)] {
        assert_eq!(m.native_weights(), Precision::Mxfp4);
        let w = deployment(m, Precision::Mxfp4, 1).weight_bytes() / (1u64 << 30) as f64;
        assert!((w / gib - 1.0).abs() < 0.03, "{}: {w:.1} GiB", m.name());
    }
    // One H100 holds gpt-oss-120b in MXFP4, as OpenAI says it does.
    assert!(
        deployment(Model::GptOss120b, Precision::Mxfp4, 1)
            .kv_capacity_blocks()
            .is_ok()
    );
}

/// A decode step's time under the vLLM profile with `costs`, ms.
fn step_ms(dep: &Deployment, costs: ServingCosts, shape: &BatchShape) -> f64 {
    let mut model = dep.serving_step_model();
    model.timing = Timing::Serving(costs);
    model.step(shape).time_ns as f64 / 1e6
}

fn decode_shape(batch: u64) -> BatchShape {
    BatchShape {
        decode_seqs: batch,
        decode_context_tokens: batch * 600,
        ..BatchShape::default()
    }
}

#[test]
fn an_moe_block_never_runs_faster_than_its_chain_of_kernels() {
    // Llama-4-Scout as measured (FP8, TP2): 48 MoE layers.
    let dep = deployment(Model::Llama4Scout, Precision::Fp8, 2);
    let floor_ms = 48.0 * VLLM_COSTS.moe_layer_ns as f64 / 1e6;
    let without = ServingCosts {
        moe_layer_ns: 0,
        ..VLLM_COSTS
    };
    for batch in [1, 4, 16, 64, 256] {
        let shape = decode_shape(batch);
        let (with_floor, bare) = (
            step_ms(&dep, VLLM_COSTS, &shape),
            step_ms(&dep, without, &shape),
        );
        // Never below the floor; the floor overlaps the streaming of the
        // experts rather than adding to it.
        assert!(with_floor > floor_ms, "batch {batch}: {with_floor:.2} ms");
        assert!(
            with_floor > bare && with_floor < bare + floor_ms,
            "batch {batch}: {with_floor:.2} ms vs {bare:.2} + {floor_ms:.2}"
        );
    }
    // Once a batch touches every expert, streaming them outlasts the floor,
    // which then costs little.
    let all = decode_shape(256);
    let extra = step_ms(&dep, VLLM_COSTS, &all) - step_ms(&dep, without, &all);
    assert!(extra < floor_ms * 0.5, "{extra:.2} ms of {floor_ms:.2}");
    // Small batches, which touch few experts, feel it most.
    let extra = |batch| {
        step_ms(&dep, VLLM_COSTS, &decode_shape(batch))
            - step_ms(&dep, without, &decode_shape(batch))
    };
    assert!(
        extra(1) > 2.0 * extra(256),
        "{:.2} vs {:.2} ms",
        extra(1),
        extra(256)
    );
    // A dense model has no MoE block: the constant changes nothing.
    let dense = deployment(Model::Llama31_8b, Precision::Bf16, 1);
    let shape = decode_shape(16);
    assert_eq!(
        step_ms(&dense, VLLM_COSTS, &shape),
        step_ms(&dense, without, &shape)
    );
}

#[test]
fn grouped_expert_gemms_read_each_expert_once_per_tile_of_rows() {
    let dep = deployment(Model::Mixtral8x7b, Precision::Bf16, 2);
    let prompt = BatchShape {
        prefill_tokens: 2048,
        prefill_seqs: 1,
        prefill_attention_pairs: 2048 * 2049 / 2,
        ..BatchShape::default()
    };
    // A 2,048-token prompt gives each of Mixtral's 8 experts 512 rows:
    // several tiles, each reading the expert's weights again. Halving the
    // tile doubles those reads: the pass gets much slower, though less than
    // 2× (attention and the shared layers do not change).
    let smaller = ServingCosts {
        expert_tile_rows: VLLM_COSTS.expert_tile_rows / 2.0,
        ..VLLM_COSTS
    };
    let ratio = step_ms(&dep, smaller, &prompt) / step_ms(&dep, VLLM_COSTS, &prompt);
    assert!(ratio > 1.3 && ratio < 2.0, "{ratio}");
    // FLOPs still count every token's active parameters once.
    let mut model = dep.serving_step_model();
    model.timing = Timing::Serving(VLLM_COSTS);
    let d = Model::Mixtral8x7b.dims();
    let embedding = f64::from(d.vocab) * f64::from(d.hidden);
    let linear = 2.0 * (d.active_params() - embedding) * 2048.0;
    let flops = model.step(&prompt).flops;
    assert!(
        flops > linear && flops < linear * 1.2,
        "{flops} vs {linear}"
    );
    // A decode step of 8 sequences gives each expert 2 rows, well inside one
    // tile of either size: it reads each touched expert once either way
    // (the smaller tile only pads less compute, which streaming hides).
    let shape = decode_shape(8);
    let (tile, half) = (
        step_ms(&dep, VLLM_COSTS, &shape),
        step_ms(&dep, smaller, &shape),
    );
    assert!(half <= tile && half > tile * 0.95, "{half} vs {tile} ms");
}
