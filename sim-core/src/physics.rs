//! GPU forward-pass timing from the physics of the hardware and the model.
//!
//! One function, [`StepModel::step_time_ns`], maps a batch's shape to a duration:
//! a roofline — the larger of compute time and memory time — plus a fixed per-step
//! overhead and, under tensor parallelism, the all-reduces. Hardware and model
//! figures come from `shared/reference.md` §1–§3; efficiencies live in
//! [`Efficiency::CALIBRATED`] with their sources; `docs/calibration.md` shows how
//! far the model is from published measurements.

use serde::{Deserialize, Serialize};

/// Tokens per KV-cache block (vLLM's default block size).
pub const KV_BLOCK_TOKENS: u32 = 16;

/// A GPU from the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Gpu {
    /// NVIDIA A100 80 GB SXM.
    A100,
    /// NVIDIA H100 SXM 80 GB.
    H100,
    /// NVIDIA H200 SXM 141 GB.
    H200,
    /// NVIDIA L4 24 GB.
    L4,
    /// NVIDIA L40S 48 GB.
    L40s,
    /// AMD Instinct MI300X 192 GB.
    Mi300x,
}

/// Datasheet figures of a GPU (dense, never "with sparsity").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuSpec {
    /// Display name.
    pub name: &'static str,
    /// Dense BF16 tensor-core peak, TFLOP/s.
    pub bf16_tflops: f64,
    /// Dense FP8 peak, TFLOP/s, where the hardware has FP8.
    pub fp8_tflops: Option<f64>,
    /// HBM bandwidth, GB/s.
    pub hbm_gb_per_s: f64,
    /// Memory, GB (10⁹ bytes).
    pub memory_gb: f64,
    /// GPU-to-GPU bandwidth per direction for all-reduce, GB/s.
    pub link_gb_per_s: f64,
    /// Indicative on-demand price, $/GPU-hour.
    pub usd_per_hour: f64,
}

impl Gpu {
    /// Every GPU in the catalogue.
    pub const ALL: [Gpu; 6] = [
        Gpu::A100,
        Gpu::H100,
        Gpu::H200,
        Gpu::L4,
        Gpu::L40s,
        Gpu::Mi300x,
    ];

    /// Datasheet figures. Peaks, bandwidth and memory: reference §1 (NVIDIA/AMD
    /// datasheets). Link bandwidth: NVLink 3 (A100) 300 GB/s and NVLink 4 (H100/H200)
    /// 450 GB/s per direction; PCIe 4.0 x16 ≈ 32 GB/s (L4, L40S); MI300X Infinity
    /// Fabric ≈ 448 GB/s per direction. Prices: within the 2024–2026 ranges of
    /// reference §1 (CoreWeave's 2024 list for A100 and H100).
    pub const fn spec(self) -> GpuSpec {
        match self {
            Gpu::A100 => GpuSpec {
                name: "A100 80GB",
                bf16_tflops: 312.0,
                fp8_tflops: None,
                hbm_gb_per_s: 2039.0,
                memory_gb: 80.0,
                link_gb_per_s: 300.0,
                usd_per_hour: 2.21,
            },
            Gpu::H100 => GpuSpec {
                name: "H100 SXM",
                bf16_tflops: 989.0,
                fp8_tflops: Some(1979.0),
                hbm_gb_per_s: 3350.0,
                memory_gb: 80.0,
                link_gb_per_s: 450.0,
                usd_per_hour: 4.25,
            },
            Gpu::H200 => GpuSpec {
                name: "H200 SXM",
                bf16_tflops: 989.0,
                fp8_tflops: Some(1979.0),
                hbm_gb_per_s: 4800.0,
                memory_gb: 141.0,
                link_gb_per_s: 450.0,
                usd_per_hour: 4.50,
            },
            Gpu::L4 => GpuSpec {
                name: "L4",
                bf16_tflops: 121.0,
                fp8_tflops: Some(242.0),
                hbm_gb_per_s: 300.0,
                memory_gb: 24.0,
                link_gb_per_s: 32.0,
                usd_per_hour: 0.60,
            },
            Gpu::L40s => GpuSpec {
                name: "L40S",
                bf16_tflops: 362.0,
                fp8_tflops: Some(733.0),
                hbm_gb_per_s: 864.0,
                memory_gb: 48.0,
                link_gb_per_s: 32.0,
                usd_per_hour: 1.50,
            },
            Gpu::Mi300x => GpuSpec {
                name: "MI300X",
                bf16_tflops: 1307.0,
                fp8_tflops: Some(2615.0),
                hbm_gb_per_s: 5300.0,
                memory_gb: 192.0,
                link_gb_per_s: 448.0,
                usd_per_hour: 3.50,
            },
        }
    }
}

