//! `throughput_lab._native`: the simulator for Python. Every function takes
//! and returns JSON text (scenarios, reports, plans as the CLI's `--json`
//! prints them), so the Python layer (`python/throughput_lab/`) can send any
//! of them to another process or machine and get the same numbers back.
//! Runs release the GIL. Errors raise `ThroughputLabError` with the CLI's
//! message.

use pyo3::prelude::*;
use sim_core::plan::{PlanSlo, PlanSteps};
use sim_core::{Report, Scenario, ValidScenario};
use std::path::{Path, PathBuf};

pyo3::create_exception!(
    _native,
    ThroughputLabError,
    pyo3::exceptions::PyValueError,
    "A scenario, edit, file or option Throughput Lab refused; the message names where, as the CLI's does."
);

fn refuse(msg: impl ToString) -> PyErr {
    ThroughputLabError::new_err(msg.to_string())
}

/// A scenario as JSON text, checked.
fn valid(json: &str) -> PyResult<ValidScenario> {
    Scenario::from_json(json).map_err(|e| refuse(format!("scenario: {e}")))
}

fn to_json<T: serde::Serialize>(v: &T) -> PyResult<String> {
    serde_json::to_string(v).map_err(refuse)
}

/// As the CLI prints `--json`: pretty, with a final newline.
fn to_pretty<T: serde::Serialize>(v: &T) -> PyResult<String> {
    serde_json::to_string_pretty(v)
        .map(|j| j + "\n")
        .map_err(refuse)
}

fn report_of(json: &str) -> PyResult<Report> {
    serde_json::from_str(json).map_err(|e| refuse(format!("report: {e}")))
}

/// The scenario `source` stands for, with `edits` (`NAME=VALUE`, as
/// `tlab run --set` takes them) applied and the result checked: as compact
/// JSON, with what else each edit changed. `kind` says what `source` is:
/// `"json"` (scenario text; a `serving.profile` file is read from the
/// working directory), `"path"` (a file, as `tlab run FILE` reads it) or
/// `"link"` (a share link).
#[pyfunction]
fn scenario(source: &str, kind: &str, edits: Vec<String>) -> PyResult<(String, Vec<String>)> {
    let s = match kind {
        "json" => {
            let text = tlab::profile_file::inline(source, Path::new("."))
                .map_err(|e| refuse(format!("scenario: {e}")))?;
            valid(&text)?
        }
        "path" | "link" => tlab::scenario_file::load(Path::new(source)).map_err(refuse)?,
        other => return Err(refuse(format!("unknown scenario kind {other:?}"))),
    };
    let (s, notes) = tlab::scenario_file::with_edits(s, &edits).map_err(refuse)?;
    Ok((to_json(&s)?, notes))
}

/// Run a scenario (compact JSON, as [`scenario`] returns it): the report as
/// `tlab run --json` prints it, byte for byte.
#[pyfunction]
fn run(py: Python<'_>, scenario: &str) -> PyResult<String> {
    let s = valid(scenario)?;
    let report = py.detach(|| sim_core::run(&s));
    to_pretty(&report)
}

/// `scenario` and its range runs (`sim_core::ranges`): `tlab run --ranges
/// --json`'s text, the report with `ranges` beside its fields.
#[pyfunction]
fn ranges(py: Python<'_>, scenario: &str) -> PyResult<String> {
    let s = valid(scenario)?;
    let (report, r) = py.detach(|| sim_core::ranges::ranges(&s)).map_err(refuse)?;
    tlab::summary::ranges_json(&report, &r).map_err(refuse)
}

/// The scenarios of a sweep over `vary` (`NAME=START:STOP:STEP` or
/// `NAME=A,B,C`, once or twice, as `tlab sweep --vary`): each point's axis
/// values and its scenario.
#[pyfunction]
fn sweep_points(scenario: &str, vary: Vec<String>) -> PyResult<Vec<(Vec<String>, String)>> {
    let s = valid(scenario)?;
    let axes = axes(&vary)?;
    sim_core::sweep::points(&s, &axes)
        .map_err(refuse)?
        .into_iter()
        .map(|(labels, s)| Ok((labels, to_json(&s)?)))
        .collect()
}

