//! The hardware and model catalogue: GPU datasheets, model dimensions and
//! parameter counts, number formats.

use serde::{Deserialize, Serialize};

/// A GPU from the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Gpu {
    /// NVIDIA A100 80 GB SXM.
    A100,
    /// NVIDIA H100 SXM 80 GB.
    H100,
    /// NVIDIA H200 SXM 141 GB.
    H200,
    /// NVIDIA L4 24 GB.
    L4,
    /// NVIDIA L40S 48 GB.
    L40s,
    /// AMD Instinct MI300X 192 GB.
    Mi300x,
}

/// Datasheet figures of a GPU (dense, never "with sparsity").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuSpec {
    /// Display name.
    pub name: &'static str,
    /// Dense BF16 tensor-core peak, TFLOP/s.
    pub bf16_tflops: f64,
    /// Dense FP8 peak, TFLOP/s, where the hardware has FP8.
    pub fp8_tflops: Option<f64>,
    /// HBM bandwidth, GB/s.
    pub hbm_gb_per_s: f64,
    /// Memory, GB (10⁹ bytes), as the datasheet states it.
    pub memory_gb: f64,
    /// Memory the driver reports as the device's total (what vLLM multiplies by
    /// `gpu_memory_utilization`), GiB. H100: 79.19 GiB, as CUDA reports it and
    /// as the `vllm_kv_blocks` of the calibration runs imply; the others are
    /// their capacity less the driver's reserve (≈ 1 %; GDDR parts with ECC
    /// report less), unvalidated.
    pub reported_gib: f64,
    /// GPU-to-GPU bandwidth per direction for all-reduce, GB/s.
    pub link_gb_per_s: f64,
    /// Indicative on-demand price, $/GPU-hour.
    pub usd_per_hour: f64,
}

impl Gpu {
    /// Every GPU in the catalogue.
    pub const ALL: [Gpu; 6] = [
        Gpu::A100,
        Gpu::H100,
        Gpu::H200,
        Gpu::L4,
        Gpu::L40s,
        Gpu::Mi300x,
    ];

    /// Datasheet figures. Peaks, bandwidth and memory: reference §1 (NVIDIA/AMD
    /// datasheets). Link bandwidth: NVLink 3 (A100) 300 GB/s and NVLink 4 (H100/H200)
    /// 450 GB/s per direction; PCIe 4.0 x16 ≈ 32 GB/s (L4, L40S); MI300X Infinity
    /// Fabric ≈ 448 GB/s per direction. Prices: within the 2024–2026 ranges of
    /// reference §1 (CoreWeave's 2024 list for A100 and H100).
    pub const fn spec(self) -> GpuSpec {
        match self {
            Gpu::A100 => GpuSpec {
                name: "A100 80GB",
                bf16_tflops: 312.0,
                fp8_tflops: None,
                hbm_gb_per_s: 2039.0,
                memory_gb: 80.0,
                reported_gib: 79.15,
                link_gb_per_s: 300.0,
                usd_per_hour: 2.21,
            },
            Gpu::H100 => GpuSpec {
                name: "H100 SXM",
                bf16_tflops: 989.0,
                fp8_tflops: Some(1979.0),
                hbm_gb_per_s: 3350.0,
                memory_gb: 80.0,
                reported_gib: 79.19,
                link_gb_per_s: 450.0,
                usd_per_hour: 4.25,
            },
            Gpu::H200 => GpuSpec {
                name: "H200 SXM",
                bf16_tflops: 989.0,
                fp8_tflops: Some(1979.0),
                hbm_gb_per_s: 4800.0,
                memory_gb: 141.0,
                reported_gib: 139.8,
                link_gb_per_s: 450.0,
                usd_per_hour: 4.50,
            },
            Gpu::L4 => GpuSpec {
                name: "L4",
                bf16_tflops: 121.0,
                fp8_tflops: Some(242.0),
                hbm_gb_per_s: 300.0,
                memory_gb: 24.0,
                reported_gib: 22.5,
                link_gb_per_s: 32.0,
                usd_per_hour: 0.60,
            },
            Gpu::L40s => GpuSpec {
                name: "L40S",
                bf16_tflops: 362.0,
                fp8_tflops: Some(733.0),
                hbm_gb_per_s: 864.0,
                memory_gb: 48.0,
                reported_gib: 45.0,
                link_gb_per_s: 32.0,
                usd_per_hour: 1.50,
            },
            Gpu::Mi300x => GpuSpec {
                name: "MI300X",
                bf16_tflops: 1307.0,
                fp8_tflops: Some(2615.0),
                hbm_gb_per_s: 5300.0,
                memory_gb: 192.0,
                reported_gib: 191.5,
                link_gb_per_s: 448.0,
                usd_per_hour: 3.50,
            },
        }
    }
}

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
}

impl ModelDims {
    /// Parameter count derived from the dimensions: embeddings, output head,
    /// attention projections, gated MLP (3 matrices) and RMSNorm weights.
    pub fn params(&self) -> f64 {
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

    /// Intermediate size of the feed-forward block a token runs through.
    pub fn ffn_active(&self) -> f64 {
        f64::from(self.ffn)
    }

    /// KV-cache bytes per token: 2 (K and V) · layers · kv_heads · head_dim · bytes per value.
    pub fn kv_bytes_per_token(&self, kv: Precision) -> f64 {
        2.0 * f64::from(self.layers)
            * f64::from(self.kv_heads)
            * f64::from(self.head_dim)
            * kv.bytes_per_value()
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
    /// Any decoder-only transformer, from its dimensions.
    Custom(ModelDims),
}

impl Model {
    /// Every named model.
    pub const NAMED: [Model; 7] = [
        Model::Llama31_8b,
        Model::Llama31_70b,
        Model::Mistral7b,
        Model::Qwen25_7b,
        Model::Qwen25_72b,
        Model::Llama2_7b,
        Model::Llama2_70b,
    ];

    /// Display name.
    pub fn name(&self) -> &'static str {
        match self {
            Model::Llama31_8b => "Llama-3.1-8B",
            Model::Llama31_70b => "Llama-3.1-70B",
            Model::Mistral7b => "Mistral-7B",
            Model::Qwen25_7b => "Qwen2.5-7B",
            Model::Qwen25_72b => "Qwen2.5-72B",
            Model::Llama2_7b => "Llama-2-7B",
            Model::Llama2_70b => "Llama-2-70B",
            Model::Custom(_) => "custom model",
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
        };
        match *self {
            Model::Llama31_8b => d(32, 4096, 32, 8, 14336, 128_256),
            Model::Llama31_70b => d(80, 8192, 64, 8, 28672, 128_256),
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
}

impl Precision {
    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Bf16 => "BF16",
            Precision::Fp8 => "FP8",
            Precision::Int8 => "INT8",
            Precision::Int4 => "INT4",
        }
    }

    /// Bytes per stored value. INT4 adds one 16-bit scale per group of 128 weights.
    pub fn bytes_per_value(self) -> f64 {
        match self {
            Precision::Bf16 => 2.0,
            Precision::Fp8 | Precision::Int8 => 1.0,
            Precision::Int4 => 0.5 + 2.0 / 128.0,
        }
    }
}
