//! The model catalogue: model dimensions and parameter counts, number
//! formats. GPUs are in `gpu.rs`.

use super::moe::{Attention, Moe, mla_params};
use serde::{Deserialize, Serialize};

/// A model's architecture, as in its `config.json`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelDims {
    /// Transformer layers.
    pub layers: u32,
    /// Hidden size.
    pub hidden: u32,
    /// Query heads.
    pub q_heads: u32,
    /// Key/value heads (grouped-query attention when fewer than `q_heads`).
    pub kv_heads: u32,
    /// Dimension of one head.
    pub head_dim: u32,
    /// Intermediate (FFN) size of the gated MLP.
    pub ffn: u32,
    /// Vocabulary size.
    pub vocab: u32,
    /// Whether q/k/v projections have biases (Qwen2.5).
    #[serde(default)]
    pub qkv_bias: bool,
    /// Whether the output head shares the embedding matrix.
    #[serde(default)]
    pub tied_embeddings: bool,
    /// Mixture-of-experts feed-forward blocks (dense when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moe: Option<Moe>,
    /// How attention stores keys and values (grouped-query when absent).
    #[serde(default, skip_serializing_if = "Attention::is_gqa")]
    pub attention: Attention,
    /// Layers that attend only to a window of recent tokens (gpt-oss: every
    /// other layer, 128 tokens); every layer sees the whole context when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sliding_window: Option<SlidingWindow>,
}

/// Sliding-window attention in some of a model's layers (`sliding_window`
/// and the `layer_types` of its `config.json`). Those layers attend to the
/// last `window` tokens, and an engine keeps only those tokens' keys and
/// values for them (vLLM's hybrid KV-cache manager: the window's blocks and
/// the one being written).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlidingWindow {
    /// Tokens each of those layers attends to.
    pub window: u32,
    /// How many of the model's layers are sliding-window layers (fewer than
    /// all: at least one layer keeps the whole context).
    pub layers: u32,
}

impl SlidingWindow {
    /// KV blocks of `block_tokens` one sequence holds in each sliding layer
    /// once it is longer than the window: the window's, and the block being
    /// written.
    pub fn blocks_per_sequence(&self, block_tokens: u32) -> u64 {
        u64::from(self.window.div_ceil(block_tokens.max(1))) + 1
    }
}

impl ModelDims {
    /// Parameter count derived from the dimensions: embeddings, output head,
    /// attention projections, gated MLP (3 matrices) and RMSNorm weights.
    pub fn params(&self) -> f64 {
        if self.moe.is_some() || !self.attention.is_gqa() {
            return self.params_with(self.moe.map_or(0.0, |m| f64::from(m.experts)));
        }
        let h = f64::from(self.hidden);
        let q = f64::from(self.q_heads) * f64::from(self.head_dim);
        let kv = f64::from(self.kv_heads) * f64::from(self.head_dim);
        let attn = h * q + 2.0 * h * kv + q * h + if self.qkv_bias { q + 2.0 * kv } else { 0.0 };
        let mlp = 3.0 * h * f64::from(self.ffn);
        let per_layer = attn + mlp + 2.0 * h;
        let embed = f64::from(self.vocab) * h;
        let head = if self.tied_embeddings { 0.0 } else { embed };
        f64::from(self.layers) * per_layer + embed + head + h
    }

