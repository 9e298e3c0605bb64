//! Serving and batching parameters.

use super::edits::{batching_for_policy, from_key, key};
use super::{Choice, Group, Kind, Number, Param};
use crate::physics::{Gpu, Model, Precision, ServingSoftware};
use crate::scenario::{Batching, Router, Scenario, bounds};

/// The key a scenario's own datasheet GPU has among the choices.
const CUSTOM_GPU: &str = "custom";

fn gpu_options(s: &Scenario, _: usize) -> Vec<(String, String)> {
    let mut options: Vec<(String, String)> = Gpu::ALL
        .iter()
        .map(|g| (key(g), g.spec().name.to_owned()))
        .collect();
    if let Gpu::Custom(c) = s.serving.gpu {
        options.push((
            CUSTOM_GPU.to_owned(),
            format!(
                "The scenario's own GPU ({} TFLOP/s BF16, {} GB at {} GB/s)",
                crate::format::plain(c.bf16_tflops),
                crate::format::plain(c.memory_gb),
                crate::format::plain(c.memory_gb_per_s)
            ),
        ));
    }
    options
}

fn gpu_key(g: &Gpu) -> String {
    match g {
        Gpu::Custom(_) => CUSTOM_GPU.to_owned(),
        g => key(g),
    }
}

fn model_options(_: &Scenario, _: usize) -> Vec<(String, String)> {
    Model::NAMED
        .iter()
        .map(|m| (key(m), m.name().to_owned()))
        .collect()
}

fn precision_options(_: &Scenario, _: usize) -> Vec<(String, String)> {
    [
        Precision::Bf16,
        Precision::Fp8,
        Precision::Int8,
        Precision::Int4,
        Precision::Mxfp4,
        Precision::Nvfp4,
    ]
    .iter()
    .map(|p| {
        let note = match p {
            Precision::Int8 | Precision::Int4 | Precision::Mxfp4 => " (weights only)",
            Precision::Nvfp4 => " (FP4 tensor cores where the GPU has them)",
            _ => "",
        };
        let label = format!("{}{note}", p.name());
        (key(p), label)
    })
    .collect()
}

fn kv_options(s: &Scenario, i: usize) -> Vec<(String, String)> {
    precision_options(s, i).into_iter().take(2).collect()
}

/// Options (key, label) from string literals.
pub(super) fn owned(options: &[(&str, &str)]) -> Vec<(String, String)> {
    options
        .iter()
        .map(|(k, l)| ((*k).to_owned(), (*l).to_owned()))
        .collect()
}

pub(super) fn keys(options: Vec<(String, String)>) -> Vec<String> {
    options.into_iter().map(|(k, _)| k).collect()
}

fn tp_options(_: &Scenario, _: usize) -> Vec<(String, String)> {
    [1, 2, 4, 8]
        .iter()
        .map(|n| (n.to_string(), n.to_string()))
        .collect()
}

fn router_options(_: &Scenario, _: usize) -> Vec<(String, String)> {
    owned(&[
        ("round_robin", "Round robin"),
        ("least_outstanding", "Least outstanding requests"),
        ("join_shortest_queue", "Join shortest queue"),
        ("central_queue", "One shared queue"),
        ("cache_aware", "Cache-aware (longest cached prefix)"),
    ])
}

fn policy_options(_: &Scenario, _: usize) -> Vec<(String, String)> {
    owned(&[
        ("none", "None (one at a time)"),
        ("static", "Static batches"),
        ("continuous", "Continuous"),
        ("chunked_prefill", "Continuous + chunked prefill"),
    ])
}

fn software_options(_: &Scenario, _: usize) -> Vec<(String, String)> {
    ServingSoftware::ALL
        .iter()
        .map(|w| {
            (
                w.key().to_owned(),
                format!("{} ({})", w.name(), w.calibration_short()),
            )
        })
        .collect()
}

fn expert_parallel_options(_: &Scenario, _: usize) -> Vec<(String, String)> {
    owned(&[
        ("off", "Off: every expert split across the GPUs"),
        ("on", "On: whole experts spread across the GPUs"),
    ])
}

fn caching_options(_: &Scenario, _: usize) -> Vec<(String, String)> {
    owned(&[("on", "On: reuse prompts' cached starts"), ("off", "Off")])
}

/// Whether passes are formed iteration by iteration (continuous batching,
/// with or without chunked prefill): what prefix caching and async
/// scheduling act on.
fn iteration_level(s: &Scenario) -> bool {
    matches!(
        s.serving.batching,
        Batching::Continuous { .. } | Batching::ChunkedPrefill { .. }
    )
}

