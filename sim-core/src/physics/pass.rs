//! A forward pass's time as the profile times it: a serving engine's
//! kernels (GEMMs, attention, expert GEMMs, all-reduces, CPU and launches),
//! or the first version's TensorRT-LLM constants; and the work a pass does
//! (attention FLOPs and KV bytes, the experts it touches).

use super::{BatchShape, Moe, ServingCosts, StepCost, StepModel};

impl StepModel {
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
    pub(super) fn serving_step(&self, c: &ServingCosts, s: &BatchShape) -> StepCost {
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
    pub(super) fn tensorrt_llm_step(&self, s: &BatchShape) -> StepCost {
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
    pub(super) fn attention_work(&self, s: &BatchShape) -> (f64, f64) {
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

    pub(super) fn attn_flops(&self, s: &BatchShape) -> f64 {
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
    pub(super) fn touched_experts(&self, m: &Moe, tokens: f64, distinct: f64) -> f64 {
        let e = f64::from(m.experts);
        match self.expert_gpus {
            0 | 1 => distinct / e,
            g => self.busiest.get(tokens, || m.expected_busiest(tokens, g)) * f64::from(g) / e,
        }
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
mod tests {
    use super::soft_max;

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
}
