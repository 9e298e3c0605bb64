//! MLPerf Inference rows: Server and Interactive as Poisson traffic at
//! `target_qps` for 600 s, checked against the benchmark's p99 limits, with
//! the highest rate that keeps them; Offline as saturated tokens/s. The
//! layout (tensor parallelism × replicas) is not stated in the results, so it
//! is chosen as a submitter tunes it: the tensor-parallel size whose saturated
//! replica makes the most tokens per GPU while keeping the time-per-token
//! limit (`docs/calibration-public.md`).

use std::collections::BTreeMap;

use serde::Deserialize;
use sim_core::dist::Dist;
use sim_core::physics::{Gpu, Model, Precision, ServingSoftware};
use sim_core::ranges::Point;
use sim_core::report::Report;
use sim_core::scenario::{Arrival, RequestClass};

use super::layout::choose_layout;
use super::{Compared, Setup, Source, Trial};

/// Simulated seconds of a Server run: the benchmark's `min_duration_ms`.
pub const SERVER_S: f64 = 600.0;

/// Replicas a Server run simulates at most: a larger system (11 nodes of 8
/// GPUs send 3,500 queries/s) runs as this many replicas at the same load
/// per replica, and its tokens/s is scaled back by the replicas' ratio.
/// Least-outstanding routing over 8 replicas already pools the queue;
/// `docs/calibration-public.md` measures what the cut changes.
pub const SIMULATED_REPLICAS: u32 = 8;

/// One row of `mlperf-llm-given.csv` (the columns the harness reads).
#[derive(Clone, Debug, Deserialize)]
pub struct Row {
    /// The row's line in its file.
    #[serde(skip)]
    pub line: usize,
    /// `closed` (the benchmark's model at its accuracy) or `open`.
    pub division: String,
    /// The system's id in its round.
    pub system_id: String,
    /// Accelerator, normalised (`H100`, `B200`, `MI300X`, ...).
    pub gpu_norm: String,
    /// Accelerators in the system (per node × nodes).
    pub gpu_count: u32,
    /// Nodes.
    pub nodes: u32,
    /// Serving engine, as inferred from the software string.
    pub engine: String,
    /// Benchmark (`llama2-70b`, ...).
    pub benchmark_norm: String,
    /// `Server`, `Interactive`, `Offline` or `SingleStream`.
    pub scenario_norm: String,
    /// Weights' precision where stated (`fp4`, `fp8`, ...).
    #[serde(default)]
    pub precision: String,
    /// Where the result came from.
    pub source_path: String,
    /// Output tokens/s.
    pub tokens_per_s: Option<f64>,
    /// The Poisson rate the run was scheduled at, queries/s.
    pub target_qps: Option<f64>,
    /// The benchmark's p99 TTFT limit, ms.
    pub slo_ttft_ms: Option<f64>,
    /// The benchmark's p99 TPOT limit, ms.
    pub slo_tpot_ms: Option<f64>,
    /// Measured TTFT, ms.
    pub ttft_mean_ms: Option<f64>,
    /// Measured TTFT p99, ms.
    pub ttft_p99_ms: Option<f64>,
    /// Measured TPOT, ms.
    pub tpot_mean_ms: Option<f64>,
    /// Measured TPOT p99, ms.
    pub tpot_p99_ms: Option<f64>,
    /// Mean output tokens per sample in the run's accuracy log.
    pub mean_output_tokens_per_sample: Option<f64>,
}

/// Read the file's rows, refusing a malformed one by its line and column.
pub fn read(text: &str) -> Result<Vec<Row>, String> {
    super::read_rows(text, |r: &mut Row, line| r.line = line)
}

/// A benchmark's dataset: its prompts' lengths and how answers spread
/// around the run's own mean (`data/calibration/public/datasets.csv`, each
/// figure with its source or marked an estimate).
#[derive(Clone, Debug, Deserialize)]
pub struct Dataset {
    /// The benchmark it belongs to.
    pub benchmark: String,
    /// Prompt tokens, median.
    pub input_median: f64,
    /// Prompt tokens, 90th percentile.
    pub input_p90: f64,
    /// Prompt tokens at most.
    pub input_max: u32,
    /// Log-normal spread of answers (σ of the log).
    pub output_sigma: f64,
    /// Answer tokens at most.
    pub output_max: u32,
    /// Where the figures come from.
    pub source: String,
}

