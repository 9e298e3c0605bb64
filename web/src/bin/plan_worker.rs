//! The planner's Web Worker: a copy of the simulator that runs the groups of
//! searches it is sent and posts the results back (`web::plan::worker`).

use std::cell::RefCell;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web::plan::worker::{Message, Reply, Worker};
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

fn post(scope: &DedicatedWorkerGlobalScope, reply: &Reply) {
    if let Ok(json) = serde_json::to_string(reply) {
        // A closed page leaves no one to tell.
        let _ = scope.post_message(&JsValue::from_str(&json));
    }
}

fn main() {
    console_error_panic_hook::set_once();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let me = scope.clone();
    let state = RefCell::new(Worker::default());
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        let msg = ev
            .data()
            .as_string()
            .ok_or_else(|| "the message was not text".to_owned())
            .and_then(|t| serde_json::from_str::<Message>(&t).map_err(|e| e.to_string()));
        match msg {
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
