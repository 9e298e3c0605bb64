//! `tlab calibrate --measured PATH --fit`: vLLM's profile refitted to a run
//! the user measured on their own hardware. The KV reservation first (to the
//! cache size the engine reported), then the step-time constants by the same
//! bounded coordinate search as the CSV fit, on the replay's log errors of
//! TTFT, time per output token and end-to-end (mean, p50, p90, p99). Every
//! constant stays in the range `sim_core::physics::KNOBS` documents.

use crate::calibrate::search;
use sim_core::physics::{
    FittedProfile, KNOBS, KV_BLOCK_TOKENS, Knob, MEMORY_RANGES, MOE_KNOBS, MemoryModel, VLLM_COSTS,
    Validated,
};
use sim_core::traces::measured::{Measured, MetricRow};
use sim_core::{Scenario, ValidScenario};

/// Fewest requests a fit reads percentiles from.
const MIN_REQUESTS: usize = 50;
/// Fewest requests in flight at once for a run to say anything about batching.
const MIN_IN_FLIGHT: usize = 8;
/// The loss a cell with no simulated value (nothing completed) costs: as if
/// it were e⁵ ≈ 150× off.
const MISSING_CELL_LOSS: f64 = 25.0;

/// A fit's result: the profile, and the replay's rows before and after.
pub struct Fit {
    /// The fitted profile.
    pub profile: FittedProfile,
    /// The rows with vLLM's profile as shipped.
    pub before: Vec<MetricRow>,
    /// The rows with the fitted profile.
    pub after: Vec<MetricRow>,
    /// The replay timed by the fitted profile (of the split scenario when
    /// the fit was on one half).
    pub report: sim_core::Report,
    /// How the KV reservation was fitted, in a sentence.
    pub memory: String,
}

/// Why a run cannot be fitted, or None: too few requests, too few with a
/// second token, or a load that never batched.
pub fn too_thin(run: &Measured) -> Option<String> {
    let n = run.requests.len();
    if n < MIN_REQUESTS {
        return Some(format!(
            "the run has {n} requests; a fit needs at least {MIN_REQUESTS} to read latency percentiles from"
        ));
    }
    let streamed = run.requests.iter().filter(|r| r.output >= 2).count();
    if streamed < MIN_REQUESTS {
        return Some(format!(
            "only {streamed} requests generated two tokens or more; time per output token needs at least {MIN_REQUESTS}"
        ));
    }
    let peak = run.peak_in_flight();
    if peak < MIN_IN_FLIGHT {
        return Some(format!(
            "the run never loads the GPU: at most {peak} requests were in flight at once, so it says nothing about batching; measure at a higher rate (at least {MIN_IN_FLIGHT} at once)"
        ));
    }
    None
}

/// Mean squared log error of simulated over measured, every cell of `rows`.
fn loss(rows: &[MetricRow]) -> f64 {
    let cells: Vec<f64> = rows
        .iter()
        .flat_map(|r| {
            (0..4).filter(move |&i| r.measured[i] > 0.0).map(move |i| {
                let s = r.simulated[i];
                if s.is_finite() && s > 0.0 {
                    (s / r.measured[i]).ln().powi(2)
                } else {
                    MISSING_CELL_LOSS
                }
            })
        })
        .collect();
    cells.iter().sum::<f64>() / cells.len().max(1) as f64
}

/// `scenario` timed by `profile`, validated.
fn with_profile(scenario: &Scenario, profile: &FittedProfile) -> Result<ValidScenario, String> {
    let mut s = scenario.clone();
    s.serving.fitted_profile = Some(Box::new(profile.clone()));
    s.validate().map_err(|e| e.to_string())
}

/// The rows of the requests `keep` picks, from the replay of `scenario`
/// (class `class` of its report, or the whole run for None).
fn rows(
    run: &Measured,
    valid: &ValidScenario,
    keep: &dyn Fn(usize) -> bool,
    class: Option<usize>,
) -> Vec<MetricRow> {
    let report = sim_core::run(valid);
    let stats = class.map_or(&report.overall, |c| &report.per_class[c]);
    run.metric_rows(keep, stats)
}

/// The KV reservation that sizes the replay's cache as the engine reported
/// (memory outside PyTorch first; the sampler's copies only when that alone
/// cannot reach it), and the sentence that says what moved.
fn fit_memory(
    scenario: &Scenario,
    kv_tokens: Option<u64>,
    shipped: &FittedProfile,
) -> (f64, f64, String) {
    let (non_torch_bytes, sampler_logit_copies) =
        (shipped.non_torch_bytes, shipped.sampler_logit_copies);
    let Some(target) = kv_tokens else {
        return (
            non_torch_bytes,
            sampler_logit_copies,
            "KV reservation kept (the run does not state its KV cache size)".into(),
        );
    };
    let tokens = |nt: f64, copies: f64| {
        let mut d = scenario.deployment();
        d.profile.memory = MemoryModel::Vllm {
            non_torch_bytes: nt,
            sampler_logit_copies: copies,
        };
        d.kv_capacity_blocks()
            .map_or(0, |b| b * u64::from(KV_BLOCK_TOKENS))
    };
    // KV tokens fall as either reservation grows: bisect one, then the other.
    let bisect = |lo: f64, hi: f64, f: &dyn Fn(f64) -> u64| {
        let (mut lo, mut hi) = (lo, hi);
        for _ in 0..60 {
            let mid = (lo + hi) / 2.0;
            if f(mid) > target { lo = mid } else { hi = mid }
        }
        (lo + hi) / 2.0
    };
    let [(_, nt_lo, nt_hi), (_, c_lo, _)] = MEMORY_RANGES;
    let before = tokens(non_torch_bytes, sampler_logit_copies);
    let (nt, copies) = if tokens(nt_lo, sampler_logit_copies) >= target {
        (
            bisect(nt_lo, nt_hi, &|nt| tokens(nt, sampler_logit_copies)),
            sampler_logit_copies,
        )
    } else {
        (
            nt_lo,
            bisect(c_lo, sampler_logit_copies, &|c| tokens(nt_lo, c)),
        )
    };
    let after = tokens(nt, copies);
    let note = format!(
        "KV cache {} → {} tokens (measured {}): memory outside PyTorch {:.2} → {:.2} GB per GPU, sampler's logit copies {:.0} → {:.1}",
        sim_core::format::thousands(before),
        sim_core::format::thousands(after),
        sim_core::format::thousands(target),
        non_torch_bytes / 1e9,
        nt / 1e9,
        sampler_logit_copies,
        copies
    );
    (nt, copies, note)
}

