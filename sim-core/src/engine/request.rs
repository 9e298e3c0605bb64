//! A request's lifecycle: created by a task, admitted by a replica (or sent to
//! an API tier), completed, rejected or failed; starting a task and sending
//! its calls (its record is in `task.rs`).

use super::BLOCK;
use super::prefix::PromptIdentity;
use super::recorder::{ArrivalRecord, Sample};
use super::slab::Key;
use super::task::{Caller, Task, TaskId};
use super::{Event, Simulation, later, secs_to_ns};
use crate::api::Service;
use crate::scenario::bounds;

/// A request in flight.
pub(super) type ReqId = Key<Request>;

/// Where a request is in its life. A request is in exactly one phase; the
/// containers that hold it (queues, the decoding set, a batch) agree with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// In a fleet queue or the API client's queue, or waiting for a retry.
    Waiting,
    /// Admitted; its prompt (or its recomputation) is being prefilled.
    Prefilling,
    /// Generating one token per decode step.
    Decoding,
    /// In a static batch, an abstract service period, or at an API provider.
    Batched,
    /// Admitted by a decode replica, its prompt's KV cache on the way from
    /// the prefill replica (or arrived, joining the next pass).
    Transferring,
}

/// Where a class is served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Backend {
    /// A self-hosted pool, by index.
    Pool(u16),
    /// A hosted API tier, and which of its services.
    Api { tier: u16, service: Service },
}

/// Where a sequence joined: its context then, and the step then.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Joined {
    pub(super) c0: u64,
    pub(super) k0: u64,
}

impl Joined {
    pub(super) fn phase(self) -> usize {
        ((self.c0 % BLOCK + BLOCK - self.k0 % BLOCK) % BLOCK) as usize
    }
}

/// No prefill replica holds the request's prompt.
pub(super) const NO_REMOTE: u32 = u32::MAX;

