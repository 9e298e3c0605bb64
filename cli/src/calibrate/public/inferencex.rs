//! InferenceX rows: a closed loop of `concurrency` clients with no think
//! time, prompts and answers uniform in [0.8, 1.0] × the nominal lengths
//! (answers generated to their drawn length), on the stated layout, with MTP
//! where the row had it. Throughput per GPU and latencies against the
//! measured ones.

use std::collections::BTreeMap;

use serde::Deserialize;
use sim_core::Scenario;
use sim_core::dist::Dist;
use sim_core::physics::{Gpu, Model, Precision, ServingSoftware};
use sim_core::ranges::Point;
use sim_core::scenario::{Arrival, RequestClass, Speculative, SpeculativeMethod, UserStep};

use super::{Compared, Setup, Source, Trial};

/// Requests each client sends in a benchmark run, about: the simulated
/// window is this many of the row's measured mean end-to-end times.
pub const REQUESTS_PER_CLIENT: f64 = 10.0;

/// One row of `inferencex-dsr1-given.csv` (the columns the harness reads).
#[derive(Clone, Debug, Deserialize)]
pub struct Row {
    /// The row's line in its file.
    #[serde(skip)]
    pub line: usize,
    /// The benchmark run.
    pub run_url: String,
    /// GPU (`h100`, `b200`, `mi355x`, ...).
    pub hardware: String,
    /// Engine (`sglang`, `trt`, `dynamo-trt`, ...).
    pub framework: String,
    /// `fp4` or `fp8`.
    pub precision: String,
    /// `mtp` or `none`.
    pub spec_method: String,
    /// Prefill and decode on separate workers.
    pub disagg: String,
    /// Tensor parallelism of the (decode) workers.
    pub decode_tp: u32,
    /// Expert parallelism of the (decode) workers.
    pub decode_ep: u32,
    /// Data-parallel attention on the decode workers.
    pub decode_dp_attention: String,
    /// Data-parallel attention on the prefill workers.
    pub prefill_dp_attention: String,
    /// Nominal prompt tokens.
    pub isl: u32,
    /// Nominal answer tokens.
    pub osl: u32,
    /// Clients.
    pub concurrency: u32,
    /// Input and output tokens/s per GPU.
    pub tput_per_gpu: Option<f64>,
    /// Output tokens/s per GPU.
    pub output_tput_per_gpu: Option<f64>,
    /// TTFT, ms.
    pub mean_ttft_ms: Option<f64>,
    /// TTFT median, ms.
    pub median_ttft_ms: Option<f64>,
    /// TTFT p99, ms.
    pub p99_ttft_ms: Option<f64>,
    /// Time per output token, ms.
    pub mean_tpot_ms: Option<f64>,
    /// Time per output token, median, ms.
    pub median_tpot_ms: Option<f64>,
    /// End to end, ms.
    pub mean_e2el_ms: Option<f64>,
    /// End to end, median, ms.
    pub median_e2el_ms: Option<f64>,
    /// Input tokens/s per GPU.
    #[serde(default)]
    pub input_tput_per_gpu: Option<f64>,
    /// Time between streamed chunks (a pass apart), mean, ms.
    #[serde(default)]
    pub mean_itl_ms: Option<f64>,
    /// Mean power per GPU over the run, W.
    #[serde(default)]
    pub avg_power_w: Option<f64>,
    /// Joules per output token, as the file gives it.
    #[serde(default)]
    pub joules_per_output_token: Option<f64>,
}

/// Read the file's rows, refusing a malformed one by its line and column.
pub fn read(text: &str) -> Result<Vec<Row>, String> {
    super::read_rows(text, |r: &mut Row, line| r.line = line)
}

fn yes(v: &str) -> bool {
    v.eq_ignore_ascii_case("true")
}

/// The catalogue's GPU for a `hardware` name, exactly (GB200 and GB300 are
/// refused, not run as B200 and B300).
pub fn gpu(name: &str) -> Option<Gpu> {
    Some(match name {
        "h100" => Gpu::H100,
        "h200" => Gpu::H200,
        "b200" => Gpu::B200,
        "b300" => Gpu::B300,
        "mi300x" => Gpu::Mi300x,
        "mi325x" => Gpu::Mi325x,
        "mi355x" => Gpu::Mi355x,
        _ => return None,
    })
}

