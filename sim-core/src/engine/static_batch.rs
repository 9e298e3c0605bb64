//! Static batching (a batch forms, runs to its longest member, then the next
//! forms) and the abstract textbook server used to check the engine against
//! queueing theory. A pass here costs O(batch size) to form.

use super::policy::{Policy, Service};
use super::request::{Phase, ReqId};
use super::{Event, Simulation, blocks_for, later, secs_to_ns};
use crate::physics::BatchShape;

#[derive(Clone, Debug)]
pub(super) struct StaticBatch {
    /// Members, ascending by output tokens.
    members: Vec<ReqId>,
    next_to_finish: usize,
    decode_steps_done: u64,
    decode_steps_total: u64,
    context: u64,
    blocks: u64,
}

impl StaticBatch {
    /// Members still generating.
    pub(super) fn live(&self) -> u64 {
        (self.members.len() - self.next_to_finish) as u64
    }
}

impl Simulation {
    /// Static batching or abstract service: is a batch due now? Arms the timer if not.
    fn batch_due(&mut self, r: usize, max_batch: u64, max_wait_ns: u64) -> bool {
        let q = self.queue_of(r);
        self.prune_queue(q);
        let Some(&oldest) = self.st.queues[q].front() else {
            return false;
        };
        let oldest_arrival = self.st.requests[oldest].arrival_ns;
        let waited = self.st.now - oldest_arrival;
        let full = self.st.queues[q].len() as u64 >= max_batch;
        let rep = &mut self.st.replicas[r];
        if full || waited >= max_wait_ns {
            // The batch leaves now: disarm any pending timer.
            if rep.timer_armed {
                rep.timer_armed = false;
                rep.timer_epoch = rep.timer_epoch.wrapping_add(1);
            }
            return true;
        }
        if !rep.timer_armed {
            rep.timer_armed = true;
            self.st.events.push(
                later(oldest_arrival, max_wait_ns),
                Event::BatchTimer {
                    replica: r as u32,
                    epoch: rep.timer_epoch,
                },
            );
        }
        false
    }

    pub(super) fn start_abstract(&mut self, r: usize) -> Option<u64> {
        let (max_batch, max_wait_ns) = match pool!(self, r).policy {
            Policy::Static {
                max_batch,
                max_wait_ns,
            } => (max_batch, max_wait_ns),
            Policy::Iteration { .. } => (1, 0),
        };
        if !self.batch_due(r, max_batch, max_wait_ns) {
            return None;
        }
        let q = self.queue_of(r);
        let mut members = std::mem::take(&mut self.st.replicas[r].abstract_members);
        members.clear();
        while (members.len() as u64) < max_batch {
            self.prune_queue(q);
            let Some(id) = self.st.queues[q].pop_front() else {
                break;
            };
            self.admit(id, r);
            self.st.requests[id].phase = Phase::Batched;
            members.push(id);
        }
        self.st.replicas[r].abstract_members = members;
        let Service::Abstract { time, .. } = &pool!(self, r).service else {
            return None;
        };
        Some(secs_to_ns(time.sample(&mut self.st.rng.jitter)))
    }

