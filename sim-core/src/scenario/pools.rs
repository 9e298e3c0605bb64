//! Pools and routing: the self-hosted side as named pools (`serving` is the
//! first, `pools` the rest), and the rules that send each request to a pool
//! or an API tier. One pool and no rules is the fleet every scenario had
//! before pools existed, bit for bit.

use super::{Scenario, Serving, bounds};
use crate::api::SELF_HOSTED;
use serde::{Deserialize, Serialize};

/// One rule of `routing`: requests it matches go to `to` (or, past the
/// overflow threshold, to `overflow.to`). Rules are tried in order; the
/// first that matches decides. A request no rule matches goes where its
/// class's `api.routes` entry or `api.default_backend` sends it (without
/// `api`, the first pool).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoutingRule {
    /// Matches requests of this class only (None: every class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Matches prompts of fewer than this many tokens only ("under 1,000
    /// tokens go to the small model").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_under: Option<u32>,
    /// Matches this fraction of the tasks its other conditions match (a
    /// share split), drawn once per task so a conversation or an agent chain
    /// stays on one backend; the rest go on to the next rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// Where matching requests go: a pool's name (the first pool is also
    /// `"self-hosted"`) or an API tier's.
    pub to: String,
    /// Send matching requests elsewhere while the pool is backed up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow: Option<Overflow>,
}

/// An overflow: while the pool `to` names has more than
/// `queue_per_replica` requests waiting per replica, matching requests go
/// to `to` here instead ("to the API when the pool's queue exceeds N").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Overflow {
    /// Requests waiting per replica (the pool's queues over its replicas)
    /// above which the rule overflows.
    pub queue_per_replica: u32,
    /// A pool's or an API tier's name.
    pub to: String,
}

/// A pool's autoscaler: every `interval_s` it reads `signal` over the
/// replicas serving and asks for `ceil(replicas × signal / target)` of
/// them (Kubernetes' HPA rule, 10 % tolerance), within
/// `min_replicas..=max_replicas`. More start at once and serve once their
/// cold start ends (weights loaded at `load_gb_per_s`, then
/// `engine_start_s`); fewer are asked for only once the lower count has
/// held for `scale_down_after_s`, idle replicas stopping first and busy
/// ones finishing their work. `min_replicas` 0 scales to zero. A pool is
/// billed for the replica-seconds its replicas are up, cold starts
/// included; `replicas` is how many serve at the start.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Autoscale {
    /// What the autoscaler reads.
    pub signal: ScaleSignal,
    /// The signal's target value: requests waiting per replica, or a
    /// fraction (KV use, GPU busy) in (0, 1].
    pub target: f64,
    /// Fewest replicas (0 scales to zero).
    pub min_replicas: u32,
    /// Most replicas.
    pub max_replicas: u32,
    /// Seconds between readings (HPA's 15 s by default).
    #[serde(default = "fifteen")]
    pub interval_s: f64,
    /// Seconds a lower count must hold before replicas stop (HPA's 300 s
    /// scale-down stabilisation by default).
    #[serde(default = "three_hundred")]
    pub scale_down_after_s: f64,
    /// Bandwidth a starting replica loads its weights at, GB/s (default 2:
    /// local NVMe; object storage over the network is nearer 0.5–1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_gb_per_s: Option<f64>,
    /// Seconds from weights loaded to serving: the engine's start (process,
    /// compilation, CUDA graphs, warm-up); default 60.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_start_s: Option<f64>,
}

fn fifteen() -> f64 {
    15.0
}

fn three_hundred() -> f64 {
    300.0
}

/// What an autoscaler reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScaleSignal {
    /// Requests waiting in the pool per serving replica.
    QueuePerReplica,
    /// Mean KV-cache use of the serving replicas, 0..=1.
    KvUse,
    /// Fraction of the last interval the serving replicas were busy.
    GpuBusy,
}

/// Default weight-loading bandwidth of a starting replica, GB/s.
pub const LOAD_GB_PER_S: f64 = 2.0;
/// Default engine start after the weights are loaded, s.
pub const ENGINE_START_S: f64 = 60.0;

impl ScaleSignal {
    /// The target a signal starts from: 4 requests waiting per replica, KV
    /// 80 % used, GPUs 70 % busy.
    pub fn default_target(self) -> f64 {
        match self {
            ScaleSignal::QueuePerReplica => 4.0,
            ScaleSignal::KvUse => 0.8,
            ScaleSignal::GpuBusy => 0.7,
        }
    }
}

