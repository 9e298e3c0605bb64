//! A plan from finished searches: the cheapest feasible setups, the near
//! misses, what was pruned; and the order searches run in (groups of batch
//! sizes, so identical larger ones are spared).

use super::PlanSlo;
use super::{Config, Evaluated, Finished, Search, Space};
use crate::Report;
use crate::scenario::{Scenario, ScenarioError};
use serde::{Deserialize, Serialize};

/// A finished plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Configurations considered (each at every replica count allowed).
    pub configurations: usize,
    /// Candidate setups in the space (configurations × replica counts).
    pub candidates: usize,
    /// Configurations dropped without simulation, with why.
    pub pruned: Vec<(String, String)>,
    /// Configurations not run because a smaller batch size of the same
    /// hardware ran identically (its batch size never mattered).
    #[serde(default)]
    pub identical: usize,
    /// For each API tier and client: the smallest rate-limit multiple that
    /// meets the targets, or why the largest tried does not.
    #[serde(default)]
    pub api_tiers: Vec<ApiAnswer>,
    /// Simulations run.
    pub simulations: usize,
    /// Setups that meet the SLO, cheapest first (the best size of each configuration).
    pub feasible: Vec<Evaluated>,
    /// Setups cheaper than the best feasible one that failed, with why, cheapest-failing-first.
    pub near_misses: Vec<Evaluated>,
    /// Configurations whose search ran out of its share of the work budget
    /// before settling and could still beat the cheapest setup found, with
    /// what it found.
    #[serde(default)]
    pub unsettled: Vec<(String, String)>,
    /// For each of [`Self::unsettled`], the least it could cost if settled
    /// (0 when nothing bounds it): what a cheaper answer found later, such
    /// as the setup as it is, rules out.
    #[serde(default)]
    pub unsettled_floor_usd: Vec<f64>,
    /// Configurations not run to the end (or at all) because even their
    /// smallest possible size costs more than the cheapest setup found:
    /// they cannot change the answer.
    #[serde(default)]
    pub unsettled_dearer: usize,
    /// Simulated events the plan took, and its budget.
    #[serde(default)]
    pub events: u64,
    /// The work budget it ran under (simulated events).
    #[serde(default)]
    pub budget_events: u64,
}

impl Plan {
    /// Put the scenario as it is beside the searched setups, judged by
    /// `slo` from `report`, a whole run of it (the page's on screen, the
    /// CLI's own): when it meets the targets it is an answer, in its place
    /// by cost, so a plan never answers "none" where the setup already
    /// works; when it misses and costs less than the cheapest answer, it is
    /// a near miss. Setups dearer than a cheaper answer it makes are no
    /// longer near misses.
    pub fn include_as_is(&mut self, base: &Scenario, slo: &PlanSlo, report: &Report) {
        let fleet = base.uses_fleet().then(|| {
            format!(
                "{} × {} × {} {}",
                base.serving.replicas,
                base.serving.gpus_per_replica,
                base.serving.gpu.spec().name,
                base.serving.weights.name()
            )
        });
        let what = match (fleet, base.pools.is_empty()) {
            (Some(f), true) => format!("{} ({f})", super::AS_IS),
            _ => super::AS_IS.to_owned(),
        };
        let e = Evaluated {
            config: Config::AsIs,
            replicas: if base.uses_fleet() {
                base.serving.replicas
            } else {
                0
            },
            description: what,
            usd_per_month: report.cost.usd_per_month,
            verdict: slo.check(report),
            changes_model: false,
            summary: crate::sweep::Summary::of(report),
        };
        if e.verdict.is_ok() {
            let at = self.feasible.partition_point(|f| by_cost(f, &e).is_lt());
            self.feasible.insert(at, e);
            let cheapest = self.feasible[0].usd_per_month;
            self.near_misses.retain(|m| m.usd_per_month < cheapest);
            // Searches left unsettled that cannot beat it any more.
            let floors = std::mem::take(&mut self.unsettled_floor_usd);
            let open = std::mem::take(&mut self.unsettled);
            for (u, floor) in open.into_iter().zip(floors) {
                if floor >= cheapest {
                    self.unsettled_dearer += 1;
                } else {
                    self.unsettled.push(u);
                    self.unsettled_floor_usd.push(floor);
                }
            }
        } else if self
            .feasible
            .first()
            .is_none_or(|f| e.usd_per_month < f.usd_per_month)
        {
            // Cheapest-failing-first is dearest first among misses.
            let at = self.near_misses.partition_point(|m| by_cost(&e, m).is_lt());
            self.near_misses.insert(at, e);
            self.near_misses.truncate(10);
        }
    }
}

