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
use crate::physics::{BatchShape, Efficiency, Gpu, Precision};
use crate::scenario::{Arrival, Batching, Scenario, ScenarioError};
use crate::sweep::Summary;
use serde::{Deserialize, Serialize};

mod headroom;

pub use headroom::{Headroom, HeadroomSearch, MAX_GROWTH, headroom, scale_load};

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
        let mut limit = |name: &str, value: Option<f64>, target: f64, unit: &str| match value {
            Some(v) if v <= target => margin = margin.min(1.0 - v / target),
            Some(v) => misses.push(format!("{name} {v:.0} {unit} > {target:.0} {unit}")),
            None => misses.push(format!("{name}: no request completed")),
        };
        limit("p99 TTFT", r.overall.ttft.p99_ms, self.ttft_p99_ms, "ms");
        limit(
            "p99 TPOT",
            r.overall.tpot.p99_ms.or(Some(0.0)),
            self.tpot_p99_ms,
            "ms",
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
    },
}

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
            Config::Api { tier, multiplier } => format!("API {tier} at {multiplier}× limits"),
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
        match &config {
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
                s.serving.replicas = 1;
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
            Config::Api { tier, multiplier } => {
                match s.api.as_mut() {
                    Some(a) => {
                        a.default_backend = tier.clone();
                        a.routes.clear();
                        a.rate_limit_multiplier = *multiplier;
                    }
                    None => pruned = Some("the scenario has no API tiers".into()),
                }
                if pruned.is_none()
                    && let Err(e) = s.check()
                {
                    pruned = Some(e.problems.join("; "));
                }
            }
        }
        let max = if matches!(config, Config::Api { .. }) {
            1
        } else {
            space.max_replicas
        };
        Search {
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
        let cost = if api {
            report.cost.usd_per_month
        } else {
            price_month(&self.base, r)
        };
        self.evaluated.push(Evaluated {
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
        mut run: impl FnMut(Scenario) -> Result<Report, ScenarioError>,
    ) -> Search {
        while let Some(s) = self.next() {
            match run(s) {
                Ok(r) => self.feed(&r),
                Err(e) => {
                    self.pruned = Some(e.to_string());
                    self.next = None;
                }
            }
        }
        self
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
    for &gpu in &space.gpus {
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
        for t in &api.tiers {
            for &m in &space.api_multipliers {
                out.push(Search::new(
                    base,
                    Config::Api {
                        tier: t.name.clone(),
                        multiplier: m,
                    },
                    slo,
                    space,
                ));
            }
        }
    }
    out
}

/// A finished plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Configurations considered (each at every replica count allowed).
    pub configurations: usize,
    /// Candidate setups in the space (configurations × replica counts).
    pub candidates: usize,
    /// Configurations dropped without simulation, with why.
    pub pruned: Vec<(String, String)>,
    /// Simulations run.
    pub simulations: usize,
    /// Setups that meet the SLO, cheapest first (the best size of each configuration).
    pub feasible: Vec<Evaluated>,
    /// Setups cheaper than the best feasible one that failed, with why, cheapest-failing-first.
    pub near_misses: Vec<Evaluated>,
}

/// Assemble a plan from finished searches.
pub fn assemble(done: Vec<Search>, space: &Space) -> Plan {
    let configurations = done.len();
    let candidates = done
        .iter()
        .map(|s| {
            if matches!(s.config, Config::Api { .. }) {
                1
            } else {
                space.max_replicas as usize
            }
        })
        .sum();
    let simulations = done.iter().map(|s| s.evaluated.len()).sum();
    let pruned = done
        .iter()
        .filter_map(|s| {
            s.pruned.as_ref().map(|p| {
                (
                    s.config.describe(0).trim_start_matches("0 × ").to_owned(),
                    p.clone(),
                )
            })
        })
        .collect();
    let order = |a: &Evaluated, b: &Evaluated| {
        a.usd_per_month
            .total_cmp(&b.usd_per_month)
            .then_with(|| a.description.cmp(&b.description))
    };
    let mut feasible: Vec<Evaluated> = done.iter().filter_map(|s| s.best().cloned()).collect();
    feasible.sort_by(order);
    let cheapest = feasible.first().map_or(f64::INFINITY, |b| b.usd_per_month);
    // Near misses: for each configuration, its largest failing size that is
    // still cheaper than the cheapest answer; the closest to it in cost first.
    let mut near_misses: Vec<Evaluated> = done
        .iter()
        .filter_map(|s| {
            s.evaluated
                .iter()
                .filter(|e| e.verdict.is_err() && e.usd_per_month < cheapest)
                .max_by(|a, b| a.usd_per_month.total_cmp(&b.usd_per_month))
                .cloned()
        })
        .collect();
    near_misses.sort_by(|a, b| order(b, a));
    near_misses.truncate(10);
    Plan {
        configurations,
        candidates,
        pruned,
        simulations,
        feasible,
        near_misses,
    }
}

/// Plan serially (the CLI parallelises the searches itself).
pub fn plan(base: &Scenario, slo: PlanSlo, space: &Space) -> Plan {
    let done = searches(base, slo, space)
        .into_iter()
        .map(|s| s.run_with(crate::run_scenario))
        .collect();
    assemble(done, space)
}

#[cfg(test)]
mod tests;