    /// Parameters counting `routed` routed experts per MoE layer: all of them
    /// for the weights in memory, `experts_per_token` for those a token uses.
    fn params_with(&self, routed: f64) -> f64 {
        let h = f64::from(self.hidden);
        let q_heads = f64::from(self.q_heads);
        let attn = match self.attention {
            Attention::Gqa => {
                let q = q_heads * f64::from(self.head_dim);
                let kv = f64::from(self.kv_heads) * f64::from(self.head_dim);
                h * q + 2.0 * h * kv + q * h + if self.qkv_bias { q + 2.0 * kv } else { 0.0 }
            }
            mla => mla_params(h, q_heads, &mla),
        };
        let dense_mlp = 3.0 * h * f64::from(self.ffn);
        let (moe_layers, moe_block) = match self.moe {
            Some(m) => (
                f64::from(m.moe_layers(self.layers)),
                m.block_params(h, routed),
            ),
            None => (0.0, 0.0),
        };
        let layers = f64::from(self.layers);
        let embed = f64::from(self.vocab) * h;
        let head = if self.tied_embeddings { 0.0 } else { embed };
        layers * (attn + 2.0 * h)
            + (layers - moe_layers) * dense_mlp
            + moe_layers * moe_block
            + embed
            + head
            + h
    }

    /// Parameters a token runs through (its experts, not all of them),
    /// counting the input embedding table as the total does. Equal to
    /// [`Self::params`] for a dense model.
    pub fn active_params(&self) -> f64 {
        match self.moe {
            Some(m) => self.params_with(f64::from(m.experts_per_token)),
            None => self.params(),
        }
    }

    /// Parameters of every routed expert of every MoE layer (0 when dense).
    pub fn routed_expert_params(&self) -> f64 {
        self.moe.map_or(0.0, |m| {
            f64::from(m.moe_layers(self.layers))
                * f64::from(m.experts)
                * m.expert_params(f64::from(self.hidden))
        })
    }

    /// Parameters of the feed-forward blocks: dense MLPs and every expert
    /// (routed and shared), not the routers.
    pub fn ffn_params(&self) -> f64 {
        let h = f64::from(self.hidden);
        let dense_mlp = 3.0 * h * f64::from(self.ffn);
        match self.moe {
            None => f64::from(self.layers) * dense_mlp,
            Some(m) => {
                let moe_layers = m.moe_layers(self.layers);
                f64::from(self.layers - moe_layers) * dense_mlp
                    + f64::from(moe_layers)
                        * f64::from(m.experts + m.shared_experts)
                        * m.expert_params(h)
            }
        }
    }

    /// Intermediate size of the feed-forward block a token runs through: the
    /// dense MLP's, or in MoE layers its experts' side by side, whichever is
    /// larger (what a pass's activations hold at once).
    pub fn ffn_active(&self) -> f64 {
        match self.moe {
            None => f64::from(self.ffn),
            Some(m) => {
                let routed = f64::from(m.experts_per_token) * f64::from(m.expert_ffn);
                let dense = if m.moe_layers(self.layers) < self.layers {
                    f64::from(self.ffn)
                } else {
                    0.0
                };
                routed.max(dense)
            }
        }
    }

    /// KV-cache bytes per token of context: 2 (K and V) · layers · kv_heads ·
    /// head_dim · bytes per value; under multi-head latent attention, layers
    /// · (latent + rotary key) · bytes per value. Counts the layers that keep
    /// the whole context; sliding-window layers hold a window per sequence
    /// instead ([`Self::sliding_kv_bytes_per_token`]).
    pub fn kv_bytes_per_token(&self, kv: Precision) -> f64 {
        self.kv_bytes_per_token_of(self.full_context_layers(), kv)
    }

    /// Layers that keep the whole context's keys and values.
    pub fn full_context_layers(&self) -> u32 {
        self.layers
            .saturating_sub(self.sliding_window.map_or(0, |w| w.layers))
    }

    /// Bytes of KV cache one token adds in the sliding-window layers, while
    /// it is inside their window (0 without sliding-window layers).
    pub fn sliding_kv_bytes_per_token(&self, kv: Precision) -> f64 {
        self.sliding_window
            .map_or(0.0, |w| self.kv_bytes_per_token_of(w.layers, kv))
    }