/// Laid out by hand (`repr(C)`), in the order a request's life reads its
/// fields: a request that waited minutes of simulated time in a long queue
/// has left the processor's caches, and the fields its queue's head and its
/// admission read sit in its first 64 bytes, so admitting it costs one trip
/// to memory, not three; its prefill and decode read the next 64. A test
/// (`layout` below) keeps it so. Aligned to a cache line, so no record
/// straddles one more than its size needs.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub(super) struct Request {
    // First cache line: the queue's head and admission.
    pub(super) arrival_ns: u64,
    /// First admission (`u64::MAX` until then).
    pub(super) admitted_ns: u64,
    pub(super) admit_order: u64,
    /// The replica that holds it (always set once admitted; set at routing
    /// unless a central queue holds it).
    pub(super) replica: Option<u32>,
    /// The prefill replica still holding its prompt's KV cache, after a
    /// hand-off and until the decode replica has pulled it
    /// ([`NO_REMOTE`] otherwise).
    pub(super) remote: u32,
    /// Tokens the next prefill must process (the prompt, or prompt + generated after a preemption).
    pub(super) prefill_target: u32,
    pub(super) input_tokens: u32,
    pub(super) prefilled: u32,
    /// A replayed trace's request: its prefix-block hashes' slot in the
    /// run's table ([`super::prefix::PrefixHashes`]), until it leaves.
    pub(super) hashes: Option<u32>,
    pub(super) class: u16,
    /// The pool serving it, if it went to one (else 0).
    pub(super) pool: u16,
    pub(super) phase: Phase,
    /// Its client gave up; its container drops it when it next reaches it.
    pub(super) abandoned: bool,
    // Second cache line: prefill, decode and completion.
    /// First token (`u64::MAX` until then).
    pub(super) first_token_ns: u64,
    /// Context and decode step when decoding began.
    pub(super) joined: Joined,
    /// The task it is a call of; none when the task is this one call, from
    /// no closed-loop user and no conversation: such a task starts when its
    /// call arrives and ends when it completes, and keeps no record of its
    /// own (at launch-day-gpus' peak, 300,000 fewer records in memory, each
    /// last touched minutes of simulated time before its call completes).
    pub(super) task: Option<TaskId>,
    /// Tokens it generates: its hidden reasoning, then its visible answer.
    pub(super) output_tokens: u32,
    pub(super) generated: u32,
    /// Bumped on preemption so stale finish-heap entries are skipped.
    pub(super) epoch: u32,
    /// Of those, the hidden reasoning tokens before the answer.
    pub(super) reasoning: u32,
    /// Prompt tokens before this call's new question (a conversation's
    /// history, or the shared system prompt): the part other prompts may share.
    pub(super) before: u32,
    /// How many of its prompt's leading KV blocks it holds through the prefix
    /// cache (their keys follow from its identity).
    pub(super) shared: u32,
    /// Speculative decoding: the KV blocks taken at admission for what one
    /// token a step does not allocate (0 without).
    pub(super) speculative_blocks: u32,
    /// API tier serving the request, if it went to one.
    pub(super) tier: Option<u16>,
    // The rest: features a plain run does not use, and its identity.
    /// Speculative decoding: tokens its decode steps make after the
    /// prompt's, and the steps they take.
    pub(super) speculative_left: u32,
    pub(super) speculative_steps: u32,
    /// Which shared system prompt its prompt starts with (its task's).
    pub(super) prefix_group: u32,
    /// When its decode replica admitted it and started the pull.
    pub(super) pulled_ns: u64,
    /// Its place among the run's requests (0 first): it seeds the request's
    /// own random streams.
    pub(super) serial: u64,
    /// At an API provider: when its last token is due (`u64::MAX` until sent).
    pub(super) api_done_ns: u64,
    /// At an API provider: prompt tokens read from its prompt cache, and
    /// written to it at the write price (both 0 without a cache).
    pub(super) api_cached: u32,
    pub(super) api_written: u32,
    /// Output tokens the rate limiter reserved at admission (≤ `max_tokens`).
    pub(super) output_reserved: u32,
    /// 429s received so far (retries are bounded far below `u16::MAX`).
    pub(super) attempts: u16,
    /// The tier's service it was sent to (its fast or flex variant).
    pub(super) service: Service,
    /// Admitted on its tier's provisioned units (not its pay-as-you-go).
    pub(super) provisioned: bool,
    /// Its hedge (`provider_hedge`): none yet, armed, spent, or won.
    pub(super) hedge: u8,
    /// At an API provider: its attempt is coming back as an error.
    pub(super) api_error: bool,
    /// Times it fell back from a tier that gave up on it (at most the
    /// chain's length, `api::MAX_FALLBACKS`).
    pub(super) fallbacks: u8,
}

/// A replayed trace's request: its lengths, and its hashes' slot when it
/// names prefix blocks.
#[derive(Clone, Copy, Debug)]
pub(super) struct Recorded {
    pub(super) input: u32,
    pub(super) output: u32,
    pub(super) hashes: Option<u32>,
}

impl Simulation {
    #[inline]
    pub(super) fn start_task(&mut self, class: u16, user: Option<u32>, given: Option<Recorded>) {
        let spec = &self.cfg.classes[class as usize];
        let calls = spec.calls;
        let prefix_group = match spec.shared_prefix {
            Some((prompts, _)) if prompts > 1 => {
                let u = self.st.rng.prefix.uniform();
                ((u * f64::from(prompts)) as u32).min(prompts - 1)
            }
            _ => 0,
        };
        let conversation = spec.turn_think.is_some().then(|| {
            self.st.conversations += 1;
            (self.st.conversations, 0)
        });
        let route_u = if self.cfg.splits {
            self.st.rng.routing.uniform()
        } else {
            0.0
        };
        let task = Task {
            class,
            start_ns: self.st.now,
            calls_left: calls,
            user,
            prefix_group,
            conversation,
            route_u,
        };
        // One call, nobody waiting on it, no conversation: the call is the
        // task, and no record is kept.
        let keep = calls > 1 || user.is_some() || conversation.is_some();
        let caller = if keep {
            let id = self.st.tasks.insert(task);
            Caller::next_of(id, &self.st.tasks[id])
        } else {
            Caller::of(None, &task)
        };
        self.new_request(caller, given);
    }

    /// Task `task`'s next call.
    pub(super) fn next_call(&mut self, task: TaskId) {
        let caller = Caller::next_of(task, &self.st.tasks[task]);
        self.new_request(caller, None);
    }