/// Every benchmark's dataset, read once from the table compiled in (a test
/// checks that it parses and covers every benchmark with a model).
pub fn datasets() -> &'static [Dataset] {
    static ALL: std::sync::LazyLock<Vec<Dataset>> = std::sync::LazyLock::new(|| {
        let text = include_str!("../../../../data/calibration/public/datasets.csv");
        csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap_or_default()
    });
    &ALL
}

/// The request class a benchmark's dataset gives, with answers of the run's
/// own mean length.
pub fn class(d: &Dataset, mean_output: f64) -> RequestClass {
    // A log-normal of σ s has mean = median · e^(s²/2) and
    // p90 = median · e^(1.2816 s).
    let s = d.output_sigma;
    let median = mean_output / (s * s / 2.0).exp();
    let output = Dist::LogNormal {
        median: median.max(1.0),
        p90: (median * (1.2816 * s).exp()).max(1.0),
    };
    RequestClass::new(
        &d.benchmark,
        truncated_log_normal(d.input_median, d.input_p90, f64::from(d.input_max)),
        output,
        d.output_max,
    )
}

/// A log-normal of this median and 90th percentile with nothing above `max`
/// (a dataset's cap on prompts), as a histogram of 64 log-spaced bins
/// weighted by the log-normal's probability in each.
pub fn truncated_log_normal(median: f64, p90: f64, max: f64) -> Dist {
    const BINS: usize = 64;
    let sigma = (p90 / median).ln().max(1e-6) / 1.2816;
    let cdf =
        |x: f64| 0.5 * (1.0 + libm::erf((x / median).ln() / (sigma * std::f64::consts::SQRT_2)));
    let edge = |i: usize| max.powf(i as f64 / BINS as f64);
    let bins = (0..BINS)
        .map(|i| (edge(i), edge(i + 1)))
        .map(|(lo, hi)| sim_core::dist::Bin {
            lo,
            hi,
            weight: cdf(hi) - if lo <= 1.0 { 0.0 } else { cdf(lo) },
        })
        .filter(|b| b.weight > 1e-12)
        .collect();
    Dist::Empirical { bins }
}

/// The catalogue's GPU for a `gpu_norm`, exactly: a variant the catalogue
/// lacks (GB200, H100-NVL, ...) is refused, never run as its neighbour.
pub fn gpu(name: &str) -> Option<Gpu> {
    Some(match name {
        "H100" => Gpu::H100,
        "H200" => Gpu::H200,
        "B200" => Gpu::B200,
        "B300" => Gpu::B300,
        "L40S" => Gpu::L40s,
        "MI300X" => Gpu::Mi300x,
        "MI325X" => Gpu::Mi325x,
        "MI355X" => Gpu::Mi355x,
        "RTX PRO 6000" => Gpu::RtxPro6000,
        "RTX 4090" => Gpu::Rtx4090,
        _ => return None,
    })
}

/// The catalogue's model for a benchmark. DeepSeek-R1 has DeepSeek-V3's
/// architecture (its weights are V3's, post-trained).
pub fn model(benchmark: &str) -> Option<Model> {
    Some(match benchmark {
        "llama2-70b" => Model::Llama2_70b,
        "llama3.1-8b" => Model::Llama31_8b,
        "llama3.1-70b" => Model::Llama31_70b,
        "llama3.1-405b" => Model::Llama31_405b,
        "mixtral-8x7b" => Model::Mixtral8x7b,
        "deepseek-r1" => Model::DeepseekV3,
        "gpt-oss-120b" => Model::GptOss120b,
        _ => return None,
    })
}

/// The profile for an engine string, where there is one.
pub fn software(engine: &str) -> Option<ServingSoftware> {
    if engine.starts_with("TensorRT-LLM") {
        Some(ServingSoftware::TensorrtLlm1)
    } else if engine == "vLLM" {
        Some(ServingSoftware::Vllm)
    } else if engine == "SGLang" {
        Some(ServingSoftware::Sglang)
    } else {
        None
    }
}

