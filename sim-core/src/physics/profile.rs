//! Serving-software profiles: what the engine that runs the model adds to the
//! hardware's roofline. A profile is made of physical parts — the API server's
//! time per request, the scheduler's time per step and per sequence, kernel
//! launches per layer, the fractions of peak bandwidth and compute real kernels
//! reach (separately for passes with prompt tokens and decode-only passes, and
//! for reading the KV cache), tensor-parallel all-reduces, and how the engine
//! sizes its KV cache. The same profile serves every GPU and model: there are
//! no per-model, per-GPU or per-row factors.

use super::Efficiency;
use serde::{Deserialize, Serialize};

/// The serving software a scenario runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ServingSoftware {
    /// vLLM (V1 engine): chunked prefill and automatic prefix caching on,
    /// constants fitted to real vLLM runs on H100 (`docs/calibration.md`).
    Vllm,
    /// NVIDIA TensorRT-LLM, fitted to its 2023 published tables (reference §4).
    /// A scenario that names no serving software means this: every scenario
    /// written before profiles existed was computed with these constants.
    #[default]
    TensorrtLlm,
}

impl ServingSoftware {
    /// Every profile, in menu order.
    pub const ALL: [ServingSoftware; 2] = [ServingSoftware::Vllm, ServingSoftware::TensorrtLlm];

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            ServingSoftware::Vllm => "vLLM",
            ServingSoftware::TensorrtLlm => "TensorRT-LLM",
        }
    }

    /// Where its constants come from, in a sentence.
    pub fn calibration(self) -> &'static str {
        match self {
            ServingSoftware::Vllm => {
                "fitted to 13 real vLLM v0.15.1 runs on H100 (5 dense models, TP 1–4; MoE parts on Llama-4-Scout, TP 2, FP8), November 2026"
            }
            ServingSoftware::TensorrtLlm => {
                "fitted to NVIDIA's published TensorRT-LLM tables (v0.5–v0.6, late 2023)"
            }
        }
    }

    /// The profile's constants.
    pub fn profile(self) -> Profile {
        match self {
            ServingSoftware::Vllm => Profile::VLLM,
            ServingSoftware::TensorrtLlm => Profile::TENSORRT_LLM,
        }
    }
}

/// A serving engine's costs, as physical parts. Times in ns; efficiencies are
/// fractions (≤ 1) of the datasheet peak.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServingCosts {
    /// API server time before a request reaches the scheduler: HTTP, request
    /// parsing, tokenisation. Lands on TTFT and end-to-end latency.
    pub frontend_in_ns: u64,
    /// Time from a token leaving the GPU to the client seeing it:
    /// detokenisation and streaming. Lands on TTFT and end-to-end latency.
    pub frontend_out_ns: u64,
    /// Scheduler, input preparation and sampling launch per forward pass.
    pub step_ns: u64,
    /// Growth of the per-step CPU time with each sequence in the batch
    /// (scheduling, block tables, sampling, detokenising its new token).
    pub per_seq_ns: u64,
    /// Kernel launches and small kernels per layer in a decode-only pass
    /// (CUDA graphs make this small).
    pub layer_decode_ns: u64,
    /// The same in a pass that carries prompt tokens (no CUDA graph: more,
    /// smaller launches; variable-length attention).
    pub layer_prefill_ns: u64,
    /// Fraction of the 16-bit tensor peak reached by matrix multiplies in
    /// passes that carry prompt tokens.
    pub compute_prefill: f64,
    /// The same in decode-only passes (small, skinny matrix multiplies).
    pub compute_decode: f64,
    /// FP8 matrix multiplies reach this fraction of the FP8 peak.
    pub compute_fp8: f64,
    /// Fraction of peak HBM bandwidth reached streaming weights in decode-only passes.
    pub bandwidth_decode: f64,
    /// The same in passes that carry prompt tokens.
    pub bandwidth_prefill: f64,
    /// Fraction of peak HBM bandwidth reached reading the KV cache (paged
    /// attention gathers scattered blocks: below weight streaming).
    pub bandwidth_kv: f64,
    /// Latency of one all-reduce under tensor parallelism.
    pub allreduce_ns: u64,
    /// Fraction of the GPU-to-GPU link bandwidth an all-reduce reaches.
    pub link_efficiency: f64,
    /// Compute and memory traffic overlap: a pass takes (cᵏ + mᵏ)^(1/k).
    pub overlap_exponent: f64,
    /// Fraction of peak HBM bandwidth reached streaming routed experts'
    /// weights (grouped GEMMs over a few tokens per expert: below dense
    /// weight streaming).
    pub bandwidth_experts: f64,
    /// Fraction of the 16-bit tensor peak the routed experts' grouped GEMMs
    /// reach, whatever the experts' format (a few dozen tokens per expert:
    /// far below dense GEMMs).
    pub compute_experts: f64,
    /// The shortest an MoE block takes per layer per pass: its chain of small
    /// dependent kernels (routing, sorting tokens by expert, two grouped
    /// GEMMs, combining) is latency-bound at small batches; streaming the
    /// touched experts overlaps with it (`(streamᵏ + floorᵏ)^(1/k)`).
    pub moe_layer_ns: u64,
}

