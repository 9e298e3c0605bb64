//! A serving profile of the user's own: vLLM's physical parts refitted to a
//! run the user measured on their hardware (`tlab calibrate --measured DIR
//! --fit`), carried in a scenario as `serving.profile`, with the setup it was
//! fitted on and the errors it reached there. The ranges every constant may
//! take — for the fit and for a profile read from a file or a link — are
//! defined once, here ([`KNOBS`], [`MOE_KNOBS`], [`MEMORY_RANGES`]).

use super::{Gpu, MemoryModel, Model, Profile, ServingCosts, Timing};
use serde::{Deserialize, Serialize};

/// A constant a fit may move: its name, how to read and write it, and the
/// physically plausible range it stays in (efficiencies are fractions of the
/// datasheet peak that real kernels reach; times are ns).
pub struct Knob {
    /// The field of [`ServingCosts`].
    pub name: &'static str,
    /// Its value.
    pub get: fn(&ServingCosts) -> f64,
    /// Set it.
    pub set: fn(&mut ServingCosts, f64),
    /// The range it stays in.
    pub range: (f64, f64),
}

/// A [`Knob`] on a field of [`ServingCosts`] (`ns`: integer nanoseconds).
macro_rules! knob {
    ($field:ident, ns, $lo:expr, $hi:expr) => {
        Knob {
            name: stringify!($field),
            get: |c| c.$field as f64,
            set: |c, v| c.$field = v as u64,
            range: ($lo, $hi),
        }
    };
    ($field:ident, $lo:expr, $hi:expr) => {
        Knob {
            name: stringify!($field),
            get: |c| c.$field,
            set: |c, v| c.$field = v,
            range: ($lo, $hi),
        }
    };
}

/// The dense model's constants: the API server, scheduler, launches, and
/// kernels' shares of peak (≤ 0.85 of tensor peak, ≤ 0.92 of HBM bandwidth,
/// ≤ 0.95 of link bandwidth: what real kernels reach).
pub const KNOBS: [Knob; 14] = [
    knob!(frontend_in_ns, ns, 0.0, 100e6),
    knob!(frontend_out_ns, ns, 0.0, 50e6),
    knob!(step_ns, ns, 0.0, 20e6),
    knob!(per_seq_ns, ns, 0.0, 500e3),
    knob!(layer_decode_ns, ns, 0.0, 200e3),
    knob!(layer_prefill_ns, ns, 0.0, 500e3),
    knob!(compute_prefill, 0.05, 0.85),
    knob!(compute_decode, 0.05, 0.85),
    knob!(bandwidth_decode, 0.2, 0.92),
    knob!(bandwidth_prefill, 0.2, 0.92),
    knob!(bandwidth_kv, 0.05, 0.92),
    knob!(compute_attention, 0.05, 0.85),
    knob!(allreduce_ns, ns, 0.0, 200e3),
    knob!(link_efficiency, 0.1, 0.95),
];

/// What only mixture-of-experts runs inform: streaming experts' weights,
/// their tile of rows, and the MoE block's floor per layer. (Their grouped
/// GEMMs' share of the tensor peak is not fitted: a whole tile computes at
/// the dense GEMMs' share; fitted, it trades with the tile along a ridge
/// light load cannot resolve — docs/calibration.md.)
pub const MOE_KNOBS: [Knob; 3] = [
    knob!(bandwidth_experts, 0.1, 0.92),
    knob!(expert_tile_rows, 8.0, 1024.0),
    // Up to 400 µs: ROCm's chain of MoE kernels (SGLang's ROCm build) is
    // longer than CUDA's under graphs.
    knob!(moe_layer_ns, ns, 0.0, 400e3),
];

/// Constants the vLLM fit does not move, with the ranges a profile file may
/// give them (the public files' fit moves `compute_fp8`: their rows run FP8
/// and FP4 weights).
pub const FIXED_KNOBS: [Knob; 3] = [
    knob!(compute_fp8, 0.05, 0.85),
    knob!(compute_experts, 0.02, 0.85),
    knob!(overlap_exponent, 1.0, 8.0),
];

/// The ranges of vLLM's memory reservations: memory outside PyTorch per GPU
/// (bytes; vLLM's start-up logs show 0.3–1.5 GB, the CUDA context alone
/// about 0.3 GB) and the sampler's FP32 logit copies in its profiling pass.
pub const MEMORY_RANGES: [(&str, f64, f64); 2] = [
    ("non_torch_bytes", 0.3e9, 8e9),
    ("sampler_logit_copies", 0.0, 64.0),
];

/// A vLLM profile fitted to a user's measured run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FittedProfile {
    /// What the user calls it (shown beside every number it times).
    pub name: String,
    /// The step-time constants.
    pub costs: ServingCosts,
    /// vLLM's memory outside PyTorch per GPU, bytes (sizes the KV cache).
    pub non_torch_bytes: f64,
    /// FP32 logit copies the sampler's profiling pass holds (sizes the KV cache).
    pub sampler_logit_copies: f64,
    /// The setup it was fitted on and how well it fits there.
    pub validated: Validated,
}