pub(super) fn keys(row: &Row) -> BTreeMap<&'static str, serde_json::Value> {
    BTreeMap::from([
        ("run_url", row.run_url.clone().into()),
        ("concurrency", row.concurrency.into()),
        ("isl", row.isl.into()),
        ("osl", row.osl.into()),
    ])
}

/// The profile for a `framework` name, where there is one: `trt` is
/// TensorRT-LLM 1.x (`trtllm-serve`), `sglang` SGLang
/// (`sglang.launch_server`; `mori-sglang` and `dynamo-sglang` are
/// disaggregated deployments of it, refused by that reason).
pub fn software(framework: &str) -> Option<ServingSoftware> {
    match framework {
        "trt" => Some(ServingSoftware::TensorrtLlm1),
        "sglang" | "mori-sglang" | "dynamo-sglang" => Some(ServingSoftware::Sglang),
        _ => None,
    }
}

/// The setup a row states, or why it cannot be expressed.
fn express(row: &Row) -> Result<Setup, String> {
    layout(
        row,
        software(&row.framework)
            .ok_or_else(|| format!("no profile for the engine {:?} yet", row.framework)),
    )
}

/// The setup a row states, served by `software` (its engine's profile, or
/// why it has none; any profile where only the work counts), or why it
/// cannot be expressed: the GPU is checked first.
pub fn layout(row: &Row, software: Result<ServingSoftware, String>) -> Result<Setup, String> {
    let gpu = gpu(&row.hardware)
        .ok_or_else(|| format!("GPU {:?} is not in the catalogue", row.hardware))?;
    let software = software?;
    if yes(&row.disagg) {
        return Err("disaggregated prefill and decode workers: not expressed yet".into());
    }
    if yes(&row.decode_dp_attention) || yes(&row.prefill_dp_attention) {
        return Err("data-parallel attention is not modelled".into());
    }
    let weights = match row.precision.as_str() {
        "fp4" => Precision::Nvfp4,
        "fp8" => Precision::Fp8,
        other => return Err(format!("precision {other:?} has no counterpart")),
    };
    let tp = row.decode_tp.max(1);
    if row.decode_ep > tp {
        return Err(format!(
            "EP{} across more GPUs than TP{tp}: not expressed",
            row.decode_ep
        ));
    }
    if row.concurrency == 0 || row.isl == 0 || row.osl < 2 {
        return Err("no clients, or no prompt or answer".into());
    }
    Ok(Setup {
        gpu,
        model: Model::DeepseekV3,
        software,
        weights,
        tp,
        replicas: 1,
        expert_parallel: row.decode_ep > 1,
        max_batch: None,
        costs: None,
        // InferenceX sends its requests to the engine's API server.
        in_process: false,
    })
}

/// GPUs a co-located run used: one engine instance of `decode_tp` GPUs,
/// whose expert parallelism spreads the experts over those same GPUs. The
/// file's `gpu_count_total` is TP × EP for such rows (64 for TP8 EP8), but
/// its own throughput per GPU is over TP's GPUs: at concurrency 8 and
/// 7.95 ms a token, 8 clients make about 1,006 tokens/s, the 121.6 per GPU
/// it gives times 8 GPUs, not 64.
pub fn gpus(row: &Row) -> u32 {
    row.decode_tp.max(1)
}

/// A measured end-to-end time to size the run by: the mean, else the
/// median, else TTFT plus the answer's tokens at the measured time per token.
fn e2e_ms(row: &Row) -> Option<f64> {
    let tpot = row.mean_tpot_ms.or(row.median_tpot_ms);
    let ttft = row.mean_ttft_ms.or(row.median_ttft_ms);
    row.mean_e2el_ms
        .or(row.median_e2el_ms)
        .or_else(|| Some(ttft? + 0.9 * f64::from(row.osl) * tpot?))
        .filter(|v| *v > 0.0 && v.is_finite())
}

