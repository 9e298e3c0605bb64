//! Serving-software profiles: what the engine that runs the model adds to the
//! hardware's roofline. A profile is made of physical parts — the API server's
//! time per request, the scheduler's time per step and per sequence, kernel
//! launches per layer, the fractions of peak bandwidth and compute real kernels
//! reach (separately for passes with prompt tokens and decode-only passes, and
//! for reading the KV cache), tensor-parallel all-reduces, and how the engine
//! sizes its KV cache. The same profile serves every GPU and model: there are
//! no per-model, per-GPU or per-row factors.

use super::{Efficiency, Gpu, Platform};

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
    /// TensorRT-LLM 1.x as served by `trtllm-serve` (inflight batching, the
    /// overlap scheduler, KV-cache block reuse): the serving engine's parts
    /// with their own constants, fitted to MLPerf Inference and InferenceX
    /// results on NVIDIA GPUs (`docs/calibration-public.md`).
    #[serde(rename = "tensorrt-llm-1")]
    TensorrtLlm1,
    /// SGLang as served by `sglang.launch_server` (continuous batching,
    /// prompt passes apart from decode passes, the overlap scheduler,
    /// RadixAttention's prefix cache): the serving engine's parts with their
    /// own constants for its CUDA build and for its ROCm build, each fitted
    /// to InferenceX's SGLang results on its GPUs
    /// (`docs/calibration-public.md`).
    Sglang,
}

impl ServingSoftware {
    /// Every profile, in menu order.
    pub const ALL: [ServingSoftware; 4] = [
        ServingSoftware::Vllm,
        ServingSoftware::Sglang,
        ServingSoftware::TensorrtLlm1,
        ServingSoftware::TensorrtLlm,
    ];

    /// Its key in scenarios and links (`serving.software`).
    pub fn key(self) -> &'static str {
        match self {
            ServingSoftware::Vllm => "vllm",
            ServingSoftware::TensorrtLlm => "tensorrt-llm",
            ServingSoftware::TensorrtLlm1 => "tensorrt-llm-1",
            ServingSoftware::Sglang => "sglang",
        }
    }

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            ServingSoftware::Vllm => "vLLM",
            ServingSoftware::TensorrtLlm => "TensorRT-LLM",
            ServingSoftware::TensorrtLlm1 => "TensorRT-LLM 1.x",
            ServingSoftware::Sglang => "SGLang",
        }
    }

    /// Where its constants come from, in a sentence.
    pub fn calibration(self) -> &'static str {
        match self {
            ServingSoftware::Vllm => {
                "fitted to 29 real vLLM v0.15.1 runs on H100 (6 dense models, TP 1–4; Mixtral-8x7B and Llama-4-Scout; up to 20 req/s), December 2026"
            }
            ServingSoftware::TensorrtLlm => {
                "fitted to NVIDIA's published TensorRT-LLM tables (v0.5–v0.6, late 2023)"
            }
            ServingSoftware::TensorrtLlm1 => TRTLLM_CALIBRATION,
            ServingSoftware::Sglang => SGLANG_CALIBRATION,
        }
    }

    /// What it was fitted to, in a few words (a menu's option).
    pub fn calibration_short(self) -> &'static str {
        match self {
            ServingSoftware::Vllm => "fitted to 29 real runs, 2026",
            ServingSoftware::TensorrtLlm => "NVIDIA's 2023 tables",
            ServingSoftware::TensorrtLlm1 => "fitted to MLPerf and InferenceX, 2026",
            ServingSoftware::Sglang => "fitted to InferenceX, 2026",
        }
    }

    /// The profile's constants on `gpu`: its build for the GPU's platform.
    pub fn profile_on(self, gpu: &Gpu) -> Profile {
        self.profile_for(gpu.platform())
    }

    /// The profile's constants built for `platform`: SGLang's ROCm build
    /// has its own (its kernels are other code); every other profile has
    /// one set.
    pub fn profile_for(self, platform: Platform) -> Profile {
        match (self, platform) {
            (ServingSoftware::Sglang, Platform::Rocm) => Profile::SGLANG_ROCM,
            _ => self.profile(),
        }
    }

    /// The profile's constants (on CUDA GPUs; [`Self::profile_on`] for a
    /// given GPU).
    pub fn profile(self) -> Profile {
        match self {
            ServingSoftware::Vllm => Profile::VLLM,
            ServingSoftware::TensorrtLlm => Profile::TENSORRT_LLM,
            ServingSoftware::TensorrtLlm1 => Profile::TENSORRT_LLM_1,
            ServingSoftware::Sglang => Profile::SGLANG,
        }
    }
}

