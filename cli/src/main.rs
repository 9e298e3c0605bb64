//! `tlab`: run Throughput Lab scenarios from the command line.
//!
//! Scenario files are the same JSON the web page carries in its share links, so
//! any number on the page can be reproduced here.

use clap::{Parser, Subcommand};
use sim_core::Scenario;
use std::path::PathBuf;
use std::process::ExitCode;
use tlab::analysis;

mod parameters;
use tlab::scenario_file::{self, load, load_with};
mod plan_text;
mod pool_plan_text;
mod story;
use tlab::summary::{ms, summary};
use tlab::trace;

#[derive(Parser)]
#[command(name = "tlab", version, about = "Simulate LLM inference under load")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The targets of `plan` and `headroom` (one definition: sim-core's
/// `PlanSlo::for_scenario`, which the page's planner uses too). Each flag
/// overrides one; without it the scenario's own target holds.
#[derive(clap::Args)]
struct SloArgs {
    /// p99 time-to-first-token target, ms [default: the scenario's slo.ttft_ms].
    #[arg(long)]
    ttft_p99_ms: Option<f64>,
    /// p99 time-per-output-token target, ms [default: the scenario's slo.tpot_ms].
    #[arg(long)]
    tpot_p99_ms: Option<f64>,
    /// Largest share of requests that may fail, be refused or time out [default: 0.01].
    #[arg(long)]
    max_errors: Option<f64>,
    /// Smallest share of requests meeting the scenario's SLO [default: 0.9].
    #[arg(long)]
    min_goodput: Option<f64>,
}

impl SloArgs {
    /// The question these flags ask, with no space options.
    fn ask(&self) -> tlab::plan_ask::PlanAsk {
        tlab::plan_ask::PlanAsk {
            ttft_p99_ms: self.ttft_p99_ms,
            tpot_p99_ms: self.tpot_p99_ms,
            max_errors: self.max_errors,
            min_goodput: self.min_goodput,
            ..Default::default()
        }
    }

