//! `tlab calibrate` on public measurements: MLPerf Inference results and
//! InferenceX sweeps, each file recognised by its header. Every row becomes
//! the benchmark's own traffic on the system it names, or is listed with the
//! reason it cannot be expressed; it is never run as something else.
//!
//! The tables give, per source, each row's measured and simulated figures
//! keyed by the file's own column names, and the mean absolute percentage
//! error per GPU, engine and model. `docs/calibration-public.md` says how each
//! benchmark's traffic is built and what the errors are today.

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde::Serialize;
use sim_core::physics::{Gpu, ServingSoftware};

pub mod bands;
pub mod fit;
pub mod inferencex;
mod layout;
pub mod mlperf;
pub mod power;
mod setup;
mod table;
pub mod vllm;

pub use setup::{Setup, Trial, engine_batch, run, tp_choices};
pub use table::{markdown, summary};

/// Which measurements a CSV holds, told from its header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The project's real vLLM runs (`experiment`, `stage_index`, ...).
    Vllm,
    /// MLPerf Inference results (`mlperf_id`, `scenario_norm`, `target_qps`, ...).
    Mlperf,
    /// InferenceX sweeps (`run_url`, `concurrency`, `tput_per_gpu`, ...).
    Inferencex,
}

impl Source {
    /// The source of a CSV from its first line, or why it is none of them.
    pub fn of(text: &str) -> Result<Source, String> {
        let text = sim_core::text::without_bom(text);
        let header = text.lines().next().unwrap_or("");
        let columns: Vec<&str> = header.split(',').map(str::trim).collect();
        let has = |all: &[&str]| all.iter().all(|c| columns.contains(c));
        if has(&["scenario_norm", "target_qps", "benchmark_norm", "gpu_norm"]) {
            Ok(Source::Mlperf)
        } else if has(&["run_url", "concurrency", "tput_per_gpu", "hardware"]) {
            Ok(Source::Inferencex)
        } else if has(&["experiment", "stage_index", "stages_rate_x_duration_s"]) {
            Ok(Source::Vllm)
        } else {
            Err(
                "line 1: not a calibration file: its header has none of the column sets \
                 of the vLLM runs (experiment, stage_index, ...), MLPerf results \
                 (scenario_norm, target_qps, ...) or InferenceX sweeps (run_url, \
                 concurrency, tput_per_gpu, ...)"
                    .to_owned(),
            )
        }
    }

    /// Its key in the summary and in JSON rows.
    pub fn key(self) -> &'static str {
        match self {
            Source::Vllm => "vllm",
            Source::Mlperf => "mlperf",
            Source::Inferencex => "inferencex",
        }
    }

    /// The name tables use.
    pub fn name(self) -> &'static str {
        match self {
            Source::Vllm => "vLLM runs",
            Source::Mlperf => "MLPerf Inference",
            Source::Inferencex => "InferenceX",
        }
    }
}

/// One measured row against its simulation.
#[derive(Clone, Debug, Serialize)]
pub struct Compared {
    /// Which file kind it came from.
    pub source: Source,
    /// Its line in the file (the header is line 1).
    pub line: usize,
    /// The columns that identify it, as the file names them
    /// (`source_path`, `scenario_norm`; `run_url`, `concurrency`, `isl`, `osl`).
    #[serde(flatten)]
    pub keys: BTreeMap<&'static str, serde_json::Value>,
    /// The GPU, engine and model the row measured, as grouped in the summary.
    pub gpu: String,
    /// The serving engine.
    pub engine: String,
    /// The model (benchmark).
    pub model: String,
    /// Whether the simulator could express the row.
    pub expressible: bool,
    /// Why not, where it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The layout and precision simulated, and how they were chosen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    /// Measured figures, keyed by the file's column names.
    pub measured: BTreeMap<&'static str, f64>,
    /// Simulated figures under the same names.
    pub simulated: BTreeMap<&'static str, f64>,
    /// MLPerf Server and Interactive: the highest rate within the benchmark's
    /// p99 limits, divided by `target_qps`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_ratio: Option<f64>,
    /// MLPerf Server and Interactive: whether the simulated run at
    /// `target_qps` keeps both p99 limits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limits_hold: Option<bool>,
    /// The system simulated (GPU, profile, whether the model is a mixture
    /// of experts), for the error bands (`bands`); not in the JSON.
    #[serde(skip)]
    pub system: Option<(Gpu, ServingSoftware, bool)>,
    /// Where the row ran: model size, lengths and load, for the bands'
    /// extents (`bands`); not in the JSON.
    #[serde(skip)]
    pub point: Option<sim_core::ranges::Point>,
}

