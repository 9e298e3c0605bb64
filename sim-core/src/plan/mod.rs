//! The capacity planner: the cheapest setups that meet an SLO at a load, and the
//! headroom of one setup (how far its load can grow before the SLO breaks).
//!
//! The search is a set of independent [`Search`]es, one per hardware
//! configuration (GPU × GPUs per replica × weight precision × batch size) plus
//! one per API tier × rate-limit tier. Configurations that cannot work are pruned
//! before any simulation: the model does not fit; one sequence already decodes
//! slower than the TPOT target at the datasheet's peak; the roofline bound needs
//! more replicas than allowed. The replica count starts at the roofline's lower
//! bound, doubles until the SLO holds, then bisects. Each search is a small state
//! machine (`next` scenario to run, `feed` its report), so the CLI can run
//! searches in parallel and the page can run them in slices; results are the same.

use crate::Report;
use crate::api::ClientPolicy;
use crate::physics::{BatchShape, Efficiency, Gpu, Precision};
use crate::scenario::{Arrival, Batching, Scenario, ScenarioError};
use crate::sweep::Summary;
use serde::{Deserialize, Serialize};

mod assemble;
mod headroom;

pub use assemble::{ApiAnswer, Plan, assemble, groups, plan, run_group};

pub use headroom::{Headroom, HeadroomSearch, MAX_GROWTH, headroom, scale_load};

/// Make `s` the setup `config` with `replicas` replicas (the page's "Apply"):
/// self-hosted setups drop the API and run chunked prefill with the batch
/// size; API setups send every class to the tier at the rate-limit multiple.
pub fn apply_config(s: &mut Scenario, config: &Config, replicas: u32) -> Result<(), String> {
    match config {
        Config::SelfHosted {
            gpu,
            tp,
            weights,
            max_seqs,
        } => {
            s.api = None;
            s.serving.gpu = *gpu;
            s.serving.usd_per_gpu_hour = None;
            s.serving.gpus_per_replica = *tp;
            s.serving.weights = *weights;
            s.serving.batching = Batching::ChunkedPrefill {
                max_num_seqs: *max_seqs,
                max_num_batched_tokens: 2048.max(*max_seqs),
                chunk_tokens: 2048,
            };
            s.serving.replicas = replicas.max(1);
            Ok(())
        }
        Config::Api {
            tier,
            multiplier,
            client,
        } => match s.api.as_mut() {
            Some(a) => {
                a.default_backend = tier.clone();
                a.routes.clear();
                a.rate_limit_multiplier = *multiplier;
                if let Some(c) = client {
                    a.client = c.clone();
                }
                Ok(())
            }
            None => Err("the scenario has no API tiers".into()),
        },
    }
}

/// A duration in ms as a person reads it: ms, s or min.
pub fn duration(ms: f64) -> String {
    if ms < 1_000.0 {
        format!("{ms:.0} ms")
    } else if ms < 60_000.0 {
        format!("{:.1} s", ms / 1_000.0)
    } else {
        format!("{:.1} min", ms / 60_000.0)
    }
}

/// Targets a configuration must meet.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanSlo {
    /// p99 time to first token, ms.
    pub ttft_p99_ms: f64,
    /// p99 time per output token, ms.
    pub tpot_p99_ms: f64,
    /// Largest share of requests failed or rejected (errors and 429s reaching users).
    pub max_error_fraction: f64,
    /// Smallest share of requests meeting the scenario's SLO.
    pub min_goodput: f64,
}

impl PlanSlo {
    /// Check a report; `Ok` carries the worst margin (how far inside the targets,
    /// as a fraction: 0.2 = 20 % of headroom on the tightest target).
    pub fn check(&self, r: &Report) -> Result<f64, String> {
        let mut misses = Vec::new();
        let mut margin = f64::INFINITY;
        let mut limit = |name: &str, value: Option<f64>, target: f64| match value {
            Some(v) if v <= target => margin = margin.min(1.0 - v / target),
            Some(v) => misses.push(format!("{name} {} > {}", duration(v), duration(target))),
            None => misses.push(format!("{name}: no request completed")),
        };
        limit("p99 TTFT", r.overall.ttft.p99_ms, self.ttft_p99_ms);
        limit(
            "p99 TPOT",
            r.overall.tpot.p99_ms.or(Some(0.0)),
            self.tpot_p99_ms,
        );
        let errors =
            (r.requests.failed + r.requests.rejected) as f64 / r.requests.arrived.max(1) as f64;
        if errors > self.max_error_fraction {
            misses.push(format!(
                "errors {:.1} % > {:.1} %",
                errors * 100.0,
                self.max_error_fraction * 100.0
            ));
        }
        let good = r.throughput.goodput_fraction.unwrap_or(0.0);
        if good < self.min_goodput {
            misses.push(format!(
                "goodput {:.1} % < {:.1} %",
                good * 100.0,
                self.min_goodput * 100.0
            ));
        }
        if !r.complete {
            misses.push("the run hit a limit before draining".into());
        }
        if misses.is_empty() {
            Ok(margin.clamp(0.0, 1.0))
        } else {
            Err(misses.join("; "))
        }
    }
}