fn async_options(_: &Scenario, _: usize) -> Vec<(String, String)> {
    owned(&[
        ("on", "On: the next pass is formed while one runs"),
        ("off", "Off: each pass is formed when the last ends"),
    ])
}

/// An on/off switch's key.
fn switch_key(on: bool) -> String {
    if on { "on" } else { "off" }.to_owned()
}

/// An on/off switch's key read back, or a message naming the parameter.
fn switch(path: &str, k: &str) -> Result<bool, String> {
    match k {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("{path}: unknown value {k:?}; one of on, off")),
    }
}

fn max_seqs(s: &Scenario) -> Option<f64> {
    match s.serving.batching {
        Batching::Continuous { max_num_seqs, .. }
        | Batching::ChunkedPrefill { max_num_seqs, .. } => Some(f64::from(max_num_seqs)),
        Batching::Static { max_batch, .. } => Some(f64::from(max_batch)),
        Batching::None => None,
    }
}

fn token_budget(s: &Scenario) -> Option<f64> {
    match s.serving.batching {
        Batching::Continuous {
            max_num_batched_tokens,
            ..
        }
        | Batching::ChunkedPrefill {
            max_num_batched_tokens,
            ..
        } => Some(f64::from(max_num_batched_tokens)),
        _ => None,
    }
}