    /// The targets for `s`, each flag given overriding the scenario's.
    fn targets(&self, s: &Scenario) -> Result<sim_core::plan::PlanSlo, String> {
        self.ask().targets(s, tlab::plan_ask::flag)
    }
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario file and print a summary (or the full report with --json).
    Run {
        /// Scenario JSON file ("-" reads standard input), or a share link
        /// copied from the page.
        scenario: PathBuf,
        /// Print the full report as JSON.
        #[arg(long)]
        json: bool,
        /// Change a parameter first, NAME=VALUE (as a sweep axis names it; see
        /// `tlab sweep --help-parameters`); may be repeated.
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
        /// Replay a real request trace (Mooncake or request-log JSON lines,
        /// Azure or BurstGPT CSV, vllm bench serve JSON) as the arrivals, on
        /// the scenario's fleet.
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        #[command(flatten)]
        trace_args: trace::TraceArgs,
        /// Also run the scenario with its step times at the profile's
        /// measured error (p10, p90) and over seeds, and give every headline
        /// figure its range, the share meeting the targets and a verdict.
        #[arg(long, conflicts_with = "trace")]
        ranges: bool,
    },
    /// What a real request trace holds: its format, rate, lengths and prefix reuse.
    Trace {
        /// The trace file (format detected).
        file: PathBuf,
        #[command(flatten)]
        trace_args: trace::TraceArgs,
        /// Distil the trace into a scenario that fits a share link (rate
        /// schedule, quantile tables of lengths, shared prefixes) on this
        /// scenario's fleet, and run it beside the exact replay.
        #[arg(long, value_name = "SCENARIO")]
        distil: Option<PathBuf>,
        /// With --distil: write the distilled scenario here (JSON).
        #[arg(long, requires = "distil", value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Monthly cost on an API tier vs self-hosted as load grows, and the crossover.
    Compare {
        /// Scenario JSON file with an `api` section ("-" reads standard input).
        scenario: PathBuf,
        /// API tier name (default: the first tier).
        #[arg(long)]
        tier: Option<String>,
        /// Loads in tasks/s, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "0.5,1,2,5,10,20,50,100")]
        loads: Vec<f64>,
        /// Print the comparison as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Vary one or two parameters and tabulate the summary metrics (CSV), with a chart.
    Sweep {
        /// Scenario JSON file ("-" reads standard input).
        scenario: PathBuf,
        /// NAME=START:STOP:STEP or NAME=A,B,C; once or twice (parameters: see --help-parameters).
        #[arg(long = "vary", required_unless_present = "help_parameters")]
        vary: Vec<String>,
        /// Write the CSV here instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write an SVG chart here.
        #[arg(long)]
        chart: Option<PathBuf>,
        /// Run the points one after another instead of in parallel.
        #[arg(long)]
        serial: bool,
        /// List the parameters a sweep can vary.
        #[arg(long)]
        help_parameters: bool,
    },
    /// Latency against throughput for every batching policy as load rises.
    Curve {
        /// Scenario JSON file with a Poisson or gamma arrival process.
        scenario: PathBuf,
        /// Arrival rates, START:STOP:STEP or A,B,C.
        #[arg(long, default_value = "1:40:3")]
        rates: String,
        /// Write an SVG chart here.
        #[arg(long)]
        chart: Option<PathBuf>,
        /// Print the curves as JSON.
        #[arg(long)]
        json: bool,
        /// Change a parameter first, NAME=VALUE (as a sweep axis names it; see
        /// `tlab sweep --help-parameters`); may be repeated.
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
    },
    /// The cheapest setups that meet the targets at the scenario's load.
    Plan {
        /// Scenario JSON file: the workload and load (and API tiers, if any).
        scenario: PathBuf,
        #[command(flatten)]
        slo: SloArgs,
        /// Most replicas to consider.
        #[arg(long, default_value_t = 64)]
        max_replicas: u32,
        /// GPUs to consider, comma-separated catalogue keys (`all` for the
        /// whole catalogue, 13 GPUs; default: a100,h100,h200,l4,l40s,mi300x).
        #[arg(long, value_delimiter = ',')]
        gpus: Vec<String>,
        /// Also consider self-hosting when API tiers serve the scenario (the
        /// fleet's model: a different model from the API's).
        #[arg(long)]
        self_hosted: bool,
        /// Run the searches one after another instead of in parallel.
        #[arg(long)]
        serial: bool,
        /// Plan pools: each class on a pool or API tier of its own against
        /// its own targets, autoscaling tried where the load varies, the
        /// classes' answers run together, against one setup for everything.
        #[arg(long)]
        pools: bool,
        /// Plan a split into prefill and decode pools (xPyD): the cheapest
        /// ratio that meets the targets, beside the fewest colocated replicas.
        #[arg(long, conflicts_with = "pools")]
        split: bool,
        /// With --split: the KV-cache link (nvlink, infiniband, roce, ethernet).
        #[arg(long, requires = "split")]
        link: Option<String>,
        /// Plan on the whole scenario however long it takes (by default a
        /// plan stays within a work budget of simulated events, said up front).
        #[arg(long)]
        full: bool,
        /// Print the plan as JSON.
        #[arg(long)]
        json: bool,
        /// Change a parameter first, NAME=VALUE (as a sweep axis names it; see
        /// `tlab sweep --help-parameters`); may be repeated.
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
    },
    /// How far the scenario's load can grow before the targets break.
    Headroom {
        /// Scenario JSON file.
        scenario: PathBuf,
        #[command(flatten)]
        slo: SloArgs,
        /// Change a parameter first, NAME=VALUE (as a sweep axis names it; see
        /// `tlab sweep --help-parameters`); may be repeated.
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
    },
    /// Real vLLM runs against the simulator: a table per row, MAPE per metric
    /// and per model; with --fit, fit the vLLM profile's constants.
    Calibrate {
        /// The runs, as CSV files of the same columns, fitted and shown
        /// together (data/calibration/vllm-h100-runs.csv
        /// data/calibration/vllm-h100-runs-2.csv).
        #[arg(required_unless_present = "measured")]
        csv: Vec<PathBuf>,
        /// A measured run instead: a directory with requests.jsonl (and
        /// meta.json, timeseries.csv when there), or the request log itself,
        /// replayed strictly and compared with the simulation per metric.
        /// With --fit, vLLM's profile is fitted to the run (its KV
        /// reservation, then its step-time constants).
        #[arg(long, conflicts_with_all = ["leave_out", "fit_below", "from_current", "moe"])]
        measured: Option<PathBuf>,
        /// With --measured --fit: also fit on half of the requests and score
        /// the other half (every other request; first half in time → second).
        #[arg(long, requires = "measured")]
        holdout: bool,
        /// With --measured --fit: write the fitted profile to this file (JSON;
        /// a scenario names it as serving.profile).
        #[arg(long, requires = "fit", value_name = "FILE")]
        profile_out: Option<PathBuf>,
        /// Fit the vLLM profile's constants (least squares on log errors) and
        /// print them, then the table with them.
        #[arg(long)]
        fit: bool,
        /// Leave a model or an experiment out of the fit (substring of its
        /// name), to see how well runs the fit never saw are predicted.
        #[arg(long)]
        leave_out: Option<String>,
        /// Fit only on rows whose load stays at or under this rate (req/s)
        /// and show the rows above it (leave one load out).
        #[arg(long)]
        fit_below: Option<f64>,
        /// Rounds of the coordinate search.
        #[arg(long, default_value_t = 40)]
        rounds: u32,
        /// Start the fit from the profile's constants instead of the priors.
        #[arg(long)]
        from_current: bool,
        /// Include mixture-of-experts rows (dense rows only by default).
        #[arg(long)]
        moe: bool,
        /// Time the steps with this software's constants: vllm (the fitted
        /// profile) or tensorrt-llm (the first version's, to see what the fit
        /// changed). Memory is sized as vLLM does either way.
        #[arg(long, default_value = "vllm", value_parser = ["vllm", "tensorrt-llm"])]
        timing: String,
        /// For MLPerf and InferenceX files: print {"rows": [...], "summary":
        /// {...}} as JSON instead of the tables.
        #[arg(long)]
        json: bool,
        /// Print the step-time error bands of the rows compared, per GPU ×
        /// profile × model family, as JSON (`sim-core/src/ranges/bands.json`
        /// is this over every file of data/calibration/, with --moe).
        #[arg(long, conflicts_with = "json")]
        bands: bool,
    },
    /// List the built-in presets.
    Presets,
    /// A preset's story step by step, each claim checked against its step's run.
    Story {
        /// Preset id (see `tlab presets`).
        id: String,
    },
    /// Print a preset's scenario as JSON, ready to edit and run.
    Preset {
        /// Preset id (see `tlab presets`).
        id: String,
    },
}

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
                analysis::write_svg(&path, (1000, 600), |root| {
                    lab_charts::render::draw(root, &lab_charts::curve::model(&curves, None))
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
        } => {
            let s = load_with(&scenario, &set)?;
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
            if json {
                return serde_json::to_string_pretty(&p)
                    .map(|j| j + "\n")
                    .map_err(|e| e.to_string());
            }
            Ok(plan_text::text(
                &s,
                slo,
                &q,
                &p,
                started.elapsed().as_secs_f64(),
                full,
            ))
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
            measured,
            holdout,
            profile_out,
            json,
            bands,
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
                },
                match (json, bands) {
                    (_, true) => tlab::calibrate::public::Output::Bands,
                    (true, _) => tlab::calibrate::public::Output::Json,
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
