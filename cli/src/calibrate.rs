//! `tlab calibrate`: real vLLM runs against the simulator. Every row of the CSV
//! becomes a scenario (its load stages, shared system prompts, fixed answer
//! length, `max_num_seqs`, token budget, tensor parallelism, memory
//! utilisation, the model's dimensions); one run per experiment gives every
//! stage's row. The table puts measured and predicted side by side; the fit
//! (least squares on log errors, a bounded coordinate search) finds the vLLM
//! profile's constants.

use rayon::prelude::*;
use serde::Deserialize;
use sim_core::dist::Dist;
use sim_core::physics::{Gpu, Model, ModelDims, Precision, ServingCosts, ServingSoftware, Timing};
use sim_core::presets::h100_llama_8b;
use sim_core::report::Report;
use sim_core::scenario::{
    Arrival, Batching, Limits, RequestClass, SCENARIO_VERSION, Scenario, SharedPrefix, Slo, Stage,
    Workload,
};

/// One row of the CSV (the columns the harness reads).
#[derive(Clone, Debug, Deserialize)]
pub struct Row {
    /// Experiment id (one simulation per experiment).
    pub experiment: String,
    /// Hugging Face model id.
    pub model: String,
    /// Tensor parallelism.
    pub tp: u32,
    /// FP16 or FP8.
    pub weights: String,
    /// `max_num_seqs`.
    pub max_num_seqs: u32,
    /// `max_num_batched_tokens`.
    pub max_num_batched_tokens: u32,
    /// KV blocks vLLM reported, if known.
    pub vllm_kv_blocks: Option<u64>,
    /// `rate x seconds` stages, `;`-separated.
    pub stages_rate_x_duration_s: String,
    /// −1 for the whole run, else the stage.
    pub stage_index: i32,
    /// Tokens of each shared system prompt.
    pub system_prompt_tokens: u32,
    /// Tokens of each question.
    pub question_tokens: u32,
    /// Tokens of each answer.
    pub output_tokens: u32,
    /// System prompts.
    pub prompt_groups: u32,
    /// Measured mean TTFT, ms.
    pub ttft_mean_ms: f64,
    /// Measured mean time per output token after the first, ms.
    pub per_token_mean_ms: f64,
    /// Measured mean end-to-end latency, ms.
    pub e2e_mean_ms: f64,
    /// Measured 99th-percentile end-to-end latency, ms.
    pub e2e_p99_ms: f64,
    /// Model dimensions.
    pub layers: u32,
    /// Hidden size.
    pub hidden: u32,
    /// Query heads.
    pub q_heads: u32,
    /// Key/value heads.
    pub kv_heads: u32,
    /// Head dimension.
    pub head_dim: u32,
    /// FFN intermediate size.
    pub ffn: u32,
    /// Vocabulary.
    pub vocab: u32,
    /// Routed experts (mixture of experts), if any.
    pub experts: Option<u32>,
}

impl Row {
    /// A short model name: the part after the organisation.
    pub fn model_name(&self) -> &str {
        self.model.rsplit('/').next().unwrap_or(&self.model)
    }

    /// Whether the model is a mixture of experts (not yet modelled).
    pub fn is_moe(&self) -> bool {
        self.experts.is_some_and(|e| e > 1)
    }
}

/// Read the CSV's rows.
pub fn read(text: &str) -> Result<Vec<Row>, String> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    reader
        .deserialize()
        .enumerate()
        .map(|(i, r)| r.map_err(|e| format!("row {}: {e}", i + 2)))
        .collect()
}

/// Random text re-tokenised comes out about 5 % longer than asked for (the
/// CSV's README, from the client's records).
const RETOKENISE: f64 = 1.05;

