//! Hedged requests (`api::Hedge`): a request whose first token has not come
//! a delay after it was sent is sent again, to the same tier or to the one
//! `api.hedge.to` names (whose breaker must be closed). The copy meets
//! the tier's admission like any attempt; if admitted, its latency is drawn
//! as any answer's, and the first of the two to stream a token is kept: the
//! other is cancelled then, before its first token, so it is billed its
//! prompt (the provider processed it) and no output, and its rate-limit
//! reservation is given back when the hedge is decided. The request counts
//! once: its answer is the winner's, its latency from its arrival; a copy
//! that wins at another tier moves the request there (`hedged_away` where
//! it left, one more request where it went).

use super::request::{Phase, ReqId};
use super::{Event, NS_PER_S, Simulation, later};
use crate::api::{Charge, Service, input_usd_parts, input_usd_total};

/// A hedged copy admitted at its tier: its reservation, service, cache
/// hit, first token and end.
struct Copy {
    charge: Charge,
    service: Service,
    cached: u32,
    first: u64,
    done: u64,
}

/// [`super::request::Request::hedge`]: not hedged yet, its delay running,
/// spent, or spent with the copy's answer kept (its finish moved).
const NONE: u8 = 0;
const ARMED: u8 = 1;
const SPENT: u8 = 2;
const WON: u8 = 3;

impl Simulation {
    /// Request `id` was just sent: if the client hedges and its first token
    /// comes after the delay, the delay starts (once per request).
    pub(super) fn arm_hedge(&mut self, id: ReqId) {
        let now = self.st.now;
        let Some(delay) = self.api.as_ref().and_then(|a| a.hedge_ns) else {
            return;
        };
        let req = &mut self.st.requests[id];
        if req.hedge != NONE || req.first_token_ns <= now.saturating_add(delay) {
            return;
        }
        debug_assert!(
            req.phase == Phase::Batched,
            "only a request at a provider hedges"
        );
        req.hedge = ARMED;
        self.st
            .events
            .push(now.saturating_add(delay), Event::ApiHedge { req: id });
    }

    /// Whether an `ApiDone` of request `id` firing now is its first attempt's,
    /// stale since its hedge won and moved the finish.
    pub(super) fn hedge_moved_finish(&self, id: ReqId) -> bool {
        let req = &self.st.requests[id];
        req.hedge == WON && req.api_done_ns != self.st.now
    }

    /// Request `id`'s hedge delay is up: send the copy (to its own tier or
    /// `api.hedge.to`), and keep whichever streams first.
    pub(super) fn api_hedge(&mut self, id: ReqId) {
        let now = self.st.now;
        if !self.st.requests.contains(id) {
            return;
        }
        let req = &mut self.st.requests[id];
        if req.hedge != ARMED {
            return;
        }
        req.hedge = SPENT;
        // Still waiting for the first token of the attempt it was armed for
        // (an error, a give-up or a timeout since leaves it be).
        let Some(tier) = req.tier else { return };
        if req.abandoned
            || req.api_error
            || req.phase != Phase::Batched
            || req.first_token_ns <= now
        {
            return;
        }
        let to = self.api.as_ref().and_then(|a| a.hedge_to).unwrap_or(tier);
        if !self.breaker_closed(to) {
            return; // the client does not send to a tier its breaker stopped
        }
        let Some(copy) = self.hedge_copy(id, to) else {
            return; // the copy is refused: the first attempt carries on alone
        };
        let req = &self.st.requests[id];
        if copy.first >= req.first_token_ns {
            // The first attempt streams first: the copy is cancelled, and
            // another tier it leaves may take what its client holds.
            self.bill_cancelled(id, to, copy.charge, copy.service, copy.cached);
            if to != tier {
                self.client_pump(to);
            }
            return;
        }
        // The copy streams first: the first attempt is cancelled.
        let first_charge = Charge {
            output_reserved: u64::from(req.output_reserved),
            provisioned: req.provisioned,
        };
        let (first_service, first_cached) = (req.service, req.api_cached);
        self.bill_cancelled(id, tier, first_charge, first_service, first_cached);
        if to != tier {
            self.hand_over(id, tier, to, &copy);
        }
        let Some(api) = self.api.as_mut() else { return };
        api.hedges_won += 1;
        let req = &mut self.st.requests[id];
        req.hedge = WON;
        req.output_reserved = u32::try_from(copy.charge.output_reserved).unwrap_or(u32::MAX);
        req.provisioned = copy.charge.provisioned;
        req.first_token_ns = copy.first;
        let was = std::mem::replace(&mut req.api_done_ns, copy.done);
        if copy.done != was {
            self.st.events.push(copy.done, Event::ApiDone { req: id });
        }
        if to != tier {
            self.client_pump(tier);
        }
    }

