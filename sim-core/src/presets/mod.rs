//! Named, ready-to-run scenarios: the page's presets and the examples the tests
//! and benchmarks use.

use crate::api::{Api, ClientPolicy, FastVariant, LimitStyle, ProviderTier, RateLimits, Route};
use crate::dist::Dist;
use crate::physics::{Gpu, Model, Precision, ServingSoftware};
use crate::scenario::UserStep;
use crate::scenario::{
    Arrival, Batching, Limits, RequestClass, Router, SCENARIO_VERSION, Scenario, ServiceModel,
    Serving, Slo, Workload,
};

mod caching;
mod incidents;
mod models;
mod pools;
mod priorities;
mod stories;
pub mod story;
mod tiers;
pub use caching::prompt_caching;
pub use incidents::bad_hour;
pub use models::thinking_agent;
pub use pools::{bench_pools, disaggregated, launch_day_gpus, two_models};
pub use priorities::chat_and_batch;
pub use story::{Claim, Quantity, Step};
pub use tiers::{frontier_tier, small_tier};

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
    /// The story as a guided sequence of steps (the first is the preset as
    /// it opens), every claim checked against the simulation.
    pub steps: &'static [Step],
}

/// A chat-style request class: log-normal prompt and answer lengths.
pub fn chat_class() -> RequestClass {
    RequestClass::new(
        "chat",
        Dist::LogNormal {
            median: 400.0,
            p90: 1500.0,
        },
        Dist::LogNormal {
            median: 200.0,
            p90: 600.0,
        },
        1024,
    )
}

/// Llama-3.1-8B in BF16 on one H100 with vLLM-like chunked-prefill defaults.
pub fn h100_llama_8b() -> Serving {
    Serving {
        name: None,
        autoscale: None,
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
        usd_per_kwh: None,
        service: ServiceModel::Physics,
        software: ServingSoftware::Vllm,
        prefix_caching: None,
        async_scheduling: None,
        scheduling_policy: None,
        expert_parallel: false,
        fitted_profile: None,
        step_time_scale: None,
        prefill_time_scale: None,
        disaggregation: None,
        speculative: None,
    }
}

/// The page's default: a chatbot on one H100 at a comfortable load.
pub fn chatbot_h100() -> Scenario {
    Scenario {
        distilled_from: None,
        pools: Vec::new(),
        routing: Vec::new(),
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
        api: None,
    }
}

/// The seed's self-hosting example: a $12/hour server (Llama-3.1-70B on 4 × H100
/// at $3/GPU-hour) in BF16 with static batches, under 6 requests/s of real
/// traffic: ≈ 1,500 output tok/s, ≈ $2.2 per million, seconds to a first
/// token. The source's levers — continuous batching and a quantized model —
/// are [`self_hosted_tuned`].
pub fn self_hosted_tuning() -> Scenario {
    Scenario {
        distilled_from: None,
        pools: Vec::new(),
        routing: Vec::new(),
        version: SCENARIO_VERSION,
        name: "Self-hosted tuning: $12/h server".into(),
        seed: 1,
        duration_s: 300.0,
        workload: Workload {
            arrival: Arrival::Poisson { rate_per_s: 6.0 },
            classes: vec![RequestClass::new(
                "assistant",
                Dist::Fixed { value: 512.0 },
                Dist::Fixed { value: 256.0 },
                256,
            )],
        },
        serving: Serving {
            name: None,
            autoscale: None,
            gpus_per_replica: 4,
            model: Model::Llama31_70b,
            usd_per_gpu_hour: Some(3.0),
            batching: Batching::Static {
                max_batch: 64,
                max_wait_ms: 50.0,
            },
            ..h100_llama_8b()
        },
        slo: Slo {
            ttft_ms: 2000.0,
            tpot_ms: 100.0,
        },
        limits: Limits::default(),
        api: None,
    }
}

