//! Iteration-level batching (vLLM-style): forming each pass from the decoding
//! set, partial prefills and newly admitted prompts; reserving the KV blocks a
//! decode step writes; preemption by recomputation; and applying a finished pass.

use super::policy::Policy;
use super::replica::Pass;
use super::request::{Phase, ReqId};
use super::{Simulation, blocks_for, later};
use crate::physics::BatchShape;
use crate::scenario::Router;

/// The limits of pass formation, from the policy.
#[derive(Clone, Copy)]
struct Limits {
    max_seqs: u64,
    chunk: Option<u64>,
    /// Under async scheduling, when this pass was really formed: a request
    /// that reached the engine after it waits for the next pass.
    formed_at: Option<u64>,
}

impl Simulation {
    /// Continuous batching (with or without chunked prefill), and "none" as the
    /// special case of one sequence at a time. Returns the pass's duration, or
    /// None when there is nothing to run.
    pub(super) fn start_iteration(&mut self, r: usize) -> Option<u64> {
        let Policy::Iteration {
            max_seqs,
            budget,
            chunk,
        } = pool!(self, r).policy
        else {
            return None;
        };
        self.join_arrived(r);
        // Under async scheduling the pass after a busy one was formed when
        // that one was launched — unless nothing would have run in it (no
        // sequence in flight), when vLLM forms it on the spot.
        let rep = &self.st.replicas[r];
        let busy = !rep.decoding.is_empty() || !rep.prefilling.is_empty();
        let lim = Limits {
            max_seqs,
            chunk,
            formed_at: rep.formed_at.filter(|_| busy),
        };
        let mut pass = std::mem::take(&mut self.st.replicas[r].pass);
        pass.chunks.clear();
        pass.decodes = 0;
        let mut shape = BatchShape::default();
        let mut budget_left = budget;
        match chunk {
            None => {
                // vLLM's scheduler without chunked prefill: a pass is either a
                // prefill of newly admitted prompts (decodes pause) or a decode step.
                self.admit_prefills(r, lim, &mut pass, &mut shape, &mut budget_left);
                if pass.chunks.is_empty() && !self.st.replicas[r].decoding.is_empty() {
                    self.reserve_decode_blocks(r);
                    pass.decodes = self.st.replicas[r].decoding.len() as u64;
                    if pass.decodes == 0 {
                        // Reserving refused the only sequence: the cache is free again.
                        self.admit_prefills(r, lim, &mut pass, &mut shape, &mut budget_left);
                    }
                }
            }
            Some(c) => {
                // Decodes first, then partial prefills, then new prompts.
                if !self.st.replicas[r].decoding.is_empty() {
                    self.reserve_decode_blocks(r);
                    pass.decodes = self.st.replicas[r].decoding.len() as u64;
                    budget_left = budget_left.saturating_sub(pass.decodes);
                }
                self.schedule_partial_prefills(r, c, &mut pass, &mut shape, &mut budget_left);
                self.admit_prefills(r, lim, &mut pass, &mut shape, &mut budget_left);
            }
        }
        let decoding = &self.st.replicas[r].decoding;
        shape.decode_seqs = pass.decodes;
        shape.prefill_seqs = pass.chunks.len() as u64;
        if pass.decodes > 0 {
            shape.decode_context_tokens = decoding.context_sum();
        }
        let seqs = pass.decodes + pass.chunks.len() as u64;
        self.st.replicas[r].pass = pass;
        if seqs == 0 {
            return None;
        }
        Some(self.time_pass(r, &shape, seqs))
    }

