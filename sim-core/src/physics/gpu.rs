//! The GPU catalogue: datasheet figures of the accelerators people rent,
//! each with its source, and GPUs a scenario describes from their datasheets.

use serde::{Deserialize, Serialize};

use super::gpu_specs as specs;
use super::power::Power;

/// A GPU: one from the catalogue, or one the scenario describes from its
/// datasheet (`"gpu": {"custom": {...}}`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
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
    /// NVIDIA B200 180 GB (HGX, 1,000 W).
    B200,
    /// NVIDIA B300 (Blackwell Ultra) 288 GB (HGX).
    B300,
    /// NVIDIA H20 96 GB (the export-market Hopper: H100 memory system, a
    /// seventh of its compute).
    H20,
    /// NVIDIA RTX PRO 6000 Blackwell Server Edition 96 GB (GDDR7, PCIe).
    #[serde(rename = "rtx-pro-6000")]
    RtxPro6000,
    /// NVIDIA GeForce RTX 4090 24 GB (GDDR6X, PCIe).
    Rtx4090,
    /// AMD Instinct MI325X 256 GB.
    Mi325x,
    /// AMD Instinct MI355X 288 GB.
    Mi355x,
    /// A GPU described inline from its datasheet.
    Custom(CustomGpu),
}

/// A GPU's datasheet, as a scenario states it: dense peaks (never "with
/// sparsity"), memory, bandwidths and price. Validated at the boundary
/// (`Scenario::validate`), each figure in a physical range.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomGpu {
    /// Dense BF16 tensor-core peak, TFLOP/s.
    pub bf16_tflops: f64,
    /// Dense FP8 peak, TFLOP/s, if the GPU has FP8 tensor cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp8_tflops: Option<f64>,
    /// Dense FP4 peak, TFLOP/s, if the GPU has FP4 tensor cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp4_tflops: Option<f64>,
    /// Memory as the datasheet states it, GB. The driver is taken to report
    /// 1 % less, read as GiB (what H100, B200 and MI300X do).
    pub memory_gb: f64,
    /// Memory bandwidth, GB/s.
    pub memory_gb_per_s: f64,
    /// GPU-to-GPU bandwidth per direction, GB/s (NVLink, Infinity Fabric,
    /// or PCIe).
    pub link_gb_per_s: f64,
    /// How the GPUs of a replica are connected.
    #[serde(default)]
    pub topology: Topology,
    /// On-demand price, $/GPU-hour.
    pub usd_per_hour: f64,
    /// Board power limit (TDP/TBP), W per GPU; without it the run reports
    /// no energy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board_w: Option<f64>,
    /// Power drawn idle, W per GPU; absent: [`IDLE_SHARE`] of `board_w`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_w: Option<f64>,
}

/// A custom GPU's idle power as a share of its board power when it states
/// none: the catalogue's NVIDIA parts idle at 5–22 % of it, AMD's at 16–19 %.
pub const IDLE_SHARE: f64 = 0.12;

impl CustomGpu {
    /// The power figures the scenario states, if any.
    pub const fn power(&self) -> Option<Power> {
        let Some(board_w) = self.board_w else {
            return None;
        };
        Some(Power {
            idle_w: match self.idle_w {
                Some(w) => w,
                None => IDLE_SHARE * board_w,
            },
            board_w,
            source: "the scenario's own datasheet figures",
        })
    }
}

/// How a replica's GPUs reach each other, which sets what an all-reduce gets
/// of `link_gb_per_s`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Topology {
    /// A switch or full mesh (NVSwitch, Infinity Fabric, a PCIe switch with
    /// peer-to-peer): every GPU sends at its own link's bandwidth.
    #[default]
    Switched,
    /// One shared bus (PCIe through the host, no peer-to-peer): the
    /// replica's GPUs take turns on it, each getting 1/tp of it.
    SharedBus,
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
    /// Dense FP4 peak (NVFP4/MXFP4 tensor cores), TFLOP/s, where the
    /// hardware has FP4.
    pub fp4_tflops: Option<f64>,
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
    /// Power drawn idle and at most (None: a custom GPU that states none).
    pub power: Option<Power>,
    /// Where the figures come from.
    pub source: &'static str,
}

/// The software stack a GPU's kernels come from: a serving engine's build
/// for NVIDIA's CUDA or AMD's ROCm (its attention, GEMM and collective
/// kernels are different code, so they reach different shares of peak).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Platform {
    /// NVIDIA GPUs: CUDA, cuBLAS, FlashInfer, NCCL.
    Cuda,
    /// AMD Instinct GPUs: ROCm, hipBLASLt, AITER, RCCL.
    Rocm,
}

