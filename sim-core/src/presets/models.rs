//! Presets about the models themselves: a reasoning model against an
//! instant one in an agent's loop.

use crate::api::{Api, ClientPolicy, LimitStyle, ProviderTier, RateLimits, Route};
use crate::dist::Dist;
use crate::scenario::{Arrival, Limits, RequestClass, SCENARIO_VERSION, Scenario, Slo, Workload};

/// An API tier with generous limits (this story is about latency, not 429s).
fn tier(name: &str, ttft_s: f64, tokens_per_s: f64, usd_in: f64, usd_out: f64) -> ProviderTier {
    ProviderTier {
        flex: None,
        provisioned: None,
        name: name.into(),
        ttft_s: Dist::LogNormal {
            median: ttft_s,
            p90: ttft_s * 2.0,
        },
        output_tokens_per_s: Dist::Normal {
            mean: tokens_per_s,
            std_dev: tokens_per_s * 0.1,
        },
        input_tokens_per_s: 30_000.0,
        usd_per_mtok_input: usd_in,
        usd_per_mtok_output: usd_out,
        fast: None,
        limits: RateLimits {
            style: LimitStyle::OpenAi,
            rpm: 10_000,
            tpm: 30_000_000,
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

/// One step of a coding agent: a 3,000-token context, a 150-token tool call.
fn agent_step(name: &str, reasoning: Option<Dist>) -> RequestClass {
    RequestClass {
        calls_per_task: 20,
        reasoning_tokens: reasoning,
        ..RequestClass::new(
            name,
            Dist::LogNormal {
                median: 3000.0,
                p90: 6000.0,
            },
            Dist::LogNormal {
                median: 150.0,
                p90: 400.0,
            },
            1000,
        )
    }
}

/// The seed's point about reasoning models: "they can have a long time to
/// first token, because they think before writing, even when their output
/// speed is high". The same agent task (20 sequential calls) on a reasoning
/// model that streams at 200 tokens/s but thinks ≈ 1,000 tokens first, and on
/// an instant model that streams at 80 tokens/s.
pub fn thinking_agent() -> Scenario {
    Scenario {
        distilled_from: None,
        pools: Vec::new(),
        routing: Vec::new(),
        version: SCENARIO_VERSION,
        name: "Thinking before answering: an agent's 20 calls".into(),
        seed: 1,
        duration_s: 1_800.0,
        workload: Workload {
            arrival: Arrival::Poisson { rate_per_s: 0.2 },
            classes: vec![
                agent_step(
                    "reasoning model",
                    Some(Dist::LogNormal {
                        median: 1000.0,
                        p90: 3000.0,
                    }),
                ),
                agent_step("instant model", None),
            ],
        },
        serving: super::h100_llama_8b(),
        slo: Slo {
            ttft_ms: 2_000.0,
            tpot_ms: 50.0,
        },
        limits: Limits::default(),
        api: Some(Api {
            tiers: vec![
                tier("reasoner", 0.5, 200.0, 1.25, 10.0),
                tier("instant", 0.4, 80.0, 1.25, 10.0),
            ],
            routes: vec![
                Route {
                    flex: false,
                    class: "reasoning model".into(),
                    backend: "reasoner".into(),
                    fast: false,
                },
                Route {
                    flex: false,
                    class: "instant model".into(),
                    backend: "instant".into(),
                    fast: false,
                },
            ],
            default_backend: "instant".into(),
            client: ClientPolicy::SdkRetries { max_retries: 2 },
            concurrency_cap: None,
            rate_limit_multiplier: 1,
            fallback: Vec::new(),
            breaker: None,
            hedge: None,
        }),
    }
}
