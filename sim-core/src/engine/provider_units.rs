//! A tier's provisioned units in a run: what they were bought as, the
//! tokens a minute they have left, the requests they admitted.

use crate::api::{Provisioned, TokenBucket};

/// A tier's provisioned units in a run.
#[derive(Clone, Debug)]
pub(super) struct ProvisionedState {
    pub(super) cfg: Provisioned,
    /// Prompt and answer tokens a minute they have left.
    pub(super) bucket: TokenBucket,
    /// Requests they admitted.
    pub(super) requests: u64,
}

impl ProvisionedState {
    pub(super) fn new(cfg: &Provisioned) -> ProvisionedState {
        ProvisionedState {
            bucket: TokenBucket::new(cfg.tokens_per_minute()),
            cfg: cfg.clone(),
            requests: 0,
        }
    }

    /// Take `cost` tokens now if the units have them left, counting the
    /// request; false leaves them as they were.
    pub(super) fn admit(&mut self, now: u64, cost: u64) -> bool {
        if self.bucket.wait_ns(now, cost) != 0 {
            return false;
        }
        self.bucket.take(now, cost);
        self.requests += 1;
        debug_assert!(
            cost <= self.bucket.capacity(),
            "admitted a request larger than the units' tokens a minute"
        );
        true
    }
}
