//! One configuration's search: the smallest replica count that meets the
//! targets (start at the roofline's bound, double until it passes, bisect),
//! and what it leaves for the plan.

use super::{Config, Evaluated, PlanSlo, Space, apply_config};
use crate::Report;
use crate::physics::{BatchShape, Efficiency};
use crate::scenario::{Scenario, ScenarioError};
use crate::sweep::Summary;
use serde::{Deserialize, Serialize};

/// The search for the smallest passing replica count of one configuration.
#[derive(Clone, Debug)]
pub struct Search {
    pub(super) config: Config,
    pub(super) base: Scenario,
    pub(super) slo: PlanSlo,
    pub(super) max: u32,
    /// Largest count known to fail (0 = none).
    pub(super) lo_fail: u32,
    /// Smallest count known to pass.
    pub(super) hi_pass: Option<u32>,
    pub(super) next: Option<u32>,
    /// Every evaluation, in order.
    pub evaluated: Vec<Evaluated>,
    /// Why the configuration was dropped without simulating, if it was.
    pub pruned: Option<String>,
    /// The KV blocks of one replica of this configuration.
    pub(super) kv_blocks: u64,
    /// Whether some run hit a limit the batch size sets: a pass of
    /// `max_seqs` sequences, a preemption, or a KV cache nine-tenths full.
    pub(super) bound: bool,
    /// Most KV blocks any run used.
    pub(super) peak_blocks: f64,
    /// Most sequences in any run's pass.
    pub(super) peak_batch: u64,
    /// The smaller batch size this search is skipped as identical to.
    pub same_as: Option<u32>,
    /// Self-hosting what API tiers served in the base scenario.
    pub(super) changes_model: bool,
    /// Simulated events this search may still use (see [`super::budget`]).
    pub(super) budget: u64,
    /// Simulated events its runs took.
    pub(super) events_used: u64,
    /// Why it ended before settling (out of its share of the work budget).
    pub unsettled: Option<String>,
    /// The replica count whose run the budget cut, to run again if the
    /// plan's second pass gives it more ([`super::budget::reopen`]).
    pub(super) resume: Option<u32>,
    /// Fewest replicas it could need: the roofline's bound it starts from.
    pub(super) min_replicas: u32,
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
                    // Speculative decoding yields at most k + 1 tokens a step:
                    // the bounds stay bounds.
                    let per_step = s.serving.max_tokens_per_step();
                    let one = model.step_time_ns(&BatchShape {
                        decode_seqs: 1,
                        decode_context_tokens: ctx as u64,
                        ..BatchShape::default()
                    }) as f64
                        / 1e6
                        / per_step;
                    let bound =
                        model.decode_roofline_tokens_per_s(*max_seqs, ctx as u32) * per_step;
                    let need = s.peak_tasks_per_s() * out;
                    let min_replicas = (need / bound).ceil().max(1.0);
                    if one > slo.tpot_p99_ms {
                        pruned = Some(format!(
                            "one sequence alone decodes in {} at the datasheet peak, slower than the {} TPOT target",
                            crate::format::duration_ms(Some(one)),
                            crate::format::duration_ms(Some(slo.tpot_p99_ms))
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
            Config::Api { .. } | Config::AsIs => {
                if let Err(e) = s.check() {
                    pruned = Some(e.problems.join("; "));
                }
            }
        }
        let max = if matches!(config, Config::Api { .. } | Config::AsIs) {
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
            budget: u64::MAX,
            events_used: 0,
            unsettled: None,
            resume: None,
            min_replicas: start,
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
                        .is_some_and(|t| t.name != crate::api::parse_backend_key(tier).0)
                }),
                Config::AsIs => false,
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
        s.limits.max_events = self.cap(&s);
        Some(s)
    }

