//! Pools of replicas and the routing rules between them and API tiers.
//!
//! Replicas of every pool live in one array, pool by pool (`PoolCfg::first`
//! onwards), each with its own queue; a pool with a central queue uses the
//! queue of its first replica. A request picks its backend once, when it is
//! created: the first matching rule, else its class's route.

use super::policy::{Policy, Service};
use super::request::Backend;
use super::{BLOCK, Simulation, waiting};
use crate::physics::{Efficiency, Timing};
use crate::report::PhysicalLimit;
use crate::scenario::{Router, Scenario, ServiceModel, Serving, Target, ValidScenario};

/// One pool: what its replicas are and how they are billed.
pub(super) struct PoolCfg {
    pub(super) name: String,
    /// Its hardware and model in words, for the report.
    pub(super) hardware: String,
    /// Its replicas are `first..first + replicas` of the fleet's array.
    pub(super) first: usize,
    pub(super) replicas: usize,
    pub(super) policy: Policy,
    pub(super) service: Service,
    pub(super) router: Router,
    /// Largest queue: per replica, or for the whole pool under a central queue.
    pub(super) max_queue: u64,
    /// KV-cache capacity of one replica, blocks.
    pub(super) kv_blocks: u64,
    /// KV blocks kept free at admission so decodes rarely need to preempt (vLLM's 1 % watermark).
    pub(super) kv_watermark: u64,
    /// Blocks each admitted sequence holds for its sliding-window layers
    /// (`Deployment::sequence_kv_blocks`; 0 without).
    pub(super) seq_kv_blocks: u64,
    pub(super) gpus_per_replica: u32,
    pub(super) usd_per_gpu_hour: f64,
    /// Its GPUs' power figures (None: a custom GPU stating none).
    pub(super) power: Option<crate::physics::Power>,
    /// Electricity price, $/kWh.
    pub(super) usd_per_kwh: f64,
    /// Whether some class can reach it (only then is it billed).
    pub(super) used: bool,
    /// The serving software's API-server time before a request reaches the
    /// scheduler, and after its tokens leave the GPU.
    pub(super) frontend_in_ns: u64,
    pub(super) frontend_out_ns: u64,
    /// Automatic prefix caching (iteration-level batching on the GPU physics).
    pub(super) prefix_caching: bool,
    /// The scheduler forms each pass when the one before it is launched
    /// (vLLM's async scheduling; [`crate::physics::Profile::async_scheduling`]).
    pub(super) async_scheduling: bool,
    /// Each class's priority level here (0 the most urgent: its rank among
    /// the classes' distinct priorities under the priority policy, else 0).
    pub(super) level_of: Vec<u8>,
    /// Priority levels its queues keep.
    pub(super) levels: usize,
    /// One replica's roofline bound (GPU physics only).
    pub(super) limit: Option<PhysicalLimit>,
    /// Its autoscaler (then `replicas` is its most, and `initial` serve at
    /// the start).
    pub(super) scale: Option<super::autoscale::ScaleCfg>,
    pub(super) initial: usize,
    /// Prefill only, handing each prompt's cache to another pool.
    pub(super) disaggregation: Option<super::disaggregation::DisaggregationCfg>,
    /// Speculative decoding.
    pub(super) speculative: Option<super::speculative::SpeculativeCfg>,
}