/// Where a fitted profile was fitted, and its error there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Validated {
    /// The measured run, in words (model, GPU, requests, file).
    pub source: String,
    /// The GPU it ran on.
    pub gpu: Gpu,
    /// The model it served.
    pub model: Model,
    /// GPUs per replica.
    pub tp: u32,
    /// Tokens (prompt and generated) the run offered per second per replica:
    /// the heaviest load the profile was checked at.
    pub tokens_per_s: f64,
    /// Mean absolute error after the fit, % (of mean, p50, p90, p99), per
    /// metric: TTFT, time per output token, end-to-end.
    pub error_pct: [f64; 3],
}

impl FittedProfile {
    /// vLLM's profile as shipped (its constants and KV reservation), named
    /// and validated as given: where a fit starts.
    pub fn from_vllm(name: &str, validated: Validated) -> FittedProfile {
        let (non_torch_bytes, sampler_logit_copies) = match Profile::VLLM.memory {
            MemoryModel::Vllm {
                non_torch_bytes,
                sampler_logit_copies,
            } => (non_torch_bytes, sampler_logit_copies),
            MemoryModel::TensorrtLlm => (0.0, 0.0),
        };
        FittedProfile {
            name: name.to_owned(),
            costs: super::VLLM_COSTS,
            non_torch_bytes,
            sampler_logit_copies,
            validated,
        }
    }

    /// The profile the engine times passes and sizes the KV cache with.
    pub fn profile(&self) -> Profile {
        Profile {
            timing: Timing::Serving(self.costs),
            memory: MemoryModel::Vllm {
                non_torch_bytes: self.non_torch_bytes,
                sampler_logit_copies: self.sampler_logit_copies,
            },
            prefix_caching: true,
            async_scheduling: true,
            step_time_scale: 1.0,
            prefill_time_scale: 1.0,
        }
    }

    /// Every value outside its range, as `field must be lo..=hi, got v`
    /// under `prefix` (`serving.profile`).
    pub fn problems(&self, prefix: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut check = |name: &str, v: f64, (lo, hi): (f64, f64)| {
            if !(v.is_finite() && v >= lo && v <= hi) {
                out.push(format!(
                    "{prefix}.{name} must be {}..={}, got {}",
                    crate::format::show(lo),
                    crate::format::show(hi),
                    crate::format::show(v)
                ));
            }
        };
        for k in KNOBS.iter().chain(&MOE_KNOBS).chain(&FIXED_KNOBS) {
            check(&format!("costs.{}", k.name), (k.get)(&self.costs), k.range);
        }
        let [(nt, nt_lo, nt_hi), (sc, sc_lo, sc_hi)] = MEMORY_RANGES;
        check(nt, self.non_torch_bytes, (nt_lo, nt_hi));
        check(sc, self.sampler_logit_copies, (sc_lo, sc_hi));
        let v = &self.validated;
        check("validated.tokens_per_s", v.tokens_per_s, (0.0, 1e9));
        for (name, e) in ["ttft", "tpot", "e2e"].iter().zip(v.error_pct) {
            check(&format!("validated.error_pct.{name}"), e, (0.0, 1e6));
        }
        for (field, text) in [("name", &self.name), ("validated.source", &v.source)] {
            if text.chars().count() > 300 {
                out.push(format!("{prefix}.{field} must be at most 300 characters"));
            }
        }
        out
    }

    /// How far to trust this profile for `gpu`, `model` at `tp` under a load
    /// of `tokens_per_s` per replica: validated, with its own error, on the
    /// setup it was fitted on; an estimate elsewhere, saying what differs.
    pub fn trust(&self, gpu: Gpu, model: Model, tp: u32, tokens_per_s: f64) -> String {
        let v = &self.validated;
        let mut differs = Vec::new();
        if gpu != v.gpu {
            differs.push(format!(
                "GPU {} (fitted on {})",
                gpu.spec().name,
                v.gpu.spec().name
            ));
        }
        if model != v.model {
            differs.push(format!(
                "model {} (fitted on {})",
                model.name(),
                v.model.name()
            ));
        }
        if tp != v.tp {
            differs.push(format!("{tp} GPUs per replica (fitted on {})", v.tp));
        }
        // A fifth over the measured load: the same regime, not a new one.
        if tokens_per_s > v.tokens_per_s * 1.2 {
            differs.push(format!(
                "{} tokens/s per replica (fitted up to {})",
                crate::format::rounded(tokens_per_s),
                crate::format::rounded(v.tokens_per_s)
            ));
        }
        let [ttft, tpot, e2e] = v.error_pct;
        let errors = format!(
            "TTFT {ttft:.0} %, time per output token {tpot:.0} %, end-to-end {e2e:.0} % (mean error of mean, p50, p90, p99)"
        );
        if differs.is_empty() {
            format!("Trust: validated on your own run: {errors}.")
        } else {
            format!(
                "Trust: an estimate — this setup differs from the run the profile was fitted on: {}. On that run: {errors}.",
                differs.join(", ")
            )
        }
    }
}
