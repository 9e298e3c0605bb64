//! The provider's prompt cache and the bill: a support assistant whose
//! prompts start with the same long system prompt, on a hosted model with
//! Anthropic-style limits.

use crate::api::{Api, ClientPolicy, LimitStyle, ProviderTier, RateLimits};
use crate::dist::Dist;
use crate::scenario::{
    Arrival, Conversation, Limits, RequestClass, SCENARIO_VERSION, Scenario, SharedPrefix, Slo,
    Workload,
};

/// A mid-size hosted model priced per million tokens at $3 in and $15 out,
/// with Anthropic's three limits: requests, input tokens and output tokens a
/// minute.
fn assistant_tier() -> ProviderTier {
    ProviderTier {
        flex: None,
        provisioned: None,
        name: "assistant".into(),
        ttft_s: Dist::LogNormal {
            median: 0.6,
            p90: 1.5,
        },
        output_tokens_per_s: Dist::Normal {
            mean: 70.0,
            std_dev: 10.0,
        },
        input_tokens_per_s: 25_000.0,
        usd_per_mtok_input: 3.0,
        usd_per_mtok_output: 15.0,
        fast: None,
        limits: RateLimits {
            style: LimitStyle::Anthropic,
            rpm: 4_000,
            tpm: 800_000,
            output_tpm: 400_000,
            rpd: 0,
            tpd: 0,
            max_concurrent: 0,
        },
        prompt_cache: None,
        batch: None,
        errors: None,
    }
}

/// A support assistant: every conversation starts with the same
/// 4,000-token system prompt (instructions and tool definitions), and each
/// of its four turns sends the earlier ones again, a user reading and
/// typing about 45 s between them. One new conversation a second.
pub fn prompt_caching() -> Scenario {
    let chat = RequestClass {
        calls_per_task: 4,
        shared_prefix: Some(SharedPrefix {
            prompts: 1,
            tokens: 4_000,
        }),
        conversation: Some(Conversation {
            think_time_s: Dist::Exponential { mean: 45.0 },
        }),
        ..RequestClass::new(
            "support chat",
            Dist::LogNormal {
                median: 150.0,
                p90: 400.0,
            },
            Dist::LogNormal {
                median: 250.0,
                p90: 600.0,
            },
            1024,
        )
    };
    Scenario {
        distilled_from: None,
        pools: Vec::new(),
        routing: Vec::new(),
        version: SCENARIO_VERSION,
        name: "Prompt caching and the bill".into(),
        seed: 1,
        duration_s: 1_800.0,
        workload: Workload {
            arrival: Arrival::Poisson { rate_per_s: 1.0 },
            classes: vec![chat],
        },
        serving: super::h100_llama_8b(),
        slo: Slo {
            ttft_ms: 2_000.0,
            tpot_ms: 50.0,
        },
        limits: Limits::default(),
        api: Some(Api {
            tiers: vec![assistant_tier()],
            routes: Vec::new(),
            default_backend: "assistant".into(),
            client: ClientPolicy::SdkRetries { max_retries: 2 },
            concurrency_cap: None,
            rate_limit_multiplier: 1,
            fallback: Vec::new(),
            breaker: None,
            hedge: None,
        }),
    }
}