    /// Admit waiting prompts while sequences, the token budget and the KV cache
    /// allow, adding their first chunk to the pass.
    fn admit_prefills(
        &mut self,
        r: usize,
        lim: Limits,
        pass: &mut Pass,
        shape: &mut BatchShape,
        budget_left: &mut u64,
    ) {
        let q = self.queue_of(r);
        let seqs = |sim: &Simulation| {
            let rep = &sim.st.replicas[r];
            (rep.decoding.len() + rep.prefilling.len()) as u64 + rep.transferring
        };
        while seqs(self) < lim.max_seqs && *budget_left > 0 {
            self.prune_queue(q);
            let Some(&id) = self.st.queues[q].front() else {
                break;
            };
            if self.st.requests[id].remote != super::request::NO_REMOTE {
                // Handed off by a prefill pool: admit it to pull its cache.
                if self.admit_handoff(r, id, q) {
                    continue;
                }
                break;
            }
            if let Some(formed) = lim.formed_at {
                let req = &self.st.requests[id];
                // FCFS: those behind it reached the engine later still (a
                // preempted sequence, back at the front, was known before).
                if req.admitted_ns == u64::MAX
                    && later(req.arrival_ns, pool!(self, r).frontend_in_ns) > formed
                {
                    break;
                }
            }
            let target = u64::from(self.st.requests[id].prefill_target);
            let need = blocks_for(target) + pool!(self, r).seq_kv_blocks;
            if need > pool!(self, r).kv_blocks {
                self.st.queues[q].pop_front();
                self.st.waiting -= 1;
                self.reject_too_long(id);
                continue;
            }
            // Prompt blocks already in the prefix cache need no computing.
            let found = self.lookup(r, id, target);
            let cached = found.cached_tokens;
            let left = target - cached;
            let take = match lim.chunk {
                Some(c) => left.min(c).min(*budget_left),
                // Whole prompts only; the first may exceed the budget alone.
                None if left <= *budget_left || pass.chunks.is_empty() => left,
                None => break,
            };
            // The watermark keeps room for running sequences to grow; with none
            // running there is nothing to protect (and a request larger than
            // capacity − watermark would otherwise wait forever).
            // Blocks for the first chunk only: later chunks allocate their own,
            // as vLLM's V1 scheduler does; cached blocks held now count if idle.
            // A sequence's sliding-window blocks are taken with its first.
            // Under speculative decoding, the blocks its answer needs beyond
            // one token a step are taken now too (0 otherwise).
            let speculative_blocks = self.draw_speculation(r, id, target);
            let first = blocks_for(cached + take) - u64::from(found.hits)
                + pool!(self, r).seq_kv_blocks
                + speculative_blocks;
            let rep = &self.st.replicas[r];
            let idle = rep.decoding.is_empty() && rep.prefilling.is_empty();
            let reserve = if idle { 0 } else { pool!(self, r).kv_watermark };
            if rep.kv_used + found.idle + first + reserve > pool!(self, r).kv_blocks {
                break; // admission waits for memory
            }
            self.st.queues[q].pop_front();
            let req = &self.st.requests[id];
            if req.admitted_ns == u64::MAX {
                self.rec.prompt_tokens += u64::from(req.input_tokens);
                self.rec.cached_prompt_tokens += cached;
            }
            self.admit(id, r);
            self.hold_cached(r, id, found);
            self.take_blocks(r, first);
            let req = &mut self.st.requests[id];
            req.speculative_blocks = speculative_blocks as u32;
            req.prefilled = cached as u32;
            req.phase = Phase::Prefilling;
            self.st.replicas[r].prefilling.push_back(id);
            pass.chunks.push((id, take as u32));
            shape.prefill_tokens += take;
            shape.prefill_cached_tokens += cached;
            // Each new token attends to the cached ones and, causally, to the
            // new ones before it: take · cached + take² / 2 token pairs.
            shape.prefill_attention_pairs += take * (2 * cached + take) / 2;
            *budget_left = budget_left.saturating_sub(take);
        }
    }

    /// Reserve the KV blocks this decode step writes into, preempting the newest
    /// sequences (recompute, vLLM's default) while the cache cannot hold them.
    fn reserve_decode_blocks(&mut self, r: usize) {
        loop {
            let rep = &self.st.replicas[r];
            let need = rep.decoding.blocks_needed_now();
            if rep.kv_used + need <= pool!(self, r).kv_blocks || rep.decoding.is_empty() {
                self.take_blocks(r, need);
                return;
            }
            let Some(decoder) = rep.decoding.newest() else {
                return;
            };
            if rep.decoding.len() == 1 && rep.prefilling.is_empty() {
                // Alone in the cache and still out of room: this sequence can never
                // finish here. Recomputing it would loop forever; refuse it instead.
                self.leave_decoding(r, decoder, false);
                self.st.replicas[r].running -= 1;
                self.reject_too_long(decoder);
                continue;
            }
            // The most recently admitted sequence goes, prefilling or decoding.
            let order = |id: ReqId| self.st.requests[id].admit_order;
            match rep.prefilling.back() {
                Some(&p) if order(p) > order(decoder) => self.preempt_prefill(r),
                _ => self.preempt(r, decoder),
            }
        }
    }