/// The weights' format as stated, or, where the row states none, the lowest
/// the GPU computes natively (FP4 tensor cores, else FP8, else 16-bit), as a
/// submitter chooses within the accuracy target; the second value says
/// whether it was chosen.
pub fn precision(stated: &str, gpu: Gpu) -> Result<(Precision, bool), String> {
    match stated.to_ascii_lowercase().as_str() {
        "fp4" | "nvfp4" => Ok((Precision::Nvfp4, false)),
        "mxfp4" => Ok((Precision::Mxfp4, false)),
        "fp8" => Ok((Precision::Fp8, false)),
        "fp16" | "bf16" => Ok((Precision::Bf16, false)),
        "int8" => Ok((Precision::Int8, false)),
        "" | "unset" => {
            let spec = gpu.spec();
            let p = if spec.fp4_tflops.is_some() {
                Precision::Nvfp4
            } else if spec.fp8_tflops.is_some() {
                Precision::Fp8
            } else {
                Precision::Bf16
            };
            Ok((p, true))
        }
        other => Err(format!(
            "precision {other:?} has no counterpart in the catalogue"
        )),
    }
}

pub(super) fn keys(row: &Row) -> BTreeMap<&'static str, serde_json::Value> {
    BTreeMap::from([
        ("source_path", row.source_path.clone().into()),
        ("scenario_norm", row.scenario_norm.clone().into()),
    ])
}

/// What a row needs before it can run: the system, or why it cannot be expressed.
fn express(row: &Row) -> Result<(Setup, bool, Dataset, f64), String> {
    if !matches!(
        row.scenario_norm.as_str(),
        "Server" | "Interactive" | "Offline"
    ) {
        return Err(format!(
            "{} runs one query at a time: not a capacity measurement",
            row.scenario_norm
        ));
    }
    if row.division != "closed" {
        return Err(format!(
            "{} division: the submitter may change the model (another checkpoint, pruned or quantised below the accuracy target), so the benchmark's model is not what ran",
            row.division
        ));
    }
    if row.system_id.to_ascii_lowercase().contains("reference") {
        return Err("the MLCommons reference harness bounds the requests in flight by its worker count, which the results do not state: a measure of the harness, not the engine".into());
    }
    let gpu = gpu(&row.gpu_norm)
        .ok_or_else(|| format!("GPU {:?} is not in the catalogue", row.gpu_norm))?;
    let model = model(&row.benchmark_norm).ok_or_else(|| {
        format!(
            "benchmark {:?} has no model in the catalogue",
            row.benchmark_norm
        )
    })?;
    let software = software(&row.engine)
        .ok_or_else(|| format!("no profile for the engine {:?} yet", row.engine))?;
    let dataset = datasets()
        .iter()
        .find(|d| d.benchmark == row.benchmark_norm)
        .cloned()
        .ok_or_else(|| format!("no dataset lengths for {:?}", row.benchmark_norm))?;
    let mean_output = mean_output(row, &dataset)?;
    if row.gpu_count == 0 || row.nodes == 0 {
        return Err("no accelerators counted".into());
    }
    let (weights, chosen) = precision(&row.precision, gpu)?;
    let setup = Setup {
        gpu,
        model,
        software,
        weights,
        tp: 1,
        replicas: row.gpu_count,
        expert_parallel: false,
        max_batch: None,
        costs: None,
        in_process: true,
    };
    Ok((setup, chosen, dataset, mean_output))
}

/// A row's mean answer length, or why it has none: the file's, unless it
/// is longer than the benchmark's longest answer (58 Llama-3.1-8B rows give
/// millions of tokens, the accuracy log's total rather than its mean). Such
/// a row is refused by that reason, never run with a length of its own
/// making: `tokens_per_s / samples_per_s` gives 128–129 tokens for them,
/// and reading it adds their Server runs' rate searches, which `tlab
/// calibrate`'s minute cannot hold yet (docs/calibration-public.md).
fn mean_output(row: &Row, dataset: &Dataset) -> Result<f64, String> {
    let longest = f64::from(dataset.output_max);
    match row
        .mean_output_tokens_per_sample
        .filter(|v| v.is_finite() && *v >= 1.0)
    {
        Some(v) if v <= longest => Ok(v),
        Some(v) => Err(format!(
            "mean_output_tokens_per_sample {v:.0} is longer than the benchmark's longest answer ({longest} tokens): a total, not a mean"
        )),
        None => Err("no mean_output_tokens_per_sample".into()),
    }
}

