//! A tier's services in a run (`crate::api::service`): its flex variant's
//! refusals, slowdown and price, and its provisioned units, which admit a
//! request while they have tokens a minute left for it (outside the tier's
//! rate limits and per-token prices) and leave the rest to pay-as-you-go.

use super::provider::TierState;
use super::request::ReqId;
use super::{NS_PER_S, Simulation, secs_to_ns};
use crate::api::{Charge, Service};
use crate::rng::Stream;

impl TierState {
    /// Admit a request of `service` now on the provisioned units, if it is
    /// the standard service and they have room for its prompt and
    /// `max_tokens` (Azure charges a provisioned deployment's utilisation
    /// so); `None` sends it on to pay-as-you-go.
    pub(super) fn admit_provisioned(
        &mut self,
        now: u64,
        input: u64,
        max_tokens: u64,
        service: Service,
    ) -> Option<Charge> {
        let p = self.provisioned.as_mut()?;
        if service != Service::Standard {
            return None;
        }
        if !p.admit(now, input.saturating_add(max_tokens)) {
            return None;
        }
        Some(Charge {
            output_reserved: max_tokens,
            provisioned: true,
        })
    }

    /// An answer of `service` sent now, its provider `slow` times slower
    /// than usual (incidents, slow hours): ns to its first token (the time
    /// to first token drawn, then the `uncached` prompt tokens processed),
    /// and from there ns to its last of `output` tokens at a speed drawn.
    pub(super) fn draw_answer(
        &self,
        rng: &mut Stream,
        service: Service,
        uncached: u32,
        output: u32,
        slow: f64,
    ) -> (u64, u64) {
        let first = self.ttft.sample(rng) + f64::from(uncached) / self.input_tokens_per_s;
        let speed = match (&self.fast_speed, service) {
            (Some(fast), Service::Fast) => fast.sample(rng),
            _ => self.speed.sample(rng),
        }
        .max(1e-3);
        let slow = slow * self.slowdown(service);
        (
            secs_to_ns(first * slow).max(1),
            secs_to_ns(f64::from(output) / speed * slow),
        )
    }

    /// How many times slower than the tier's standard answers `service`'s are.
    pub(super) fn slowdown(&self, service: Service) -> f64 {
        match (service, &self.flex) {
            (Service::Flex, Some(f)) => f.slowdown,
            _ => 1.0,
        }
    }

    /// What a request of `service` pays per token, as a multiple of the
    /// list price: nothing on the provisioned units (they are billed by the
    /// hour), the variant's multiplier otherwise.
    pub(super) fn price(&self, service: Service, provisioned: bool) -> f64 {
        debug_assert!(
            !provisioned || service == Service::Standard,
            "provisioned units serve the standard service only"
        );
        if provisioned {
            return 0.0;
        }
        match (service, &self.flex) {
            (Service::Fast, _) => self.fast_price,
            (Service::Flex, Some(f)) => f.price_multiplier,
            _ => 1.0,
        }
    }
}

impl Simulation {
    /// Whether request `id`'s attempt at its tier's flex variant is refused
    /// now for want of capacity (a 429 with no `retry-after`, not billed):
    /// at the variant's rate times the provider's load, which its slow
    /// hours and incidents stand for. Draws only for flex attempts.
    pub(super) fn flex_refuses(&mut self, id: ReqId) -> bool {
        let req = &self.st.requests[id];
        let (Some(tier), Service::Flex) = (req.tier, req.service) else {
            return false;
        };
        let now = self.st.now;
        let Some(api) = self.api.as_mut() else {
            return false;
        };
        let t = &mut api.tiers[tier as usize];
        let Some(flex) = &t.flex else { return false };
        let load = t
            .errors_cfg
            .as_ref()
            .map_or(1.0, |e| e.at(now as f64 / NS_PER_S).1);
        let refused = api.error_rng.uniform() < flex.refusal_at(load);
        if refused {
            api.attempts += 1;
            api.throttled += 1;
            t.throttled += 1;
            t.flex_refused += 1;
            self.rec.windows.throttled(now);
        }
        refused
    }
}
