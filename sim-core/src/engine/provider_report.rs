//! The API side's report: each tier's traffic, spend and bill, its
//! provisioned units' hourly cost, and the client's retries and failures.

use super::provider::ApiState;
use super::provider_errors::cool_down_ns;
use crate::report::{ApiReport, TierReport};

impl ApiState {
    pub(super) fn report(&self, secs: f64, hours_per_month: f64) -> ApiReport {
        let month_factor = hours_per_month * 3600.0 / secs.max(1e-9);
        // Provisioned units cost by the hour, used or not.
        let fixed = |t: &super::provider::TierState| {
            t.provisioned.as_ref().map_or(0.0, |p| p.cfg.usd_over(secs))
        };
        let usd: f64 = self.tiers.iter().map(|t| t.usd + fixed(t)).sum();
        ApiReport {
            requests: self.requests,
            attempts: self.attempts,
            throttled_429: self.throttled,
            retries: self.retries,
            attempts_per_request: if self.requests > 0 {
                self.attempts as f64 / self.requests as f64
            } else {
                0.0
            },
            failed_429: self.failed_429,
            failed_too_large: self.failed_too_large,
            errors: self.errors,
            failed_errors: self.failed_errors,
            fallbacks: self.fallbacks,
            hedges: self.hedges,
            hedges_won: self.hedges_won,
            usd_hedges_cancelled: self.usd_hedges_cancelled,
            fallbacks_by_step: if self.fallback_names.len() > 1 {
                self.fallback_names
                    .iter()
                    .zip(&self.fallbacks_to)
                    .map(|(to, &requests)| crate::report::FallbackStep {
                        to: to.clone(),
                        requests,
                    })
                    .collect()
            } else {
                Vec::new()
            },
            failed_breaker: self.failed_breaker,
            rejected_by_client: self.rejected_client,
            usd,
            usd_per_month: usd * month_factor,
            tiers: self
                .tiers
                .iter()
                .map(|t| (t, fixed(t)))
                .inspect(|(t, _)| {
                    debug_assert!(
                        (t.bill.total() - t.usd).abs() <= 1e-9 * t.usd.max(1.0),
                        "tier {}'s bill lines add up to its spend",
                        t.name
                    );
                    debug_assert!(t.usd_timed_out <= t.usd * (1.0 + 1e-12));
                })
                .map(|(t, fixed)| TierReport {
                    name: t.name.clone(),
                    requests: t.requests,
                    completed: t.completed,
                    timed_out: t.timed_out,
                    throttled_429: t.throttled,
                    input_tokens: t.input_tokens,
                    output_tokens: t.output_tokens,
                    usd: t.usd + fixed,
                    usd_timed_out: t.usd_timed_out,
                    usd_per_month: (t.usd + fixed) * month_factor,
                    tokens_per_minute_limit: t.limiter.tokens_per_minute(),
                    cached_input_tokens: t.cached_tokens,
                    cache_write_tokens: t.written_tokens,
                    cache_hits: t.cache_hits,
                    usd_saved_by_cache: t.usd_saved_by_cache,
                    bill: crate::api::Bill {
                        provisioned_usd: fixed,
                        ..t.bill
                    },
                    batch_enqueued_peak_tokens: t.batch.as_ref().map_or(0, |b| b.peak),
                    errors: t.errors,
                    flex_refused: t.flex_refused,
                    gave_up: t.gave_up,
                    hedged_away: t.hedged_away,
                    provisioned_requests: t.provisioned.as_ref().map_or(0, |p| p.requests),
                    breaker_opened: t.breaker.opened,
                    breaker_open_s: self.breaker.as_ref().map_or(0.0, |b| {
                        t.breaker.opened.saturating_mul(cool_down_ns(b)) as f64 / 1e9
                    }),
                })
                .collect(),
        }
    }
}
