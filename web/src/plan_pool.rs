//! The planner's workers on the page: one Web Worker per core (at most four),
//! started one after another once the page is up (so their simulator is
//! compiled before anyone asks for a plan) and kept. A plan is told to every
//! worker, then its groups are handed out one at a time to whichever worker
//! is free; results are assembled in group order, so the plan is the one a
//! single thread finds.

use crate::plan_worker::{Message, Reply, assemble};
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
const WORKER_URL: &str = "./plan-worker_loader.js";

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
    queue: VecDeque<usize>,
    parts: Vec<(usize, Vec<Finished>)>,
    total: usize,
    space: Space,
    progress: RwSignal<Option<f64>>,
    done: Option<Done>,
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
    for slot in pool.slots.iter_mut().filter(|s| s.ready && !s.busy) {
        let Some(index) = job.queue.pop_front() else {
            return;
        };
        if slot.told != job.id {
            post(&slot.worker, &job.plan_message);
            slot.told = job.id;
        }
        if let Ok(m) = serde_json::to_string(&Message::Group { id: job.id, index }) {
            post(&slot.worker, &m);
            slot.busy = true;
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
                if let Some(job) = p.job.as_mut().filter(|j| j.id == id) {
                    job.parts.push((index, searches));
                    job.progress
                        .set(Some(job.parts.len() as f64 / job.total.max(1) as f64));
                    if job.parts.len() == job.total {
                        let job = p.job.take().expect("the job in progress");
                        finished =
                            Some((job.done, Ok(assemble(job.parts, &job.space)), job.progress));
                    }
                }
            }
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
            queue: (0..total).collect(),
            parts: Vec::new(),
            total,
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