/// What the planner may choose from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Space {
    /// GPU types.
    pub gpus: Vec<Gpu>,
    /// GPUs per replica.
    pub tps: Vec<u32>,
    /// Weight precisions.
    pub weights: Vec<Precision>,
    /// Batch sizes (max_num_seqs with chunked prefill).
    pub max_seqs: Vec<u32>,
    /// Most replicas.
    pub max_replicas: u32,
    /// API rate-limit tiers to consider for each API model tier.
    pub api_multipliers: Vec<u32>,
    /// Consider self-hosted setups (for a scenario served by API tiers they
    /// run the fleet's model instead: a different model).
    pub self_hosted: bool,
}

impl Space {
    /// The default space for `s`: self-hosted setups only if some class
    /// already runs on the fleet, so an API scenario's plan keeps its model.
    pub fn for_scenario(s: &Scenario) -> Space {
        Space {
            self_hosted: s.uses_fleet(),
            ..Space::default()
        }
    }
}

impl Default for Space {
    fn default() -> Self {
        Space {
            gpus: Gpu::ALL.to_vec(),
            tps: vec![1, 2, 4, 8],
            weights: vec![Precision::Bf16, Precision::Fp8, Precision::Int4],
            max_seqs: vec![32, 64, 128, 256],
            max_replicas: 64,
            api_multipliers: vec![1, 2, 4, 8],
            self_hosted: true,
        }
    }
}

/// One kind of setup.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Config {
    /// Self-hosted replicas.
    SelfHosted {
        /// GPU.
        gpu: Gpu,
        /// GPUs per replica.
        tp: u32,
        /// Weights.
        weights: Precision,
        /// max_num_seqs.
        max_seqs: u32,
    },
    /// An API tier.
    Api {
        /// Tier name.
        tier: String,
        /// Rate-limit multiplier.
        multiplier: u32,
        /// The client policy, if not the scenario's own.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client: Option<ClientPolicy>,
    },
}

/// The client the planner tries next to the scenario's own: a queue that
/// turns 429s into waiting (the page's "queue" client).
pub const QUEUE_CLIENT: ClientPolicy = ClientPolicy::Queue {
    max_queue: 20_000,
    max_wait_s: 900.0,
};

impl Config {
    /// A short description.
    pub fn describe(&self, replicas: u32) -> String {
        match self {
            Config::SelfHosted {
                gpu,
                tp,
                weights,
                max_seqs,
            } => format!(
                "{replicas} × {tp} × {} {}, batch {max_seqs}",
                gpu.spec().name,
                weights.name()
            ),
            Config::Api {
                tier,
                multiplier,
                client,
            } => format!(
                "API {tier} at {multiplier}× limits{}",
                if client.is_some() {
                    ", client queue"
                } else {
                    ""
                }
            ),
        }
    }
}

/// A configuration evaluated at one size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evaluated {
    /// The configuration.
    pub config: Config,
    /// Replicas (0 for an API).
    pub replicas: u32,
    /// In words.
    pub description: String,
    /// Cost per month.
    pub usd_per_month: f64,
    /// `Ok(margin)` if it meets the SLO, else why not.
    pub verdict: Result<f64, String>,
    /// Self-hosting a scenario whose classes an API serves: the setup runs
    /// the fleet's model instead of the API tiers' (a different model).
    #[serde(default)]
    pub changes_model: bool,
    /// Its metrics.
    pub summary: Summary,
}

/// The search for the smallest passing replica count of one configuration.
#[derive(Clone, Debug)]
pub struct Search {
    config: Config,
    base: Scenario,
    slo: PlanSlo,
    max: u32,
    /// Largest count known to fail (0 = none).
    lo_fail: u32,
    /// Smallest count known to pass.
    hi_pass: Option<u32>,
    next: Option<u32>,
    /// Every evaluation, in order.
    pub evaluated: Vec<Evaluated>,
    /// Why the configuration was dropped without simulating, if it was.
    pub pruned: Option<String>,
    /// The KV blocks of one replica of this configuration.
    kv_blocks: u64,
    /// Whether some run hit a limit the batch size sets: a pass of
    /// `max_seqs` sequences, a preemption, or a KV cache nine-tenths full.
    bound: bool,
    /// Most KV blocks any run used.
    peak_blocks: f64,
    /// Most sequences in any run's pass.
    peak_batch: u64,
    /// The smaller batch size this search is skipped as identical to.
    pub same_as: Option<u32>,
    /// Self-hosting what API tiers served in the base scenario.
    changes_model: bool,
}

