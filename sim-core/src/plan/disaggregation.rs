//! The planner for a split deployment: the cheapest prefill:decode ratio
//! (xPyD) of the scenario's first pool that meets the targets, beside the
//! fewest colocated replicas of the same setup that do.
//!
//! Both searches keep the pool's GPU, GPUs per replica, model, weights and
//! batching (the ordinary planner searches those); they choose replica
//! counts. The colocated count doubles until the targets hold, then
//! bisects. The split walks the frontier: for each prefill count P from 1
//! the fewest decode replicas D(P) that meet the targets, bisected below
//! D(P − 1) (more prefill replicas never need more decode ones), stopping
//! once P alone costs as much as the cheapest split found; doubling D stops
//! early once the time per token meets its target and more decode replicas
//! no longer bring the first token closer (the prefill side is short).
//!
//! [`DisaggregationSearch`] is a state machine (`next_run` scenario, `feed` its report),
//! so the page runs it in slices and [`plan_disaggregation`] in a loop, with the
//! same answer. Every run is a planning run (it stops as soon as its
//! verdict is settled) within what one work budget of simulated events has
//! left; what the budget cuts off is said.

use super::{PlanSlo, Runs};
use crate::scenario::{KvLink, Scenario, bounds};
use serde::{Deserialize, Serialize};

/// One replica count tried.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tried {
    /// Prefill replicas (0: colocated, every replica prefills and decodes).
    pub prefill: u32,
    /// Decode replicas (colocated: the replicas).
    pub decode: u32,
    /// Cost at this load, $ per month.
    pub usd_per_month: f64,
    /// p99 first visible token, ms.
    pub ttft_p99_ms: Option<f64>,
    /// p99 time per output token, ms.
    pub tpot_p99_ms: Option<f64>,
    /// Met the targets (with its worst margin), or why not.
    pub verdict: Result<f64, String>,
}

/// The answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DisaggregationPlan {
    /// The link the split's caches cross.
    pub link: KvLink,
    /// The fewest colocated replicas that meet the targets.
    pub colocated: Option<Tried>,
    /// The cheapest split that does.
    pub split: Option<Tried>,
    /// Every run, in the order run.
    pub tried: Vec<Tried>,
    /// Simulated events used.
    pub events: u64,
    /// What the work budget left unsettled, if anything.
    pub unsettled: Option<String>,
}

/// How the cheapest split compares with the fewest colocated replicas.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DisaggregationVerdict {
    /// The split costs this share less (more than [`SAME_COST`] below).
    Cheaper(f64),
    /// The split costs this share more.
    Dearer(f64),
    /// Within [`SAME_COST`] of each other.
    Same,
    /// Only a split meets the targets.
    OnlySplit,
    /// Only colocated replicas do.
    OnlyColocated,
    /// Neither does.
    Neither,
}

/// Costs this close (a share of the colocated fleet's) count as the same.
pub const SAME_COST: f64 = 0.005;

impl DisaggregationPlan {
    /// The split against colocation, in cost.
    pub fn verdict(&self) -> DisaggregationVerdict {
        match (&self.colocated, &self.split) {
            (Some(c), Some(t)) => {
                let ratio = t.usd_per_month / c.usd_per_month;
                if ratio < 1.0 - SAME_COST {
                    DisaggregationVerdict::Cheaper(1.0 - ratio)
                } else if ratio > 1.0 + SAME_COST {
                    DisaggregationVerdict::Dearer(ratio - 1.0)
                } else {
                    DisaggregationVerdict::Same
                }
            }
            (None, Some(_)) => DisaggregationVerdict::OnlySplit,
            (Some(_), None) => DisaggregationVerdict::OnlyColocated,
            (None, None) => DisaggregationVerdict::Neither,
        }
    }

    /// The split answer as a scenario: `s` split `prefill`P`decode`D over
    /// the plan's link (the page's Apply).
    pub fn apply(&self, s: &Scenario) -> Option<Scenario> {
        let t = self.split.as_ref()?;
        Some(base_of(s).disaggregated(t.prefill, t.decode, self.link))
    }
}

/// What both searches vary: `s`'s first pool alone, serving every request,
/// a fixed fleet that hands nothing off.
fn base_of(s: &Scenario) -> Scenario {
    let mut base = s.clone();
    base.serving.disaggregation = None;
    base.serving.autoscale = None;
    base.pools.clear();
    base.routing.clear();
    base
}

/// Most replicas on either side of a split, and colocated.
pub const MAX_SIDE: u32 = 64;

