//! Requests sent to hosted API tiers: admission against the rate limits, 429s,
//! client retries and the client-side queue, and the provider's own latency.

use super::provider_batch::BatchState;
use super::provider_cache::ProviderCache;
use super::provider_errors::{BreakerState, GaveUp};
use super::provider_units::ProvisionedState;
use super::request::{Phase, ReqId};
use super::{Event, Simulation, later, secs_to_ns};
use crate::api::{
    Api, Charge, ClientPolicy, FlexVariant, LimitStyle, Limiter, PromptCache, Service, input_usd,
    input_usd_parts, input_usd_total,
};
use crate::dist::Sampler;
use crate::rng::{Stream, StreamId};
use std::collections::VecDeque;

/// One tier's configuration and live state.
pub(super) struct TierState {
    pub(super) name: String,
    pub(super) ttft: Sampler,
    pub(super) speed: Sampler,
    pub(super) fast_speed: Option<Sampler>,
    pub(super) fast_price: f64,
    /// Its flex variant, if it has one.
    pub(super) flex: Option<FlexVariant>,
    /// Its provisioned units: their settings, the tokens a minute they have
    /// left, and the requests they served.
    pub(super) provisioned: Option<ProvisionedState>,
    /// Attempts at its flex variant refused for want of capacity (429s).
    pub(super) flex_refused: u64,
    /// Requests it gave up on (retries spent, too large, breaker open):
    /// sent on down the fallback chain, or failed.
    pub(super) gave_up: u64,
    /// Requests sent here whose hedged copy at another tier answered them.
    pub(super) hedged_away: u64,
    pub(super) input_tokens_per_s: f64,
    pub(super) usd_per_mtok_input: f64,
    pub(super) usd_per_token_output: f64,
    /// Whether input read from the prompt cache is left out of the input
    /// TPM (Anthropic).
    pub(super) cached_input_free_of_tpm: bool,
    pub(super) cache: Option<(PromptCache, ProviderCache)>,
    /// The batch queue, when this tier is a batch API.
    pub(super) batch: Option<BatchState>,
    /// Its errors besides 429s.
    pub(super) errors_cfg: Option<crate::api::ProviderErrors>,
    /// The client's breaker for it.
    pub(super) breaker: BreakerState,
    /// Errors it answered with.
    pub(super) errors: u64,
    pub(super) limiter: Limiter,
    /// Requests held by the client: waiting for the limits, or for the concurrency cap.
    pub(super) queue: VecDeque<ReqId>,
    pub(super) in_flight: u64,
    pub(super) release_armed: bool,
    pub(super) release_epoch: u32,
    // Measurements.
    pub(super) requests: u64,
    pub(super) completed: u64,
    pub(super) timed_out: u64,
    pub(super) throttled: u64,
    pub(super) input_tokens: u64,
    pub(super) output_tokens: u64,
    pub(super) usd: f64,
    pub(super) usd_timed_out: f64,
    pub(super) cached_tokens: u64,
    pub(super) written_tokens: u64,
    pub(super) cache_hits: u64,
    pub(super) usd_saved_by_cache: f64,
    pub(super) bill: crate::api::Bill,
}

/// Everything about the API side of a run.
pub(super) struct ApiState {
    pub(super) tiers: Vec<TierState>,
    pub(super) client: ClientPolicy,
    pub(super) cap: u64,
    /// Requests waiting for a retry timer.
    pub(super) retry_pending: u64,
    pub(super) retry_rng: Stream,
    pub(super) latency_rng: Stream,
    /// Whether an attempt is answered with an error.
    pub(super) error_rng: Stream,
    /// Errors (besides 429s) answered, and requests failed after them.
    pub(super) errors: u64,
    pub(super) failed_errors: u64,
    /// Hedges sent, those whose first token came first, and what the
    /// cancelled copies' prompts were billed.
    pub(super) hedges: u64,
    pub(super) hedges_won: u64,
    pub(super) usd_hedges_cancelled: f64,
    /// The client's hedge delay, ns, and the tier its copies go to (none:
    /// the request's own).
    pub(super) hedge_ns: Option<u64>,
    pub(super) hedge_to: Option<u16>,
    /// Requests sent on to `api.fallback`, and how many to each step of
    /// its chain.
    pub(super) fallbacks: u64,
    pub(super) fallbacks_to: Vec<u64>,
    pub(super) fallback_names: Vec<String>,
    /// The client's circuit breaker, if it has one.
    pub(super) breaker: Option<crate::api::Breaker>,
    pub(super) failed_breaker: u64,
    pub(super) attempts: u64,
    pub(super) throttled: u64,
    pub(super) retries: u64,
    pub(super) failed_429: u64,
    pub(super) failed_too_large: u64,
    pub(super) rejected_client: u64,
    pub(super) requests: u64,
}