impl Compared {
    /// A row the simulator cannot express, with the reason.
    fn refused(
        source: Source,
        line: usize,
        keys: BTreeMap<&'static str, serde_json::Value>,
        group: [&str; 3],
        reason: String,
    ) -> Compared {
        Compared {
            expressible: false,
            reason: Some(reason),
            ..Compared::expressed(source, line, keys, group, None)
        }
    }

    /// A row the simulator runs, with its layout in words; the figures are
    /// [`Self::put`] in as they come.
    fn expressed(
        source: Source,
        line: usize,
        keys: BTreeMap<&'static str, serde_json::Value>,
        group: [&str; 3],
        layout: Option<String>,
    ) -> Compared {
        Compared {
            source,
            line,
            keys,
            gpu: group[0].to_owned(),
            engine: group[1].to_owned(),
            model: group[2].to_owned(),
            expressible: true,
            reason: None,
            layout,
            measured: BTreeMap::new(),
            simulated: BTreeMap::new(),
            rate_ratio: None,
            limits_hold: None,
            system: None,
            point: None,
        }
    }

    /// One figure, measured and simulated, where both sides have it.
    fn put(&mut self, name: &'static str, measured: Option<f64>, simulated: Option<f64>) {
        if let (Some(m), Some(s)) = (measured, simulated) {
            self.measured.insert(name, m);
            self.simulated.insert(name, s);
        }
    }

    /// Signed relative error of one figure, where both sides have it.
    pub fn error(&self, metric: &str) -> Option<f64> {
        let m = *self.measured.get(metric)?;
        let s = *self.simulated.get(metric)?;
        (m > 0.0 && m.is_finite() && s.is_finite()).then(|| s / m - 1.0)
    }
}

/// What `tlab calibrate --json` prints for public files.
#[derive(Clone, Debug, Serialize)]
pub struct Calibration {
    /// Every row of every file, in file order.
    pub rows: Vec<Compared>,
    /// Per source: rows, rows expressed, MAPE per metric and per group.
    pub summary: BTreeMap<&'static str, table::SourceSummary>,
}

/// Compare every row of the public files `texts` (each MLPerf or InferenceX;
/// `names` for messages). Rows run in parallel; the result is in file order.
pub fn compare(texts: &[(String, String)]) -> Result<Calibration, String> {
    compare_with(texts, &indicatif::ProgressBar::hidden())
}

/// [`compare`], counting the rows done on `bar` (the command's progress bar
/// on standard error; hidden in tests and when it is not a terminal).
pub fn compare_with(
    texts: &[(String, String)],
    bar: &indicatif::ProgressBar,
) -> Result<Calibration, String> {
    Ok(compare_jobs(&jobs(texts)?, bar, None))
}

/// The rows of the public files `texts` (`(name, text)`), in file order.
pub(crate) fn jobs(texts: &[(String, String)]) -> Result<Vec<Job>, String> {
    let mut jobs: Vec<Job> = Vec::new();
    for (name, text) in texts {
        let text = sim_core::text::without_bom(text);
        match Source::of(text).map_err(|e| format!("{name}: {e}"))? {
            Source::Mlperf => jobs.extend(
                mlperf::read(text)
                    .map_err(|e| format!("{name}: {e}"))?
                    .into_iter()
                    .map(Job::Mlperf),
            ),
            Source::Inferencex => jobs.extend(
                inferencex::read(text)
                    .map_err(|e| format!("{name}: {e}"))?
                    .into_iter()
                    .map(Job::Inferencex),
            ),
            Source::Vllm => {
                return Err(format!(
                    "{name}: vLLM runs go through the vLLM table, not this one"
                ));
            }
        }
    }
    Ok(jobs)
}

