//! A measured run in, replayed strictly, and compared metric by metric: the
//! user's own benchmark (a per-request log with the engine's timestamps, the
//! engine's settings beside it, a per-second time series) against what the
//! simulator says the same traffic does on the same server.
//!
//! What a request log gives, per request (vLLM's per-request timestamps, on
//! the engine's clock): `queued_ts`, `first_token_ts`, `last_token_ts`,
//! `input_toks`, `output_toks`. TTFT is `first_token_ts − queued_ts`,
//! end-to-end `last_token_ts − queued_ts`, time per output token
//! `(last_token_ts − first_token_ts) / (output_toks − 1)`; the replay puts
//! each request at `queued_ts − min(queued_ts)` with its own lengths.
//!
//! The settings (`meta.json` of the measurement's directory: `model`,
//! `engine_kwargs`, `kv_cache`, `hardware`) become the scenario's server: the
//! GPU and model by name (refused by name when the catalogue has neither),
//! tensor parallelism, `max_num_seqs`, the token budget, memory utilisation
//! prefix caching and async scheduling (`resolved_config.scheduler_config`);
//! a setting the file does not give takes vLLM's default
//! and is listed as assumed. The KV capacity vLLM reported is compared with
//! the simulator's own sizing, not imposed on it.

pub(crate) use super::stats::quantile_of_sorted;
pub use super::stats::{ks_distance, mean_and_quantiles};
use crate::dist::Dist;
use crate::physics::{Gpu, Model, Precision, ServingSoftware};
use crate::report::Report;
use crate::scenario::{Arrival, Batching, RequestClass, Scenario, TraceRequest};

pub use super::measured_files::parse;

/// Most requests a measured run may hold (the trace bound).
pub(super) const MAX_REQUESTS: usize = 5_000_000;

/// One measured request, times from the run's first arrival.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasuredRequest {
    /// Arrival (queued in the engine), seconds.
    pub at_s: f64,
    /// Prompt tokens.
    pub input: u32,
    /// Generated tokens.
    pub output: u32,
    /// Time to first token, ms.
    pub ttft_ms: f64,
    /// End-to-end latency, ms.
    pub e2e_ms: f64,
}

impl MeasuredRequest {
    /// Time per output token after the first, ms (None with one token).
    pub fn tpot_ms(&self) -> Option<f64> {
        (self.output >= 2).then(|| (self.e2e_ms - self.ttft_ms) / f64::from(self.output - 1))
    }
}

/// The server a run was measured on, as its files state it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    /// The model's name (`meta-llama/Llama-3.1-8B`).
    pub model: Option<String>,
    /// The GPU's name (`NVIDIA GeForce RTX 4090`).
    pub gpu: Option<String>,
    /// GPUs per replica (tensor parallelism).
    pub tp: Option<u32>,
    /// Most sequences in a batch.
    pub max_num_seqs: Option<u32>,
    /// Token budget per pass.
    pub max_num_batched_tokens: Option<u32>,
    /// Share of GPU memory the engine may use.
    pub gpu_memory_utilization: Option<f64>,
    /// Automatic prefix caching.
    pub prefix_caching: Option<bool>,
    /// Async scheduling, as the engine resolved it.
    pub async_scheduling: Option<bool>,
    /// KV capacity the engine reported, tokens.
    pub kv_tokens: Option<u64>,
    /// Weights' dtype as the engine was given it.
    pub dtype: Option<String>,
}

/// One second of the engine's own time series.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tick {
    /// Seconds from the start.
    pub t_s: f64,
    /// Sequences running.
    pub running: f64,
    /// Requests waiting.
    pub waiting: f64,
    /// KV cache in use, %.
    pub kv_pct: f64,
}

/// A measured run.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// The requests, in arrival order.
    pub requests: Vec<MeasuredRequest>,
    /// The server's settings.
    pub settings: Settings,
    /// The engine's time series, when given.
    pub series: Vec<Tick>,
}

