//! The protocol every search of many simulations follows, on every path:
//! the scenario to simulate next, then that run's report, until there is
//! none. The CLI drives it here ([`drive`]); the page drives the same
//! searches in slices, and the planner's Web Workers in groups, stopping
//! each run at the same events (every [`super::EARLY_CHECK_EVENTS`]), so
//! every path gives the same answer.

use crate::Simulation;
use crate::report::Report;
use crate::scenario::{Scenario, ScenarioError};

/// A sequence of simulations whose next one may depend on the last report.
pub trait Runs {
    /// The next scenario to simulate, or None when finished. Called once
    /// for each run: the search may note what it asked.
    fn next(&mut self) -> Option<Scenario>;
    /// The report of the scenario [`Runs::next`] returned.
    fn feed(&mut self, report: &Report);
    /// Share of the work done, 0..=1 (for a progress bar).
    fn progress(&self) -> f64;
    /// Whether the simulation in progress may stop here (its verdict is
    /// settled whatever follows), and why.
    fn settled(&self, _sim: &Simulation) -> Option<String> {
        None
    }
    /// Prepare the simulation of the scenario [`Runs::next`] returned,
    /// before it runs (what it counts its misses against).
    fn begin(&self, _sim: &mut Simulation) {}
}

/// Most runs [`drive`] makes: every search ends far sooner, by its own
/// bisection and work budget; this bound only keeps a faulty one finite.
pub const MAX_RUNS: usize = 100_000;

/// Drive `runs` to its end here, each run checked for a settled verdict
/// every [`super::EARLY_CHECK_EVENTS`] events, as the page's slices check it.
pub fn drive(runs: &mut impl Runs) -> Result<(), ScenarioError> {
    for _ in 0..MAX_RUNS {
        let Some(s) = runs.next() else {
            return Ok(());
        };
        let s = s.validate()?;
        let mut sim = Simulation::new(&s);
        runs.begin(&mut sim);
        loop {
            if sim.advance_events(super::EARLY_CHECK_EVENTS) {
                break;
            }
            if let Some(why) = runs.settled(&sim) {
                sim.stop(why);
                break;
            }
        }
        runs.feed(&sim.report());
    }
    Err(ScenarioError {
        problems: vec![format!("the search did not end within {MAX_RUNS} runs")],
    })
}
