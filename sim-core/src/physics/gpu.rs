//! The GPU catalogue: datasheet figures of the accelerators people rent,
//! each with its source, and GPUs a scenario describes from their datasheets.

use serde::{Deserialize, Serialize};

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

impl Gpu {
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
                fp4_tflops: None,
                hbm_gb_per_s: 2039.0,
                memory_gb: 80.0,
                reported_gib: 79.15,
                link_gb_per_s: 300.0,
                usd_per_hour: 2.21,
                power: Some(Power {
                    idle_w: 55.0,
                    board_w: 400.0,
                    source: "NVIDIA A100 datasheet: 400 W (SXM4); idle: estimate (see Power)",
                }),
                source: "NVIDIA A100 datasheet (SXM4 80 GB); reference §1",
            },
            Gpu::H100 => GpuSpec {
                name: "H100 SXM",
                bf16_tflops: 989.0,
                fp8_tflops: Some(1979.0),
                fp4_tflops: None,
                hbm_gb_per_s: 3350.0,
                memory_gb: 80.0,
                reported_gib: 79.19,
                link_gb_per_s: 450.0,
                usd_per_hour: 4.25,
                power: Some(Power {
                    idle_w: 70.0,
                    board_w: 700.0,
                    source: "NVIDIA H100 datasheet: up to 700 W (SXM5); idle: estimate (see Power)",
                }),
                source: "NVIDIA H100 datasheet (SXM5); reference §1; 79.19 GiB as CUDA reports it",
            },
            Gpu::H200 => GpuSpec {
                name: "H200 SXM",
                bf16_tflops: 989.0,
                fp8_tflops: Some(1979.0),
                fp4_tflops: None,
                hbm_gb_per_s: 4800.0,
                memory_gb: 141.0,
                reported_gib: 139.8,
                link_gb_per_s: 450.0,
                usd_per_hour: 4.50,
                power: Some(Power {
                    idle_w: 75.0,
                    board_w: 700.0,
                    source: "NVIDIA H200 datasheet: up to 700 W (SXM); idle: estimate (see Power)",
                }),
                source: "NVIDIA H200 datasheet (SXM); reference §1",
            },
            Gpu::L4 => GpuSpec {
                name: "L4",
                bf16_tflops: 121.0,
                fp8_tflops: Some(242.0),
                fp4_tflops: None,
                hbm_gb_per_s: 300.0,
                memory_gb: 24.0,
                reported_gib: 22.5,
                link_gb_per_s: 32.0,
                usd_per_hour: 0.60,
                power: Some(Power {
                    idle_w: 16.0,
                    board_w: 72.0,
                    source: "NVIDIA L4 datasheet: 72 W; idle: estimate (see Power)",
                }),
                source: "NVIDIA L4 datasheet; reference §1",
            },
            Gpu::L40s => GpuSpec {
                name: "L40S",
                bf16_tflops: 362.0,
                fp8_tflops: Some(733.0),
                fp4_tflops: None,
                hbm_gb_per_s: 864.0,
                memory_gb: 48.0,
                reported_gib: 45.0,
                link_gb_per_s: 32.0,
                usd_per_hour: 1.50,
                power: Some(Power {
                    idle_w: 35.0,
                    board_w: 350.0,
                    source: "NVIDIA L40S datasheet: 350 W; idle: estimate (see Power)",
                }),
                source: "NVIDIA L40S datasheet; reference §1",
            },
            Gpu::Mi300x => GpuSpec {
                name: "MI300X",
                bf16_tflops: 1307.0,
                fp8_tflops: Some(2615.0),
                fp4_tflops: None,
                hbm_gb_per_s: 5300.0,
                memory_gb: 192.0,
                reported_gib: 191.5,
                link_gb_per_s: 448.0,
                usd_per_hour: 3.50,
                power: Some(Power {
                    idle_w: 140.0,
                    board_w: 750.0,
                    source: "AMD Instinct MI300X datasheet: 750 W TBP; idle: estimate (see Power)",
                }),
                source: "AMD Instinct MI300X datasheet; reference §1",
            },
            Gpu::B200 => GpuSpec {
                name: "B200",
                bf16_tflops: 2250.0,
                fp8_tflops: Some(4500.0),
                fp4_tflops: Some(9000.0),
                hbm_gb_per_s: 8000.0,
                memory_gb: 180.0,
                reported_gib: 178.35,
                link_gb_per_s: 900.0,
                usd_per_hour: 5.50,
                power: Some(Power {
                    idle_w: 140.0,
                    board_w: 1000.0,
                    source: "NVIDIA HGX B200: 1,000 W per GPU; idle: estimate (see Power)",
                }),
                source: "NVIDIA HGX B200 datasheet (dense, 1,000 W); CUDA reports 178.35 GiB; NVLink 5 1.8 TB/s both ways",
            },
            Gpu::B300 => GpuSpec {
                name: "B300",
                bf16_tflops: 2250.0,
                fp8_tflops: Some(4500.0),
                fp4_tflops: Some(13500.0),
                hbm_gb_per_s: 8000.0,
                memory_gb: 288.0,
                reported_gib: 285.0,
                link_gb_per_s: 900.0,
                usd_per_hour: 7.00,
                power: Some(Power {
                    idle_w: 150.0,
                    board_w: 1100.0,
                    source: "NVIDIA HGX B300: 1,100 W per GPU; idle: estimate (see Power)",
                }),
                source: "NVIDIA HGX B300 datasheet (dense; FP4 1.5× B200's); NVLink 5 1.8 TB/s both ways",
            },
            Gpu::H20 => GpuSpec {
                name: "H20",
                bf16_tflops: 148.0,
                fp8_tflops: Some(296.0),
                fp4_tflops: None,
                hbm_gb_per_s: 4000.0,
                memory_gb: 96.0,
                reported_gib: 95.0,
                link_gb_per_s: 450.0,
                usd_per_hour: 1.60,
                power: Some(Power {
                    idle_w: 60.0,
                    board_w: 400.0,
                    source: "NVIDIA H20 product brief: 400 W; idle: estimate (see Power)",
                }),
                source: "NVIDIA H20 product brief (dense BF16 148 TFLOP/s, 96 GB HBM3 at 4.0 TB/s, NVLink 900 GB/s both ways)",
            },
            Gpu::RtxPro6000 => GpuSpec {
                name: "RTX PRO 6000 Blackwell",
                bf16_tflops: 504.0,
                fp8_tflops: Some(1008.0),
                fp4_tflops: Some(2016.0),
                hbm_gb_per_s: 1792.0,
                memory_gb: 96.0,
                reported_gib: 94.97,
                link_gb_per_s: 64.0,
                usd_per_hour: 1.80,
                power: Some(Power {
                    idle_w: 30.0,
                    board_w: 600.0,
                    source: "NVIDIA RTX PRO 6000 Blackwell Server Edition datasheet: up to 600 W; idle: estimate (see Power)",
                }),
                source: "NVIDIA RTX PRO 6000 Blackwell Server Edition datasheet (dense: half the sparse 4 PFLOPS FP4 AI figure); PCIe 5.0 x16",
            },
            Gpu::Rtx4090 => GpuSpec {
                name: "RTX 4090",
                bf16_tflops: 165.2,
                fp8_tflops: Some(330.3),
                fp4_tflops: None,
                hbm_gb_per_s: 1008.0,
                memory_gb: 24.0,
                reported_gib: 23.52,
                link_gb_per_s: 32.0,
                usd_per_hour: 0.40,
                power: Some(Power {
                    idle_w: 20.0,
                    board_w: 450.0,
                    source: "NVIDIA GeForce RTX 4090 specifications: 450 W total graphics power; idle: estimate (see Power)",
                }),
                source: "NVIDIA Ada Lovelace architecture whitepaper (dense, FP32 accumulate); 25,250,627,584 bytes as CUDA reports it (shared/measurements); PCIe 4.0 x16",
            },
            Gpu::Mi325x => GpuSpec {
                name: "MI325X",
                bf16_tflops: 1307.0,
                fp8_tflops: Some(2615.0),
                fp4_tflops: None,
                hbm_gb_per_s: 6000.0,
                memory_gb: 256.0,
                reported_gib: 255.5,
                link_gb_per_s: 448.0,
                usd_per_hour: 3.00,
                power: Some(Power {
                    idle_w: 160.0,
                    board_w: 1000.0,
                    source: "AMD Instinct MI325X datasheet: 1,000 W TBP; idle: estimate (see Power)",
                }),
                source: "AMD Instinct MI325X datasheet (dense; MI300X compute, 256 GB HBM3E at 6 TB/s)",
            },
            Gpu::Mi355x => GpuSpec {
                name: "MI355X",
                bf16_tflops: 2500.0,
                fp8_tflops: Some(5000.0),
                fp4_tflops: Some(10000.0),
                hbm_gb_per_s: 8000.0,
                memory_gb: 288.0,
                reported_gib: 287.5,
                link_gb_per_s: 538.0,
                usd_per_hour: 4.00,
                power: Some(Power {
                    idle_w: 220.0,
                    board_w: 1400.0,
                    source: "AMD Instinct MI355X datasheet: 1,400 W TBP; idle: estimate (see Power)",
                }),
                source: "AMD Instinct MI355X datasheet (dense; MXFP4 10 PFLOP/s; Infinity Fabric 1,075 GB/s both ways)",
            },
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