/// A serving engine's costs, as physical parts. Times in ns; efficiencies are
/// fractions (≤ 1) of the datasheet peak.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
    /// FP8 and FP4 matrix multiplies reach this fraction of their peak.
    pub compute_fp8: f64,
    /// Fraction of peak HBM bandwidth reached streaming weights in decode-only passes.
    pub bandwidth_decode: f64,
    /// The same in passes that carry prompt tokens.
    pub bandwidth_prefill: f64,
    /// Fraction of the 16-bit tensor peak the attention kernels reach on
    /// their query–key and value products (FlashAttention: below GEMMs).
    pub compute_attention: f64,
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
    /// reach on whole tiles of rows, whatever the experts' format (a
    /// part-filled tile's padding is charged on top). The vLLM profile ties
    /// it to the dense GEMMs' share instead of fitting it.
    pub compute_experts: f64,
    /// Rows (tokens) per tile of the grouped expert GEMMs: an expert's rows
    /// are computed in whole tiles, and its weights are read once per tile.
    pub expert_tile_rows: f64,
    /// The shortest an MoE block takes per layer per pass: its chain of small
    /// dependent kernels (routing, sorting tokens by expert, two grouped
    /// GEMMs, combining) is latency-bound at small batches; streaming the
    /// touched experts overlaps with it (`(streamᵏ + floorᵏ)^(1/k)`).
    pub moe_layer_ns: u64,
}

/// How an engine sizes its KV cache.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum MemoryModel {
    /// TensorRT-LLM's rule, which every scenario used before profiles:
    /// memory × utilisation − weights − an activation workspace − 1 GB per GPU.
    #[serde(alias = "Legacy")]
    TensorrtLlm,
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
    /// TensorRT-LLM's: the soft roofline with fixed costs of the first
    /// version, its constants fitted to NVIDIA's published tables.
    TensorrtLlm(Efficiency),
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
    /// Whether the scheduler runs one pass ahead of the GPU (vLLM's async
    /// scheduling, its default in 2026 releases, v0.15.1 and v0.19 included): the next pass is formed when
    /// the current one is launched, so a request that reaches a busy engine
    /// joins the pass after the next one. Adds about one pass to TTFT and
    /// nothing to the time per token; costs no GPU time.
    pub async_scheduling: bool,
    /// Every pass's time multiplied by this (1 for the profile as fitted):
    /// a scenario's `serving.step_time_scale`, and the range runs' low and
    /// high ends (`crate::ranges`).
    pub step_time_scale: f64,
    /// Every pass that carries prompt tokens multiplied by this as well (1
    /// for the profile as fitted): a scenario's `serving.prefill_time_scale`,
    /// and the range runs' where the profile's TTFT errs apart from its
    /// decode.
    pub prefill_time_scale: f64,
}

impl Profile {
    /// This profile with every pass's time multiplied by `scale`, and each
    /// pass carrying prompt tokens by `prefill` too.
    pub fn scaled(self, scale: f64, prefill: f64) -> Profile {
        Profile {
            step_time_scale: self.step_time_scale * scale,
            prefill_time_scale: self.prefill_time_scale * prefill,
            ..self
        }
    }

