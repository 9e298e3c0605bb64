//! Fitting a profile to the public measurements: `tlab calibrate --fit` on
//! MLPerf and InferenceX files fits TensorRT-LLM 1.x's constants to the
//! rows of its engine that measure its physics most directly: MLPerf
//! Offline's saturated tokens/s and, on InferenceX's closed loops at a
//! stated layout and concurrency, throughput per GPU, the median time per
//! output token and the median TTFT. MLPerf Server and Interactive rows are
//! scored with the fitted constants, not fitted: their latencies at
//! `target_qps` hang on the batch and token budget the harness chooses for
//! them (submitters tune both), which the engine's constants must not
//! absorb; and their rate search would make every trial a minute long.
//!
//! `--leave-out GPU` fits without one GPU's rows and scores them apart: a
//! leave-one-system-out figure, the only kind the trust sentences quote.

use sim_core::physics::{KNOBS, Knob, MOE_KNOBS, ServingCosts, ServingSoftware, TRTLLM_COSTS};

use super::{Calibration, Compared, Files, Job, Trial, compare_jobs, jobs, markdown};
use crate::calibrate::fit::{as_rust, search};

/// The profile the public files fit.
pub const FITTED: ServingSoftware = ServingSoftware::TensorrtLlm1;

/// The figures the fit reads, per source: each is one term of the loss
/// (its rows' mean squared log error), and the terms are averaged.
const FITTED_FIGURES: [(&str, &str); 4] = [
    ("mlperf", "tokens_per_s"),
    ("inferencex", "tput_per_gpu"),
    ("inferencex", "median_tpot_ms"),
    ("inferencex", "median_ttft_ms"),
];

/// The constants the fit moves: every serving part the public rows inform
/// (all of them run FP8 or FP4 weights, so the FP8 multiplies' share of
/// their peak is fitted and the 16-bit ones are not).
fn knobs() -> Vec<&'static Knob> {
    KNOBS
        .iter()
        .chain(&MOE_KNOBS)
        .chain(
            sim_core::physics::FIXED_KNOBS
                .iter()
                .filter(|k| k.name == "compute_fp8"),
        )
        .filter(|k| !matches!(k.name, "compute_prefill" | "compute_decode"))
        .collect()
}

/// Whether the fit reads `job`: a row of the fitted profile, MLPerf
/// Offline or InferenceX.
fn fitted(job: &Job) -> bool {
    job.software() == Some(FITTED)
        && match job {
            Job::Mlperf(r) => r.scenario_norm == "Offline",
            Job::Inferencex(_) => true,
        }
}

/// The row's GPU as its file names it.
fn gpu_name(job: &Job) -> &str {
    match job {
        Job::Mlperf(r) => &r.gpu_norm,
        Job::Inferencex(r) => &r.hardware,
    }
}

