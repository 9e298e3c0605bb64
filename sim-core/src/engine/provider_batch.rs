//! Requests at a provider's batch API (`crate::api::BatchApi`): outside the
//! rate limits, each request enters the batch queue when its input tokens
//! fit beside those already enqueued (else it waits in the client, in
//! order), and its whole answer arrives after a turnaround drawn from the
//! tier's distribution, cut at the completion window. The first token is
//! the whole answer: a batch result has no time per token.

use super::request::{Phase, ReqId};
use super::{Event, Simulation, later, secs_to_ns};
use crate::api::BatchApi;
use crate::dist::Sampler;
use crate::scenario::bounds;
use std::collections::VecDeque;

/// One batch tier's queue.
pub(super) struct BatchState {
    turnaround: Sampler,
    window_ns: u64,
    limit: u64,
    /// Input tokens submitted and not yet answered.
    enqueued: u64,
    /// Most tokens enqueued at once.
    pub(super) peak: u64,
    /// Requests the client holds until the queue has room, in order.
    pub(super) waiting: VecDeque<ReqId>,
}

impl BatchState {
    pub(super) fn new(b: &BatchApi) -> Self {
        BatchState {
            turnaround: b.turnaround_s.sampler(),
            window_ns: secs_to_ns(b.window_s),
            limit: b.enqueued_tokens,
            enqueued: 0,
            peak: 0,
            waiting: VecDeque::new(),
        }
    }

    fn fits(&self, input: u64) -> bool {
        self.enqueued + input <= self.limit
    }
}

impl Simulation {
    /// A request for batch tier `tier`: into the batch queue now if it fits
    /// and nothing waits before it, else into the client's queue (bounded:
    /// beyond `bounds::QUEUE` it is turned away). A request larger than the
    /// whole queue can never enter it and fails.
    pub(super) fn batch_submit(&mut self, id: ReqId, tier: u16) {
        let input = u64::from(self.st.requests[id].input_tokens);
        let Some(api) = self.api.as_mut() else { return };
        let t = &mut api.tiers[tier as usize];
        let Some(b) = t.batch.as_mut() else { return };
        if input > b.limit {
            if self.rec.too_large_example.is_none() {
                self.rec.too_large_example = Some(format!(
                    "tier {:?}: {input} input tokens, more than its batch queue of {} enqueued tokens",
                    t.name, b.limit
                ));
            }
            self.api_give_up(id, super::provider_errors::GaveUp::TooLarge);
            return;
        }
        if b.waiting.is_empty() && b.fits(input) {
            self.batch_send(id, tier);
        } else if b.waiting.len() as u64 >= u64::from(bounds::QUEUE) {
            api.rejected_client += 1;
            self.reject(id);
        } else {
            b.waiting.push_back(id);
            self.st.waiting += 1;
        }
    }

    /// Submit request `id` to batch tier `tier`'s queue: its result is due
    /// after its turnaround, at most the window.
    fn batch_send(&mut self, id: ReqId, tier: u16) {
        let now = self.st.now;
        let Some(api) = self.api.as_mut() else { return };
        let req = &mut self.st.requests[id];
        let t = &mut api.tiers[tier as usize];
        let Some(b) = t.batch.as_mut() else { return };
        let input = u64::from(req.input_tokens);
        b.enqueued += input;
        b.peak = b.peak.max(b.enqueued);
        debug_assert!(
            b.enqueued <= b.limit,
            "the batch queue holds more than its limit"
        );
        let turnaround = secs_to_ns(b.turnaround.sample(&mut api.latency_rng).max(0.0))
            .clamp(1, b.window_ns.max(1));
        t.in_flight += 1;
        api.attempts += 1;
        let done = later(now, turnaround);
        req.admitted_ns = req.admitted_ns.min(now);
        req.first_token_ns = done;
        req.api_done_ns = done;
        req.output_reserved = 0;
        req.phase = Phase::Batched;
        self.rec
            .windows
            .api_tokens(now, input + u64::from(req.output_tokens));
        self.st.events.push(done, Event::ApiDone { req: id });
    }

    /// A request left batch tier `tier` (answered, or its client gave up):
    /// its tokens leave the queue, and what waits goes in while it fits.
    pub(super) fn batch_release(&mut self, tier: u16, input: u64) {
        if let Some(b) = self
            .api
            .as_mut()
            .and_then(|a| a.tiers[tier as usize].batch.as_mut())
        {
            b.enqueued -= input;
        }
        self.batch_pump(tier);
    }

    /// Send the client's waiting requests, in order, while they fit. Bounded
    /// by the queue: every pass sends or drops one, or stops.
    fn batch_pump(&mut self, tier: u16) {
        loop {
            let Some(b) = self
                .api
                .as_mut()
                .and_then(|a| a.tiers[tier as usize].batch.as_mut())
            else {
                return;
            };
            let Some(&head) = b.waiting.front() else {
                return;
            };
            let req = &self.st.requests[head];
            if req.abandoned {
                b.waiting.pop_front();
                self.drop_abandoned_waiting(head);
                continue;
            }
            if !b.fits(u64::from(req.input_tokens)) {
                return;
            }
            b.waiting.pop_front();
            self.st.waiting -= 1;
            self.batch_send(head, tier);
        }
    }
}
