//! A tier's errors (`crate::api::ProviderErrors`) in a run: an attempt the
//! limits admitted is answered with an error at the tier's rate at that
//! moment (a draw from its own stream), after the tier's time to first
//! token; an incident also slows the answers it does give. An error holds
//! its rate-limit charge (the provider counted it), refunds its output
//! reservation, is not billed, and goes back to the client, which retries
//! it as its policy says or lets the request fail.

use super::request::{Backend, Phase, ReqId};
use super::{Event, NS_PER_S, Simulation, later, secs_to_ns};
use crate::api::{
    Breaker, Charge, ClientPolicy, Service, full_jitter_delay_ns, sdk_retry_delay_ns,
};
use std::collections::VecDeque;

impl Simulation {
    /// Whether tier `tier` answers the attempt sent now with an error, and
    /// how many times slower it runs now.
    pub(super) fn provider_outcome(&mut self, tier: u16) -> (bool, f64) {
        let now_s = self.st.now as f64 / NS_PER_S;
        let Some(api) = self.api.as_mut() else {
            return (false, 1.0);
        };
        let Some(e) = &api.tiers[tier as usize].errors_cfg else {
            return (false, 1.0);
        };
        let (rate, slow) = e.at(now_s);
        (rate > 0.0 && api.error_rng.uniform() < rate, slow)
    }

    /// Request `id`'s attempt at tier `tier` comes back as an error after
    /// the tier's (slowed) time to first token.
    pub(super) fn api_send_error(&mut self, id: ReqId, tier: u16, charge: Charge, slow: f64) {
        let now = self.st.now;
        let Some(api) = self.api.as_mut() else { return };
        let req = &mut self.st.requests[id];
        let t = &mut api.tiers[tier as usize];
        t.in_flight += 1;
        let back = secs_to_ns(t.ttft.sample(&mut api.latency_rng) * slow).max(1);
        req.admitted_ns = req.admitted_ns.min(now);
        req.output_reserved = u32::try_from(charge.output_reserved).unwrap_or(u32::MAX);
        req.provisioned = charge.provisioned;
        req.api_error = true;
        req.api_done_ns = later(now, back);
        req.phase = Phase::Batched;
        self.st
            .events
            .push(req.api_done_ns, Event::ApiDone { req: id });
    }

    /// Request `id`'s error leaves tier `tier`: the tier counts it, nothing
    /// is billed, the output reservation is refunded.
    pub(super) fn api_release_error(&mut self, id: ReqId) -> Option<u16> {
        let now = self.st.now;
        let api = self.api.as_mut()?;
        let req = &mut self.st.requests[id];
        let tier = req.tier?;
        let t = &mut api.tiers[tier as usize];
        t.leave(now, req.output_reserved, 0, req.provisioned);
        t.errors += 1;
        api.errors += 1;
        if let Some(b) = &api.breaker {
            t.breaker.error(b, now);
        }
        req.api_error = false;
        req.api_done_ns = u64::MAX;
        req.output_reserved = 0;
        req.provisioned = false;
        req.phase = Phase::Waiting;
        Some(tier)
    }

    /// Request `id`'s error reached its client: retry it, or it fails.
    pub(super) fn api_error_back(&mut self, id: ReqId) {
        let Some(tier) = self.api_release_error(id) else {
            return;
        };
        if !self.retry_later(id, 0) {
            self.api_give_up(id, GaveUp::Error);
        }
        self.client_pump(tier);
    }

    /// Request `id`'s attempt was refused (a 429 saying `retry_after`, 0
    /// if it says nothing, or an error): schedule a retry as the client's
    /// policy says, and say whether it did (a queueing client, whose 429s
    /// never happen, retries errors as the SDKs do).
    pub(super) fn retry_later(&mut self, id: ReqId, retry_after: u64) -> bool {
        let now = self.st.now;
        let Some(api) = self.api.as_mut() else {
            return false;
        };
        let req = &mut self.st.requests[id];
        let retries_done = u32::from(req.attempts);
        req.attempts = req.attempts.saturating_add(1);
        // A draw only for a retry that happens (the stream stays as it was).
        let rng = &mut api.retry_rng;
        let mut sdk = |max_retries: u32| {
            (retries_done < max_retries)
                .then(|| sdk_retry_delay_ns(retries_done, retry_after, rng.uniform()))
        };
        let delay = match api.client {
            ClientPolicy::FailFast => None,
            ClientPolicy::SdkRetries { max_retries } => sdk(max_retries),
            ClientPolicy::FullJitter {
                max_retries,
                base_s,
                cap_s,
            } => (retries_done < max_retries).then(|| {
                full_jitter_delay_ns(retries_done, base_s, cap_s, api.retry_rng.uniform())
            }),
            ClientPolicy::Queue { .. } => sdk(2),
        };
        let Some(d) = delay else {
            return false;
        };
        self.rec.windows.retry(now);
        api.retries += 1;
        api.retry_pending += 1;
        self.st
            .events
            .push(now.saturating_add(d.max(1)), Event::ApiRetry { req: id });
        true
    }