/// A model's architecture, as in its `config.json`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelDims {
    /// Transformer layers.
    pub layers: u32,
    /// Hidden size.
    pub hidden: u32,
    /// Query heads.
    pub q_heads: u32,
    /// Key/value heads (grouped-query attention when fewer than `q_heads`).
    pub kv_heads: u32,
    /// Dimension of one head.
    pub head_dim: u32,
    /// Intermediate (FFN) size of the gated MLP.
    pub ffn: u32,
    /// Vocabulary size.
    pub vocab: u32,
    /// Whether q/k/v projections have biases (Qwen2.5).
    #[serde(default)]
    pub qkv_bias: bool,
    /// Whether the output head shares the embedding matrix.
    #[serde(default)]
    pub tied_embeddings: bool,
}

impl ModelDims {
    /// Parameter count derived from the dimensions: embeddings, output head,
    /// attention projections, gated MLP (3 matrices) and RMSNorm weights.
    pub fn params(&self) -> f64 {
        let h = f64::from(self.hidden);
        let q = f64::from(self.q_heads) * f64::from(self.head_dim);
        let kv = f64::from(self.kv_heads) * f64::from(self.head_dim);
        let attn = h * q + 2.0 * h * kv + q * h + if self.qkv_bias { q + 2.0 * kv } else { 0.0 };
        let mlp = 3.0 * h * f64::from(self.ffn);
        let per_layer = attn + mlp + 2.0 * h;
        let embed = f64::from(self.vocab) * h;
        let head = if self.tied_embeddings { 0.0 } else { embed };
        f64::from(self.layers) * per_layer + embed + head + h
    }

    /// KV-cache bytes per token: 2 (K and V) · layers · kv_heads · head_dim · bytes per value.
    pub fn kv_bytes_per_token(&self, kv: Precision) -> f64 {
        2.0 * f64::from(self.layers)
            * f64::from(self.kv_heads)
            * f64::from(self.head_dim)
            * kv.bytes_per_value()
    }
}

/// A model from the catalogue, or custom dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Model {
    /// Meta Llama-3.1-8B.
    #[serde(rename = "llama-3.1-8b")]
    Llama31_8b,
    /// Meta Llama-3.1-70B.
    #[serde(rename = "llama-3.1-70b")]
    Llama31_70b,
    /// Mistral-7B-v0.1.
    #[serde(rename = "mistral-7b")]
    Mistral7b,
    /// Qwen2.5-7B.
    #[serde(rename = "qwen2.5-7b")]
    Qwen25_7b,
    /// Qwen2.5-72B.
    #[serde(rename = "qwen2.5-72b")]
    Qwen25_72b,
    /// Meta Llama-2-7B.
    #[serde(rename = "llama-2-7b")]
    Llama2_7b,
    /// Meta Llama-2-70B (the TensorRT-LLM calibration runs use it).
    #[serde(rename = "llama-2-70b")]
    Llama2_70b,
    /// Any decoder-only transformer, from its dimensions.
    Custom(ModelDims),
}

impl Model {
    /// Every named model.
    pub const NAMED: [Model; 7] = [
        Model::Llama31_8b,
        Model::Llama31_70b,
        Model::Mistral7b,
        Model::Qwen25_7b,
        Model::Qwen25_72b,
        Model::Llama2_7b,
        Model::Llama2_70b,
    ];

