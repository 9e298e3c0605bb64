//! The planner's workers on the page: one Web Worker per core (at most four),
//! started one after another once the page is up (so their simulator is
//! compiled before anyone asks for a plan) and kept. A plan is told to every
//! worker, then its groups are handed out one at a time to whichever worker
//! is free; results are assembled in group order, so the plan is the one a
//! single thread finds. Later passes (see `sim_core::plan::budget`) send each
//! unsettled group back to the worker that ran it, with its share of what is
//! left of the budget.

use crate::plan::worker::{Message, Reply, assemble, next_pass};
use leptos::prelude::*;
use sim_core::Scenario;
use sim_core::plan::{Finished, Plan, PlanSlo, Space, groups, searches};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{MessageEvent, Worker};

/// Where Trunk puts the worker's loader (next to the page).
pub(crate) const WORKER_URL: &str = "./plan-worker_loader.js";

/// Most workers, whatever the machine says.
const MAX_WORKERS: usize = 4;

type Handler = Closure<dyn FnMut(MessageEvent)>;
type Done = Box<dyn FnOnce(Result<Plan, String>)>;

struct Slot {
    worker: Worker,
    ready: bool,
    busy: bool,
    /// The plan this worker was last told.
    told: u64,
    _handler: Handler,
}

/// The plan in progress.
struct Job {
    id: u64,
    plan_message: String,
    /// Groups to hand out: each with its share when it is a later pass's.
    queue: VecDeque<(usize, Option<u64>)>,
    /// Each group's finished searches, as its last run left them.
    parts: Vec<Option<Vec<Finished>>>,
    /// The worker that ran each group (a later pass goes back to it).
    holder: Vec<Option<usize>>,
    /// Groups of this pass not yet back.
    pending: usize,
    /// Groups in this pass.
    in_pass: usize,
    /// Which pass (1 first).
    pass: usize,
    space: Space,
    progress: RwSignal<Option<f64>>,
    done: Option<Done>,
}

impl Job {
    /// Progress over the passes: the first to 80 %, the rest after.
    fn fraction(&self) -> f64 {
        let f = (self.in_pass - self.pending) as f64 / self.in_pass.max(1) as f64;
        if self.pass == 1 {
            0.8 * f
        } else {
            let later = (sim_core::plan::budget::PASSES - 1).max(1) as f64;
            0.8 + 0.2 * ((self.pass - 2) as f64 + f) / later
        }
    }

    /// Every group's searches, with their indices.
    fn collected(&self) -> Vec<(usize, Vec<Finished>)> {
        self.parts
            .iter()
            .enumerate()
            .filter_map(|(i, p)| Some((i, p.clone()?)))
            .collect()
    }
}

#[derive(Default)]
struct Pool {
    slots: Vec<Slot>,
    /// Workers to have once all are started (one per core, at most four).
    wanted: usize,
    job: Option<Job>,
    next_id: u64,
}

thread_local! {
    static POOL: Rc<RefCell<Pool>> = Rc::new(RefCell::new(Pool::default()));
}

/// Start the workers: they load and compile the simulator in the background,
/// one after another (each starts when the one before is ready), so that on a
/// two-core machine compiling never takes both cores from the page. False if
/// workers cannot be started here.
pub fn warm() -> bool {
    POOL.with(|p| {
        if !p.borrow().slots.is_empty() {
            return true;
        }
        let cores = window().navigator().hardware_concurrency() as usize;
        p.borrow_mut().wanted = cores.clamp(1, MAX_WORKERS);
        spawn(p)
    })
}

/// Start one more worker. False if the browser refuses.
fn spawn(pool: &Rc<RefCell<Pool>>) -> bool {
    let k = pool.borrow().slots.len();
    let Ok(worker) = Worker::new(WORKER_URL) else {
        return false;
    };
    let handle = pool.clone();
    let handler = Handler::new(move |ev: MessageEvent| {
        let reply = ev
            .data()
            .as_string()
            .and_then(|t| serde_json::from_str::<Reply>(&t).ok())
            .unwrap_or_else(|| Reply::Failed("an unreadable reply".into()));
        on_reply(&handle, k, reply);
    });
    worker.set_onmessage(Some(handler.as_ref().unchecked_ref()));
    pool.borrow_mut().slots.push(Slot {
        worker,
        ready: false,
        busy: false,
        told: 0,
        _handler: handler,
    });
    true
}

/// How many workers plans run on.
pub fn size() -> usize {
    POOL.with(|p| p.borrow().slots.len())
}

fn post(worker: &Worker, json: &str) {
    let _ = worker.post_message(&JsValue::from_str(json));
}

