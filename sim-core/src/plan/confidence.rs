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

use super::{Config, Plan, PlanSlo, Runs, apply_config};
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
    /// The setup, to apply at `replicas` ([`super::apply_config`]).
    #[serde(skip)]
    pub config: Config,
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
/// `slo` over each setup's range runs, at `level` (0..=1), run here.
pub fn confidence(
    base: &Scenario,
    plan: &Plan,
    slo: PlanSlo,
    level: f64,
) -> Result<Confidence, ScenarioError> {
    let mut runs = ConfidenceRuns::new(base, plan, slo, level);
    super::drive(&mut runs)?;
    runs.result()
}

/// One kind's cheapest setup, to check at its replicas and more.
#[derive(Clone, Debug)]
struct Setup {
    config: Config,
    description: String,
    replicas: u32,
    usd_per_month: f64,
    /// An API tier or the setup as it is: checked only as it is.
    fixed: bool,
}

impl Setup {
    fn most(&self) -> u32 {
        if self.fixed {
            self.replicas
        } else {
            self.replicas + MORE_REPLICAS
        }
    }

    fn usd_per_month_at(&self, replicas: u32) -> f64 {
        if self.fixed {
            self.usd_per_month
        } else {
            self.usd_per_month * f64::from(replicas) / f64::from(self.replicas)
        }
    }
}

/// The check, run by run (the planner's protocol, [`super::Runs`]), so the
/// page runs it in slices as the CLI runs it here.
#[derive(Clone, Debug)]
pub struct ConfidenceRuns {
    base: Scenario,
    slo: PlanSlo,
    setups: Vec<Setup>,
    /// The setup and replica count checked next, or in progress.
    at: (usize, u32),
    current: Option<RangeRuns>,
    out: Confidence,
    error: Option<ScenarioError>,
}

impl ConfidenceRuns {
    /// The check of `plan`'s answer for `base` against `slo` at `level`.
    pub fn new(base: &Scenario, plan: &Plan, slo: PlanSlo, level: f64) -> ConfidenceRuns {
        let mut kinds: Vec<String> = Vec::new();
        let setups: Vec<Setup> = plan
            .feasible
            .iter()
            .filter(|e| {
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
            })
            .take(CHECKED)
            .map(|e| Setup {
                config: e.config.clone(),
                description: e.description.clone(),
                replicas: e.replicas,
                usd_per_month: e.usd_per_month,
                fixed: e.replicas == 0 || e.config == Config::AsIs,
            })
            .collect();
        let at = (0, setups.first().map_or(0, |s| s.replicas));
        ConfidenceRuns {
            base: base.clone(),
            slo,
            setups,
            at,
            current: None,
            out: Confidence {
                level,
                point: None,
                confident: None,
                checked: Vec::new(),
            },
            error: None,
        }
    }

    /// The answer, once every run is fed (what it found so far before).
    pub fn result(&self) -> Result<Confidence, ScenarioError> {
        match &self.error {
            Some(e) => Err(e.clone()),
            None => Ok(self.out.clone()),
        }
    }

    /// The next setup's count, or past the last setup.
    fn next_setup(&mut self) {
        self.at.0 += 1;
        self.at.1 = self.setups.get(self.at.0).map_or(0, |s| s.replicas);
    }

    /// Record the range runs of the count in progress.
    fn settle(&mut self, runs: &RangeRuns) {
        let (i, replicas) = self.at;
        let (Some(e), Some(r)) = (self.setups.get(i), runs.result()) else {
            self.next_setup();
            return;
        };
        let c = Checked {
            config: e.config.clone(),
            description: if replicas == e.replicas {
                e.description.clone()
            } else {
                e.config.describe(replicas)
            },
            replicas,
            usd_per_month: e.usd_per_month_at(replicas),
            meets: r.meeting_targets,
            runs: r.runs,
        };
        self.out.point.get_or_insert_with(|| c.clone());
        self.out.checked.push(c.clone());
        if c.sure(self.out.level) {
            self.out.confident = Some(c);
            self.next_setup();
        } else if replicas >= e.most() {
            self.next_setup();
        } else {
            self.at.1 += 1;
        }
    }
}

impl Runs for ConfidenceRuns {
    fn next(&mut self) -> Option<Scenario> {
        // Each count of each setup once: at most CHECKED × (MORE_REPLICAS + 1).
        for _ in 0..=CHECKED * (MORE_REPLICAS as usize + 1) {
            if let Some(runs) = self.current.as_mut() {
                if let Some(s) = runs.next() {
                    return Some(s);
                }
                let done = self.current.take()?;
                self.settle(&done);
                continue;
            }
            if self.error.is_some() {
                return None;
            }
            let (i, replicas) = self.at;
            let e = self.setups.get(i)?;
            // Nothing dearer than a confident setup already found.
            let usd = e.usd_per_month_at(replicas);
            if self
                .out
                .confident
                .as_ref()
                .is_some_and(|c| c.usd_per_month <= usd)
            {
                self.next_setup();
                continue;
            }
            let mut s = self.base.clone();
            if let Err(p) = apply_config(&mut s, &e.config, replicas) {
                self.error = Some(ScenarioError { problems: vec![p] });
                return None;
            }
            self.current = Some(RangeRuns::verdicts(&s, self.slo));
        }
        None
    }

    fn feed(&mut self, report: &crate::report::Report) {
        if let Some(runs) = self.current.as_mut() {
            runs.feed(report);
        }
    }

    fn progress(&self) -> f64 {
        let per = 1.0 / self.setups.len().max(1) as f64;
        let within = self.current.as_ref().map_or(0.0, |r| r.progress());
        ((self.at.0 as f64 + within) * per).min(1.0)
    }

    fn begin(&self, sim: &mut crate::Simulation) {
        if let Some(r) = &self.current {
            r.begin(sim);
        }
    }

    fn settled(&self, sim: &crate::Simulation) -> Option<String> {
        self.current.as_ref().and_then(|r| r.settled(sim))
    }
}
