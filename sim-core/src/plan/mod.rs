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
use crate::physics::{Gpu, Precision};
use crate::scenario::{Batching, Scenario, ScenarioError};
use crate::sweep::Summary;
use serde::{Deserialize, Serialize};

mod api_strategies;
mod assemble;
pub mod budget;
pub mod confidence;
pub mod fleet_size;
mod headroom;
mod pool_plan;
mod pool_scale;
pub mod pool_split;
pub mod pools;
mod question;
mod runs;
mod search;
mod steps;
pub use runs::{Runs, drive};
pub use steps::{GroupRuns, PlanSteps, drive_steps};
pub mod disaggregation;

pub use assemble::{ApiAnswer, Plan, assemble, groups, outcomes, plan, reopen_groups, run_group};
pub use search::{Finished, Search};

pub use headroom::{Headroom, HeadroomSearch, MAX_GROWTH, headroom, scale_load};

/// Make `s` the setup `config` with `replicas` replicas (the page's "Apply"):
/// self-hosted setups drop the API and run chunked prefill with the batch
/// size (a fixed fleet: any autoscaler goes); API setups send every class
/// to the tier at the rate-limit multiple.
/// Either way the setup serves all the traffic: other pools and routing
/// rules go.
pub fn apply_config(s: &mut Scenario, config: &Config, replicas: u32) -> Result<(), String> {
    if *config == Config::AsIs {
        return Ok(());
    }
    s.pools.clear();
    s.routing.clear();
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
            // A setup is a fixed fleet of that many (the planner over pools
            // tries autoscaling on top, `pools::autoscale`).
            s.serving.autoscale = None;
            Ok(())
        }
        Config::Api {
            tier,
            multiplier,
            client,
            units,
            fallback,
        } => match s.api.as_mut() {
            Some(a) => {
                let (name, service) = crate::api::parse_backend_key(tier);
                a.default_backend = name.to_owned();
                a.routes.clear();
                // The tier's fast or flex variant is chosen per class, as the
                // page's backend control does.
                if service != crate::api::Service::Standard {
                    for k in &s.workload.classes {
                        a.route(k.name.clone(), tier);
                    }
                }
                a.rate_limit_multiplier = *multiplier;
                if let Some(c) = client {
                    a.client = c.clone();
                }
                if let Some(u) = units {
                    a.tiers
                        .iter_mut()
                        .find(|t| t.name == name)
                        .and_then(|t| t.provisioned.as_mut())
                        .ok_or_else(|| {
                            format!("tier {name:?} sells no provisioned units to buy {u} of")
                        })?
                        .units = *u;
                }
                if let Some(f) = fallback {
                    a.fallback = vec![f.clone()];
                }
                Ok(())
            }
            None => Err("the scenario has no API tiers".into()),
        },
        Config::AsIs => Ok(()),
    }
}

/// A generous upper bound on the requests a run of `s` makes (its offered
/// tasks × calls, plus five standard deviations of a Poisson count and 10 %),
/// or None when the arrivals depend on the fleet (closed-loop users).
pub fn upper_requests(s: &Scenario) -> Option<f64> {
    let (mean, _) = s.offered_tasks_per_s()?;
    let n = mean * s.duration_s * s.max_calls_per_task();
    Some(n * 1.1 + 5.0 * n.sqrt() + 10.0)
}

/// A planning run: the scenario to the end, or until its verdict against
/// `slo` is settled (see [`PlanSlo::settled_fail`]).
pub fn planning_run(slo: PlanSlo) -> impl FnMut(Scenario) -> Result<Report, ScenarioError> {
    planning_run_timed(slo, None)
}

/// [`planning_run`] with other step-time constants where `timing` is given
/// (calibration's fits: see [`crate::Simulation::with_timing`]).
pub fn planning_run_timed(
    slo: PlanSlo,
    timing: Option<crate::physics::Timing>,
) -> impl FnMut(Scenario) -> Result<Report, ScenarioError> {
    move |s: Scenario| {
        let s = s.validate()?;
        let upper = early_bound(&s);
        let mut sim = match timing {
            Some(t) => crate::Simulation::with_timing(&s, t),
            None => crate::Simulation::new(&s),
        };
        slo.watch(&mut sim);
        loop {
            if sim.advance_events(EARLY_CHECK_EVENTS) {
                break;
            }
            if let Some(why) = upper.and_then(|u| slo.settled_fail(&sim, u)) {
                sim.stop(why);
                break;
            }
        }
        Ok(sim.report())
    }
}

/// The request bound a planning run of `s` checks its settled verdict
/// against, or None when it cannot stop early (closed-loop arrivals).
pub fn early_bound(s: &Scenario) -> Option<f64> {
    upper_requests(s)
}

/// Events between checks of a planning run's settled verdict. The page's
/// sliced runs check at the same event counts (its slices advance in chunks
/// of this size), so every path stops at the same event with the same plan.
pub const EARLY_CHECK_EVENTS: u64 = 2_000;

