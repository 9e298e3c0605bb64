//! Prefill/decode disaggregation in the engine: a prefill pool's finished
//! prompt goes to a decode replica's queue with its KV cache still on the
//! prefill replica; the decode replica admits it when its cache has room for
//! the prompt, pulls the blocks over the link (transfers into one replica
//! take turns on its link), and the prefill replica frees them when the pull
//! ends. The request then joins the decode replica's next pass, which
//! recomputes the prompt's last token and samples the first output token.
//!
//! A request is held on two replicas only while its cache moves: `remote`
//! names the prefill replica until then, and [`Simulation::release_remote`]
//! is the one place its blocks there are freed (on arrival, or when the
//! request is dropped, refused or given up on first).

use super::decode::ONE_TOKEN;
use super::request::{NO_REMOTE, Phase, ReqId};
use super::{Event, Simulation, blocks_for, later};
use crate::scenario::ValidScenario;

/// A prefill pool's hand-off, ready to run.
#[derive(Clone, Copy, Debug)]
pub(super) struct DisaggregationCfg {
    /// The decode pool.
    pub(super) to: u16,
    /// Bytes per second one pull moves.
    pub(super) bytes_per_s: f64,
    /// Fixed time of one pull, ns.
    pub(super) latency_ns: u64,
    /// KV bytes per prompt token (layers that keep the whole context).
    pub(super) kv_bytes_per_token: f64,
    /// Sliding-window layers: (window tokens, bytes per token in them).
    pub(super) sliding: Option<(f64, f64)>,
}

impl DisaggregationCfg {
    /// Pool `index`'s hand-off, if it prefills for another pool.
    pub(super) fn of(scenario: &ValidScenario, index: usize) -> Option<DisaggregationCfg> {
        let to = scenario.decode_pool_of(index)?;
        let (p, d) = (scenario.pool(index), scenario.pool(to));
        let h = p.disaggregation.as_ref()?;
        let (bytes_per_s, latency_s) =
            h.link
                .rate(&p.gpu, p.gpus_per_replica, &d.gpu, d.gpus_per_replica);
        let dims = p.model.dims();
        let sliding = dims.sliding_window.map(|w| {
            (
                f64::from(w.window),
                dims.sliding_kv_bytes_per_token(p.kv_cache),
            )
        });
        Some(DisaggregationCfg {
            to: to as u16,
            bytes_per_s,
            latency_ns: super::secs_to_ns(latency_s),
            kv_bytes_per_token: dims.kv_bytes_per_token(p.kv_cache),
            sliding,
        })
    }

    /// Bytes of KV cache `tokens` context tokens hold.
    pub(super) fn bytes(&self, tokens: u64) -> f64 {
        let t = tokens as f64;
        t * self.kv_bytes_per_token + self.sliding.map_or(0.0, |(w, b)| t.min(w) * b)
    }
}

/// Tokens of a prompt whose cache moves: all but the last, which the decode
/// replica recomputes to sample the first token.
fn moved_tokens(input: u32) -> u64 {
    u64::from(input.saturating_sub(1))
}

impl Simulation {
    /// Prefill replica `r` finished request `id`'s prompt: it leaves the
    /// replica's batch (its blocks stay until pulled) for a decode
    /// replica's queue.
    pub(super) fn hand_off(&mut self, r: usize, id: ReqId, to: u16) {
        let req = &mut self.st.requests[id];
        // The prefill pool's throughput is the prompts it hands off.
        let from = usize::from(req.pool);
        if let Some(m) = self.rec.pools.get_mut(from) {
            m.input_tokens += u64::from(req.input_tokens);
        }
        req.phase = Phase::Waiting;
        req.remote = r as u32;
        req.pool = to;
        req.replica = None;
        req.prefilled = 0;
        req.prefill_target = req.input_tokens;
        let rep = &mut self.st.replicas[r];
        rep.running -= 1;
        rep.outstanding -= 1;
        self.touch(r);
        let d = self.pick_replica(id, usize::from(to)) as usize;
        if self.st.queues[d].len() as u64 >= self.cfg.pools[usize::from(to)].max_queue {
            self.release_remote(id);
            self.reject(id);
            return;
        }
        self.st.requests[id].replica = Some(d as u32);
        self.st.replicas[d].outstanding += 1;
        let level = self.level(id);
        self.st.queues[d].push_back(level, id);
        self.st.waiting += 1;
        self.touch(d);
        if !self.st.replicas[d].busy {
            self.try_start(d);
        }
    }