/// Compare one row with its simulation (with `trial`'s constants where given).
pub fn compare(row: &Row, trial: Option<Trial>) -> Compared {
    let group = [
        row.gpu_norm.as_str(),
        row.engine.as_str(),
        row.benchmark_norm.as_str(),
    ];
    let refuse = |why: String| Compared::refused(Source::Mlperf, row.line, keys(row), group, why);
    let (mut setup, chosen, dataset, mean_output) = match express(row) {
        Ok(v) => v,
        Err(why) => return refuse(why),
    };
    Trial::apply(trial, &mut setup);
    let class = class(&dataset, mean_output);
    let (setup, tasks_per_replica) = match choose_layout(row, &setup, &class) {
        Ok(s) => s,
        Err(why) => return refuse(why),
    };
    let capacity = tasks_per_replica * f64::from(setup.replicas);
    let layout = format!(
        "{} (layout chosen{})",
        setup.describe(),
        if chosen { ", precision chosen" } else { "" }
    );
    let mut c = Compared::expressed(Source::Mlperf, row.line, keys(row), group, Some(layout));
    c.system = Some(setup.system());
    c.point = Some(Point::of_class(
        &setup.model,
        &class,
        in_flight(row, mean_output, setup.replicas),
    ));
    let outcome = if row.scenario_norm == "Offline" {
        offline(row, &setup, &class, capacity, &mut c)
    } else {
        let search = trial.is_none_or(|t| t.rate_search);
        server(row, &setup, &class, capacity, search, &mut c)
    };
    if let Err(why) = outcome {
        c.expressible = false;
        c.reason = Some(why);
    }
    c
}

/// An Offline row's system as simulated, one replica of it, the class it
/// ran and its measured saturated tasks/s per replica: where the truth of
/// its capacity is known (the verdict's test).
#[cfg(test)]
pub fn measured_capacity(row: &Row) -> Result<(Setup, RequestClass, f64, f64), String> {
    if row.scenario_norm != "Offline" {
        return Err("not an Offline row".into());
    }
    let (setup, _, dataset, mean_output) = express(row)?;
    let class = class(&dataset, mean_output);
    let (setup, simulated) = choose_layout(row, &setup, &class)?;
    let measured = row.tokens_per_s.ok_or("no tokens_per_s")?;
    let per_task = class.mean_generated_tokens();
    let per_replica = measured / per_task / f64::from(setup.replicas.max(1));
    Ok((
        Setup {
            replicas: 1,
            ..setup
        },
        class,
        per_replica,
        simulated,
    ))
}

/// A Server row's requests in flight per replica, by Little's law on its
/// measured means: `target_qps` × (TTFT + the rest of the answer at the
/// mean time per token). None for Offline, which states no latency.
fn in_flight(row: &Row, mean_output: f64, replicas: u32) -> Option<f64> {
    let e2e_ms = row.ttft_mean_ms? + (mean_output - 1.0).max(0.0) * row.tpot_mean_ms?;
    let per_s = row.target_qps.filter(|q| *q > 0.0)?;
    (row.scenario_norm != "Offline").then(|| per_s * e2e_ms / 1000.0 / f64::from(replicas.max(1)))
}

/// Offline: saturated output tokens/s (the system's saturated tasks/s
/// times the tokens a task generates) against the measured.
fn offline(
    row: &Row,
    setup: &Setup,
    class: &RequestClass,
    capacity: f64,
    c: &mut Compared,
) -> Result<(), String> {
    let measured = row.tokens_per_s.ok_or("no tokens_per_s")?;
    let s = setup.scenario(
        "mean",
        Arrival::Poisson { rate_per_s: 1.0 },
        class.clone(),
        1.0,
    );
    let (per_task, _) = s.mean_tokens();
    c.put("tokens_per_s", Some(measured), Some(capacity * per_task));
    Ok(())
}

