//! Prefill/decode disaggregation: a pool that only prefills hands each
//! prompt's KV cache to a decode pool over a link, and the decode pool
//! generates every output token (vLLM's `NixlConnector` P/D, Dynamo, DistServe,
//! Splitwise).
//!
//! What moves and when (`docs/disaggregation.md`): the prefill replica
//! computes the prompt and keeps its blocks; a decode replica admits the
//! request when its KV cache has room for the prompt, then pulls the blocks
//! (every prompt token but the last, which it recomputes in its first step,
//! as vLLM does) over the link; the prefill replica frees them when the pull
//! ends; the first token leaves the decode replica after its first step.

use super::{Batching, Scenario, ServiceModel};
use crate::physics::Gpu;
use serde::{Deserialize, Serialize};

/// A pool's hand-off: it prefills, `decode_pool` decodes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Disaggregation {
    /// The pool (by name) that decodes what this one prefills.
    pub decode_pool: String,
    /// What the KV cache crosses.
    pub link: KvLink,
}

/// The link between a prefill replica and a decode replica.
///
/// Line rates per GPU: NVLink from the GPU's own datasheet figure (the GPU
/// catalogue's `link_gb_per_s`); InfiniBand NDR, 400 Gb/s per GPU (one
/// ConnectX-7 per GPU, as DGX H100/H200/B200 nodes have); RoCE at 200 Gb/s
/// per GPU (the 8 × 200 Gb/s testbed of Mooncake's vLLM benchmark); Ethernet,
/// one 100 Gb/s NIC per node shared by its GPUs, over TCP. A replica's GPUs
/// each move their own shard, so a pair of replicas moves at the line rate of
/// the smaller replica's GPUs. RDMA reaches [`RDMA_EFFICIENCY`] of the line
/// rate after a fixed [`RDMA_LATENCY_S`] per transfer (both fitted to
/// Mooncake's published 1P1D transfer times, `docs/disaggregation.md`); TCP
/// [`TCP_EFFICIENCY`] after [`TCP_LATENCY_S`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KvLink {
    /// Both replicas in one node: GPU to GPU over NVLink (NIXL over UCX's
    /// CUDA IPC).
    Nvlink,
    /// Between nodes over InfiniBand NDR, 400 Gb/s per GPU, GPUDirect RDMA.
    Infiniband,
    /// Between nodes over RoCE, 200 Gb/s per GPU, GPUDirect RDMA.
    Roce,
    /// Between nodes over 100 Gb/s Ethernet per node, TCP through host memory.
    Ethernet,
    /// A link of your own: what one transfer between a pair of replicas
    /// reaches (GB/s, after protocol overheads) and its fixed latency.
    Custom {
        /// Bandwidth of one pair of replicas, GB/s.
        gb_per_s: f64,
        /// Fixed time per transfer, microseconds.
        latency_us: f64,
    },
}

/// Share of an RDMA link's line rate a large KV transfer reaches.
pub const RDMA_EFFICIENCY: f64 = 0.72;
/// Fixed time of one RDMA KV transfer (handshake, descriptors,
/// completion notice), seconds.
pub const RDMA_LATENCY_S: f64 = 0.4e-3;
/// Share of the line rate TCP reaches through host memory (Mooncake's TCP
/// transport: ≈ 36 GB/s on 4 × 200 Gb/s).
pub const TCP_EFFICIENCY: f64 = 0.45;
/// Fixed time of one KV transfer over TCP, seconds (an assumption: RDMA's
/// handshake plus the copies through host memory).
pub const TCP_LATENCY_S: f64 = 1.0e-3;

impl KvLink {
    /// Every named link, for menus and the catalogue.
    pub const NAMED: [KvLink; 4] = [
        KvLink::Nvlink,
        KvLink::Infiniband,
        KvLink::Roce,
        KvLink::Ethernet,
    ];