pub(super) const PARAMS: &[Param] = &[
    Param {
        path: "gpu",
        id: "gpu",
        group: Group::Serving,
        label: "GPU",
        unit: "",
        help: "The accelerator each replica runs on; its compute, memory bandwidth and memory set the step times. Choosing one resets the GPU price to its catalogue price.",
        kind: Kind::Choice(Choice {
            options: gpu_options,
            get: |s, _| Some(gpu_key(&s.serving.gpu)),
            set: |s, i, k| {
                if k == CUSTOM_GPU && matches!(s.serving.gpu, Gpu::Custom(_)) {
                    return Ok(());
                }
                let known: Vec<String> = keys(gpu_options(s, i))
                    .into_iter()
                    .filter(|k| k != CUSTOM_GPU)
                    .collect();
                s.serving.gpu = from_key::<Gpu>("gpu", k, &known)?;
                s.serving.usd_per_gpu_hour = None;
                Ok(())
            },
        }),
    },
    Param {
        path: "model",
        id: "model",
        group: Group::Serving,
        label: "Model",
        unit: "",
        help: "The model served; its size sets how much must be read from memory for every step.",
        kind: Kind::Choice(Choice {
            options: model_options,
            get: |s, _| Some(key(&s.serving.model)),
            set: |s, i, k| {
                let model = from_key::<Model>("model", k, &keys(model_options(s, i)))?;
                super::edits::choose_model(s, model);
                Ok(())
            },
        }),
    },
    Param {
        path: "weights",
        id: "weights",
        group: Group::Serving,
        label: "Weight precision",
        unit: "",
        help: "Bytes per weight: 8- and 4-bit formats read less memory per step; FP8 also doubles compute on GPUs that have it.",
        kind: Kind::Choice(Choice {
            options: precision_options,
            get: |s, _| Some(key(&s.serving.weights)),
            set: |s, i, k| {
                s.serving.weights = from_key("weights", k, &keys(precision_options(s, i)))?;
                Ok(())
            },
        }),
    },
    Param {
        path: "kv_cache",
        id: "kv-cache",
        group: Group::Serving,
        label: "KV-cache precision",
        unit: "",
        help: "Bytes per cached key/value: FP8 holds twice the tokens in the same memory.",
        kind: Kind::Choice(Choice {
            options: kv_options,
            get: |s, _| Some(key(&s.serving.kv_cache)),
            set: |s, i, k| {
                s.serving.kv_cache = from_key("kv_cache", k, &keys(kv_options(s, i)))?;
                Ok(())
            },
        }),
    },
    Param {
        path: "gpus_per_replica",
        id: "tp",
        group: Group::Serving,
        label: "GPUs per replica",
        unit: "",
        help: "Tensor parallelism: one model split across GPUs, for models too big for one or for faster steps.",
        kind: Kind::Choice(Choice {
            options: tp_options,
            get: |s, _| Some(s.serving.gpus_per_replica.to_string()),
            set: |s, _, k| match k.parse::<u32>() {
                Ok(n) if [1, 2, 4, 8].contains(&n) => {
                    s.serving.gpus_per_replica = n;
                    Ok(())
                }
                _ => Err(format!("gpus_per_replica must be 1, 2, 4 or 8, got {k:?}")),
            },
        }),
    },
    Param {
        path: "software",
        id: "software",
        group: Group::Serving,
        label: "Serving software",
        unit: "",
        help: "The engine that runs the model: its per-request and per-step overheads and its kernels' efficiency set every step's time, so more efficient software serves more tokens per GPU-hour. Choosing one here replaces a profile fitted to your own run.",
        kind: Kind::Choice(Choice {
            options: software_options,
            get: |s, _| Some(key(&s.serving.software)),
            set: |s, i, k| {
                let software = from_key("software", k, &keys(software_options(s, i)))?;
                // A fitted profile is vLLM's constants refitted: choosing a
                // software (even vLLM) means that software's own constants.
                s.serving.fitted_profile = None;
                s.serving.software = software;
                Ok(())
            },
        }),
    },
    Param {
        path: "replicas",
        id: "replicas",
        group: Group::Serving,
        label: "Replicas",
        unit: "servers",
        help: "Identical copies of the server behind a router; each costs its GPUs by the hour.",
        kind: Kind::Number(Number {
            min: 1.0,
            max: bounds::REPLICAS as f64,
            slider: (1.0, 64.0),
            log: true,
            decimals: 0,
            get: |s, _| Some(f64::from(s.serving.replicas)),
            set: |s, _, v| {
                s.serving.replicas = v as u32;
                Ok(())
            },
        }),
    },
    Param {
        path: "router",
        id: "router",
        group: Group::Serving,
        label: "Router",
        unit: "",
        help: "How requests are spread over replicas.",
        kind: Kind::Choice(Choice {
            options: router_options,
            get: |s, _| Some(key(&s.serving.router)),
            set: |s, i, k| {
                s.serving.router = from_key::<Router>("router", k, &keys(router_options(s, i)))?;
                Ok(())
            },
        }),
    },
    Param {
        path: "batching.policy",
        id: "batching",
        group: Group::Batching,
        label: "Policy",
        unit: "",
        help: "How requests share the GPU: one at a time, fixed batches, or continuous (iteration-level) batching, optionally with chunked prefill. Each policy starts from its usual settings.",
        kind: Kind::Choice(Choice {
            options: policy_options,
            get: |s, _| Some(s.serving.batching.policy_key().to_owned()),
            set: |s, _, k| {
                s.serving.batching = batching_for_policy(s, k)?;
                Ok(())
            },
        }),
    },
    Param {
        path: "batching.max_seqs",
        id: "max-seqs",
        group: Group::Batching,
        label: "Max batch size",
        unit: "sequences",
        help: "Most requests processed together in one forward pass (vLLM's max_num_seqs): more means more throughput and slower steps. With chunked prefill the token budget rises to at least this.",
        kind: Kind::Number(Number {
            min: 1.0,
            max: bounds::BATCH as f64,
            slider: (1.0, 1024.0),
            log: true,
            decimals: 0,
            get: |s, _| max_seqs(s),
            set: |s, _, v| {
                let n = v as u32;
                match &mut s.serving.batching {
                    Batching::Continuous { max_num_seqs, .. } => *max_num_seqs = n,
                    Batching::ChunkedPrefill {
                        max_num_seqs,
                        max_num_batched_tokens,
                        ..
                    } => {
                        *max_num_seqs = n;
                        *max_num_batched_tokens = (*max_num_batched_tokens).max(n);
                    }
                    Batching::Static { max_batch, .. } => *max_batch = n,
                    Batching::None => {
                        return Err("batching.max_seqs does not apply to batching none".into());
                    }
                }
                Ok(())
            },
        }),
    },
    Param {
        path: "batching.max_wait_ms",
        id: "max-wait",
        group: Group::Batching,
        label: "Max batch wait",
        unit: "ms",
        help: "Longest the first request of a static batch waits for the batch to fill.",
        kind: Kind::Number(Number {
            min: 0.0,
            max: 3_600_000.0,
            slider: (0.0, 5000.0),
            log: false,
            decimals: 0,
            get: |s, _| match s.serving.batching {
                Batching::Static { max_wait_ms, .. } => Some(max_wait_ms),
                _ => None,
            },
            set: |s, _, v| match &mut s.serving.batching {
                Batching::Static { max_wait_ms, .. } => {
                    *max_wait_ms = v;
                    Ok(())
                }
                _ => Err("batching.max_wait_ms needs static batching".into()),
            },
        }),
    },
    Param {
        path: "batching.max_batched_tokens",
        id: "token-budget",
        group: Group::Batching,
        label: "Tokens per pass",
        unit: "tokens",
        help: "Most tokens one forward pass processes (max_num_batched_tokens): larger prefills faster, but each pass takes longer. With chunked prefill it stays at least the batch size, and the chunk at most it.",
        kind: Kind::Number(Number {
            min: 1.0,
            max: bounds::BATCHED_TOKENS as f64,
            slider: (64.0, 65_536.0),
            log: true,
            decimals: 0,
            get: |s, _| token_budget(s),
            set: |s, _, v| {
                match &mut s.serving.batching {
                    Batching::Continuous {
                        max_num_batched_tokens,
                        ..
                    } => *max_num_batched_tokens = v as u32,
                    Batching::ChunkedPrefill {
                        max_num_batched_tokens,
                        max_num_seqs,
                        chunk_tokens,
                    } => {
                        // The budget asked for holds; fewer sequences than
                        // it (vLLM's rule) and chunks within it follow.
                        *max_num_batched_tokens = v as u32;
                        *max_num_seqs = (*max_num_seqs).min(*max_num_batched_tokens);
                        *chunk_tokens = (*chunk_tokens).min(*max_num_batched_tokens);
                    }
                    _ => {
                        return Err("batching.max_batched_tokens needs continuous batching".into());
                    }
                }
                Ok(())
            },
        }),
    },
    Param {
        path: "batching.chunk_tokens",
        id: "chunk",
        group: Group::Batching,
        label: "Prefill chunk",
        unit: "tokens",
        help: "Largest piece of one prompt processed per pass, so long prompts do not stall everyone's next token.",
        kind: Kind::Number(Number {
            min: 1.0,
            max: bounds::BATCHED_TOKENS as f64,
            slider: (16.0, 65_536.0),
            log: true,
            decimals: 0,
            get: |s, _| match s.serving.batching {
                Batching::ChunkedPrefill { chunk_tokens, .. } => Some(f64::from(chunk_tokens)),
                _ => None,
            },
            set: |s, _, v| match &mut s.serving.batching {
                Batching::ChunkedPrefill { chunk_tokens, .. } => {
                    *chunk_tokens = v as u32;
                    Ok(())
                }
                _ => Err("batching.chunk_tokens needs chunked prefill".into()),
            },
        }),
    },
    Param {
        path: "expert_parallel",
        id: "expert-parallel",
        group: Group::Serving,
        label: "Expert parallelism",
        unit: "",
        help: "For a mixture-of-experts model on several GPUs: give each GPU whole experts instead of a slice of every expert. A pass waits for the GPU whose experts the batch's tokens chose most, so small batches are slower and large ones the same.",
        kind: Kind::Choice(Choice {
            options: expert_parallel_options,
            get: |s, _| {
                (s.serving.model.dims().moe.is_some() && s.serving.gpus_per_replica > 1)
                    .then(|| switch_key(s.serving.expert_parallel))
            },
            set: |s, _, k| {
                s.serving.expert_parallel = switch("expert_parallel", k)?;
                Ok(())
            },
        }),
    },
    Param {
        path: "prefix_caching",
        id: "prefix-caching",
        group: Group::Batching,
        label: "Prefix caching",
        unit: "",
        help: "Keep computed prompt blocks in the KV cache and reuse them when a later prompt starts the same way (a shared system prompt, a conversation's history).",
        kind: Kind::Choice(Choice {
            options: caching_options,
            get: |s, _| iteration_level(s).then(|| switch_key(s.serving.prefix_caching_setting())),
            set: |s, _, k| {
                s.serving.prefix_caching = Some(switch("prefix_caching", k)?);
                Ok(())
            },
        }),
    },
    Param {
        path: "async_scheduling",
        id: "async-scheduling",
        group: Group::Batching,
        label: "Async scheduling",
        unit: "",
        help: "vLLM forms each pass while the one before it runs (its default in 2026 releases: the calibration runs, v0.15.1 and v0.19, use it), so the GPU never waits for the scheduler; a request reaching a busy engine joins the pass after the next, about one pass more time to first token. Off is vLLM's --no-async-scheduling.",
        kind: Kind::Choice(Choice {
            options: async_options,
            get: |s, _| {
                (iteration_level(s)
                    && s.serving.models_async_scheduling()
                    && matches!(s.serving.service, crate::scenario::ServiceModel::Physics))
                .then(|| switch_key(s.serving.async_scheduling_setting()))
            },
            set: |s, _, k| {
                s.serving.async_scheduling = Some(switch("async_scheduling", k)?);
                Ok(())
            },
        }),
    },
];
