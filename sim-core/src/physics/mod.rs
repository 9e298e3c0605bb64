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
mod power;
mod profile;

pub use catalogue::{Model, ModelDims, Precision, SlidingWindow};
pub use fitted::{FIXED_KNOBS, FittedProfile, KNOBS, Knob, MEMORY_RANGES, MOE_KNOBS, Validated};
pub use gpu::{CustomGpu, Gpu, GpuSpec, IDLE_SHARE, Topology};
pub use memory::{Deployment, DraftMemory, RUNTIME_OVERHEAD_BYTES_PER_GPU};
pub use moe::{Attention, Moe};
pub use power::{POWER_COEFFICIENTS, Power, PowerCoefficients};
pub use profile::{
    MemoryModel, Profile, ServingCosts, ServingSoftware, TRTLLM_COSTS, Timing, VLLM_COSTS,
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

    /// A serving engine's pass, as the kernels it launches: the linear
    /// layers' GEMMs (their FLOPs against streaming their weights), the
    /// attention kernels (FLOPs of every query–key pair against reading the
    /// KV cache), and for a mixture of experts the grouped expert GEMMs (their
    /// FLOPs on rows padded to whole tiles, against streaming the experts
    /// touched once per tile of rows, never faster than the block's chain of
    /// small kernels). Each kernel overlaps its own compute and memory traffic
    /// imperfectly (`(cᵏ + mᵏ)^(1/k)`); kernels run one after another. Then
    /// the all-reduces of tensor parallelism, and the engine's CPU time (per
    /// step, per sequence) and kernel launches (per layer, more with prompt
    /// tokens).
    fn serving_step(&self, c: &ServingCosts, s: &BatchShape) -> StepCost {
        let prefill = s.prefill_tokens > 0;
        let tokens = (s.prefill_tokens + s.decode_seqs + s.speculative_tokens) as f64;
        let (linear_flops, routed_flops, streamed, experts_read, moe_layers, rows) = match self.moe
        {
            None => {
                let matmul_params = self.params - self.embedding_params;
                (
                    2.0 * matmul_params * tokens,
                    0.0,
                    self.weight_bytes * (matmul_params / self.params),
                    0.0,
                    0,
                    0.0,
                )
            }
            Some(m) => {
                // Everything but the routed experts streams whole (less the
                // input embedding table); of the experts, those the pass's
                // tokens touch. Each token runs through k of the E experts:
                // T·k/E rows per expert, spread over those touched.
                let resident = self.params - self.routed_params;
                let resident_bytes = self.weight_bytes - self.expert_bytes;
                let share = f64::from(m.experts_per_token) / f64::from(m.experts.max(1));
                let routed_active = self.routed_params * share;
                let distinct = m.expected_distinct(tokens);
                (
                    2.0 * (self.active_params - self.embedding_params - routed_active) * tokens,
                    2.0 * routed_active * tokens,
                    resident_bytes * ((resident - self.embedding_params) / resident),
                    self.expert_bytes * self.touched_experts(&m, tokens, distinct),
                    m.moe_layers(self.layers as u32),
                    tokens * share / (distinct / f64::from(m.experts)),
                )
            }
        };
        let k = c.overlap_exponent;
        let (compute_16, weights_bw) = if prefill {
            (c.compute_prefill, c.bandwidth_prefill)
        } else {
            (c.compute_decode, c.bandwidth_decode)
        };
        let linear_rate = match self.peak_low {
            Some(peak) => peak * c.compute_fp8,
            None => self.peak_16 * compute_16,
        };
        let gemm_s = soft_max(
            linear_flops / linear_rate,
            streamed / (self.bandwidth * weights_bw),
            k,
        );
        // Attention runs in 16-bit whatever the weights' format.
        let (attn_flops, kv_bytes) = self.attention_work(s);
        let attn_s = soft_max(
            attn_flops / (self.peak_16 * c.compute_attention),
            kv_bytes / (self.bandwidth * c.bandwidth_kv),
            k,
        );
        let moe_s = match self.moe {
            Some(_) if moe_layers > 0 => {
                // A grouped GEMM cuts each expert's rows into tiles of r
                // rows: a tile's rows are computed whole (padded), and the
                // expert's weights are read again for each tile, once an
                // expert holds more rows than one tile (the weights, hundreds
                // of MB, do not stay in L2 between tiles).
                let tiles = (rows / c.expert_tile_rows).max(1.0);
                let padding = tiles * c.expert_tile_rows / rows;
                let kernels = soft_max(
                    routed_flops * padding / (self.peak_16 * c.compute_experts),
                    experts_read * tiles / (self.bandwidth * c.bandwidth_experts),
                    k,
                );
                // The floor is wall time on every GPU; like the replica-wide
                // terms it is divided by the GPUs below.
                let floor_s = f64::from(moe_layers) * c.moe_layer_ns as f64 * 1e-9 * self.tp;
                soft_max(kernels, floor_s, k)
            }
            _ => 0.0,
        };
        let gpu_s = (gemm_s + attn_s + moe_s) / self.tp;
        let comm_s = self.allreduce_s(c, tokens);
        let seqs = s.prefill_seqs + s.decode_seqs;
        let layer_ns = if prefill {
            c.layer_prefill_ns
        } else {
            c.layer_decode_ns
        };
        let cpu_ns = c.step_ns + c.per_seq_ns * seqs + (self.layers as u64) * layer_ns;
        StepCost {
            time_ns: ((gpu_s + comm_s) * 1e9) as u64 + cpu_ns,
            flops: linear_flops + routed_flops + attn_flops,
            bytes: streamed + experts_read + kv_bytes,
        }
    }

    /// Tensor parallelism's all-reduces of a pass over `tokens`: two a
    /// layer (ring: 2(tp − 1)/tp of the message over the link), each with its
    /// fixed latency; none on one GPU.
    fn allreduce_s(&self, c: &ServingCosts, tokens: f64) -> f64 {
        if self.tp > 1.0 {
            let msg = tokens * self.hidden * 2.0;
            let per =
                msg * 2.0 * (self.tp - 1.0) / self.tp / (self.link_bytes_per_s * c.link_efficiency)
                    + c.allreduce_ns as f64 * 1e-9;
            2.0 * self.layers * per
        } else {
            0.0
        }
    }

    /// The first version's pass (TensorRT-LLM's constants), kept bit for bit.
    fn tensorrt_llm_step(&self, s: &BatchShape) -> StepCost {
        let tokens = (s.prefill_tokens + s.decode_seqs + s.speculative_tokens) as f64;
        let (params, weight_bytes) = match self.moe {
            None => (self.params, self.weight_bytes),
            Some(m) => (
                self.active_params,
                self.weight_bytes - self.expert_bytes
                    + self.expert_bytes
                        * self.touched_experts(&m, tokens, m.expected_distinct(tokens)),
            ),
        };
        let (attn_flops, kv_bytes) = self.attention_work(s);
        let flops = 2.0 * params * tokens + attn_flops;
        let bytes = weight_bytes + kv_bytes;
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

    /// Attention FLOPs of a pass: prompt pairs and decode pairs at their rates.
    /// A pass's attention FLOPs and the KV-cache bytes it reads: the layers
    /// that keep the whole context over every context token; sliding-window
    /// layers over at most their window per sequence (exact when every
    /// sequence is longer than the window, as nearly all are).
    #[inline]
    fn attention_work(&self, s: &BatchShape) -> (f64, f64) {
        let kv_tokens =
            (s.decode_context_tokens + s.prefill_cached_tokens + s.prefill_tokens) as f64;
        let Some((window, sliding_bytes, share)) = self.sliding else {
            return (self.attn_flops(s), kv_tokens * self.kv_bytes_per_token);
        };
        let windowed = BatchShape {
            prefill_attention_pairs: s
                .prefill_attention_pairs
                .min((window * s.prefill_tokens as f64) as u64),
            decode_context_tokens: s
                .decode_context_tokens
                .min((window * s.decode_seqs as f64) as u64),
            ..*s
        };
        let seqs = (s.decode_seqs + s.prefill_seqs) as f64;
        (
            (1.0 - share) * self.attn_flops(s) + share * self.attn_flops(&windowed),
            kv_tokens * self.kv_bytes_per_token + kv_tokens.min(window * seqs) * sliding_bytes,
        )
    }

    fn attn_flops(&self, s: &BatchShape) -> f64 {
        // A verified draft token attends to its sequence's context too.
        let decode_pairs = if s.speculative_tokens > 0 && s.decode_seqs > 0 {
            s.decode_context_tokens as f64
                * (1.0 + s.speculative_tokens as f64 / s.decode_seqs as f64)
        } else {
            s.decode_context_tokens as f64
        };
        if self.attn_flops_per_pair_prefill == self.attn_flops_per_pair {
            let pairs = s.prefill_attention_pairs as f64 + decode_pairs;
            self.attn_flops_per_pair * pairs
        } else {
            self.attn_flops_per_pair_prefill * s.prefill_attention_pairs as f64
                + self.attn_flops_per_pair * decode_pairs
        }
    }

    /// The fraction of the routed experts' bytes a pass of `tokens` tokens
    /// reads, as the replica sees it: the expected distinct experts per layer
    /// over all of them when experts are split across the GPUs; under expert
    /// parallelism, the busiest GPU's share (the pass waits for it) times the
    /// GPUs, since the memory time divides by them.
    /// `distinct` is `m.expected_distinct(tokens)`, which the caller has.
    fn touched_experts(&self, m: &Moe, tokens: f64, distinct: f64) -> f64 {
        let e = f64::from(m.experts);
        match self.expert_gpus {
            0 | 1 => distinct / e,
            g => self.busiest.get(tokens, || m.expected_busiest(tokens, g)) * f64::from(g) / e,
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

/// `max(hi, lo)` softened: `(hiᵏ + loᵏ)^(1/k)`; `k` infinite is the plain max.
/// (`k` = 2 and 4, the exponents the profiles use, are square roots:
/// correctly rounded like every IEEE `sqrt`, so the same on every target,
/// and without `pow` on the hot path. `f64::sqrt`, not `libm::sqrt`: both
/// are correctly rounded, but on wasm32 libm's is a software loop where
/// `f64::sqrt` is the `f64.sqrt` instruction — the step model ran 2× slower
/// in the browser than natively with it.)
fn soft_max(a: f64, b: f64, k: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if hi <= 0.0 || !k.is_finite() {
        hi
    } else if k == 2.0 {
        (hi * hi + lo * lo).sqrt()
    } else if k == 4.0 {
        let r = lo / hi;
        let r2 = r * r;
        hi * (1.0 + r2 * r2).sqrt().sqrt()
    } else {
        hi * libm::pow(1.0 + libm::pow(lo / hi, k), 1.0 / k)
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
#[test]
fn soft_max_square_root_paths_equal_the_general_formula() {
    for (a, b) in [
        (1.0, 0.0),
        (3.0, 4.0),
        (1e-3, 7e-4),
        (2.5, 2.5),
        (1e-9, 1.0),
    ] {
        for k in [2.0, 4.0] {
            let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
            let general = hi * libm::pow(1.0 + libm::pow(lo / hi, k), 1.0 / k);
            let fast = soft_max(a, b, k);
            assert!((fast / general - 1.0).abs() < 1e-12, "{a} {b} {k}");
        }
    }
}
#[cfg(test)]
mod tests_moe;