    fn kv_bytes_per_token_of(&self, layers: u32, kv: Precision) -> f64 {
        match self.attention {
            Attention::Gqa => {
                2.0 * f64::from(layers)
                    * f64::from(self.kv_heads)
                    * f64::from(self.head_dim)
                    * kv.bytes_per_value()
            }
            Attention::Mla {
                kv_lora_rank,
                qk_rope_head_dim,
                ..
            } => {
                f64::from(layers)
                    * f64::from(kv_lora_rank + qk_rope_head_dim)
                    * kv.bytes_per_value()
            }
        }
    }

    /// Attention FLOPs per (query, key) pair across the layers, in a pass
    /// with prompt tokens and in a decode step. Grouped-query attention:
    /// 4 · q_heads · head_dim per layer in both. MLA decodes on the latent
    /// (weights absorbed: each head scores against latent + rotary key and
    /// sums latents) and prefills on decompressed heads, as vLLM runs it.
    pub fn attn_flops_per_pair(&self) -> (f64, f64) {
        let layers = f64::from(self.layers);
        let heads = f64::from(self.q_heads);
        match self.attention {
            Attention::Gqa => {
                let f = 4.0 * layers * heads * f64::from(self.head_dim);
                (f, f)
            }
            Attention::Mla {
                kv_lora_rank,
                qk_nope_head_dim,
                qk_rope_head_dim,
                v_head_dim,
                ..
            } => (
                2.0 * layers * heads * f64::from(qk_nope_head_dim + qk_rope_head_dim + v_head_dim),
                2.0 * layers * heads * f64::from(2 * kv_lora_rank + qk_rope_head_dim),
            ),
        }
    }
}

/// A model from the catalogue, or custom dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Model {
    /// Meta Llama-3.1-8B.
    #[serde(rename = "llama-3.1-8b")]
    Llama31_8b,
    /// Meta Llama-3.1-70B.
    #[serde(rename = "llama-3.1-70b")]
    Llama31_70b,
    /// Meta Llama-3.1-405B.
    #[serde(rename = "llama-3.1-405b")]
    Llama31_405b,
    /// Mistral-7B-v0.1.
    #[serde(rename = "mistral-7b")]
    Mistral7b,
    /// Qwen2.5-7B.
    #[serde(rename = "qwen2.5-7b")]
    Qwen25_7b,
    /// Qwen2.5-72B.
    #[serde(rename = "qwen2.5-72b")]
    Qwen25_72b,
    /// Meta Llama-2-7B.
    #[serde(rename = "llama-2-7b")]
    Llama2_7b,
    /// Meta Llama-2-70B (the TensorRT-LLM calibration runs use it).
    #[serde(rename = "llama-2-70b")]
    Llama2_70b,
    /// Mistral Mixtral-8x7B: 8 experts, 2 per token.
    #[serde(rename = "mixtral-8x7b")]
    Mixtral8x7b,
    /// Mistral Mixtral-8x22B: 8 experts, 2 per token.
    #[serde(rename = "mixtral-8x22b")]
    Mixtral8x22b,
    /// Meta Llama-4-Scout-17B-16E: 16 experts, 1 per token, 1 shared.
    #[serde(rename = "llama-4-scout")]
    Llama4Scout,
    /// Qwen3-30B-A3B: 128 experts, 8 per token.
    #[serde(rename = "qwen3-30b-a3b")]
    Qwen3_30bA3b,
    /// DeepSeek-V3: 256 experts, 8 per token, 1 shared, multi-head latent attention.
    #[serde(rename = "deepseek-v3")]
    DeepseekV3,
    /// OpenAI gpt-oss-120b: 128 experts, 4 per token.
    #[serde(rename = "gpt-oss-120b")]
    GptOss120b,
    /// OpenAI gpt-oss-20b: 32 experts, 4 per token.
    #[serde(rename = "gpt-oss-20b")]
    GptOss20b,
    /// Any decoder-only transformer, from its dimensions.
    Custom(ModelDims),
}