/// The run a row is compared with: its setup, and the scenario of its
/// clients on it (MTP where the row used it), or why it cannot be run.
pub fn scenario(row: &Row, trial: Option<Trial>) -> Result<(Setup, Scenario), String> {
    let mut setup = express(row)?;
    Trial::apply(trial, &mut setup);
    if !setup.fits() {
        return Err(format!(
            "DeepSeek-R1 in {} does not fit on TP{} {}",
            setup.weights.name(),
            setup.tp,
            row.hardware
        ));
    }
    let e2e_ms = e2e_ms(row).ok_or("no latency to size the run by")?;
    let class = class(row);
    let duration_s = (REQUESTS_PER_CLIENT * e2e_ms / 1000.0).clamp(30.0, 3600.0);
    let mut s = setup.scenario(
        "inferencex",
        Arrival::ClosedLoop {
            users: vec![UserStep {
                at_s: 0.0,
                users: row.concurrency,
            }],
            think_time_s: Dist::Fixed { value: 0.0 },
        },
        class,
        duration_s,
    );
    if row.spec_method == "mtp" {
        let (tokens, acceptance) = SpeculativeMethod::Mtp.defaults();
        s.serving.speculative = Some(Speculative {
            method: SpeculativeMethod::Mtp,
            tokens,
            acceptance,
        });
    }
    Ok((setup, s))
}

/// The row's calls: prompts and answers uniform from 80 % of the nominal
/// lengths to them (the benchmark's random dataset).
fn class(row: &Row) -> RequestClass {
    let nominal = |n: u32| Dist::Uniform {
        min: (0.8 * f64::from(n)).round(),
        max: f64::from(n),
    };
    RequestClass::new("random", nominal(row.isl), nominal(row.osl), row.osl)
}

/// Compare one row with its simulation (with `trial`'s constants where given).
pub fn compare(row: &Row, trial: Option<Trial>) -> Compared {
    let group = [row.hardware.as_str(), row.framework.as_str(), "deepseek-r1"];
    let refuse =
        |why: String| Compared::refused(Source::Inferencex, row.line, keys(row), group, why);
    let (setup, s) = match scenario(row, trial) {
        Ok(v) => v,
        Err(why) => return refuse(why),
    };
    let mtp = row.spec_method == "mtp";
    // The load: the clients, all in flight (no think time), per replica.
    let point = s.workload.classes.first().map(|class| {
        Point::of_class(
            &setup.model,
            class,
            Some(f64::from(row.concurrency) / f64::from(setup.replicas.max(1))),
        )
    });
    let r = match setup.run(s) {
        Ok(r) => r,
        Err(why) => return refuse(why),
    };
    let gpus = f64::from(gpus(row));
    let t = &r.throughput;
    let o = &r.overall;
    let layout = format!("{}{}", setup.describe(), if mtp { ", MTP" } else { "" });
    let mut c = Compared::expressed(Source::Inferencex, row.line, keys(row), group, Some(layout));
    c.system = Some(setup.system());
    c.point = point;
    for (name, measured, simulated) in [
        (
            "tput_per_gpu",
            row.tput_per_gpu,
            Some((t.input_tokens_per_s + t.output_tokens_per_s) / gpus),
        ),
        (
            "output_tput_per_gpu",
            row.output_tput_per_gpu,
            Some(t.output_tokens_per_s / gpus),
        ),
        ("mean_ttft_ms", row.mean_ttft_ms, o.ttft.mean_ms),
        ("median_ttft_ms", row.median_ttft_ms, o.ttft.p50_ms),
        ("p99_ttft_ms", row.p99_ttft_ms, o.ttft.p99_ms),
        ("mean_tpot_ms", row.mean_tpot_ms, o.tpot.mean_ms),
        ("median_tpot_ms", row.median_tpot_ms, o.tpot.p50_ms),
        ("mean_e2el_ms", row.mean_e2el_ms, o.e2e.mean_ms),
        ("median_e2el_ms", row.median_e2el_ms, o.e2e.p50_ms),
    ] {
        c.put(name, measured, simulated);
    }
    c
}