/// Fit vLLM's profile to `run`, scoring only the requests `fit_on` picks
/// (all of them for a whole-run fit): its class in the split replay is 0.
pub fn fit(
    run: &Measured,
    rounds: u32,
    name: &str,
    source: &str,
    split: Option<&dyn Fn(usize) -> bool>,
) -> Result<Fit, String> {
    if let Some(why) = too_thin(run) {
        return Err(format!("cannot fit this run: {why}"));
    }
    let (scenario, _) = run.scenario_split(&sim_core::presets::chatbot_h100(), split)?;
    let fit_on = |i: usize| split.is_none_or(|scored| !scored(i));
    let class = split.map(|_| 0);
    let mut profile = FittedProfile::from_vllm(
        name,
        Validated {
            source: source.to_owned(),
            gpu: scenario.serving.gpu,
            model: scenario.serving.model,
            tp: scenario.serving.gpus_per_replica,
            tokens_per_s: scenario.offered_tokens_per_s_per_replica(),
            error_pct: [0.0; 3],
        },
    );
    let (non_torch_bytes, sampler_logit_copies, memory) =
        fit_memory(&scenario, run.settings.kv_tokens, &profile);
    profile.non_torch_bytes = non_torch_bytes;
    profile.sampler_logit_copies = sampler_logit_copies;
    let dims = scenario.serving.model.dims();
    let knobs: Vec<&Knob> = KNOBS
        .iter()
        .filter(|k| {
            // All-reduce constants mean nothing on one GPU.
            scenario.serving.gpus_per_replica > 1
                || !matches!(k.name, "allreduce_ns" | "link_efficiency")
        })
        .chain(MOE_KNOBS.iter().filter(|_| dims.moe.is_some()))
        .collect();
    let valid = scenario.clone().validate().map_err(|e| e.to_string())?;
    let before = rows(run, &valid, &fit_on, class);
    let (costs, _) = search(VLLM_COSTS, rounds, &knobs, |c| {
        let mut trial = profile.clone();
        trial.costs = *c;
        Ok(loss(&rows(
            run,
            &with_profile(&scenario, &trial)?,
            &fit_on,
            class,
        )))
    })?;
    profile.costs = costs;
    let report = sim_core::run(&with_profile(&scenario, &profile)?);
    let after = run.metric_rows(
        &fit_on,
        class.map_or(&report.overall, |c| &report.per_class[c]),
    );
    profile.validated.error_pct = std::array::from_fn(|i| after[i].mean_abs_error_pct());
    Ok(Fit {
        profile,
        before,
        after,
        report,
        memory,
    })
}

/// The rows of the requests `scored` picks, timed by `profile`, in the
/// split replay (class 1).
pub fn score(
    run: &Measured,
    profile: &FittedProfile,
    scored: &dyn Fn(usize) -> bool,
) -> Result<Vec<MetricRow>, String> {
    let (scenario, _) = run.scenario_split(&sim_core::presets::chatbot_h100(), Some(scored))?;
    Ok(rows(
        run,
        &with_profile(&scenario, profile)?,
        scored,
        Some(1),
    ))
}

/// The error table: per metric, mean / p50 / p90 / p99 error before and after.
pub fn error_table(columns: &[(&str, &[MetricRow])]) -> String {
    let mut o = format!("{:<22}", "error (sim/measured)");
    for (title, _) in columns {
        o += &format!(" {title:>30}");
    }
    o += &format!("\n{:<22}", "");
    for _ in columns {
        o += &format!(" {:>30}", "mean   p50   p90   p99");
    }
    o += "\n";
    for m in 0..columns.first().map_or(0, |c| c.1.len()) {
        o += &format!("{:<22}", columns[0].1[m].metric);
        for (_, rows) in columns {
            let cells: Vec<String> = rows[m]
                .errors()
                .iter()
                .map(|e| {
                    if e.is_finite() {
                        format!("{:+.0}%", e * 100.0)
                    } else {
                        "—".into()
                    }
                })
                .collect();
            o += &format!(
                " {:>30}",
                cells
                    .iter()
                    .map(|c| format!("{c:>5}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
        o += "\n";
    }
    o
}