impl Model {
    /// Every named model.
    pub const NAMED: [Model; 15] = [
        Model::Llama31_8b,
        Model::Llama31_70b,
        Model::Llama31_405b,
        Model::Mistral7b,
        Model::Qwen25_7b,
        Model::Qwen25_72b,
        Model::Llama2_7b,
        Model::Llama2_70b,
        Model::Mixtral8x7b,
        Model::Mixtral8x22b,
        Model::Llama4Scout,
        Model::Qwen3_30bA3b,
        Model::DeepseekV3,
        Model::GptOss120b,
        Model::GptOss20b,
    ];

    /// Display name.
    pub fn name(&self) -> &'static str {
        match self {
            Model::Llama31_8b => "Llama-3.1-8B",
            Model::Llama31_70b => "Llama-3.1-70B",
            Model::Llama31_405b => "Llama-3.1-405B",
            Model::Mistral7b => "Mistral-7B",
            Model::Qwen25_7b => "Qwen2.5-7B",
            Model::Qwen25_72b => "Qwen2.5-72B",
            Model::Llama2_7b => "Llama-2-7B",
            Model::Llama2_70b => "Llama-2-70B",
            Model::Mixtral8x7b => "Mixtral-8x7B",
            Model::Mixtral8x22b => "Mixtral-8x22B",
            Model::Llama4Scout => "Llama-4-Scout-17B-16E",
            Model::Qwen3_30bA3b => "Qwen3-30B-A3B",
            Model::DeepseekV3 => "DeepSeek-V3",
            Model::GptOss120b => "gpt-oss-120b",
            Model::GptOss20b => "gpt-oss-20b",
            Model::Custom(_) => "custom model",
        }
    }

    /// The precision the model ships in, where it is not 16-bit: DeepSeek-V3
    /// in FP8 (block-scaled), gpt-oss with MXFP4 experts.
    pub const fn native_weights(&self) -> Precision {
        match self {
            Model::DeepseekV3 => Precision::Fp8,
            Model::GptOss120b | Model::GptOss20b => Precision::Mxfp4,
            _ => Precision::Bf16,
        }
    }

    /// Dimensions from each model's published `config.json` (reference §2).
    pub fn dims(&self) -> ModelDims {
        let d = |layers, hidden, q_heads, kv_heads, ffn, vocab| ModelDims {
            layers,
            hidden,
            q_heads,
            kv_heads,
            head_dim: 128,
            ffn,
            vocab,
            qkv_bias: false,
            tied_embeddings: false,
            moe: None,
            attention: Attention::Gqa,
            sliding_window: None,
        };
        let moe = |experts, experts_per_token, shared_experts, expert_ffn| Moe {
            experts,
            experts_per_token,
            shared_experts,
            expert_ffn,
            first_dense_layers: 0,
            every: 1,
            expert_bias: false,
        };
        match *self {
            Model::Llama31_8b => d(32, 4096, 32, 8, 14336, 128_256),
            Model::Llama31_70b => d(80, 8192, 64, 8, 28672, 128_256),
            Model::Llama31_405b => d(126, 16384, 128, 8, 53248, 128_256),
            Model::Mistral7b => d(32, 4096, 32, 8, 14336, 32_000),
            Model::Qwen25_7b => ModelDims {
                qkv_bias: true,
                ..d(28, 3584, 28, 4, 18944, 152_064)
            },
            Model::Qwen25_72b => ModelDims {
                qkv_bias: true,
                ..d(80, 8192, 64, 8, 29568, 152_064)
            },
            Model::Llama2_7b => d(32, 4096, 32, 32, 11008, 32_000),
            Model::Llama2_70b => d(80, 8192, 64, 8, 28672, 32_000),
            // MoE models, from their published config.json files. `ffn` is the
            // dense layers' MLP (where the model has any), or an expert's.
            Model::Mixtral8x7b => ModelDims {
                moe: Some(moe(8, 2, 0, 14336)),
                ..d(32, 4096, 32, 8, 14336, 32_000)
            },
            Model::Mixtral8x22b => ModelDims {
                moe: Some(moe(8, 2, 0, 16384)),
                ..d(56, 6144, 48, 8, 16384, 32_768)
            },
            Model::Llama4Scout => ModelDims {
                moe: Some(moe(16, 1, 1, 8192)),
                ..d(48, 5120, 40, 8, 8192, 202_048)
            },
            Model::Qwen3_30bA3b => ModelDims {
                moe: Some(moe(128, 8, 0, 768)),
                ..d(48, 2048, 32, 4, 6144, 151_936)
            },
            Model::DeepseekV3 => ModelDims {
                moe: Some(Moe {
                    first_dense_layers: 3,
                    ..moe(256, 8, 1, 2048)
                }),
                attention: Attention::Mla {
                    q_lora_rank: 1536,
                    kv_lora_rank: 512,
                    qk_nope_head_dim: 128,
                    qk_rope_head_dim: 64,
                    v_head_dim: 128,
                },
                ..d(61, 7168, 128, 128, 18432, 129_280)
            },
            Model::GptOss120b | Model::GptOss20b => {
                let (layers, experts) = if *self == Model::GptOss120b {
                    (36, 128)
                } else {
                    (24, 32)
                };
                ModelDims {
                    head_dim: 64,
                    qkv_bias: true,
                    moe: Some(Moe {
                        expert_bias: true,
                        ..moe(experts, 4, 0, 2880)
                    }),
                    // `layer_types`: sliding and full attention alternate,
                    // the window 128 tokens.
                    sliding_window: Some(SlidingWindow {
                        window: 128,
                        layers: layers / 2,
                    }),
                    ..d(layers, 2880, 64, 8, 2880, 201_088)
                }
            }
            Model::Custom(dims) => dims,
        }
    }
}