    /// Display name.
    pub fn name(&self) -> &'static str {
        match self {
            Model::Llama31_8b => "Llama-3.1-8B",
            Model::Llama31_70b => "Llama-3.1-70B",
            Model::Mistral7b => "Mistral-7B",
            Model::Qwen25_7b => "Qwen2.5-7B",
            Model::Qwen25_72b => "Qwen2.5-72B",
            Model::Llama2_7b => "Llama-2-7B",
            Model::Llama2_70b => "Llama-2-70B",
            Model::Custom(_) => "custom model",
        }
    }

    /// Dimensions from each model's published `config.json` (reference §2).
    pub fn dims(&self) -> ModelDims {
        let d = |layers, hidden, q_heads, kv_heads, ffn, vocab| ModelDims {
            layers,
            hidden,
            q_heads,
            kv_heads,
            head_dim: 128,
            ffn,
            vocab,
            qkv_bias: false,
            tied_embeddings: false,
        };
        match *self {
            Model::Llama31_8b => d(32, 4096, 32, 8, 14336, 128_256),
            Model::Llama31_70b => d(80, 8192, 64, 8, 28672, 128_256),
            Model::Mistral7b => d(32, 4096, 32, 8, 14336, 32_000),
            Model::Qwen25_7b => ModelDims {
                qkv_bias: true,
                ..d(28, 3584, 28, 4, 18944, 152_064)
            },
            Model::Qwen25_72b => ModelDims {
                qkv_bias: true,
                ..d(80, 8192, 64, 8, 29568, 152_064)
            },
            Model::Llama2_7b => d(32, 4096, 32, 32, 11008, 32_000),
            Model::Llama2_70b => d(80, 8192, 64, 8, 28672, 32_000),
            Model::Custom(dims) => dims,
        }
    }
}

/// Numeric format of weights or KV-cache values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// 16-bit (FP16 or BF16).
    Bf16,
    /// 8-bit floating point (uses the FP8 tensor-core peak where the GPU has one).
    Fp8,
    /// 8-bit integer weights (weight-only: compute stays 16-bit).
    Int8,
    /// 4-bit integer weights (weight-only), ≈ 0.5 byte plus group scales.
    Int4,
}

impl Precision {
    /// Bytes per stored value. INT4 adds one 16-bit scale per group of 128 weights.
    pub fn bytes_per_value(self) -> f64 {
        match self {
            Precision::Bf16 => 2.0,
            Precision::Fp8 | Precision::Int8 => 1.0,
            Precision::Int4 => 0.5 + 2.0 / 128.0,
        }
    }
}

/// Fractions of datasheet peaks that real kernels reach, and fixed costs: the
/// only tuned numbers in the timing model, shared by every GPU and model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Efficiency {
    /// Fraction of the dense 16-bit tensor peak reached by the model's matrix multiplies.
    pub compute_16bit: f64,
    /// Fraction of the FP8 tensor peak reached by FP8 matrix multiplies.
    pub compute_fp8: f64,
    /// Fraction of peak HBM bandwidth reached streaming weights and KV cache.
    pub bandwidth: f64,
    /// Fixed time per forward pass (scheduling, sampling, launch of the pass), ns.
    pub step_overhead_ns: u64,
    /// Fixed time per transformer layer per pass (kernel launches, norms,
    /// rotary embeddings: work that does not scale with the roofline), ns.
    pub layer_overhead_ns: u64,
    /// Extra fixed time per layer when a pass carries prompt tokens (the
    /// context phase launches more, smaller kernels: variable-length attention,
    /// padding removal, KV writes), ns.
    pub prefill_layer_overhead_ns: u64,
    /// Latency of one all-reduce under tensor parallelism, ns.
    pub allreduce_latency_ns: u64,
    /// How imperfectly compute and memory traffic overlap: a pass takes
    /// (computeᵏ + memoryᵏ)^(1/k). Infinite k is the pure roofline max(compute,
    /// memory); smaller k charges for the overlap real kernels miss when both
    /// are of similar size (a "soft roofline").
    pub overlap_exponent: f64,
}

impl Efficiency {
    /// The datasheet itself: every peak reached, nothing else costs time. The
    /// physical limit no real server passes.
    pub const PEAK: Efficiency = Efficiency {
        compute_16bit: 1.0,
        compute_fp8: 1.0,
        bandwidth: 1.0,
        step_overhead_ns: 0,
        layer_overhead_ns: 0,
        prefill_layer_overhead_ns: 0,
        allreduce_latency_ns: 0,
        overlap_exponent: f64::INFINITY,
    };

