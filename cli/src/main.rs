//! `tlab`: run Throughput Lab scenarios from the command line.
//!
//! Scenario files are the same JSON the web page carries in its share links, so
//! any number on the page can be reproduced here.

use clap::{Parser, Subcommand};
use sim_core::report::LatencyStats;
use sim_core::{Report, Scenario, ValidScenario};
use std::path::PathBuf;
use std::process::ExitCode;
use tlab::analysis;

/// Largest scenario file accepted, bytes.
const MAX_SCENARIO_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Parser)]
#[command(name = "tlab", version, about = "Simulate LLM inference under load")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario file and print a summary (or the full report with --json).
    Run {
        /// Scenario JSON file ("-" reads standard input).
        scenario: PathBuf,
        /// Print the full report as JSON.
        #[arg(long)]
        json: bool,
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
    },
    /// The cheapest setups that meet the targets at the scenario's load.
    Plan {
        /// Scenario JSON file: the workload and load (and API tiers, if any).
        scenario: PathBuf,
        /// p99 time-to-first-token target, ms.
        #[arg(long, default_value_t = 2000.0)]
        ttft_p99_ms: f64,
        /// p99 time-per-output-token target, ms.
        #[arg(long, default_value_t = 200.0)]
        tpot_p99_ms: f64,
        /// Largest share of requests that may fail or be rejected.
        #[arg(long, default_value_t = 0.01)]
        max_errors: f64,
        /// Smallest share of requests meeting the scenario's SLO.
        #[arg(long, default_value_t = 0.9)]
        min_goodput: f64,
        /// Most replicas to consider.
        #[arg(long, default_value_t = 64)]
        max_replicas: u32,
        /// Run the searches one after another instead of in parallel.
        #[arg(long)]
        serial: bool,
        /// Print the plan as JSON.
        #[arg(long)]
        json: bool,
    },
    /// How far the scenario's load can grow before the targets break.
    Headroom {
        /// Scenario JSON file.
        scenario: PathBuf,
        /// p99 time-to-first-token target, ms.
        #[arg(long, default_value_t = 2000.0)]
        ttft_p99_ms: f64,
        /// p99 time-per-output-token target, ms.
        #[arg(long, default_value_t = 200.0)]
        tpot_p99_ms: f64,
        /// Largest share of requests that may fail or be rejected.
        #[arg(long, default_value_t = 0.01)]
        max_errors: f64,
        /// Smallest share of requests meeting the scenario's SLO.
        #[arg(long, default_value_t = 0.0)]
        min_goodput: f64,
    },
    /// List the built-in presets.
    Presets,
    /// Print a preset's scenario as JSON, ready to edit and run.
    Preset {
        /// Preset id (see `tlab presets`).
        id: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match execute(cli.command) {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(msg) => {
            eprintln!("tlab: {msg}");
            ExitCode::FAILURE
        }
    }
}

