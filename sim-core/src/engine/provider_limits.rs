//! Admission at a tier: its provisioned units, the requests it holds at
//! once, then its rate limits (`api::Limiter`); and a request's leaving,
//! which settles what admission reserved.

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
        debug_assert!(
            cap == 0 || self.in_flight <= cap,
            "a tier holds more than its cap"
        );
        if cap > 0 && self.in_flight >= cap {
            return Err(CONCURRENCY_RETRY_NS);
        }
        self.limiter.try_admit(now, input, max_tokens)
    }

    /// A request it held leaves, having produced `output` tokens: the
    /// limiter (or, for a request on them, the provisioned units) settles
    /// what was reserved for its output.
    pub(super) fn leave(&mut self, now: u64, output_reserved: u32, output: u64, provisioned: bool) {
        debug_assert!(self.in_flight > 0, "a request left a tier that held none");
        self.in_flight -= 1;
        if provisioned && let Some(p) = self.provisioned.as_mut() {
            p.bucket
                .give(now, u64::from(output_reserved).saturating_sub(output));
            return;
        }
        self.limiter.settle(
            now,
            Charge {
                output_reserved: u64::from(output_reserved),
                provisioned: false,
            },
            output,
        );
    }
}
