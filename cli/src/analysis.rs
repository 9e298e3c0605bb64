//! `tlab sweep`, `tlab curve`, `tlab plan` and `tlab headroom`: many runs at once,
//! in parallel across cores, with results identical to a serial run.

use indicatif::{ProgressBar, ProgressStyle};
use plotters::prelude::*;
use rayon::prelude::*;
use sim_core::plan::{self, Plan, PlanSlo, Space};
use sim_core::sweep::{self, Axis, Curve, Summary};
use sim_core::{Report, Scenario, ScenarioError, ValidScenario};

/// Run scenarios in parallel (or serially), keeping their order, with a progress
/// bar on standard error when there are many.
pub fn run_all(scenarios: &[ValidScenario], parallel: bool, progress: bool) -> Vec<Report> {
    let bar = if progress && scenarios.len() > 8 {
        let b = ProgressBar::new(scenarios.len() as u64);
        b.set_style(
            ProgressStyle::with_template(
                "{bar:40} {pos}/{len} runs, {elapsed} elapsed, ~{eta} left",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let one = |s: &ValidScenario| {
        let r = sim_core::run(s);
        bar.inc(1);
        r
    };
    let out = if parallel {
        scenarios.par_iter().map(one).collect()
    } else {
        scenarios.iter().map(one).collect()
    };
    bar.finish_and_clear();
    out
}

/// A sweep's rows: axis values and summaries.
pub fn sweep(
    base: &Scenario,
    axes: &[Axis],
    parallel: bool,
    progress: bool,
) -> Result<Vec<(Vec<String>, Summary)>, ScenarioError> {
    let points = sweep::points(base, axes)?;
    let scenarios: Vec<ValidScenario> = points.iter().map(|(_, s)| s.clone()).collect();
    let reports = run_all(&scenarios, parallel, progress);
    Ok(points
        .into_iter()
        .zip(reports)
        .map(|((labels, _), r)| (labels, Summary::of(&r)))
        .collect())
}

/// The latency–throughput curves of every batching policy.
pub fn curves(
    base: &Scenario,
    rates: &[f64],
    parallel: bool,
    progress: bool,
) -> Result<Vec<Curve>, ScenarioError> {
    let points = sweep::curve_points(base, rates)?;
    let scenarios: Vec<ValidScenario> = points.iter().map(|(_, _, s)| s.clone()).collect();
    let reports = run_all(&scenarios, parallel, progress);
    Ok(sweep::curves(&points, &reports))
}

/// Plan with the searches spread over all cores.
pub fn plan_parallel(base: &Scenario, slo: PlanSlo, space: &Space, parallel: bool) -> Plan {
    // Groups differ in hardware and run in parallel; within a group batch
    // sizes run in order, so identical larger ones are spared.
    let run = |groups: Vec<Vec<plan::Search>>| -> Vec<Vec<plan::Search>> {
        if parallel {
            groups
                .into_par_iter()
                .map(|g| plan::run_group(g, plan::planning_run(slo)))
                .collect()
        } else {
            groups
                .into_iter()
                .map(|g| plan::run_group(g, plan::planning_run(slo)))
                .collect()
        }
    };
    let mut done = run(plan::groups(plan::searches(base, slo, space)));
    // Later passes: the unsettled groups share what the passes left.
    for _ in 1..plan::budget::PASSES {
        let again = plan::reopen_groups(&mut done, space.budget_events);
        if again.is_empty() {
            break;
        }
        let rerun = run(again
            .iter()
            .map(|&i| std::mem::take(&mut done[i]))
            .collect());
        for (i, g) in again.into_iter().zip(rerun) {
            done[i] = g;
        }
    }
    plan::assemble(
        done.into_iter()
            .flatten()
            .map(plan::Search::finish)
            .collect(),
        space,
    )
}

/// The planner's GPUs from `option` (`--gpus`) (catalogue keys, or `all`); none given
/// means the planner's default list. Each key is read as the `gpu`
/// parameter reads it, so an unknown one gets its message.
pub fn plan_gpus(keys: &[String], option: &str) -> Result<Vec<sim_core::physics::Gpu>, String> {
    use sim_core::physics::Gpu;
    if keys.is_empty() {
        return Ok(sim_core::plan::Space::default().gpus);
    }
    if keys.iter().any(|k| k == "all") {
        return Ok(Gpu::ALL.to_vec());
    }
    let mut s = sim_core::presets::chatbot_h100();
    keys.iter()
        .map(|k| {
            sim_core::params::apply(&mut s, "gpu", k.trim())
                .map_err(|e| format!("{option}: {e}"))?;
            Ok(s.serving.gpu)
        })
        .collect()
}

/// Write an SVG drawn by `draw` to `path`.
pub fn write_svg(
    path: &std::path::Path,
    size: (u32, u32),
    draw: impl FnOnce(
        &DrawingArea<SVGBackend, plotters::coord::Shift>,
    ) -> Result<(), DrawingAreaErrorKind<std::io::Error>>,
) -> Result<(), String> {
    let root = SVGBackend::new(path, size).into_drawing_area();
    draw(&root).map_err(|e| format!("{}: {e}", path.display()))
}

/// Plan over pools ([`plan::pools`]): each question's plan with its searches
/// spread over all cores, then the autoscaling searches and the split's run
/// in order (the same plan as [`plan::pools::plan_pools`]).
pub fn pool_plan_parallel(
    base: &Scenario,
    slo: PlanSlo,
    space: &Space,
    parallel: bool,
) -> Result<plan::pools::PoolPlan, String> {
    let mut p = plan::pools::PoolPlanner::new(base, slo, space)?;
    for i in 0..p.questions().len() {
        let q = &p.questions()[i];
        let answer = plan_parallel(&q.scenario, q.slo, &q.space, parallel);
        p.give(i, answer);
    }
    p.drive(plan::pools::pool_run);
    p.result()
        .ok_or_else(|| "the plan over pools did not finish".into())
}