/// A GPU's name as `--leave-out` compares it: letters and digits, lower
/// case ("RTX PRO 6000", "rtx-pro-6000" and "rtxpro6000" are one GPU).
fn gpu_key(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

fn gpu_of(job: &Job) -> String {
    gpu_key(gpu_name(job))
}

/// The GPU `--leave-out` names, as [`gpu_of`] reads rows; an error naming
/// the GPUs the fitted rows run on when none of them is it (a misspelt GPU
/// would otherwise leave nothing out and fit every row).
fn held_out_key(jobs: &[Job], leave_out: &str) -> Result<String, String> {
    let key = gpu_key(leave_out);
    if jobs.iter().any(|j| gpu_of(j) == key) {
        return Ok(key);
    }
    let mut gpus: Vec<&str> = jobs.iter().map(gpu_name).collect();
    gpus.sort_unstable();
    gpus.dedup();
    Err(format!(
        "--leave-out {leave_out:?}: no row the fit reads runs on that GPU; they run on {}",
        gpus.join(", ")
    ))
}

/// The fit's loss on compared rows: per fitted figure, the mean squared log
/// error of its rows; the mean over the figures that have rows.
pub fn loss(rows: &[Compared]) -> f64 {
    let terms: Vec<f64> = FITTED_FIGURES
        .iter()
        .filter_map(|(source, figure)| {
            let errors: Vec<f64> = rows
                .iter()
                .filter(|c| c.source.key() == *source)
                .filter_map(|c| c.error(figure))
                .map(|e| (1.0 + e).max(1e-6).ln().powi(2))
                .collect();
            (!errors.is_empty()).then(|| errors.iter().sum::<f64>() / errors.len() as f64)
        })
        .collect();
    if terms.is_empty() {
        f64::INFINITY
    } else {
        terms.iter().sum::<f64>() / terms.len() as f64
    }
}

/// Fit [`FITTED`]'s constants to the rows of `public` it runs (without the
/// GPU `leave_out` names), from `start`, for `rounds` of the coordinate
/// search: the constants and their loss.
pub fn fit(
    public: &Files,
    leave_out: Option<&str>,
    start: ServingCosts,
    rounds: u32,
) -> Result<(ServingCosts, f64, usize), String> {
    let fitted_rows: Vec<Job> = jobs(public)?.into_iter().filter(fitted).collect();
    let held_out = leave_out
        .map(|g| held_out_key(&fitted_rows, g))
        .transpose()?;
    let train: Vec<Job> = fitted_rows
        .into_iter()
        .filter(|j| held_out.as_ref().is_none_or(|g| gpu_of(j) != *g))
        .collect();
    if train.is_empty() {
        return Err(format!(
            "no rows to fit: the files have no MLPerf Offline or InferenceX rows of {}{}",
            FITTED.name(),
            leave_out
                .map(|g| format!(" besides {g}"))
                .unwrap_or_default()
        ));
    }
    let hidden = indicatif::ProgressBar::hidden();
    // Whether a row can be simulated does not hang on the constants (its
    // system and memory decide), so a loss with no rows behind it, first
    // met at the start, means none of them runs.
    let (costs, l) = search(start, rounds, &knobs(), |c| {
        let trial = Trial {
            software: FITTED,
            costs: *c,
            rate_search: false,
        };
        let l = loss(&compare_jobs(&train, &hidden, Some(trial)).rows);
        if l.is_finite() {
            Ok(l)
        } else {
            Err(format!(
                "no rows to fit: none of the {} rows of {} could be simulated (see their reasons without --fit)",
                train.len(),
                FITTED.name()
            ))
        }
    })?;
    Ok((costs, l, train.len()))
}

/// `tlab calibrate --fit FILE...` on public files: the fit, its constants
/// as Rust, and every row's table with them (with `--leave-out GPU`, that
/// GPU's rows alone: the held-out figure). With `bands`, the step-time
/// error bands of the rows shown instead of their tables (JSON, the
/// held-out GPU's labelled so, for `sim-core/src/ranges/bands.json`).
pub fn command(
    public: &Files,
    leave_out: Option<&str>,
    from_current: bool,
    rounds: u32,
    bands: bool,
) -> Result<String, String> {
    let start = if from_current {
        TRTLLM_COSTS
    } else {
        sim_core::physics::VLLM_COSTS
    };
    let (costs, l, n) = fit(public, leave_out, start, rounds)?;
    let mut o = format!(
        "{} constants fitted on {n} rows{} (loss {l:.4}: the mean over {} of each figure's mean squared log error)\n{}\n",
        FITTED.name(),
        leave_out
            .map(|g| format!(" (without {g})"))
            .unwrap_or_default(),
        FITTED_FIGURES
            .iter()
            .map(|(s, f)| format!("{s} {f}"))
            .collect::<Vec<_>>()
            .join(", "),
        as_rust(&costs),
    );
    let trial = Trial {
        software: FITTED,
        costs,
        rate_search: true,
    };
    let all = jobs(public)?;
    let shown: Vec<Job> = match leave_out {
        Some(g) => all
            .into_iter()
            .filter(|j| gpu_of(j) == gpu_key(g))
            .collect(),
        None => all,
    };
    let c: Calibration = compare_jobs(&shown, &indicatif::ProgressBar::hidden(), Some(trial));
    if bands {
        let b = if leave_out.is_some() {
            super::bands::held_out_bands(&c.rows)
        } else {
            super::bands::bands(&c.rows)
        };
        eprint!("{o}");
        return serde_json::to_string_pretty(&b)
            .map(|j| j + "\n")
            .map_err(|e| e.to_string());
    }
    o += &markdown(&c);
    Ok(o)
}