/// Targets a configuration must meet.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanSlo {
    /// p99 time to first token, ms.
    pub ttft_p99_ms: f64,
    /// p99 time per output token, ms.
    pub tpot_p99_ms: f64,
    /// Largest share of requests with no answer: failed, refused or timed
    /// out ([`crate::report::Counts::error_fraction`]).
    pub max_error_fraction: f64,
    /// Smallest share of requests meeting the scenario's SLO.
    pub min_goodput: f64,
}

/// How a planning run's early stop begins (its warning, and a miss's reason).
pub const STOPPED_EARLY: &str = "stopped early, the verdict settled";

impl PlanSlo {
    /// The error share a plan allows unless told otherwise.
    pub const MAX_ERRORS: f64 = 0.01;
    /// The goodput a plan asks for unless told otherwise.
    pub const MIN_GOODPUT: f64 = 0.9;

    /// The targets a question about `s` starts from (the page's planner, and
    /// `tlab plan` and `tlab headroom` without flags): the scenario's own
    /// TTFT and TPOT targets as p99s, [`Self::MAX_ERRORS`] and [`Self::MIN_GOODPUT`].
    pub fn for_scenario(s: &Scenario) -> PlanSlo {
        PlanSlo {
            ttft_p99_ms: s.slo.ttft_ms,
            tpot_p99_ms: s.slo.tpot_ms,
            max_error_fraction: Self::MAX_ERRORS,
            min_goodput: Self::MIN_GOODPUT,
        }
    }

    /// Every target in range, or the first that is not, by field name.
    pub fn checked(self) -> Result<PlanSlo, String> {
        for (name, v) in [
            ("ttft_p99_ms", self.ttft_p99_ms),
            ("tpot_p99_ms", self.tpot_p99_ms),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("{name} must be > 0 ms, got {v}"));
            }
        }
        for (name, v) in [
            ("max_error_fraction", self.max_error_fraction),
            ("min_goodput", self.min_goodput),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!("{name} must be 0..=1, got {v}"));
            }
        }
        Ok(self)
    }

    /// Make `sim` count its settled misses against these targets (a
    /// planning run's, on every path: CLI, page slices, Web Workers).
    pub fn watch(&self, sim: &mut crate::Simulation) {
        let ns = |ms: f64| (ms * 1e6).clamp(0.0, u64::MAX as f64) as u64;
        sim.watch_targets(ns(self.ttft_p99_ms), ns(self.tpot_p99_ms));
    }

    /// Whether `sim` already misses a target whatever happens next, given at
    /// most `upper` requests in the whole run: more than 1 % of them already
    /// over the TTFT or TPOT target (so the p99 is over it), or more errors
    /// than allowed. Planning runs stop there: their verdict is settled.
    pub fn settled_fail(&self, sim: &crate::Simulation, upper: f64) -> Option<String> {
        let (ttft, tpot, errors) = sim.settled_misses();
        let over = |n: u64, share: f64| n as f64 > share * upper;
        let upper = crate::format::thousands(upper.max(0.0).ceil() as u64);
        let what = if over(ttft, 0.01) {
            format!(
                "{ttft} of its at most {upper} requests already waited past the TTFT target, more than the 1 % a p99 allows"
            )
        } else if over(tpot, 0.01) {
            format!(
                "{tpot} of its at most {upper} requests already streamed slower than the TPOT target, more than the 1 % a p99 allows"
            )
        } else if over(errors, self.max_error_fraction) {
            format!(
                "{errors} of its at most {upper} requests already failed, were refused or timed out, more than the errors allowed"
            )
        } else {
            return None;
        };
        Some(format!("{STOPPED_EARLY}: {what}"))
    }

    /// Check a report; `Ok` carries the worst margin (how far inside the targets,
    /// as a fraction: 0.2 = 20 % of headroom on the tightest target).
    pub fn check(&self, r: &Report) -> Result<f64, String> {
        // What the user waits for: the first visible token (= the first
        // token unless the model reasons first).
        let incomplete = (!r.complete).then(|| {
            r.warnings
                .iter()
                .find(|w| w.starts_with(STOPPED_EARLY))
                .cloned()
                .unwrap_or_else(|| INCOMPLETE.into())
        });
        self.verdict(
            r.overall.first_visible.p99_ms,
            r.overall.tpot.p99_ms,
            r.requests.error_fraction(),
            r.throughput.goodput_fraction.unwrap_or(0.0),
            incomplete,
        )
    }

    /// One class of a run against these targets: the checks of
    /// [`Self::check`] on the class's own row.
    pub fn check_class(
        &self,
        c: &crate::report::ClassReport,
        complete: bool,
    ) -> Result<f64, String> {
        let answered = c.rejected + c.failed + c.timed_out;
        let arrived = c.completed + answered;
        self.verdict(
            c.first_visible.p99_ms,
            c.tpot.p99_ms,
            answered as f64 / arrived.max(1) as f64,
            c.slo_met_fraction.unwrap_or(0.0),
            (!complete).then(|| INCOMPLETE.into()),
        )
    }

    /// The verdict on a p99 TTFT and TPOT (ms; None: nothing completed, or
    /// no request of two tokens), an error share, a goodput, and why the run
    /// did not finish if it did not.
    fn verdict(
        &self,
        ttft_p99: Option<f64>,
        tpot_p99: Option<f64>,
        errors: f64,
        goodput: f64,
        incomplete: Option<String>,
    ) -> Result<f64, String> {
        let mut misses = Vec::new();
        let mut margin = f64::INFINITY;
        let mut limit = |name: &str, value: Option<f64>, target: f64| match value {
            Some(v) if v <= target => margin = margin.min(1.0 - v / target),
            Some(v) => {
                let (a, b) = crate::format::duration_pair_ms(v, target);
                misses.push(format!("{name} {a} > {b}"))
            }
            None => misses.push(format!("{name}: no request completed")),
        };
        limit("p99 TTFT", ttft_p99, self.ttft_p99_ms);
        limit("p99 TPOT", tpot_p99.or(Some(0.0)), self.tpot_p99_ms);
        if errors > self.max_error_fraction {
            misses.push(format!(
                "errors {:.1} % > {:.1} %",
                errors * 100.0,
                self.max_error_fraction * 100.0
            ));
        }
        if goodput < self.min_goodput {
            misses.push(format!(
                "goodput {:.1} % < {:.1} %",
                goodput * 100.0,
                self.min_goodput * 100.0
            ));
        }
        misses.extend(incomplete);
        if misses.is_empty() {
            Ok(margin.clamp(0.0, 1.0))
        } else {
            Err(misses.join("; "))
        }
    }
}