impl ApiState {
    pub(super) fn new(api: &Api, seed: u64) -> ApiState {
        let tiers = api
            .tiers
            .iter()
            .map(|t| TierState {
                name: t.name.clone(),
                ttft: t.ttft_s.sampler(),
                speed: t.output_tokens_per_s.sampler(),
                fast_speed: t.fast.as_ref().map(|f| f.output_tokens_per_s.sampler()),
                fast_price: t.fast.as_ref().map_or(1.0, |f| f.price_multiplier),
                flex: t.flex.clone(),
                provisioned: t.provisioned.as_ref().map(ProvisionedState::new),
                flex_refused: 0,
                gave_up: 0,
                hedged_away: 0,
                input_tokens_per_s: t.input_tokens_per_s,
                usd_per_mtok_input: t.usd_per_mtok_input,
                usd_per_token_output: t.usd_per_mtok_output / 1e6,
                cached_input_free_of_tpm: t.limits.style == LimitStyle::Anthropic,
                cache: t
                    .prompt_cache
                    .as_ref()
                    .map(|c| (c.clone(), ProviderCache::new(secs_to_ns(c.ttl_s)))),
                batch: t.batch.as_ref().map(BatchState::new),
                errors_cfg: t.errors.clone(),
                breaker: BreakerState::default(),
                errors: 0,
                limiter: Limiter::new(&t.limits, api.rate_limit_multiplier),
                queue: VecDeque::new(),
                in_flight: 0,
                release_armed: false,
                release_epoch: 0,
                requests: 0,
                completed: 0,
                timed_out: 0,
                throttled: 0,
                input_tokens: 0,
                output_tokens: 0,
                usd: 0.0,
                usd_timed_out: 0.0,
                cached_tokens: 0,
                written_tokens: 0,
                cache_hits: 0,
                usd_saved_by_cache: 0.0,
                bill: crate::api::Bill::default(),
            })
            .collect();
        ApiState {
            tiers,
            client: api.client.clone(),
            cap: api.concurrency_cap.map_or(u64::MAX, u64::from),
            retry_pending: 0,
            retry_rng: Stream::new(seed, StreamId::RETRY),
            latency_rng: Stream::new(seed, StreamId::API_LATENCY),
            error_rng: Stream::new(seed, StreamId::API_ERRORS),
            errors: 0,
            failed_errors: 0,
            fallbacks: 0,
            hedges: 0,
            hedges_won: 0,
            usd_hedges_cancelled: 0.0,
            hedge_ns: api.hedge.as_ref().map(|h| secs_to_ns(h.after_s).max(1)),
            hedge_to: api
                .hedge
                .as_ref()
                .and_then(|h| h.to.as_ref())
                .and_then(|to| api.tiers.iter().position(|t| &t.name == to))
                .and_then(|i| u16::try_from(i).ok()),
            fallbacks_to: vec![0; api.fallback.len()],
            fallback_names: api.fallback.clone(),
            breaker: api.breaker.clone(),
            failed_breaker: 0,
            attempts: 0,
            throttled: 0,
            retries: 0,
            failed_429: 0,
            failed_too_large: 0,
            rejected_client: 0,
            requests: 0,
        }
    }

    /// Requests held in the client's queues.
    pub(super) fn queued(&self) -> u64 {
        self.tiers
            .iter()
            .map(|t| (t.queue.len() + t.batch.as_ref().map_or(0, |b| b.waiting.len())) as u64)
            .sum()
    }

    /// Requests held by the client (queued, or waiting to retry) or in flight
    /// at the provider.
    pub(super) fn waiting_and_running(&self) -> (u64, u64) {
        let running: u64 = self.tiers.iter().map(|t| t.in_flight).sum();
        (self.queued() + self.retry_pending, running)
    }
}

