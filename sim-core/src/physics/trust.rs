//! How far to trust each serving-software profile, in a sentence per GPU
//! and model family: the errors `docs/calibration.md` and
//! `docs/calibration-public.md` measured, held out where a held-out figure
//! exists, or that nothing was measured there.

use super::{Gpu, ModelDims, ServingSoftware};

/// `docs/calibration.md`'s errors for dense models on H100 (mean absolute
/// error per metric over both files' dense rows, and a load the fit never saw).
const TRUST_H100_DENSE: &str = "Trust: on H100, dense models of 7–70B at TP 1–4 are within 6–8 % (mean error per metric) of 18 real vLLM runs (up to 20 req/s); fitted at ≤ 10 req/s, the 20 req/s stages stay within 4–7 %.";
/// The same for mixture-of-experts models like Mixtral and Llama-4-Scout.
const TRUST_H100_MOE: &str = "Trust: on H100, Mixtral-8x7B and Llama-4-Scout are within 4–10 % (mean error per metric) of 11 real vLLM runs up to 20 req/s; fitted at ≤ 10 req/s, the 20 req/s stages stay within 1–8 %, and either model left out of the fit is predicted within 2 points of in sample. Other MoE models with 8–16 experts: about ±15 %.";

impl ServingSoftware {
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
            ServingSoftware::Sglang => sglang_trust(gpu, latent),
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

/// How far to trust the SGLang profile on `gpu` for a model with (`latent`)
/// or without latent attention: the errors `docs/calibration-public.md`
/// measured on InferenceX's DeepSeek-R1 runs with the GPU held out of its
/// build's fit (throughput per GPU, median time per token, median TTFT:
/// mean absolute error, runs), or "an estimate" beside the held-out range.
fn sglang_trust(gpu: Gpu, latent: bool) -> String {
    let held_out = match gpu {
        Gpu::B200 => Some((21, 13, 54, 106)),
        Gpu::H200 => Some((24, 25, 120, 58)),
        Gpu::B300 => Some((27, 26, 52, 63)),
        Gpu::Mi355x => Some((36, 63, 46, 177)),
        Gpu::Mi300x => Some((69, 36, 26, 100)),
        _ => None,
    };
    let others = if latent {
        ""
    } else {
        " Only DeepSeek-R1 was measured on SGLang: for other models these are an estimate, ±50 %."
    };
    match held_out {
        Some((tput, tpot, ttft, runs)) => format!(
            "Trust: SGLang's DeepSeek-R1 runs on {} held out of the fit (InferenceX, {runs} runs): throughput per GPU within {tput} %, time per token {tpot} %, TTFT {ttft} % (mean error).{others}",
            gpu.spec().name
        ),
        None => format!(
            "Trust: an estimate — no SGLang results on {} were held out of its fit. On the GPUs held out, DeepSeek-R1's throughput per GPU is 21–69 % off, its time per token 13–63 % and its TTFT 26–120 %. Treat numbers as ±50 %.",
            gpu.spec().name
        ),
    }
}