impl Autoscale {
    /// An autoscaler on `signal` at its default target within
    /// `min..=max`, reading every 15 s and scaling down after 300 s (HPA's
    /// defaults), with the default cold start.
    pub fn new(signal: ScaleSignal, min_replicas: u32, max_replicas: u32) -> Autoscale {
        Autoscale {
            signal,
            target: signal.default_target(),
            min_replicas,
            max_replicas,
            interval_s: fifteen(),
            scale_down_after_s: three_hundred(),
            load_gb_per_s: None,
            engine_start_s: None,
        }
    }

    /// Check the autoscaler of a pool of `replicas` at the start, naming
    /// fields under `at` (`serving.autoscale`).
    pub(super) fn problems(&self, at: &str, replicas: u32, problems: &mut Vec<String>) {
        let max = bounds::REPLICAS;
        if !(1..=max).contains(&self.max_replicas) {
            problems.push(format!(
                "{at}.max_replicas must be 1..={max}, got {}",
                self.max_replicas
            ));
        }
        if self.min_replicas > self.max_replicas {
            problems.push(format!(
                "{at}.min_replicas ({}) must be ≤ max_replicas ({})",
                self.min_replicas, self.max_replicas
            ));
        }
        if !(self.min_replicas..=self.max_replicas).contains(&replicas) {
            problems.push(format!(
                "serving.replicas (the replicas serving at the start) must be within {at}.min_replicas..=max_replicas ({}..={}), got {replicas}",
                self.min_replicas, self.max_replicas
            ));
        }
        let (lo, hi) = match self.signal {
            ScaleSignal::QueuePerReplica => (0.01, 1e6),
            ScaleSignal::KvUse | ScaleSignal::GpuBusy => (0.01, 1.0),
        };
        if !(self.target.is_finite() && self.target >= lo && self.target <= hi) {
            problems.push(format!(
                "{at}.target must be {lo}..={hi} for {:?}, got {}",
                self.signal, self.target
            ));
        }
        let range =
            |problems: &mut Vec<String>, name: &str, v: f64, lo: f64, hi: f64, unit: &str| {
                if !(v.is_finite() && v >= lo && v <= hi) {
                    problems.push(format!("{at}.{name} must be {lo}..={hi}{unit}, got {v}"));
                }
            };
        range(problems, "interval_s", self.interval_s, 1.0, 3600.0, " s");
        range(
            problems,
            "scale_down_after_s",
            self.scale_down_after_s,
            0.0,
            86_400.0,
            " s",
        );
        if let Some(b) = self.load_gb_per_s {
            range(problems, "load_gb_per_s", b, 0.01, 1000.0, " GB/s");
        }
        if let Some(t) = self.engine_start_s {
            range(problems, "engine_start_s", t, 0.0, 3600.0, " s");
        }
    }
}

/// Where a request can be served: a pool, or an API tier (one of its
/// services).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A self-hosted pool, by index (0 is `serving`).
    Pool(usize),
    /// An API tier, by index, and which of its services.
    Tier(usize, crate::api::Service),
}

/// Most pools a scenario may have.
pub const MAX_POOLS: usize = 8;
/// Most routing rules a scenario may have.
pub const MAX_RULES: usize = 32;

impl Serving {
    /// The pool's name, `"self-hosted"` when it has none (the first pool's
    /// default, which old links use).
    pub fn pool_name(&self) -> &str {
        self.name.as_deref().unwrap_or(SELF_HOSTED)
    }

    /// Its hardware and model in words: "3 × 4 H100 SXM, Llama-3.1-70B FP8"
    /// ("1–8 × …" when it autoscales).
    pub fn hardware_text(&self) -> String {
        let replicas = match &self.autoscale {
            Some(a) => format!("{}–{}", a.min_replicas, a.max_replicas),
            None => self.replicas.to_string(),
        };
        format!(
            "{} × {} {}, {} {}",
            replicas,
            self.gpus_per_replica,
            self.gpu.spec().name,
            self.model.name(),
            self.weights.name()
        )
    }

    /// Replica slots the engine keeps for the pool: its most when it
    /// autoscales, else its replicas.
    pub fn slots(&self) -> u32 {
        self.autoscale
            .as_ref()
            .map_or(self.replicas, |a| a.max_replicas)
    }

