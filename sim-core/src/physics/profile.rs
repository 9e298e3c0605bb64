//! Serving-software profiles: what the engine that runs the model adds to the
//! hardware's roofline. A profile is made of physical parts — the API server's
//! time per request, the scheduler's time per step and per sequence, kernel
//! launches per layer, the fractions of peak bandwidth and compute real kernels
//! reach (separately for passes with prompt tokens and decode-only passes, and
//! for reading the KV cache), tensor-parallel all-reduces, and how the engine
//! sizes its KV cache. The same profile serves every GPU and model: there are
//! no per-model, per-GPU or per-row factors.

use super::{Efficiency, Gpu, ModelDims};

/// `docs/calibration.md`'s errors for dense models on H100 (mean absolute
/// error per metric over both files' dense rows, and a load the fit never saw).
const TRUST_H100_DENSE: &str = "Trust: on H100, dense models of 7–70B at TP 1–4 are within 6–8 % (mean error per metric) of 18 real vLLM runs (up to 20 req/s); fitted at ≤ 10 req/s, the 20 req/s stages stay within 4–7 %.";
/// The same for mixture-of-experts models like Mixtral and Llama-4-Scout.
const TRUST_H100_MOE: &str = "Trust: on H100, Mixtral-8x7B and Llama-4-Scout are within 4–10 % (mean error per metric) of 11 real vLLM runs up to 20 req/s; fitted at ≤ 10 req/s, the 20 req/s stages stay within 1–8 %, and either model left out of the fit is predicted within 2 points of in sample. Other MoE models with 8–16 experts: about ±15 %.";
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
}

impl ServingSoftware {
    /// Every profile, in menu order.
    pub const ALL: [ServingSoftware; 3] = [
        ServingSoftware::Vllm,
        ServingSoftware::TensorrtLlm1,
        ServingSoftware::TensorrtLlm,
    ];

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            ServingSoftware::Vllm => "vLLM",
            ServingSoftware::TensorrtLlm => "TensorRT-LLM",
            ServingSoftware::TensorrtLlm1 => "TensorRT-LLM 1.x",
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
        }
    }

    /// What it was fitted to, in a few words (a menu's option).
    pub fn calibration_short(self) -> &'static str {
        match self {
            ServingSoftware::Vllm => "fitted to 29 real runs, 2026",
            ServingSoftware::TensorrtLlm => "NVIDIA's 2023 tables",
            ServingSoftware::TensorrtLlm1 => "fitted to MLPerf and InferenceX, 2026",
        }
    }

    /// How far to trust this profile's step times for `model` on `gpu`, in
    /// a sentence: the errors `docs/calibration.md` measured for that GPU and
    /// model family, or that nothing was measured there.
    pub fn trust(self, gpu: Gpu, model: &ModelDims) -> String {
        let moe = model.moe.is_some();
        let latent = !model.attention.is_gqa();
        match self {
            ServingSoftware::TensorrtLlm => format!(
                "Trust: within 15 % of NVIDIA's published throughput and 20 % of its batch-1 TTFT (Llama-2 7B/70B on H100, A100, L40S), and within 9–24 % of TensorRT-LLM 1.0's offline throughput for Llama-3.3-70B and Llama-3.1-405B on H100, H200 and B200.{}",
                mlperf_trust(self, gpu, moe || latent)
            ),
            ServingSoftware::TensorrtLlm1 => trtllm_trust(gpu, moe || latent),
            ServingSoftware::Vllm if gpu == Gpu::Rtx4090 && !moe && !latent => {
                "Trust: one real vLLM 0.19 run on an RTX 4090 was compared (Llama-3.1-8B, 300 requests at 10 req/s, KV-bound; `tlab calibrate --measured`): time per output token within 2–5 % at the mean and median (25 % at p90), but TTFT and end-to-end 25–39 % high, because the simulated KV cache holds 18 % fewer tokens than vLLM 0.19 reported. Treat queueing on a full card as pessimistic, other models as ±25 %.".to_owned()
            }
            ServingSoftware::Vllm if gpu != Gpu::H100 => format!(
                "Trust: no real {} runs of today's vLLM were compared; its datasheet peaks drive the H100-fitted constants. Treat numbers as ±25 %{}.{}",
                gpu.spec().name,
                if moe || latent {
                    ", more for large mixture-of-experts models"
                } else {
                    ""
                },
                mlperf_trust(self, gpu, moe || latent)
            ),
            ServingSoftware::Vllm if latent || model.moe.is_some_and(|m| m.experts > 16) => {
                "Trust: mixture-of-experts models with many experts or latent attention (DeepSeek-V3, Qwen3-30B-A3B, gpt-oss) have no runs to fit; the constants come from Mixtral and Llama-4-Scout. Against published vLLM benchmarks, gpt-oss-120b's time per token is within 11 % and its bursts on one H100 within 20 %, but on two its prompt-heavy throughput is +195 %, and DeepSeek-R1 on 8×H200 shows 2.1–2.7 times the measured throughput and half the measured time per token: read throughput as an upper bound, time per token as a lower bound.".to_owned()
            }
            ServingSoftware::Vllm if moe => TRUST_H100_MOE.to_owned(),
            ServingSoftware::Vllm => TRUST_H100_DENSE.to_owned(),
        }
    }

    /// The profile's constants.
    pub fn profile(self) -> Profile {
        match self {
            ServingSoftware::Vllm => Profile::VLLM,
            ServingSoftware::TensorrtLlm => Profile::TENSORRT_LLM,
            ServingSoftware::TensorrtLlm1 => Profile::TENSORRT_LLM_1,
        }
    }
}

