//! Background work made of many simulations (a plan, a latency–throughput curve,
//! a headroom search), run in slices of at most [`SLICE_MS`] per animation frame
//! so the page stays responsive; each simulation itself is sliced too.

use leptos::prelude::*;
use sim_core::plan::{self, PlanSlo, Runs, Search, Space};
use sim_core::sweep::{self, Curve};
use sim_core::{Report, Scenario, Simulation};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// Longest one slice may block the page, ms: the run on screen and the
/// background work each take one slice a frame, so two slices and the
/// frame's rendering stay under the 50 ms of a long task.
pub const SLICE_MS: f64 = 8.0;
/// The range runs' slice, ms: the "How sure" panel follows a drag within
/// 500 ms while the capacity measurement runs beside it (three slices and
/// the frame's rendering stay under the 50 ms of a long task).
pub const RANGE_SLICE_MS: f64 = 14.0;
/// Events between clock checks inside a slice: the planner's early-verdict
/// cadence (`sim_core::plan::EARLY_CHECK_EVENTS`), so sliced planning runs
/// stop where the workers' do.
pub const EVENTS_PER_CHECK: u64 = sim_core::plan::EARLY_CHECK_EVENTS;
/// Events between clock checks in the run on screen, which has no early
/// verdict to keep in step with: a finer check keeps its slices near
/// [`SLICE_MS`] on heavy events.
pub const RUN_EVENTS_PER_CHECK: u64 = 500;
/// Most events one slice processes, whatever the clock says: work per slice is
/// bounded by construction (tested), its duration measured by the benchmark.
pub const MAX_SLICE_EVENTS: u64 = 40_000;

/// How a piece of background work was sliced, shown on the page for tests.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SliceStats {
    /// Slices so far.
    pub slices: u64,
    /// Most events one slice processed.
    pub max_events: u64,
}

impl SliceStats {
    /// Count a slice of `events` events.
    pub fn add(&mut self, events: u64) {
        self.slices += 1;
        self.max_events = self.max_events.max(events);
    }
}

/// Milliseconds from the page's clock (wall time only decides slice ends; it
/// never touches results).
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or_else(js_sys::Date::now, |p| p.now())
}

thread_local! {
    /// Slicing of all background jobs since the page loaded (shown for tests).
    pub static SLICES: RefCell<SliceStats> = RefCell::new(SliceStats::default());
}

/// The planner's searches, one after another, in passes (see
/// `sim_core::plan::budget`): each later pass reopens the groups still
/// unsettled and runs them again.
pub struct PlanJobs {
    searches: Vec<Search>,
    done: Vec<Search>,
    total: usize,
    space: Space,
    /// Passes made so far.
    passes: usize,
}

impl PlanJobs {
    /// Every search of the plan for `base`.
    pub fn new(base: &Scenario, slo: PlanSlo, space: Space) -> Self {
        let mut searches = plan::searches(base, slo, &space);
        searches.reverse();
        let total = searches.len();
        PlanJobs {
            searches,
            done: Vec::new(),
            total,
            space,
            passes: 1,
        }
    }

    /// Start the next pass, if there is one: the finished searches, in their
    /// order, grouped as `plan::groups` groups them, reopened where still
    /// unsettled and queued again (finished ones pass straight through).
    fn reopen(&mut self) -> bool {
        if self.passes >= plan::budget::PASSES {
            return false;
        }
        self.passes += 1;
        let mut groups = plan::groups(std::mem::take(&mut self.done));
        let again = plan::reopen_groups(&mut groups, self.space.budget_events);
        let mut all: Vec<Search> = groups.into_iter().flatten().collect();
        if again.is_empty() {
            self.done = all;
            self.passes = plan::budget::PASSES;
            return false;
        }
        all.reverse();
        self.searches = all;
        true
    }

    /// The finished plan.
    pub fn plan(&mut self) -> plan::Plan {
        let done = std::mem::take(&mut self.done);
        plan::assemble(done.into_iter().map(Search::finish).collect(), &self.space)
    }
}

impl Runs for PlanJobs {
    fn next(&mut self) -> Option<Scenario> {
        loop {
            let Some(current) = self.searches.last_mut() else {
                if !self.reopen() {
                    return None;
                }
                continue;
            };
            current.starve_if_broke();
            if let Some(s) = current.next() {
                return Some(s);
            }
            if let Some(mut finished) = self.searches.pop() {
                // Larger batch sizes that would run identically are not run;
                // the rest of its work budget goes to its group's next search.
                finished.skip_identical(&mut self.searches);
                finished.hand_on(&mut self.searches);
                self.done.push(finished);
            }
        }
    }
    fn feed(&mut self, report: &Report) {
        if let Some(s) = self.searches.last_mut() {
            s.feed(report);
        }
    }
    fn progress(&self) -> f64 {
        self.done.len() as f64 / self.total.max(1) as f64
    }
    fn settled(&self, sim: &Simulation) -> Option<String> {
        self.searches.last()?.settled(sim)
    }
    fn begin(&self, sim: &mut Simulation) {
        if let Some(s) = self.searches.last() {
            s.begin(sim);
        }
    }
}

