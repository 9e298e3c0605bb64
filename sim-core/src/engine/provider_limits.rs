//! Admission at a tier: the requests it holds at once, then its rate limits
//! (`api::Limiter`).

use super::provider::TierState;
use crate::api::{CONCURRENCY_RETRY_NS, Charge, Service};

impl TierState {
    /// Admit a request of `service` now, or say how long until it may be
    /// tried again (`retry-after`): its provisioned units first, if they
    /// have room for it; then a tier holding its most requests at once
    /// refuses another; then its per-minute and daily limits decide.
    pub(super) fn admit(
        &mut self,
        now: u64,
        input: u64,
        max_tokens: u64,
        service: Service,
    ) -> Result<Charge, u64> {
        if let Some(charge) = self.admit_provisioned(now, input, max_tokens, service) {
            return Ok(charge);
        }
        let cap = self.limiter.max_concurrent();
        if cap > 0 && self.in_flight >= cap {
            return Err(CONCURRENCY_RETRY_NS);
        }
        self.limiter.try_admit(now, input, max_tokens)
    }
}