impl Simulation {
    /// A new request for an API tier: through the client queue when the policy
    /// queues or the concurrency cap is reached, else straight to the provider.
    pub(super) fn api_submit(&mut self, id: ReqId, tier: u16, service: Service) {
        let Some(api) = self.api.as_mut() else { return };
        let req = &mut self.st.requests[id];
        req.tier = Some(tier);
        req.service = service;
        // A request that fell back here was counted where it began.
        api.requests += u64::from(req.fallbacks == 0);
        let t = &mut api.tiers[tier as usize];
        t.requests += 1;
        if t.batch.is_some() {
            self.batch_submit(id, tier);
            return;
        }
        // A request that can never be admitted would be retried forever.
        if let Err(e) = t.limiter.fits(
            u64::from(req.input_tokens),
            u64::from(self.cfg.classes[req.class as usize].max_tokens) + u64::from(req.reasoning),
        ) {
            if self.rec.too_large_example.is_none() {
                self.rec.too_large_example = Some(format!("tier {:?}: {e}", t.name));
            }
            self.api_give_up(id, GaveUp::TooLarge);
            return;
        }
        let queues = matches!(api.client, ClientPolicy::Queue { .. });
        if queues || t.in_flight >= api.cap || !t.queue.is_empty() {
            self.client_enqueue(id, tier);
        } else {
            self.api_attempt(id);
        }
    }

    fn client_enqueue(&mut self, id: ReqId, tier: u16) {
        let Some(api) = self.api.as_mut() else { return };
        let limit = match api.client {
            ClientPolicy::Queue { max_queue, .. } => u64::from(max_queue),
            _ => u64::from(crate::scenario::bounds::QUEUE),
        };
        let t = &mut api.tiers[tier as usize];
        if t.queue.len() as u64 >= limit {
            api.rejected_client += 1;
            self.reject(id);
            return;
        }
        t.queue.push_back(id);
        self.st.waiting += 1;
        self.client_pump(tier);
    }

    /// Release queued requests while the cap and the limits allow.
    pub(super) fn client_pump(&mut self, tier: u16) {
        // Bounded by the queue length: every pass pops a request or stops.
        loop {
            let now = self.st.now;
            let Some(api) = self.api.as_mut() else { return };
            let max_wait = match api.client {
                ClientPolicy::Queue { max_wait_s, .. } => secs_to_ns(max_wait_s),
                _ => u64::MAX,
            };
            let queues = matches!(api.client, ClientPolicy::Queue { .. });
            let cap = api.cap;
            let t = &mut api.tiers[tier as usize];
            let Some(&head) = t.queue.front() else { return };
            let req = &self.st.requests[head];
            if req.abandoned {
                t.queue.pop_front();
                self.drop_abandoned_waiting(head);
                continue;
            }
            if now - req.arrival_ns > max_wait {
                t.queue.pop_front();
                self.st.waiting -= 1;
                api.rejected_client += 1;
                self.reject(head);
                continue;
            }
            if t.in_flight >= cap {
                return; // a completion will pump again
            }
            if !queues {
                // Queued only for the cap: now it goes out and meets the limits.
                t.queue.pop_front();
                self.st.waiting -= 1;
                self.api_attempt(head);
                continue;
            }
            // A reasoning request reserves its thinking on top of max_tokens.
            let max_tokens = u64::from(self.cfg.classes[req.class as usize].max_tokens)
                + u64::from(req.reasoning);
            let (input, hit) = self.counted_input(head, tier);
            if self.breaker_blocks(tier) {
                // The breaker is open: the head leaves the queue for its fallback.
                if let Some(api) = self.api.as_mut() {
                    api.tiers[tier as usize].queue.pop_front();
                }
                self.st.waiting -= 1;
                self.api_give_up(head, GaveUp::Breaker);
                continue;
            }
            if self.flex_refuses(head) {
                // Refused for want of capacity: the head leaves the queue
                // for a retry, as the SDKs retry a 429.
                if let Some(api) = self.api.as_mut() {
                    api.tiers[tier as usize].queue.pop_front();
                }
                self.st.waiting -= 1;
                if !self.retry_later(head, 0) {
                    self.api_give_up(head, GaveUp::Throttled);
                }
                continue;
            }
            let service = self.st.requests[head].service;
            let Some(api) = self.api.as_mut() else { return };
            let t = &mut api.tiers[tier as usize];
            match t.admit(now, input, max_tokens, service) {
                Ok(charge) => {
                    t.queue.pop_front();
                    self.st.waiting -= 1;
                    api.attempts += 1;
                    self.api_send(head, charge, hit);
                }
                Err(wait) => {
                    // Backpressure: come back exactly when the limits allow the head.
                    if !t.release_armed {
                        t.release_armed = true;
                        let epoch = t.release_epoch;
                        self.st.events.push(
                            now.saturating_add(wait),
                            Event::ClientRelease { tier, epoch },
                        );
                    }
                    return;
                }
            }
        }
    }

