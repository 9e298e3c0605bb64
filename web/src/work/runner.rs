//! Runs the simulation in slices of at most [`SLICE_MS`], each a task of its
//! own ([`crate::work::soon`]), so the tab never blocks for long and input and
//! frames get through between slices; a newer scenario supersedes the run in
//! progress.
//!
//! The page follows a dragged slider: a run expected to take more than a
//! few stages of [`STAGE_MS`] first runs a preview — the same scenario over
//! its first seconds, a stage's worth of events at the speed this page has
//! measured — shown at once and labelled as a preview, then the full run. A
//! preview, or a run short enough to need none, is not superseded while it
//! is within twice its expected time: a newer scenario waits for it and
//! starts the moment it is shown, so every move of a drag is followed by
//! new numbers a stage later, never starved by the next move. Full runs are
//! deterministic; only the length of a preview depends on the machine.
//!
//! Once the page's run worker is up ([`crate::work::remote`]), a run with a
//! preview expected to take over [`WORKER_MIN_MS`] sends its full run there
//! the moment it starts: the worker
//! computes it on a core of its own while the page runs the preview, and its
//! report (the same report, read back from JSON) replaces the preview's.

use leptos::prelude::*;
use sim_core::{Report, Scenario, Simulation, ValidScenario};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::plan::worker::Reply;
use crate::work::jobs::{MAX_SLICE_EVENTS, RUN_EVENTS_PER_CHECK, SLICE_MS, SliceStats, now_ms};
use crate::work::remote::RunWorker;
use crate::work::soon::soon;

/// What the page shows about the run in progress.
#[derive(Clone, Debug, PartialEq)]
pub enum RunState {
    /// Running (how far: [`Runner::progress`]).
    Running,
    /// Finished, with how long the whole run took in the browser (ms).
    Done(f64),
}

/// Time one stage (a preview) should take from its start to its numbers,
/// ms: a few slices and the frames between them, so a drag's numbers
/// follow within about 100 ms.
pub const STAGE_MS: f64 = 40.0;

/// A run expected to take up to this many stages runs without a preview;
/// during a drag (scenarios less than [`DRAG_GAP_MS`] apart), two.
const STAGES_WITHOUT_PREVIEW: f64 = 4.0;

/// A scenario submitted within this long of the one before belongs to the
/// same drag (or held key), ms, even when the run between them finished.
const DRAG_GAP_MS: f64 = 300.0;

/// A full run expected to take at least this long on the page goes to the
/// run worker, ms; a shorter one is run here after its preview. On two
/// cores a worker computing beside the page slows the page's own tasks
/// (the browser's other processes share the second core), which a short
/// run does not repay: light presets' drags stay as they were.
const WORKER_MIN_MS: f64 = 300.0;

/// How often the progress bar moves, ms.
const PROGRESS_MS: f64 = 100.0;

/// Estimated events (`sim_core::plan::budget::run_events`) per ms of a
/// stage's time, assumed until this page has measured its own.
const FIRST_SPEED: f64 = 1_000.0;

