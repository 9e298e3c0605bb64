//! Client timeouts: a request not finished within its class's `timeout_s` is
//! abandoned by its client and counted as timed out; its task ends (the user,
//! if any, thinks and tries again).
//!
//! A sequence on a GPU (prefilling or decoding) leaves at once and frees its KV
//! blocks and its batch slot. A request waiting in a queue, in the serving
//! software's front end or in the API client, or held in a static batch or at
//! an API provider, is marked and dropped when its container next reaches it:
//! so timing out is O(1) however long the queues (removing from the middle of
//! a queue would be O(queue) each, O(n²) under overload). The snapshot counts
//! marked requests as timed out, not as waiting or running.
//!
//! A class's timeout is one constant, so its deadlines come due in the order
//! its requests were created: each class keeps them in a FIFO
//! ([`Deadlines`]) with one event in the heap, for the head. A request that
//! finishes leaves its entry behind; such stale entries are skipped at the head
//! (never moving the clock or counting as an event) and compacted away once
//! they outnumber the live ones, so memory is O(requests in flight), not
//! O(requests created within one timeout).

use super::request::{Phase, ReqId};
use super::{Event, Simulation};
use std::collections::VecDeque;

/// Entries below which a deadline queue is never compacted.
const COMPACT_MIN: usize = 1024;

/// One class's pending client timeouts: (deadline, request), in deadline order.
#[derive(Default)]
pub(super) struct Deadlines {
    queue: VecDeque<(u64, ReqId)>,
    /// Length at which stale entries are next swept out.
    compact_at: usize,
    /// Whether the heap holds this queue's event (at the head's deadline).
    armed: bool,
}

impl Deadlines {
    /// Entries held (live and stale).
    pub(super) fn len(&self) -> usize {
        self.queue.len()
    }
}

impl Simulation {
    /// Whether request `id` still waits for its client's timeout.
    fn awaits_timeout(&self, id: ReqId) -> bool {
        self.st.requests.contains(id) && !self.st.requests[id].abandoned
    }

    /// Request `id` of `class` times out at `deadline` unless it ends first.
    pub(super) fn arm_timeout(&mut self, class: u16, id: ReqId, deadline: u64) {
        let c = class as usize;
        let d = &self.st.deadlines[c];
        debug_assert!(d.queue.back().is_none_or(|&(t, _)| t <= deadline));
        if d.queue.len() >= d.compact_at.max(COMPACT_MIN) {
            // Amortised O(1): at least half the entries arrived since the last sweep.
            let mut queue = std::mem::take(&mut self.st.deadlines[c].queue);
            queue.retain(|&(_, r)| self.awaits_timeout(r));
            let d = &mut self.st.deadlines[c];
            d.compact_at = 2 * queue.len();
            d.queue = queue;
        }
        let d = &mut self.st.deadlines[c];
        d.queue.push_back((deadline, id));
        if !d.armed {
            d.armed = true;
            self.st.events.push(deadline, Event::Timeout { class });
        }
    }

    /// The heap's next event is `class`'s timeout at `at`: true if a request is
    /// due then. Otherwise the event is stale: it is removed (re-armed at the
    /// first live deadline, if any) without touching the clock.
    pub(super) fn timeout_is_due(&mut self, class: u16, at: u64) -> bool {
        self.pop_stale_deadlines(class);
        let d = &self.st.deadlines[class as usize];
        if d.queue.front().is_some_and(|&(t, _)| t == at) {
            return true;
        }
        self.st.events.pop();
        self.rearm_timeout(class);
        false
    }

    /// `class`'s deadlines due now: those requests' clients give up.
    pub(super) fn timeouts_due(&mut self, class: u16) {
        let now = self.st.now;
        while let Some(&(t, id)) = self.st.deadlines[class as usize].queue.front() {
            if t > now {
                break;
            }
            self.st.deadlines[class as usize].queue.pop_front();
            self.time_out(id);
        }
        self.pop_stale_deadlines(class);
        self.rearm_timeout(class);
    }

    fn pop_stale_deadlines(&mut self, class: u16) {
        while let Some(&(_, id)) = self.st.deadlines[class as usize].queue.front() {
            if self.awaits_timeout(id) {
                break;
            }
            self.st.deadlines[class as usize].queue.pop_front();
        }
    }

    /// Put `class`'s event back in the heap at its head's deadline (its old
    /// event has just left the heap).
    fn rearm_timeout(&mut self, class: u16) {
        let d = &mut self.st.deadlines[class as usize];
        d.armed = false;
        if let Some(&(t, _)) = d.queue.front() {
            d.armed = true;
            self.st.events.push(t, Event::Timeout { class });
        }
    }