    /// A call of `caller`: sample its lengths (unless a trace gives them) and
    /// send it to its backend.
    fn new_request(&mut self, caller: Caller, given: Option<Recorded>) {
        let Caller {
            task,
            class,
            prefix_group,
            conversation,
            route_u,
        } = caller;
        let spec = &self.cfg.classes[class as usize];
        let (question, output, hashes) = match given {
            Some(g) => (g.input, g.output, g.hashes),
            None => {
                let rng = &mut self.st.rng.lengths;
                let i = spec.input.sample_tokens(rng, bounds::TOKENS);
                let o = spec.output.sample_tokens(rng, spec.max_tokens);
                (i, o, None)
            }
        };
        // The prompt: the shared system prompt (or, after a conversation's
        // first turn, its whole history, which starts with it), then the question.
        let before = match conversation {
            Some((_, history)) if history > 0 => history,
            _ => spec.shared_prefix.map_or(0, |(_, tokens)| tokens),
        };
        let input = before.saturating_add(question).min(bounds::TOKENS);
        let reasoning = match &spec.reasoning {
            Some(r) => r.sample_tokens(&mut self.st.rng.reasoning, bounds::TOKENS),
            None => 0,
        };
        let output = output.saturating_add(reasoning);
        let now = self.st.now;
        let id = self.st.requests.insert(Request {
            task,
            class,
            input_tokens: input,
            output_tokens: output,
            reasoning,
            arrival_ns: now,
            admitted_ns: u64::MAX,
            first_token_ns: u64::MAX,
            replica: None,
            prefill_target: input,
            prefilled: 0,
            generated: 0,
            joined: Joined::default(),
            admit_order: 0,
            epoch: 0,
            phase: Phase::Waiting,
            tier: None,
            pool: 0,
            service: Service::Standard,
            provisioned: false,
            hedge: 0,
            attempts: 0,
            output_reserved: 0,
            before,
            shared: 0,
            abandoned: false,
            api_done_ns: u64::MAX,
            api_cached: 0,
            api_written: 0,
            api_error: false,
            fallbacks: 0,
            hashes,
            remote: NO_REMOTE,
            pulled_ns: 0,
            speculative_left: 0,
            speculative_steps: 0,
            speculative_blocks: 0,
            serial: self.rec.arrived,
            prefix_group,
        });
        self.rec.arrived += 1;
        self.rec.windows.arrival(now);
        if self.st.requests.len() > bounds::IN_FLIGHT {
            // Memory bound: refuse rather than hold more than IN_FLIGHT at once.
            self.rec.rejected_in_flight += 1;
            self.reject(id);
            return;
        }
        if let Some(t) = self.cfg.classes[class as usize].timeout_ns {
            self.arm_timeout(class, id, later(now, t));
        }
        self.rec.trace_arrival(ArrivalRecord {
            at_ns: now,
            class,
            input_tokens: input,
            output_tokens: output,
        });
        match self.choose_backend(class, input, route_u) {
            Backend::Api { tier, service } => self.api_submit(id, tier, service),
            Backend::Pool(p) => self.send_to_pool(id, p),
        }
    }

    /// Send request `id` to self-hosted pool `p`: through its front end, or
    /// straight to its router.
    pub(super) fn send_to_pool(&mut self, id: ReqId, p: u16) {
        self.st.requests[id].pool = p;
        let frontend = self.cfg.pools[usize::from(p)].frontend_in_ns;
        if frontend > 0 {
            // The serving software's front end first (HTTP, tokenisation).
            self.st.waiting += 1;
            self.st.in_frontend += 1;
            let at = later(self.st.now, frontend);
            self.st.events.push(at, Event::Enqueue { req: id });
        } else {
            self.route(id);
        }
    }

    /// A replica takes a waiting request.
    #[inline]
    pub(super) fn admit(&mut self, id: ReqId, r: usize) {
        let order = self.st.admit_counter;
        self.st.admit_counter += 1;
        let now = self.st.now;
        let req = &mut self.st.requests[id];
        debug_assert_eq!(req.phase, Phase::Waiting, "admitting a request twice");
        if req.admitted_ns == u64::MAX {
            req.admitted_ns = now;
        }
        if req.replica != Some(r as u32) {
            // Central queue: the request now belongs to this replica.
            req.replica = Some(r as u32);
            self.st.replicas[r].outstanding += 1;
        }
        // Preemption takes the largest: the least urgent level, then the
        // newest (with one level, the newest).
        let level = self.cfg.pools[usize::from(req.pool)].level_of[req.class as usize];
        req.admit_order = (u64::from(level) << 56) | order;
        self.st.replicas[r].running += 1;
        self.st.waiting -= 1;
        self.touch(r);
    }

