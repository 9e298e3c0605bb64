//! The provider has a bad hour: a writing assistant on a hosted frontier
//! model whose provider answers 40 % of attempts with errors, and twice as
//! slowly, for one hour of three; and what the client can do about it.

use super::tiers::{frontier_tier, small_tier};
use crate::api::{Api, ClientPolicy, Incident, ProviderErrors};
use crate::dist::Dist;
use crate::scenario::{Arrival, Limits, RequestClass, SCENARIO_VERSION, Scenario, Slo, Workload};

/// Three hours of a writing assistant at 4 requests/s on the frontier tier,
/// the OpenAI SDK's two retries on each error. The provider errs on 0.1 % of
/// attempts, and from the first hour's end for an hour on 40 % of them,
/// its answers twice as slow. A small model's tier is there to fall back
/// to, and one H100 of Llama-3.1-8B can be kept for the same.
pub fn bad_hour() -> Scenario {
    let mut frontier = frontier_tier();
    frontier.errors = Some(ProviderErrors {
        base_rate: 0.001,
        incidents: vec![Incident {
            start_s: 3_600.0,
            duration_s: 3_600.0,
            error_rate: 0.4,
            latency_multiplier: 2.0,
        }],
        diurnal: Vec::new(),
    });
    let writing = RequestClass::new(
        "writing help",
        Dist::LogNormal {
            median: 800.0,
            p90: 2_500.0,
        },
        Dist::LogNormal {
            median: 250.0,
            p90: 600.0,
        },
        1024,
    );
    Scenario {
        distilled_from: None,
        pools: Vec::new(),
        routing: Vec::new(),
        version: SCENARIO_VERSION,
        name: "The provider has a bad hour".into(),
        seed: 1,
        duration_s: 10_800.0,
        workload: Workload {
            arrival: Arrival::Poisson { rate_per_s: 4.0 },
            classes: vec![writing],
        },
        serving: super::h100_llama_8b(),
        slo: Slo {
            ttft_ms: 3_000.0,
            tpot_ms: 100.0,
        },
        limits: Limits::default(),
        api: Some(Api {
            tiers: vec![frontier, small_tier()],
            routes: Vec::new(),
            default_backend: "frontier".into(),
            client: ClientPolicy::SdkRetries { max_retries: 2 },
            concurrency_cap: None,
            rate_limit_multiplier: 1,
            fallback: Vec::new(),
            breaker: None,
            hedge: None,
        }),
    }
}
