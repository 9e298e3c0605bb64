//! `tlab`: run Throughput Lab scenarios from the command line.
//!
//! Scenario files are the same JSON the web page carries in its share links, so
//! any number on the page can be reproduced here.

use clap::{Parser, Subcommand};
use sim_core::report::LatencyStats;
use sim_core::{Report, Scenario};
use std::path::PathBuf;
use std::process::ExitCode;

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
            let text = read_scenario(&scenario)?;
            let s =
                Scenario::from_json(&text).map_err(|e| format!("{}: {e}", scenario.display()))?;
            let report = sim_core::run(&s).map_err(|e| e.to_string())?;
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
            let text = read_scenario(&scenario)?;
            let s =
                Scenario::from_json(&text).map_err(|e| format!("{}: {e}", scenario.display()))?;
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

    #[test]
    fn a_preset_round_trips_through_a_file_and_reproduces_the_library_run() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("chatbot.json");
        let json = execute(Command::Preset {
            id: "chatbot-h100".into(),
        })
        .expect("preset");
        std::fs::write(&path, json).expect("write");
        let out = execute(Command::Run {
            scenario: path.clone(),
            json: true,
        })
        .expect("run");
        let report: Report = serde_json::from_str(&out).expect("report JSON");
        assert_eq!(
            report,
            sim_core::run(&sim_core::presets::chatbot_h100()).expect("valid")
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
        let path = dir.path().join("voice.json");
        let json = execute(Command::Preset {
            id: "pay-for-speed".into(),
        })
        .expect("preset");
        std::fs::write(&path, json).expect("write");
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