    /// Other simulators' defaults (BLIS `hardware_config.json`, reference §3):
    /// ≈ 0.65 of peak compute, ≈ 0.72 of peak bandwidth, ≈ 0.5 ms per step, no
    /// per-layer cost. Kept to show how far a datasheet roofline is from measurements.
    pub const ROOFLINE_DEFAULTS: Efficiency = Efficiency {
        compute_16bit: 0.65,
        compute_fp8: 0.65,
        bandwidth: 0.72,
        step_overhead_ns: 500_000,
        layer_overhead_ns: 0,
        prefill_layer_overhead_ns: 0,
        allreduce_latency_ns: 10_000,
        overlap_exponent: f64::INFINITY,
    };

    /// The constants the simulator uses, fitted to NVIDIA's published
    /// TensorRT-LLM measurements (reference §4) by `cargo run --release -p sim-core
    /// --example calibrate`: a grid search minimising the worst error relative to
    /// each point's target, over all 15 points at once (no per-point factors).
    /// `docs/calibration.md` has the resulting table.
    /// - 16-bit compute 0.65 of peak: cuBLAS on large GEMMs reaches 0.6–0.75.
    /// - FP8 compute 0.50 of the doubled FP8 peak: FP8 GEMMs of that generation
    ///   (per-tensor scaling, 16-bit attention and epilogues) gained ≈ 1.5×, not 2×.
    /// - Bandwidth 0.80 of peak: what streaming kernels reach on HBM (0.8–0.9).
    /// - 0.5 ms per pass (as BLIS), 40 µs per layer per pass and 80 µs more per
    ///   layer for a pass with prompt tokens: launch-bound kernels. These put a
    ///   batch-1 decode step of Llama-3.1-8B on an H100 at ≈ 7.8 ms, against a
    ///   4.8 ms pure weight-read bound.
    /// - 10 µs per all-reduce: a custom all-reduce's small-message latency on NVLink.
    /// - Overlap exponent 1.5: compute and memory traffic of a pass overlap only
    ///   partly; the grid preferred 1.5 to 2, 3 and a pure max.
    pub const CALIBRATED: Efficiency = Efficiency {
        compute_16bit: 0.65,
        compute_fp8: 0.50,
        bandwidth: 0.80,
        step_overhead_ns: 500_000,
        layer_overhead_ns: 40_000,
        prefill_layer_overhead_ns: 80_000,
        allreduce_latency_ns: 10_000,
        overlap_exponent: 1.5,
    };
}

/// The shape of one forward pass, aggregated so it costs O(1) to time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BatchShape {
    /// New prompt tokens processed (prefill chunks), summed over sequences.
    pub prefill_tokens: u64,
    /// Σ over prefill chunks of chunk · (tokens already cached + chunk / 2): the
    /// causal attention work of the prefill, in token-pairs.
    pub prefill_attention_pairs: u64,
    /// Σ over prefill chunks of tokens already cached (read back for attention).
    pub prefill_cached_tokens: u64,
    /// Sequences generating one token each.
    pub decode_seqs: u64,
    /// Σ of the decoding sequences' context lengths.
    pub decode_context_tokens: u64,
}

/// Everything needed to time a forward pass on one replica, precomputed.
#[derive(Clone, Debug, PartialEq)]
pub struct StepModel {
    params: f64,
    weight_bytes: f64,
    kv_bytes_per_token: f64,
    /// 4 · layers · q_heads · head_dim: attention FLOPs per token-pair.
    attn_flops_per_pair: f64,
    /// Peak FLOP/s of one GPU in the precision the matrix multiplies run in.
    peak_flops: f64,
    /// Fraction of that peak reached.
    compute_efficiency: f64,
    bandwidth: f64,
    layers: f64,
    hidden: f64,
    tp: f64,
    link_bytes_per_s: f64,
    /// Fixed time per pass: per-step plus per-layer overheads.
    fixed_ns: u64,
    /// Extra fixed time of a pass with prompt tokens.
    prefill_fixed_ns: u64,
    eff: Efficiency,
}