    /// The client's release timer fired.
    pub(super) fn client_release(&mut self, tier: u16) {
        if let Some(api) = self.api.as_mut() {
            let t = &mut api.tiers[tier as usize];
            t.release_armed = false;
            t.release_epoch = t.release_epoch.wrapping_add(1);
        }
        self.client_pump(tier);
    }

    /// One attempt at the provider: admitted, or a 429 handled by the client policy.
    pub(super) fn api_attempt(&mut self, id: ReqId) {
        let now = self.st.now;
        let Some(api) = self.api.as_mut() else { return };
        let req = &mut self.st.requests[id];
        let Some(tier) = req.tier else { return };
        let t = &mut api.tiers[tier as usize];
        // A queueing client only sends what the limits admit (`client_pump`);
        // anything else waits in its queue, as does everything over the cap.
        if t.in_flight >= api.cap || matches!(api.client, ClientPolicy::Queue { .. }) {
            self.client_enqueue(id, tier);
            return;
        }
        if self.breaker_blocks(tier) {
            self.api_give_up(id, GaveUp::Breaker);
            return;
        }
        if self.flex_refuses(id) {
            if !self.retry_later(id, 0) {
                self.api_give_up(id, GaveUp::Throttled);
            }
            return;
        }
        let (input, hit) = self.counted_input(id, tier);
        let Some(api) = self.api.as_mut() else { return };
        let req = &self.st.requests[id];
        let t = &mut api.tiers[tier as usize];
        api.attempts += 1;
        // A reasoning request reserves its thinking on top of max_tokens.
        let max_tokens =
            u64::from(self.cfg.classes[req.class as usize].max_tokens) + u64::from(req.reasoning);
        let fill = t.limiter.token_fill(now);
        self.rec.windows.api_fill(now, fill);
        match t.admit(now, input, max_tokens, req.service) {
            Ok(charge) => self.api_send(id, charge, hit),
            Err(retry_after) => {
                api.throttled += 1;
                t.throttled += 1;
                self.rec.windows.throttled(now);
                if !self.retry_later(id, retry_after) {
                    self.api_give_up(id, GaveUp::Throttled);
                }
            }
        }
    }

    /// A retry timer fired.
    pub(super) fn api_retry(&mut self, id: ReqId) {
        if let Some(api) = self.api.as_mut() {
            api.retry_pending -= 1;
        }
        if self.st.requests[id].abandoned {
            // Its client gave up while waiting to retry.
            self.st.abandoned_waiting -= 1;
            self.forget(id);
            return;
        }
        self.api_attempt(id);
    }

    /// The provider accepted the request: schedule its tokens. `hit` is its
    /// prompt-cache hit when admission already looked it up.
    fn api_send(&mut self, id: ReqId, charge: Charge, hit: Option<u32>) {
        let now = self.st.now;
        let Some(tier) = self.st.requests[id].tier else {
            return;
        };
        self.breaker_sent(tier);
        let (error, slow) = self.provider_outcome(tier);
        if error {
            self.api_send_error(id, tier, charge, slow);
            return;
        }
        let hit = hit.unwrap_or_else(|| self.cache_hit(id, tier));
        let Some(api) = self.api.as_mut() else { return };
        let req = &mut self.st.requests[id];
        let t = &mut api.tiers[tier as usize];
        t.in_flight += 1;
        // The cached prefix needs no prompt processing; an incident slows
        // the first token and every one after it.
        let (ttft_ns, gen_ns) = t.draw_answer(
            &mut api.latency_rng,
            req.service,
            req.input_tokens - hit,
            req.output_tokens,
            slow,
        );
        req.admitted_ns = req.admitted_ns.min(now);
        req.first_token_ns = later(now, ttft_ns);
        req.api_done_ns = later(req.first_token_ns, gen_ns);
        // The reservation is a class's max_tokens, within `bounds::TOKENS`.
        req.output_reserved = u32::try_from(charge.output_reserved).unwrap_or(u32::MAX);
        req.provisioned = charge.provisioned;
        req.phase = Phase::Batched;
        self.rec.windows.api_tokens(
            now,
            u64::from(req.input_tokens) + u64::from(req.output_tokens),
        );
        let (done, first_token) = (req.api_done_ns, req.first_token_ns);
        self.st.events.push(done, Event::ApiDone { req: id });
        self.cache_use(id, tier, hit, first_token);
        self.arm_hedge(id);
    }

