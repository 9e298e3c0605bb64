//! A replica: its configuration-derived policy and service model, its state,
//! and the start and end of each forward pass (dispatched to `iteration` or
//! `static_batch` by policy).

use super::decode::DecodeSet;
use super::policy::{Policy, Service};
use super::prefix_cache::PrefixCache;
use super::recorder::PassSample;
use super::request::ReqId;
use super::static_batch::StaticBatch;
use super::{Event, Simulation, later};
use crate::physics::BatchShape;
use std::collections::VecDeque;

/// Where a replica slot is in its life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Up {
    /// Serving: routed to, starting passes.
    #[default]
    Serving,
    /// Not running, not billed.
    Off,
    /// Billed, loading its weights and starting its engine: serves nothing.
    Starting,
    /// Finishing its own work, routed nothing new; stops when done.
    Draining,
}

/// What the pass in progress on a replica will do when it ends.
#[derive(Clone, Debug, Default)]
pub(super) struct Pass {
    pub(super) start_ns: u64,
    /// Decoding sequences advanced by this pass (0 when decodes are paused).
    pub(super) decodes: u64,
    /// Prompt chunks: (request, tokens).
    pub(super) chunks: Vec<(ReqId, u32)>,
    /// Static batches: the pass is the batch's prefill (true) or a decode step.
    pub(super) static_prefill: bool,
    /// The pass's cost and shape, recorded when it ends (GPU physics only).
    pub(super) sample: Option<PassSample>,
}

#[derive(Clone, Debug, Default)]
pub(super) struct Replica {
    /// Its pool (an index into the configuration's pools).
    pub(super) pool: u16,
    /// Serving, or (in an autoscaled pool) off, starting or draining.
    pub(super) up: Up,
    /// When it last started (billing runs from here while it is up).
    pub(super) up_since: u64,
    /// Bumped at each start, so a cancelled start's ready event is stale.
    pub(super) up_epoch: u32,
    /// Nanoseconds of passes finished (the GPU-busy signal).
    pub(super) busy_ns: u64,
    pub(super) busy: bool,
    pub(super) pass: Pass,
    /// Sequences generating tokens (iteration-level batching).
    pub(super) decoding: DecodeSet,
    /// Admitted sequences whose prompt is not yet fully processed, oldest first.
    pub(super) prefilling: VecDeque<ReqId>,
    /// KV blocks in use, ≤ the configuration's capacity (a block shared
    /// through the prefix cache counts once).
    pub(super) kv_used: u64,
    /// Blocks addressed by content, for prefix caching.
    pub(super) cache: PrefixCache,
    /// Sequences whose client gave up during the pass in flight.
    pub(super) leaving: Vec<ReqId>,
    pub(super) timer_armed: bool,
    pub(super) timer_epoch: u32,
    pub(super) static_batch: Option<StaticBatch>,
    pub(super) abstract_members: Vec<ReqId>,
    /// Requests routed here and not finished (for the router).
    pub(super) outstanding: u64,
    /// Requests admitted and not finished.
    pub(super) running: u64,
    /// While the pass that follows a finished one is formed under async
    /// scheduling: when the finished pass was launched, which is when the
    /// scheduler really formed this one (requests that reached the engine
    /// later wait for the pass after).
    pub(super) formed_at: Option<u64>,
    /// Handed-off requests admitted here whose KV cache is on the way or
    /// has arrived (they hold blocks and a sequence slot).
    pub(super) transferring: u64,
    /// Of those, the ones whose cache has arrived: they join the next pass.
    pub(super) arrived: Vec<ReqId>,
    /// Sequences that joined the pass in flight from a hand-off (with their
    /// epoch): its end is their first token.
    pub(super) first_pending: Vec<(ReqId, u32)>,
    /// When this replica's link is free for the next pull.
    pub(super) link_free_ns: u64,
}

impl Simulation {
    /// If the replica is idle, start its next pass (or arm its batch timer).
    pub(super) fn try_start(&mut self, r: usize) {
        let rep = &self.st.replicas[r];
        if rep.busy || matches!(rep.up, Up::Off | Up::Starting) {
            return;
        }
        let pool = &self.cfg.pools[usize::from(self.st.replicas[r].pool)];
        let started = match (&pool.policy, &pool.service) {
            (_, Service::Abstract { .. }) => self.start_abstract(r),
            (Policy::Static { .. }, Service::Physics(_)) => self.start_static(r),
            (Policy::Iteration { .. }, Service::Physics(_)) => self.start_iteration(r),
        };
        if let Some(duration) = started {
            let now = self.st.now;
            let rep = &mut self.st.replicas[r];
            rep.busy = true;
            rep.pass.start_ns = now;
            self.st.events.push(
                later(now, duration.max(1)),
                Event::PassDone { replica: r as u32 },
            );
        }
    }

