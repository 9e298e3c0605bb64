//! Named, ready-to-run scenarios: the page's presets and the examples the tests
//! and benchmarks use.

use crate::dist::Dist;
use crate::physics::{Gpu, Model, Precision};
use crate::scenario::{
    Arrival, Batching, Limits, RequestClass, Router, SCENARIO_VERSION, Scenario, ServiceModel,
    Serving, Slo, Workload,
};

/// A preset: a stable id (used in links), a title, what to try, and the scenario.
#[derive(Clone, Debug)]
pub struct Preset {
    /// Stable identifier.
    pub id: &'static str,
    /// Title shown on the page.
    pub title: &'static str,
    /// One paragraph: what the scenario shows and what to try.
    pub explanation: &'static str,
    /// The scenario itself.
    pub scenario: Scenario,
}

/// A chat-style request class: log-normal prompt and answer lengths.
pub fn chat_class() -> RequestClass {
    RequestClass {
        name: "chat".into(),
        share: 1.0,
        input_tokens: Dist::LogNormal {
            median: 400.0,
            p90: 1500.0,
        },
        output_tokens: Dist::LogNormal {
            median: 200.0,
            p90: 600.0,
        },
        max_tokens: 1024,
        calls_per_task: 1,
    }
}

/// Llama-3.1-8B in BF16 on one H100 with vLLM-like chunked-prefill defaults.
pub fn h100_llama_8b() -> Serving {
    Serving {
        replicas: 1,
        router: Router::LeastOutstanding,
        gpu: Gpu::H100,
        gpus_per_replica: 1,
        model: Model::Llama31_8b,
        weights: Precision::Bf16,
        kv_cache: Precision::Bf16,
        gpu_memory_utilisation: 0.9,
        batching: Batching::ChunkedPrefill {
            max_num_seqs: 256,
            max_num_batched_tokens: 2048,
            chunk_tokens: 2048,
        },
        max_queue_per_replica: 100_000,
        usd_per_gpu_hour: None,
        service: ServiceModel::Physics,
    }
}

/// The page's default: a chatbot on one H100 at a comfortable load.
pub fn chatbot_h100() -> Scenario {
    Scenario {
        version: SCENARIO_VERSION,
        name: "Chatbot on one H100".into(),
        seed: 1,
        duration_s: 300.0,
        workload: Workload {
            arrival: Arrival::Poisson { rate_per_s: 8.0 },
            classes: vec![chat_class()],
        },
        serving: h100_llama_8b(),
        slo: Slo {
            ttft_ms: 500.0,
            tpot_ms: 50.0,
        },
        limits: Limits::default(),
    }
}

/// The seed's self-hosting example: a $12/hour server (Llama-3.1-70B on 4 × H100
/// at $3/GPU-hour), saturated. Capped at 37 sequences per batch it makes ≈ 1,500
/// output tok/s (≈ $2.22 per million tokens); see [`self_hosted_tuned`].
pub fn self_hosted_tuning() -> Scenario {
    Scenario {
        version: SCENARIO_VERSION,
        name: "Self-hosted tuning: $12/h server".into(),
        seed: 1,
        duration_s: 300.0,
        workload: Workload {
            arrival: Arrival::Poisson { rate_per_s: 20.0 },
            classes: vec![RequestClass {
                name: "assistant".into(),
                share: 1.0,
                input_tokens: Dist::Fixed { value: 512.0 },
                output_tokens: Dist::Fixed { value: 256.0 },
                max_tokens: 256,
                calls_per_task: 1,
            }],
        },
        serving: Serving {
            gpus_per_replica: 4,
            model: Model::Llama31_70b,
            usd_per_gpu_hour: Some(3.0),
            batching: Batching::ChunkedPrefill {
                max_num_seqs: 37,
                max_num_batched_tokens: 2048,
                chunk_tokens: 2048,
            },
            ..h100_llama_8b()
        },
        slo: Slo {
            ttft_ms: 2000.0,
            tpot_ms: 100.0,
        },
        limits: Limits::default(),
    }
}

/// The same server tuned: 320 sequences and an 8,192-token budget per pass make
/// ≈ 4,000 output tok/s (≈ $0.83 per million tokens), at a higher time per token.
pub fn self_hosted_tuned() -> Scenario {
    let mut s = self_hosted_tuning();
    s.name = "Self-hosted tuning: $12/h server, tuned".into();
    s.serving.batching = Batching::ChunkedPrefill {
        max_num_seqs: 320,
        max_num_batched_tokens: 8192,
        chunk_tokens: 8192,
    };
    s
}