fn price_month(s: &Scenario, replicas: u32) -> f64 {
    f64::from(replicas * s.serving.gpus_per_replica)
        * s.usd_per_gpu_hour()
        * crate::report::HOURS_PER_MONTH
}

/// The offered load in tasks/s (open loop) or users (closed loop).
fn load(s: &Scenario) -> f64 {
    match &s.workload.arrival {
        Arrival::Poisson { rate_per_s } | Arrival::Gamma { rate_per_s, .. } => *rate_per_s,
        Arrival::ClosedLoop {
            users,
            think_time_s,
        } => {
            f64::from(users.iter().map(|u| u.users).max().unwrap_or(0))
                / think_time_s.mean().max(1e-3)
        }
        Arrival::Schedule { points } => points.iter().map(|p| p.rate_per_s).fold(0.0, f64::max),
        Arrival::Stages { stages } => stages.iter().map(|s| s.rate_per_s).fold(0.0, f64::max),
        Arrival::Trace { requests } => requests.len() as f64 / s.duration_s.max(1e-9),
    }
}

impl Search {
    /// A search for `config` on the workload of `base`.
    pub fn new(base: &Scenario, config: Config, slo: PlanSlo, space: &Space) -> Search {
        let mut s = base.clone();
        let mut pruned = None;
        let mut start = 1;
        if let Err(e) = apply_config(&mut s, &config, 1) {
            pruned = Some(e);
        }
        match &config {
            _ if pruned.is_some() => {}
            Config::SelfHosted { max_seqs, .. } => {
                if let Err(e) = s.check() {
                    pruned = Some(e.problems.join("; "));
                } else {
                    let model = s.deployment().step_model(Efficiency::PEAK);
                    let (out, ctx) = s.mean_tokens();
                    let one = model.step_time_ns(&BatchShape {
                        decode_seqs: 1,
                        decode_context_tokens: ctx as u64,
                        ..BatchShape::default()
                    }) as f64
                        / 1e6;
                    let bound = model.decode_roofline_tokens_per_s(*max_seqs, ctx as u32);
                    let need = load(&s) * out;
                    let min_replicas = (need / bound).ceil().max(1.0);
                    if one > slo.tpot_p99_ms {
                        pruned = Some(format!(
                            "one sequence alone decodes in {one:.1} ms at the datasheet peak, slower than the {:.0} ms TPOT target",
                            slo.tpot_p99_ms
                        ));
                    } else if min_replicas > f64::from(space.max_replicas) {
                        pruned = Some(format!(
                            "the roofline needs ≥ {min_replicas:.0} replicas for {need:.0} output tok/s; at most {} allowed",
                            space.max_replicas
                        ));
                    } else {
                        start = min_replicas as u32;
                    }
                }
            }
            Config::Api { .. } => {
                if let Err(e) = s.check() {
                    pruned = Some(e.problems.join("; "));
                }
            }
        }
        let max = if matches!(config, Config::Api { .. }) {
            1
        } else {
            space.max_replicas
        };
        let kv_blocks = if pruned.is_none() {
            s.deployment().kv_capacity_blocks().unwrap_or(0)
        } else {
            0
        };
        Search {
            kv_blocks,
            bound: false,
            peak_blocks: 0.0,
            peak_batch: 0,
            same_as: None,
            changes_model: match &config {
                Config::SelfHosted { .. } => base
                    .workload
                    .classes
                    .iter()
                    .any(|k| base.backend_of(&k.name).is_some()),
                // Another tier is another model.
                Config::Api { tier, .. } => base.workload.classes.iter().any(|k| {
                    base.backend_of(&k.name)
                        .and_then(|(i, _)| base.api.as_ref()?.tiers.get(i))
                        .is_some_and(|t| t.name != *tier)
                }),
            },
            config,
            base: s,
            slo,
            max,
            lo_fail: 0,
            hi_pass: None,
            next: if pruned.is_some() { None } else { Some(start) },
            evaluated: Vec::new(),
            pruned,
        }
    }

    /// The next scenario to simulate, or None when the search is over.
    pub fn next(&self) -> Option<Scenario> {
        let r = self.next?;
        let mut s = self.base.clone();
        if let Config::SelfHosted { .. } = self.config {
            s.serving.replicas = r;
        }
        Some(s)
    }

