//! What a plan over pools answers ([`super::pools`]): each question's
//! fixed, autoscaled and overflowing setups, the classes' answers run
//! together, and the cheaper of one setup for everything and the split.

use super::{Evaluated, Plan, PlanSlo};
use crate::scenario::{Autoscale, Overflow, RoutingRule, ScaleSignal, Scenario};
use crate::sweep::Summary;
use serde::{Deserialize, Serialize};

/// The planner's autoscaler on `s`'s first pool: requests waiting per
/// replica at its default target, within `min..=max`, `min` up at the start.
pub(super) fn autoscale(s: &mut Scenario, min: u32, max: u32) {
    s.serving.autoscale = Some(Autoscale::new(ScaleSignal::QueuePerReplica, min, max));
    s.serving.replicas = min.max(1);
}

/// Requests waiting per replica above which the planner's overflow rule
/// sends a request to the API: the autoscaler's default target on the same
/// signal (one definition of "the pool is falling behind").
pub fn overflow_queue() -> u32 {
    ScaleSignal::QueuePerReplica.default_target().round() as u32
}

/// The planner's overflow rule: `class` (None: every class) to `pool`, and
/// to `tier` while the pool has more than [`overflow_queue`] requests waiting
/// per replica.
pub fn overflow_rule(class: Option<String>, pool: &str, tier: &str) -> RoutingRule {
    RoutingRule {
        class,
        prompt_under: None,
        share: None,
        to: pool.to_owned(),
        overflow: Some(Overflow {
            queue_per_replica: overflow_queue(),
            to: tier.to_owned(),
        }),
    }
}

/// A pool smaller than the fixed answer that sends what it cannot keep up
/// with to an API tier.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Overflowed {
    /// Its replicas (fewer than the fixed answer's).
    pub replicas: u32,
    /// The API tier it overflows to.
    pub tier: String,
    /// Requests waiting per replica above which it overflows.
    pub queue_per_replica: u32,
    /// Share of the requests the API served in its run.
    pub api_share: f64,
    /// Its run's cost per month: the pool's replicas and the API's tokens.
    pub usd_per_month: f64,
    /// In words.
    pub description: String,
    /// Its run.
    pub summary: Summary,
}

/// An autoscaled answer: the fixed answer's setup within `min..=max`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scaled {
    /// Fewest replicas kept up.
    pub min_replicas: u32,
    /// Most replicas (twice the fixed answer's count, within the space's bound).
    pub max_replicas: u32,
    /// Most replicas up at once in its run.
    pub peak_replicas: u32,
    /// Its run's cost per month: replica-hours up (cold starts included) and API spend.
    pub usd_per_month: f64,
    /// In words.
    pub description: String,
    /// Its run.
    pub summary: Summary,
}

impl Scaled {
    /// Whether its run started more replicas than it kept up (else its
    /// answer is `min_replicas` fixed: the autoscaler never acted).
    pub fn scales(&self) -> bool {
        self.peak_replicas > self.min_replicas
    }
}

/// One question's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// The class (a group's classes joined by " + "), or None for all the
    /// traffic on one setup.
    pub class: Option<String>,
    /// The classes it serves.
    #[serde(default)]
    pub classes: Vec<String>,
    /// Its targets.
    pub slo: PlanSlo,
    /// The cheapest setup meeting them at a fixed size, if any.
    pub fixed: Option<Evaluated>,
    /// The cheapest self-hosted one, if any: the base of the autoscaled and
    /// overflowing setups (`fixed` itself unless an API tier is cheaper).
    #[serde(default)]
    pub hosted: Option<Evaluated>,
    /// The cheapest autoscaled one meeting them, if tried and any passed.
    pub scaled: Option<Scaled>,
    /// Why autoscaling was not tried, or what it found.
    pub scaling_note: Option<String>,
    /// The cheapest smaller pool overflowing to an API tier that meets them,
    /// if tried and any passed.
    #[serde(default)]
    pub overflow: Option<Overflowed>,
    /// Why overflow to an API tier was not tried, or what it found.
    #[serde(default)]
    pub overflow_note: Option<String>,
    /// Its ordinary plan (feasible rows, misses, pruned).
    pub plan: Plan,
}

/// Which of an answer's setups is the cheapest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chosen {
    /// The fixed fleet.
    Fixed,
    /// The autoscaled one.
    Scaled,
    /// The smaller pool overflowing to an API tier.
    Overflow,
}

impl Answer {
    /// Which setup is its answer: the cheapest of the fixed one, the
    /// autoscaled one and the overflowing one (on a tie, in that order).
    pub fn chosen(&self) -> Option<Chosen> {
        let fixed = self.fixed.as_ref()?.usd_per_month;
        let scaled = self
            .scaled
            .as_ref()
            .map_or(f64::INFINITY, |s| s.usd_per_month);
        let over = self
            .overflow
            .as_ref()
            .map_or(f64::INFINITY, |o| o.usd_per_month);
        Some(if over < fixed && over < scaled {
            Chosen::Overflow
        } else if scaled < fixed {
            Chosen::Scaled
        } else {
            Chosen::Fixed
        })
    }