impl PoolCfg {
    /// Pool `index` of `scenario`, its replicas from `first`; `timing`
    /// times its passes (the first pool's may be a calibration's own).
    pub(super) fn new(
        scenario: &ValidScenario,
        index: usize,
        first: usize,
        timing: Timing,
    ) -> Self {
        let s = scenario.pool(index);
        let (service, kv_blocks) = Service::new(scenario, s, timing);
        let (frontend_in_ns, frontend_out_ns) = match timing {
            Timing::Serving(c) => (c.frontend_in_ns, c.frontend_out_ns),
            Timing::TensorrtLlm(_) => (0, 0),
        };
        let central = s.router == Router::CentralQueue;
        let level_of = waiting::priority_levels(scenario, s);
        let levels = level_of
            .iter()
            .map(|&l| usize::from(l) + 1)
            .max()
            .unwrap_or(1);
        PoolCfg {
            name: s.pool_name().to_owned(),
            hardware: s.hardware_text(),
            first,
            replicas: s.autoscale.as_ref().map_or(s.replicas, |a| a.max_replicas) as usize,
            initial: s.replicas as usize,
            scale: s.autoscale.as_ref().map(|a| {
                let weights = scenario.deployment_for(s).weight_bytes();
                super::autoscale::ScaleCfg::new(a, weights, &s.service)
            }),
            policy: Policy::new(&s.batching),
            service,
            router: s.router,
            max_queue: u64::from(s.max_queue_per_replica)
                * if central { u64::from(s.replicas) } else { 1 },
            kv_blocks,
            kv_watermark: if kv_blocks >= 100 { kv_blocks / 100 } else { 0 },
            seq_kv_blocks: match s.service {
                ServiceModel::Physics => scenario.deployment_for(s).sequence_kv_blocks(),
                ServiceModel::Abstract { .. } => 0,
            },
            gpus_per_replica: s.gpus_per_replica,
            usd_per_gpu_hour: s.usd_per_gpu_hour(),
            power: s.gpu.spec().power,
            usd_per_kwh: s.usd_per_kwh.unwrap_or(0.0),
            used: scenario.pool_used(index),
            frontend_in_ns,
            frontend_out_ns,
            // A decode pool receives whole prompts' caches: nothing to look
            // up (a preempted sequence recomputes its prompt in full).
            prefix_caching: s.caches_prefixes() && !scenario.decodes_for_others(index),
            disaggregation: super::disaggregation::DisaggregationCfg::of(scenario, index),
            speculative: super::speculative::SpeculativeCfg::of(scenario, index, timing),
            async_scheduling: matches!(timing, Timing::Serving(_)) && s.async_scheduling_setting(),
            level_of,
            levels,
            limit: match s.service {
                ServiceModel::Physics => Some(physical_limit(scenario, s, kv_blocks)),
                ServiceModel::Abstract { .. } => None,
            },
        }
    }

    /// The replicas of the pool, as indices into the fleet's array.
    pub(super) fn range(&self) -> std::ops::Range<usize> {
        self.first..self.first + self.replicas
    }
}

/// An upper bound on one replica's output tokens/s that no run can pass: decode
/// steps at the datasheet peak with no overheads, as many sequences as the
/// configuration allows (capped by what the KV cache holds), each with the
/// shortest context the workload has (its shortest prompt and one token). A
/// pass of B sequences yields at most B tokens and takes at least this
/// roofline's time for B, and B / time grows with B; so tokens per busy second
/// never exceed the bound, and the achieved fraction stays within [0, 1].
fn physical_limit(scenario: &Scenario, pool: &Serving, kv_blocks: u64) -> PhysicalLimit {
    let context = scenario.min_input_tokens().saturating_add(1);
    let fits = (kv_blocks * BLOCK / u64::from(context)).clamp(1, u64::from(u32::MAX)) as u32;
    let batch = pool.batching.max_seqs().min(fits).max(1);
    let model = scenario.deployment_for(pool).step_model(Efficiency::PEAK);
    let per_step = pool.max_tokens_per_step();
    PhysicalLimit {
        batch,
        context_tokens: context,
        output_tokens_per_s: model.decode_roofline_tokens_per_s(batch, context) * per_step,
        achieved_fraction: 0.0,
    }
}

/// The fleet's replicas, pool by pool: an autoscaled pool's slots beyond
/// those serving at the start are off.
pub(super) fn replicas(pools: &[PoolCfg]) -> Vec<super::replica::Replica> {
    debug_assert!(
        pools.first().is_none_or(|p| p.first == 0)
            && pools
                .windows(2)
                .all(|w| w[0].first + w[0].replicas == w[1].first),
        "the pools' replicas lie one after another"
    );
    debug_assert!(
        pools.iter().all(|p| p.initial <= p.replicas),
        "a pool starts with at most its slots"
    );
    pools
        .iter()
        .enumerate()
        .flat_map(|(p, pool)| {
            (0..pool.replicas).map(move |i| super::replica::Replica {
                pool: p as u16,
                up: if i < pool.initial {
                    super::replica::Up::Serving
                } else {
                    super::replica::Up::Off
                },
                ..Default::default()
            })
        })
        .collect()
}