/// One Server run at `rate` queries/s, and whether it keeps the
/// benchmark's p99 limits: the planner's verdict (`PlanSlo::check`: p99
/// TTFT and TPOT within the limits, no request unanswered, the run drained).
/// With `whole` false the run stops as soon as the verdict is settled, as a
/// planning run does (more than 1 % of the run's requests already past a
/// limit), and only the verdict is meaningful.
fn at_rate(
    row: &Row,
    setup: &Setup,
    class: &RequestClass,
    rate: f64,
    whole: bool,
) -> Result<(bool, Report), String> {
    let (Some(ttft), Some(tpot)) = (row.slo_ttft_ms, row.slo_tpot_ms) else {
        return Err("no slo_ttft_ms or slo_tpot_ms".into());
    };
    let limits = sim_core::plan::PlanSlo {
        ttft_p99_ms: ttft,
        tpot_p99_ms: tpot,
        max_error_fraction: 0.0,
        min_goodput: 0.0,
    };
    let cut = Setup {
        replicas: setup.replicas.min(SIMULATED_REPLICAS),
        ..setup.clone()
    };
    let share = f64::from(cut.replicas) / f64::from(setup.replicas);
    let s = cut.scenario(
        &row.benchmark_norm,
        Arrival::Poisson {
            rate_per_s: rate * share,
        },
        class.clone(),
        SERVER_S,
    );
    let mut r = if whole {
        cut.run(s)?
    } else {
        cut.planning_run(limits, s)?
    };
    r.throughput.output_tokens_per_s /= share;
    r.throughput.input_tokens_per_s /= share;
    Ok((limits.check(&r).is_ok(), r))
}

/// Server and Interactive: the run at `target_qps` against the measured
/// latencies, and the highest rate that keeps the limits (a ratio search:
/// steps of 1.25× until the answer changes, then four halvings of the gap;
/// no rate above the system's saturated `capacity`, tasks/s, is run: its
/// queue grows).
fn server(
    row: &Row,
    setup: &Setup,
    class: &RequestClass,
    capacity: f64,
    search: bool,
    c: &mut Compared,
) -> Result<(), String> {
    let target = row.target_qps.filter(|q| *q > 0.0).ok_or("no target_qps")?;
    let (ok, r) = at_rate(row, setup, class, target, true)?;
    let o = &r.overall;
    for (name, measured, simulated) in [
        ("ttft_mean_ms", row.ttft_mean_ms, o.ttft.mean_ms),
        ("ttft_p99_ms", row.ttft_p99_ms, o.ttft.p99_ms),
        ("tpot_mean_ms", row.tpot_mean_ms, o.tpot.mean_ms),
        ("tpot_p99_ms", row.tpot_p99_ms, o.tpot.p99_ms),
        (
            "tokens_per_s",
            row.tokens_per_s,
            Some(r.throughput.output_tokens_per_s),
        ),
    ] {
        c.put(name, measured, simulated);
    }
    c.limits_hold = Some(ok);
    if !search {
        return Ok(());
    }
    let (mut good, mut bad): (f64, f64) = if ok { (1.0, f64::NAN) } else { (0.0, 1.0) };
    let ceiling = capacity / target;
    for _ in 0..8 {
        let next = if ok {
            (good * 1.25).min(ceiling)
        } else {
            (bad / 1.25).min(0.97 * ceiling)
        };
        if !(1.0 / 8.0..=4.0).contains(&next) || (ok && next <= good) {
            if ok && next <= good {
                bad = ceiling.max(good);
            }
            break;
        }
        let (k, _) = at_rate(row, setup, class, target * next, false)?;
        if k == ok {
            if ok { good = next } else { bad = next }
        } else {
            if ok {
                bad = next
            } else {
                good = next
            }
            break;
        }
    }
    if bad.is_finite() && good > 0.0 {
        for _ in 0..4 {
            let mid = (good * bad).sqrt();
            let (k, _) = at_rate(row, setup, class, target * mid, false)?;
            if k { good = mid } else { bad = mid }
        }
    }
    c.rate_ratio = Some(good);
    Ok(())
}