/// Every batching policy at every rate.
pub struct CurveJobs {
    points: Vec<(String, f64, sim_core::ValidScenario)>,
    reports: Vec<Report>,
}

impl CurveJobs {
    /// The curve's scenarios, or why they cannot be built.
    pub fn new(base: &Scenario, rates: &[f64]) -> Result<Self, String> {
        Ok(CurveJobs {
            points: sweep::curve_points(base, rates).map_err(|e| e.to_string())?,
            reports: Vec::new(),
        })
    }

    /// The finished curves.
    pub fn curves(&self) -> Vec<Curve> {
        sweep::curves(&self.points, &self.reports)
    }
}

impl Runs for CurveJobs {
    fn next(&mut self) -> Option<Scenario> {
        self.points
            .get(self.reports.len())
            .map(|p| p.2.clone().into_inner())
    }
    fn feed(&mut self, report: &Report) {
        self.reports.push(report.clone());
    }
    fn progress(&self) -> f64 {
        self.reports.len() as f64 / self.points.len().max(1) as f64
    }
}

/// The saturation run behind the cost curves.
pub struct CostJobs {
    scenario: Scenario,
    sent: bool,
    capacity: Option<f64>,
}

impl CostJobs {
    /// Measure one replica's capacity for `scenario`.
    pub fn new(scenario: &Scenario) -> Self {
        CostJobs {
            scenario: scenario.clone(),
            sent: false,
            capacity: None,
        }
    }

    /// The scenario measured.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// Tasks/s one saturated replica sustained, once run.
    pub fn capacity(&self) -> Option<f64> {
        self.capacity
    }
}

impl Runs for CostJobs {
    fn next(&mut self) -> Option<Scenario> {
        if self.sent {
            return None;
        }
        self.sent = true;
        Some(sim_core::compare::capacity_scenario(&self.scenario))
    }
    fn feed(&mut self, report: &Report) {
        self.capacity = Some(sim_core::compare::capacity_from(&self.scenario, report));
    }
    fn progress(&self) -> f64 {
        if self.capacity.is_some() { 1.0 } else { 0.0 }
    }
}

/// One simulation, in slices (a link's pinned scenario A).
pub struct OneRun {
    scenario: Option<Scenario>,
    result: Option<(Scenario, Report)>,
}

impl OneRun {
    /// Run `scenario` once.
    pub fn new(scenario: Scenario) -> Self {
        OneRun {
            scenario: Some(scenario),
            result: None,
        }
    }

    /// The scenario and its report, once run.
    pub fn into_result(self) -> Option<(Scenario, Report)> {
        self.result
    }
}

impl Runs for OneRun {
    fn next(&mut self) -> Option<Scenario> {
        if self.result.is_some() {
            return None;
        }
        self.scenario.clone()
    }
    fn feed(&mut self, report: &Report) {
        if let Some(s) = self.scenario.take() {
            self.result = Some((s, report.clone()));
        }
    }
    fn progress(&self) -> f64 {
        if self.result.is_some() { 1.0 } else { 0.5 }
    }
}

/// Stops background work: a job started with it stops before its next
/// slice once [`Stop::stop`] is called, and never calls its `done`. A job
/// that starts another when it finishes hands its `Stop` on, so one call
/// stops the whole chain, however quickly any link of it finished.
#[derive(Clone, Debug, Default)]
pub struct Stop(Rc<Cell<bool>>);

impl Stop {
    /// Stop every job started with this handle (or a clone of it).
    pub fn stop(&self) {
        self.0.set(true);
    }

    /// Whether [`Stop::stop`] was called.
    pub fn stopped(&self) -> bool {
        self.0.get()
    }
}

/// The one piece of background work a view keeps at a time: starting the
/// next stops the one before.
#[derive(Clone, Debug, Default)]
pub struct Slot(Rc<RefCell<Stop>>);

impl Slot {
    /// Stop the work in the slot and give the handle of the work that
    /// replaces it.
    pub fn renew(&self) -> Stop {
        let fresh = Stop::default();
        self.0.replace(fresh.clone()).stop();
        fresh
    }

    /// Stop the work in the slot.
    pub fn stop(&self) {
        self.0.borrow().stop();
    }
}