/// One waiting queue per replica (a central queue is its pool's first
/// replica's), with the pool's priority levels.
pub(super) fn queues(pools: &[PoolCfg]) -> Vec<waiting::Waiting<super::request::ReqId>> {
    pools
        .iter()
        .flat_map(|pool| (0..pool.replicas).map(|_| waiting::Waiting::new(pool.levels)))
        .collect()
}

/// Each pool's router index over its replicas.
pub(super) fn indices(pools: &[PoolCfg]) -> Vec<super::router::ReplicaIndex> {
    pools
        .iter()
        .map(|p| super::router::ReplicaIndex::new(p.replicas))
        .collect()
}

/// A routing rule, compiled: conditions on the request, then its backend.
pub(super) struct Rule {
    class: Option<u16>,
    prompt_under: Option<u32>,
    share: Option<f64>,
    to: Backend,
    /// Past this many requests waiting per replica in `to`'s pool, here.
    overflow: Option<(u64, Backend)>,
}

/// Which backend serves each class, in class order.
pub(super) fn class_backends(scenario: &crate::scenario::Scenario) -> Vec<Backend> {
    scenario
        .workload
        .classes
        .iter()
        .map(|k| backend(scenario.class_target(&k.name)))
        .collect()
}

/// A scenario's backend as the engine knows it.
pub(super) fn backend(t: Target) -> Backend {
    match t {
        Target::Pool(p) => Backend::Pool(p as u16),
        Target::Tier(tier, service) => Backend::Api {
            tier: tier as u16,
            service,
        },
    }
}

/// The scenario's routing rules, compiled (validation checked every name).
pub(super) fn rules(scenario: &ValidScenario) -> Vec<Rule> {
    let named = |n: &str| backend(scenario.target_named(n).unwrap_or(Target::Pool(0)));
    scenario
        .routing
        .iter()
        .map(|r| Rule {
            class: r.class.as_ref().map(|c| {
                let classes = &scenario.workload.classes;
                classes.iter().position(|k| &k.name == c).unwrap_or(0) as u16
            }),
            prompt_under: r.prompt_under,
            share: r.share,
            to: named(&r.to),
            overflow: r
                .overflow
                .as_ref()
                .map(|o| (u64::from(o.queue_per_replica), named(&o.to))),
        })
        .collect()
}

/// Whether some rule splits by share (then each task draws its place).
pub(super) fn splits(rules: &[Rule]) -> bool {
    rules.iter().any(|r| r.share.is_some())
}

impl Simulation {
    /// Where a new request of `class` with `input` prompt tokens goes: the
    /// first rule that matches it, else its class's route.
    pub(super) fn choose_backend(&self, class: u16, input: u32, route_u: f64) -> Backend {
        let rules = &self.cfg.rules;
        if rules.is_empty() {
            return self.cfg.class_backend[class as usize];
        }
        // The task's uniform draw, rescaled past each share it missed, so
        // each share is a fraction of what reaches its rule.
        let mut u = route_u;
        for r in rules {
            if r.class.is_some_and(|c| c != class) || r.prompt_under.is_some_and(|n| input >= n) {
                continue;
            }
            // u < 1, so a share of 1 always matches: no division by 0.
            if let Some(s) = r.share
                && u >= s
            {
                u = (u - s) / (1.0 - s);
                continue;
            }
            return match (r.to, r.overflow) {
                (Backend::Pool(p), Some((over, elsewhere))) if self.backed_up(p, over) => elsewhere,
                (to, _) => to,
            };
        }
        self.cfg.class_backend[class as usize]
    }

    /// More than `per_replica` requests waiting per replica in pool `p`.
    fn backed_up(&self, p: u16, per_replica: u64) -> bool {
        // Per replica serving, as the autoscaler's queue signal reads it
        // (every replica of a fixed pool).
        let p = usize::from(p);
        self.pool_waiting(p) > per_replica * u64::from(self.st.scaling[p].serving.max(1))
    }
}