thread_local! {
    /// Scenarios submitted since the page loaded, and the number of the one
    /// whose numbers are on screen (for the browser benchmark).
    static SEQ: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// How many scenarios have been submitted to the runner so far.
pub fn submitted() -> u64 {
    SEQ.with(|s| s.get().0)
}

/// The number (in submission order) of the scenario whose run, or preview,
/// is on screen.
pub fn shown() -> u64 {
    SEQ.with(|s| s.get().1)
}

/// The slice runner; clone freely (it is a handle).
#[derive(Clone)]
pub struct Runner {
    generation: Rc<Cell<u64>>,
    pending: Rc<RefCell<Option<(u64, Scenario)>>>,
    /// Page clock (ms) until which the stage in progress finishes before a
    /// newer scenario starts (0 when it may be superseded at once).
    protected_until: Rc<Cell<f64>>,
    /// Estimated events per ms of a stage's time, as measured on this page.
    speed: Rc<Cell<f64>>,
    /// Whether the latest scenario came while a run was in progress or
    /// within [`DRAG_GAP_MS`] of the one before (a drag): its run previews
    /// anything longer than one stage.
    dragging: Rc<Cell<bool>>,
    /// When the latest scenario was submitted (page clock, ms).
    submitted_at: Rc<Cell<f64>>,
    /// The latest finished report.
    pub report: RwSignal<Option<Report>>,
    /// The scenario whose run `report` is (the preview's full scenario for
    /// a preview), so a view can tell a report that is still the last one's.
    pub ran: RwSignal<Option<Scenario>>,
    /// Whether a run is in progress.
    pub state: RwSignal<RunState>,
    /// Fraction of the arrival window the run in progress has simulated.
    pub progress: RwSignal<f64>,
    /// How the latest run was sliced.
    pub slices: RwSignal<SliceStats>,
    /// When the report shown is a preview: its simulated seconds and the
    /// full run's.
    pub preview: RwSignal<Option<(f64, f64)>>,
    /// Whether the report shown was computed in the run worker.
    pub in_worker: RwSignal<bool>,
    /// The run worker, once started.
    worker: Rc<RefCell<Option<RunWorker>>>,
    /// The full run the worker computes for the page, if any.
    awaiting: Rc<RefCell<Option<Awaiting>>>,
}

/// A full run sent to the run worker, its preview running on the page.
struct Awaiting {
    /// Its scenario's number in submission order (the worker's run id).
    seq: u64,
    /// The runner's generation its preview runs in (None while the
    /// scenario waits for the stage in progress: its full run was sent
    /// ahead).
    generation: Option<u64>,
    of: Scenario,
    /// When its preview started (page clock, ms).
    started: f64,
    /// Whether its preview's numbers are on screen.
    preview_shown: bool,
    /// Its report, when it came before the preview's.
    report: Option<Report>,
    /// When the progress bar last moved (page clock, ms).
    progress_at: f64,
}

/// The preview of `scenario` if its run is expected to take more than
/// `stages` stages (`est` events against `stage_events` a stage): the same
/// scenario over its first seconds, about `stage_events` events' worth (at
/// least one simulated second).
pub fn preview_of(
    scenario: &Scenario,
    est: f64,
    stage_events: f64,
    stages: f64,
) -> Option<Scenario> {
    if est.is_nan() || est <= stages * stage_events {
        return None;
    }
    let seconds = (scenario.duration_s * stage_events / est).floor().max(1.0);
    if seconds >= scenario.duration_s {
        return None;
    }
    let mut s = scenario.clone();
    s.duration_s = seconds;
    Some(s)
}

/// One run in progress: its simulation, where it ends, and what follows it.
struct Stage {
    sim: Simulation,
    generation: u64,
    seq: u64,
    horizon: u64,
    started: f64,
    /// The full run, when this stage is its preview (and the page runs it).
    then: Option<ValidScenario>,
    /// The full run's simulated seconds, when this stage is a preview.
    full_s: Option<f64>,
    /// Events the stage was estimated to take, and when it began (page
    /// clock, ms).
    est: f64,
    began: f64,
    /// The full run's estimate.
    full_est: f64,
    /// When the progress bar last moved (page clock, ms).
    progress_at: f64,
    of: Scenario,
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
            protected_until: Rc::new(Cell::new(0.0)),
            speed: Rc::new(Cell::new(FIRST_SPEED)),
            dragging: Rc::new(Cell::new(false)),
            submitted_at: Rc::new(Cell::new(f64::NEG_INFINITY)),
            report: RwSignal::new(None),
            ran: RwSignal::new(None),
            state: RwSignal::new(RunState::Running),
            progress: RwSignal::new(0.0),
            slices: RwSignal::new(SliceStats::default()),
            preview: RwSignal::new(None),
            in_worker: RwSignal::new(false),
            worker: Rc::new(RefCell::new(None)),
            awaiting: Rc::new(RefCell::new(None)),
        }
    }

    /// Start the run worker (once): long runs' full simulations go to it
    /// when it is up. Without workers the page runs them in slices.
    pub fn warm_worker(&self) {
        if self.worker.borrow().is_some() {
            return;
        }
        let this = self.clone();
        let worker = RunWorker::spawn(move |reply| this.on_worker(reply));
        *self.worker.borrow_mut() = worker;
    }

    /// Send scenario `seq`, `of`, to the run worker if `want` and it is up
    /// (its preview running in `generation`, if started); else drop whatever
    /// the worker was computing for the page. A scenario sent ahead, while
    /// it waited, is not sent again.
    fn send_to_worker(&self, want: bool, generation: Option<u64>, seq: u64, of: &Scenario) -> bool {
        if want && let Some(a) = self.awaiting.borrow_mut().as_mut().filter(|a| a.seq == seq) {
            a.generation = generation;
            return true;
        }
        let sent = want
            && self
                .worker
                .borrow()
                .as_ref()
                .filter(|w| w.ready())
                .is_some_and(|w| w.run(seq, of));
        let was = self.awaiting.replace(sent.then(|| Awaiting {
            generation,
            seq,
            of: of.clone(),
            started: now_ms(),
            preview_shown: false,
            report: None,
            progress_at: now_ms(),
        }));
        if !sent
            && was.is_some()
            && let Some(w) = self.worker.borrow().as_ref()
        {
            w.stop();
        }
        sent
    }

    /// A reply from the run worker.
    fn on_worker(&self, reply: Reply) {
        let mut awaiting = self.awaiting.borrow_mut();
        match reply {
            Reply::Ran { id, report } => {
                let Some(a) = awaiting.as_mut().filter(|a| a.seq == id) else {
                    return;
                };
                if a.preview_shown {
                    let a = awaiting.take();
                    drop(awaiting);
                    // On screen in a task of its own, after the one that
                    // read the report.
                    if let Some(a) = a {
                        let this = self.clone();
                        soon(move || this.show_from_worker(a, *report));
                    }
                } else {
                    a.report = Some(*report);
                }
            }
            Reply::RunProgress { id, fraction } => {
                if let Some(a) = awaiting.as_mut().filter(|a| a.seq == id && a.preview_shown)
                    && now_ms() - a.progress_at >= PROGRESS_MS
                {
                    a.progress_at = now_ms();
                    self.progress.set(fraction);
                }
            }
            Reply::RunFailed { why, .. } | Reply::Failed(why) => {
                leptos::logging::warn!("the run worker failed: {why}");
                // The run it held runs here instead, from its start, and
                // the worker is retired (kept, so it is not started again).
                let a = awaiting.take();
                drop(awaiting);
                if let Some(w) = self.worker.borrow().as_ref() {
                    w.retire();
                }
                if let Some(a) = a {
                    self.submit(a.of);
                }
            }
            Reply::Ready | Reply::Done { .. } => {}
        }
    }

    /// The preview of run `generation` is on screen: show its full run's
    /// report if the worker has sent it, else say it is awaited. False if no
    /// full run of this generation is in the worker.
    fn preview_shown(&self, generation: u64) -> bool {
        let mut awaiting = self.awaiting.borrow_mut();
        let Some(a) = awaiting
            .as_mut()
            .filter(|a| a.generation == Some(generation))
        else {
            return false;
        };
        a.preview_shown = true;
        if a.report.is_some()
            && let Some(mut a) = awaiting.take()
            && let Some(report) = a.report.take()
        {
            drop(awaiting);
            let this = self.clone();
            soon(move || this.show_from_worker(a, report));
        }
        true
    }

    /// The worker's full run is in: its numbers on screen, unless a newer
    /// scenario started since.
    fn show_from_worker(&self, a: Awaiting, report: Report) {
        if a.generation != Some(self.generation.get()) {
            return;
        }
        SEQ.with(|s| s.set((s.get().0, a.seq)));
        self.report.set(Some(report));
        self.ran.set(Some(a.of));
        self.protected_until.set(0.0);
        self.preview.set(None);
        self.in_worker.set(true);
        if self.pending.borrow().is_some() {
            self.start_pending();
            return;
        }
        self.state.set(RunState::Done(now_ms() - a.started));
    }

    /// Run `scenario` (already validated), replacing any run in progress
    /// once its stage allows. Calls made within one task coalesce: only the
    /// last one runs.
    pub fn submit(&self, scenario: Scenario) {
        let seq = SEQ.with(|s| {
            let (n, shown) = s.get();
            s.set((n + 1, shown));
            n + 1
        });
        *self.pending.borrow_mut() = Some((seq, scenario));
        let now = now_ms();
        self.dragging.set(
            matches!(self.state.get_untracked(), RunState::Running)
                || now - self.submitted_at.get() < DRAG_GAP_MS,
        );
        self.submitted_at.set(now);
        if now < self.protected_until.get() {
            // The stage in progress starts it when it is shown; a full run
            // for the worker starts now.
            self.send_ahead(seq);
            return;
        }
        self.start_pending();
    }

    /// While scenario `seq` waits for the stage in progress, send its full
    /// run to the worker if it will have a preview (as `start` decides).
    fn send_ahead(&self, seq: u64) {
        let of = match self.pending.borrow().as_ref() {
            Some((s, of)) if *s == seq => of.clone(),
            _ => return,
        };
        let Ok(full) = of.clone().validate() else {
            return;
        };
        let est = sim_core::plan::budget::run_events(&full);
        let previewed =
            preview_of(&full, est, self.speed.get() * STAGE_MS, self.stages()).is_some();
        self.send_to_worker(previewed && self.worth_a_worker(est), None, seq, &of);
    }

    /// Whether a full run of `est` events is long enough for the run worker.
    fn worth_a_worker(&self, est: f64) -> bool {
        est / self.speed.get() >= WORKER_MIN_MS
    }

    /// Stages a run may take without a preview: fewer during a drag.
    fn stages(&self) -> f64 {
        if self.dragging.get() {
            2.0
        } else {
            STAGES_WITHOUT_PREVIEW
        }
    }

    /// Start the waiting scenario now, in this task.
    fn start_pending(&self) {
        let next = self.pending.borrow_mut().take();
        if let Some((seq, s)) = next {
            self.start(seq, s);
        }
    }

    fn start(&self, seq: u64, scenario: Scenario) {
        let generation = self.generation.get() + 1;
        self.generation.set(generation);
        self.protected_until.set(0.0);
        let of = scenario.clone();
        match scenario.validate() {
            Ok(full) => {
                self.state.set(RunState::Running);
                self.progress.set(0.0);
                self.slices.set(SliceStats::default());
                let speed = self.speed.get();
                let stage_events = speed * STAGE_MS;
                let est = sim_core::plan::budget::run_events(&full);
                let stages = self.stages();
                // A long run shows its preview first, then runs in full.
                let (first, mut then, first_est) =
                    match preview_of(&full, est, stage_events, stages).map(|p| p.validate()) {
                        Some(Ok(p)) => {
                            // The full run's estimate, spread evenly over
                            // its simulated time (the same measure the
                            // page's speed is learnt in).
                            let e = est * p.duration_s / full.duration_s;
                            (p, Some(full), e)
                        }
                        _ => (full, None, est),
                    };
                let full_s = then.as_ref().map(|f| f.duration_s);
                // The full run to the worker, if it is up, at once.
                let to_worker = self.send_to_worker(
                    then.is_some() && self.worth_a_worker(est),
                    Some(generation),
                    seq,
                    &of,
                );
                if to_worker {
                    then = None;
                }
                if first_est <= stages * stage_events {
                    self.protected_until
                        .set(now_ms() + 2.0 * (first_est / speed).max(STAGE_MS));
                }
                let stage = Stage {
                    horizon: ((first.duration_s * 1e9) as u64).max(1),
                    sim: Simulation::new(&first),
                    generation,
                    seq,
                    started: now_ms(),
                    then,
                    full_s,
                    est: first_est,
                    full_est: est,
                    began: now_ms(),
                    progress_at: now_ms(),
                    of,
                };
                // Slices in tasks of their own, never in the task that
                // changed the scenario or showed the last numbers.
                let this = self.clone();
                soon(move || this.slice(stage));
            }
            Err(e) => leptos::logging::warn!("scenario refused: {e}"),
        }
    }

    /// Whether the stage in progress gives way to a newer scenario now.
    fn superseded(&self, stage: &Stage) -> bool {
        self.generation.get() != stage.generation
            || (self.pending.borrow().is_some() && now_ms() >= self.protected_until.get())
    }

    /// Learn the page's speed from a stage, finished or given up: the
    /// estimated events of the share of its simulated time it covered, per
    /// ms since it began (its slices and whatever ran between them).
    fn measure(&self, stage: &Stage, done: bool) {
        let took = now_ms() - stage.began;
        let covered = if done {
            1.0
        } else {
            (stage.sim.now_ns() as f64 / stage.horizon as f64).min(1.0)
        };
        if took >= 4.0 && covered > 0.0 {
            // Down at once, up by at most a quarter a stage: a preview that
            // ends before a scenario's busy part must not make the next one
            // reach far into it.
            let measured = stage.est * covered / took;
            self.speed.set(measured.min(1.25 * self.speed.get()));
        }
    }

    fn slice(&self, mut stage: Stage) {
        if self.superseded(&stage) {
            self.measure(&stage, false);
            if self.generation.get() == stage.generation {
                self.start_pending();
            }
            return;
        }
        let t0 = now_ms();
        let start = stage.sim.events();
        let done = loop {
            let left = MAX_SLICE_EVENTS - (stage.sim.events() - start);
            if stage.sim.advance_events(RUN_EVENTS_PER_CHECK.min(left)) {
                break true;
            }
            if now_ms() - t0 > SLICE_MS || stage.sim.events() - start >= MAX_SLICE_EVENTS {
                break false;
            }
        };
        let events = stage.sim.events() - start;
        self.slices.update(|st| st.add(events));
        if !done {
            let progress = (stage.sim.now_ns() as f64 / stage.horizon as f64).min(0.99);
            // The bar moves at most every PROGRESS_MS: each move re-renders it.
            if now_ms() - stage.progress_at >= PROGRESS_MS {
                stage.progress_at = now_ms();
                self.progress.set(progress);
            }
            let this = self.clone();
            soon(move || this.slice(stage));
            return;
        }
        self.measure(&stage, true);
        let report = stage.sim.report();
        let (seq, then) = (stage.seq, stage.then.take());
        // Numbers on screen in a task of their own, after this slice.
        let this = self.clone();
        soon(move || {
            if this.generation.get() != stage.generation {
                return;
            }
            SEQ.with(|s| s.set((s.get().0, seq)));
            this.report.set(Some(report));
            this.ran.set(Some(stage.of.clone()));
            this.protected_until.set(0.0);
            // A preview's numbers say so until the full run's replace them.
            this.preview
                .set(stage.full_s.map(|full| (stage.horizon as f64 / 1e9, full)));
            this.in_worker.set(false);
            if this.pending.borrow().is_some() {
                // A newer scenario waited for these numbers: it runs next.
                this.start_pending();
                return;
            }
            match then {
                Some(full) => {
                    // The preview is in: run in full.
                    let next = Stage {
                        horizon: ((full.duration_s * 1e9) as u64).max(1),
                        sim: Simulation::new(&full),
                        then: None,
                        full_s: None,
                        est: stage.full_est,
                        began: now_ms(),
                        progress_at: now_ms(),
                        ..stage
                    };
                    soon(move || this.slice(next));
                }
                // The full run is the worker's: its report follows.
                None if this.preview_shown(stage.generation) => {}
                None => this.state.set(RunState::Done(now_ms() - stage.started)),
            }
        });
    }
}
