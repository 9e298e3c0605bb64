//! Presets about pools: a deployment of more than one model, with requests
//! routed between them.

use super::self_hosted_tuned;
use crate::dist::Dist;
use crate::scenario::{Arrival, RequestClass, Scenario, Serving, Workload};

/// A support assistant on the seed's tuned server (Llama-3.1-70B in FP8 on
/// 4 × H100 at $3/GPU-hour, vLLM with chunked prefill): 30 requests/s, 70 %
/// of them simple (short questions, short answers) and 30 % hard (long
/// context, long answers), all on three 70B replicas. The story sends the
/// simple ones to Llama-3.1-8B on one H100 and shrinks the 70B pool.
pub fn two_models() -> Scenario {
    let base = self_hosted_tuned();
    let simple = RequestClass {
        share: 0.7,
        ..RequestClass::new(
            "simple",
            Dist::LogNormal {
                median: 300.0,
                p90: 800.0,
            },
            Dist::LogNormal {
                median: 120.0,
                p90: 300.0,
            },
            512,
        )
    };
    let hard = RequestClass {
        share: 0.3,
        ..RequestClass::new(
            "hard",
            Dist::LogNormal {
                median: 2000.0,
                p90: 5000.0,
            },
            Dist::LogNormal {
                median: 400.0,
                p90: 900.0,
            },
            1024,
        )
    };
    Scenario {
        name: "Two models: a small one for simple requests".into(),
        workload: Workload {
            arrival: Arrival::Poisson { rate_per_s: 30.0 },
            classes: vec![simple, hard],
        },
        serving: Serving {
            replicas: 3,
            ..base.serving.clone()
        },
        ..base
    }
}

/// Launch day on the chatbot's own GPUs (Llama-3.1-8B on H100s): 5
/// requests/s for 20 minutes, 60 for the launch's 20, then 10, on a fixed
/// fleet of three sized for the peak. The story autoscales it.
pub fn launch_day_gpus() -> Scenario {
    let mut s = super::chatbot_h100();
    s.name = "Launch day on your own GPUs".into();
    s.duration_s = 3600.0;
    s.workload.arrival = Arrival::Stages {
        stages: [(5.0, 1200.0), (60.0, 1200.0), (10.0, 1200.0)]
            .iter()
            .map(|&(rate_per_s, duration_s)| crate::scenario::Stage {
                rate_per_s,
                duration_s,
            })
            .collect(),
    };
    s.serving.replicas = 3;
    // The hosted alternative, unused until the story routes chat to it.
    s.api = Some(crate::api::Api {
        tiers: vec![super::frontier_tier()],
        routes: Vec::new(),
        default_backend: crate::api::SELF_HOSTED.into(),
        client: crate::api::ClientPolicy::QUEUE,
        concurrency_cap: None,
        rate_limit_multiplier: 1,
        fallback: Vec::new(),
        breaker: None,
        hedge: None,
    });
    s
}

/// The engine benchmark's workload at four times the rate (160 req/s) in
/// four equal classes, on four H100 replicas: one pool of four, or `pools`
/// pools sharing them, each class routed to pool `class % pools` (the
/// `pools_1m` benchmark).
pub fn bench_pools(requests: u64, pools: usize) -> Scenario {
    let mut s = super::bench_h100(requests);
    s.name = format!("engine benchmark, {pools} pool(s)");
    s.workload.arrival = Arrival::Poisson { rate_per_s: 160.0 };
    s.duration_s = requests as f64 / 160.0;
    let class = s.workload.classes[0].clone();
    s.workload.classes = (0..4)
        .map(|i| RequestClass {
            name: format!("class {i}"),
            ..class.clone()
        })
        .collect();
    let pools = pools.clamp(1, 4);
    let per_pool = 4 / pools as u32;
    s.serving.replicas = per_pool;
    s.pools = (1..pools)
        .map(|i| Serving {
            name: Some(format!("pool {i}")),
            ..s.serving.clone()
        })
        .collect();
    s.routing = (1..4)
        .filter(|i| i % pools != 0)
        .map(|i| crate::scenario::RoutingRule {
            class: Some(format!("class {i}")),
            prompt_under: None,
            share: None,
            to: format!("pool {}", i % pools),
            overflow: None,
        })
        .collect();
    s
}

/// Questions over long documents on the seed's tuned 70B server (FP8, 4 ×
/// H100 per replica, vLLM with chunked prefill), two replicas, 3 requests/s:
/// prompts of about 3,000 tokens (a tenth over 8,000), answers of about 250,
/// streamed against a strict 15 ms per token (and 2 s to the first). The
/// story splits prefill from decode on the same eight GPUs.
pub fn disaggregated() -> Scenario {
    let base = self_hosted_tuned();
    let document = RequestClass::new(
        "document",
        Dist::LogNormal {
            median: 3000.0,
            p90: 8000.0,
        },
        Dist::LogNormal {
            median: 250.0,
            p90: 500.0,
        },
        1024,
    );
    Scenario {
        name: "Split prefill and decode: questions over long documents".into(),
        duration_s: 300.0,
        workload: Workload {
            arrival: Arrival::Poisson { rate_per_s: 3.0 },
            classes: vec![document],
        },
        serving: Serving {
            replicas: 2,
            ..base.serving.clone()
        },
        slo: crate::scenario::Slo {
            ttft_ms: 2000.0,
            tpot_ms: 15.0,
        },
        ..base
    }
}