    /// TensorRT-LLM: today's constants, unchanged (see [`Efficiency::CALIBRATED`]).
    pub const TENSORRT_LLM: Profile = Profile {
        timing: Timing::TensorrtLlm(Efficiency::CALIBRATED),
        memory: MemoryModel::TensorrtLlm,
        prefix_caching: false,
        async_scheduling: false,
        step_time_scale: 1.0,
        prefill_time_scale: 1.0,
    };

    /// TensorRT-LLM 1.x (`trtllm-serve`): the serving parts with their own
    /// constants ([`TRTLLM_COSTS`]). Its KV cache is sized as TensorRT-LLM
    /// sizes it (a fraction of the memory left after weights and
    /// activations); block reuse is on, as in `trtllm-serve`'s defaults; the
    /// overlap scheduler (on by default since 0.17) forms the next batch
    /// while the current one runs, as vLLM's async scheduling does.
    pub const TENSORRT_LLM_1: Profile = Profile {
        timing: Timing::Serving(TRTLLM_COSTS),
        memory: MemoryModel::TensorrtLlm,
        prefix_caching: true,
        async_scheduling: true,
        step_time_scale: 1.0,
        prefill_time_scale: 1.0,
    };

    /// SGLang (`sglang.launch_server`): the serving parts with their own
    /// constants ([`SGLANG_COSTS`]). Its KV cache is a static pool of a
    /// fraction of the memory (`--mem-fraction-static`) after weights, sized
    /// as TensorRT-LLM's rule sizes it; RadixAttention reuses cached prompt
    /// starts; the overlap scheduler (on by default) forms the next batch
    /// while the current one runs, as vLLM's async scheduling does.
    pub const SGLANG: Profile = Profile {
        timing: Timing::Serving(SGLANG_COSTS),
        memory: MemoryModel::TensorrtLlm,
        prefix_caching: true,
        async_scheduling: true,
        step_time_scale: 1.0,
        prefill_time_scale: 1.0,
    };

    /// SGLang's ROCm build on AMD Instinct GPUs ([`SGLANG_ROCM_COSTS`]):
    /// the same engine as [`Profile::SGLANG`] with AMD's kernels (AITER's
    /// attention and MoE, hipBLASLt, RCCL).
    pub const SGLANG_ROCM: Profile = Profile {
        timing: Timing::Serving(SGLANG_ROCM_COSTS),
        ..Profile::SGLANG
    };

    /// vLLM V1, fitted by `tlab calibrate --moe --fit` to both files of
    /// `data/calibration/` (1 December 2026). Each value's physical reading,
    /// with the fitted number:
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
        async_scheduling: true,
        step_time_scale: 1.0,
        prefill_time_scale: 1.0,
    };
}

