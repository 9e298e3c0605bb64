//! The hosted model tiers the API presets use.

use crate::api::{LimitStyle, ProviderTier, RateLimits};
use crate::dist::Dist;

/// A frontier model tier with OpenAI-style limits: 5,000 RPM and 1.5 M TPM
/// (input + max_tokens), $2.50 / $10 per million tokens, ≈ 60 tok/s.
pub fn frontier_tier() -> ProviderTier {
    ProviderTier {
        flex: None,
        provisioned: None,
        name: "frontier".into(),
        ttft_s: Dist::LogNormal {
            median: 0.6,
            p90: 1.5,
        },
        output_tokens_per_s: Dist::Normal {
            mean: 60.0,
            std_dev: 10.0,
        },
        input_tokens_per_s: 20_000.0,
        usd_per_mtok_input: 2.50,
        usd_per_mtok_output: 10.0,
        fast: None,
        limits: RateLimits {
            style: LimitStyle::OpenAi,
            rpm: 5_000,
            tpm: 1_500_000,
            output_tpm: 0,
            rpd: 0,
            tpd: 0,
            max_concurrent: 0,
        },
        prompt_cache: None,
        batch: None,
        errors: None,
    }
}

/// A small, fast, cheap model tier with its own limits (limits are per model).
pub fn small_tier() -> ProviderTier {
    ProviderTier {
        flex: None,
        provisioned: None,
        name: "small".into(),
        ttft_s: Dist::LogNormal {
            median: 0.3,
            p90: 0.8,
        },
        output_tokens_per_s: Dist::Normal {
            mean: 120.0,
            std_dev: 20.0,
        },
        input_tokens_per_s: 40_000.0,
        usd_per_mtok_input: 0.15,
        usd_per_mtok_output: 0.60,
        fast: None,
        limits: RateLimits {
            style: LimitStyle::OpenAi,
            rpm: 10_000,
            tpm: 4_000_000,
            output_tpm: 0,
            rpd: 0,
            tpd: 0,
            max_concurrent: 0,
        },
        prompt_cache: None,
        batch: None,
        errors: None,
    }
}