/// The same server with the source's levers, continuous batching (with chunked
/// prefill) and FP8 weights, serving the traffic that ≈ 2.7 such servers with
/// static batches would each get: 16 requests/s, ≈ 4,100 output tok/s,
/// ≈ $0.8 per million, a first token in well under 100 ms.
pub fn self_hosted_tuned() -> Scenario {
    let mut s = self_hosted_tuning();
    s.name = "Self-hosted tuning: $12/h server, tuned".into();
    s.workload.arrival = Arrival::Poisson { rate_per_s: 16.0 };
    s.serving.weights = Precision::Fp8;
    s.serving.batching = Batching::ChunkedPrefill {
        max_num_seqs: 256,
        max_num_batched_tokens: 2048,
        chunk_tokens: 2048,
    };
    s
}

/// Long documents summarised overnight: throughput and cost matter, latency doesn't.
pub fn overnight_batch() -> Scenario {
    Scenario {
        distilled_from: None,
        pools: Vec::new(),
        routing: Vec::new(),
        version: SCENARIO_VERSION,
        name: "Overnight batch summarisation".into(),
        seed: 1,
        duration_s: 600.0,
        workload: Workload {
            arrival: Arrival::Poisson { rate_per_s: 6.0 },
            classes: vec![RequestClass::new(
                "summary",
                Dist::Uniform {
                    min: 2000.0,
                    max: 6000.0,
                },
                Dist::Normal {
                    mean: 300.0,
                    std_dev: 60.0,
                },
                512,
            )],
        },
        serving: Serving {
            name: None,
            autoscale: None,
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
        // A hosted small model to compare with, not used until a class is
        // sent to it (its batch API is one choice away: `api.batch`).
        api: Some(Api {
            tiers: vec![small_tier()],
            routes: Vec::new(),
            default_backend: crate::api::SELF_HOSTED.into(),
            client: ClientPolicy::SdkRetries { max_retries: 2 },
            concurrency_cap: None,
            rate_limit_multiplier: 1,
            fallback: Vec::new(),
            breaker: None,
            hedge: None,
        }),
    }
}

/// Many short classification calls: prompts dominate, answers are a few tokens.
pub fn classification_at_scale() -> Scenario {
    Scenario {
        distilled_from: None,
        pools: Vec::new(),
        routing: Vec::new(),
        version: SCENARIO_VERSION,
        name: "Classification at scale".into(),
        seed: 1,
        duration_s: 120.0,
        workload: Workload {
            arrival: Arrival::Gamma {
                rate_per_s: 60.0,
                cv: 2.0,
            },
            classes: vec![RequestClass::new(
                "classify",
                Dist::LogNormal {
                    median: 250.0,
                    p90: 600.0,
                },
                Dist::Uniform { min: 1.0, max: 8.0 },
                8,
            )],
        },
        serving: Serving {
            name: None,
            autoscale: None,
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
        api: None,
    }
}

/// The benchmark scenario of the engine issue: Llama-3.1-8B on one H100, chunked
/// prefill (256 sequences, 2,048 tokens), Poisson 40 req/s, 512 in / 256 out,
/// `requests` requests in all.
pub fn bench_h100(requests: u64) -> Scenario {
    Scenario {
        distilled_from: None,
        pools: Vec::new(),
        routing: Vec::new(),
        version: SCENARIO_VERSION,
        name: "engine benchmark".into(),
        seed: 7,
        duration_s: requests as f64 / 40.0,
        workload: Workload {
            arrival: Arrival::Poisson { rate_per_s: 40.0 },
            classes: vec![RequestClass::new(
                "fixed",
                Dist::Fixed { value: 512.0 },
                Dist::Fixed { value: 256.0 },
                256,
            )],
        },
        serving: h100_llama_8b(),
        slo: Slo::default(),
        limits: Limits::default(),
        api: None,
    }
}

/// The seed's launch story: an email-summarisation feature on a hosted frontier
/// model, 50 concurrent users, then launch day: 5,000 users from minute five.
/// The client fails fast, so the TPM cap turns into errors.
pub fn launch_spike() -> Scenario {
    Scenario {
        distilled_from: None,
        pools: Vec::new(),
        routing: Vec::new(),
        version: SCENARIO_VERSION,
        name: "Launch spike: email summarisation".into(),
        seed: 1,
        duration_s: 900.0,
        workload: Workload {
            arrival: Arrival::ClosedLoop {
                users: vec![
                    UserStep {
                        at_s: 0.0,
                        users: 50,
                    },
                    UserStep {
                        at_s: 300.0,
                        users: 5_000,
                    },
                ],
                think_time_s: Dist::Exponential { mean: 120.0 },
            },
            classes: vec![
                RequestClass {
                    share: 0.7,
                    ..RequestClass::new(
                        "short email",
                        Dist::LogNormal {
                            median: 400.0,
                            p90: 1000.0,
                        },
                        Dist::Normal {
                            mean: 80.0,
                            std_dev: 20.0,
                        },
                        150,
                    )
                },
                RequestClass {
                    share: 0.3,
                    ..RequestClass::new(
                        "long thread",
                        Dist::LogNormal {
                            median: 3000.0,
                            p90: 6000.0,
                        },
                        Dist::Normal {
                            mean: 300.0,
                            std_dev: 60.0,
                        },
                        500,
                    )
                },
            ],
        },
        serving: h100_llama_8b(),
        slo: Slo {
            ttft_ms: 5_000.0,
            tpot_ms: 100.0,
        },
        limits: Limits::default(),
        api: Some(Api {
            tiers: vec![frontier_tier(), small_tier()],
            routes: Vec::new(),
            default_backend: "frontier".into(),
            client: ClientPolicy::FailFast,
            concurrency_cap: None,
            rate_limit_multiplier: 1,
            fallback: Vec::new(),
            breaker: None,
            hedge: None,
        }),
    }
}

/// The launch with a client-side queue: 429s become waiting.
pub fn launch_spike_queued() -> Scenario {
    let mut s = launch_spike();
    if let Some(api) = s.api.as_mut() {
        api.client = ClientPolicy::QUEUE;
    }
    s
}

/// The seed's "pay for speed" voice assistant: 200-token answers read aloud at
/// 60 tok/s cost ≈ $22,500 a month; the tier's 200 tok/s variant costs 40 % more.
pub fn pay_for_speed() -> Scenario {
    let tier = ProviderTier {
        flex: None,
        provisioned: None,
        name: "voice-llm".into(),
        ttft_s: Dist::Fixed { value: 0.3 },
        output_tokens_per_s: Dist::Fixed { value: 60.0 },
        input_tokens_per_s: 50_000.0,
        usd_per_mtok_input: 1.0,
        usd_per_mtok_output: 12.0,
        fast: Some(FastVariant {
            output_tokens_per_s: Dist::Fixed { value: 200.0 },
            price_multiplier: 1.4,
        }),
        limits: RateLimits {
            style: LimitStyle::OpenAi,
            rpm: 10_000,
            tpm: 10_000_000,
            output_tpm: 0,
            rpd: 0,
            tpd: 0,
            max_concurrent: 0,
        },
        prompt_cache: None,
        batch: None,
        errors: None,
    };
    Scenario {
        distilled_from: None,
        pools: Vec::new(),
        routing: Vec::new(),
        version: SCENARIO_VERSION,
        name: "Pay for speed: voice assistant".into(),
        seed: 1,
        duration_s: 3_600.0,
        workload: Workload {
            // $0.0034 a request (1,000 in at $1/M, 200 out at $12/M) × 2.52 req/s
            // × 730 h ≈ $22,500 a month.
            arrival: Arrival::Poisson { rate_per_s: 2.52 },
            classes: vec![RequestClass::new(
                "voice answer",
                Dist::Fixed { value: 1000.0 },
                Dist::Fixed { value: 200.0 },
                300,
            )],
        },
        serving: h100_llama_8b(),
        slo: Slo {
            ttft_ms: 500.0,
            tpot_ms: 10.0,
        },
        limits: Limits::default(),
        api: Some(Api {
            tiers: vec![tier],
            routes: Vec::new(),
            default_backend: "voice-llm".into(),
            client: ClientPolicy::SdkRetries { max_retries: 2 },
            concurrency_cap: None,
            rate_limit_multiplier: 1,
            fallback: Vec::new(),
            breaker: None,
            hedge: None,
        }),
    }
}

/// The voice assistant on the fast variant.
pub fn pay_for_speed_fast() -> Scenario {
    let mut s = pay_for_speed();
    if let Some(api) = s.api.as_mut() {
        api.routes = vec![Route {
            flex: false,
            class: "voice answer".into(),
            backend: "voice-llm".into(),
            fast: true,
        }];
    }
    s
}

/// The preset of `all` that `s` is, or was edited from: the one with its
/// scenario's name. The one definition of a scenario's preset, which the
/// page's menu, its story panel and a pinned scenario's label read.
pub fn of<'a>(all: &'a [Preset], s: &Scenario) -> Option<&'a Preset> {
    all.iter().find(|p| p.scenario.name == s.name)
}