/// A replica's hardware and model, as given in a scenario.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Deployment {
    /// GPU type.
    pub gpu: Gpu,
    /// GPUs per replica (tensor parallelism degree).
    pub tp: u32,
    /// Model.
    pub model: Model,
    /// Weight format.
    pub weights: Precision,
    /// KV-cache format.
    pub kv: Precision,
    /// Fraction of GPU memory the server may use (vLLM's `gpu_memory_utilization`).
    pub memory_utilisation: f64,
    /// Largest number of tokens in one forward pass, for sizing activations.
    pub max_batched_tokens: u32,
    /// Largest number of sequences in one forward pass (logits are computed for
    /// each sequence's last token only).
    pub max_seqs: u32,
}

/// Memory outside weights, activations and KV cache per GPU: CUDA context, CUDA
/// graphs and communication buffers; vLLM's start-up logs show about 1 GB of
/// "non-torch" memory on an H100.
pub const RUNTIME_OVERHEAD_BYTES_PER_GPU: f64 = 1.0e9;

impl Deployment {
    /// Bytes of weights across the replica.
    pub fn weight_bytes(&self) -> f64 {
        self.model.dims().params() * self.weights.bytes_per_value()
    }

    /// Activation workspace per replica, as vLLM's profiling run reserves: per
    /// batched token the 16-bit hidden states and MLP intermediates, per sequence
    /// FP32 logits, plus the runtime's fixed overhead on every GPU.
    pub fn activation_bytes(&self) -> f64 {
        let d = self.model.dims();
        let per_token = 2.0 * (4.0 * f64::from(d.hidden) + 2.0 * f64::from(d.ffn));
        f64::from(self.max_batched_tokens) * per_token
            + f64::from(self.max_seqs) * 4.0 * f64::from(d.vocab)
            + RUNTIME_OVERHEAD_BYTES_PER_GPU * f64::from(self.tp)
    }

    /// Memory available to the server across the replica, bytes.
    pub fn usable_bytes(&self) -> f64 {
        self.gpu.spec().memory_gb * 1e9 * f64::from(self.tp) * self.memory_utilisation
    }

    /// KV-cache capacity in blocks of [`KV_BLOCK_TOKENS`] tokens, or the memory the
    /// configuration would need if the weights and workspace leave no room.
    pub fn kv_capacity_blocks(&self) -> Result<u64, String> {
        let kv_per_token = self.model.dims().kv_bytes_per_token(self.kv);
        let free = self.usable_bytes() - self.weight_bytes() - self.activation_bytes();
        let blocks = libm::floor(free / (kv_per_token * f64::from(KV_BLOCK_TOKENS)));
        if blocks >= 1.0 {
            Ok(blocks as u64)
        } else {
            let need = self.weight_bytes()
                + self.activation_bytes()
                + kv_per_token * f64::from(KV_BLOCK_TOKENS);
            Err(format!(
                "{} in {:?} does not fit on {} × {}: it needs {:.1} GB (weights {:.1} GB + activations {:.1} GB + one KV block) but {:.1} GB is usable at memory utilisation {}",
                self.model.name(),
                self.weights,
                self.tp,
                self.gpu.spec().name,
                need / 1e9,
                self.weight_bytes() / 1e9,
                self.activation_bytes() / 1e9,
                self.usable_bytes() / 1e9,
                self.memory_utilisation
            ))
        }
    }

    /// The timing model of this deployment.
    pub fn step_model(&self, eff: Efficiency) -> StepModel {
        let dims = self.model.dims();
        let spec = self.gpu.spec();
        // FP8 weights run FP8 matrix multiplies where the GPU has them; INT8 and
        // INT4 are weight-only formats, dequantised into 16-bit multiplies.
        let (tflops, compute_efficiency) = match (self.weights, spec.fp8_tflops) {
            (Precision::Fp8, Some(fp8)) => (fp8, eff.compute_fp8),
            _ => (spec.bf16_tflops, eff.compute_16bit),
        };
        StepModel {
            params: dims.params(),
            weight_bytes: self.weight_bytes(),
            kv_bytes_per_token: dims.kv_bytes_per_token(self.kv),
            attn_flops_per_pair: 4.0
                * f64::from(dims.layers)
                * f64::from(dims.q_heads)
                * f64::from(dims.head_dim),
            peak_flops: tflops * 1e12,
            compute_efficiency,
            bandwidth: spec.hbm_gb_per_s * 1e9,
            layers: f64::from(dims.layers),
            hidden: f64::from(dims.hidden),
            tp: f64::from(self.tp),
            link_bytes_per_s: spec.link_gb_per_s * 1e9,
            fixed_ns: eff.step_overhead_ns + u64::from(dims.layers) * eff.layer_overhead_ns,
            prefill_fixed_ns: u64::from(dims.layers) * eff.prefill_layer_overhead_ns,
            eff,
        }
    }
}