/// Give free, ready workers the next groups (telling a worker the plan first
/// if it has not been told).
fn dispatch(pool: &mut Pool) {
    let Some(job) = pool.job.as_mut() else { return };
    for (k, slot) in pool.slots.iter_mut().enumerate() {
        if !slot.ready || slot.busy {
            continue;
        }
        // A first run goes to any worker; a later pass to the one holding it.
        let Some(at) = job
            .queue
            .iter()
            .position(|(i, share)| share.is_none() || job.holder[*i] == Some(k))
        else {
            continue;
        };
        let Some((index, share)) = job.queue.remove(at) else {
            continue;
        };
        if slot.told != job.id {
            post(&slot.worker, &job.plan_message);
            slot.told = job.id;
        }
        let message = match share {
            None => Message::Group { id: job.id, index },
            Some(share) => Message::Resume {
                id: job.id,
                index,
                share,
            },
        };
        if let Ok(m) = serde_json::to_string(&message) {
            post(&slot.worker, &m);
            slot.busy = true;
            job.holder[index] = Some(k);
        }
    }
}

fn on_reply(pool: &Rc<RefCell<Pool>>, k: usize, reply: Reply) {
    let finished = {
        let mut p = pool.borrow_mut();
        let mut finished = None;
        match reply {
            Reply::Ready => {
                if let Some(s) = p.slots.get_mut(k) {
                    s.ready = true;
                }
                if p.slots.len() < p.wanted {
                    drop(p);
                    spawn(pool);
                    p = pool.borrow_mut();
                }
            }
            Reply::Done {
                id,
                index,
                searches,
            } => {
                if let Some(s) = p.slots.get_mut(k) {
                    s.busy = false;
                }
                if let Some(job) = p.job.as_mut().filter(|j| j.id == id)
                    && let Some(part) = job.parts.get_mut(index)
                {
                    *part = Some(searches);
                    job.pending = job.pending.saturating_sub(1);
                    if job.pending == 0 && job.pass < sim_core::plan::budget::PASSES {
                        let again = next_pass(&job.collected(), job.space.budget_events);
                        if !again.is_empty() {
                            job.pass += 1;
                            job.pending = again.len();
                            job.in_pass = again.len();
                            job.queue = again.into_iter().map(|(i, s)| (i, Some(s))).collect();
                        }
                    }
                    job.progress.set(Some(job.fraction()));
                    if job.pending == 0 {
                        let job = p.job.take().expect("the job in progress");
                        let plan = assemble(job.collected(), &job.space);
                        finished = Some((job.done, Ok(plan), job.progress));
                    }
                }
            }
            // A planner's worker never runs the page's run.
            Reply::Ran { .. } | Reply::RunProgress { .. } | Reply::RunFailed { .. } => {}
            Reply::Failed(e) => {
                if let Some(s) = p.slots.get_mut(k) {
                    s.busy = false;
                }
                if let Some(job) = p.job.take() {
                    finished = Some((job.done, Err(e), job.progress));
                }
            }
        }
        dispatch(&mut p);
        finished
    };
    if let Some((done, result, progress)) = finished {
        progress.set(None);
        if let Some(done) = done {
            done(result);
        }
    }
}

/// Plan `base` on the workers. `progress` follows the groups done; `done`
/// gets the plan (or why a worker failed). False if there are no workers
/// (the caller then plans on the page, in slices).
pub fn start(
    base: &Scenario,
    slo: PlanSlo,
    space: Space,
    progress: RwSignal<Option<f64>>,
    done: impl FnOnce(Result<Plan, String>) + 'static,
) -> bool {
    if !warm() {
        return false;
    }
    let total = groups(searches(base, slo, &space)).len();
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        p.next_id += 1;
        let id = p.next_id;
        let plan_message = serde_json::to_string(&Message::Plan {
            id,
            base: Box::new(base.clone()),
            slo,
            space: space.clone(),
        })
        .unwrap_or_default();
        // A plan still running is dropped: its late replies are ignored.
        p.job = Some(Job {
            id,
            plan_message,
            queue: (0..total).map(|i| (i, None)).collect(),
            parts: vec![None; total],
            holder: vec![None; total],
            pending: total,
            in_pass: total,
            pass: 1,
            space,
            progress,
            done: Some(Box::new(done)),
        });
        progress.set(Some(0.0));
        dispatch(&mut p);
    });
    true
}

/// Drop the plan in progress (workers finish the group in hand, unread).
pub fn cancel() {
    POOL.with(|p| p.borrow_mut().job = None);
}