/// Numeric format of weights or KV-cache values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// 16-bit (FP16 or BF16).
    Bf16,
    /// 8-bit floating point (uses the FP8 tensor-core peak where the GPU has one).
    Fp8,
    /// 8-bit integer weights (weight-only: compute stays 16-bit).
    Int8,
    /// 4-bit integer weights (weight-only), ≈ 0.5 byte plus group scales.
    Int4,
    /// MXFP4 (OCP microscaling: 4-bit floats, one 8-bit scale per 32), as
    /// gpt-oss ships: on the routed experts of an MoE model (every other
    /// weight stays BF16), on the MLP weights of a dense one. Weight-only
    /// (W4A16, as engines run those checkpoints): compute stays 16-bit.
    Mxfp4,
    /// NVFP4 (4-bit floats, one FP8 scale per 16 values), weights and
    /// activations (W4A4, as NVIDIA's FP4 checkpoints): FP4 matrix
    /// multiplies on GPUs with FP4 tensor cores (Blackwell, MI355X);
    /// elsewhere weight-only, like INT4. Quantises the same weights MXFP4
    /// does.
    Nvfp4,
}

impl Precision {
    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Bf16 => "BF16",
            Precision::Fp8 => "FP8",
            Precision::Int8 => "INT8",
            Precision::Int4 => "INT4",
            Precision::Mxfp4 => "MXFP4",
            Precision::Nvfp4 => "NVFP4",
        }
    }

    /// Bytes per stored value. INT4 adds one 16-bit scale per group of 128
    /// weights, MXFP4 one 8-bit scale per block of 32.
    pub fn bytes_per_value(self) -> f64 {
        match self {
            Precision::Bf16 => 2.0,
            Precision::Fp8 | Precision::Int8 => 1.0,
            Precision::Int4 => 0.5 + 2.0 / 128.0,
            Precision::Mxfp4 => 0.5 + 1.0 / 32.0,
            Precision::Nvfp4 => 0.5 + 1.0 / 16.0,
        }
    }

    /// Whether the format can hold a KV cache (16-bit or FP8).
    pub fn holds_kv(self) -> bool {
        matches!(self, Precision::Bf16 | Precision::Fp8)
    }
}