/// Every preset the page offers, default first.
pub fn all() -> Vec<Preset> {
    vec![
        Preset {
            id: "chatbot-h100",
            title: "Chatbot on one H100",
            explanation: "A chat assistant on Llama-3.1-8B and a single H100 with continuous batching. Raise the arrival rate until p99 time-to-first-token passes the 500 ms target, then add a replica or lower max_num_seqs and watch the trade between per-user speed and total throughput.",
            scenario: chatbot_h100(),
            steps: stories::CHATBOT,
        },
        Preset {
            id: "launch-spike",
            title: "Launch spike: email summarisation",
            explanation: "An email-summarisation feature on a hosted frontier model. 50 users run clean; at minute five the launch brings 5,000 and the 1.5 M tokens-per-minute cap answers with 429s, which this fail-fast client shows as errors. Switch the client to a queue and the errors become waiting; raise the rate-limit tier to 4× and the wait disappears; route short emails to the small model and cost and 429s both fall.",
            scenario: launch_spike(),
            steps: stories::LAUNCH_SPIKE,
        },
        Preset {
            id: "pay-for-speed",
            title: "Pay for speed: voice assistant",
            explanation: "A voice assistant reads 200-token answers aloud at 60 tokens/s. Route it to the tier's 200 tokens/s variant: each answer streams over three times as fast, and the bill rises. The story below measures both. Is a faster voice worth it?",
            scenario: pay_for_speed(),
            steps: stories::PAY_FOR_SPEED,
        },
        Preset {
            id: "self-hosted-tuning",
            title: "Self-hosted tuning: $12/h server",
            explanation: "A server of 4 × H100 at $3 a GPU-hour (Llama-3.1-70B, vLLM) is paid for busy or idle, so throughput sets the price per token. With static batches and 16-bit weights, 6 requests/s keep it busy and users wait seconds for a first token. Switch batching to continuous with chunked prefill and the weights to FP8: the same traffic gets its first token in milliseconds, and one server keeps up with far more of it, so the price per token falls. The story below measures each step.",
            scenario: self_hosted_tuning(),
            steps: stories::SELF_HOSTED,
        },
        Preset {
            id: "overnight-batch",
            title: "Overnight batch summarisation",
            explanation: "Long documents summarised in bulk, where only throughput and cost matter. Compare chunked prefill with plain continuous batching, and try a smaller token budget per pass. Then price the same documents on a hosted small model, at its list price and through its batch API: half the price, the results within a day.",
            scenario: overnight_batch(),
            steps: stories::OVERNIGHT,
        },
        Preset {
            id: "classification",
            title: "Classification at scale",
            explanation: "Bursty classification traffic on four L4s: prompts dominate and answers are a few tokens, so prefill is the bottleneck. Change the burstiness and the router and watch the tail latency.",
            scenario: classification_at_scale(),
            steps: stories::CLASSIFICATION,
        },
        Preset {
            id: "thinking-agent",
            title: "Thinking before answering: an agent's 20 calls",
            explanation: "The same coding-agent task, 20 model calls one after another, on two hosted models. The reasoning model streams at 200 tokens/s against the instant model's 80, yet its first visible word comes seconds later, because it first thinks in hidden tokens the user never sees. Over the 20 calls the task takes minutes longer on the reasoning model, and each call costs more, since the thinking is billed as output; the story below measures by how much. Drag 'Thinking before answering' or 'Calls per task' and watch the task latency.",
            scenario: thinking_agent(),
            steps: stories::THINKING_AGENT,
        },
        Preset {
            id: "two-models",
            title: "Two models: a small one for simple requests",
            explanation: "A support assistant at 30 requests/s on the seed's tuned server, Llama-3.1-70B in FP8 on 4 × H100: 70 % of the questions are simple, 30 % hard, and three 70B replicas serve them all. Add a pool of Llama-3.1-8B on one H100 and route the simple questions to it: they get their first token sooner, the 70B pool is left the hard ones, and two 70B replicas carry them, and the bill falls. (The simulator times the work; whether the small model answers the simple questions well enough is yours to judge.)",
            scenario: two_models(),
            steps: stories::TWO_MODELS,
        },
        Preset {
            id: "launch-day-gpus",
            title: "Launch day on your own GPUs",
            explanation: "A chatbot on Llama-3.1-8B and H100s meets its launch: 5 requests/s, then 60 for twenty minutes, then 10. Three replicas carry the peak, and are paid for all day. Let an autoscaler add and remove replicas instead: the bill falls, but the launch's first minute waits for new replicas to load their weights and start. Keep two warm and the wait is gone at about the same price.",
            scenario: launch_day_gpus(),
            steps: stories::LAUNCH_DAY_GPUS,
        },
        Preset {
            id: "chat-and-batch",
            title: "Chat and a batch job on one GPU",
            explanation: "Interactive chat and an overnight batch job of long documents share one H100, 18 requests/s together: more than it serves, so a queue builds. First come, first served, a chat user waits behind the documents for a first word. Switch scheduling to priority (chat 0, the batch job 1, as vLLM's --scheduling-policy priority): chat gets its first token at once while the batch job takes the rest of the GPU — it makes as many tokens as before and its documents wait instead.",
            scenario: chat_and_batch(),
            steps: stories::CHAT_AND_BATCH,
        },
        Preset {
            id: "prompt-caching",
            title: "Prompt caching and the bill",
            explanation: "A support assistant on a hosted model: every conversation starts with the same long system prompt, and each turn sends the earlier ones again, so most of what the provider reads it has read before. Without caching, the input-token limit answers the busy hours with 429s and every token is billed in full. Turn on the provider's prompt cache and watch the 429s, the bill and the first token; then see what a quiet night, when the cache expires between users, does to it, and what a longer lifetime buys.",
            scenario: prompt_caching(),
            steps: stories::PROMPT_CACHING,
        },
        Preset {
            id: "bad-hour",
            title: "The provider has a bad hour",
            explanation: "A writing assistant on a hosted frontier model, 4 requests a second for three hours. For one of them the provider answers 40 % of attempts with errors, and twice as slowly. The SDK's two retries hide most of it, at the cost of waiting; failing fast shows users every error. Fall back to a small model's tier and no request fails; add a circuit breaker that stops sending while the errors last, and users wait far less and the bill falls, on the small model's answers. Or keep a GPU of your own to fall back to, and pay for it all day.",
            scenario: bad_hour(),
            steps: stories::BAD_HOUR,
        },
        Preset {
            id: "split-prefill-decode",
            title: "Split prefill and decode",
            explanation: "Questions over long documents on two replicas of Llama-3.1-70B (FP8, 4 × H100 each), answers streamed against a strict 15 ms per token. Colocated, each replica's long prompts share passes with the answers being written, and every token waits for them: many requests miss the pace. Split the same eight GPUs — one replica prefills, the other only decodes, the KV cache crossing NVLink — and nearly all of them do, for the same money, with a slower first token. Then see what the link and short prompts change.",
            scenario: disaggregated(),
            steps: stories::SPLIT_PREFILL_DECODE,
        },
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_preset_is_valid() {
        for p in super::all() {
            if let Err(e) = p.scenario.check() {
                panic!("preset {} is invalid: {e}", p.id);
            }
        }
    }
}