/// Compare `jobs`, with `trial`'s constants where given. Rows run in
/// parallel; the result is in the jobs' order.
pub(crate) fn compare_jobs(
    jobs: &[Job],
    bar: &indicatif::ProgressBar,
    trial: Option<Trial>,
) -> Calibration {
    // Rows that differ only in where they came from (a system listed under
    // two accuracy targets, a run listed twice) are simulated once: the
    // simulation is deterministic, so they share one answer.
    let mut first: BTreeMap<String, usize> = BTreeMap::new();
    let mut unique: Vec<&Job> = Vec::new();
    let of: Vec<usize> = jobs
        .iter()
        .map(|j| {
            *first.entry(j.key()).or_insert_with(|| {
                unique.push(j);
                unique.len() - 1
            })
        })
        .collect();
    bar.set_length(unique.len() as u64);
    let answers: Vec<Compared> = unique
        .par_iter()
        .map(|j| {
            let c = match j {
                Job::Mlperf(r) => mlperf::compare(r, trial),
                Job::Inferencex(r) => inferencex::compare(r, trial),
            };
            bar.inc(1);
            c
        })
        .collect();
    bar.finish_and_clear();
    let rows: Vec<Compared> = jobs
        .iter()
        .zip(of)
        .map(|(j, i)| {
            let mut c = answers[i].clone();
            (c.line, c.keys) = match j {
                Job::Mlperf(r) => (r.line, mlperf::keys(r)),
                Job::Inferencex(r) => (r.line, inferencex::keys(r)),
            };
            c
        })
        .collect();
    let summary = summary(&rows);
    Calibration { rows, summary }
}

/// One row of a public file.
#[derive(Clone, Debug)]
pub(crate) enum Job {
    /// An MLPerf Inference result.
    Mlperf(mlperf::Row),
    /// An InferenceX point.
    Inferencex(inferencex::Row),
}

impl Job {
    /// The profile the row runs under, where its engine has one.
    pub(crate) fn software(&self) -> Option<ServingSoftware> {
        match self {
            Job::Mlperf(r) => mlperf::software(&r.engine),
            Job::Inferencex(r) => inferencex::software(&r.framework),
        }
    }

    /// The row's GPU, where the catalogue has it.
    pub(crate) fn gpu(&self) -> Option<Gpu> {
        match self {
            Job::Mlperf(r) => mlperf::gpu(&r.gpu_norm),
            Job::Inferencex(r) => inferencex::gpu(&r.hardware),
        }
    }

    /// Everything a row's simulation and comparison read: the row without
    /// its line and the path or address it came from.
    fn key(&self) -> String {
        match self {
            Job::Mlperf(r) => format!(
                "m{:?}",
                mlperf::Row {
                    line: 0,
                    source_path: String::new(),
                    ..r.clone()
                }
            ),
            Job::Inferencex(r) => format!(
                "x{:?}",
                inferencex::Row {
                    line: 0,
                    run_url: String::new(),
                    ..r.clone()
                }
            ),
        }
    }
}

/// What `tlab calibrate` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// The tables (markdown).
    Tables,
    /// `{"rows", "summary"}`.
    Json,
    /// The step-time error bands of the rows (`bands`).
    Bands,
    /// How often the vLLM runs fall inside their ranges
    /// (`calibrate::coverage`).
    Coverage,
    /// The power model against InferenceX's measured power (`power`).
    Power,
}