    pub(super) fn start_static(&mut self, r: usize) -> Option<u64> {
        let Policy::Static {
            max_batch,
            max_wait_ns,
        } = pool!(self, r).policy
        else {
            return None;
        };
        if let Some(batch) = &self.st.replicas[r].static_batch {
            // Next decode step of the batch in progress: every slot computes,
            // finished members included (the padding static batching wastes).
            let size = batch.members.len() as u64;
            let shape = BatchShape {
                decode_seqs: size,
                decode_context_tokens: batch.context,
                ..BatchShape::default()
            };
            self.st.replicas[r].pass.static_prefill = false;
            return Some(self.time_pass(r, &shape, size));
        }
        if !self.batch_due(r, max_batch, max_wait_ns) {
            return None;
        }
        let q = self.queue_of(r);
        let mut members = Vec::new();
        let mut blocks = 0u64;
        let mut shape = BatchShape::default();
        while (members.len() as u64) < max_batch {
            self.prune_queue(q);
            let Some(&id) = self.st.queues[q].front() else {
                break;
            };
            let req = &self.st.requests[id];
            // Static batches reserve prompt + max_tokens (+ any reasoning) up
            // front (no server knows an answer's length in advance): no preemption.
            let max_tokens = self.cfg.classes[req.class as usize].max_tokens;
            let need = blocks_for(
                u64::from(req.input_tokens)
                    + u64::from(
                        max_tokens
                            .saturating_add(req.reasoning)
                            .max(req.output_tokens),
                    ),
            ) + pool!(self, r).seq_kv_blocks;
            if need > pool!(self, r).kv_blocks {
                self.st.queues[q].pop_front();
                self.st.waiting -= 1;
                self.reject_too_long(id);
                continue;
            }
            if self.st.replicas[r].kv_used + blocks + need > pool!(self, r).kv_blocks {
                break;
            }
            self.st.queues[q].pop_front();
            self.admit(id, r);
            blocks += need;
            let req = &mut self.st.requests[id];
            let input = u64::from(req.input_tokens);
            shape.prefill_tokens += input;
            shape.prefill_attention_pairs += input * input / 2;
            req.phase = Phase::Batched;
            members.push(id);
        }
        if members.is_empty() {
            return None;
        }
        let reqs = &self.st.requests;
        members.sort_by_key(|&id| (reqs[id].output_tokens, id.index()));
        let longest = members
            .last()
            .map_or(1, |&id| u64::from(reqs[id].output_tokens));
        let context = shape.prefill_tokens;
        shape.prefill_seqs = members.len() as u64;
        self.st.replicas[r].kv_used += blocks;
        debug_assert!(
            self.st.replicas[r].kv_used <= pool!(self, r).kv_blocks,
            "a static batch reserved more KV blocks than the replica holds"
        );
        let size = members.len() as u64;
        self.st.replicas[r].static_batch = Some(StaticBatch {
            members,
            next_to_finish: 0,
            decode_steps_done: 0,
            decode_steps_total: longest - 1,
            context,
            blocks,
        });
        self.st.replicas[r].pass.static_prefill = true;
        Some(self.time_pass(r, &shape, size))
    }

    pub(super) fn finish_abstract(&mut self, r: usize) {
        let now = self.st.now;
        let start = self.st.replicas[r].pass.start_ns;
        let mut members = std::mem::take(&mut self.st.replicas[r].abstract_members);
        self.rec
            .abstract_pass(self.st.replicas[r].pool, start, now, members.len() as u64);
        for &id in &members {
            let req = &mut self.st.requests[id];
            req.generated = req.output_tokens;
            req.first_token_ns = now;
            let out = u64::from(req.output_tokens);
            self.rec.windows.tokens(now, out);
            self.complete(id);
        }
        members.clear();
        self.st.replicas[r].abstract_members = members;
    }

    pub(super) fn finish_static(&mut self, r: usize) {
        let Some(mut batch) = self.st.replicas[r].static_batch.take() else {
            return;
        };
        let now = self.st.now;
        if self.st.replicas[r].pass.static_prefill {
            for &id in &batch.members {
                let req = &mut self.st.requests[id];
                req.first_token_ns = now;
                req.generated = 1;
            }
            self.rec.windows.tokens(now, batch.members.len() as u64);
        } else {
            batch.decode_steps_done += 1;
            batch.context += batch.members.len() as u64;
            self.rec.windows.tokens(now, batch.live());
            for &id in &batch.members[batch.next_to_finish..] {
                self.st.requests[id].generated += 1;
            }
        }
        while let Some(&id) = batch.members.get(batch.next_to_finish) {
            if u64::from(self.st.requests[id].output_tokens) > batch.decode_steps_done + 1 {
                break;
            }
            batch.next_to_finish += 1;
            self.complete(id);
        }
        debug_assert!(batch.decode_steps_done <= batch.decode_steps_total);
        if batch.decode_steps_done >= batch.decode_steps_total {
            debug_assert_eq!(
                batch.live(),
                0,
                "a static batch ended with members still generating"
            );
            self.st.replicas[r].kv_used -= batch.blocks;
        } else {
            self.st.replicas[r].static_batch = Some(batch);
        }
    }
}
