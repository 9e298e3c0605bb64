//! The confident plan: the cheapest setup that meets the targets in at
//! least a share of its range runs (`crate::ranges`: the profile's
//! measured step-time error and three seeds), beside the plan's cheapest
//! at the point estimate, and what the difference costs.
//!
//! The plan's cheapest setup of each kind (GPU and GPUs per replica, API
//! tier, the setup as it is), [`CHECKED`] kinds at most, are checked in
//! cost order: the model's error differs by GPU, so the next-cheapest
//! setup on the same hardware would mostly repeat the verdict. Each is
//! checked at its own replica count and up to [`MORE_REPLICAS`] more (an
//! API tier and the setup as it is only as they are); a setup stops at its
//! first count that is sure enough, and nothing dearer than a confident
//! setup already found is run. The range runs stop as soon as a miss is settled,
//! as the planner's runs do.

use super::{Config, Plan, PlanSlo, apply_config};
use crate::ranges::RangeRuns;
use crate::scenario::{Scenario, ScenarioError};
use serde::Serialize;

/// Kinds of setup checked, cheapest first.
pub const CHECKED: usize = 6;
/// Replicas added to a setup, at most, to make it sure enough.
pub const MORE_REPLICAS: u32 = 2;

/// One setup checked over its range runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Checked {
    /// In words, at its replica count.
    pub description: String,
    /// Replicas (0 for an API).
    pub replicas: u32,
    /// Cost per month.
    pub usd_per_month: f64,
    /// Range runs meeting the targets.
    pub meets: u32,
    /// Range runs made.
    pub runs: u32,
}

/// The plan's answer checked against the model's error.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Confidence {
    /// The share of range runs a confident setup meets the targets in.
    pub level: f64,
    /// The plan's cheapest setup at the point estimate, over its range runs.
    pub point: Option<Checked>,
    /// The cheapest setup checked that meets the targets in at least
    /// `level` of its range runs.
    pub confident: Option<Checked>,
    /// Every setup checked, in the order checked.
    pub checked: Vec<Checked>,
}

impl Checked {
    /// Whether it meets the targets in at least `level` of its runs.
    pub fn sure(&self, level: f64) -> bool {
        f64::from(self.meets) >= level * f64::from(self.runs) - 1e-9
    }
}

impl Confidence {
    /// What the confident setup costs a month over the point answer.
    pub fn price_usd_per_month(&self) -> Option<f64> {
        Some(self.confident.as_ref()?.usd_per_month - self.point.as_ref()?.usd_per_month)
    }

    /// In words, for the CLI and the page.
    pub fn words(&self) -> String {
        let share =
            |c: &Checked| format!("meets the targets in {} of {} range runs", c.meets, c.runs);
        let usd = crate::format::usd;
        let level = format!("{:.0} %", 100.0 * self.level);
        match (&self.point, &self.confident) {
            (None, _) => {
                "No setup to check: the plan found none that meets the targets.".to_owned()
            }
            (Some(p), Some(c)) if p == c => format!(
                "Confident at {level}: the cheapest setup, {} at {}/month, {}.",
                c.description,
                usd(c.usd_per_month),
                share(c)
            ),
            (Some(p), Some(c)) => format!(
                "Confident at {level}: {} at {}/month, {}; the cheapest at the point estimate, {} at {}/month, {}. Confidence costs {}/month.",
                c.description,
                usd(c.usd_per_month),
                share(c),
                p.description,
                usd(p.usd_per_month),
                share(p),
                usd(c.usd_per_month - p.usd_per_month)
            ),
            (Some(p), None) => format!(
                "No setup checked is confident at {level}: the cheapest, {} at {}/month, {}; {} setups checked, each with up to {MORE_REPLICAS} more replicas.",
                p.description,
                usd(p.usd_per_month),
                share(p),
                self.checked.len()
            ),
        }
    }
}

/// Check `plan`'s answer for `base` (the scenario the plan ran on) against
/// `slo` over each setup's range runs, at `level` (0..=1).
pub fn confidence(
    base: &Scenario,
    plan: &Plan,
    slo: PlanSlo,
    level: f64,
) -> Result<Confidence, ScenarioError> {
    let mut out = Confidence {
        level,
        point: None,
        confident: None,
        checked: Vec::new(),
    };
    let mut kinds: Vec<String> = Vec::new();
    let cheapest_of_each = plan.feasible.iter().filter(|e| {
        let kind = match &e.config {
            Config::SelfHosted { gpu, tp, .. } => format!("{} × {tp}", gpu.spec().name),
            Config::Api { tier, .. } => tier.clone(),
            Config::AsIs => super::AS_IS.to_owned(),
        };
        let new = !kinds.contains(&kind);
        if new {
            kinds.push(kind);
        }
        new
    });
    for e in cheapest_of_each.take(CHECKED) {
        let fixed = e.replicas == 0 || e.config == Config::AsIs;
        let most = if fixed {
            e.replicas
        } else {
            e.replicas + MORE_REPLICAS
        };
        for replicas in e.replicas..=most {
            let usd_per_month = if fixed {
                e.usd_per_month
            } else {
                e.usd_per_month * f64::from(replicas) / f64::from(e.replicas)
            };
            if out
                .confident
                .as_ref()
                .is_some_and(|c| c.usd_per_month <= usd_per_month)
            {
                break;
            }
            let mut s = base.clone();
            apply_config(&mut s, &e.config, replicas)
                .map_err(|p| ScenarioError { problems: vec![p] })?;
            let mut runs = RangeRuns::verdicts(&s, slo);
            super::drive(&mut runs)?;
            let Some(r) = runs.result() else { break };
            let c = Checked {
                description: if replicas == e.replicas {
                    e.description.clone()
                } else {
                    e.config.describe(replicas)
                },
                replicas,
                usd_per_month,
                meets: r.meeting_targets,
                runs: r.runs,
            };
            out.point.get_or_insert_with(|| c.clone());
            out.checked.push(c.clone());
            if c.sure(level) {
                out.confident = Some(c);
                break;
            }
        }
    }
    Ok(out)
}