    /// Record the report of the scenario [`Self::next`] returned.
    pub fn feed(&mut self, report: &Report) {
        let Some(r) = self.next else { return };
        let verdict = self.slo.check(report);
        let api = matches!(self.config, Config::Api { .. });
        let u = &report.utilisation;
        let blocks = u.kv_use_peak * self.kv_blocks as f64;
        self.peak_blocks = self.peak_blocks.max(blocks);
        self.peak_batch = self.peak_batch.max(u.peak_batch);
        if let Config::SelfHosted { max_seqs, .. } = self.config {
            self.bound |= u.peak_batch >= u64::from(max_seqs)
                || u.preemptions > 0
                || blocks >= 0.9 * self.kv_blocks as f64;
        }
        let cost = if api {
            report.cost.usd_per_month
        } else {
            price_month(&self.base, r)
        };
        self.evaluated.push(Evaluated {
            changes_model: self.changes_model,
            config: self.config.clone(),
            replicas: if api { 0 } else { r },
            description: self.config.describe(r),
            usd_per_month: cost,
            verdict: verdict.clone(),
            summary: Summary::of(report),
        });
        if api {
            self.next = None;
            return;
        }
        if verdict.is_ok() {
            self.hi_pass = Some(r);
        } else {
            self.lo_fail = r;
        }
        self.next = match self.hi_pass {
            Some(hi) if hi - self.lo_fail <= 1 => None,
            Some(hi) => Some(self.lo_fail + (hi - self.lo_fail) / 2),
            None if r >= self.max => None,
            None => Some((r * 2).min(self.max)),
        };
    }

    /// Drive the search to the end with `run`.
    pub fn run_with(
        mut self,
        run: impl FnMut(Scenario) -> Result<Report, ScenarioError>,
    ) -> Search {
        self.drive(run);
        self
    }

    /// [`Self::run_with`] in place.
    pub fn drive(&mut self, mut run: impl FnMut(Scenario) -> Result<Report, ScenarioError>) {
        while let Some(s) = self.next() {
            match run(s) {
                Ok(r) => self.feed(&r),
                Err(e) => {
                    self.pruned = Some(e.to_string());
                    self.next = None;
                }
            }
        }
    }

    /// Mark the searches of `rest` that would repeat this finished one: the
    /// same GPU, GPUs per replica and weights with a larger batch size, when
    /// no run of this one reached its batch size, preempted, or came near a
    /// KV cache the size of theirs. Their runs would be identical step for
    /// step (the batch size never decides anything), so they are not run.
    pub fn skip_identical(&self, rest: &mut [Search]) {
        let Config::SelfHosted {
            gpu,
            tp,
            weights,
            max_seqs,
        } = self.config
        else {
            return;
        };
        if self.bound || self.pruned.is_some() || self.evaluated.is_empty() || self.next.is_some() {
            return;
        }
        for other in rest.iter_mut() {
            if let Config::SelfHosted {
                gpu: g,
                tp: t,
                weights: w,
                max_seqs: m,
            } = other.config
                && (g, t, w) == (gpu, tp, weights)
                && m > max_seqs
                && other.evaluated.is_empty()
                && other.pruned.is_none()
                && self.peak_blocks < 0.9 * other.kv_blocks as f64
            {
                other.pruned = Some(format!(
                    "runs exactly as batch {max_seqs} does: no pass there held more than {} sequences",
                    self.peak_batch
                ));
                other.next = None;
                other.same_as = Some(max_seqs);
            }
        }
    }

    /// The cheapest passing evaluation, if any.
    pub fn best(&self) -> Option<&Evaluated> {
        self.evaluated
            .iter()
            .filter(|e| e.verdict.is_ok())
            .min_by(|a, b| a.usd_per_month.total_cmp(&b.usd_per_month))
    }
}

/// Every search of a plan, in a fixed order.
pub fn searches(base: &Scenario, slo: PlanSlo, space: &Space) -> Vec<Search> {
    let mut out = Vec::new();
    let gpus: &[Gpu] = if space.self_hosted { &space.gpus } else { &[] };
    for &gpu in gpus {
        for &tp in &space.tps {
            for &weights in &space.weights {
                for &max_seqs in &space.max_seqs {
                    out.push(Search::new(
                        base,
                        Config::SelfHosted {
                            gpu,
                            tp,
                            weights,
                            max_seqs,
                        },
                        slo,
                        space,
                    ));
                }
            }
        }
    }
    if let Some(api) = &base.api {
        // The scenario's own client, and a client queue if it has none.
        let mut clients = vec![None];
        if !matches!(api.client, ClientPolicy::Queue { .. }) {
            clients.push(Some(QUEUE_CLIENT));
        }
        for t in &api.tiers {
            for client in &clients {
                for &m in &space.api_multipliers {
                    out.push(Search::new(
                        base,
                        Config::Api {
                            tier: t.name.clone(),
                            multiplier: m,
                            client: client.clone(),
                        },
                        slo,
                        space,
                    ));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