/// Setups cheapest first, then by description: a plan's order.
fn by_cost(a: &Evaluated, b: &Evaluated) -> std::cmp::Ordering {
    a.usd_per_month
        .total_cmp(&b.usd_per_month)
        .then_with(|| a.description.cmp(&b.description))
}

/// Which rate-limit tier one API model tier needs, with one client policy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApiAnswer {
    /// The tier.
    pub tier: String,
    /// "the scenario's client" or "a client queue".
    pub client: String,
    /// The smallest rate-limit multiple meeting the targets, if any.
    pub multiplier: Option<u32>,
    /// Its cost per month, if any.
    pub usd_per_month: Option<f64>,
    /// Why the largest multiple tried missed, when none met the targets.
    pub why_not: Option<String>,
}

/// The API answers of finished searches, in tier order.
fn api_answers(done: &[Finished]) -> Vec<ApiAnswer> {
    let mut out: Vec<ApiAnswer> = Vec::new();
    for s in done {
        // Units and fallbacks are setups of their own, in the table.
        let Config::Api {
            tier,
            multiplier,
            client,
            units: None,
            fallback: None,
        } = &s.config
        else {
            continue;
        };
        let who = if client.is_some() {
            "a client queue"
        } else {
            "the scenario's client"
        };
        let i = match out.iter().position(|a| a.tier == *tier && a.client == who) {
            Some(i) => i,
            None => {
                out.push(ApiAnswer {
                    tier: tier.clone(),
                    client: who.to_owned(),
                    multiplier: None,
                    usd_per_month: None,
                    why_not: None,
                });
                out.len() - 1
            }
        };
        let a = &mut out[i];
        match (s.best(), a.multiplier) {
            (Some(best), m) if m.is_none_or(|m| *multiplier < m) => {
                a.multiplier = Some(*multiplier);
                a.usd_per_month = Some(best.usd_per_month);
                a.why_not = None;
            }
            (None, None) => {
                a.why_not = s
                    .evaluated
                    .last()
                    .and_then(|e| e.verdict.as_ref().err().cloned())
                    .or_else(|| s.pruned.clone());
            }
            _ => {}
        }
    }
    out
}

/// Assemble a plan from finished searches.
pub fn assemble(done: Vec<Finished>, space: &Space) -> Plan {
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
    let identical = done.iter().filter(|s| s.same_as.is_some()).count();
    let pruned = done
        .iter()
        .filter(|s| s.same_as.is_none())
        .filter_map(|s| {
            s.pruned.as_ref().map(|p| {
                (
                    s.config.describe(0).trim_start_matches("0 × ").to_owned(),
                    p.clone(),
                )
            })
        })
        .collect();
    let mut feasible = best_rows(&done);
    feasible.sort_by(by_cost);
    let feasible = merge_same(feasible);
    let cheapest = feasible.first().map_or(f64::INFINITY, |b| b.usd_per_month);
    let near_misses = near_misses(&done, cheapest);
    let api_tiers = api_answers(&done);
    let (unsettled, unsettled_floor_usd, unsettled_dearer) = unsettled(&done, cheapest);
    let events = done.iter().map(|s| s.events).sum();
    Plan {
        unsettled,
        unsettled_floor_usd,
        unsettled_dearer,
        events,
        budget_events: space.budget_events,
        configurations,
        candidates,
        pruned,
        identical,
        api_tiers,
        simulations,
        feasible,
        near_misses,
    }
}