/// Plan `s` (its first pool's setup; other pools and rules go) against
/// `slo` within `budget_events`, its caches crossing `link` (the
/// scenario's own hand-off link when it has one, else InfiniBand).
pub fn plan_disaggregation(
    s: &Scenario,
    slo: PlanSlo,
    link: Option<KvLink>,
    budget_events: u64,
) -> Result<DisaggregationPlan, String> {
    let mut search = DisaggregationSearch::new(s, slo, link, budget_events)?;
    super::drive(&mut search).map_err(|e| e.to_string())?;
    Ok(search.finish())
}

/// Where the search is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Stage {
    Colocated,
    /// Finding D for this many prefill replicas.
    Split(u32),
    Done,
}

/// The fewest replicas in `1..=hi` that meet the targets: doubling, then
/// bisecting between the last miss and the first hit.
#[derive(Clone, Debug)]
struct Fewest {
    hi: u32,
    /// Largest count known to miss (0: none).
    miss: u32,
    /// The count to try next.
    n: u32,
    hit: Option<Tried>,
    /// The last miss while doubling.
    before: Option<Tried>,
    /// Doubling stops early when the prefill side is short.
    decode_side: bool,
    done: bool,
}

impl Fewest {
    fn new(hi: u32, decode_side: bool) -> Self {
        Fewest {
            hi,
            miss: 0,
            n: 1,
            hit: None,
            before: None,
            decode_side,
            done: hi == 0,
        }
    }

    fn feed(&mut self, t: Tried, slo: PlanSlo) {
        let ok = t.verdict.is_ok();
        if self.hit.is_none() && !ok {
            self.miss = self.n;
            if self.n >= self.hi
                || (self.decode_side && prefill_short(self.before.as_ref(), &t, slo))
            {
                self.done = true;
            } else {
                self.before = Some(t);
                self.n = (self.n * 2).min(self.hi);
            }
            return;
        }
        if ok {
            self.hit = Some(t);
        } else {
            self.miss = self.n;
        }
        // The varied count is the decode side (colocated: the replicas).
        let h = self.hit.as_ref().map_or(self.n, |t| t.decode);
        if h > self.miss + 1 {
            self.n = self.miss + (h - self.miss) / 2;
        } else {
            self.done = true;
        }
    }
}

/// Whether doubling the decode side from `before` to `now` showed that only
/// more prefill replicas can help: TPOT meets its target and the first
/// token came less than 5 % closer.
fn prefill_short(before: Option<&Tried>, now: &Tried, slo: PlanSlo) -> bool {
    let (Some(b), Some(tpot), Some(ttft)) = (before, now.tpot_p99_ms, now.ttft_p99_ms) else {
        return false;
    };
    tpot <= slo.tpot_p99_ms && b.ttft_p99_ms.is_some_and(|was| ttft > 0.95 * was)
}

/// The search as a state machine.
pub struct DisaggregationSearch {
    base: Scenario,
    slo: PlanSlo,
    budget: u64,
    max: u32,
    stage: Stage,
    fewest: Fewest,
    /// Decode replicas the next prefill count may need at most.
    d_cap: u32,
    best_total: Option<u32>,
    plan: DisaggregationPlan,
    /// The counts of the scenario handed out and not yet fed.
    pending: Option<(u32, u32)>,
    /// What the budget had left when it was handed out.
    left: u64,
    /// The run's request bound for its early stop.
    upper: Option<f64>,
}

impl DisaggregationSearch {
    /// A search over `s`'s first pool (see [`plan_disaggregation`]).
    pub fn new(
        s: &Scenario,
        slo: PlanSlo,
        link: Option<KvLink>,
        budget_events: u64,
    ) -> Result<DisaggregationSearch, String> {
        let slo = slo.checked()?;
        let link = link
            .or_else(|| s.serving.disaggregation.as_ref().map(|h| h.link))
            .unwrap_or(KvLink::Infiniband);
        let base = base_of(s);
        if base
            .workload
            .classes
            .iter()
            .any(|k| base.backend_of(&k.name).is_some())
        {
            return Err("a split is planned for self-hosted traffic; this scenario sends some to an API tier (plan it with the ordinary planner)".into());
        }
        base.clone().validate().map_err(|e| e.to_string())?;
        let max = MAX_SIDE.min(bounds::REPLICAS / 2);
        Ok(DisaggregationSearch {
            upper: super::early_bound(&base),
            base,
            slo,
            budget: budget_events,
            max,
            stage: Stage::Colocated,
            fewest: Fewest::new(max, false),
            d_cap: max,
            best_total: None,
            plan: DisaggregationPlan {
                link,
                colocated: None,
                split: None,
                tried: Vec::new(),
                events: 0,
                unsettled: None,
            },
            pending: None,
            left: budget_events,
        })
    }

