//! The run on screen off the page's thread: a long run's full simulation goes
//! to a Web Worker of its own (a copy of the planner's worker,
//! `src/bin/plan_worker.rs`) while the page runs its preview, so the full
//! numbers come from a whole core instead of slices between frames.
//!
//! [`RunHost`] is the worker's side, plain Rust (tested natively): it holds
//! at most one run, advances it a chunk of events at a time (the worker
//! reads its messages between chunks, so a newer scenario replaces the run at
//! once) and answers with the report, which reads back from JSON to the very
//! same report (`sim-core`'s preset golden test checks it). [`RunWorker`] is
//! the page's side: it starts the worker and forwards its replies.

use crate::plan::worker::Reply;
use sim_core::{Scenario, Simulation};

/// Events a worker runs between reading its messages: 5–25 ms of the
/// heaviest preset (launch-day-gpus' overloaded hour is the slowest per
/// event), so a newer scenario waits at most a frame or two to start.
pub const CHUNK_EVENTS: u64 = 20_000;

thread_local! {
    /// Whether the page's run worker (one a page) has loaded its simulator
    /// and not been retired.
    static UP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the page's run worker is up.
pub fn worker_up() -> bool {
    UP.with(std::cell::Cell::get)
}

fn set_up(up: bool) {
    UP.with(|u| u.set(up));
}

/// A chunk in every this many posts its progress.
const PROGRESS_EVERY: u32 = 10;

/// The one run a worker holds.
struct Held {
    id: u64,
    sim: Simulation,
    horizon_ns: u64,
    chunks: u32,
}

/// The worker's side: the run in progress, if any.
#[derive(Default)]
pub struct RunHost {
    run: Option<Held>,
}

impl RunHost {
    /// Start run `id` of `scenario`, dropping any run in progress; a scenario
    /// that does not validate answers at once.
    pub fn start(&mut self, id: u64, scenario: Scenario) -> Option<Reply> {
        self.run = None;
        match scenario.validate() {
            Ok(valid) => {
                self.run = Some(Held {
                    id,
                    sim: Simulation::new(&valid),
                    horizon_ns: ((valid.duration_s * 1e9) as u64).max(1),
                    chunks: 0,
                });
                None
            }
            Err(e) => Some(Reply::RunFailed {
                id,
                why: e.to_string(),
            }),
        }
    }

    /// Drop the run in progress (the page no longer wants it).
    pub fn stop(&mut self) {
        self.run = None;
    }

    /// Whether a run is in progress.
    pub fn running(&self) -> bool {
        self.run.is_some()
    }

    /// Run up to `events` more events: the report when the run ends, its
    /// progress every few chunks, or nothing.
    pub fn advance(&mut self, events: u64) -> Option<Reply> {
        let held = self.run.as_mut()?;
        if held.sim.advance_events(events) {
            let held = self.run.take()?;
            return Some(Reply::Ran {
                id: held.id,
                report: Box::new(held.sim.report()),
            });
        }
        held.chunks += 1;
        (held.chunks % PROGRESS_EVERY == 0).then(|| Reply::RunProgress {
            id: held.id,
            fraction: (held.sim.now_ns() as f64 / held.horizon_ns as f64).min(0.99),
        })
    }
}

pub use page::RunWorker;

mod page {
    use super::set_up;
    use crate::plan::worker::{Message, Reply};
    use sim_core::Scenario;
    use std::rc::Rc;
    use wasm_bindgen::JsCast;
    use wasm_bindgen::prelude::*;
    use web_sys::{MessageEvent, Worker};

    /// The page's handle on the run worker.
    pub struct RunWorker {
        worker: Worker,
        _on_message: Closure<dyn FnMut(MessageEvent)>,
        _on_error: Closure<dyn FnMut()>,
    }

    impl RunWorker {
        /// Start the worker; `on_reply` gets each of its replies but
        /// `Ready`, and a `Failed` if the worker stops with an error. None
        /// if the browser will not start it.
        pub fn spawn(on_reply: impl Fn(Reply) + 'static) -> Option<Self> {
            let worker = Worker::new(crate::plan::workers::WORKER_URL).ok()?;
            let on_reply = Rc::new(on_reply);
            let on_error = {
                let on_reply = on_reply.clone();
                Closure::<dyn FnMut()>::new(move || {
                    on_reply(Reply::Failed("the run worker stopped with an error".into()));
                })
            };
            let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
                let reply = ev
                    .data()
                    .as_string()
                    .and_then(|t| serde_json::from_str::<Reply>(&t).ok())
                    .unwrap_or_else(|| Reply::Failed("an unreadable reply".into()));
                match reply {
                    Reply::Ready => set_up(true),
                    other => on_reply(other),
                }
            });
            worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
            worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
            Some(RunWorker {
                worker,
                _on_message: on_message,
                _on_error: on_error,
            })
        }

        /// Whether the worker has loaded its simulator (and is not retired).
        pub fn ready(&self) -> bool {
            super::worker_up()
        }

        /// Stop the worker for good: the page runs everything itself.
        pub fn retire(&self) {
            set_up(false);
            self.worker.terminate();
        }

        /// Run `scenario` as run `id`, replacing the worker's run in progress.
        pub fn run(&self, id: u64, scenario: &Scenario) -> bool {
            let message = Message::Run {
                id,
                scenario: Box::new(scenario.clone()),
            };
            serde_json::to_string(&message)
                .ok()
                .is_some_and(|m| self.worker.post_message(&JsValue::from_str(&m)).is_ok())
        }

        /// Drop the worker's run in progress.
        pub fn stop(&self) {
            if let Ok(m) = serde_json::to_string(&Message::StopRun) {
                let _ = self.worker.post_message(&JsValue::from_str(&m));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::worker::tests::wire;

    fn heavy() -> Scenario {
        let mut s = sim_core::presets::all()
            .into_iter()
            .find(|p| p.id == "launch-day-gpus")
            .expect("the preset")
            .scenario;
        s.duration_s = 120.0;
        s
    }

    /// Run the host to its end, counting the progress replies on the way.
    fn finish(host: &mut RunHost) -> (Reply, u32) {
        let mut progress = 0;
        for _ in 0..100_000 {
            match host.advance(CHUNK_EVENTS / 10) {
                Some(Reply::RunProgress { .. }) => progress += 1,
                Some(done) => return (done, progress),
                None => {}
            }
        }
        panic!("the run never ended");
    }

    #[test]
    fn a_run_in_the_worker_reports_what_the_page_would_have_shown() {
        let s = heavy();
        let mut host = RunHost::default();
        assert!(host.start(7, wire(&s)).is_none());
        assert!(host.running());
        let (reply, progress) = finish(&mut host);
        assert!(!host.running());
        assert!(progress >= 1, "no progress on the way");
        let Reply::Ran { id, report } = wire(&reply) else {
            panic!("not a report: {reply:?}");
        };
        assert_eq!(id, 7);
        let here = sim_core::run_scenario(s.clone()).expect("a valid scenario");
        assert!(
            *report == here,
            "the worker's report differs from the page's"
        );
    }

    #[test]
    fn a_newer_run_replaces_the_one_in_progress_and_a_stop_ends_it() {
        let mut host = RunHost::default();
        let mut first = heavy();
        first.duration_s = 600.0;
        assert!(host.start(1, first).is_none());
        let _ = host.advance(1_000);
        let second = heavy();
        assert!(host.start(2, second.clone()).is_none());
        let (reply, _) = finish(&mut host);
        let Reply::Ran { id, report } = reply else {
            panic!("not a report");
        };
        assert_eq!(id, 2);
        assert_eq!(
            report.sim_time_s,
            sim_core::run_scenario(second).expect("valid").sim_time_s
        );
        assert!(host.start(3, heavy()).is_none());
        host.stop();
        assert!(!host.running());
        assert!(host.advance(CHUNK_EVENTS).is_none());
    }

    #[test]
    fn a_scenario_that_does_not_validate_answers_why() {
        let mut s = heavy();
        s.duration_s = -1.0;
        let mut host = RunHost::default();
        match host.start(4, s) {
            Some(Reply::RunFailed { id: 4, why }) => assert!(why.contains("duration"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(!host.running());
    }
}