/// The catalogue model a name means (`meta-llama/Llama-3.1-8B` is
/// `llama-3.1-8b`), matched on letters and digits of its last path part;
/// an instruct or chat tuning has the same dimensions.
pub fn model_from_name(name: &str) -> Option<Model> {
    let squash = |s: &str| -> String {
        s.to_ascii_lowercase()
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect()
    };
    let mut n = squash(name.rsplit('/').next().unwrap_or(name));
    for tuning in ["instruct", "chat", "hf"] {
        if let Some(stripped) = n.strip_suffix(tuning) {
            n = stripped.to_owned();
        }
    }
    Model::NAMED.into_iter().find(|m| {
        serde_json::to_value(m)
            .ok()
            .and_then(|v| v.as_str().map(squash))
            .is_some_and(|id| id == n)
    })
}

impl Measured {
    /// The scenario that replays this run strictly: its arrivals and
    /// lengths, on its server as the settings give it, with the settings it
    /// had to assume (vLLM's defaults) listed. What the run does not say
    /// (the targets, the limits, the seed) is `base`'s; the page and `tlab`
    /// give the default preset. Refused when the model or GPU is missing or
    /// not in the catalogue, or the dtype is not 16-bit.
    pub fn scenario(&self, base: &Scenario) -> Result<(Scenario, Vec<String>), String> {
        self.scenario_split(base, None)
    }

    /// As [`Self::scenario`], its requests in two classes, `fitted` and
    /// `scored` (those `scored` picks by index): the same replay, with each
    /// half's latencies reported apart, for fitting on one half and scoring
    /// the other under the whole run's load.
    pub fn scenario_split(
        &self,
        base: &Scenario,
        scored: Option<&dyn Fn(usize) -> bool>,
    ) -> Result<(Scenario, Vec<String>), String> {
        let st = &self.settings;
        let mut assumed = Vec::new();
        let model_name = st
            .model
            .as_deref()
            .ok_or("the measurement does not name its model (meta.json \"model\")")?;
        let model = model_from_name(model_name)
            .ok_or_else(|| format!("model {model_name:?} is not in the catalogue; describe it with the scenario's custom model dimensions"))?;
        let gpu_name = st
            .gpu
            .as_deref()
            .ok_or("the measurement does not name its GPU (meta.json hardware.device_name)")?;
        let gpu = Gpu::from_name(gpu_name)
            .ok_or_else(|| format!("GPU {gpu_name:?} is not in the catalogue; describe it inline in the scenario (serving.gpu_spec)"))?;
        match st.dtype.as_deref() {
            None | Some("auto" | "bfloat16" | "float16" | "half") => {}
            Some(other) => {
                return Err(format!(
                    "weights in {other:?} cannot be expressed (16-bit weights only for a measured run)"
                ));
            }
        }
        let mut or = |v: Option<u32>, d: u32, what: &str| {
            v.unwrap_or_else(|| {
                assumed.push(format!("{what} {d} (vLLM's default)"));
                d
            })
        };
        let tp = or(st.tp, 1, "tensor parallelism");
        let max_num_seqs = or(st.max_num_seqs, 256, "max_num_seqs");
        let budget = or(st.max_num_batched_tokens, 8192, "max_num_batched_tokens");
        let memory = st.gpu_memory_utilization.unwrap_or_else(|| {
            assumed.push("gpu_memory_utilization 0.9 (vLLM's default)".into());
            0.9
        });
        let prefix = st.prefix_caching.unwrap_or_else(|| {
            assumed.push("prefix caching on (vLLM's default)".into());
            true
        });
        let mut s = base.clone();
        s.name = format!("Measured run: {model_name} on {gpu_name}");
        s.serving.replicas = 1;
        s.serving.gpu = gpu;
        s.serving.usd_per_gpu_hour = None;
        s.serving.gpus_per_replica = tp;
        s.serving.model = model;
        s.serving.weights = Precision::Bf16;
        s.serving.kv_cache = Precision::Bf16;
        s.serving.gpu_memory_utilisation = memory;
        s.serving.batching = Batching::ChunkedPrefill {
            max_num_seqs,
            max_num_batched_tokens: budget,
            chunk_tokens: budget,
        };
        s.serving.software = ServingSoftware::Vllm;
        s.serving.prefix_caching = Some(prefix);
        if st.async_scheduling.is_none() {
            assumed.push("async scheduling on (vLLM's default)".into());
        }
        s.serving.async_scheduling = Some(st.async_scheduling.unwrap_or(true));
        s.serving.max_queue_per_replica = u32::try_from(self.requests.len())
            .unwrap_or(u32::MAX)
            .max(1);
        self.replay_into(&mut s, scored);
        Ok((s, assumed))
    }