    /// A request's last token: record it and continue (or end) its task.
    pub(super) fn complete(&mut self, id: ReqId) {
        if self.st.requests[id].abandoned {
            // Its client gave up before this last token: nobody is told.
            self.drop_abandoned_running(id);
            return;
        }
        let req = &self.st.requests[id];
        // The client sees tokens after the serving software's front end
        // (detokenisation, streaming); API tiers' latencies include theirs.
        let seen = if req.tier.is_none() {
            self.cfg.pools[usize::from(req.pool)].frontend_out_ns
        } else {
            0
        };
        let now = later(self.st.now, seen);
        let ttft_ns = later(req.first_token_ns, seen) - req.arrival_ns;
        let sample = Sample {
            class: req.class,
            pool: req.tier.is_none().then_some(req.pool),
            arrival_ns: req.arrival_ns,
            ttft_ns,
            // A batch result arrives whole: no time per token.
            tpot_ns: (req.output_tokens > 1 && self.st.now > req.first_token_ns)
                .then(|| (self.st.now - req.first_token_ns) / u64::from(req.output_tokens - 1)),
            e2e_ns: now - req.arrival_ns,
            wait_ns: req.admitted_ns - req.arrival_ns,
            thinking_ns: (req.reasoning > 0).then(|| {
                // The first visible token is the (reasoning + 1)-th: the
                // request's own mean time per token after the first, that many times.
                let per = u128::from(self.st.now - req.first_token_ns);
                let n = u128::from(req.output_tokens - 1).max(1);
                u64::try_from(per * u128::from(req.reasoning) / n).unwrap_or(u64::MAX)
            }),
        };
        let (input, output, task) = (req.input_tokens, req.output_tokens, req.task);
        if let Some(r) = req.replica {
            let rep = &mut self.st.replicas[r as usize];
            rep.running -= 1;
            rep.outstanding -= 1;
            self.touch(r as usize);
        }
        self.remove_request(id);
        let (slo_ttft_ns, slo_tpot_ns) = self.cfg.classes[sample.class as usize].slo_ns;
        let met = (
            sample.visible_ns() <= slo_ttft_ns,
            sample.tpot_ns.is_none_or(|t| t <= slo_tpot_ns),
        );
        if let Some(w) = &mut self.st.watch {
            w.ttft_missed += u64::from(sample.visible_ns() > w.ttft_ns);
            w.tpot_missed += u64::from(sample.tpot_ns.is_some_and(|t| t > w.tpot_ns));
        }
        self.rec
            .completion(now, &sample, met, u64::from(input), u64::from(output));
        self.rec.last_work_ns = now;
        let Some(task_id) = task else {
            // The task was this call.
            self.rec.task_done(sample.class, now - sample.arrival_ns);
            return;
        };

        let task = &mut self.st.tasks[task_id];
        task.calls_left -= 1;
        if let Some((c, _)) = task.conversation {
            // The next turn sends this prompt and its answer again.
            task.conversation = Some((c, input.saturating_add(output)));
        }
        if task.calls_left > 0 {
            let class = task.class as usize;
            match &self.cfg.classes[class].turn_think {
                // A conversation: the user reads, thinks, asks the next question.
                Some(think) => {
                    let t = secs_to_ns(think.sample(&mut self.st.rng.turns));
                    self.st
                        .events
                        .push(later(now, t), Event::NextCall { task: task_id });
                }
                // An agent chain: the next call goes out as soon as the client
                // has this one's answer.
                None if seen > 0 => self.st.events.push(now, Event::NextCall { task: task_id }),
                None => self.next_call(task_id),
            }
            return;
        }
        let (class, start, user) = (task.class, task.start_ns, task.user);
        self.st.tasks.remove(task_id);
        self.rec.task_done(class, now - start);
        self.rec.last_work_ns = now;
        self.user_done(user, false, seen);
    }

