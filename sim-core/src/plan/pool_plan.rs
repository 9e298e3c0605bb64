//! What a plan over pools answers ([`super::pools`]): each question's
//! fixed and autoscaled setups, the classes' answers run together, and the
//! cheaper of one setup for everything and the split.

use super::{Evaluated, Plan, PlanSlo};
use crate::scenario::{Autoscale, ScaleSignal, Scenario};

/// The planner's autoscaler on `s`'s first pool: requests waiting per
/// replica at its default target, within `min..=max`, `min` up at the start.
pub(super) fn autoscale(s: &mut Scenario, min: u32, max: u32) {
    s.serving.autoscale = Some(Autoscale::new(ScaleSignal::QueuePerReplica, min, max));
    s.serving.replicas = min.max(1);
}
use crate::sweep::Summary;
use serde::{Deserialize, Serialize};

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
    /// The cheapest autoscaled one meeting them, if tried and any passed.
    pub scaled: Option<Scaled>,
    /// Why autoscaling was not tried, or what it found.
    pub scaling_note: Option<String>,
    /// Its ordinary plan (feasible rows, misses, pruned).
    pub plan: Plan,
}

impl Answer {
    /// Its cost per month: the autoscaled answer's where it is cheaper.
    pub fn usd_per_month(&self) -> Option<f64> {
        let fixed = self.fixed.as_ref().map(|e| e.usd_per_month);
        match (&self.scaled, fixed) {
            (Some(s), Some(f)) if s.usd_per_month < f => Some(s.usd_per_month),
            (_, f) => f,
        }
    }

    /// Whether its cheaper answer is the autoscaled one.
    pub fn autoscales(&self) -> bool {
        match (&self.scaled, &self.fixed) {
            (Some(s), Some(f)) => s.usd_per_month < f.usd_per_month,
            _ => false,
        }
    }

    /// Make `s` this answer (the page's Apply, and each pool of the split):
    /// the fixed setup, autoscaled where that is the cheaper answer and the
    /// autoscaler acted (one that never did is its fixed count).
    pub fn apply(&self, s: &mut Scenario) -> Result<(), String> {
        let fixed = self.fixed.as_ref().ok_or("no setup meets the targets")?;
        super::apply_config(s, &fixed.config, fixed.replicas)?;
        if self.autoscales()
            && let Some(sc) = &self.scaled
        {
            if sc.scales() {
                autoscale(s, sc.min_replicas, sc.max_replicas);
            } else {
                s.serving.replicas = sc.min_replicas.max(1);
            }
        }
        Ok(())
    }

    /// In words.
    pub fn describe(&self) -> Option<String> {
        if self.autoscales() {
            return self.scaled.as_ref().map(|s| s.description.clone());
        }
        self.fixed.as_ref().map(|e| e.description.clone())
    }
}

/// The classes' answers run together.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Split {
    /// The deployment: a pool per self-hosted class, a rule per class.
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
