//! Presets about sharing GPUs: interactive chat and a batch job on one
//! replica, first come, first served or by priority.

use super::{chat_class, h100_llama_8b};
use crate::dist::Dist;
use crate::scenario::{Arrival, Limits, RequestClass, SCENARIO_VERSION, Scenario, Slo, Workload};

/// Chat (60 % of requests) and a batch job of long documents (40 %) on one
/// H100 with Llama-3.1-8B: 18 requests/s together, more than the replica
/// serves, so a queue builds. The batch job is given priority 1 (chat keeps
/// vLLM's default 0), but the replica starts first come, first served; the
/// story switches it to priority scheduling.
pub fn chat_and_batch() -> Scenario {
    let batch = RequestClass {
        priority: Some(1),
        ..RequestClass::new(
            "batch job",
            Dist::LogNormal {
                median: 3000.0,
                p90: 6000.0,
            },
            Dist::LogNormal {
                median: 300.0,
                p90: 600.0,
            },
            1024,
        )
    };
    let chat = RequestClass {
        share: 0.6,
        ..chat_class()
    };
    Scenario {
        distilled_from: None,
        pools: Vec::new(),
        routing: Vec::new(),
        version: SCENARIO_VERSION,
        name: "Chat and a batch job on one H100".into(),
        seed: 1,
        duration_s: 600.0,
        workload: Workload {
            arrival: Arrival::Poisson { rate_per_s: 18.0 },
            classes: vec![
                chat,
                RequestClass {
                    share: 0.4,
                    ..batch
                },
            ],
        },
        serving: h100_llama_8b(),
        slo: Slo {
            ttft_ms: 500.0,
            tpot_ms: 50.0,
        },
        limits: Limits::default(),
        api: None,
    }
}
