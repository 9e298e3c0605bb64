//! A replica's memory: weights, activation workspace, runtime overhead and the
//! KV-cache capacity left, and the step model of the deployment.

use super::{Efficiency, Gpu, KV_BLOCK_TOKENS, Model, Precision, StepModel};

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