    /// Decode replica `r` admits handed-off request `id` (at its queue's
    /// head) if its cache has room for the moved prompt: it takes the
    /// blocks and starts the pull. False when admission must wait for
    /// memory; true when the request left the queue (admitted or refused).
    pub(super) fn admit_handoff(&mut self, r: usize, id: ReqId, q: usize) -> bool {
        let tokens = moved_tokens(self.st.requests[id].input_tokens);
        let pool = &pool!(self, r);
        let need = blocks_for(tokens) + pool.seq_kv_blocks;
        if need > pool.kv_blocks {
            self.st.queues[q].pop_front();
            self.st.waiting -= 1;
            self.release_remote(id);
            self.reject_too_long(id);
            return true;
        }
        let rep = &self.st.replicas[r];
        let idle = rep.decoding.is_empty() && rep.prefilling.is_empty() && rep.transferring == 0;
        let reserve = if idle { 0 } else { pool.kv_watermark };
        if rep.kv_used + need + reserve > pool.kv_blocks {
            return false;
        }
        self.st.queues[q].pop_front();
        self.admit(id, r);
        self.take_blocks(r, need);
        self.st.requests[id].phase = Phase::Transferring;
        self.st.requests[id].pulled_ns = self.st.now;
        let h = self.pull_of(id);
        debug_assert!(h.is_some(), "a handed-off request came from a prefill pool");
        let (bytes, wire, latency) = h.map_or((0.0, 0, 0), |h| {
            let bytes = h.bytes(tokens);
            (
                bytes,
                super::secs_to_ns(bytes / h.bytes_per_s),
                h.latency_ns,
            )
        });
        let now = self.st.now;
        let rep = &mut self.st.replicas[r];
        rep.transferring += 1;
        // Pulls into one replica take turns on its link.
        let start = rep.link_free_ns.max(now);
        rep.link_free_ns = later(start, wire);
        let done = later(later(start, wire), latency);
        self.rec.disaggregation.started(now, bytes);
        self.st.events.push(done, Event::KvArrived { req: id });
        true
    }

    /// Request `id`'s cache reached its decode replica: the prefill replica
    /// frees it, and the request joins the decode replica's next pass.
    pub(super) fn kv_arrived(&mut self, id: ReqId) {
        let req = &self.st.requests[id];
        let Some(r) = req.replica.map(|r| r as usize) else {
            debug_assert!(false, "a pulling request has its decode replica");
            return;
        };
        let bytes = self
            .pull_of(id)
            .map_or(0.0, |h| h.bytes(moved_tokens(req.input_tokens)));
        let took = self.st.now - req.pulled_ns;
        self.rec.disaggregation.arrived(self.st.now, bytes, took);
        self.release_remote(id);
        if self.st.requests[id].abandoned {
            // Its blocks are free: a request waiting for memory may fit.
            self.st.replicas[r].transferring -= 1;
            self.drop_pulled(r, id);
        } else {
            self.st.replicas[r].arrived.push(id);
        }
        if !self.st.replicas[r].busy {
            self.try_start(r);
        }
    }

    /// The hand-off that times request `id`'s pull: that of the prefill
    /// pool still holding its prompt (None once nothing does).
    fn pull_of(&self, id: ReqId) -> Option<DisaggregationCfg> {
        let from = self.st.requests[id].remote;
        if from == NO_REMOTE {
            return None;
        }
        self.cfg.pools[usize::from(self.st.replicas[from as usize].pool)].disaggregation
    }

    /// At pass formation on decode replica `r`: requests whose cache has
    /// arrived join the decoding set (context: the moved prompt; the pass
    /// recomputes the last prompt token and samples the first output one).
    pub(super) fn join_arrived(&mut self, r: usize) {
        if self.st.replicas[r].arrived.is_empty() {
            return;
        }
        let arrived = std::mem::take(&mut self.st.replicas[r].arrived);
        for &id in &arrived {
            self.st.replicas[r].transferring -= 1;
            if self.st.requests[id].abandoned {
                self.drop_pulled(r, id);
                continue;
            }
            let req = &mut self.st.requests[id];
            req.phase = Phase::Decoding;
            req.generated = 0;
            let context = moved_tokens(req.input_tokens);
            let left = u64::from(req.output_tokens.max(1));
            let rep = &mut self.st.replicas[r];
            req.joined =
                rep.decoding
                    .join(id, req.admit_order, req.epoch, context, left, ONE_TOKEN);
            rep.first_pending.push((id, req.epoch));
        }
        let mut arrived = arrived;
        arrived.clear();
        self.st.replicas[r].arrived = arrived;
    }

    /// After a decode pass on replica `r`: the sequences that joined it
    /// from a hand-off have their first token now.
    pub(super) fn first_tokens_of_joined(&mut self, r: usize) {
        if self.st.replicas[r].first_pending.is_empty() {
            return;
        }
        let now = self.st.now;
        let pending = std::mem::take(&mut self.st.replicas[r].first_pending);
        for &(id, epoch) in &pending {
            if !self.st.requests.contains(id) {
                continue;
            }
            let req = &mut self.st.requests[id];
            if req.epoch == epoch
                && req.phase == Phase::Decoding
                && req.replica == Some(r as u32)
                && req.first_token_ns == u64::MAX
            {
                req.first_token_ns = now;
            }
        }
        let mut pending = pending;
        pending.clear();
        self.st.replicas[r].first_pending = pending;
    }

    /// Free what the prefill replica still holds of request `id`'s prompt,
    /// if it holds anything (the one place those blocks are freed).
    pub(super) fn release_remote(&mut self, id: ReqId) {
        let req = &mut self.st.requests[id];
        if req.remote == NO_REMOTE {
            return;
        }
        let p = req.remote as usize;
        req.remote = NO_REMOTE;
        let tokens = u64::from(req.input_tokens);
        self.free_blocks(p, id, tokens, true);
        if !self.st.replicas[p].busy {
            self.try_start(p);
        }
    }

    /// A pulled request whose client gave up: it frees its blocks on decode
    /// replica `r` and is forgotten.
    fn drop_pulled(&mut self, r: usize, id: ReqId) {
        let tokens = moved_tokens(self.st.requests[id].input_tokens);
        self.free_blocks(r, id, tokens, false);
        self.st.abandoned_running -= 1;
        let rep = &mut self.st.replicas[r];
        rep.running -= 1;
        rep.outstanding -= 1;
        self.touch(r);
        self.forget(id);
    }
}
