//! `tlab`: run Throughput Lab scenarios from the command line.
//!
//! Scenario files are the same JSON the web page carries in its share links, so
//! any number on the page can be reproduced here.

use clap::Parser;
use std::process::ExitCode;
use tlab::analysis;

mod commands;
mod parameters;
use tlab::scenario_file::{self, load, load_with};
mod plan_text;
mod pool_plan_text;
mod story;
use tlab::summary::{ms, summary};
use tlab::trace;

pub(crate) use commands::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match execute(cli.command) {
        Ok(out) => tlab::write_output(&out),
        Err(msg) => {
            eprintln!("tlab: {msg}");
            ExitCode::FAILURE
        }
    }
}

fn execute(command: Command) -> Result<String, String> {
    match command {
        Command::Story { id } => story::text(&id),
        Command::Trace {
            file,
            trace_args,
            distil,
            out,
        } => {
            let Some(base) = distil else {
                return trace::summary_text(&file, &trace_args);
            };
            let (t, reference) = trace::read_with_ref(&file, &trace_args)?;
            let base = load(&base)?.into_inner();
            // The reference holds the trace's summary already.
            let text = reference.summary.clone();
            Ok(text + &trace::distil_text(&file, (&t, reference), &base, out.as_deref())?)
        }
        Command::Run {
            scenario,
            json,
            set,
            trace,
            trace_args,
            ranges,
        } => {
            let s = load_with(&scenario, &set)?;
            if ranges {
                let (report, r) = sim_core::ranges::ranges(&s).map_err(|e| e.to_string())?;
                return if json {
                    tlab::summary::ranges_json(&report, &r)
                } else {
                    Ok(summary(&s, &report) + &tlab::summary::ranges_text(&r))
                };
            }
            let (s, report) = match trace {
                None => {
                    let report = sim_core::run(&s);
                    (s, report)
                }
                Some(file) => trace::replay(&file, &trace_args, s.into_inner())?,
            };
            if json {
                serde_json::to_string_pretty(&report)
                    .map(|j| j + "\n")
                    .map_err(|e| e.to_string())
            } else {
                Ok(summary(&s, &report))
            }
        }
        Command::Compare {
            scenario,
            tier,
            loads,
            json,
        } => {
            let s = load(&scenario)?;
            let index = sim_core::compare::tier_index(&s, tier.as_deref())?;
            let c = sim_core::compare::compare(&s, index, &loads).map_err(|e| e.to_string())?;
            if json {
                return serde_json::to_string_pretty(&c)
                    .map(|j| j + "\n")
                    .map_err(|e| e.to_string());
            }
            let usd = sim_core::format::usd;
            let mut o = format!(
                "API tier {:?}: {} a task at the scenario's load. One self-hosted replica: {}/month, {:.2} tasks/s saturated.\n",
                c.tier,
                usd(c.api_usd_per_request),
                usd(c.replica_usd_per_month),
                c.replica_capacity_per_s
            );
            o += &format!(
                "{:>12} {:>16} {:>9} {:>18}\n",
                "tasks/s", "API $/month", "replicas", "self-hosted $/month"
            );
            for p in &c.points {
                o += &format!(
                    "{:>12.2} {:>16.0} {:>9} {:>18.0}\n",
                    p.load_per_s, p.api_usd_per_month, p.replicas, p.self_hosted_usd_per_month
                );
            }
            o += &c.verdict;
            o.push('\n');
            Ok(o)
        }
        Command::Sweep {
            scenario,
            vary,
            out,
            chart,
            serial,
            help_parameters,
        } => {
            if help_parameters {
                return Ok(parameters::list());
            }
            let s = load(&scenario)?;
            let axes = vary
                .iter()
                .map(|v| sim_core::sweep::Axis::parse(v))
                .collect::<Result<Vec<_>, _>>()?;
            let rows = analysis::sweep(&s, &axes, !serial, true).map_err(|e| e.to_string())?;
            let csv = sim_core::sweep::csv(&axes, &rows);
            if let Some(path) = chart {
                analysis::write_svg(&path, (1200, 450), |root| {
                    lab_charts::sweep::draw(root, &axes, &rows)
                })?;
            }
            match out {
                Some(path) => {
                    std::fs::write(&path, &csv).map_err(|e| format!("{}: {e}", path.display()))?;
                    Ok(format!(
                        "{} points written to {}\n",
                        rows.len(),
                        path.display()
                    ))
                }
                None => Ok(csv),
            }
        }
        Command::Curve {
            scenario,
            rates,
            chart,
            json,
            set,
        } => {
            let s = load_with(&scenario, &set)?;
            let rates: Vec<f64> = sim_core::sweep::Axis::parse(&format!("arrival.rate={rates}"))
                .map_err(|e| format!("--rates: {e}"))?
                .values
                .iter()
                .map(|v| v.parse::<f64>().map_err(|e| e.to_string()))
                .collect::<Result<_, _>>()?;
            let curves = analysis::curves(&s, &rates, true, true).map_err(|e| e.to_string())?;
            if let Some(path) = chart {
                let tipping = sim_core::ranges::tipping_of(&s).map_err(|e| e.to_string())?;
                analysis::write_svg(&path, (1000, 600), |root| {
                    lab_charts::render::draw(
                        root,
                        &lab_charts::curve::model(&curves, None, tipping),
                    )
                })?;
            }
            if json {
                return serde_json::to_string_pretty(&curves)
                    .map(|j| j + "\n")
                    .map_err(|e| e.to_string());
            }
            let mut o = String::new();
            for c in &curves {
                o += &format!(
                    "{}:\n{:>10} {:>14} {:>12} {:>12}\n",
                    c.policy, "tasks/s", "output tok/s", "p50 e2e", "p99 e2e"
                );
                for (i, p) in c.points.iter().enumerate() {
                    let mark = if c.saturation == Some(i) {
                        "  ← saturation"
                    } else {
                        ""
                    };
                    o += &format!(
                        "{:>10.2} {:>14.0} {:>12} {:>12}{mark}\n",
                        p.0,
                        p.1,
                        ms(Some(p.2)),
                        ms(Some(p.3))
                    );
                }
            }
            Ok(o)
        }
        Command::Plan {
            scenario,
            slo,
            max_replicas,
            gpus,
            self_hosted,
            serial,
            pools,
            split,
            link,
            full,
            json,
            set,
            confidence,
        } => {
            let s = load_with(&scenario, &set)?;
            if let Some(c) = confidence.filter(|c| !(0.5..=1.0).contains(c)) {
                return Err(format!("--confidence must be 0.5..=1, got {c}"));
            }
            let ask = tlab::plan_ask::PlanAsk {
                max_replicas: Some(max_replicas),
                gpus,
                self_hosted,
                full,
                ..slo.ask()
            };
            let slo = ask.targets(&s, tlab::plan_ask::flag)?;
            let space = ask.space(&s, tlab::plan_ask::flag)?;
            if split {
                return plan_text::disaggregation_command(&s, slo, link.as_deref(), full, json);
            }
            if pools {
                let started = std::time::Instant::now();
                let p = analysis::pool_plan_parallel(&s, slo, &space, !serial)?;
                if json {
                    return serde_json::to_string_pretty(&p)
                        .map(|j| j + "\n")
                        .map_err(|e| e.to_string());
                }
                return Ok(pool_plan_text::text(&p, started.elapsed().as_secs_f64()));
            }
            // Said before anything runs: what the question costs, and any
            // smaller question asked instead.
            let q = sim_core::plan::budget::question(&s, slo, &space);
            if !json {
                for n in &q.notes {
                    eprintln!("tlab plan: {n}");
                }
            }
            let started = std::time::Instant::now();
            let p = tlab::plan_ask::answer(&s, &q, slo, &space, !serial);
            let sure = confidence
                .map(|level| sim_core::plan::confidence::confidence(&q.scenario, &p, slo, level))
                .transpose()
                .map_err(|e| e.to_string())?;
            if json {
                return plan_text::json(&p, sure.as_ref());
            }
            let mut o = plan_text::text(&s, slo, &q, &p, started.elapsed().as_secs_f64(), full);
            if let Some(c) = &sure {
                o += &format!("{}\n", c.words());
            }
            Ok(o)
        }
        Command::Headroom { scenario, slo, set } => {
            let s = load_with(&scenario, &set)?;
            let slo = slo.targets(&s)?;
            let h = sim_core::plan::headroom(&s, slo, 0.01).map_err(|e| e.to_string())?;
            Ok(format!("{}\n", h.verdict))
        }
        Command::Calibrate {
            csv,
            fit,
            leave_out,
            fit_below,
            rounds,
            from_current,
            moe,
            timing,
            software,
            measured,
            holdout,
            profile_out,
            json,
            bands,
            coverage,
            power,
        } => {
            if let Some(path) = measured {
                return tlab::measured::command(
                    &path,
                    &tlab::measured::Options {
                        fit,
                        holdout,
                        rounds,
                        profile_out,
                    },
                );
            }
            tlab::calibrate::public::command(
                &csv,
                tlab::calibrate::Options {
                    fit,
                    leave_out,
                    fit_below,
                    rounds,
                    from_current,
                    moe,
                    timing,
                    software,
                },
                match (json, bands, coverage) {
                    _ if power => tlab::calibrate::public::Output::Power,
                    (_, _, true) => tlab::calibrate::public::Output::Coverage,
                    (_, true, _) => tlab::calibrate::public::Output::Bands,
                    (true, ..) => tlab::calibrate::public::Output::Json,
                    _ => tlab::calibrate::public::Output::Tables,
                },
            )
        }
        Command::Presets => Ok(sim_core::presets::all()
            .iter()
            .map(|p| format!("{:<22} {}\n", p.id, p.title))
            .collect()),
        Command::Preset { id } => scenario_file::preset_json(&id),
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_analysis;
#[cfg(test)]
mod tests_calibrate;
#[cfg(test)]
mod tests_hostile;
#[cfg(test)]
mod tests_profile;
#[cfg(test)]
mod tests_ranges;