    /// Most tokens a decode step yields a sequence: k + 1 under
    /// speculative decoding, else 1 (the bound the planner's pruning and
    /// the report's physical limit take).
    pub fn max_tokens_per_step(&self) -> f64 {
        self.speculative
            .map_or(1.0, |sp| f64::from(sp.tokens) + 1.0)
    }

    /// Price of one GPU-hour in this pool: the override, else the
    /// catalogue's indicative price.
    pub fn usd_per_gpu_hour(&self) -> f64 {
        self.usd_per_gpu_hour
            .unwrap_or_else(|| self.gpu.spec().usd_per_hour)
    }
}

impl Scenario {
    /// The self-hosted pools in order: `serving`, then `pools`.
    pub fn all_pools(&self) -> impl Iterator<Item = &Serving> {
        std::iter::once(&self.serving).chain(&self.pools)
    }

    /// How many pools (at least one).
    pub fn pool_count(&self) -> usize {
        1 + self.pools.len()
    }

    /// Pool `i` (0 is `serving`).
    pub fn pool(&self, i: usize) -> &Serving {
        if i == 0 {
            &self.serving
        } else {
            &self.pools[i - 1]
        }
    }

    /// The backend a name means: a pool (by its name; `"self-hosted"` is
    /// the first pool), else an API tier.
    pub fn target_named(&self, name: &str) -> Option<Target> {
        if name == SELF_HOSTED {
            return Some(Target::Pool(0));
        }
        if let Some(i) = self.all_pools().position(|p| p.pool_name() == name) {
            return Some(Target::Pool(i));
        }
        // A tier by name, or one of its variants by key (`NAME+flex`).
        let api = self.api.as_ref()?;
        let (tier, service) = crate::api::parse_backend_key(name);
        let i = api.tiers.iter().position(|t| t.name == tier)?;
        api.tiers[i]
            .offers(service)
            .then_some(Target::Tier(i, service))
    }

    /// Where a class's requests go when no routing rule matches them: its
    /// `api.routes` entry, else `api.default_backend`, else the first pool.
    pub fn class_target(&self, class: &str) -> Target {
        let Some(api) = self.api.as_ref() else {
            return Target::Pool(0);
        };
        let (backend, service) = api
            .routes
            .iter()
            .find(|r| r.class == class)
            .map_or((api.default_backend.as_str(), None), |r| {
                (r.backend.as_str(), Some(r.service()))
            });
        match self.target_named(backend) {
            Some(Target::Tier(i, named)) => Target::Tier(
                i,
                service
                    .filter(|s| *s != crate::api::Service::Standard)
                    .unwrap_or(named),
            ),
            Some(t) => t,
            None => Target::Pool(0),
        }
    }

    /// Every backend a request of class `class` (by name) can reach: its
    /// class's default and every rule that can match it, with overflows,
    /// and the API's fallback (a request any tier gives up on goes there:
    /// a fleet kept to take it is billed whether it is used or not).
    pub fn reachable_targets(&self, class: &str) -> Vec<Target> {
        let mut out = vec![self.class_target(class)];
        for f in self.api.iter().flat_map(|a| &a.fallback) {
            out.extend(self.target_named(f));
        }
        for r in &self.routing {
            if r.class.as_deref().is_some_and(|c| c != class) {
                continue;
            }
            out.extend(self.target_named(&r.to));
            if let Some(o) = &r.overflow {
                out.extend(self.target_named(&o.to));
            }
        }
        out
    }

    /// Whether some class can reach pool `i`, directly or as the decode
    /// pool of a prefill pool it reaches (only then is it billed).
    pub fn pool_used(&self, i: usize) -> bool {
        let reached = |j: usize| {
            self.workload
                .classes
                .iter()
                .any(|k| self.reachable_targets(&k.name).contains(&Target::Pool(j)))
        };
        reached(i)
            || (0..self.pool_count())
                .any(|p| p != i && self.decode_pool_of(p) == Some(i) && reached(p))
    }

