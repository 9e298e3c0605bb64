//! Run a closure in a task of its own, as soon as the page has handled what
//! is waiting (input, a frame to render): a message to ourselves on a
//! `MessageChannel`, which, unlike `setTimeout(0)`, is never clamped to 4 ms.
//! Long work split into short slices, each queued with [`soon`], keeps the
//! page's thread busy without ever holding it for long.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

type Queue = Rc<RefCell<VecDeque<Box<dyn FnOnce()>>>>;

struct Channel {
    port: web_sys::MessagePort,
    queue: Queue,
    _on_message: Closure<dyn FnMut()>,
}

thread_local! {
    static CHANNEL: RefCell<Option<Channel>> = const { RefCell::new(None) };
}

fn channel() -> Option<Channel> {
    let channel = web_sys::MessageChannel::new().ok()?;
    let queue: Queue = Rc::default();
    let q = queue.clone();
    // One message, one closure, run outside any borrow of the queue.
    let on_message = Closure::<dyn FnMut()>::new(move || {
        let next = q.borrow_mut().pop_front();
        if let Some(f) = next {
            f();
        }
    });
    channel
        .port1()
        .set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    Some(Channel {
        port: channel.port2(),
        queue,
        _on_message: on_message,
    })
}

/// Run `f` in a new task soon; where the page has no `MessageChannel`, on
/// the next animation frame.
pub fn soon(f: impl FnOnce() + 'static) {
    let f: Box<dyn FnOnce()> = Box::new(f);
    let left = CHANNEL.with(|c| {
        let mut c = c.borrow_mut();
        if c.is_none() {
            *c = channel();
        }
        match c.as_ref() {
            Some(ch) if ch.port.post_message(&JsValue::NULL).is_ok() => {
                ch.queue.borrow_mut().push_back(f);
                None
            }
            _ => Some(f),
        }
    });
    if let Some(f) = left {
        leptos::prelude::request_animation_frame(f);
    }
}