    /// Request `id`'s tier gave up on it: it falls back to the next backend
    /// of `api.fallback`'s chain it has not tried, or it fails, counted by why.
    pub(super) fn api_give_up(&mut self, id: ReqId, why: GaveUp) {
        let Some(api) = self.api.as_mut() else { return };
        if let Some(t) = self.st.requests[id].tier {
            api.tiers[t as usize].gave_up += 1;
        }
        let step = usize::from(self.st.requests[id].fallbacks);
        if let Some(&to) = self.cfg.api_fallback.get(step) {
            api.fallbacks += 1;
            if let Some(n) = api.fallbacks_to.get_mut(step) {
                *n += 1;
            }
            let req = &mut self.st.requests[id];
            req.fallbacks += 1;
            req.attempts = 0;
            req.tier = None;
            req.service = Service::Standard;
            req.phase = Phase::Waiting;
            match to {
                Backend::Api { tier, service } => self.api_submit(id, tier, service),
                Backend::Pool(p) => self.send_to_pool(id, p),
            }
            return;
        }
        match why {
            GaveUp::Breaker => api.failed_breaker += 1,
            GaveUp::Throttled => api.failed_429 += 1,
            GaveUp::Error => api.failed_errors += 1,
            GaveUp::TooLarge => api.failed_too_large += 1,
        }
        self.fail(id);
    }
}

/// Why a tier gave up on a request.
#[derive(Clone, Copy, Debug)]
pub(super) enum GaveUp {
    /// The client's breaker for the tier is open.
    Breaker,
    /// Its retries were spent on 429s.
    Throttled,
    /// Its retries were spent on errors.
    Error,
    /// It can never fit the tier's limits or batch queue.
    TooLarge,
}

/// How long a breaker stays open each time it opens, ns.
pub(super) fn cool_down_ns(b: &Breaker) -> u64 {
    secs_to_ns(b.cool_down_s).max(1)
}

/// A tier's circuit breaker in a run (`crate::api::Breaker`): the recent
/// errors while closed, and when open, until when.
#[derive(Clone, Debug, Default)]
pub(super) struct BreakerState {
    /// Times of the errors within the window (at most `errors` of them).
    recent: VecDeque<u64>,
    /// While open, the end of its cool-down (0: closed).
    open_until: u64,
    /// After the cool-down: the one request let through is out.
    trial_out: bool,
    /// Times it opened (each for the cool-down: [`cool_down_ns`]).
    pub(super) opened: u64,
}

impl BreakerState {
    /// Whether it keeps the client from sending now.
    fn blocks(&self, now: u64) -> bool {
        self.open_until != 0 && (now < self.open_until || self.trial_out)
    }

    fn open(&mut self, b: &Breaker, now: u64) {
        self.open_until = later(now, cool_down_ns(b));
        self.trial_out = false;
        self.recent.clear();
        self.opened += 1;
    }

    /// An error came back from the tier at `now`.
    fn error(&mut self, b: &Breaker, now: u64) {
        if self.open_until != 0 {
            // The trial erred (or a request sent before it opened): open again.
            if self.trial_out {
                self.open(b, now);
            }
            return;
        }
        let window = secs_to_ns(b.window_s);
        while self.recent.front().is_some_and(|&t| now - t > window) {
            self.recent.pop_front();
        }
        self.recent.push_back(now);
        if self.recent.len() as u64 >= u64::from(b.errors) {
            self.open(b, now);
        }
        // A closed breaker holds fewer errors than open it, all recent.
        debug_assert!(
            self.open_until != 0 || (self.recent.len() as u64) < u64::from(b.errors),
            "a breaker held its threshold of errors and stayed closed"
        );
    }
}

impl Simulation {
    /// Whether the client's breaker for `tier` keeps it from sending now.
    pub(super) fn breaker_blocks(&self, tier: u16) -> bool {
        self.api.as_ref().is_some_and(|a| {
            a.breaker.is_some() && a.tiers[tier as usize].breaker.blocks(self.st.now)
        })
    }

    /// A request goes out to `tier`: after a cool-down, it is the trial.
    pub(super) fn breaker_sent(&mut self, tier: u16) {
        let now = self.st.now;
        if let Some(api) = self.api.as_mut() {
            let b = &mut api.tiers[tier as usize].breaker;
            if b.open_until != 0 && now >= b.open_until {
                b.trial_out = true;
            }
        }
    }

    /// Whether `tier`'s breaker is closed (or the client has none): a
    /// hedged copy goes only to a tier the client sends to freely.
    pub(super) fn breaker_closed(&self, tier: u16) -> bool {
        self.api
            .as_ref()
            .is_none_or(|a| a.breaker.is_none() || a.tiers[tier as usize].breaker.open_until == 0)
    }

    /// A request at `tier` was cancelled unanswered (its hedge elsewhere
    /// won): if a trial was out there, the next request is the trial.
    pub(super) fn breaker_trial_lost(&mut self, tier: u16) {
        if let Some(api) = self.api.as_mut() {
            api.tiers[tier as usize].breaker.trial_out = false;
        }
    }

    /// `tier` answered a request: a trial's answer closes the breaker.
    pub(super) fn breaker_success(&mut self, tier: u16) {
        if let Some(api) = self.api.as_mut() {
            let b = &mut api.tiers[tier as usize].breaker;
            if b.trial_out {
                *b = BreakerState {
                    opened: b.opened,
                    ..BreakerState::default()
                };
            }
        }
    }
}