/// `tlab calibrate FILE...` (without `--measured`): each file told by its
/// header; public files give their tables (or `{"rows", "summary"}`, or
/// the error bands), vLLM runs the vLLM table, fitted with `opt` where asked.
pub fn command(
    paths: &[std::path::PathBuf],
    opt: super::Options,
    output: Output,
) -> Result<String, String> {
    let json = output != Output::Tables;
    let files = paths
        .iter()
        .map(|p| {
            std::fs::read_to_string(p)
                .map(|t| (p.display().to_string(), t))
                .map_err(|e| format!("{}: {e}", p.display()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (public, vllm_files) = split(files)?;
    if output == Output::Power {
        let texts: Vec<String> = public
            .iter()
            .filter(|(_, t)| matches!(Source::of(t), Ok(Source::Inferencex)))
            .map(|(_, t)| t.clone())
            .collect();
        return power::command(&texts);
    }
    if output == Output::Coverage {
        if !public.is_empty() {
            return super::coverage::public_command(&public, &vllm_files, &opt);
        }
        let rows: Vec<_> = vllm::read_all(&vllm_files, opt.moe)?
            .into_iter()
            .map(|(_, r)| r)
            .collect();
        let compared = vllm::rows(&vllm_files, &opt)?;
        let c = super::coverage::coverage(&rows)?;
        let h = super::coverage::held_out(&rows, &compared)?;
        return Ok(super::coverage::markdown(&c, &h));
    }
    let vllm: Vec<String> = vllm_files.iter().map(|(_, t)| t.clone()).collect();
    if public.is_empty() && !json {
        return super::command(&vllm, &opt);
    }
    if !public.is_empty() && opt.fit {
        if !vllm_files.is_empty() || opt.fit_below.is_some() || output == Output::Json {
            return Err("--fit on MLPerf and InferenceX files fits one public profile (--software) alone: give no vLLM runs, --fit-below or --json with them".into());
        }
        return fit::command(
            &public,
            fit::Target::named(&opt.software)?,
            opt.leave_out.as_deref(),
            opt.from_current,
            opt.rounds,
            output == Output::Bands,
        );
    }
    if !public.is_empty() && (opt.leave_out.is_some() || opt.fit_below.is_some()) {
        return Err("--leave-out and --fit-below on MLPerf and InferenceX files go with --fit (the GPU to leave out); without it the files are compared".into());
    }
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} rows, {elapsed} elapsed, ~{eta} left",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut c = compare_with(&public, &bar)?;
    if json {
        c.rows.extend(vllm::rows(&vllm_files, &opt)?);
        if output == Output::Bands {
            return serde_json::to_string_pretty(&bands::bands(&c.rows))
                .map(|j| j + "\n")
                .map_err(|e| e.to_string());
        }
        c.summary = summary(&c.rows);
        return serde_json::to_string_pretty(&c)
            .map(|j| j + "\n")
            .map_err(|e| e.to_string());
    }
    let mut o = markdown(&c);
    if !vllm.is_empty() {
        o += &super::command(&vllm, &opt)?;
    }
    Ok(o)
}

/// The files given, split into public ones (MLPerf, InferenceX) and vLLM
/// runs, each `(name, text)`; a file that is neither is refused by name.
pub type Files = Vec<(String, String)>;

/// Split `files` by their header: (public, vLLM runs).
pub fn split(files: Files) -> Result<(Files, Files), String> {
    let mut public = Vec::new();
    let mut vllm = Vec::new();
    for (name, text) in files {
        match Source::of(&text).map_err(|e| format!("{name}: {e}"))? {
            Source::Vllm => vllm.push((name, text)),
            _ => public.push((name, text)),
        }
    }
    Ok((public, vllm))
}

/// A public file's rows, each given its line (the header is line 1) by
/// `set_line`; a malformed row is refused by its line and column.
fn read_rows<T: serde::de::DeserializeOwned>(
    text: &str,
    set_line: fn(&mut T, usize),
) -> Result<Vec<T>, String> {
    csv::Reader::from_reader(text.as_bytes())
        .deserialize::<T>()
        .enumerate()
        .map(|(i, r)| {
            let mut row = r.map_err(|e| csv_error(&e, i + 2))?;
            set_line(&mut row, i + 2);
            Ok(row)
        })
        .collect()
}

/// A CSV error naming the line and the column.
fn csv_error(e: &csv::Error, line: usize) -> String {
    match e.kind() {
        csv::ErrorKind::Deserialize { err, .. } => match err.field() {
            Some(col) => format!("line {line}, column {}: {}", col + 1, err.kind()),
            None => format!("line {line}: {}", err.kind()),
        },
        _ => format!("line {line}: {e}"),
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_fit;