/// Long documents summarised overnight: throughput and cost matter, latency doesn't.
pub fn overnight_batch() -> Scenario {
    Scenario {
        version: SCENARIO_VERSION,
        name: "Overnight batch summarisation".into(),
        seed: 1,
        duration_s: 600.0,
        workload: Workload {
            arrival: Arrival::Poisson { rate_per_s: 6.0 },
            classes: vec![RequestClass {
                name: "summary".into(),
                share: 1.0,
                input_tokens: Dist::Uniform {
                    min: 2000.0,
                    max: 6000.0,
                },
                output_tokens: Dist::Normal {
                    mean: 300.0,
                    std_dev: 60.0,
                },
                max_tokens: 512,
                calls_per_task: 1,
            }],
        },
        serving: Serving {
            batching: Batching::ChunkedPrefill {
                max_num_seqs: 256,
                max_num_batched_tokens: 8192,
                chunk_tokens: 8192,
            },
            ..h100_llama_8b()
        },
        slo: Slo {
            ttft_ms: 60_000.0,
            tpot_ms: 200.0,
        },
        limits: Limits::default(),
    }
}

/// Many short classification calls: prompts dominate, answers are a few tokens.
pub fn classification_at_scale() -> Scenario {
    Scenario {
        version: SCENARIO_VERSION,
        name: "Classification at scale".into(),
        seed: 1,
        duration_s: 120.0,
        workload: Workload {
            arrival: Arrival::Gamma {
                rate_per_s: 60.0,
                cv: 2.0,
            },
            classes: vec![RequestClass {
                name: "classify".into(),
                share: 1.0,
                input_tokens: Dist::LogNormal {
                    median: 250.0,
                    p90: 600.0,
                },
                output_tokens: Dist::Uniform { min: 1.0, max: 8.0 },
                max_tokens: 8,
                calls_per_task: 1,
            }],
        },
        serving: Serving {
            replicas: 4,
            gpu: Gpu::L4,
            model: Model::Qwen25_7b,
            weights: Precision::Fp8,
            batching: Batching::ChunkedPrefill {
                max_num_seqs: 128,
                max_num_batched_tokens: 4096,
                chunk_tokens: 4096,
            },
            ..h100_llama_8b()
        },
        slo: Slo {
            ttft_ms: 1000.0,
            tpot_ms: 100.0,
        },
        limits: Limits::default(),
    }
}

/// The benchmark scenario of the engine issue: Llama-3.1-8B on one H100, chunked
/// prefill (256 sequences, 2,048 tokens), Poisson 40 req/s, 512 in / 256 out,
/// `requests` requests in all.
pub fn bench_h100(requests: u64) -> Scenario {
    Scenario {
        version: SCENARIO_VERSION,
        name: "engine benchmark".into(),
        seed: 7,
        duration_s: requests as f64 / 40.0,
        workload: Workload {
            arrival: Arrival::Poisson { rate_per_s: 40.0 },
            classes: vec![RequestClass {
                name: "fixed".into(),
                share: 1.0,
                input_tokens: Dist::Fixed { value: 512.0 },
                output_tokens: Dist::Fixed { value: 256.0 },
                max_tokens: 256,
                calls_per_task: 1,
            }],
        },
        serving: h100_llama_8b(),
        slo: Slo::default(),
        limits: Limits::default(),
    }
}

/// Every preset the page offers, default first.
pub fn all() -> Vec<Preset> {
    vec![
        Preset {
            id: "chatbot-h100",
            title: "Chatbot on one H100",
            explanation: "A chat assistant on Llama-3.1-8B and a single H100 with continuous batching. Raise the arrival rate until p99 time-to-first-token passes the 500 ms target, then add a replica or lower max_num_seqs and watch the trade between per-user speed and total throughput.",
            scenario: chatbot_h100(),
        },
        Preset {
            id: "self-hosted-tuning",
            title: "Self-hosted tuning: $12/h server",
            explanation: "A $12/hour server (Llama-3.1-70B on 4 × H100) is paid for busy or idle, so throughput sets the price per token. Capped at 37 sequences per batch it makes about 1,500 output tokens/s (≈ $2.22 per million); raise max_num_seqs to 320 and the token budget to 8,192 and it makes about 4,000 tokens/s (≈ $0.83) while the time per output token triples.",
            scenario: self_hosted_tuning(),
        },
        Preset {
            id: "overnight-batch",
            title: "Overnight batch summarisation",
            explanation: "Long documents summarised in bulk, where only throughput and cost matter. Compare chunked prefill with plain continuous batching, and try a larger token budget per pass.",
            scenario: overnight_batch(),
        },
        Preset {
            id: "classification",
            title: "Classification at scale",
            explanation: "Bursty classification traffic on four L4s: prompts dominate and answers are a few tokens, so prefill is the bottleneck. Change the burstiness and the router and watch the tail latency.",
            scenario: classification_at_scale(),
        },
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_preset_is_valid() {
        for p in super::all() {
            if let Err(e) = p.scenario.validate() {
                panic!("preset {} is invalid: {e}", p.id);
            }
        }
    }
}