    /// The provider's answer is complete.
    pub(super) fn api_done(&mut self, id: ReqId) {
        // A hedge that won moved the finish: the first attempt's is stale
        // (and the request may be gone by then).
        if !self.st.requests.contains(id) || self.hedge_moved_finish(id) {
            return;
        }
        if self.st.requests[id].abandoned {
            // Settled with its tier when its client gave up (`api_abandon`).
            self.drop_abandoned_running(id);
            return;
        }
        if self.st.requests[id].api_error {
            self.api_error_back(id);
            return;
        }
        if let Some(tier) = self.st.requests[id].tier {
            self.breaker_success(tier);
        }
        let now = self.st.now;
        let req = &self.st.requests[id];
        let output = u64::from(req.output_tokens);
        let Some((tier, _)) = self.api_settle(id, output) else {
            return;
        };
        if let Some(api) = self.api.as_mut() {
            let t = &mut api.tiers[tier as usize];
            t.completed += 1;
            t.input_tokens += u64::from(self.st.requests[id].input_tokens);
            t.output_tokens += output;
        }
        self.rec.windows.tokens(now, output);
        self.complete(id);
        self.client_pump(tier);
    }

    /// Request `id`'s client gave up while the provider was answering it: the
    /// connection closes, the provider stops generating, and the tier bills
    /// the prompt and the output tokens streamed so far (as OpenAI and
    /// Anthropic bill a cancelled stream). The request stays marked until its
    /// `ApiDone` comes, which then only drops it.
    pub(super) fn api_abandon(&mut self, id: ReqId) {
        if self.st.requests[id].api_error {
            // An error on its way back: nothing to bill.
            if let Some(tier) = self.api_release_error(id) {
                if let Some(api) = self.api.as_mut() {
                    api.tiers[tier as usize].timed_out += 1;
                }
                self.client_pump(tier);
            }
            return;
        }
        let now = self.st.now;
        let req = &self.st.requests[id];
        let (first, done) = (req.first_token_ns, req.api_done_ns);
        let output = u64::from(req.output_tokens);
        let streamed = if now < first || done == u64::MAX {
            0
        } else if now >= done || done == first {
            output
        } else {
            // The tokens stream evenly from the first to the last.
            let part = u128::from(output) * u128::from(now - first) / u128::from(done - first);
            1 + u64::try_from(part).unwrap_or(output).min(output - 1)
        };
        let Some((tier, usd)) = self.api_settle(id, streamed) else {
            return;
        };
        if let Some(api) = self.api.as_mut() {
            let t = &mut api.tiers[tier as usize];
            t.timed_out += 1;
            t.usd_timed_out += usd;
        }
        self.client_pump(tier);
    }

    /// Request `id` leaves its tier having produced `output` tokens: the
    /// limiter settles its reservation, and the prompt and those tokens are
    /// billed. Returns the tier and the spend.
    fn api_settle(&mut self, id: ReqId, output: u64) -> Option<(u16, f64)> {
        let now = self.st.now;
        let api = self.api.as_mut()?;
        let req = &self.st.requests[id];
        let tier = req.tier?;
        let t = &mut api.tiers[tier as usize];
        t.leave(now, req.output_reserved, output, req.provisioned);
        let price = t.price(req.service, req.provisioned);
        let (input, cached, written) = (
            u64::from(req.input_tokens),
            u64::from(req.api_cached),
            u64::from(req.api_written),
        );
        let settings = t.cache.as_ref().map(|(c, _)| c);
        let parts = input_usd_parts(input, cached, written, t.usd_per_mtok_input, settings);
        let prompt_usd = input_usd_total(parts);
        let output_usd = output as f64 * t.usd_per_token_output;
        let usd = price * (prompt_usd + output_usd);
        debug_assert!(
            output <= u64::from(req.output_tokens) && cached + written <= input,
            "billed beyond the request's own tokens"
        );
        t.bill.add(price, parts, output_usd);
        if settings.is_some() {
            t.cached_tokens += cached;
            t.written_tokens += written;
            t.cache_hits += u64::from(cached > 0);
            t.usd_saved_by_cache +=
                price * (input_usd(input, 0, 0, t.usd_per_mtok_input, None) - prompt_usd);
        }
        t.usd += usd;
        let batch = t.batch.is_some();
        for m in self.rec.metrics(req.class) {
            m.api_usd += usd;
        }
        if batch {
            self.batch_release(tier, input);
        }
        Some((tier, usd))
    }

    /// The request reached the user as an error (a 429, or too large ever to fit).
    pub(super) fn fail(&mut self, id: ReqId) {
        let class = self.st.requests[id].class;
        self.rec.failed += 1;
        for m in self.rec.metrics(class) {
            m.failed += 1;
        }
        self.drop_request(id);
    }
}