impl Gpu {
    /// The platform its kernels are built for. A custom GPU runs CUDA's
    /// constants: a datasheet does not say whose kernels run on it.
    pub fn platform(&self) -> Platform {
        match self {
            Gpu::Mi300x | Gpu::Mi325x | Gpu::Mi355x => Platform::Rocm,
            _ => Platform::Cuda,
        }
    }

    /// The catalogue GPU a name (as tools and CSVs write it: "H100 SXM 80GB",
    /// "NVIDIA A100-SXM4-80GB", "L40S") means, or None when the catalogue
    /// has no such GPU (the 40 GB A100, an H100 PCIe or NVL: other memory or
    /// bandwidth) — never silently another one.
    pub fn from_name(name: &str) -> Option<Gpu> {
        let n: String = name
            .to_ascii_lowercase()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect();
        let has = |s: &str| n.contains(s);
        if has("mi300x") {
            Some(Gpu::Mi300x)
        } else if has("mi325x") {
            Some(Gpu::Mi325x)
        } else if has("mi355x") {
            Some(Gpu::Mi355x)
        } else if has("b300") {
            Some(Gpu::B300)
        } else if has("b200") {
            Some(Gpu::B200)
        } else if has("rtxpro6000") {
            // The workstation and Max-Q editions run at lower clocks and power.
            (!has("workstation") && !has("maxq")).then_some(Gpu::RtxPro6000)
        } else if has("4090") {
            (!has("laptop") && !has("mobile") && !has("4090d")).then_some(Gpu::Rtx4090)
        } else if has("h20") && !has("h200") {
            Some(Gpu::H20)
        } else if has("h200") {
            Some(Gpu::H200)
        } else if has("h100") {
            (!has("pcie") && !has("nvl")).then_some(Gpu::H100)
        } else if has("a100") {
            (!has("40gb") && !has("pcie")).then_some(Gpu::A100)
        } else if has("l40s") {
            Some(Gpu::L40s)
        } else if has("l4") && !has("l40") {
            Some(Gpu::L4)
        } else {
            None
        }
    }

    /// How a replica's GPUs reach each other (the catalogue's: switched).
    pub fn topology(self) -> Topology {
        match self {
            Gpu::Custom(c) => c.topology,
            _ => Topology::Switched,
        }
    }

    /// The GPUs the planner searches unless asked for others: the six most
    /// rented for serving (A100, H100, H200, L4, L40S, MI300X). All thirteen
    /// double the search, and within the plan's work budget heavy questions
    /// (a launch spike, closed-loop agents) then settle fewer setups; `tlab
    /// plan --gpus all` and the page's planner ask for every one.
    pub const PLANNED: [Gpu; 6] = [
        Gpu::A100,
        Gpu::H100,
        Gpu::H200,
        Gpu::L4,
        Gpu::L40s,
        Gpu::Mi300x,
    ];

    /// Every GPU in the catalogue.
    pub const ALL: [Gpu; 13] = [
        Gpu::A100,
        Gpu::H100,
        Gpu::H200,
        Gpu::H20,
        Gpu::B200,
        Gpu::B300,
        Gpu::L4,
        Gpu::L40s,
        Gpu::RtxPro6000,
        Gpu::Rtx4090,
        Gpu::Mi300x,
        Gpu::Mi325x,
        Gpu::Mi355x,
    ];

    /// Datasheet figures: the catalogue's (their sources in `gpu_specs.rs`),
    /// or a custom GPU's own.
    pub const fn spec(self) -> GpuSpec {
        match self {
            Gpu::A100 => specs::A100,
            Gpu::H100 => specs::H100,
            Gpu::H200 => specs::H200,
            Gpu::L4 => specs::L4,
            Gpu::L40s => specs::L40S,
            Gpu::Mi300x => specs::MI300X,
            Gpu::B200 => specs::B200,
            Gpu::B300 => specs::B300,
            Gpu::H20 => specs::H20,
            Gpu::RtxPro6000 => specs::RTXPRO6000,
            Gpu::Rtx4090 => specs::RTX4090,
            Gpu::Mi325x => specs::MI325X,
            Gpu::Mi355x => specs::MI355X,
            Gpu::Custom(c) => GpuSpec {
                name: "custom GPU",
                bf16_tflops: c.bf16_tflops,
                fp8_tflops: c.fp8_tflops,
                fp4_tflops: c.fp4_tflops,
                hbm_gb_per_s: c.memory_gb_per_s,
                memory_gb: c.memory_gb,
                reported_gib: c.memory_gb * 0.99,
                link_gb_per_s: c.link_gb_per_s,
                usd_per_hour: c.usd_per_hour,
                power: c.power(),
                source: "the scenario's own datasheet figures",
            },
        }
    }
}