/// Each search's cheapest setup that meets the targets, saying which
/// batch sizes its identical searches ran the same.
fn best_rows(done: &[Finished]) -> Vec<Evaluated> {
    done
        .iter()
        .filter_map(|s| {
            let mut best = s.best().cloned()?;
            if let Config::SelfHosted {
                gpu,
                tp,
                weights,
                max_seqs,
            } = s.config
            {
                let alike: Vec<String> = done
                    .iter()
                    .filter(|o| {
                        o.same_as == Some(max_seqs)
                            && matches!(o.config, Config::SelfHosted { gpu: g, tp: t, weights: w, .. }
                                if (g, t, w) == (gpu, tp, weights))
                    })
                    .filter_map(|o| match o.config {
                        Config::SelfHosted { max_seqs: m, .. } => Some(m.to_string()),
                        Config::Api { .. } | Config::AsIs => None,
                    })
                    .collect();
                if !alike.is_empty() {
                    best.description += &format!(" (batch {} runs the same)", alike.join(", "));
                }
            }
            Some(best)
        })
        .collect()
}

/// An API tier at a higher rate-limit multiple that changes nothing (the
/// limits never bound), or a batch size the traffic never fills, is the
/// same row: keep the first and say which others run the same.
fn merge_same(feasible: Vec<Evaluated>) -> Vec<Evaluated> {
    let mut merged: Vec<(Evaluated, Vec<u32>)> = Vec::new();
    for e in feasible {
        let same = merged.iter_mut().find(|(m, _)| {
            let alike = match (&m.config, &e.config) {
                (
                    // A fallback that never fired runs the same as none.
                    Config::Api {
                        tier: a,
                        client: x,
                        units: u,
                        ..
                    },
                    Config::Api {
                        tier: b,
                        client: y,
                        units: v,
                        ..
                    },
                ) => (a, x, u) == (b, y, v),
                (
                    Config::SelfHosted {
                        gpu: g,
                        tp: t,
                        weights: w,
                        ..
                    },
                    Config::SelfHosted {
                        gpu: h,
                        tp: u,
                        weights: v,
                        ..
                    },
                ) => (g, t, w) == (h, u, v) && m.replicas == e.replicas,
                _ => false,
            };
            alike && m.usd_per_month == e.usd_per_month && m.summary == e.summary
        });
        match (same, &e.config) {
            (Some((kept, also)), Config::Api { multiplier, .. }) => {
                // A fallback's row at the kept row's own multiple says nothing new.
                let kept_at =
                    matches!(kept.config, Config::Api { multiplier: m, .. } if m == *multiplier);
                if !kept_at && !also.contains(multiplier) {
                    also.push(*multiplier);
                }
            }
            (Some((_, also)), Config::SelfHosted { max_seqs, .. }) => also.push(*max_seqs),
            (_, _) => merged.push((e, Vec::new())),
        }
    }
    merged
        .into_iter()
        .map(|(mut e, mut also)| {
            if !also.is_empty() {
                also.sort_unstable();
                e.description += &match e.config {
                    Config::Api { .. } => {
                        let list: Vec<String> = also.iter().map(|m| format!("{m}×")).collect();
                        format!(" ({} the same)", list.join(", "))
                    }
                    Config::SelfHosted { .. } => {
                        let list: Vec<String> = also.iter().map(u32::to_string).collect();
                        let verb = if also.len() == 1 { "runs" } else { "run" };
                        format!(" (batch {} {verb} the same)", list.join(", "))
                    }
                    Config::AsIs => String::new(),
                };
            }
            e
        })
        .collect()
}