    /// Request `id`'s client gave up (ignored if it finished since: the key is stale).
    pub(super) fn time_out(&mut self, id: ReqId) {
        if !self.st.requests.contains(id) || self.st.requests[id].abandoned {
            return;
        }
        let req = &self.st.requests[id];
        let (class, phase, replica) = (req.class, req.phase, req.replica);
        self.rec.timed_out += 1;
        for m in self.rec.metrics(class) {
            m.timed_out += 1;
        }
        self.rec.last_work_ns = self.st.now;
        match (phase, replica) {
            // On a GPU: the pass in flight still holds it (its chunk, or the
            // KV block reserved for this step's token). It leaves when the
            // pass ends, freeing all of that.
            (Phase::Decoding | Phase::Prefilling, Some(r)) => {
                self.st.requests[id].abandoned = true;
                self.st.abandoned_running += 1;
                self.st.replicas[r as usize].leaving.push(id);
                self.end_task_of(id);
            }
            // Pulling its KV cache to a decode replica: it leaves when the
            // pull ends (the blocks on both sides are in use until then).
            (Phase::Transferring, _) => {
                self.st.requests[id].abandoned = true;
                self.st.abandoned_running += 1;
                self.end_task_of(id);
            }
            (Phase::Waiting, _) => {
                // A handed-off request waiting for a decode replica: the
                // prefill replica frees its cache now (the queue may not
                // reach the request before the run ends).
                self.release_remote(id);
                self.st.requests[id].abandoned = true;
                self.st.abandoned_waiting += 1;
                self.end_task_of(id);
            }
            (Phase::Batched, _) | (Phase::Decoding | Phase::Prefilling, None) => {
                let at_provider = self.st.requests[id].tier.is_some();
                self.st.requests[id].abandoned = true;
                self.st.abandoned_running += 1;
                self.end_task_of(id);
                if at_provider && phase == Phase::Batched {
                    self.api_abandon(id);
                }
            }
        }
    }

    /// After a pass on replica `r`: sequences whose client gave up during it
    /// leave, freeing their KV blocks (including this pass's) and their slots.
    pub(super) fn release_leaving(&mut self, r: usize) {
        let leaving = std::mem::take(&mut self.st.replicas[r].leaving);
        let mut prefills_left = false;
        for &id in &leaving {
            if !self.st.requests.contains(id) {
                continue; // it finished in the pass
            }
            match self.st.requests[id].phase {
                Phase::Decoding => {
                    self.leave_decoding(r, id, false);
                }
                Phase::Prefilling => {
                    // It leaves `prefilling` in one sweep after the loop.
                    prefills_left = true;
                    let prefilled = u64::from(self.st.requests[id].prefilled);
                    self.free_blocks(r, id, prefilled, false);
                }
                _ => {}
            }
            self.st.abandoned_running -= 1;
            self.leave_replica(r);
            self.forget(id);
        }
        if prefills_left {
            self.sweep_prefilling(r);
        }
        let mut leaving = leaving;
        leaving.clear();
        self.st.replicas[r].leaving = leaving;
    }

    /// A running sequence left replica `r` without finishing.
    fn leave_replica(&mut self, r: usize) {
        let rep = &mut self.st.replicas[r];
        rep.running -= 1;
        rep.outstanding -= 1;
        self.touch(r);
    }

    /// The task of a timed-out request ends: its later calls are never sent,
    /// and its user backs off and tries again. The task itself stays until the
    /// request leaves (a request on a GPU still needs its prompt's identity).
    fn end_task_of(&mut self, id: ReqId) {
        let task = self.st.requests[id].task;
        let user = task.and_then(|t| self.st.tasks[t].user.take());
        self.user_done(user, true, 0);
    }

    /// Forget a timed-out request and its task.
    pub(super) fn forget(&mut self, id: ReqId) {
        self.release_remote(id);
        if let Some(task) = self.st.requests[id].task {
            self.st.tasks.remove(task);
        }
        self.remove_request(id);
    }

    /// Drop a marked request its container just reached (a queue's head, a
    /// front-end or retry timer): it was waiting.
    pub(super) fn drop_abandoned_waiting(&mut self, id: ReqId) {
        debug_assert!(self.st.requests[id].abandoned);
        self.st.abandoned_waiting -= 1;
        self.st.waiting -= 1;
        if let Some(r) = self.st.requests[id].replica {
            // A per-replica router counted it as the replica's outstanding work.
            self.st.replicas[r as usize].outstanding -= 1;
            self.touch(r as usize);
        }
        self.forget(id);
    }

    /// Drop marked requests at the head of fleet queue `q`.
    pub(super) fn prune_queue(&mut self, q: usize) {
        while let Some(&id) = self.st.queues[q].front() {
            if !self.st.requests[id].abandoned {
                return;
            }
            self.st.queues[q].pop_front();
            self.drop_abandoned_waiting(id);
        }
    }

    /// A marked request finished where it was held (a static batch, an
    /// abstract service period, an API provider): free it, count nothing.
    pub(super) fn drop_abandoned_running(&mut self, id: ReqId) {
        self.st.abandoned_running -= 1;
        if let Some(r) = self.st.requests[id].replica {
            let rep = &mut self.st.replicas[r as usize];
            rep.running -= 1;
            rep.outstanding -= 1;
            self.touch(r as usize);
        }
        self.forget(id);
    }
}