fn axes(vary: &[String]) -> PyResult<Vec<sim_core::sweep::Axis>> {
    if vary.is_empty() || vary.len() > 2 {
        return Err(refuse(
            "vary: one or two axes, NAME=START:STOP:STEP or NAME=A,B,C",
        ));
    }
    vary.iter()
        .map(|v| sim_core::sweep::Axis::parse(v).map_err(|e| refuse(format!("vary {v}: {e}"))))
        .collect()
}

/// One sweep point run: its summary (the row `tlab sweep` writes), JSON.
#[pyfunction]
fn sweep_point(py: Python<'_>, scenario: &str) -> PyResult<String> {
    let s = valid(scenario)?;
    let summary = py.detach(|| sim_core::sweep::Summary::of(&sim_core::run(&s)));
    to_json(&summary)
}

/// A sweep's CSV, as `tlab sweep` writes it, from its points' axis values
/// and summaries.
#[pyfunction]
fn sweep_csv(vary: Vec<String>, rows: Vec<(Vec<String>, String)>) -> PyResult<String> {
    let axes = axes(&vary)?;
    let rows = rows
        .into_iter()
        .map(|(labels, summary)| {
            serde_json::from_str(&summary)
                .map(|s| (labels, s))
                .map_err(|e| refuse(format!("summary: {e}")))
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(sim_core::sweep::csv(&axes, &rows))
}

/// The sweep on this machine's cores, as `tlab sweep` runs it: its CSV.
#[pyfunction]
fn sweep(py: Python<'_>, scenario: &str, vary: Vec<String>) -> PyResult<String> {
    let s = valid(scenario)?;
    let axes = axes(&vary)?;
    let rows = py
        .detach(|| tlab::analysis::sweep(&s, &axes, true, false))
        .map_err(refuse)?;
    Ok(sim_core::sweep::csv(&axes, &rows))
}

/// Latency against throughput for every batching policy at `rates`
/// (`START:STOP:STEP` or `A,B,C`), as `tlab curve --json` prints it.
#[pyfunction]
fn curve(py: Python<'_>, scenario: &str, rates: &str) -> PyResult<String> {
    let s = valid(scenario)?;
    let rates: Vec<f64> = sim_core::sweep::Axis::parse(&format!("arrival.rate={rates}"))
        .map_err(|e| refuse(format!("rates: {e}")))?
        .values
        .iter()
        .map(|v| v.parse::<f64>().map_err(|e| refuse(format!("rates: {e}"))))
        .collect::<PyResult<_>>()?;
    let curves = py
        .detach(|| tlab::analysis::curves(&s, &rates, true, false))
        .map_err(refuse)?;
    to_pretty(&curves)
}

/// What `plan` and `headroom` are asked: the CLI's flags as keywords, read
/// as `tlab` reads them (`tlab::plan_ask`).
type Ask = tlab::plan_ask::PlanAsk;

fn ask_of(json: &str) -> PyResult<Ask> {
    serde_json::from_str(json).map_err(|e| refuse(format!("options: {e}")))
}

/// An option's name as Python spells it: as is.
fn keyword(option: &str) -> String {
    option.to_owned()
}

/// The cheapest setups that meet the targets, planned on this machine's
/// cores as `tlab plan --json` plans them; `options` is JSON of the CLI's
/// flags (`ttft_p99_ms`, `tpot_p99_ms`, `max_errors`, `min_goodput`,
/// `max_replicas`, `gpus`, `self_hosted`, `full`, `pools`, `split`,
/// `link`). Also what the question cost said up front.
#[pyfunction]
fn plan(py: Python<'_>, scenario: &str, options: &str) -> PyResult<(String, Vec<String>)> {
    let s = valid(scenario)?;
    let ask = ask_of(options)?;
    let slo = ask.targets(&s, keyword).map_err(refuse)?;
    let space = ask.space(&s, keyword).map_err(refuse)?;
    if ask.pools && ask.split {
        return Err(refuse(
            "pools and split: one or the other, as tlab plan takes them",
        ));
    }
    if ask.link.is_some() && !ask.split {
        return Err(refuse(
            "link: the KV-cache link of a split plan (split=True)",
        ));
    }
    if ask.split {
        let link = tlab::plan_ask::kv_link(ask.link.as_deref(), keyword).map_err(refuse)?;
        let p = py
            .detach(|| {
                sim_core::plan::disaggregation::plan_disaggregation(
                    &s,
                    slo,
                    link,
                    space.budget_events,
                )
            })
            .map_err(refuse)?;
        return Ok((to_pretty(&p)?, Vec::new()));
    }
    if ask.pools {
        let p = py
            .detach(|| tlab::analysis::pool_plan_parallel(&s, slo, &space, true))
            .map_err(refuse)?;
        return Ok((to_pretty(&p)?, Vec::new()));
    }
    let q = sim_core::plan::budget::question(&s, slo, &space);
    let p = py.detach(|| tlab::plan_ask::answer(&s, &q, slo, &space, true));
    Ok((to_pretty(&p)?, q.notes))
}

/// A plan driven from Python one planning run at a time, so the runs can
/// go to any executor: `ready()` gives the runs that can start, each run is
/// `planning_run(scenario, slo)` anywhere, and `feed` takes its report
/// back in any order. The plan is the one [`plan`] finds.
#[pyclass(module = "throughput_lab._native")]
struct Planner {
    base: ValidScenario,
    slo: PlanSlo,
    steps: Option<PlanSteps>,
    notes: Vec<String>,
}

#[pymethods]
impl Planner {
    #[new]
    fn new(scenario: &str, options: &str) -> PyResult<Planner> {
        let base = valid(scenario)?;
        let ask = ask_of(options)?;
        if ask.pools || ask.split {
            return Err(refuse(
                "pools and split plans run on this machine's cores (no executor): their searches follow one another",
            ));
        }
        let slo = ask.targets(&base, keyword).map_err(refuse)?;
        let space = ask.space(&base, keyword).map_err(refuse)?;
        let q = sim_core::plan::budget::question(&base, slo, &space);
        Ok(Planner {
            steps: Some(PlanSteps::new(&q.scenario, slo, &space)),
            base,
            slo,
            notes: q.notes,
        })
    }

    /// What the question cost said up front (and any smaller question asked).
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    /// The targets, JSON: every planning run takes them.
    #[getter]
    fn slo(&self) -> PyResult<String> {
        to_json(&self.slo)
    }

    /// The scenario as it is, JSON: its whole run joins the plan
    /// ([`Self::finish`]).
    #[getter]
    fn as_is(&self) -> PyResult<String> {
        to_json(&self.base)
    }

    /// The runs that can start now, as (group, scenario JSON). Empty with no
    /// run out means the plan is over.
    fn ready(&mut self) -> PyResult<Vec<(usize, String)>> {
        let steps = self
            .steps
            .as_mut()
            .ok_or_else(|| refuse("the plan is finished"))?;
        steps
            .ready()
            .into_iter()
            .map(|(g, s)| Ok((g, to_json(&s)?)))
            .collect()
    }

    /// A run's report (JSON, as `planning_run` returns it), for its group.
    fn feed(&mut self, group: usize, report: &str) -> PyResult<()> {
        let r = report_of(report)?;
        let steps = self
            .steps
            .as_mut()
            .ok_or_else(|| refuse("the plan is finished"))?;
        steps.feed(group, Ok(&r));
        Ok(())
    }

    /// A run that could not start, with why: its search ends pruned.
    fn refuse(&mut self, group: usize, message: String) -> PyResult<()> {
        let steps = self
            .steps
            .as_mut()
            .ok_or_else(|| refuse("the plan is finished"))?;
        let e = sim_core::ScenarioError {
            problems: vec![message],
        };
        steps.feed(group, Err(&e));
        Ok(())
    }

    /// Whether every pass has run and nothing is out.
    fn is_over(&self) -> bool {
        self.steps.as_ref().is_none_or(PlanSteps::is_over)
    }

    /// The plan (as `tlab plan --json` prints it), with the setup as it is
    /// from its whole run's report ([`run`] of [`Self::as_is`]).
    fn finish(&mut self, as_is_report: &str) -> PyResult<String> {
        let r = report_of(as_is_report)?;
        let steps = self
            .steps
            .take()
            .ok_or_else(|| refuse("the plan is finished"))?;
        if !steps.is_over() {
            self.steps = Some(steps);
            return Err(refuse("the plan is not over: runs are out or can start"));
        }
        let mut p = steps.plan();
        p.include_as_is(&self.base, &self.slo, &r);
        to_pretty(&p)
    }
}

/// One planning run, anywhere: `scenario` to its end or until its verdict
/// against `slo` (JSON, [`Planner::slo`]) is settled. Its report, JSON.
#[pyfunction]
fn planning_run(py: Python<'_>, scenario: &str, slo: &str) -> PyResult<String> {
    let s: Scenario =
        serde_json::from_str(scenario).map_err(|e| refuse(format!("scenario: {e}")))?;
    let slo: PlanSlo = serde_json::from_str(slo).map_err(|e| refuse(format!("slo: {e}")))?;
    let report = py
        .detach(|| sim_core::plan::planning_run(slo)(s))
        .map_err(refuse)?;
    to_json(&report)
}

/// How far the load can grow before the targets break, as `tlab headroom`
/// finds it: JSON with the verdict in words.
#[pyfunction]
fn headroom(py: Python<'_>, scenario: &str, options: &str) -> PyResult<String> {
    let s = valid(scenario)?;
    let slo = ask_of(options)?.targets(&s, keyword).map_err(refuse)?;
    let h = py
        .detach(|| sim_core::plan::headroom(&s, slo, 0.01))
        .map_err(refuse)?;
    to_pretty(&h)
}

/// Monthly cost on an API tier against self-hosting as load grows, as
/// `tlab compare --json` prints it.
#[pyfunction]
#[pyo3(signature = (scenario, loads, tier=None))]
fn compare(
    py: Python<'_>,
    scenario: &str,
    loads: Vec<f64>,
    tier: Option<String>,
) -> PyResult<String> {
    let s = valid(scenario)?;
    let index = sim_core::compare::tier_index(&s, tier.as_deref()).map_err(refuse)?;
    let c = py
        .detach(|| sim_core::compare::compare(&s, index, &loads))
        .map_err(refuse)?;
    to_pretty(&c)
}

/// The built-in presets: id, title, and the rest of what the page shows.
#[pyfunction]
fn presets() -> Vec<(String, String)> {
    sim_core::presets::all()
        .iter()
        .map(|p| (p.id.to_owned(), p.title.to_owned()))
        .collect()
}

/// A preset's scenario, JSON (as `tlab preset ID` prints it).
#[pyfunction]
fn preset(id: &str) -> PyResult<String> {
    tlab::scenario_file::preset_json(id).map_err(refuse)
}

/// A share link's fragment (`#s=…`) for a scenario: the page and `tlab run`
/// open it with the same numbers.
#[pyfunction]
fn link(scenario: &str) -> PyResult<String> {
    let s = valid(scenario)?;
    sim_core::link::shareable(&s).map_err(refuse)?;
    Ok(sim_core::link::encode_fragment(&s))
}

/// The scenario a share link holds (anything with `#s=`), JSON.
#[pyfunction]
fn from_link(url: &str) -> PyResult<String> {
    let fragment = url
        .find('#')
        .map(|at| &url[at..])
        .filter(|f| f.starts_with("#s="))
        .ok_or_else(|| refuse("not a share link: no #s= in it"))?;
    let s =
        sim_core::link::decode_fragment(fragment).map_err(|e| refuse(format!("the link: {e}")))?;
    to_json(&s)
}

/// Measured runs against the simulator, as `tlab calibrate --json` prints
/// them: MLPerf, InferenceX and vLLM CSVs, each told by its header.
#[pyfunction]
fn calibrate(py: Python<'_>, paths: Vec<String>) -> PyResult<String> {
    let paths: Vec<PathBuf> = paths.into_iter().map(PathBuf::from).collect();
    py.detach(|| {
        tlab::calibrate::public::command(
            &paths,
            tlab::calibrate::Options::default(),
            tlab::calibrate::public::Output::Json,
        )
    })
    .map_err(refuse)
}

/// What a request trace holds, as `tlab trace FILE` says it, and the
/// reference a link names it by: JSON of `{name, sha256, requests,
/// summary, …}`.
#[pyfunction]
#[pyo3(signature = (path, skip_bad_lines=false))]
fn read_trace(py: Python<'_>, path: &str, skip_bad_lines: bool) -> PyResult<String> {
    let args = tlab::trace::TraceArgs {
        skip_bad_lines,
        ..tlab::trace::TraceArgs::default()
    };
    let (_, reference) = py
        .detach(|| tlab::trace::read_with_ref(Path::new(path), &args))
        .map_err(refuse)?;
    to_pretty(&reference)
}

/// A trace distilled onto a scenario's fleet, as `tlab trace FILE
/// --distil SCENARIO` distils it: the scenario (compact JSON, small enough
/// for a share link) and what the distillation loses, in words.
#[pyfunction]
#[pyo3(signature = (path, base, skip_bad_lines=false))]
fn distil_trace(
    py: Python<'_>,
    path: &str,
    base: &str,
    skip_bad_lines: bool,
) -> PyResult<(String, Vec<String>)> {
    let base = valid(base)?.into_inner();
    let args = tlab::trace::TraceArgs {
        skip_bad_lines,
        ..tlab::trace::TraceArgs::default()
    };
    let d = py
        .detach(|| tlab::trace::distil(Path::new(path), &args, &base))
        .map_err(refuse)?;
    Ok((to_json(&d.scenario)?, d.loses))
}

/// The scenario made the setup of a plan's row (its `config` and
/// `replicas`), as the page's "Apply" makes it: compact JSON, checked.
#[pyfunction]
fn apply_setup(scenario: &str, setup: &str) -> PyResult<String> {
    #[derive(serde::Deserialize)]
    struct Setup {
        config: sim_core::plan::Config,
        replicas: u32,
    }
    let row: Setup = serde_json::from_str(setup).map_err(|e| refuse(format!("setup: {e}")))?;
    let mut s = valid(scenario)?.into_inner();
    sim_core::plan::apply_config(&mut s, &row.config, row.replicas).map_err(refuse)?;
    to_json(&s.validate().map_err(refuse)?)
}

/// The module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add(
        "ThroughputLabError",
        m.py().get_type::<ThroughputLabError>(),
    )?;
    m.add_class::<Planner>()?;
    for f in [
        wrap_pyfunction!(scenario, m)?,
        wrap_pyfunction!(run, m)?,
        wrap_pyfunction!(ranges, m)?,
        wrap_pyfunction!(sweep_points, m)?,
        wrap_pyfunction!(sweep_point, m)?,
        wrap_pyfunction!(sweep_csv, m)?,
        wrap_pyfunction!(sweep, m)?,
        wrap_pyfunction!(curve, m)?,
        wrap_pyfunction!(plan, m)?,
        wrap_pyfunction!(planning_run, m)?,
        wrap_pyfunction!(headroom, m)?,
        wrap_pyfunction!(compare, m)?,
        wrap_pyfunction!(presets, m)?,
        wrap_pyfunction!(preset, m)?,
        wrap_pyfunction!(link, m)?,
        wrap_pyfunction!(from_link, m)?,
        wrap_pyfunction!(calibrate, m)?,
        wrap_pyfunction!(read_trace, m)?,
        wrap_pyfunction!(distil_trace, m)?,
        wrap_pyfunction!(apply_setup, m)?,
    ] {
        m.add_function(f)?;
    }
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