    /// Record the report of the scenario [`Self::next`] returned.
    pub fn feed(&mut self, report: &Report) {
        let Some(r) = self.next else { return };
        let cap = self.cap(&self.base);
        if self.spend(report, cap) {
            return;
        }
        let verdict = self.slo.check(report);
        let api = matches!(self.config, Config::Api { .. } | Config::AsIs);
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
            crate::compare::fleet_usd_per_month(&self.base, r)
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
        loop {
            // Out of budget: unsettled without running, as every path does.
            self.starve_if_broke();
            let Some(s) = self.next() else { break };
            match run(s) {
                Ok(r) => self.feed(&r),
                Err(e) => self.refuse(&e),
            }
        }
    }

    /// The scenario [`Self::next`] returned could not run: the search ends,
    /// pruned with the reason.
    pub fn refuse(&mut self, error: &ScenarioError) {
        self.pruned = Some(error.to_string());
        self.next = None;
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
        best_of(&self.evaluated)
    }

    /// The least this search could still cost per month if a later pass
    /// settled it (one replica more than its largest failing count, and no
    /// fewer than the roofline's bound), or None when it is settled. An API
    /// tier's is 0: its cost is the traffic's, not known before it runs.
    pub fn floor_usd(&self) -> Option<f64> {
        self.unsettled.as_ref()?;
        Some(self.least_usd())
    }

    /// The least this configuration can cost per month: its price at the
    /// roofline's bound on replicas (or one more than its largest failing
    /// count, if larger); 0 for an API tier.
    pub(super) fn least_usd(&self) -> f64 {
        match self.config {
            Config::SelfHosted { .. } => crate::compare::fleet_usd_per_month(
                &self.base,
                (self.lo_fail + 1).max(self.min_replicas),
            ),
            Config::Api { .. } | Config::AsIs => 0.0,
        }
    }

    /// For a caller running [`Self::next`]'s scenario itself (in slices):
    /// whether its verdict is already settled, as [`super::planning_run`]
    /// decides it, and why.
    pub fn settled(&self, sim: &crate::Simulation) -> Option<String> {
        let mut s = self.base.clone();
        if let Config::SelfHosted { .. } = self.config {
            s.serving.replicas = self.next?;
        }
        super::early_bound(&s).and_then(|u| self.slo.settled_fail(sim, u))
    }

    /// Prepare a simulation of [`Self::next`]'s scenario that a caller runs
    /// itself: its settled misses count against this search's targets.
    pub fn begin(&self, sim: &mut crate::Simulation) {
        self.slo.watch(sim);
    }

    /// What a finished search leaves for the plan (no scenario: small to
    /// send from a worker).
    pub fn finish(self) -> Finished {
        Finished {
            floor_usd: self.floor_usd(),
            config: self.config,
            evaluated: self.evaluated,
            pruned: self.pruned,
            same_as: self.same_as,
            unsettled: self.unsettled,
            events: self.events_used,
        }
    }
}

fn best_of(evaluated: &[Evaluated]) -> Option<&Evaluated> {
    evaluated
        .iter()
        .filter(|e| e.verdict.is_ok())
        .min_by(|a, b| a.usd_per_month.total_cmp(&b.usd_per_month))
}

/// A finished search, as the plan uses it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finished {
    /// The configuration.
    pub config: Config,
    /// Every evaluation, in order.
    pub evaluated: Vec<Evaluated>,
    /// Why it was dropped without simulating, if it was.
    pub pruned: Option<String>,
    /// The smaller batch size it was spared as identical to.
    pub same_as: Option<u32>,
    /// Why it ended before settling, if it did (out of budget).
    #[serde(default)]
    pub unsettled: Option<String>,
    /// Simulated events its runs took.
    #[serde(default)]
    pub events: u64,
    /// The least it could still cost if settled ([`Search::floor_usd`]).
    #[serde(default)]
    pub floor_usd: Option<f64>,
}

impl Finished {
    /// The cheapest passing evaluation, if any.
    pub fn best(&self) -> Option<&Evaluated> {
        best_of(&self.evaluated)
    }
}