/// How an engine sizes its KV cache.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum MemoryModel {
    /// The rule every scenario used before profiles: memory × utilisation −
    /// weights − an activation workspace − 1 GB per GPU.
    Legacy,
    /// vLLM's profiling: memory CUDA reports × utilisation − weights − the
    /// peak of a profiling pass (the larger of the activations of a
    /// `max_num_batched_tokens` pass and the sampler's logits for
    /// `max_num_seqs` sequences) − memory outside PyTorch.
    Vllm {
        /// CUDA context, CUDA graphs and communication buffers per GPU, bytes.
        non_torch_bytes: f64,
        /// FP32 copies of the logits the sampler's profiling pass holds at once.
        sampler_logit_copies: f64,
    },
}

/// How a step is timed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Timing {
    /// The soft roofline with fixed costs of the first version (TensorRT-LLM).
    Legacy(Efficiency),
    /// A serving engine's parts.
    Serving(ServingCosts),
}

/// Everything a serving engine contributes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Profile {
    /// How passes are timed.
    pub timing: Timing,
    /// How the KV cache is sized.
    pub memory: MemoryModel,
    /// Whether automatic prefix caching is on unless a scenario says otherwise.
    pub prefix_caching: bool,
}

impl Profile {
    /// TensorRT-LLM: today's constants, unchanged (see [`Efficiency::CALIBRATED`]).
    pub const TENSORRT_LLM: Profile = Profile {
        timing: Timing::Legacy(Efficiency::CALIBRATED),
        memory: MemoryModel::Legacy,
        prefix_caching: false,
    };

    /// vLLM V1, fitted by `tlab calibrate --fit` to
    /// `data/calibration/vllm-h100-runs.csv` (the dense rows; 30 November
    /// 2026). Each value's physical reading, with the fitted number:
    /// see `docs/calibration.md` for the fit and how well it predicts.
    pub const VLLM: Profile = Profile {
        timing: Timing::Serving(VLLM_COSTS),
        memory: MemoryModel::Vllm {
            // Fitted to the 8 `vllm_kv_blocks` values of the CSV (every one
            // within 0.7 %): vLLM's start-up logs show 0.5–1 GB of "non-torch"
            // memory per GPU.
            non_torch_bytes: 0.65e9,
            // The sampler's profiling pass: logits, softmax, sorting for
            // top-k/top-p, log-probabilities — a dozen FP32 copies.
            sampler_logit_copies: 12.0,
        },
        prefix_caching: true,
    };
}

/// vLLM's fitted costs (see [`Profile::VLLM`]): `tlab calibrate
/// data/calibration/vllm-h100-runs.csv --fit` from the priors in
/// `tlab::calibrate::FIT_START`, on the 24 dense rows (9 experiments, 5 models,
/// TP 1–4), 30 November 2026. Efficiencies were bounded to what real kernels
/// reach (≤ 0.85 of tensor peak, ≤ 0.92 of HBM bandwidth, ≤ 0.95 of link
/// bandwidth); the fit ended at those bounds for matrix multiplies, weight
/// streaming and all-reduces.
pub const VLLM_COSTS: ServingCosts = ServingCosts {
    // API server per request: HTTP, parsing, tokenisation (≈ 8 ms), and
    // detokenisation and streaming of a token (≈ 2 ms).
    frontend_in_ns: 8_000_000,
    frontend_out_ns: 1_999_999,
    // Scheduler and input preparation per step (≈ 0.9 ms), plus ≈ 4 µs per
    // sequence in the batch.
    step_ns: 937_500,
    per_seq_ns: 3_755,
    // Launches and small kernels per layer: ≈ 21 µs in a decode step, ≈ 4 µs
    // in a pass with prompt tokens (whose larger kernels hide most of them).
    layer_decode_ns: 20_800,
    layer_prefill_ns: 3_843,
    compute_prefill: 0.85,
    compute_decode: 0.85,
    // Not fitted (no dense FP8 runs): the TensorRT-LLM tables' 0.5 of the FP8
    // peak, a little lower for vLLM's kernels.
    compute_fp8: 0.45,
    bandwidth_decode: 0.92,
    bandwidth_prefill: 0.92,
    // Paged attention gathers the KV cache's scattered 16-token blocks at
    // 0.55 of HBM bandwidth (pinned by Llama-2-7B, whose multi-head cache is
    // 4–9× the others' per token).
    bandwidth_kv: 0.55,
    // NVLink all-reduce: ≈ 5 µs each, 0.95 of link bandwidth.
    allreduce_ns: 5_212,
    link_efficiency: 0.95,
    overlap_exponent: 2.0,
    // Fitted on the 10 Llama-4-Scout rows (`tlab calibrate --fit --moe`),
    // every constant above held: routed experts stream like any weights (the
    // fit ends at the bound); their grouped GEMMs, a few dozen tokens per
    // expert in a prompt pass, reach 0.15 of the 16-bit tensor peak; and an
    // MoE block takes at least ≈ 116 µs per
    // layer, the latency of its chain of small dependent kernels (routing,
    // sorting tokens by expert, activation quantisation, two grouped GEMMs,
    // combining), which streaming the experts overlaps.
    bandwidth_experts: 0.92,
    compute_experts: 0.15,
    moe_layer_ns: 116_279,
};