    pub(super) fn reject(&mut self, id: ReqId) {
        let class = self.st.requests[id].class;
        self.rec.rejected += 1;
        for m in self.rec.metrics(class) {
            m.rejected += 1;
        }
        self.drop_request(id);
    }

    /// Free a request that will not complete, and end its task (an agent chain
    /// stops at its first lost call); a closed-loop user thinks and tries again.
    pub(super) fn drop_request(&mut self, id: ReqId) {
        self.release_remote(id);
        let task = self.st.requests[id].task;
        self.remove_request(id);
        let user = task.and_then(|t| self.st.tasks[t].user);
        if let Some(t) = task {
            self.st.tasks.remove(t);
        }
        self.rec.last_work_ns = self.st.now;
        self.user_done(user, true, 0);
    }

    /// A request no replica's KV cache can ever hold.
    pub(super) fn reject_too_long(&mut self, id: ReqId) {
        self.rec.rejected_too_long += 1;
        if let Some(r) = self.st.requests[id].replica {
            self.st.replicas[r as usize].outstanding -= 1;
            self.touch(r as usize);
        }
        self.reject(id);
    }
}

impl Simulation {
    /// Forget request `id` (it left): its slot, and its hashes' slot.
    pub(super) fn remove_request(&mut self, id: ReqId) {
        if let Some(slot) = self.st.requests[id].hashes {
            self.st.prefix_hashes.release(slot);
        }
        self.st.requests.remove(id);
    }

    /// Request `id`'s priority level (0 the most urgent).
    pub(super) fn level(&self, id: ReqId) -> u8 {
        let req = &self.st.requests[id];
        self.cfg.pools[usize::from(req.pool)].level_of[req.class as usize]
    }

    /// Whether request `id`'s prompt can share anything with others (a
    /// shared system prompt, a conversation, a trace's hashes): what
    /// [`Self::identity`] would call shareable, read from its class and
    /// itself alone, without its task.
    pub(super) fn shares_prefix(&self, id: ReqId) -> bool {
        let req = &self.st.requests[id];
        let class = &self.cfg.classes[req.class as usize];
        let shares =
            class.shared_prefix.is_some() || class.turn_think.is_some() || req.hashes.is_some();
        debug_assert_eq!(shares, self.identity(id).shareable());
        shares
    }

    /// What request `id`'s prompt shares with others, from its task.
    pub(super) fn identity(&self, id: ReqId) -> PromptIdentity {
        let req = &self.st.requests[id];
        PromptIdentity {
            system: self.cfg.classes[req.class as usize]
                .shared_prefix
                .map(|(_, tokens)| (req.class, req.prefix_group, tokens)),
            conversation: req
                .task
                .and_then(|t| self.st.tasks[t].conversation)
                .map(|(c, _)| (c, req.before)),
            hashed: req.hashes.map(|slot| {
                let h = &self.st.prefix_hashes;
                let len = h.count(slot);
                let covered = u64::from(len) * u64::from(h.blocks_per_hash);
                let blocks = (u64::from(req.input_tokens) / BLOCK).min(covered) as u32;
                (slot, len, blocks)
            }),
        }
    }
}

#[cfg(test)]
mod layout {
    use super::Request;
    use std::mem::{align_of, offset_of, size_of};

    #[test]
    fn admission_reads_one_cache_line_and_decoding_the_next() {
        assert_eq!(align_of::<Request>(), 64);
        // The queue's head and admission: all in bytes 0..64.
        for end in [
            offset_of!(Request, abandoned) + 1,
            offset_of!(Request, hashes) + size_of::<Option<u32>>(),
            offset_of!(Request, prefilled) + 4,
        ] {
            assert!(end <= 64, "an admission field ends at byte {end}");
        }
        // Prefill, decode and completion: bytes 64..128.
        assert_eq!(offset_of!(Request, first_token_ns), 64);
        assert!(offset_of!(Request, tier) + size_of::<Option<u16>>() <= 128);
        assert_eq!(offset_of!(Request, speculative_left), 128);
        assert_eq!(size_of::<Request>(), 192, "three cache lines");
    }
}
