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
    /// The step-time band its range runs used (None for an API tier).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub basis: Option<crate::ranges::Basis>,
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
    /// Whether the confident setup costs at most one replica of the point
    /// answer more (None without both).
    pub fn within_one_replica(&self) -> Option<bool> {
        let (p, c) = (self.point.as_ref()?, self.confident.as_ref()?);
        let one = p.usd_per_month / f64::from(p.replicas.max(1));
        Some(c.usd_per_month <= p.usd_per_month + one + 0.5)
    }

    /// Why confidence costs more than one replica, or why none is
    /// confident: the point answer's band, in words. None where it costs
    /// one replica or less.
    pub fn why(&self) -> Option<String> {
        if self.within_one_replica() == Some(true) {
            return None;
        }
        let b = self.point.as_ref()?.basis.as_ref()?;
        Some(format!(
            "its step time may be ×{:.2} – ×{:.2} of the simulated ({}: {})",
            b.low,
            b.high,
            if b.measured {
                "the p10–p90 measured"
            } else {
                "an estimate"
            },
            b.source
        ))
    }

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
                "Confident at {level}: {} at {}/month, {}; the cheapest at the point estimate, {} at {}/month, {}. Confidence costs {}/month{}.",
                c.description,
                usd(c.usd_per_month),
                share(c),
                p.description,
                usd(p.usd_per_month),
                share(p),
                usd(c.usd_per_month - p.usd_per_month),
                self.why().map_or(String::new(), |w| format!(
                    ", more than one replica: the point answer misses within its error; {w}"
                ))
            ),
            (Some(p), None) => format!(
                "No setup checked is confident at {level}: the cheapest, {} at {}/month, {}; {} setups checked, each with up to {MORE_REPLICAS} more replicas{}.",
                p.description,
                usd(p.usd_per_month),
                share(p),
                self.checked.len(),
                self.why().map_or(String::new(), |w| format!("; {w}"))
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
            basis: r.basis.clone(),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(
        replicas: u32,
        usd: f64,
        meets: u32,
        runs: u32,
        basis: Option<crate::ranges::Basis>,
    ) -> Checked {
        Checked {
            description: format!("{replicas} × X"),
            config: Config::AsIs,
            replicas,
            usd_per_month: usd,
            meets,
            runs,
            basis,
        }
    }

    #[test]
    fn confidence_past_one_replica_says_why_in_the_point_answers_band() {
        let basis = crate::ranges::band_for(&crate::presets::h100_llama_8b());
        let point = checked(2, 2_000.0, 6, 9, Some(basis.clone()));
        let mut c = Confidence {
            level: 0.9,
            point: Some(point.clone()),
            confident: Some(checked(3, 3_000.0, 9, 9, None)),
            checked: Vec::new(),
        };
        // One replica more: no reason needed.
        assert_eq!(c.within_one_replica(), Some(true));
        assert_eq!(c.why(), None);
        assert!(
            c.words().ends_with("Confidence costs $1,000/month."),
            "{}",
            c.words()
        );
        // Two more: the band says why.
        c.confident = Some(checked(4, 4_000.0, 9, 9, None));
        assert_eq!(c.within_one_replica(), Some(false));
        let words = c.words();
        assert!(
            words.ends_with(&format!(
                "Confidence costs $2,000/month, more than one replica: the point answer misses within its error; its step time may be ×{:.2} – ×{:.2} of the simulated (the p10–p90 measured: {}).",
                basis.low, basis.high, basis.source
            )),
            "{words}"
        );
        // None confident: the same reason after what was checked.
        c.confident = None;
        assert!(
            c.words().contains("more replicas; its step time may be ×"),
            "{}",
            c.words()
        );
    }
}