    /// Its name in a scenario and on the page.
    pub fn name(self) -> &'static str {
        match self {
            KvLink::Nvlink => "nvlink",
            KvLink::Infiniband => "infiniband",
            KvLink::Roce => "roce",
            KvLink::Ethernet => "ethernet",
            KvLink::Custom { .. } => "custom",
        }
    }

    /// The named link called `name`.
    pub fn named(name: &str) -> Option<KvLink> {
        KvLink::NAMED.into_iter().find(|l| l.name() == name)
    }

    /// What a transfer between a replica of `gpus_from` GPUs of type `from`
    /// and one of `gpus_to` GPUs of type `to` reaches: (bytes per second,
    /// fixed latency in seconds).
    pub fn rate(self, from: &Gpu, gpus_from: u32, to: &Gpu, gpus_to: u32) -> (f64, f64) {
        let gpus = f64::from(gpus_from.min(gpus_to).max(1));
        let per_gpu = |gb: f64| gb * 1e9 * gpus * RDMA_EFFICIENCY;
        match self {
            KvLink::Nvlink => {
                let link = from.spec().link_gb_per_s.min(to.spec().link_gb_per_s);
                (per_gpu(link), RDMA_LATENCY_S)
            }
            KvLink::Infiniband => (per_gpu(400.0 / 8.0), RDMA_LATENCY_S),
            KvLink::Roce => (per_gpu(200.0 / 8.0), RDMA_LATENCY_S),
            KvLink::Ethernet => (100.0 / 8.0 * 1e9 * TCP_EFFICIENCY, TCP_LATENCY_S),
            KvLink::Custom {
                gb_per_s,
                latency_us,
            } => (gb_per_s * 1e9, latency_us * 1e-6),
        }
    }
}

/// The names [`Scenario::disaggregated`] gives the two pools.
pub const PREFILL_POOL: &str = "prefill";
/// See [`PREFILL_POOL`].
pub const DECODE_POOL: &str = "decode";

impl Scenario {
    /// This scenario with its first pool split in two (xPyD): the first pool,
    /// renamed [`PREFILL_POOL`] with `prefill` replicas, prefills and hands
    /// off over `link` to a copy of it, [`DECODE_POOL`], with `decode`
    /// replicas. Routes naming the first pool follow it.
    pub fn disaggregated(&self, prefill: u32, decode: u32, link: KvLink) -> Scenario {
        let mut s = self.clone();
        let old = s.serving.pool_name().to_owned();
        let mut d = s.serving.clone();
        d.name = Some(DECODE_POOL.into());
        d.replicas = decode;
        d.disaggregation = None;
        s.serving.name = Some(PREFILL_POOL.into());
        s.serving.replicas = prefill;
        s.serving.disaggregation = Some(Disaggregation {
            decode_pool: DECODE_POOL.into(),
            link,
        });
        for r in &mut s.routing {
            if r.to == old || r.to == crate::api::SELF_HOSTED {
                r.to = PREFILL_POOL.into();
            }
            if let Some(o) = &mut r.overflow
                && (o.to == old || o.to == crate::api::SELF_HOSTED)
            {
                o.to = PREFILL_POOL.into();
            }
        }
        if let Some(api) = &mut s.api {
            if api.default_backend == old {
                api.default_backend = PREFILL_POOL.into();
            }
            for r in &mut api.routes {
                if r.backend == old {
                    r.backend = PREFILL_POOL.into();
                }
            }
        }
        s.pools.insert(0, d);
        s
    }

    /// Pool `i`'s decode pool, by index, when it hands off (and names one
    /// that exists).
    pub fn decode_pool_of(&self, i: usize) -> Option<usize> {
        let h = self.pool(i).disaggregation.as_ref()?;
        self.all_pools()
            .position(|p| p.pool_name() == h.decode_pool)
    }

    /// Whether pool `i` decodes for some prefill pool.
    pub fn decodes_for_others(&self, i: usize) -> bool {
        (0..self.pool_count()).any(|p| p != i && self.decode_pool_of(p) == Some(i))
    }