    /// Continue partial prefills, oldest first, each chunk allocating the KV
    /// blocks its tokens need. When memory runs out the newest prefilling
    /// sequence is preempted (possibly the one asking). Decoding sequences are
    /// already in the pass and are not preempted for a prompt chunk.
    fn schedule_partial_prefills(
        &mut self,
        r: usize,
        chunk: u64,
        pass: &mut Pass,
        shape: &mut BatchShape,
        budget_left: &mut u64,
    ) {
        let mut i = 0;
        while i < self.st.replicas[r].prefilling.len() && *budget_left > 0 {
            let id = self.st.replicas[r].prefilling[i];
            let req = &self.st.requests[id];
            let done = u64::from(req.prefilled);
            let take = u64::from(req.prefill_target - req.prefilled)
                .min(chunk)
                .min(*budget_left);
            let need = blocks_for(done + take) - blocks_for(done);
            while self.st.replicas[r].kv_used + need > pool!(self, r).kv_blocks
                && self.st.replicas[r].prefilling.len() > i
            {
                self.preempt_prefill(r);
            }
            if self.st.replicas[r].prefilling.len() <= i {
                break; // it was the newest: preempted itself
            }
            self.take_blocks(r, need);
            pass.chunks.push((id, take as u32));
            shape.prefill_tokens += take;
            shape.prefill_cached_tokens += done;
            shape.prefill_attention_pairs += take * (done + take / 2);
            *budget_left -= take;
            i += 1;
        }
    }

    /// Take a sequence out of the decoding set and free its KV blocks.
    #[inline]
    pub(super) fn leave_decoding(&mut self, r: usize, id: ReqId, finished: bool) -> u64 {
        let req = &self.st.requests[id];
        let (order, joined) = (req.admit_order, req.joined);
        let rate = self.step_rate(r, id);
        let ctx = self.st.replicas[r].decoding.leave(id, order, joined, rate);
        self.free_blocks(r, id, ctx, finished);
        ctx
    }

    /// Preempt a decoding sequence: it keeps the tokens it generated and will
    /// recompute prompt + those tokens, then generate only what remains.
    fn preempt(&mut self, r: usize, id: ReqId) {
        let ctx = self.leave_decoding(r, id, false);
        let made = self.context_made(r, id, ctx);
        let req = &mut self.st.requests[id];
        // Its context holds the prompt and every generated token but the last.
        req.generated = (made + 1 - u64::from(req.input_tokens)) as u32;
        debug_assert!(req.generated < req.output_tokens);
        self.requeue(r, id);
    }

    /// Preempt the newest prefilling sequence, freeing the blocks its chunks hold.
    fn preempt_prefill(&mut self, r: usize) {
        let Some(id) = self.st.replicas[r].prefilling.pop_back() else {
            return;
        };
        let prefilled = u64::from(self.st.requests[id].prefilled);
        self.free_blocks(r, id, prefilled, false);
        self.requeue(r, id);
    }

    /// Send a preempted sequence back to the front of the queue to recompute.
    fn requeue(&mut self, r: usize, id: ReqId) {
        self.rec.preemptions += 1;
        let q = self.queue_of(r);
        let central = pool!(self, r).router == Router::CentralQueue;
        let req = &mut self.st.requests[id];
        req.epoch = req.epoch.wrapping_add(1);
        req.phase = Phase::Waiting;
        req.prefill_target = req.input_tokens + req.generated;
        req.prefilled = 0;
        if central {
            // Back in the shared queue: any replica may take it next.
            req.replica = None;
            self.st.replicas[r].outstanding -= 1;
        }
        self.st.replicas[r].running -= 1;
        // Back to the front of the queue, as vLLM does.
        let level = self.level(id);
        self.st.queues[q].push_front(level, id);
        self.st.waiting += 1;
        self.touch(r);
    }