/// Why a run that did not drain misses, when it did not stop early.
const INCOMPLETE: &str = "the run hit a limit before draining";

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
    /// Consider provisioned units and fallbacks between the scenario's
    /// tiers (a whole scenario's plan; a pool plan's classes share one
    /// fallback chain, so it leaves them out).
    #[serde(default = "yes")]
    pub api_strategies: bool,
    /// Simulated events the whole plan may use, shared equally among its
    /// searches ([`budget::PLAN_EVENTS`]; `u64::MAX` for no limit).
    #[serde(default = "plan_events")]
    pub budget_events: u64,
    /// How the surface asking offers the ways past the work budget (the
    /// CLI's flags, the page's controls): its notes name those.
    #[serde(default)]
    pub remedies: budget::Remedies,
}

fn plan_events() -> u64 {
    budget::PLAN_EVENTS
}

fn yes() -> bool {
    true
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
            gpus: Gpu::PLANNED.to_vec(),
            tps: vec![1, 2, 4, 8],
            weights: vec![Precision::Bf16, Precision::Fp8, Precision::Int4],
            max_seqs: vec![32, 64, 128, 256],
            max_replicas: 64,
            api_multipliers: vec![1, 2, 4, 8],
            self_hosted: true,
            api_strategies: true,
            budget_events: budget::PLAN_EVENTS,
            remedies: budget::Remedies::Cli,
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
        /// Provisioned units bought in front of the tier's pay-as-you-go,
        /// at the tier's own unit throughput and price, if not the
        /// scenario's count.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        units: Option<u32>,
        /// The tier a request goes to when this one gives up on it, if not
        /// the scenario's fallback chain.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fallback: Option<String>,
    },
    /// The scenario as it is, judged from a run of it ([`Plan::include_as_is`]):
    /// never searched.
    AsIs,
}

/// What the scenario as it is is called in a plan.
pub const AS_IS: &str = "your setup as it is";

/// The client the planner tries next to the scenario's own: a queue that
/// turns 429s into waiting (the page's "queue" client).
pub const QUEUE_CLIENT: ClientPolicy = ClientPolicy::QUEUE;

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
                units,
                fallback,
            } => format!(
                "API {} at {multiplier}× limits{}{}{}",
                crate::api::backend_label(tier),
                units.map_or(String::new(), |u| format!(
                    ", {} provisioned units",
                    crate::format::thousands(u64::from(u))
                )),
                fallback
                    .as_ref()
                    .map_or(String::new(), |f| format!(", falling back to {f}")),
                if client.is_some() {
                    ", client queue"
                } else {
                    ""
                }
            ),
            Config::AsIs => AS_IS.to_owned(),
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
        // Each tier, and its fast and flex variants where it has them.
        let tiers = api.tiers.iter().flat_map(|t| {
            use crate::api::{Service, backend_key};
            std::iter::once(t.name.clone())
                .chain(t.fast.as_ref().map(|_| backend_key(&t.name, Service::Fast)))
                .chain(t.flex.as_ref().map(|_| backend_key(&t.name, Service::Flex)))
        });
        for tier in tiers {
            for client in &clients {
                for &m in &space.api_multipliers {
                    out.push(Search::new(
                        base,
                        Config::Api {
                            tier: tier.clone(),
                            multiplier: m,
                            client: client.clone(),
                            units: None,
                            fallback: None,
                        },
                        slo,
                        space,
                    ));
                }
            }
        }
        if space.api_strategies {
            for config in api_strategies::strategies(base, api, &clients, space) {
                out.push(Search::new(base, config, slo, space));
            }
        }
    }
    budget::share(&mut out, space.budget_events);
    out
}

#[cfg(test)]
mod tests;
