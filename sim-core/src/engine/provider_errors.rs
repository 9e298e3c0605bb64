//! A tier's errors (`crate::api::ProviderErrors`) in a run: an attempt the
//! limits admitted is answered with an error at the tier's rate at that
//! moment (a draw from its own stream), after the tier's time to first
//! token; an incident also slows the answers it does give. An error holds
//! its rate-limit charge (the provider counted it), refunds its output
//! reservation, is not billed, and goes back to the client, which retries
//! it as its policy says or lets the request fail.

use super::request::{Backend, Phase, ReqId};
use super::{Event, NS_PER_S, Simulation, later, secs_to_ns};
use crate::api::Charge;

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
        t.in_flight -= 1;
        t.limiter.settle(
            now,
            Charge {
                output_reserved: u64::from(req.output_reserved),
            },
            0,
        );
        t.errors += 1;
        api.errors += 1;
        req.api_error = false;
        req.api_done_ns = u64::MAX;
        req.output_reserved = 0;
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

    /// Request `id`'s tier gave up on it: it falls back (once) where
    /// `api.fallback` says, or it fails, counted by why.
    pub(super) fn api_give_up(&mut self, id: ReqId, why: GaveUp) {
        let Some(api) = self.api.as_mut() else { return };
        if let Some(to) = self.cfg.api_fallback
            && !self.st.requests[id].fell_back
        {
            api.fallbacks += 1;
            let req = &mut self.st.requests[id];
            req.fell_back = true;
            req.attempts = 0;
            req.tier = None;
            req.fast = false;
            req.phase = Phase::Waiting;
            match to {
                Backend::Api { tier, fast } => self.api_submit(id, tier, fast),
                Backend::Pool(p) => self.send_to_pool(id, p),
            }
            return;
        }
        match why {
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
    /// Its retries were spent on 429s.
    Throttled,
    /// Its retries were spent on errors.
    Error,
    /// It can never fit the tier's limits or batch queue.
    TooLarge,
}