/// vLLM's fitted costs (see [`Profile::VLLM`]): `tlab calibrate
/// data/calibration/vllm-h100-runs.csv data/calibration/vllm-h100-runs-2.csv
/// --moe --fit`, with async scheduling modelled (a request reaching a busy
/// engine joins the pass after the next), on all 80 rows at once (29
/// experiments: 6 dense models at TP 1–4, Mixtral-8x7B and Llama-4-Scout;
/// up to 20 req/s), 2 December 2026: from the priors in
/// `tlab::calibrate::FIT_START` (20 rounds, mean squared log error 0.0100)
/// and from the previous fit's constants (`--from-current`, 8 rounds,
/// 0.0099, kept). Without async scheduling the best fit reached 0.0134.
/// On 4 December the grouped expert GEMMs' share of the peak was tied to
/// the dense GEMMs' and the other MoE constants refitted on every row with
/// the dense ones held (0.00987): dense scenarios keep their numbers.
/// Efficiencies were bounded to what real kernels reach (≤ 0.85 of tensor
/// peak, ≤ 0.92 of HBM bandwidth, ≤ 0.95 of link bandwidth).
pub const VLLM_COSTS: ServingCosts = ServingCosts {
    // API server per request: HTTP, parsing, tokenisation (≈ 2.8 ms), and
    // ≈ 0.2 ms between a token leaving the GPU and the client (detokenising
    // and streaming one token). Before async scheduling was modelled the fit
    // put ≈ 12 ms here: the pass a new request waits for in addition.
    frontend_in_ns: 2_764_724,
    frontend_out_ns: 212_945,
    // Scheduler, input preparation and sampling per step that the GPU does
    // not hide (≈ 1.1 ms), plus ≈ 0.6 µs per sequence in the batch.
    step_ns: 1_078_121,
    per_seq_ns: 243,
    // Launches and small kernels per layer: ≈ 39 µs in a decode step, ≈ 3 µs
    // in a pass with prompt tokens (whose larger kernels hide most of them).
    layer_decode_ns: 38_752,
    layer_prefill_ns: 1_343,
    // GEMMs at the bound in prompt and decode passes alike.
    compute_prefill: 0.85,
    compute_decode: 0.85,
    // Not fitted (no dense FP8 runs): the TensorRT-LLM tables' 0.5 of the FP8
    // peak, a little lower for vLLM's kernels. FP4 multiplies use it too.
    compute_fp8: 0.45,
    bandwidth_decode: 0.92,
    bandwidth_prefill: 0.92,
    // Attention kernels read the KV cache at 0.89 of HBM bandwidth: the
    // 1,448-token reasoning run of Llama-3.1-8B at 4 req/s (≈ 90 sequences,
    // 21 GB of cache a step) pins it; the first fit's 0.55, pinned by
    // Llama-2-7B alone, saturated that run.
    bandwidth_kv: 0.887,
    // FlashAttention's share of the 16-bit peak on its query–key and value
    // products.
    compute_attention: 0.85,
    // All-reduce: ≈ 1.2 µs each, 0.95 of NVLink bandwidth (vLLM's custom
    // all-reduce on one node).
    allreduce_ns: 1_846,
    link_efficiency: 0.95,
    // A kernel's compute and memory traffic overlap well: (cᵏ + mᵏ)^(1/k).
    // Fixed at k = 4, not fitted: the free fit gives 5.1, and 4 — within
    // 19 % of the larger at equal sizes — is computed with multiplications
    // and two square roots (no `pow`), which keeps a step as cheap as the
    // engine's benchmarks require.
    overlap_exponent: 4.0,
    // Routed experts stream at 0.90 of HBM bandwidth, once per tile of
    // ≈ 153 rows; an MoE block takes at least 80 µs per layer (the bound),
    // the latency of its chain of small dependent kernels (routing, sorting
    // tokens by expert, two grouped GEMMs, combining), which streaming the
    // experts overlaps.
    bandwidth_experts: 0.903,
    // Not fitted: a whole tile of a grouped GEMM computes at the dense
    // GEMMs' share of the peak (only a part-filled tile's padding costs
    // more). Fitted freely, it and the tile trade along a ridge light load
    // cannot resolve, and the search from the priors at ≤ 10 req/s stopped
    // where Mixtral at TP 2 saturates at 20 req/s (docs/calibration.md).
    compute_experts: 0.85,
    expert_tile_rows: 153.155,
    moe_layer_ns: 80_000,
};

/// Where [`TRTLLM_COSTS`] come from, in a sentence.
const TRTLLM_CALIBRATION: &str = "fitted to MLPerf Inference v4.1–v6.0 and InferenceX results of TensorRT-LLM on H100, H200, B200, B300 and RTX PRO 6000, December 2026";