    fn out_of_budget(&self) -> bool {
        self.plan.events >= self.budget
    }

    /// The current count search ended: take its answer and move on.
    fn conclude(&mut self) {
        let hit = self.fewest.hit.take();
        let next_p = match self.stage {
            Stage::Colocated => {
                self.plan.colocated = hit;
                1
            }
            Stage::Split(p) => {
                if let Some(t) = hit {
                    self.d_cap = t.decode;
                    let total = t.prefill + t.decode;
                    if self.best_total.is_none_or(|b| total < b) {
                        self.best_total = Some(total);
                        self.plan.split = Some(t);
                    }
                }
                p + 1
            }
            Stage::Done => return,
        };
        // P alone (with one decode replica) must be able to beat the best.
        if next_p > self.max || self.best_total.is_some_and(|b| next_p + 1 >= b) {
            self.stage = Stage::Done;
        } else {
            self.stage = Stage::Split(next_p);
            self.fewest = Fewest::new(self.d_cap, true);
        }
    }

    /// The answer.
    pub fn finish(self) -> DisaggregationPlan {
        self.plan
    }
}

impl Runs for DisaggregationSearch {
    /// The next scenario to run (capped at what the budget has left), or
    /// None when the answer is in.
    fn next(&mut self) -> Option<Scenario> {
        loop {
            if self.stage == Stage::Done {
                return None;
            }
            if self.out_of_budget() {
                if self.plan.unsettled.is_none() {
                    self.plan.unsettled = Some(format!(
                        "the work budget of {} simulated events ran out before the search ended ({})",
                        crate::format::thousands(self.budget),
                        match self.stage {
                            Stage::Colocated => "colocated counts".to_owned(),
                            Stage::Split(p) => format!("{p} prefill replicas and more"),
                            Stage::Done => String::new(),
                        }
                    ));
                }
                self.stage = Stage::Done;
                return None;
            }
            if !self.fewest.done {
                let n = self.fewest.n;
                let (counts, mut s) = match self.stage {
                    Stage::Split(p) => ((p, n), self.base.disaggregated(p, n, self.plan.link)),
                    _ => ((0, n), {
                        let mut c = self.base.clone();
                        c.serving.replicas = n;
                        c
                    }),
                };
                self.left = self.budget.saturating_sub(self.plan.events);
                s.limits.max_events = s
                    .limits
                    .max_events
                    .min(self.left.max(super::EARLY_CHECK_EVENTS));
                self.pending = Some(counts);
                return Some(s);
            }
            self.conclude();
        }
    }

    /// The report of the scenario [`Runs::next`] returned.
    fn feed(&mut self, r: &crate::Report) {
        let Some((prefill, decode)) = self.pending.take() else {
            return;
        };
        self.plan.events = self.plan.events.saturating_add(r.events);
        if r.events >= self.left && !r.complete && self.plan.unsettled.is_none() {
            self.plan.unsettled = Some(format!(
                "the work budget of {} simulated events ran out during a run of {}",
                crate::format::thousands(self.budget),
                if prefill == 0 {
                    format!("{decode} colocated replicas")
                } else {
                    format!("{prefill}P{decode}D")
                }
            ));
        }
        let t = Tried {
            prefill,
            decode,
            usd_per_month: r.cost.usd_per_month,
            ttft_p99_ms: r.overall.first_visible.p99_ms,
            tpot_p99_ms: r.overall.tpot.p99_ms,
            verdict: self.slo.check(r),
        };
        self.plan.tried.push(t.clone());
        self.fewest.feed(t, self.slo);
    }

    /// Share of the work done, 0..=1 (of the budget when it is finite).
    fn progress(&self) -> f64 {
        if self.stage == Stage::Done {
            1.0
        } else if self.budget == u64::MAX {
            let n = self.plan.tried.len() as f64;
            n / (n + 8.0)
        } else {
            (self.plan.events as f64 / self.budget as f64).min(1.0)
        }
    }

    /// Count the run's settled misses against the plan's targets.
    fn begin(&self, sim: &mut crate::Simulation) {
        self.slo.watch(sim);
    }

    /// Whether the run in progress may stop: its verdict is settled.
    fn settled(&self, sim: &crate::Simulation) -> Option<String> {
        self.upper.and_then(|u| self.slo.settled_fail(sim, u))
    }
}