    /// Check the pools' names and count, and the routing rules.
    pub(super) fn validate_pools(&self, problems: &mut Vec<String>) {
        if self.pools.len() + 1 > MAX_POOLS {
            problems.push(format!(
                "pools must hold at most {} pools besides serving, got {}",
                MAX_POOLS - 1,
                self.pools.len()
            ));
            return;
        }
        // Autoscaled pools count their most.
        let total: u64 = self.all_pools().map(|p| u64::from(p.slots())).sum();
        if total > u64::from(bounds::REPLICAS) && !self.pools.is_empty() {
            problems.push(format!(
                "pools: the pools' replicas (an autoscaled pool's max_replicas) must add up to at most {}, got {total}",
                bounds::REPLICAS
            ));
        }
        self.validate_pool_names(problems);
        if self.routing.len() > MAX_RULES {
            problems.push(format!(
                "routing must have at most {MAX_RULES} rules, got {}",
                self.routing.len()
            ));
            return;
        }
        for (i, r) in self.routing.iter().enumerate() {
            self.validate_rule(i, r, problems);
        }
    }

    /// Each pool's name: the first may go unnamed, the rest are named,
    /// none twice, none an API tier's.
    fn validate_pool_names(&self, problems: &mut Vec<String>) {
        let tiers: Vec<&str> = self
            .api
            .iter()
            .flat_map(|a| a.tiers.iter().map(|t| t.name.as_str()))
            .collect();
        for (i, p) in self.all_pools().enumerate() {
            let field = if i == 0 {
                "serving.name".to_owned()
            } else {
                format!("pools[{}].name", i - 1)
            };
            match &p.name {
                None if i > 0 => problems.push(format!(
                    "{field} is needed: a pool beyond the first is named"
                )),
                None => {}
                Some(n) if n.is_empty() || n.len() > 64 => {
                    problems.push(format!("{field} must be 1..=64 bytes, got {n:?}"));
                }
                Some(n) if (n == SELF_HOSTED && i > 0) || tiers.contains(&n.as_str()) => {
                    problems.push(format!(
                        "{field} {n:?} is already the name of {}",
                        if n == SELF_HOSTED {
                            "the first pool"
                        } else {
                            "an API tier"
                        }
                    ));
                }
                Some(n) if self.all_pools().take(i).any(|q| q.pool_name() == n) => {
                    problems.push(format!("{field} {n:?} names two pools"));
                }
                Some(_) => {}
            }
        }
    }

    /// One routing rule: its class, prompt bound and share, where it sends
    /// and where it overflows to.
    fn validate_rule(&self, i: usize, r: &RoutingRule, problems: &mut Vec<String>) {
        let f = format!("routing[{i}]");
        if let Some(c) = &r.class
            && !self.workload.classes.iter().any(|k| &k.name == c)
        {
            problems.push(format!(
                "{f}.class {c:?} is not a class of workload.classes"
            ));
        }
        if let Some(n) = r.prompt_under
            && !(1..=bounds::TOKENS).contains(&n)
        {
            problems.push(format!(
                "{f}.prompt_under must be 1..={} tokens, got {n}",
                bounds::TOKENS
            ));
        }
        if let Some(s) = r.share
            && !(s.is_finite() && s > 0.0 && s <= 1.0)
        {
            problems.push(format!("{f}.share must be > 0 and ≤ 1, got {s}"));
        }
        let to = self.target_named(&r.to);
        if to.is_none() {
            problems.push(format!(
                "{f}.to must name a pool ({}) or an API tier, got {:?}",
                self.all_pools()
                    .map(|p| format!("{:?}", p.pool_name()))
                    .collect::<Vec<_>>()
                    .join(", "),
                r.to
            ));
        }
        if let Some(o) = &r.overflow {
            if !matches!(to, Some(Target::Pool(_)) | None) {
                problems.push(format!(
                    "{f}.overflow needs {f}.to to be a pool (an API tier has no queue to overflow), got {:?}",
                    r.to
                ));
            }
            let limit = u64::from(bounds::QUEUE);
            if u64::from(o.queue_per_replica) > limit {
                problems.push(format!(
                    "{f}.overflow.queue_per_replica must be 0..={limit}, got {}",
                    o.queue_per_replica
                ));
            }
            match self.target_named(&o.to) {
                None => problems.push(format!(
                    "{f}.overflow.to must name a pool or an API tier, got {:?}",
                    o.to
                )),
                Some(t) if Some(t) == to => problems.push(format!(
                    "{f}.overflow.to must differ from {f}.to, got {:?} for both",
                    o.to
                )),
                Some(_) => {}
            }
        }
    }
}
