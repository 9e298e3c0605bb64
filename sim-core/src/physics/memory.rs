//! A replica's memory: weights, activation workspace, runtime overhead and the
//! KV-cache capacity left, and the step model of the deployment.

use super::{
    Efficiency, Gpu, KV_BLOCK_TOKENS, MemoryModel, Model, Precision, StepModel, Timing, Topology,
};

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
    /// The serving software's profile, or the user's own fitted one (its
    /// memory model sizes the KV cache, its timing times the passes).
    pub profile: super::Profile,
    /// Whether an MoE model's experts are spread whole across the replica's
    /// GPUs (expert parallelism) instead of each split across all of them.
    pub expert_parallel: bool,
    /// A speculative-decoding proposer held beside the model: its weights
    /// and its KV cache per token take from the KV cache's room.
    pub draft: Option<DraftMemory>,
}

/// What a speculative-decoding proposer holds in memory.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DraftMemory {
    /// Its weights across the replica, bytes.
    pub weight_bytes: f64,
    /// Its KV cache per token of context, bytes.
    pub kv_bytes_per_token: f64,
}

/// Memory outside weights, activations and KV cache per GPU: CUDA context, CUDA
/// graphs and communication buffers; vLLM's start-up logs show about 1 GB of
/// "non-torch" memory on an H100.
pub const RUNTIME_OVERHEAD_BYTES_PER_GPU: f64 = 1.0e9;

impl Deployment {
    /// Its serving profile.
    fn profile(&self) -> super::Profile {
        self.profile
    }

    /// Bytes of weights across the replica. An MoE model's format covers its
    /// feed-forward weights (experts and dense MLPs) while attention, router,
    /// embeddings and output head stay 16-bit, as MoE checkpoints ship
    /// (gpt-oss's MXFP4 experts; FP8 recipes that skip attention and the
    /// router). So does MXFP4 on a dense model; other formats cover a dense
    /// model's every weight.
    pub fn weight_bytes(&self) -> f64 {
        let d = self.model.dims();
        match (self.weights, d.moe.is_some()) {
            (Precision::Bf16, _) => d.params() * 2.0,
            (w, true) | (w @ (Precision::Mxfp4 | Precision::Nvfp4), false) => {
                let q = d.ffn_params();
                q * w.bytes_per_value() + (d.params() - q) * 2.0
            }
            (w, false) => d.params() * w.bytes_per_value(),
        }
    }

    /// Bytes of the routed experts across the replica (0 for a dense model).
    pub fn routed_expert_bytes(&self) -> f64 {
        let d = self.model.dims();
        d.routed_expert_params() * self.weights.bytes_per_value()
    }

    /// Activation workspace per replica, as vLLM's profiling run reserves: per
    /// batched token the 16-bit hidden states and MLP intermediates, per sequence
    /// FP32 logits, plus the runtime's fixed overhead on every GPU.
    pub fn activation_bytes(&self) -> f64 {
        let d = self.model.dims();
        let per_token = 2.0 * (4.0 * f64::from(d.hidden) + 2.0 * d.ffn_active());
        f64::from(self.max_batched_tokens) * per_token
            + f64::from(self.max_seqs) * 4.0 * f64::from(d.vocab)
            + RUNTIME_OVERHEAD_BYTES_PER_GPU * f64::from(self.tp)
    }

    /// Memory available to the server across the replica, bytes.
    pub fn usable_bytes(&self) -> f64 {
        match self.profile().memory {
            MemoryModel::TensorrtLlm => {
                self.gpu.spec().memory_gb * 1e9 * f64::from(self.tp) * self.memory_utilisation
            }
            MemoryModel::Vllm { .. } => {
                self.gpu.spec().reported_gib
                    * 1024.0
                    * 1024.0
                    * 1024.0
                    * f64::from(self.tp)
                    * self.memory_utilisation
            }
        }
    }

    /// Memory reserved besides weights and KV cache across the replica, bytes:
    /// the activation workspace (and runtime overhead) the memory model sets aside.
    pub fn reserved_bytes(&self) -> f64 {
        match self.profile().memory {
            MemoryModel::TensorrtLlm => self.activation_bytes(),
            MemoryModel::Vllm {
                non_torch_bytes,
                sampler_logit_copies,
            } => {
                // vLLM's profiling pass: its peak is the larger of the MLP's
                // activations for a full token budget (gate and up projections,
                // 16-bit, split by tensor parallelism) and the sampler's FP32
                // logits for max_num_seqs sequences; plus memory outside PyTorch.
                let d = self.model.dims();
                let tp = f64::from(self.tp);
                let activations =
                    f64::from(self.max_batched_tokens) * 2.0 * (2.0 * d.ffn_active() / tp);
                let sampler =
                    f64::from(self.max_seqs) * f64::from(d.vocab) * 4.0 * sampler_logit_copies;
                (non_torch_bytes + activations.max(sampler)) * tp
            }
        }
    }

