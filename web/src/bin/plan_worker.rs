//! The planner's Web Worker: a copy of the simulator that runs the groups of
//! searches it is sent and posts the results back (`web::plan::worker`). The
//! page starts one more copy for the run on screen (`web::work::remote`),
//! which runs in chunks so that a newer scenario is read between them.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web::plan::worker::{Message, Reply, Worker};
use web::work::remote::{CHUNK_EVENTS, RunHost};
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

fn post(scope: &DedicatedWorkerGlobalScope, reply: &Reply) {
    if let Ok(json) = serde_json::to_string(reply) {
        // A closed page leaves no one to tell.
        let _ = scope.post_message(&JsValue::from_str(&json));
    }
}

/// The run in progress, and whether its next chunk is already queued.
#[derive(Default)]
struct Runs {
    host: RefCell<RunHost>,
    queued: Cell<bool>,
}

/// Queue the next chunk of the run in progress, in a task of its own, after
/// the messages already waiting.
fn queue_chunk(scope: &DedicatedWorkerGlobalScope, runs: &Rc<Runs>) {
    if runs.queued.get() || !runs.host.borrow().running() {
        return;
    }
    runs.queued.set(true);
    let (scope, runs) = (scope.clone(), runs.clone());
    web::work::soon::soon(move || {
        runs.queued.set(false);
        let reply = runs.host.borrow_mut().advance(CHUNK_EVENTS);
        if let Some(reply) = reply {
            post(&scope, &reply);
        }
        queue_chunk(&scope, &runs);
    });
}

fn main() {
    console_error_panic_hook::set_once();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let me = scope.clone();
    let state = RefCell::new(Worker::default());
    let runs = Rc::new(Runs::default());
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        let msg = ev
            .data()
            .as_string()
            .ok_or_else(|| "the message was not text".to_owned())
            .and_then(|t| serde_json::from_str::<Message>(&t).map_err(|e| e.to_string()));
        match msg {
            Ok(Message::Run { id, scenario }) => {
                let refused = runs.host.borrow_mut().start(id, *scenario);
                match refused {
                    Some(reply) => post(&me, &reply),
                    None => queue_chunk(&me, &runs),
                }
            }
            Ok(Message::StopRun) => runs.host.borrow_mut().stop(),
            Ok(m) => {
                if let Some(reply) = state.borrow_mut().handle(m) {
                    post(&me, &reply);
                }
            }
            Err(e) => post(
                &me,
                &Reply::Failed(format!("a message could not be read: {e}")),
            ),
        }
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handler lives as long as the worker.
    on_message.forget();
    post(&scope, &Reply::Ready);
}