    /// The run's requests as a trace the scenario replays: one class of its
    /// own (the trace gives every request's lengths, and nothing of the base
    /// preset's traffic, such as prefixes, conversations or timeouts, is
    /// replayed with it), or two when some are `scored`.
    fn replay_into(&self, s: &mut Scenario, scored: Option<&dyn Fn(usize) -> bool>) {
        let longest = self.requests.iter().map(|r| r.output).max().unwrap_or(1);
        let class = |name: &str| {
            RequestClass::new(
                name,
                Dist::Fixed { value: 1.0 },
                Dist::Fixed { value: 1.0 },
                longest,
            )
        };
        s.workload.classes = match scored {
            None => vec![class("measured")],
            Some(_) => vec![class("fitted"), class("scored")],
        };
        s.set_duration(self.requests.last().map_or(0.0, |r| r.at_s).ceil().max(1.0));
        s.workload.arrival = Arrival::Trace {
            prefix_block_tokens: None,
            requests: self
                .requests
                .iter()
                .enumerate()
                .map(|(i, r)| TraceRequest {
                    prefix_blocks: Vec::new(),
                    at_s: r.at_s,
                    input_tokens: r.input,
                    output_tokens: r.output,
                    class: u32::from(scored.is_some_and(|f| f(i))),
                })
                .collect(),
        };
    }

    /// Most requests in flight at once (between arrival and last token), as
    /// measured: how far the run loaded the server.
    pub fn peak_in_flight(&self) -> usize {
        let mut edges: Vec<(f64, i32)> = self
            .requests
            .iter()
            .flat_map(|r| [(r.at_s, 1), (r.at_s + r.e2e_ms / 1e3, -1)])
            .collect();
        // Ends before starts at the same instant.
        edges.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut now = 0_i32;
        let mut peak = 0_i32;
        for (_, d) in edges {
            now += d;
            peak = peak.max(now);
        }
        usize::try_from(peak).unwrap_or(0)
    }