    /// KV-cache capacity in blocks of [`KV_BLOCK_TOKENS`] tokens, or the memory the
    /// configuration would need if the weights and workspace leave no room.
    pub fn kv_capacity_blocks(&self) -> Result<u64, String> {
        let (draft_weights, draft_kv) = self
            .draft
            .map_or((0.0, 0.0), |d| (d.weight_bytes, d.kv_bytes_per_token));
        let kv_per_token = self.model.dims().kv_bytes_per_token(self.kv) + draft_kv;
        let free =
            self.usable_bytes() - self.weight_bytes() - draft_weights - self.reserved_bytes();
        let blocks = libm::floor(free / (kv_per_token * f64::from(KV_BLOCK_TOKENS)));
        if blocks >= 1.0 {
            Ok(blocks as u64)
        } else {
            let need = self.weight_bytes()
                + draft_weights
                + self.reserved_bytes()
                + kv_per_token * f64::from(KV_BLOCK_TOKENS);
            Err(format!(
                "{} in {} does not fit on {} × {}: it needs {:.1} GB (weights {:.1} GB + activations {:.1} GB + one KV block) but {:.1} GB is usable at memory utilisation {}",
                self.model.name(),
                self.weights.name(),
                self.tp,
                self.gpu.spec().name,
                need / 1e9,
                self.weight_bytes() / 1e9,
                self.reserved_bytes() / 1e9,
                self.usable_bytes() / 1e9,
                self.memory_utilisation
            ))
        }
    }

    /// KV blocks each admitted sequence holds for the model's sliding-window
    /// layers, counted in blocks of the full-context layers (the unit of
    /// [`Self::kv_capacity_blocks`]): the window's blocks and the one being
    /// written, as vLLM's hybrid KV-cache manager keeps them. 0 without
    /// sliding-window layers.
    pub fn sequence_kv_blocks(&self) -> u64 {
        let dims = self.model.dims();
        let Some(w) = dims.sliding_window else {
            return 0;
        };
        let full = dims.kv_bytes_per_token(self.kv);
        if full <= 0.0 {
            return 0;
        }
        let sliding = dims.sliding_kv_bytes_per_token(self.kv);
        libm::ceil(w.blocks_per_sequence(KV_BLOCK_TOKENS) as f64 * sliding / full) as u64
    }

    /// The peak of the low-precision tensor cores this deployment's matrix
    /// multiplies run on (FP8 weights on FP8 hardware, NVFP4 on FP4
    /// hardware), TFLOP/s; None when they run in 16-bit.
    pub fn low_precision_tflops(&self) -> Option<f64> {
        let spec = self.gpu.spec();
        match self.weights {
            Precision::Fp8 => spec.fp8_tflops,
            Precision::Nvfp4 => spec.fp4_tflops,
            _ => None,
        }
    }

    /// The timing model of this deployment under its serving software.
    pub fn serving_step_model(&self) -> StepModel {
        self.step_model_for(self.profile().timing)
    }

    /// The legacy timing model with these efficiencies (the datasheet roofline
    /// with [`Efficiency::PEAK`], TensorRT-LLM's constants, calibration trials).
    pub fn step_model(&self, eff: Efficiency) -> StepModel {
        self.step_model_for(Timing::TensorrtLlm(eff))
    }

    /// The timing model of this deployment with the given costs.
    pub fn step_model_for(&self, timing: Timing) -> StepModel {
        let eff = match timing {
            Timing::TensorrtLlm(e) => e,
            Timing::Serving(_) => Efficiency::PEAK,
        };
        let dims = self.model.dims();
        let spec = self.gpu.spec();
        // FP8 and NVFP4 weights run FP8 and FP4 matrix multiplies where the
        // GPU has them; INT8, INT4 and MXFP4 are weight-only formats,
        // dequantised into 16-bit multiplies.
        let low_peak = self.low_precision_tflops();
        let (tflops, compute_efficiency) = match low_peak {
            Some(t) => (t, eff.compute_fp8),
            None => (spec.bf16_tflops, eff.compute_16bit),
        };
        let (attn_prefill, attn_decode) = dims.attn_flops_per_pair();
        StepModel {
            params: dims.params(),
            active_params: dims.active_params(),
            routed_params: dims.routed_expert_params(),
            expert_bytes: self.routed_expert_bytes(),
            moe: dims.moe,
            expert_gpus: if self.expert_parallel { self.tp } else { 0 },
            busiest: Default::default(),
            attn_flops_per_pair_prefill: attn_prefill,
            weight_bytes: self.weight_bytes(),
            kv_bytes_per_token: dims.kv_bytes_per_token(self.kv),
            sliding: dims.sliding_window.map(|w| {
                (
                    f64::from(w.window),
                    dims.sliding_kv_bytes_per_token(self.kv),
                    f64::from(w.layers) / f64::from(dims.layers.max(1)),
                )
            }),
            attn_flops_per_pair: attn_decode,
            peak_flops: tflops * 1e12,
            compute_efficiency,
            bandwidth: spec.hbm_gb_per_s * 1e9,
            layers: f64::from(dims.layers),
            hidden: f64::from(dims.hidden),
            tp: f64::from(self.tp),
            link_bytes_per_s: spec.link_gb_per_s * 1e9
                / match self.gpu.topology() {
                    Topology::Switched => 1.0,
                    Topology::SharedBus => f64::from(self.tp),
                },
            fixed_ns: eff.step_overhead_ns + u64::from(dims.layers) * eff.layer_overhead_ns,
            prefill_fixed_ns: u64::from(dims.layers) * eff.prefill_layer_overhead_ns,
            eff,
            timing,
            scale: self.profile.step_time_scale,
            prefill_scale: self.profile.prefill_time_scale,
            peak_16: spec.bf16_tflops * 1e12,
            peak_low: low_peak.map(|t| t * 1e12),
            embedding_params: if dims.tied_embeddings {
                0.0
            } else {
                f64::from(dims.vocab) * f64::from(dims.hidden)
            },
        }
    }
}