    /// Check every hand-off: its decode pool exists, is another pool that
    /// hands nothing off itself and that no route sends requests to, and
    /// both pools batch by iteration on the GPU physics with the same model
    /// and KV format (the cache moves as it is), neither autoscaling.
    pub(super) fn validate_disaggregation(&self, problems: &mut Vec<String>) {
        for (i, p) in self.all_pools().enumerate() {
            let Some(h) = &p.disaggregation else {
                continue;
            };
            let at = if i == 0 {
                "serving.disaggregation".to_owned()
            } else {
                format!("pools[{}].disaggregation", i - 1)
            };
            if let KvLink::Custom {
                gb_per_s,
                latency_us,
            } = h.link
            {
                if !(gb_per_s.is_finite() && (0.01..=100_000.0).contains(&gb_per_s)) {
                    problems.push(format!(
                        "{at}.link.custom.gb_per_s must be 0.01..=100000 GB/s, got {gb_per_s}"
                    ));
                }
                if !(latency_us.is_finite() && (0.0..=1e7).contains(&latency_us)) {
                    problems.push(format!(
                        "{at}.link.custom.latency_us must be 0..=10000000 µs, got {latency_us}"
                    ));
                }
            }
            let Some(d) = self.decode_pool_of(i) else {
                problems.push(format!(
                    "{at}.decode_pool must name another pool ({}), got {:?}",
                    self.all_pools()
                        .enumerate()
                        .filter(|&(j, _)| j != i)
                        .map(|(_, q)| format!("{:?}", q.pool_name()))
                        .collect::<Vec<_>>()
                        .join(", "),
                    h.decode_pool
                ));
                continue;
            };
            let q = self.pool(d);
            let name = q.pool_name();
            if d == i {
                problems.push(format!(
                    "{at}.decode_pool names the pool itself ({name:?}): a pool that prefills hands off to another"
                ));
                continue;
            }
            if q.disaggregation.is_some() {
                problems.push(format!(
                    "{at}.decode_pool {name:?} hands its own prompts off: a decode pool decodes, it does not prefill for another"
                ));
            }
            for (who, s) in [("this pool", p), ("the decode pool", q)] {
                hand_off_side(&at, who, s, problems);
            }
            if p.model != q.model || p.kv_cache != q.kv_cache {
                problems.push(format!(
                    "{at}: the decode pool {name:?} must serve the same model with the same KV-cache format ({} {}, got {} {}): the cache moves as it is",
                    p.model.name(),
                    p.kv_cache.name(),
                    q.model.name(),
                    q.kv_cache.name()
                ));
            }
            if q.router == super::Router::CentralQueue {
                problems.push(format!(
                    "{at}: the decode pool {name:?} routes with a central queue; hand-offs go to one decode replica, which pulls the cache (pick another router)"
                ));
            }
            for k in &self.workload.classes {
                if self
                    .reachable_targets(&k.name)
                    .contains(&super::Target::Pool(d))
                {
                    problems.push(format!(
                        "class {:?} is routed to the decode pool {name:?}: it receives only hand-offs from {:?} (route the class to the prefill pool)",
                        k.name,
                        p.pool_name()
                    ));
                }
            }
        }
    }
}

/// Both sides of a hand-off batch by iteration on the GPU physics, without
/// speculative decoding or autoscaling (not modelled there yet).
fn hand_off_side(at: &str, who: &str, s: &super::Serving, problems: &mut Vec<String>) {
    if !matches!(
        s.batching,
        Batching::Continuous { .. } | Batching::ChunkedPrefill { .. }
    ) || s.service != ServiceModel::Physics
    {
        problems.push(format!(
                "{at}: {who} must batch by iteration (continuous or chunked prefill) on the GPU physics; the KV cache moves between running engines"
            ));
    }
    if s.speculative.is_some() {
        problems.push(format!(
                "{at}: {who} decodes speculatively; speculative decoding on a disaggregated pool is not modelled yet"
            ));
    }
    if s.autoscale.is_some() {
        problems.push(format!(
                "{at}: {who} autoscales; autoscaling a disaggregated pool is not modelled yet (fix its replicas)"
            ));
    }
}
