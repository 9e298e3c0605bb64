//! Runs the simulation in slices on animation frames, so the tab never blocks
//! for long: each frame advances the run for at most [`SLICE_MS`] and reports
//! progress; a newer scenario cancels the run in progress.
//!
//! A heavy run (more than [`PREVIEW_ABOVE`] simulated events, as
//! `sim_core::plan::budget::run_events` estimates it) first runs a preview:
//! the same scenario over its first seconds, sized to [`PREVIEW_EVENTS`],
//! shown at once and labelled as a preview, then the full run. While a
//! slider is dragged each new value supersedes the last, so the page follows
//! the drag with previews, and the full run finishes after it.

use leptos::prelude::*;
use sim_core::{Report, Scenario, Simulation};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::jobs::{MAX_SLICE_EVENTS, RUN_EVENTS_PER_CHECK, SLICE_MS, SliceStats, now_ms};

/// What the page shows about the run in progress.
#[derive(Clone, Debug, PartialEq)]
pub enum RunState {
    /// Running: fraction of the arrival window simulated so far.
    Running(f64),
    /// Finished, with how long the whole run took in the browser (ms).
    Done(f64),
}

/// The slice runner; clone freely (it is a handle).
#[derive(Clone)]
pub struct Runner {
    generation: Rc<Cell<u64>>,
    pending: Rc<RefCell<Option<Scenario>>>,
    frame_requested: Rc<Cell<bool>>,
    /// The latest finished report.
    pub report: RwSignal<Option<Report>>,
    /// The scenario whose run `report` is (the preview's full scenario for
    /// a preview), so a view can tell a report that is still the last one's.
    pub ran: RwSignal<Option<Scenario>>,
    /// Progress of the run in progress.
    pub state: RwSignal<RunState>,
    /// How the latest run was sliced.
    pub slices: RwSignal<SliceStats>,
    /// When the report shown is a preview: its simulated seconds and the
    /// full run's.
    pub preview: RwSignal<Option<(f64, f64)>>,
}

/// Largest run (estimated simulated events) that runs without a preview
/// first: a fraction of a second in the browser.
pub const PREVIEW_ABOVE: f64 = 500_000.0;

/// Size of a preview, estimated simulated events: a few frames' slices.
pub const PREVIEW_EVENTS: f64 = 100_000.0;

/// The preview of `scenario` if its run is heavy (more than
/// [`PREVIEW_ABOVE`] events): the same scenario over
/// its first seconds, about [`PREVIEW_EVENTS`] events' worth (at least one
/// simulated second).
pub fn preview_of(scenario: &Scenario) -> Option<Scenario> {
    let est = sim_core::plan::budget::run_events(scenario);
    if est.is_nan() || est <= PREVIEW_ABOVE {
        return None;
    }
    let seconds = (scenario.duration_s * PREVIEW_EVENTS / est)
        .floor()
        .max(1.0);
    if seconds >= scenario.duration_s {
        return None;
    }
    let mut s = scenario.clone();
    s.duration_s = seconds;
    Some(s)
}

impl Default for Runner {
    fn default() -> Self {
        Self::new()
    }
}

impl Runner {
    /// A runner with nothing run yet.
    pub fn new() -> Self {
        Runner {
            generation: Rc::new(Cell::new(0)),
            pending: Rc::new(RefCell::new(None)),
            frame_requested: Rc::new(Cell::new(false)),
            report: RwSignal::new(None),
            ran: RwSignal::new(None),
            state: RwSignal::new(RunState::Running(0.0)),
            slices: RwSignal::new(SliceStats::default()),
            preview: RwSignal::new(None),
        }
    }

    /// Run `scenario` (already validated), replacing any run in progress. Calls
    /// made within one animation frame coalesce: only the last one runs.
    pub fn submit(&self, scenario: Scenario) {
        *self.pending.borrow_mut() = Some(scenario);
        if self.frame_requested.replace(true) {
            return;
        }
        let this = self.clone();
        request_animation_frame(move || {
            this.frame_requested.set(false);
            if let Some(s) = this.pending.borrow_mut().take() {
                this.start(s);
            }
        });
    }

    fn start(&self, scenario: Scenario) {
        let generation = self.generation.get() + 1;
        self.generation.set(generation);
        let of = scenario.clone();
        match scenario.validate() {
            Ok(full) => {
                self.state.set(RunState::Running(0.0));
                self.slices.set(SliceStats::default());
                let started = now_ms();
                // A heavy run shows its preview first, then runs in full.
                let (first, then) = match preview_of(&full).map(|p| p.validate()) {
                    Some(Ok(p)) => (p, Some(full)),
                    _ => (full, None),
                };
                let horizon = ((first.duration_s * 1e9) as u64).max(1);
                let sim = Rc::new(RefCell::new(Simulation::new(&first)));
                self.slice(sim, generation, horizon, started, (then, of));
            }
            Err(e) => leptos::logging::warn!("scenario refused: {e}"),
        }
    }

    fn slice(
        &self,
        sim: Rc<RefCell<Simulation>>,
        generation: u64,
        horizon: u64,
        started: f64,
        (then, of): (Option<sim_core::ValidScenario>, Scenario),
    ) {
        if self.generation.get() != generation {
            return; // superseded
        }
        let t0 = now_ms();
        let (done, events) = {
            let mut s = sim.borrow_mut();
            let start = s.events();
            loop {
                let left = MAX_SLICE_EVENTS - (s.events() - start);
                if s.advance_events(RUN_EVENTS_PER_CHECK.min(left)) {
                    break (true, s.events() - start);
                }
                let events = s.events() - start;
                if now_ms() - t0 > SLICE_MS || events >= MAX_SLICE_EVENTS {
                    break (false, events);
                }
            }
        };
        self.slices.update(|st| st.add(events));
        if done {
            let report = sim.borrow().report();
            match then {
                Some(full) => {
                    // The preview is in: show it, say so, and run in full.
                    self.preview
                        .set(Some((horizon as f64 / 1e9, full.duration_s)));
                    self.report.set(Some(report));
                    self.ran.set(Some(of.clone()));
                    let horizon = ((full.duration_s * 1e9) as u64).max(1);
                    let sim = Rc::new(RefCell::new(Simulation::new(&full)));
                    let this = self.clone();
                    request_animation_frame(move || {
                        this.slice(sim, generation, horizon, started, (None, of))
                    });
                }
                None => {
                    self.preview.set(None);
                    self.report.set(Some(report));
                    self.ran.set(Some(of));
                    self.state.set(RunState::Done(now_ms() - started));
                }
            }
            return;
        }
        let progress = (sim.borrow().now_ns() as f64 / horizon as f64).min(0.99);
        self.state.set(RunState::Running(progress));
        let this = self.clone();
        request_animation_frame(move || this.slice(sim, generation, horizon, started, (then, of)));
    }
}
