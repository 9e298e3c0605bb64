//! Fitting a profile to the public measurements: `tlab calibrate --fit` on
//! MLPerf and InferenceX files fits TensorRT-LLM 1.x's constants (or,
//! with `--software sglang` or `sglang-rocm`, those of SGLang's CUDA or
//! ROCm build) to the rows of its engine that measure its physics most
//! directly: MLPerf Offline's saturated tokens/s and, on InferenceX's closed loops at a
//! stated layout and concurrency, throughput per GPU, the median time per
//! output token and the median TTFT. MLPerf Server and Interactive rows are
//! scored with the fitted constants, not fitted: their latencies at
//! `target_qps` hang on the batch and token budget the harness chooses for
//! them (submitters tune both), which the engine's constants must not
//! absorb; and their rate search would make every trial a minute long.
//!
//! `--leave-out GPU` fits without one GPU's rows and scores them apart: a
//! leave-one-system-out figure, the only kind the trust sentences quote.

use sim_core::physics::{
    Gpu, KNOBS, Knob, MOE_KNOBS, Platform, ServingCosts, ServingSoftware, Timing,
};

use super::{Calibration, Compared, Files, Job, Trial, compare_jobs, jobs, markdown};
use crate::calibrate::fit::{as_rust, search};

/// A profile's build on one platform: what a fit on the public files fits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// The profile.
    pub software: ServingSoftware,
    /// Its build's platform.
    pub platform: Platform,
}

impl Target {
    /// Its name on the command line (`--software`).
    pub fn key(self) -> &'static str {
        match (self.software, self.platform) {
            (ServingSoftware::Sglang, Platform::Rocm) => "sglang-rocm",
            (s, _) => s.key(),
        }
    }

    /// Its name in words: "TensorRT-LLM 1.x", "SGLang on ROCm".
    pub fn name(self) -> String {
        match (self.software, self.platform) {
            (ServingSoftware::Sglang, Platform::Cuda) => "SGLang on CUDA".into(),
            (ServingSoftware::Sglang, Platform::Rocm) => "SGLang on ROCm".into(),
            (s, _) => s.name().into(),
        }
    }

    /// Whether `software` on `gpu` runs this build.
    pub fn runs(self, software: ServingSoftware, gpu: &Gpu) -> bool {
        self.software == software && self.platform == gpu.platform()
    }

    /// The constants the build runs with today.
    fn current(self) -> Result<ServingCosts, String> {
        match self.software.profile_for(self.platform).timing {
            Timing::Serving(c) => Ok(c),
            Timing::TensorrtLlm(_) => Err(format!("{} has no fitted parts", self.key())),
        }
    }

    /// Where its fit starts without `--from-current`: vLLM's constants
    /// for TensorRT-LLM 1.x (the first public fit), TensorRT-LLM 1.x's for
    /// SGLang (fitted to the same model on NVIDIA GPUs).
    fn start(self) -> ServingCosts {
        match self.software {
            ServingSoftware::Sglang => sim_core::physics::TRTLLM_COSTS,
            _ => sim_core::physics::VLLM_COSTS,
        }
    }

    /// The trial that runs `costs` on the target's rows.
    fn trial(self, costs: ServingCosts, rate_search: bool) -> Trial {
        Trial {
            target: self,
            costs,
            rate_search,
        }
    }

    /// The target `--software` names.
    pub fn named(key: &str) -> Result<Target, String> {
        FITTED.into_iter().find(|t| t.key() == key).ok_or_else(|| {
            format!(
                "--software {key:?}: the public files fit {}",
                FITTED.map(|t| t.key()).join(", ")
            )
        })
    }
}

/// What the public files fit: TensorRT-LLM 1.x (MLPerf and InferenceX, on
/// NVIDIA GPUs) and SGLang's CUDA and ROCm builds (InferenceX).
pub const FITTED: [Target; 3] = [
    Target {
        software: ServingSoftware::TensorrtLlm1,
        platform: Platform::Cuda,
    },
    Target {
        software: ServingSoftware::Sglang,
        platform: Platform::Cuda,
    },
    Target {
        software: ServingSoftware::Sglang,
        platform: Platform::Rocm,
    },
];

/// The figures the fit reads, per source: each is one term of the loss
/// (its rows' mean weighed log error, [`Weighing`]), and the terms are
/// averaged.
const FITTED_FIGURES: [(&str, &str); 4] = [
    ("mlperf", "tokens_per_s"),
    ("inferencex", "tput_per_gpu"),
    ("inferencex", "median_tpot_ms"),
    ("inferencex", "median_ttft_ms"),
];

/// The constants the fit moves: every serving part the public rows inform
/// (all of them run FP8 or FP4 weights, so the FP8 multiplies' share of
/// their peak is fitted and the 16-bit ones are not). A share of a peak
/// stays at 0.3 or more: a kernel bound by a peak on these data-centre
/// GPUs reaches at least that of it, and below it a fit that cannot
/// place a sweep's slowness in the fixed costs puts it where it turns
/// every other model's numbers (SGLang's ROCm build, fitted down to 0.07,
/// ran FP8 GEMMs at 7 % of the MI300X's peak).
fn knobs() -> Vec<Knob> {
    // (Not the link's: an all-reduce of a decode step's few kilobytes is
    // bound by its latency, and TensorRT-LLM 1.x reaches 0.27 of it.)
    const SHARES_OF_PEAK: [&str; 6] = [
        "compute_fp8",
        "compute_attention",
        "bandwidth_decode",
        "bandwidth_prefill",
        "bandwidth_kv",
        "bandwidth_experts",
    ];
    KNOBS
        .iter()
        .chain(&MOE_KNOBS)
        .chain(
            sim_core::physics::FIXED_KNOBS
                .iter()
                .filter(|k| k.name == "compute_fp8"),
        )
        .filter(|k| !matches!(k.name, "compute_prefill" | "compute_decode"))
        .map(|k| Knob {
            range: if SHARES_OF_PEAK.contains(&k.name) {
                (k.range.0.max(0.3), k.range.1)
            } else {
                k.range
            },
            ..*k
        })
        .collect()
}