/// A forward pass's cost, split so a run can report MFU and bandwidth use.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepCost {
    /// Total duration, ns.
    pub time_ns: u64,
    /// FLOPs across the replica.
    pub flops: f64,
    /// Bytes moved from HBM across the replica.
    pub bytes: f64,
}

impl StepModel {
    /// The cost of one forward pass of the given shape.
    pub fn step(&self, s: &BatchShape) -> StepCost {
        let tokens = (s.prefill_tokens + s.decode_seqs) as f64;
        let pairs = s.prefill_attention_pairs as f64 + s.decode_context_tokens as f64;
        let flops = 2.0 * self.params * tokens + self.attn_flops_per_pair * pairs;
        let kv_tokens =
            (s.decode_context_tokens + s.prefill_cached_tokens + s.prefill_tokens) as f64;
        let bytes = self.weight_bytes + kv_tokens * self.kv_bytes_per_token;
        let compute_s = flops / self.tp / (self.peak_flops * self.compute_efficiency);
        let memory_s = bytes / self.tp / (self.bandwidth * self.eff.bandwidth);
        let mut comm_s = 0.0;
        if self.tp > 1.0 {
            // Two all-reduces per layer of tokens × hidden 16-bit activations; a ring
            // moves 2(tp − 1)/tp of the message over each link.
            let msg = tokens * self.hidden * 2.0;
            let per = msg * 2.0 * (self.tp - 1.0) / self.tp / self.link_bytes_per_s
                + self.eff.allreduce_latency_ns as f64 * 1e-9;
            comm_s = 2.0 * self.layers * per;
        }
        let (hi, lo) = if compute_s >= memory_s {
            (compute_s, memory_s)
        } else {
            (memory_s, compute_s)
        };
        let k = self.eff.overlap_exponent;
        let overlapped = if hi <= 0.0 || !k.is_finite() {
            hi
        } else {
            hi * libm::pow(1.0 + libm::pow(lo / hi, k), 1.0 / k)
        };
        let t = overlapped + comm_s;
        StepCost {
            time_ns: (t * 1e9) as u64
                + self.fixed_ns
                + if s.prefill_tokens > 0 {
                    self.prefill_fixed_ns
                } else {
                    0
                },
            flops,
            bytes,
        }
    }

    /// Duration of one forward pass, ns.
    pub fn step_time_ns(&self, s: &BatchShape) -> u64 {
        self.step(s).time_ns
    }

    /// Peak FLOP/s across the replica (for MFU).
    pub fn peak_flops(&self) -> f64 {
        self.peak_flops * self.tp
    }

    /// Peak bytes/s across the replica (for bandwidth utilisation).
    pub fn peak_bandwidth(&self) -> f64 {
        self.bandwidth * self.tp
    }

    /// Upper bound on decode output tokens/s at `batch` sequences of `context`
    /// tokens each: the roofline with no overheads beyond the model's.
    pub fn decode_roofline_tokens_per_s(&self, batch: u32, context: u32) -> f64 {
        let shape = BatchShape {
            decode_seqs: u64::from(batch),
            decode_context_tokens: u64::from(batch) * u64::from(context),
            ..BatchShape::default()
        };
        f64::from(batch) / (self.step_time_ns(&shape) as f64 * 1e-9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_params_and_kv_match_the_published_table() {
        // (model, params in billions, KV bytes/token in BF16) from reference §2.
        let table = [
            (Model::Llama31_8b, 8.03, 131_072.0),
            (Model::Llama31_70b, 70.6, 327_680.0),
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
}
