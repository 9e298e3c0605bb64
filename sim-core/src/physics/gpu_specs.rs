//! The GPU catalogue's datasheet figures, one constant per GPU
//! ([`super::Gpu::spec`] picks one). Peaks, bandwidth and memory: reference §1
//! (NVIDIA/AMD datasheets). Link bandwidth: NVLink 3 (A100) 300 GB/s and
//! NVLink 4 (H100/H200) 450 GB/s per direction; PCIe 4.0 x16 ≈ 32 GB/s (L4,
//! L40S); MI300X Infinity Fabric ≈ 448 GB/s per direction. Prices: within the
//! 2024–2026 ranges of reference §1 (CoreWeave's 2024 list for A100 and H100).

use super::gpu::GpuSpec;
use super::power::Power;

pub(super) const A100: GpuSpec = GpuSpec {
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
};

pub(super) const H100: GpuSpec = GpuSpec {
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
};

pub(super) const H200: GpuSpec = GpuSpec {
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
};

pub(super) const L4: GpuSpec = GpuSpec {
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
};

pub(super) const L40S: GpuSpec = GpuSpec {
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
};

pub(super) const MI300X: GpuSpec = GpuSpec {
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
};

pub(super) const B200: GpuSpec = GpuSpec {
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
};

pub(super) const B300: GpuSpec = GpuSpec {
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
};

pub(super) const H20: GpuSpec = GpuSpec {
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
};

pub(super) const RTXPRO6000: GpuSpec = GpuSpec {
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
};

pub(super) const RTX4090: GpuSpec = GpuSpec {
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
};

pub(super) const MI325X: GpuSpec = GpuSpec {
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
};

pub(super) const MI355X: GpuSpec = GpuSpec {
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
};
