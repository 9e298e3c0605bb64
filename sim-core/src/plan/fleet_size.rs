//! The fewest replicas of a scenario's own fleet that meet its targets:
//! what the page's "replicas to meet the targets" card says, beside the
//! replicas its throughput alone needs ([`crate::compare::LoadCheck`]).
//!
//! A search over the replica count, each count a run of the whole scenario
//! (same seed, same traffic) judged as the planner judges a setup
//! ([`PlanSlo::for_scenario`]: p99 first visible token and time per token
//! within the scenario's targets, at most 1 % errors, goodput ≥ 90 %). It
//! starts from the run on screen, whose verdict it takes as given: when
//! that run meets the targets the answer is at most its replicas, when it
//! misses them more — so the card and the run beside it never disagree.
//! Below the count whose capacity covers the mean demand nothing is run (the
//! queue would grow); above it the counts are bisected.

use super::{PlanSlo, Runs};
use crate::report::Report;
use crate::scenario::{Scenario, bounds};

/// What the search found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FleetSize {
    /// The fewest replicas that meet the targets; with `met` false, the
    /// most tried, which did not.
    pub replicas: u32,
    /// Whether any count tried met them.
    pub met: bool,
}

/// The search, run by run (`next`, then `feed` its report).
#[derive(Clone, Debug)]
pub struct FleetSizeSearch {
    base: Scenario,
    slo: PlanSlo,
    /// The largest count known to miss (0: none yet).
    fails: u32,
    /// The smallest count known to meet.
    meets: Option<u32>,
    /// The most replicas tried.
    most: u32,
    next: Option<u32>,
    runs: u32,
}

impl FleetSizeSearch {
    /// The search for `s`, whose run on screen is `on_screen`, with one
    /// replica sustaining `capacity_per_replica` tasks/s; None where one
    /// replica's capacity does not size the deployment (no
    /// [`crate::compare::load_check`]).
    pub fn new(s: &Scenario, on_screen: &Report, capacity_per_replica: f64) -> Option<Self> {
        let check = crate::compare::load_check(s, capacity_per_replica)?;
        let (mean, _) = s.offered_tasks_per_s()?;
        let slo = PlanSlo::for_scenario(s);
        let here = s.serving.replicas.max(1);
        // Fewer replicas than the mean demand fills miss (their queue grows).
        let floor = ((mean / check.tasks_per_s_per_replica).ceil() as u32).max(1);
        let mut search = FleetSizeSearch {
            base: s.clone(),
            slo,
            fails: floor - 1,
            meets: None,
            most: (4 * floor.max(here) + 8).min(bounds::REPLICAS),
            next: None,
            runs: 0,
        };
        if slo.check(on_screen).is_ok() {
            search.meets = Some(here);
            search.fails = search.fails.min(here - 1);
        } else {
            search.fails = search.fails.max(here);
        }
        search.next = search.choose();
        Some(search)
    }

    /// The count to try next: bisect between the largest miss and the
    /// smallest meet, or double past the largest miss while none meets.
    fn choose(&self) -> Option<u32> {
        match self.meets {
            Some(m) if m - self.fails <= 1 => None,
            Some(m) => Some(self.fails + (m - self.fails) / 2),
            None if self.fails >= self.most => None,
            None => Some((2 * self.fails).max(self.fails + 1).min(self.most)),
        }
    }

    /// The scenario [`Runs::next`] gives, without taking it.
    pub fn upcoming(&self) -> Option<Scenario> {
        self.next.map(|n| {
            let mut s = self.base.clone();
            s.serving.replicas = n;
            s
        })
    }

    /// The answer, once the search is done.
    pub fn result(&self) -> Option<FleetSize> {
        if self.next.is_some() {
            return None;
        }
        Some(match self.meets {
            Some(replicas) => FleetSize {
                replicas,
                met: true,
            },
            None => FleetSize {
                replicas: self.most,
                met: false,
            },
        })
    }

    /// Runs made so far.
    pub fn runs(&self) -> u32 {
        self.runs
    }

    /// The targets it judges by.
    pub fn targets(&self) -> PlanSlo {
        self.slo
    }
}

impl Runs for FleetSizeSearch {
    fn next(&mut self) -> Option<Scenario> {
        self.upcoming()
    }

    /// Count the run's misses against the targets as it goes.
    fn begin(&self, sim: &mut crate::Simulation) {
        self.slo.watch(sim);
    }

    /// Whether the run already misses the targets whatever follows, and why.
    fn settled(&self, sim: &crate::Simulation) -> Option<String> {
        let s = self.upcoming()?;
        super::early_bound(&s).and_then(|u| self.slo.settled_fail(sim, u))
    }

    fn feed(&mut self, report: &Report) {
        let Some(n) = self.next else { return };
        self.runs += 1;
        if self.slo.check(report).is_ok() {
            self.meets = Some(self.meets.map_or(n, |m| m.min(n)));
        } else {
            self.fails = self.fails.max(n);
        }
        self.next = self.choose();
    }

    fn progress(&self) -> f64 {
        if self.next.is_none() { 1.0 } else { 0.5 }
    }
}

/// The search run to its end here (for the CLI and tests): each count a
/// planning run that stops once its verdict is settled.
pub fn fleet_size(
    s: &Scenario,
    on_screen: &Report,
    capacity_per_replica: f64,
) -> Result<Option<FleetSize>, crate::ScenarioError> {
    let Some(mut search) = FleetSizeSearch::new(s, on_screen, capacity_per_replica) else {
        return Ok(None);
    };
    super::drive(&mut search)?;
    Ok(search.result())
}