/// Whether a fit of `target` reads `job`: a row of that profile on that
/// platform, MLPerf Offline or InferenceX.
fn fitted(target: Target, job: &Job) -> bool {
    job.software()
        .zip(job.gpu())
        .is_some_and(|(software, gpu)| target.runs(software, &gpu))
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

/// How a fit weighs a row's error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weighing {
    /// Its log error squared: TensorRT-LLM 1.x's fit (7 December 2026).
    Squared,
    /// Its log error's size: SGLang's fits. Some of SGLang's sweeps show
    /// TTFTs of 2–190 s at 4–64 clients (an admission limit their rows do
    /// not state); squared, those few rows alone set the front end and the
    /// prompt passes to the ends of their ranges.
    Absolute,
}

impl Weighing {
    /// Its name in the fit's summary ("mean squared log error").
    fn name(self) -> &'static str {
        match self {
            Weighing::Squared => "squared",
            Weighing::Absolute => "absolute",
        }
    }
}

impl Target {
    /// How its fit weighs a row's error.
    pub fn weighing(self) -> Weighing {
        match self.software {
            ServingSoftware::Sglang => Weighing::Absolute,
            _ => Weighing::Squared,
        }
    }
}

/// The fit's loss on compared rows: per fitted figure, the mean squared log
/// error of its rows; the mean over the figures that have rows.
pub fn loss(rows: &[Compared]) -> f64 {
    loss_weighed(rows, Weighing::Squared)
}

/// The loss with each row's error weighed as `weighing` says: per fitted
/// figure, the mean of its rows' weighed log errors; the mean over the
/// figures that have rows.
pub fn loss_weighed(rows: &[Compared], weighing: Weighing) -> f64 {
    let terms: Vec<f64> = FITTED_FIGURES
        .iter()
        .filter_map(|(source, figure)| {
            let errors: Vec<f64> = rows
                .iter()
                .filter(|c| c.source.key() == *source)
                .filter_map(|c| c.error(figure))
                .map(|e| {
                    let log = (1.0 + e).max(1e-6).ln();
                    match weighing {
                        Weighing::Squared => log.powi(2),
                        Weighing::Absolute => log.abs(),
                    }
                })
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

/// Fit `target`'s constants to the rows of `public` it runs (without the
/// GPU `leave_out` names), from `start`, for `rounds` of the coordinate
/// search: the constants, their loss and how many rows ran.
pub fn fit(
    public: &Files,
    target: Target,
    leave_out: Option<&str>,
    start: ServingCosts,
    rounds: u32,
) -> Result<(ServingCosts, f64, usize), String> {
    let fitted_rows: Vec<Job> = jobs(public)?
        .into_iter()
        .filter(|j| fitted(target, j))
        .collect();
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
            target.name(),
            leave_out
                .map(|g| format!(" besides {g}"))
                .unwrap_or_default()
        ));
    }
    let hidden = indicatif::ProgressBar::hidden();
    // Whether a row can be simulated does not hang on the constants (its
    // system and memory decide), so a loss with no rows behind it, first
    // met at the start, means none of them runs.
    let knobs = knobs();
    // The rows that ran (the same at every trial, for the same reason).
    let ran = std::cell::Cell::new(0);
    let (costs, l) = search(start, rounds, &knobs.iter().collect::<Vec<_>>(), |c| {
        let trial = target.trial(*c, false);
        let rows = compare_jobs(&train, &hidden, Some(trial)).rows;
        ran.set(rows.iter().filter(|r| r.expressible).count());
        let l = loss_weighed(&rows, target.weighing());
        if l.is_finite() {
            Ok(l)
        } else {
            Err(format!(
                "no rows to fit: none of the {} rows of {} could be simulated (see their reasons without --fit)",
                train.len(),
                target.name()
            ))
        }
    })?;
    Ok((costs, l, ran.get()))
}

/// `tlab calibrate --fit FILE...` on public files: the fit, its constants
/// as Rust, and every row's table with them (with `--leave-out GPU`, that
/// GPU's rows alone: the held-out figure). With `bands`, the step-time
/// error bands of the rows shown instead of their tables (JSON, the
/// held-out GPU's labelled so, for `sim-core/src/ranges/bands.json`).
pub fn command(
    public: &Files,
    target: Target,
    leave_out: Option<&str>,
    from_current: bool,
    rounds: u32,
    bands: bool,
) -> Result<String, String> {
    let start = if from_current {
        target.current()?
    } else {
        target.start()
    };
    let (costs, l, n) = fit(public, target, leave_out, start, rounds)?;
    let mut o = format!(
        "{} constants fitted on {n} rows{} (loss {l:.4}: the mean over {} of each figure's mean {} log error)\n{}\n",
        target.name(),
        leave_out
            .map(|g| format!(" (without {g})"))
            .unwrap_or_default(),
        FITTED_FIGURES
            .iter()
            .map(|(s, f)| format!("{s} {f}"))
            .collect::<Vec<_>>()
            .join(", "),
        target.weighing().name(),
        as_rust(&costs),
    );
    let trial = target.trial(costs, true);
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