    /// TTFT, time per output token and end-to-end of the requests `keep`
    /// picks (by index), measured, against a class's (or the run's) stats.
    pub fn metric_rows(
        &self,
        keep: &dyn Fn(usize) -> bool,
        class: &crate::report::ClassReport,
    ) -> Vec<MetricRow> {
        let measured = |f: &dyn Fn(&MeasuredRequest) -> Option<f64>| {
            mean_and_quantiles(
                self.requests
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| keep(*i))
                    .filter_map(|(_, r)| f(r))
                    .collect(),
            )
        };
        let sim = |s: &crate::report::LatencyStats| {
            [s.mean_ms, s.p50_ms, s.p90_ms, s.p99_ms].map(|v| v.unwrap_or(f64::NAN))
        };
        vec![
            MetricRow {
                metric: "TTFT",
                measured: measured(&|r| Some(r.ttft_ms)),
                simulated: sim(&class.ttft),
            },
            MetricRow {
                metric: "time per output token",
                measured: measured(&|r| r.tpot_ms()),
                simulated: sim(&class.tpot),
            },
            MetricRow {
                metric: "end-to-end",
                measured: measured(&|r| Some(r.e2e_ms)),
                simulated: sim(&class.e2e),
            },
        ]
    }

    /// The measured TTFT and end-to-end latencies (ms) at `levels` (0–1,
    /// ascending, as a report's distribution gives them), interpolated
    /// between order statistics: the measured curve a chart draws over the
    /// simulated one.
    pub fn at_quantiles(&self, levels: &[f64]) -> [Vec<f64>; 2] {
        let sorted = |f: fn(&MeasuredRequest) -> f64| {
            let mut v: Vec<f64> = self.requests.iter().map(f).collect();
            v.sort_by(f64::total_cmp);
            v
        };
        let at =
            |v: &[f64]| -> Vec<f64> { levels.iter().map(|&p| quantile_of_sorted(v, p)).collect() };
        [at(&sorted(|r| r.ttft_ms)), at(&sorted(|r| r.e2e_ms))]
    }

    /// Measured against simulated, per metric.
    pub fn compare(&self, report: &Report) -> Comparison {
        let rows = self.metric_rows(&|_| true, &report.overall);
        let d = &report.distribution;
        let ttft: Vec<f64> = self.requests.iter().map(|r| r.ttft_ms).collect();
        let e2e: Vec<f64> = self.requests.iter().map(|r| r.e2e_ms).collect();
        let end_ms = self
            .requests
            .iter()
            .map(|r| r.at_s * 1e3 + r.e2e_ms)
            .fold(0.0, f64::max);
        let tokens: f64 = self.requests.iter().map(|r| f64::from(r.output)).sum();
        Comparison {
            rows,
            ks_ttft: ks_distance(&ttft, &d.quantiles, &d.ttft_ms),
            ks_e2e: ks_distance(&e2e, &d.quantiles, &d.e2e_ms),
            output_tokens_per_s: [
                tokens / (end_ms / 1e3).max(1e-9),
                report.throughput.output_tokens_per_s,
            ],
            finished_s: [end_ms / 1e3, report.sim_time_s],
            peak_running: [
                self.series.iter().map(|t| t.running).reduce(f64::max),
                report.series.batch_size.iter().copied().reduce(f64::max),
            ],
            peak_waiting: [
                self.series.iter().map(|t| t.waiting).reduce(f64::max),
                report.series.queue_depth.iter().copied().reduce(f64::max),
            ],
        }
    }
}

/// One metric, measured and simulated: mean, p50, p90, p99 (ms).
#[derive(Clone, Debug, PartialEq)]
pub struct MetricRow {
    /// The metric.
    pub metric: &'static str,
    /// As measured.
    pub measured: [f64; 4],
    /// As simulated.
    pub simulated: [f64; 4],
}

impl MetricRow {
    /// Simulated over measured, − 1, for mean, p50, p90, p99 (NaN where
    /// either side is missing).
    pub fn errors(&self) -> [f64; 4] {
        std::array::from_fn(|i| {
            let (m, s) = (self.measured[i], self.simulated[i]);
            if m > 0.0 && s.is_finite() {
                s / m - 1.0
            } else {
                f64::NAN
            }
        })
    }

    /// Mean absolute error over mean, p50, p90, p99, % (NaN cells skipped).
    pub fn mean_abs_error_pct(&self) -> f64 {
        let e: Vec<f64> = self
            .errors()
            .into_iter()
            .filter(|e| e.is_finite())
            .collect();
        100.0 * e.iter().map(|e| e.abs()).sum::<f64>() / e.len().max(1) as f64
    }
}

/// A measured run against its strict replay.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// TTFT, time per output token and end-to-end.
    pub rows: Vec<MetricRow>,
    /// Kolmogorov–Smirnov distance between the measured and simulated TTFT
    /// distributions (0 = the same, 1 = disjoint).
    pub ks_ttft: f64,
    /// The same for end-to-end latency.
    pub ks_e2e: f64,
    /// Generated tokens per second over the run, measured and simulated.
    pub output_tokens_per_s: [f64; 2],
    /// When the last request finished, seconds, measured and simulated.
    pub finished_s: [f64; 2],
    /// Most sequences running at once: the engine's time series (per second;
    /// None without one) and the simulation's (mean per pass over a window).
    pub peak_running: [Option<f64>; 2],
    /// Most requests waiting: the engine's per second, the simulation's
    /// window means.
    pub peak_waiting: [Option<f64>; 2],
}