/// TensorRT-LLM 1.x's costs (see [`Profile::TENSORRT_LLM_1`]): the same
/// parts as vLLM's, fitted by `tlab calibrate --fit
/// data/calibration/public/mlperf-llm-given.csv
/// data/calibration/public/inferencex-dsr1-given.csv` on 7 December 2026 to
/// the TensorRT-LLM rows of MLPerf Offline (saturated tokens/s: Llama-2-70B,
/// Llama-3.1-405B, Mixtral-8x7B and DeepSeek-R1 on H100, H200, B200, B300
/// and RTX PRO 6000) and of InferenceX (DeepSeek-R1 on B200 and H200:
/// throughput per GPU, median time per token and median TTFT): 25 rounds
/// of the coordinate search from vLLM's constants (the loss, each figure's
/// mean squared log error averaged, from 0.314 to 0.071), then 10 from
/// those (`--from-current`) once MLPerf's harnesses ran in-process (0.069).
/// Every row runs FP8 or FP4 weights: the 16-bit GEMMs' shares are vLLM's,
/// unfitted. Efficiencies stay within what real kernels reach.
pub const TRTLLM_COSTS: ServingCosts = ServingCosts {
    // `trtllm-serve`'s OpenAI server before a request reaches the executor
    // (≈ 57 ms: InferenceX's TTFT at light load is 80–170 ms where the
    // passes take 20–60 ms) and ≈ 0.04 ms from a token to the client.
    // MLPerf's harnesses call the executor in-process: the calibration runs
    // its rows without these two.
    frontend_in_ns: 57_088_443,
    frontend_out_ns: 38_795,
    // The executor's CPU time per step (≈ 2.8 ms) and per sequence (≈ 5 µs).
    step_ns: 2_759_985,
    per_seq_ns: 4_837,
    // Launches and small kernels per layer: ≈ 25 µs in a decode step, ≈ 230 µs
    // in a pass with prompt tokens (no CUDA graph there).
    layer_decode_ns: 24_671,
    layer_prefill_ns: 230_111,
    // Not fitted: no 16-bit rows.
    compute_prefill: 0.85,
    compute_decode: 0.85,
    // FP8 and FP4 GEMMs reach 0.72 of their peak.
    compute_fp8: 0.720,
    bandwidth_decode: 0.92,
    bandwidth_prefill: 0.790,
    bandwidth_kv: 0.642,
    compute_attention: 0.531,
    // All-reduce: ≈ 4.3 µs each, 0.27 of the link's bandwidth (small
    // messages; PCIe and NVLink alike).
    allreduce_ns: 4_254,
    link_efficiency: 0.267,
    overlap_exponent: 4.0,
    // Routed experts stream at 0.64 of the bandwidth, once per tile of ≈ 131
    // rows; an MoE block takes at least 67 µs per layer.
    bandwidth_experts: 0.637,
    compute_experts: 0.85,
    expert_tile_rows: 130.727,
    moe_layer_ns: 67_027,
};

/// Where [`SGLANG_COSTS`] come from, in a sentence.
const SGLANG_CALIBRATION: &str = "fitted to InferenceX results of SGLang serving DeepSeek-R1 on H200, B200, B300, MI300X, MI325X and MI355X, December 2026";

