//! Mixture-of-experts layers and multi-head latent attention: the parts of a
//! model's dimensions that make its parameters in memory, its parameters per
//! token and its KV cache per token three different numbers.

use serde::{Deserialize, Serialize};

/// A mixture-of-experts feed-forward block, as in the model's `config.json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Moe {
    /// Routed experts per MoE layer (`num_local_experts`, `n_routed_experts`).
    pub experts: u32,
    /// Routed experts each token runs through (`num_experts_per_tok`, top-k).
    pub experts_per_token: u32,
    /// Shared experts every token runs through (DeepSeek-V3: 1, Llama 4: 1).
    #[serde(default)]
    pub shared_experts: u32,
    /// Intermediate size of one expert's gated MLP (`moe_intermediate_size`).
    pub expert_ffn: u32,
    /// Leading layers that are dense, with the model's `ffn` (DeepSeek-V3's
    /// `first_k_dense_replace` = 3).
    #[serde(default)]
    pub first_dense_layers: u32,
    /// Of the layers after those, every n-th is MoE and the rest dense
    /// (Llama 4's `interleave_moe_layer_step`; 1 = all of them).
    #[serde(default = "one")]
    pub every: u32,
    /// Whether each expert's projections carry biases (gpt-oss).
    #[serde(default)]
    pub expert_bias: bool,
}

fn one() -> u32 {
    1
}

impl Moe {
    /// Parameters of one routed expert (gate, up and down projections).
    pub fn expert_params(&self, hidden: f64) -> f64 {
        let f = f64::from(self.expert_ffn);
        3.0 * hidden * f
            + if self.expert_bias {
                2.0 * f + hidden
            } else {
                0.0
            }
    }

    /// MoE layers among `layers`.
    pub fn moe_layers(&self, layers: u32) -> u32 {
        layers.saturating_sub(self.first_dense_layers) / self.every.max(1)
    }

    /// Parameters of one MoE layer's feed-forward block with `routed` routed
    /// experts counted: those, the shared experts and the router.
    pub fn block_params(&self, hidden: f64, routed: f64) -> f64 {
        let e = self.expert_params(hidden);
        (routed + f64::from(self.shared_experts)) * e + hidden * f64::from(self.experts)
    }

    /// Expected number of distinct routed experts `tokens` tokens touch in one
    /// layer when each picks `experts_per_token` of `experts` (uniformly, as a
    /// load-balanced router does): E · (1 − (1 − k/E)^T). Small batches read a
    /// fraction of the experts; large ones read them all.
    pub fn expected_distinct(&self, tokens: f64) -> f64 {
        let e = f64::from(self.experts);
        let k = f64::from(self.experts_per_token);
        if tokens <= 0.0 || e <= 0.0 {
            return 0.0;
        }
        e * (1.0 - libm::pow(1.0 - k / e, tokens))
    }

    /// Under expert parallelism each of `gpus` GPUs holds E/gpus whole experts
    /// and a pass lasts as long as its busiest GPU: the expected largest number
    /// of distinct experts any one GPU's share is touched in, with each expert
    /// touched independently with probability 1 − (1 − k/E)^T (the expected
    /// maximum of `gpus` binomials, Σₘ P(max ≥ m)).
    pub fn expected_busiest(&self, tokens: f64, gpus: u32) -> f64 {
        let e = f64::from(self.experts);
        if tokens <= 0.0 || e <= 0.0 || gpus == 0 {
            return 0.0;
        }
        let n = self.experts / gpus;
        let p = 1.0 - libm::pow(1.0 - f64::from(self.experts_per_token) / e, tokens);
        if p >= 1.0 {
            return f64::from(n);
        }
        // Binomial(n, p) CDF by its recurrence; n ≤ 1,024 (validated).
        let q = 1.0 - p;
        let mut pmf = libm::pow(q, f64::from(n));
        let mut cdf = pmf;
        let mut expected = 0.0;
        for m in 1..=n {
            // P(max ≥ m) = 1 − P(one GPU < m)^gpus, with P(< m) = CDF(m − 1).
            expected += 1.0 - libm::pow(cdf.min(1.0), f64::from(gpus));
            pmf *= f64::from(n - m + 1) / f64::from(m) * p / q;
            cdf += pmf;
        }
        expected
    }
}

/// How attention stores keys and values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum Attention {
    /// Multi-head or grouped-query attention: K and V of `kv_heads` heads of
    /// `head_dim` per layer.
    #[default]
    Gqa,
    /// Multi-head latent attention (DeepSeek-V2/V3): one compressed latent of
    /// `kv_lora_rank` plus a shared rotary key of `qk_rope_head_dim` per layer
    /// is all the KV cache holds.
    Mla {
        /// Rank of the query's low-rank projection (`q_lora_rank`).
        q_lora_rank: u32,
        /// Rank of the compressed key-value latent (`kv_lora_rank`).
        kv_lora_rank: u32,
        /// Per-head query/key dimension without rotary embedding.
        qk_nope_head_dim: u32,
        /// Per-head (and shared) rotary dimension.
        qk_rope_head_dim: u32,
        /// Per-head value dimension.
        v_head_dim: u32,
    },
}

impl Attention {
    /// Whether this is ordinary grouped-query attention (serialised by omission).
    pub fn is_gqa(&self) -> bool {
        *self == Attention::Gqa
    }
}

/// Parameters of one MLA attention block for `heads` query heads.
pub(super) fn mla_params(hidden: f64, heads: f64, a: &Attention) -> f64 {
    let Attention::Mla {
        q_lora_rank,
        kv_lora_rank,
        qk_nope_head_dim,
        qk_rope_head_dim,
        v_head_dim,
    } = *a
    else {
        return 0.0;
    };
    let (ql, kvl) = (f64::from(q_lora_rank), f64::from(kv_lora_rank));
    let (nope, rope, v) = (
        f64::from(qk_nope_head_dim),
        f64::from(qk_rope_head_dim),
        f64::from(v_head_dim),
    );
    // q: down-projection, its norm, up-projection to every head's (nope + rope);
    // kv: down-projection to the latent and the shared rotary key, its norm,
    // up-projection to every head's (nope key + value); output projection.
    hidden * ql
        + ql
        + ql * heads * (nope + rope)
        + hidden * (kvl + rope)
        + kvl
        + kvl * heads * (nope + v)
        + heads * v * hidden
}