/// The scenario a row's experiment describes.
pub fn scenario(row: &Row) -> Result<Scenario, String> {
    let stages = row
        .stages_rate_x_duration_s
        .split(';')
        .map(|st| {
            let (rate, secs) = st
                .split_once('x')
                .ok_or_else(|| format!("{}: stage {st:?} is not RATExSECONDS", row.experiment))?;
            let num = |v: &str| v.trim().parse::<f64>().map_err(|e| format!("{st}: {e}"));
            Ok(Stage {
                rate_per_s: num(rate)?,
                duration_s: num(secs)?,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let duration_s = stages.iter().map(|s| s.duration_s).sum();
    let dims = ModelDims {
        layers: row.layers,
        hidden: row.hidden,
        q_heads: row.q_heads,
        kv_heads: row.kv_heads,
        head_dim: row.head_dim,
        ffn: row.ffn,
        vocab: row.vocab,
        // Qwen2 attention has q/k/v biases; the others have none.
        qkv_bias: row.model.contains("Qwen2"),
        tied_embeddings: false,
    };
    let weights = if row.weights == "FP8" {
        Precision::Fp8
    } else {
        Precision::Bf16
    };
    let mut serving = h100_llama_8b();
    serving.gpu = Gpu::H100;
    serving.gpus_per_replica = row.tp;
    serving.model = Model::Custom(dims);
    serving.weights = weights;
    serving.kv_cache = Precision::Bf16;
    serving.gpu_memory_utilisation = 0.9;
    serving.batching = Batching::ChunkedPrefill {
        max_num_seqs: row.max_num_seqs,
        max_num_batched_tokens: row.max_num_batched_tokens,
        chunk_tokens: row.max_num_batched_tokens,
    };
    serving.software = ServingSoftware::Vllm;
    serving.prefix_caching = Some(true);
    let system = (f64::from(row.system_prompt_tokens) * RETOKENISE).round() as u32;
    let question = (f64::from(row.question_tokens) * RETOKENISE).round();
    Ok(Scenario {
        version: SCENARIO_VERSION,
        name: row.experiment.clone(),
        seed: 1,
        duration_s,
        workload: Workload {
            arrival: Arrival::Stages { stages },
            classes: vec![RequestClass {
                name: "shared-prefix".into(),
                share: 1.0,
                input_tokens: Dist::Fixed { value: question },
                output_tokens: Dist::Fixed {
                    value: f64::from(row.output_tokens),
                },
                max_tokens: row.output_tokens,
                calls_per_task: 1,
                shared_prefix: Some(SharedPrefix {
                    prompts: row.prompt_groups.max(1),
                    tokens: system,
                }),
                conversation: None,
                timeout_s: None,
            }],
        },
        serving,
        slo: Slo::default(),
        limits: Limits::default(),
        api: None,
    })
}

/// The four metrics the harness compares.
pub const METRICS: [&str; 4] = [
    "TTFT mean",
    "per-token mean",
    "end-to-end mean",
    "end-to-end p99",
];

/// Measured and predicted for one row.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// The row.
    pub row: Row,
    /// Measured values, in [`METRICS`] order, ms.
    pub measured: [f64; 4],
    /// Predicted values, ms.
    pub predicted: [f64; 4],
    /// Whether the simulation's queue kept growing where the server's did not.
    pub saturated: bool,
    /// KV blocks the simulator gives the configuration.
    pub kv_blocks: u64,
}

impl Comparison {
    /// Signed relative errors, in [`METRICS`] order.
    pub fn errors(&self) -> [f64; 4] {
        std::array::from_fn(|i| self.predicted[i] / self.measured[i] - 1.0)
    }
}

fn predicted(r: &Report, stage: i32) -> [f64; 4] {
    let (ttft, tpot, e2e) = match usize::try_from(stage).ok().and_then(|i| r.stages.get(i)) {
        Some(st) => (&st.ttft, &st.tpot, &st.e2e),
        None => (&r.overall.ttft, &r.overall.tpot, &r.overall.e2e),
    };
    let v = |x: Option<f64>| x.unwrap_or(f64::INFINITY);
    [
        v(ttft.mean_ms),
        v(tpot.mean_ms),
        v(e2e.mean_ms),
        v(e2e.p99_ms),
    ]
}

/// Run every experiment of `rows` with `costs` (in parallel; the order of the
/// result is the rows'), and compare.
pub fn compare(rows: &[Row], timing: Timing) -> Result<Vec<Comparison>, String> {
    let mut experiments: Vec<&str> = rows.iter().map(|r| r.experiment.as_str()).collect();
    experiments.dedup();
    let reports: Vec<(String, Report, u64)> = experiments
        .par_iter()
        .map(|e| {
            let row = rows.iter().find(|r| r.experiment == *e).ok_or("no row")?;
            let s = scenario(row)?.validate().map_err(|e| e.to_string())?;
            let blocks = s.deployment().kv_capacity_blocks()?;
            let mut sim = sim_core::Simulation::with_timing(&s, timing);
            sim.advance_until(u64::MAX);
            Ok(((*e).to_owned(), sim.report(), blocks))
        })
        .collect::<Result<_, String>>()?;
    rows.iter()
        .map(|row| {
            let (_, r, blocks) = reports
                .iter()
                .find(|(e, _, _)| *e == row.experiment)
                .ok_or("no report")?;
            let predicted = predicted(r, row.stage_index);
            let measured = [
                row.ttft_mean_ms,
                row.per_token_mean_ms,
                row.e2e_mean_ms,
                row.e2e_p99_ms,
            ];
            // A queue that grew without bound shows as waits far beyond what
            // the server had, or as requests still in flight at the end.
            let saturated =
                !r.complete || (predicted[0] > 10.0 * measured[0] && predicted[0] > 1000.0);
            Ok(Comparison {
                row: row.clone(),
                measured,
                predicted,
                saturated,
                kv_blocks: *blocks,
            })
        })
        .collect()
}

/// Mean absolute percentage error per metric over `rows`.
pub fn mape(rows: &[&Comparison]) -> [f64; 4] {
    std::array::from_fn(|i| {
        rows.iter().map(|c| c.errors()[i].abs()).sum::<f64>() / rows.len().max(1) as f64
    })
}

/// The fit's objective: mean squared log error over every row and metric.
pub fn loss(rows: &[Comparison]) -> f64 {
    let n = (rows.len() * 4).max(1) as f64;
    rows.iter()
        .flat_map(|c| (0..4).map(move |i| (c.predicted[i] / c.measured[i]).ln().powi(2)))
        .map(|e| if e.is_finite() { e } else { 100.0 })
        .sum::<f64>()
        / n
}

/// A constant the fit may move: its name, how to read and write it, and the
/// physically plausible range it stays in.
struct Knob {
    name: &'static str,
    get: fn(&ServingCosts) -> f64,
    set: fn(&mut ServingCosts, f64),
    range: (f64, f64),
}

const KNOBS: [Knob; 14] = [
    Knob {
        name: "frontend_in_ns",
        get: |c| c.frontend_in_ns as f64,
        set: |c, v| c.frontend_in_ns = v as u64,
        range: (0.0, 100e6),
    },
    Knob {
        name: "frontend_out_ns",
        get: |c| c.frontend_out_ns as f64,
        set: |c, v| c.frontend_out_ns = v as u64,
        range: (0.0, 50e6),
    },
    Knob {
        name: "step_ns",
        get: |c| c.step_ns as f64,
        set: |c, v| c.step_ns = v as u64,
        range: (0.0, 20e6),
    },
    Knob {
        name: "per_seq_ns",
        get: |c| c.per_seq_ns as f64,
        set: |c, v| c.per_seq_ns = v as u64,
        range: (0.0, 500e3),
    },
    Knob {
        name: "layer_decode_ns",
        get: |c| c.layer_decode_ns as f64,
        set: |c, v| c.layer_decode_ns = v as u64,
        range: (0.0, 200e3),
    },
    Knob {
        name: "layer_prefill_ns",
        get: |c| c.layer_prefill_ns as f64,
        set: |c, v| c.layer_prefill_ns = v as u64,
        range: (0.0, 500e3),
    },
    Knob {
        name: "compute_prefill",
        get: |c| c.compute_prefill,
        set: |c, v| c.compute_prefill = v,
        range: (0.05, 0.85),
    },
    Knob {
        name: "compute_decode",
        get: |c| c.compute_decode,
        set: |c, v| c.compute_decode = v,
        range: (0.05, 0.85),
    },
    Knob {
        name: "bandwidth_decode",
        get: |c| c.bandwidth_decode,
        set: |c, v| c.bandwidth_decode = v,
        range: (0.2, 0.92),
    },
    Knob {
        name: "bandwidth_prefill",
        get: |c| c.bandwidth_prefill,
        set: |c, v| c.bandwidth_prefill = v,
        range: (0.2, 0.92),
    },
    Knob {
        name: "bandwidth_kv",
        get: |c| c.bandwidth_kv,
        set: |c, v| c.bandwidth_kv = v,
        range: (0.05, 0.92),
    },
    Knob {
        name: "allreduce_ns",
        get: |c| c.allreduce_ns as f64,
        set: |c, v| c.allreduce_ns = v as u64,
        range: (0.0, 200e3),
    },
    Knob {
        name: "link_efficiency",
        get: |c| c.link_efficiency,
        set: |c, v| c.link_efficiency = v,
        range: (0.1, 0.95),
    },
    Knob {
        name: "overlap_exponent",
        get: |c| c.overlap_exponent,
        set: |c, v| c.overlap_exponent = v,
        range: (1.0, 8.0),
    },
];

/// Where the fit starts: priors from vLLM's design and other simulators'
/// defaults (reference §3–§3b): ~10 ms of API server per request, ~1.5 ms of
/// scheduler per step, CUDA-graph decode launches, kernels at 50–85 % of peak.
pub const FIT_START: ServingCosts = ServingCosts {
    frontend_in_ns: 8_000_000,
    frontend_out_ns: 2_000_000,
    step_ns: 1_500_000,
    per_seq_ns: 20_000,
    layer_decode_ns: 10_000,
    layer_prefill_ns: 60_000,
    compute_prefill: 0.60,
    compute_decode: 0.50,
    compute_fp8: 0.45,
    bandwidth_decode: 0.85,
    bandwidth_prefill: 0.80,
    bandwidth_kv: 0.55,
    allreduce_ns: 15_000,
    link_efficiency: 0.7,
    overlap_exponent: 2.0,
};

/// Fit the vLLM profile's constants to `rows`: a coordinate search that
/// multiplies one constant at a time by a step factor (both ways), keeps what
/// lowers the mean squared log error, and halves the step when nothing does.
/// Every constant stays in its physical range (efficiencies ≤ 1).
pub fn fit(rows: &[Row], start: ServingCosts, rounds: u32) -> Result<(ServingCosts, f64), String> {
    let mut best = start;
    let mut best_loss = loss(&compare(rows, Timing::Serving(best))?);
    let mut step = 1.6_f64;
    for _ in 0..rounds {
        let mut improved = false;
        for k in &KNOBS {
            for dir in [step, 1.0 / step] {
                let mut trial = best;
                let v = (k.get)(&trial);
                // A constant at 0 moves to a small value of its range first.
                let next = if v == 0.0 { k.range.1 * 1e-3 } else { v * dir };
                (k.set)(&mut trial, next.clamp(k.range.0, k.range.1));
                if (k.get)(&trial) == v {
                    continue;
                }
                let l = loss(&compare(rows, Timing::Serving(trial))?);
                if l < best_loss {
                    best_loss = l;
                    best = trial;
                    improved = true;
                }
            }
        }
        if !improved {
            step = 1.0 + (step - 1.0) / 2.0;
            if step < 1.01 {
                break;
            }
        }
    }
    Ok((best, best_loss))
}

/// The fitted constants as Rust, to paste into `physics/profile.rs`.
pub fn as_rust(c: &ServingCosts) -> String {
    KNOBS
        .iter()
        .map(|k| {
            let v = (k.get)(c);
            if k.name.ends_with("_ns") {
                format!("    {}: {},\n", k.name, v.round() as u64)
            } else {
                format!("    {}: {:.3},\n", k.name, v)
            }
        })
        .collect()
}

/// The comparison as a Markdown table, then MAPE per metric and per model.
pub fn markdown(rows: &[Comparison]) -> String {
    let mut o = String::from(
        "| experiment | stage | model | TP | TTFT mean ms (err) | per-token ms (err) | e2e mean ms (err) | e2e p99 ms (err) |\n|---|---:|---|---:|---:|---:|---:|---:|\n",
    );
    for c in rows {
        let e = c.errors();
        o += &format!(
            "| {} | {} | {} | {} |",
            c.row.experiment,
            if c.row.stage_index < 0 {
                "all".to_owned()
            } else {
                c.row.stage_index.to_string()
            },
            c.row.model_name(),
            c.row.tp
        );
        for ((m, p), e) in c.measured.iter().zip(&c.predicted).zip(&e) {
            o += &format!(" {m:.1} → {p:.1} ({:+.0} %) |", e * 100.0);
        }
        o += if c.saturated { " SATURATED\n" } else { "\n" };
    }
    let all: Vec<&Comparison> = rows.iter().collect();
    let m = mape(&all);
    o += &format!(
        "\nMAPE over {} rows: TTFT mean {:.1} %, per-token {:.1} %, end-to-end mean {:.1} %, end-to-end p99 {:.1} %\n",
        all.len(),
        m[0] * 100.0,
        m[1] * 100.0,
        m[2] * 100.0,
        m[3] * 100.0
    );
    let mut models: Vec<&str> = rows.iter().map(|c| c.row.model_name()).collect();
    models.sort();
    models.dedup();
    o += "\n| model | rows | TTFT mean | per-token | e2e mean | e2e p99 |\n|---|---:|---:|---:|---:|---:|\n";
    for name in models {
        let of: Vec<&Comparison> = rows.iter().filter(|c| c.row.model_name() == name).collect();
        let m = mape(&of);
        o += &format!(
            "| {name} | {} | {:.1} % | {:.1} % | {:.1} % | {:.1} % |\n",
            of.len(),
            m[0] * 100.0,
            m[1] * 100.0,
            m[2] * 100.0,
            m[3] * 100.0
        );
    }
    o +=
        "\n| experiment | KV blocks reported by vLLM | simulated | error |\n|---|---:|---:|---:|\n";
    let mut seen = Vec::new();
    for c in rows {
        if let (Some(real), false) = (c.row.vllm_kv_blocks, seen.contains(&&c.row.experiment)) {
            seen.push(&c.row.experiment);
            o += &format!(
                "| {} | {real} | {} | {:+.2} % |\n",
                c.row.experiment,
                c.kv_blocks,
                (c.kv_blocks as f64 / real as f64 - 1.0) * 100.0
            );
        }
    }
    o
}

#[cfg(test)]
mod tests;