    /// Time a pass of this shape on replica `r`; it is recorded when it ends,
    /// so a run stopped by a limit counts only the passes it finished.
    pub(super) fn time_pass(&mut self, r: usize, shape: &BatchShape, seqs: u64) -> u64 {
        let p = self.st.replicas[r].pool;
        let pool = &self.cfg.pools[usize::from(p)];
        let Service::Physics(model) = &pool.service else {
            return 0;
        };
        let mut cost = match &pool.speculative {
            // A decode step verifies k draft tokens a sequence, after the
            // proposer's k passes.
            Some(spec) if shape.decode_seqs > 0 => {
                let decoding = &self.st.replicas[r].decoding;
                let shape = BatchShape {
                    speculative_tokens: shape.decode_seqs * u64::from(spec.k),
                    decode_context_tokens: spec
                        .context(decoding.context_sum(), decoding.joined_sum()),
                    ..*shape
                };
                let (verify, drafts) = (model.step(&shape), spec.drafts(&shape));
                crate::physics::StepCost {
                    time_ns: verify.time_ns.saturating_add(drafts.time_ns),
                    flops: verify.flops + drafts.flops,
                    bytes: verify.bytes + drafts.bytes,
                }
            }
            _ => model.step(shape),
        };
        cost.time_ns = cost.time_ns.clamp(1, super::MAX_SPAN_NS);
        let kv_used = self.st.replicas[r].kv_used;
        let kv_blocks = pool.kv_blocks;
        debug_assert!(
            kv_used <= kv_blocks,
            "replica {r} holds {kv_used} KV blocks of {kv_blocks}"
        );
        self.st.replicas[r].pass.sample = Some(PassSample {
            replica: r as u32,
            pool: p,
            start_ns: self.st.now,
            time_ns: cost.time_ns,
            seqs,
            decode_seqs: shape.decode_seqs,
            prefill_tokens: shape.prefill_tokens,
            flops: cost.flops,
            bytes: cost.bytes,
            power_share: crate::physics::POWER_COEFFICIENTS.share(
                cost.flops / (cost.time_ns as f64 * 1e-9 * model.peak_flops()),
                cost.bytes / (cost.time_ns as f64 * 1e-9 * model.peak_bandwidth()),
            ),
            kv_use: kv_used as f64 / kv_blocks as f64,
            waiting: self.st.queues[self.queue_of(r)].len() as u32,
        });
        cost.time_ns
    }

    pub(super) fn finish_pass(&mut self, r: usize) {
        if let Some(sample) = self.st.replicas[r].pass.sample.take() {
            self.rec.pass(&sample);
        }
        self.rec.last_work_ns = self.st.now;
        let rep = &mut self.st.replicas[r];
        rep.busy_ns += self.st.now - rep.pass.start_ns;
        // The replica stays busy while the pass is applied, so requests that
        // completions spawn (agent chains) queue instead of starting a pass early.
        self.st.finishing = Some(r);
        let pool = &self.cfg.pools[usize::from(self.st.replicas[r].pool)];
        let async_scheduling = pool.async_scheduling;
        match (&pool.policy, &pool.service) {
            (_, Service::Abstract { .. }) => self.finish_abstract(r),
            (Policy::Static { .. }, _) => self.finish_static(r),
            (Policy::Iteration { .. }, _) => self.finish_iteration(r),
        }
        self.st.finishing = None;
        let rep = &mut self.st.replicas[r];
        rep.busy = false;
        if async_scheduling {
            rep.formed_at = Some(rep.pass.start_ns);
            self.try_start(r);
            self.st.replicas[r].formed_at = None;
        } else {
            self.try_start(r);
        }
        if self.st.replicas[r].up == Up::Draining {
            self.maybe_stop_drained(r);
        }
    }

    /// A static batch's longest wait expired: send what has gathered.
    pub(super) fn batch_timer(&mut self, r: usize) {
        let rep = &mut self.st.replicas[r];
        rep.timer_armed = false;
        rep.timer_epoch = rep.timer_epoch.wrapping_add(1);
        self.try_start(r);
    }
}