/// Near misses: for each configuration, its largest failing size that is
/// still cheaper than the cheapest answer; the closest to it in cost first.
fn near_misses(done: &[Finished], cheapest: f64) -> Vec<Evaluated> {
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
    near_misses.sort_by(|a, b| by_cost(b, a));
    near_misses.truncate(10);
    near_misses
}

/// The searches not settled within the work budget that could still beat
/// the cheapest answer (with their cost floors), and how many dearer ones
/// were left unsettled.
fn unsettled(done: &[Finished], cheapest: f64) -> (Vec<(String, String)>, Vec<f64>, usize) {
    let could_beat = |s: &Finished| s.floor_usd.is_none_or(|f| f < cheapest);
    let (unsettled, unsettled_floor_usd) = done
        .iter()
        .filter(|s| could_beat(s))
        .filter_map(|s| {
            let why = s.unsettled.clone()?;
            Some((
                (
                    s.config.describe(0).trim_start_matches("0 × ").to_owned(),
                    why,
                ),
                s.floor_usd.unwrap_or(0.0),
            ))
        })
        .unzip();
    let unsettled_dearer = done
        .iter()
        .filter(|s| s.unsettled.is_some() && !could_beat(s))
        .count();
    (unsettled, unsettled_floor_usd, unsettled_dearer)
}

/// The searches in groups that differ only in batch size (smallest first),
/// each group to be run in order so [`Search::skip_identical`] can spare the
/// larger batch sizes; groups are independent of one another.
pub fn groups(all: Vec<Search>) -> Vec<Vec<Search>> {
    let mut out: Vec<Vec<Search>> = Vec::new();
    for s in all {
        let key = |c: &Config| match c {
            Config::SelfHosted {
                gpu, tp, weights, ..
            } => Some((*gpu, *tp, *weights)),
            Config::Api { .. } | Config::AsIs => None,
        };
        match out.last_mut() {
            Some(g) if key(&s.config).is_some() && key(&g[0].config) == key(&s.config) => g.push(s),
            _ => out.push(vec![s]),
        }
    }
    out
}

/// Run one group of [`groups`] in order, sparing identical batch sizes
/// ([`super::steps::GroupRuns`] driven here).
pub fn run_group(
    group: Vec<Search>,
    mut run: impl FnMut(Scenario) -> Result<Report, ScenarioError>,
) -> Vec<Search> {
    use super::Runs as _;
    let mut g = super::steps::GroupRuns::new(group);
    for _ in 0..super::runs::MAX_RUNS {
        let Some(s) = g.next() else { break };
        match run(s) {
            Ok(r) => g.feed(&r),
            Err(e) => g.refuse(&e),
        }
    }
    g.into_searches()
}

/// The outcome so far of each group of searches.
pub fn outcomes(groups: &[Vec<Search>]) -> Vec<super::budget::Outcome> {
    groups
        .iter()
        .map(|g| super::budget::Outcome::of_searches(g))
        .collect()
}

/// The next pass ([`super::budget`]): reopen the groups still unsettled,
/// with their shares of what the passes so far left of `budget`; the indices
/// of the groups to run again with [`run_group`] (none: the plan is done).
pub fn reopen_groups(groups: &mut [Vec<Search>], budget: u64) -> Vec<usize> {
    let shares = super::budget::second_pass_shares(budget, &outcomes(groups));
    groups
        .iter_mut()
        .zip(shares)
        .enumerate()
        .filter_map(|(i, (g, share))| super::budget::reopen(g, share).then_some(i))
        .collect()
}

/// Plan serially (the CLI parallelises the groups itself; Python's
/// executors drive the same [`super::PlanSteps`]).
pub fn plan(base: &Scenario, slo: PlanSlo, space: &Space) -> Plan {
    let mut steps = super::PlanSteps::new(base, slo, space);
    super::steps::drive_steps(&mut steps, super::planning_run(slo));
    steps.plan()
}