/// What MLPerf Inference results say of `software` on `gpu`, compared and
/// not fitted (`docs/calibration-public.md`, `tlab calibrate` on the public
/// files): Llama-2-70B's saturated throughput per GPU kind, the time per
/// token at the benchmarks' rates, and mixture-of-experts models. Empty
/// where no result was compared.
fn mlperf_trust(software: ServingSoftware, gpu: Gpu, moe: bool) -> String {
    let dense = match (software, gpu) {
        (ServingSoftware::TensorrtLlm, Gpu::B200) => "within 2 % (19 runs)",
        (ServingSoftware::TensorrtLlm, Gpu::RtxPro6000) => "within 6 % (11 runs)",
        (ServingSoftware::TensorrtLlm, Gpu::H100) => "within 11 % (22 runs)",
        (ServingSoftware::TensorrtLlm, Gpu::H200) => "23 % low (28 runs)",
        (ServingSoftware::TensorrtLlm, Gpu::B300) => "21 % high (4 runs)",
        (ServingSoftware::Vllm, Gpu::Mi325x) => "within 3 % (6 runs, vLLM on ROCm)",
        (ServingSoftware::Vllm, Gpu::Mi355x) => "13 % high (6 runs, vLLM on ROCm)",
        (ServingSoftware::Vllm, Gpu::Mi300x) => "27 % high (12 runs, vLLM on ROCm)",
        _ => return String::new(),
    };
    format!(
        " MLPerf Inference on {}, compared and not fitted: Llama-2-70B's offline throughput {dense}, but the time per token at the benchmarks' rates 35–80 % too short{}.",
        gpu.spec().name,
        if moe {
            "; mixture-of-experts models 20–120 % too fast"
        } else {
            ""
        }
    )
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

/// How far to trust the TensorRT-LLM 1.x profile on `gpu`: the errors
/// `docs/calibration-public.md` measured on the rows it was fitted to (no
/// GPU's rows have been left out of the fit and scored yet, so none is a
/// held-out figure, and the sentence says so).
fn trtllm_trust(gpu: Gpu, moe: bool) -> String {
    // Held out: the fit run without the GPU's rows (`tlab calibrate --fit
    // --leave-out GPU`), its rows scored apart (docs/calibration-public.md).
    // Each: the dense figure, the experts' (shown for a mixture of
    // experts), the server runs within ±15 % and their median ratio.
    let held_out = match gpu {
        Gpu::B200 => Some((
            "Llama-2-70B's offline throughput 16 % low (19 runs)",
            "; DeepSeek-R1's median time per token 28 % and TTFT 29 % off (InferenceX, 100 runs)",
            55,
            "0.87",
        )),
        Gpu::H100 => Some((
            "Llama-2-70B's offline throughput within 11 % (8 % low on average, 22 runs), Mixtral-8x7B's 11 % low (5 runs)",
            "",
            14,
            "0.80",
        )),
        Gpu::H200 => Some((
            "Llama-2-70B's offline throughput 37 % high (28 runs)",
            "; DeepSeek-R1's median time per token 20 % and TTFT 14 % off (InferenceX, 56 runs)",
            29,
            "0.79",
        )),
        Gpu::B300 => Some((
            "Llama-2-70B's offline throughput 14 % low (4 runs)",
            "; DeepSeek-R1's 20 % low (4 runs)",
            40,
            "0.89",
        )),
        Gpu::RtxPro6000 => Some((
            "Llama-2-70B's offline throughput within 3 % (11 runs)",
            "; Mixtral-8x7B's 67 % low (4 runs)",
            0,
            "0.62",
        )),
        _ => None,
    };
    if let Some((dense, experts, server, median)) = held_out {
        let experts = if moe { experts } else { "" };
        return format!(
            "Trust: TensorRT-LLM results on {} held out of the fit: {dense}{experts}. At the benchmarks' latency limits, its highest rate is within ±15 % of MLPerf's on {server} % of server runs (median {median}× of MLPerf's).",
            gpu.spec().name
        );
    }
    format!(
        "Trust: an estimate — no TensorRT-LLM results on {} were compared. Held out of the fit, the GPUs checked so far are 3 % (RTX PRO 6000), 11 % (H100), 14 % (B300), 16 % (B200) and 37 % (H200) off on Llama-2-70B's offline throughput, and 14–29 % on DeepSeek-R1's time per token and TTFT. Treat numbers as ±35 %.",
        gpu.spec().name
    )
}

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