fn execute(command: Command) -> Result<String, String> {
    match command {
        Command::Run { scenario, json } => {
            let s = load(&scenario)?;
            let report = sim_core::run(&s);
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
            let tiers: Vec<String> = s
                .api
                .as_ref()
                .map(|a| a.tiers.iter().map(|t| t.name.clone()).collect())
                .unwrap_or_default();
            let index = match &tier {
                None => 0,
                Some(name) => tiers.iter().position(|t| t == name).ok_or_else(|| {
                    format!("no tier {name:?}; the scenario has: {}", tiers.join(", "))
                })?,
            };
            let c = sim_core::compare::compare(&s, index, &loads).map_err(|e| e.to_string())?;
            if json {
                return serde_json::to_string_pretty(&c)
                    .map(|j| j + "\n")
                    .map_err(|e| e.to_string());
            }
            let mut o = format!(
                "API tier {:?}: ${:.5} a request. One self-hosted replica: ${:.0}/month, {:.2} tasks/s saturated.\n",
                c.tier, c.api_usd_per_request, c.replica_usd_per_month, c.replica_capacity_per_s
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
                return Ok(sim_core::sweep::PARAMETERS
                    .iter()
                    .map(|(p, d)| format!("{p:<28} {d}\n"))
                    .collect());
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
                    lab_charts::sweep(root, &axes, &rows)
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
        } => {
            let s = load(&scenario)?;
            let rates: Vec<f64> = sim_core::sweep::Axis::parse(&format!("arrival.rate={rates}"))?
                .values
                .iter()
                .map(|v| v.parse::<f64>().map_err(|e| e.to_string()))
                .collect::<Result<_, _>>()?;
            let curves = analysis::curves(&s, &rates, true, true).map_err(|e| e.to_string())?;
            if let Some(path) = chart {
                analysis::write_svg(&path, (1000, 600), |root| {
                    lab_charts::latency_throughput(root, &curves)
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
            ttft_p99_ms,
            tpot_p99_ms,
            max_errors,
            min_goodput,
            max_replicas,
            serial,
            json,
        } => {
            let s = load(&scenario)?;
            let slo = plan_slo(ttft_p99_ms, tpot_p99_ms, max_errors, min_goodput)?;
            if !(1..=1024).contains(&max_replicas) {
                return Err(format!(
                    "--max-replicas must be 1..=1024, got {max_replicas}"
                ));
            }
            let space = sim_core::plan::Space {
                max_replicas,
                ..sim_core::plan::Space::default()
            };
            let started = std::time::Instant::now();
            let p = analysis::plan_parallel(&s, slo, &space, !serial);
            if json {
                return serde_json::to_string_pretty(&p)
                    .map(|j| j + "\n")
                    .map_err(|e| e.to_string());
            }
            let mut o = format!(
                "{} configurations ({} candidate setups), {} pruned without simulating, {} simulations in {:.1} s\n",
                p.configurations,
                p.candidates,
                p.pruned.len(),
                p.simulations,
                started.elapsed().as_secs_f64()
            );
            o += "cheapest setups meeting the targets:\n";
            for e in p.feasible.iter().take(10) {
                o += &format!(
                    "  ${:>9.0}/month  {}  (p99 TTFT {}, p99 TPOT {}, margin {:.0} %)\n",
                    e.usd_per_month,
                    e.description,
                    ms(e.summary.ttft_p99_ms),
                    ms(e.summary.tpot_p99_ms),
                    e.verdict.as_ref().map_or(0.0, |m| m * 100.0)
                );
            }
            if p.feasible.is_empty() {
                o += "  none\n";
            }
            o += "cheaper setups that nearly made it:\n";
            for e in &p.near_misses {
                o += &format!(
                    "  ${:>9.0}/month  {}: {}\n",
                    e.usd_per_month,
                    e.description,
                    e.verdict.as_ref().err().map_or("", String::as_str)
                );
            }
            Ok(o)
        }
        Command::Headroom {
            scenario,
            ttft_p99_ms,
            tpot_p99_ms,
            max_errors,
            min_goodput,
        } => {
            let s = load(&scenario)?;
            let slo = plan_slo(ttft_p99_ms, tpot_p99_ms, max_errors, min_goodput)?;
            let h = sim_core::plan::headroom(&s, slo, 0.01).map_err(|e| e.to_string())?;
            Ok(format!("{}\n", h.verdict))
        }
        Command::Presets => Ok(sim_core::presets::all()
            .iter()
            .map(|p| format!("{:<22} {}\n", p.id, p.title))
            .collect()),
        Command::Preset { id } => {
            let all = sim_core::presets::all();
            let p = all.iter().find(|p| p.id == id).ok_or_else(|| {
                let ids: Vec<&str> = all.iter().map(|p| p.id).collect();
                format!("no preset {id:?}; known: {}", ids.join(", "))
            })?;
            serde_json::to_string_pretty(&p.scenario)
                .map(|j| j + "\n")
                .map_err(|e| e.to_string())
        }
    }
}

fn load(path: &PathBuf) -> Result<ValidScenario, String> {
    let text = read_scenario(path)?;
    Scenario::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn plan_slo(
    ttft: f64,
    tpot: f64,
    errors: f64,
    goodput: f64,
) -> Result<sim_core::plan::PlanSlo, String> {
    let pos = |name: &str, v: f64| {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(format!("{name} must be > 0, got {v}"))
        }
    };
    let frac = |name: &str, v: f64| {
        if (0.0..=1.0).contains(&v) {
            Ok(v)
        } else {
            Err(format!("{name} must be 0..=1, got {v}"))
        }
    };
    Ok(sim_core::plan::PlanSlo {
        ttft_p99_ms: pos("--ttft-p99-ms", ttft)?,
        tpot_p99_ms: pos("--tpot-p99-ms", tpot)?,
        max_error_fraction: frac("--max-errors", errors)?,
        min_goodput: frac("--min-goodput", goodput)?,
    })
}

fn read_scenario(path: &PathBuf) -> Result<String, String> {
    use std::io::Read;
    let mut text = String::new();
    let limited = |r: &mut dyn Read, text: &mut String| {
        r.take(MAX_SCENARIO_BYTES + 1)
            .read_to_string(text)
            .map_err(|e| format!("{}: {e}", path.display()))
    };
    if path.as_os_str() == "-" {
        limited(&mut std::io::stdin(), &mut text)?;
    } else {
        let mut f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        limited(&mut f, &mut text)?;
    }
    if text.len() as u64 > MAX_SCENARIO_BYTES {
        return Err(format!(
            "{}: larger than {MAX_SCENARIO_BYTES} bytes",
            path.display()
        ));
    }
    Ok(text)
}

fn ms(v: Option<f64>) -> String {
    match v {
        None => "–".into(),
        Some(x) if x >= 10_000.0 => format!("{:.1} s", x / 1000.0),
        Some(x) if x >= 100.0 => format!("{x:.0} ms"),
        Some(x) => format!("{x:.1} ms"),
    }
}

fn line(name: &str, l: &LatencyStats) -> String {
    format!(
        "  {name:<12} mean {:>9}  p50 {:>9}  p90 {:>9}  p99 {:>9}  max {:>9}\n",
        ms(l.mean_ms),
        ms(l.p50_ms),
        ms(l.p90_ms),
        ms(l.p99_ms),
        ms(l.max_ms)
    )
}

/// A readable summary of a report.
fn summary(s: &Scenario, r: &Report) -> String {
    let mut o = String::new();
    let name = if s.name.is_empty() {
        "scenario"
    } else {
        &s.name
    };
    o += &format!(
        "{name} — seed {}, {:.1} s simulated, {} events\n",
        s.seed, r.sim_time_s, r.events
    );
    for w in &r.warnings {
        o += &format!("warning: {w}\n");
    }
    let c = &r.requests;
    o += &format!(
        "requests: {} arrived, {} completed, {} rejected, {} failed, {} in flight\n",
        c.arrived, c.completed, c.rejected, c.failed, c.in_flight
    );
    o += "latency:\n";
    o += &line("TTFT", &r.overall.ttft);
    o += &line("TPOT", &r.overall.tpot);
    o += &line("end-to-end", &r.overall.e2e);
    o += &line("queue wait", &r.overall.queue_wait);
    if r.per_class.len() > 1 {
        for k in &r.per_class {
            o += &format!("  class {}:\n", k.name);
            o += &line("  TTFT", &k.ttft);
            o += &line("  end-to-end", &k.e2e);
        }
    }
    let t = &r.throughput;
    o += &format!(
        "throughput: {:.0} output tok/s, {:.0} input tok/s, {:.2} req/s; SLO met by {}\n",
        t.output_tokens_per_s,
        t.input_tokens_per_s,
        t.requests_per_s,
        t.goodput_fraction
            .map_or("–".into(), |g| format!("{:.1} % of requests", g * 100.0))
    );
    if r.cost.gpus > 0 {
        let u = &r.utilisation;
        o += &format!(
            "utilisation: GPU busy {:.0} %, mean batch {:.1}, KV mean {:.0} % / peak {:.0} %, {} preemptions, MFU {:.0} %, bandwidth {:.0} %\n",
            u.gpu_busy_fraction * 100.0,
            u.mean_batch_size,
            u.kv_use_mean * 100.0,
            u.kv_use_peak * 100.0,
            u.preemptions,
            u.mfu * 100.0,
            u.bandwidth_utilisation * 100.0
        );
        if let Some(l) = &r.physical_limit {
            o += &format!(
                "physical limit: {:.0} output tok/s at batch {} (roofline); this run reached {:.0} % of it\n",
                l.output_tokens_per_s,
                l.batch,
                l.achieved_fraction * 100.0
            );
        }
    }
    if let Some(a) = &r.api {
        o += &format!(
            "API: {} requests, {} attempts ({:.2} per request), {} × 429, {} failed, {} turned away by the client queue\n",
            a.requests,
            a.attempts,
            a.attempts_per_request,
            a.throttled_429,
            a.failed_429 + a.failed_too_large,
            a.rejected_by_client
        );
        for t in &a.tiers {
            o += &format!(
                "  tier {}: {} requests, {} × 429, ${:.2} for the run, ${:.0}/month\n",
                t.name, t.requests, t.throttled_429, t.usd, t.usd_per_month
            );
        }
    }
    let k = &r.cost;
    o += &format!(
        "cost: fleet {} GPUs × ${:.2}/h = ${:.2}, API ${:.2}: ${:.2} for the run, ${:.0}/month; {} per million output tokens\n",
        k.gpus,
        k.usd_per_gpu_hour,
        k.fleet_usd,
        k.api_usd,
        k.total_usd,
        k.usd_per_month,
        k.usd_per_mtok_output
            .map_or("–".into(), |v| format!("${v:.2}"))
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Write preset `id` as a scenario file in `dir`.
    fn preset_file(dir: &tempfile::TempDir, id: &str) -> PathBuf {
        let path = dir.path().join(format!("{id}.json"));
        let json = execute(Command::Preset { id: id.into() }).expect("preset");
        std::fs::write(&path, json).expect("write");
        path
    }

    #[test]
    fn a_preset_round_trips_through_a_file_and_reproduces_the_library_run() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = preset_file(&dir, "chatbot-h100");
        let out = execute(Command::Run {
            scenario: path.clone(),
            json: true,
        })
        .expect("run");
        let report: Report = serde_json::from_str(&out).expect("report JSON");
        assert_eq!(
            report,
            sim_core::run_scenario(sim_core::presets::chatbot_h100()).expect("valid")
        );
        let text = execute(Command::Run {
            scenario: path,
            json: false,
        })
        .expect("run");
        assert!(
            text.contains("TTFT") && text.contains("per million output tokens"),
            "{text}"
        );
    }

    #[test]
    fn a_bad_file_is_reported_with_its_problem() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("bad.json");
        let mut v = serde_json::to_value(sim_core::presets::chatbot_h100()).expect("value");
        v["serving"]["replicas"] = serde_json::json!(0);
        std::fs::write(&path, v.to_string()).expect("write");
        let err = execute(Command::Run {
            scenario: path,
            json: false,
        })
        .expect_err("invalid");
        assert!(
            err.contains("serving.replicas must be 1..=1024, got 0"),
            "{err}"
        );
        let err = execute(Command::Run {
            scenario: dir.path().join("missing.json"),
            json: false,
        })
        .expect_err("missing");
        assert!(err.contains("missing.json"), "{err}");
        assert!(
            execute(Command::Preset { id: "nope".into() })
                .expect_err("unknown")
                .contains("known: chatbot-h100")
        );
    }

    #[test]
    fn compare_prints_both_costs_and_the_crossover() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = preset_file(&dir, "pay-for-speed");
        let out = execute(Command::Compare {
            scenario: path.clone(),
            tier: None,
            loads: vec![0.1, 5.0, 50.0],
            json: false,
        })
        .expect("compare");
        assert!(
            out.contains("API tier \"voice-llm\"") && out.contains("self-hosted $/month"),
            "{out}"
        );
        assert!(out.contains("cheaper from 0.35 tasks/s"), "{out}");
        let err = execute(Command::Compare {
            scenario: path,
            tier: Some("nope".into()),
            loads: vec![1.0],
            json: false,
        })
        .expect_err("unknown tier");
        assert!(err.contains("the scenario has: voice-llm"), "{err}");
    }
}

#[cfg(test)]
mod analysis_tests {
    use sim_core::plan::{PlanSlo, Space};
    use sim_core::sweep::{Axis, Summary};
    use tlab::analysis;

    fn base() -> sim_core::Scenario {
        let mut s = sim_core::presets::chatbot_h100();
        s.duration_s = 60.0;
        s
    }

    #[test]
    fn a_sweep_point_equals_an_individual_run_and_parallel_equals_serial() {
        let axes = [
            Axis::parse("arrival.rate=4,12,20").expect("axis"),
            Axis::parse("batching.max_seqs=32,128").expect("axis"),
        ];
        let parallel = analysis::sweep(&base(), &axes, true, false).expect("valid");
        let serial = analysis::sweep(&base(), &axes, false, false).expect("valid");
        assert_eq!(parallel, serial);
        let mut s = base();
        s.workload.arrival = sim_core::scenario::Arrival::Poisson { rate_per_s: 12.0 };
        if let sim_core::scenario::Batching::ChunkedPrefill { max_num_seqs, .. } =
            &mut s.serving.batching
        {
            *max_num_seqs = 128;
        }
        let direct = Summary::of(&sim_core::run_scenario(s.clone()).expect("valid"));
        let row = parallel
            .iter()
            .find(|(l, _)| l == &["12", "128"])
            .expect("point");
        assert_eq!(row.1, direct);
    }

    #[test]
    fn the_plan_s_answer_passes_when_rerun_and_the_cheaper_near_miss_fails() {
        let slo = PlanSlo {
            ttft_p99_ms: 500.0,
            tpot_p99_ms: 50.0,
            max_error_fraction: 0.01,
            min_goodput: 0.9,
        };
        let space = Space {
            gpus: vec![
                sim_core::physics::Gpu::L4,
                sim_core::physics::Gpu::L40s,
                sim_core::physics::Gpu::H100,
            ],
            tps: vec![1, 2],
            weights: vec![sim_core::physics::Precision::Fp8],
            max_seqs: vec![64, 256],
            max_replicas: 16,
            api_multipliers: vec![1],
        };
        let p = analysis::plan_parallel(&base(), slo, &space, true);
        assert_eq!(
            p,
            analysis::plan_parallel(&base(), slo, &space, false),
            "parallel equals serial"
        );
        let best = p.feasible.first().expect("something fits");
        let rerun = |e: &sim_core::plan::Evaluated| {
            let search = sim_core::plan::Search::new(&base(), e.config.clone(), slo, &space);
            let mut s = search.next().expect("not pruned");
            s.serving.replicas = e.replicas;
            slo.check(&sim_core::run_scenario(s.clone()).expect("valid"))
        };
        assert!(rerun(best).is_ok(), "{}", best.description);
        let miss = p.near_misses.first().expect("a cheaper setup failed");
        assert!(miss.usd_per_month < best.usd_per_month);
        assert!(rerun(miss).is_err(), "{}", miss.description);
        assert!(
            p.feasible
                .windows(2)
                .all(|w| w[0].usd_per_month <= w[1].usd_per_month)
        );
    }
}