    /// The setup its answer starts from: the fixed one, or the self-hosted
    /// one the autoscaled or overflowing answer is made of.
    pub fn setup(&self) -> Option<&Evaluated> {
        match self.chosen()? {
            Chosen::Fixed => self.fixed.as_ref(),
            _ => self.hosted.as_ref(),
        }
    }

    /// Its cost per month: the chosen setup's.
    pub fn usd_per_month(&self) -> Option<f64> {
        Some(match self.chosen()? {
            Chosen::Fixed => self.fixed.as_ref()?.usd_per_month,
            Chosen::Scaled => self.scaled.as_ref()?.usd_per_month,
            Chosen::Overflow => self.overflow.as_ref()?.usd_per_month,
        })
    }

    /// Whether its answer is the autoscaled one.
    pub fn autoscales(&self) -> bool {
        self.chosen() == Some(Chosen::Scaled)
    }

    /// The API tier its answer overflows to, if it does.
    pub fn overflows_to(&self) -> Option<&str> {
        (self.chosen() == Some(Chosen::Overflow))
            .then(|| self.overflow.as_ref().map(|o| o.tier.as_str()))
            .flatten()
    }

    /// Make `s` this answer (the page's Apply, and each pool of the split):
    /// the fixed setup, autoscaled where that is the answer and the
    /// autoscaler acted (one that never did is its fixed count), or smaller
    /// with every class's requests overflowing to the API tier (`s`'s API
    /// tiers kept).
    pub fn apply(&self, s: &mut Scenario) -> Result<(), String> {
        let chosen = self.chosen().ok_or("no setup meets the targets")?;
        let base = self.setup().ok_or("no setup meets the targets")?;
        let api = s.api.clone();
        super::apply_config(s, &base.config, base.replicas)?;
        match Some(chosen) {
            Some(Chosen::Scaled) => {
                if let Some(sc) = &self.scaled {
                    if sc.scales() {
                        autoscale(s, sc.min_replicas, sc.max_replicas);
                    } else {
                        s.serving.replicas = sc.min_replicas.max(1);
                    }
                }
            }
            Some(Chosen::Overflow) => {
                if let Some(o) = &self.overflow {
                    let mut api = api.ok_or("the scenario has no API tiers to overflow to")?;
                    api.routes.clear();
                    s.api = Some(api);
                    s.serving.replicas = o.replicas.max(1);
                    let pool = s.serving.pool_name().to_owned();
                    s.routing = vec![overflow_rule(None, &pool, &o.tier)];
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// In words.
    pub fn describe(&self) -> Option<String> {
        match self.chosen()? {
            Chosen::Scaled => self.scaled.as_ref().map(|s| s.description.clone()),
            Chosen::Overflow => self.overflow.as_ref().map(|o| o.description.clone()),
            Chosen::Fixed => self.fixed.as_ref().map(|e| e.description.clone()),
        }
    }
}

/// The classes' answers run together.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Split {
    /// The deployment: a pool per self-hosted class, a rule per class, over
    /// the asked scenario's whole arrival window (its run may have been
    /// over a shorter one, within the work budget).
    pub scenario: Scenario,
    /// Its run's cost per month (every pool's replica-hours and API spend).
    pub usd_per_month: f64,
    /// Each class against its own targets in that run: Ok(margin) or why not.
    pub verdicts: Vec<(String, Result<f64, String>)>,
    /// The classes each of its pools or API tiers serves.
    #[serde(default)]
    pub groups: Vec<Vec<String>>,
    /// Its run.
    pub summary: Summary,
}

impl Split {
    /// Whether every class met its targets.
    pub fn meets(&self) -> bool {
        self.verdicts.iter().all(|(_, v)| v.is_ok())
    }

    /// Which classes share a pool or tier, in words: "each class on its
    /// own", or e.g. "chat and search together, batch job on its own".
    pub fn describe(&self) -> String {
        if self.groups.iter().all(|g| g.len() < 2) {
            return "each class on its own".into();
        }
        self.groups
            .iter()
            .map(|g| match g.as_slice() {
                [one] => format!("{one} on its own"),
                [init @ .., last] => format!("{} and {last} together", init.join(", ")),
                [] => String::new(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A finished plan over pools.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PoolPlan {
    /// All the traffic on one setup.
    pub whole: Answer,
    /// Each class on its own.
    pub classes: Vec<Answer>,
    /// Each group of classes sharing a pool (planned for 3 or 4 classes).
    #[serde(default)]
    pub groups: Vec<Answer>,
    /// The classes' answers together, when every class has one.
    pub split: Option<Split>,
    /// Why there is no split, when there is none.
    pub no_split: Option<String>,
}

impl PoolPlan {
    /// The cheaper of one setup for everything and the split that met every
    /// class's targets: (in words, cost per month, whether it is the split).
    pub fn cheapest(&self) -> Option<(String, f64, bool)> {
        let whole = self
            .whole
            .usd_per_month()
            .zip(self.whole.describe())
            .map(|(c, d)| (d, c, false));
        let split = self
            .split
            .as_ref()
            .filter(|s| s.meets())
            .map(|s| (s.describe(), s.usd_per_month, true));
        match (whole, split) {
            (Some(w), Some(s)) if s.1 < w.1 => Some(s),
            (Some(w), _) => Some(w),
            (None, s) => s,
        }
    }
}
