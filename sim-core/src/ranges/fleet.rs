//! The fleet's ranges: one replica's capacity, the replicas that meet the
//! targets and what they cost a month, at the profile's step times and at
//! the band's ends (see [`super`]).
//!
//! Each end is measured as the point is: one replica run saturated
//! ([`crate::compare::capacity_scenario`]), then the fewest replicas whose
//! run meets the targets ([`FleetSizeSearch`]), starting from that end's
//! own range run at the scenario's seed, so the point's answer is the one
//! the page's cards give.

use super::runs::{End, RangeRuns};
use super::{Figure, Ranges};
use crate::compare::{capacity_from, capacity_scenario, fleet_usd_per_month};
use crate::plan::Runs;
use crate::plan::fleet_size::{FleetSize, FleetSizeSearch};
use crate::report::Report;
use crate::scenario::Scenario;

/// The names (in a range's figures) of what [`FleetRuns`] adds, with their
/// labels.
pub const FLEET_FIGURES: [(&str, &str); 3] = [
    ("capacity_tasks_per_s", "capacity per replica"),
    ("replicas_for_targets", "replicas to meet the targets"),
    ("usd_per_month", "their cost a month"),
];

/// One end's measurement.
#[derive(Clone, Debug)]
struct EndFleet {
    scenario: Scenario,
    on_screen: Report,
    capacity: Option<f64>,
    search: Option<FleetSizeSearch>,
    answer: Option<FleetSize>,
    /// One replica's capacity does not size this deployment (pools,
    /// routing, API tiers, autoscaling, closed-loop users).
    not_sized: bool,
}

/// The capacity runs and fleet-size searches of each end, driven by the
/// planner's protocol ([`Runs`]) like the range runs they follow.
#[derive(Clone, Debug)]
pub struct FleetRuns {
    ends: Vec<EndFleet>,
    at: usize,
}

impl RangeRuns {
    /// The fleet's runs, once the range runs are done and were run whole:
    /// the point's capacity is `capacity` (tasks/s of one saturated
    /// replica, already measured), the ends' are measured. None where one
    /// replica's capacity does not size the deployment
    /// ([`crate::compare::load_check`]).
    pub fn fleet(&self, capacity: f64) -> Option<FleetRuns> {
        if !self.whole() {
            return None;
        }
        let ends: Vec<EndFleet> = self
            .ends()
            .map(|(end, report)| {
                let scenario = self.scenario(end, 0);
                EndFleet {
                    capacity: (end == End::Point).then_some(capacity),
                    scenario,
                    on_screen: report.clone(),
                    search: None,
                    answer: None,
                    not_sized: false,
                }
            })
            .collect();
        let point = ends.first()?;
        crate::compare::load_check(&point.scenario, capacity)?;
        Some(FleetRuns { ends, at: 0 })
    }
}

impl FleetRuns {
    /// Add the fleet's figures to `ranges` (a no-op before every end is
    /// measured, or where an end could not be sized).
    pub fn add_to(&self, ranges: &mut Ranges) {
        if self.at < self.ends.len() || self.ends.iter().any(|e| e.not_sized) {
            return;
        }
        let figure = |f: &dyn Fn(&EndFleet) -> Option<f64>| -> Option<Figure> {
            let values: Vec<f64> = self.ends.iter().map(f).collect::<Option<_>>()?;
            let value = *values.first()?;
            Some(Figure {
                value,
                low: values.iter().copied().fold(value, f64::min),
                high: values.iter().copied().fold(value, f64::max),
            })
        };
        let replicas = |e: &EndFleet| e.answer.map(|a| f64::from(a.replicas));
        let found = [
            figure(&|e| e.capacity),
            figure(&replicas),
            figure(&|e| replicas(e).map(|n| fleet_usd_per_month(&e.scenario, n as u32))),
        ];
        ranges
            .figures
            .retain(|(n, _)| !FLEET_FIGURES.iter().any(|(f, _)| f == n));
        for ((name, _), f) in FLEET_FIGURES.iter().zip(found) {
            if let Some(f) = f {
                ranges.figures.push((name, f));
            }
        }
        ranges.replicas_unmet = self
            .ends
            .iter()
            .filter(|e| e.answer.is_some_and(|a| !a.met))
            .count() as u32;
    }

    fn current(&self) -> Option<&EndFleet> {
        self.ends.get(self.at)
    }
}

impl Runs for FleetRuns {
    fn next(&mut self) -> Option<Scenario> {
        // Each end at most: its capacity run, then its search to the end.
        while let Some(e) = self.ends.get_mut(self.at) {
            let Some(capacity) = e.capacity else {
                return Some(capacity_scenario(&e.scenario));
            };
            if e.search.is_none() && e.answer.is_none() && !e.not_sized {
                e.search = FleetSizeSearch::new(&e.scenario, &e.on_screen, capacity);
                e.not_sized = e.search.is_none();
            }
            if let Some(s) = e.search.as_mut().and_then(|s| s.next()) {
                return Some(s);
            }
            e.answer = e.search.take().and_then(|s| s.result());
            self.at += 1;
        }
        None
    }

    fn feed(&mut self, report: &Report) {
        let Some(e) = self.ends.get_mut(self.at) else {
            return;
        };
        match (e.capacity, e.search.as_mut()) {
            (None, _) => e.capacity = Some(capacity_from(&e.scenario, report)),
            (Some(_), Some(s)) => s.feed(report),
            (Some(_), None) => {}
        }
    }

    fn progress(&self) -> f64 {
        self.at as f64 / self.ends.len().max(1) as f64
    }

    fn begin(&self, sim: &mut crate::Simulation) {
        if let Some(s) = self.current().and_then(|e| e.search.as_ref()) {
            s.begin(sim);
        }
    }

    fn settled(&self, sim: &crate::Simulation) -> Option<String> {
        self.current()
            .and_then(|e| e.search.as_ref())
            .and_then(|s| s.settled(sim))
    }
}
