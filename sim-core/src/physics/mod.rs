//! GPU forward-pass timing from the physics of the hardware and the model.
//!
//! One function, [`StepModel::step_time_ns`], maps a batch's shape to a duration:
//! a roofline — the larger of compute time and memory time — plus a fixed per-step
//! overhead and, under tensor parallelism, the all-reduces. Hardware and model
//! figures come from `shared/reference.md` §1–§3; efficiencies live in
//! [`Efficiency::CALIBRATED`] with their sources; `docs/calibration.md` shows how
//! far the model is from published measurements.

mod catalogue;
mod fitted;
mod gpu;
mod gpu_specs;
mod memory;
mod moe;
mod pass;
mod power;
mod profile;
mod trust;

pub use catalogue::{Model, ModelDims, Precision, SlidingWindow};
pub use fitted::{FIXED_KNOBS, FittedProfile, KNOBS, Knob, MEMORY_RANGES, MOE_KNOBS, Validated};
pub use gpu::{CustomGpu, Gpu, GpuSpec, IDLE_SHARE, Platform, Topology};
pub use memory::{Deployment, DraftMemory, RUNTIME_OVERHEAD_BYTES_PER_GPU};
pub use moe::{Attention, Moe};
pub use power::{POWER_COEFFICIENTS, Power, PowerCoefficients};
pub use profile::{
    MemoryModel, Profile, SGLANG_COSTS, SGLANG_ROCM_COSTS, ServingCosts, ServingSoftware,
    TRTLLM_COSTS, Timing, VLLM_COSTS,
};

/// Tokens per KV-cache block (vLLM's default block size).
pub const KV_BLOCK_TOKENS: u32 = 16;

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
    /// Sequences whose prompt (or a chunk of it) is in the pass.
    pub prefill_seqs: u64,
    /// Sequences generating one token each.
    pub decode_seqs: u64,
    /// Σ of the decoding sequences' context lengths.
    pub decode_context_tokens: u64,
    /// Draft tokens the pass verifies beside the decoding sequences' own
    /// (speculative decoding: k per sequence); each runs through every
    /// matrix multiply and attends to its sequence's context.
    pub speculative_tokens: u64,
}

/// Everything needed to time a forward pass on one replica, precomputed.
#[derive(Clone, Debug, PartialEq)]
pub struct StepModel {
    params: f64,
    /// Parameters a token runs through (= `params` for a dense model).
    active_params: f64,
    /// Parameters of all routed experts (0 for a dense model).
    routed_params: f64,
    weight_bytes: f64,
    /// Bytes of all routed experts.
    expert_bytes: f64,
    moe: Option<Moe>,
    /// GPUs the experts are spread over whole (expert parallelism), or 0 when
    /// each expert is split across the replica's GPUs.
    expert_gpus: u32,
    /// The busiest GPU's expected experts by pass tokens, as computed
    /// (expert parallelism only).
    busiest: BusiestMemo,
    kv_bytes_per_token: f64,
    /// Sliding-window layers: their window (tokens), their KV bytes per
    /// token, and their share of the layers (None without).
    sliding: Option<(f64, f64, f64)>,
    /// Attention FLOPs per token-pair in a decode step (4 · layers · q_heads ·
    /// head_dim for grouped-query attention).
    attn_flops_per_pair: f64,
    /// The same in a pass with prompt tokens (differs under MLA).
    attn_flops_per_pair_prefill: f64,
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
    /// How passes are timed (the fields above serve `Timing::TensorrtLlm`).
    timing: Timing,
    /// Every pass's time multiplied by this ([`super::Profile::step_time_scale`]).
    scale: f64,
    /// A pass carrying prompt tokens multiplied by this too
    /// ([`super::Profile::prefill_time_scale`]).
    prefill_scale: f64,
    /// Dense 16-bit peak of one GPU, FLOP/s.
    peak_16: f64,
    /// The low-precision (FP8 or FP4) peak the matrix multiplies run at,
    /// when they do.
    peak_low: Option<f64>,
    /// Parameters of the input embedding table when it is not shared with the
    /// output head: a pass looks up a few rows of it, it neither streams nor
    /// multiplies the whole table.
    embedding_params: f64,
}

/// Pass token counts below which [`BusiestMemo`] keeps its values (8 bytes each).
const MEMO_TOKENS: usize = 16_384;

/// A memo of `Moe::expected_busiest` by token count: each value sums up to
/// E/gpus binomial terms (a `pow` each, ≈ 2 µs at 512 experts a GPU), and a
/// run's passes repeat the same few thousand token counts. It caches a pure
/// function, so it takes no part in comparing models.
#[derive(Clone, Debug, Default)]
struct BusiestMemo(core::cell::RefCell<Vec<f64>>);

impl PartialEq for BusiestMemo {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl BusiestMemo {
    fn get(&self, tokens: f64, compute: impl FnOnce() -> f64) -> f64 {
        let i = tokens as usize;
        if i as f64 != tokens || i >= MEMO_TOKENS {
            return compute();
        }
        let mut memo = self.0.borrow_mut();
        if memo.len() <= i {
            memo.resize(i + 1, f64::NAN);
        }
        if memo[i].is_nan() {
            memo[i] = compute();
        }
        memo[i]
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
        let mut cost = self.unscaled_step(s);
        cost.time_ns = self.scaled(self.with_prefill_scaled(s, cost.time_ns));
        cost
    }

    /// `ns`, the unscaled time of pass `s`, times the prefill scale when
    /// the pass carries prompt tokens: exactly `ns` at a prefill scale of 1,
    /// or for a pass of decodes alone.
    fn with_prefill_scaled(&self, s: &BatchShape, ns: u64) -> u64 {
        if self.prefill_scale == 1.0 || s.prefill_tokens == 0 {
            return ns;
        }
        (ns as f64 * self.prefill_scale).round().max(1.0) as u64
    }

    /// A pass's cost as the profile times it, before [`Self::scaled`].
    fn unscaled_step(&self, s: &BatchShape) -> StepCost {
        match self.timing {
            Timing::TensorrtLlm(_) => self.tensorrt_llm_step(s),
            Timing::Serving(c) => self.serving_step(&c, s),
        }
    }

    /// `ns` times the step-time scale, to the nearest ns and at least 1
    /// (exactly `ns` at scale 1, so unscaled runs keep their numbers).
    fn scaled(&self, ns: u64) -> u64 {
        if self.scale == 1.0 {
            ns
        } else {
            (ns as f64 * self.scale).round().max(1.0) as u64
        }
    }

    /// A pass run inside another's engine step (a speculative proposer's
    /// draft pass): its cost without the scheduler's per-step and
    /// per-sequence time, which the step it belongs to pays once.
    pub fn inner_pass(&self, s: &BatchShape) -> StepCost {
        let mut cost = self.unscaled_step(s);
        cost.time_ns = self.with_prefill_scaled(s, cost.time_ns);
        let scheduler = match self.timing {
            Timing::Serving(c) => c.step_ns + c.per_seq_ns * (s.decode_seqs + s.prefill_seqs),
            Timing::TensorrtLlm(e) => e.step_overhead_ns,
        };
        cost.time_ns = self.scaled(cost.time_ns.saturating_sub(scheduler).max(1));
        cost
    }

    /// Whether the engine's costs are the legacy soft roofline.
    pub fn timing(&self) -> Timing {
        self.timing
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
        // At least 1 ns a pass, as the engine times every pass: a toy model's
        // roofline rounds to 0 ns and would make the bound infinite.
        f64::from(batch) / (self.step_time_ns(&shape).max(1) as f64 * 1e-9)
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod tests_moe;