    /// A copy of request `id` for tier `to`, if its admission takes it:
    /// its reservation, service, cache hit and times, drawn as any answer's
    /// are. At its own tier it reads what the first attempt read; at
    /// another, that tier's cache, at its standard service.
    fn hedge_copy(&mut self, id: ReqId, to: u16) -> Option<Copy> {
        let now = self.st.now;
        let req = &self.st.requests[id];
        let own = req.tier == Some(to);
        let (service, cached) = if own {
            (req.service, req.api_cached)
        } else {
            (Service::Standard, self.cache_hit(id, to))
        };
        let (input, output) = (req.input_tokens, req.output_tokens);
        let max_tokens =
            u64::from(self.cfg.classes[req.class as usize].max_tokens) + u64::from(req.reasoning);
        let api = self.api.as_mut()?;
        let t = &mut api.tiers[to as usize];
        let counted = if t.cached_input_free_of_tpm {
            u64::from(input - cached)
        } else {
            u64::from(input)
        };
        let charge = t.admit(now, counted, max_tokens, service).ok()?;
        api.attempts += 1;
        api.hedges += 1;
        t.in_flight += 1;
        let slow = t
            .errors_cfg
            .as_ref()
            .map_or(1.0, |e| e.at(now as f64 / NS_PER_S).1);
        let (ttft_ns, gen_ns) =
            t.draw_answer(&mut api.latency_rng, service, input - cached, output, slow);
        let first = later(now, ttft_ns);
        Some(Copy {
            charge,
            service,
            cached,
            first,
            done: later(first, gen_ns),
        })
    }

    /// Request `id`'s `copy` at tier `to` won over its attempt at `from`:
    /// the request is `to`'s from now on (counted there, billed there at the
    /// copy's service), reading `to`'s cache and writing to it as a send
    /// there would.
    fn hand_over(&mut self, id: ReqId, from: u16, to: u16, copy: &Copy) {
        self.breaker_trial_lost(from);
        if let Some(api) = self.api.as_mut() {
            api.tiers[from as usize].hedged_away += 1;
            api.tiers[to as usize].requests += 1;
        }
        let req = &mut self.st.requests[id];
        req.tier = Some(to);
        req.service = copy.service;
        // What it read at `to` (the first attempt's write is not billed: it
        // was cancelled); `cache_use` adds what it writes there.
        req.api_cached = copy.cached;
        req.api_written = 0;
        self.cache_use(id, to, copy.cached, copy.first);
    }

    /// A copy of request `id` at `tier` is cancelled before its first token:
    /// it leaves the tier (its reservation `charge` given back), billed its
    /// prompt at `service`'s price (the `cached` part at the cached price,
    /// nothing written).
    fn bill_cancelled(
        &mut self,
        id: ReqId,
        tier: u16,
        charge: Charge,
        service: Service,
        cached: u32,
    ) {
        let now = self.st.now;
        let Some(api) = self.api.as_mut() else { return };
        let req = &self.st.requests[id];
        let t = &mut api.tiers[tier as usize];
        let reserved = u32::try_from(charge.output_reserved).unwrap_or(u32::MAX);
        t.leave(now, reserved, 0, charge.provisioned);
        let price = t.price(service, charge.provisioned);
        let settings = t.cache.as_ref().map(|(c, _)| c);
        let parts = input_usd_parts(
            u64::from(req.input_tokens),
            u64::from(cached),
            0,
            t.usd_per_mtok_input,
            settings,
        );
        let usd = price * input_usd_total(parts);
        t.bill.add(price, parts, 0.0);
        t.usd += usd;
        api.usd_hedges_cancelled += usd;
        for m in self.rec.metrics(req.class) {
            m.api_usd += usd;
        }
    }
}