    /// Apply a finished pass: advance decodes, finish sequences whose last
    /// token it produced, and move fully prefilled prompts to decoding.
    pub(super) fn finish_iteration(&mut self, r: usize) {
        let now = self.st.now;
        let pass = std::mem::take(&mut self.st.replicas[r].pass);
        if pass.decodes > 0 {
            self.finish_decodes(r, pass.decodes);
        }
        let (first_tokens, handed_off) = self.finish_chunks(r, &pass.chunks);
        if first_tokens > 0 || handed_off {
            // Prompts that finished (now decoding, or completed and gone) leave
            // in one sweep, keeping the others' order: O(prefilling) a pass,
            // not O(prefilling) for each finished prompt.
            self.sweep_prefilling(r);
        }
        self.rec.windows.tokens(now, first_tokens);
        let mut pass = pass;
        pass.chunks.clear();
        self.st.replicas[r].pass = pass;
        if !self.st.replicas[r].leaving.is_empty() {
            self.release_leaving(r);
        }
    }

    /// A pass's decode step on replica `r`: its tokens counted, and the
    /// sequences whose last token it made completed.
    fn finish_decodes(&mut self, r: usize, decodes: u64) {
        let now = self.st.now;
        let step = self.st.replicas[r].decoding.advance();
        let made = self.step_tokens_made(r, decodes);
        self.rec.windows.tokens(now, made);
        self.first_tokens_of_joined(r);
        while let Some(f) = self.st.replicas[r].decoding.pop_due(step) {
            let live = self.st.requests.contains(f.id) && {
                let req = &self.st.requests[f.id];
                req.epoch == f.epoch
                    && req.phase == Phase::Decoding
                    && req.replica == Some(r as u32)
            };
            if !live {
                continue; // preempted or refused since: a stale entry
            }
            let ctx = self.leave_decoding(r, f.id, true);
            self.finish_generation(r, f.id, ctx);
            self.complete(f.id);
        }
    }

    /// A pass's prompt chunks on replica `r`: a finished prompt's first
    /// token sampled (or its cache handed off to the decode pool), then its
    /// completion or its joining the decode set. Returns the first tokens
    /// made and whether some prompt was handed off.
    fn finish_chunks(&mut self, r: usize, chunks: &[(ReqId, u32)]) -> (u64, bool) {
        let now = self.st.now;
        let mut first_tokens = 0;
        let mut handed_off = false;
        for &(id, take) in chunks {
            let req = &mut self.st.requests[id];
            req.prefilled += take;
            if req.prefilled < req.prefill_target {
                continue;
            }
            let target = u64::from(req.prefill_target);
            if let Some(h) = pool!(self, r).disaggregation
                && !self.st.requests[id].abandoned
            {
                // A prefill pool: the prompt's cache goes to a decode pool,
                // which samples the first token.
                self.publish_prompt(r, id, target);
                self.hand_off(r, id, h.to);
                handed_off = true;
                continue;
            }
            let req = &mut self.st.requests[id];
            // Prompt done: the pass also sampled the next token.
            req.generated += 1;
            first_tokens += 1;
            if req.first_token_ns == u64::MAX {
                req.first_token_ns = now;
            }
            // It leaves `prefilling` in the sweep below.
            if req.generated >= req.output_tokens {
                self.free_blocks(r, id, target, true);
                self.complete(id);
                continue;
            }
            self.publish_prompt(r, id, target);
            let (left, rate) = self.decode_steps_left(r, id);
            let req = &mut self.st.requests[id];
            let rep = &mut self.st.replicas[r];
            debug_assert_eq!(req.phase, Phase::Prefilling);
            req.phase = Phase::Decoding;
            req.joined = rep
                .decoding
                .join(id, req.admit_order, req.epoch, target, left, rate);
        }
        (first_tokens, handed_off)
    }

    /// Drop from replica `r`'s `prefilling` every sequence no longer
    /// prefilling there (finished, gone or timed out), in order.
    pub(super) fn sweep_prefilling(&mut self, r: usize) {
        let reqs = &self.st.requests;
        self.st.replicas[r].prefilling.retain(|&id| {
            reqs.contains(id) && reqs[id].phase == Phase::Prefilling && !reqs[id].abandoned
        });
    }
}