/// Run `jobs` in slices until done or `stop` is stopped; `progress` follows
/// along, `done` is called at the end (never after a stop).
pub fn run<J: Runs + 'static>(
    jobs: J,
    progress: RwSignal<Option<f64>>,
    stop: &Stop,
    done: impl FnOnce(J) + 'static,
) {
    run_sliced(jobs, SLICE_MS, progress, stop, done)
}

/// [`run`] in slices of at most `slice_ms` a frame.
pub fn run_sliced<J: Runs + 'static>(
    jobs: J,
    slice_ms: f64,
    progress: RwSignal<Option<f64>>,
    stop: &Stop,
    done: impl FnOnce(J) + 'static,
) {
    let state = Rc::new(RefCell::new((jobs, None::<Simulation>)));
    progress.set(Some(0.0));
    step(state, slice_ms, progress, Box::new(done), stop.clone());
}

type Done<J> = Box<dyn FnOnce(J)>;

fn step<J: Runs + 'static>(
    state: Rc<RefCell<(J, Option<Simulation>)>>,
    slice_ms: f64,
    progress: RwSignal<Option<f64>>,
    done: Done<J>,
    stop: Stop,
) {
    if stop.stopped() {
        progress.set(None);
        return;
    }
    let t0 = now_ms();
    let mut events = 0;
    let finished = {
        let mut guard = state.borrow_mut();
        let (jobs, sim) = &mut *guard;
        loop {
            if sim.is_none() {
                match jobs.next() {
                    None => break true,
                    Some(s) => match s.validate() {
                        Ok(valid) => {
                            let mut fresh = Simulation::new(&valid);
                            jobs.begin(&mut fresh);
                            *sim = Some(fresh);
                        }
                        Err(e) => {
                            leptos::logging::warn!("skipping an invalid scenario: {e}");
                            break true;
                        }
                    },
                }
            }
            if let Some(s) = sim.as_mut() {
                let before = s.events();
                let mut done = s.advance_events(EVENTS_PER_CHECK.min(MAX_SLICE_EVENTS - events));
                events += s.events() - before;
                if !done && let Some(why) = jobs.settled(s) {
                    s.stop(why);
                    done = true;
                }
                if done {
                    let report = s.report();
                    *sim = None;
                    jobs.feed(&report);
                }
            }
            if now_ms() - t0 > slice_ms || events >= MAX_SLICE_EVENTS {
                break false;
            }
        }
    };
    if finished {
        progress.set(None);
        if let Ok(cell) = Rc::try_unwrap(state) {
            done(cell.into_inner().0);
        }
        return;
    }
    SLICES.with(|s| s.borrow_mut().add(events));
    progress.set(Some(state.borrow().0.progress()));
    request_animation_frame(move || step(state, slice_ms, progress, done, stop));
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::plan::EARLY_CHECK_EVENTS;

    #[test]
    fn renewing_a_slot_stops_the_chain_started_before() {
        let slot = Slot::default();
        let first = slot.renew();
        // A job that finished at once handed its stop to the one it started.
        let chained = first.clone();
        assert!(!chained.stopped());
        let second = slot.renew();
        assert!(first.stopped() && chained.stopped(), "the old chain stops");
        assert!(!second.stopped(), "the new work runs");
        slot.stop();
        assert!(second.stopped());
        assert!(!slot.renew().stopped(), "a stopped slot starts afresh");
    }

    /// Drive `jobs` as the page's slices do: each scenario in chunks of
    /// `EARLY_CHECK_EVENTS`, stopped once its verdict is settled.
    fn drive(jobs: &mut PlanJobs) {
        while let Some(s) = jobs.next() {
            let s = s.validate().expect("a planning scenario is valid");
            let mut sim = Simulation::new(&s);
            jobs.begin(&mut sim);
            loop {
                if sim.advance_events(EARLY_CHECK_EVENTS) {
                    break;
                }
                if let Some(why) = jobs.settled(&sim) {
                    sim.stop(why);
                    break;
                }
            }
            jobs.feed(&sim.report());
        }
    }

    #[test]
    fn the_plan_in_slices_with_its_later_passes_equals_the_plan_in_one_place() {
        for budget_events in [1_500_000, 12_000_000, sim_core::plan::budget::PLAN_EVENTS] {
            let (base, slo, space) = crate::plan::worker::passes_question(budget_events);
            let mut jobs = PlanJobs::new(&base, slo, space.clone());
            drive(&mut jobs);
            assert_eq!(
                jobs.plan(),
                plan::plan(&base, slo, &space),
                "budget {budget_events}"
            );
        }
    }
}