/// SGLang's costs on NVIDIA GPUs (see [`Profile::SGLANG`]): the same parts
/// as vLLM's, fitted by `tlab calibrate --fit --software sglang
/// data/calibration/public/inferencex-dsr1-given.csv` on 7 December 2026 to
/// InferenceX's co-located SGLang runs of DeepSeek-R1 on H200, B200 and
/// B300 (227 rows: throughput per GPU, median time per token, median
/// TTFT), 13 rounds of the coordinate search from TensorRT-LLM 1.x's
/// constants, each row weighed by the size of its log error (loss 0.324:
/// a typical row 1.38× off on one figure), shares of a peak kept at 0.3 or
/// more. Every row runs FP8 or FP4 weights: the 16-bit GEMMs' shares are
/// vLLM's, unfitted. The front end and the launches of prompt passes end
/// at their ranges' ends: these sweeps' TTFTs ask for more than the parts
/// give (launch flags and versions differ from sweep to sweep).
pub const SGLANG_COSTS: ServingCosts = ServingCosts {
    // API server, tokenizer manager and the scheduler's intake before a
    // request's first pass (100 ms, the range's end: TTFT at one client is
    // 71–157 ms on B200 and B300; InferenceX's B200 scripts let the
    // scheduler read new requests every 10–30 steps), ≈ 0.3 ms from a
    // token to the client.
    frontend_in_ns: 100_000_000,
    frontend_out_ns: 296_344,
    // The scheduler's CPU time per step (≈ 2.9 ms) and per running
    // request (≈ 34 µs: Python bookkeeping).
    step_ns: 2_864_454,
    per_seq_ns: 34_129,
    // Launches per layer: ≈ 16 µs in a decode step (CUDA graphs), 500 µs
    // in a prompt pass (the range's end).
    layer_decode_ns: 15_708,
    layer_prefill_ns: 500_000,
    // Not fitted: no 16-bit rows.
    compute_prefill: 0.85,
    compute_decode: 0.85,
    compute_fp8: 0.836,
    bandwidth_decode: 0.920,
    bandwidth_prefill: 0.573,
    bandwidth_kv: 0.920,
    compute_attention: 0.834,
    // All-reduce: ≈ 4.8 µs each, 0.54 of NVLink's bandwidth.
    allreduce_ns: 4_800,
    link_efficiency: 0.538,
    overlap_exponent: 4.0,
    // Routed experts stream at 0.64 of the bandwidth, once per tile of ≈ 30
    // rows; an MoE block takes at least 62 µs per layer.
    bandwidth_experts: 0.637,
    compute_experts: 0.85,
    expert_tile_rows: 29.834,
    moe_layer_ns: 62_246,
};

/// SGLang's ROCm build's costs on AMD Instinct GPUs (see
/// [`Profile::SGLANG_ROCM`]): fitted by `tlab calibrate --fit --software
/// sglang-rocm data/calibration/public/inferencex-dsr1-given.csv` on 7
/// December 2026 to InferenceX's co-located SGLang runs of DeepSeek-R1 on
/// MI300X, MI325X and MI355X (282 rows), 11 rounds from TensorRT-LLM 1.x's
/// constants (the loss 0.235, a typical row 1.26× off on one figure,
/// falling under 0.01 % a round), each row weighed by the size of its log
/// error. FP8 GEMMs and weight streaming end at the public fits' floor of
/// 0.3 of their peaks: these runs (SGLang versions of late 2025 to 2026,
/// MI300X's the oldest) are slower than the datasheets give, and the fit
/// unbounded put FP8 GEMMs at 0.07.
pub const SGLANG_ROCM_COSTS: ServingCosts = ServingCosts {
    // API server and intake before the first pass (≈ 29 ms), ≈ 6 µs from a
    // token to the client.
    frontend_in_ns: 28_990_223,
    frontend_out_ns: 5_894,
    // The scheduler per step (≈ 4.4 ms) and per running request.
    step_ns: 4_415_976,
    per_seq_ns: 457,
    // Launches per layer: ≈ 25 µs in a decode step, ≈ 146 µs in a prompt
    // pass.
    layer_decode_ns: 24_670,
    layer_prefill_ns: 146_306,
    // Not fitted: no 16-bit rows.
    compute_prefill: 0.85,
    compute_decode: 0.85,
    compute_fp8: 0.300,
    bandwidth_decode: 0.300,
    bandwidth_prefill: 0.507,
    bandwidth_kv: 0.920,
    compute_attention: 0.850,
    // All-reduce: ≈ 4.3 µs each, 0.31 of Infinity Fabric's bandwidth.
    allreduce_ns: 4_253,
    link_efficiency: 0.307,
    overlap_exponent: 4.0,
    // Routed experts stream at 0.40 of the bandwidth, once per tile of ≈ 44
    // rows; an MoE block takes at least 48 µs per layer.
    bandwidth_experts: 0.398,
    compute_experts: 0.85,
    expert_tile_rows: 44.405,
    moe_layer_ns: 48_174,
};
