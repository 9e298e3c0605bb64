//! Write the JSON report of every preset and of engine-exercising variants
//! (every batching policy, KV pressure with preemption, central queue, closed
//! loop, agent chains, a trace) to a directory, to compare two builds byte for
//! byte: `cargo run --release -p sim-core --example golden -- DIR`.
use sim_core::dist::Dist;
use sim_core::scenario::{Arrival, Batching, Router, Scenario, TraceRequest};

fn variants() -> Vec<(String, Scenario)> {
    let mut out: Vec<(String, Scenario)> = sim_core::presets::all()
        .into_iter()
        .map(|p| (p.id.to_owned(), p.scenario))
        .collect();
    let base = sim_core::presets::chatbot_h100();
    let policies = [
        ("none", Batching::None),
        (
            "static",
            Batching::Static {
                max_batch: 64,
                max_wait_ms: 50.0,
            },
        ),
        (
            "continuous",
            Batching::Continuous {
                max_num_seqs: 256,
                max_num_batched_tokens: 16_384,
            },
        ),
    ];
    for (name, b) in policies {
        let mut s = base.clone();
        s.duration_s = 60.0;
        if name == "none" {
            s.workload.arrival = Arrival::Poisson { rate_per_s: 0.5 };
        }
        s.serving.batching = b;
        out.push((format!("policy-{name}"), s));
    }
    // KV pressure: a small cache (low memory utilisation) and long answers.
    let mut kv = base.clone();
    kv.duration_s = 60.0;
    kv.serving.gpu_memory_utilisation = 0.26;
    kv.workload.arrival = Arrival::Poisson { rate_per_s: 12.0 };
    kv.workload.classes[0].output_tokens = Dist::LogNormal {
        median: 600.0,
        p90: 1000.0,
    };
    out.push(("kv-pressure-chunked".into(), kv.clone()));
    let mut kvc = kv.clone();
    kvc.serving.batching = Batching::Continuous {
        max_num_seqs: 256,
        max_num_batched_tokens: 16_384,
    };
    out.push(("kv-pressure-continuous".into(), kvc));
    let mut central = base.clone();
    central.duration_s = 60.0;
    central.serving.replicas = 3;
    central.serving.router = Router::CentralQueue;
    central.serving.gpu_memory_utilisation = 0.26;
    central.workload.arrival = Arrival::Poisson { rate_per_s: 30.0 };
    out.push(("central-queue-kv".into(), central));
    for router in [Router::RoundRobin, Router::JoinShortestQueue] {
        let mut s = base.clone();
        s.duration_s = 60.0;
        s.serving.replicas = 2;
        s.serving.router = router;
        s.workload.arrival = Arrival::Poisson { rate_per_s: 16.0 };
        out.push((format!("router-{router:?}"), s));
    }
    let mut agent = base.clone();
    agent.duration_s = 60.0;
    agent.workload.classes[0].calls_per_task = 5;
    agent.workload.arrival = Arrival::Poisson { rate_per_s: 2.0 };
    out.push(("agent-chain".into(), agent));
    let mut trace = base.clone();
    trace.workload.arrival = Arrival::Trace {
        prefix_block_tokens: None,
        requests: (0..400)
            .map(|i| TraceRequest {
                prefix_blocks: Vec::new(),
                at_s: f64::from(i) * 0.1,
                input_tokens: 100 + (i * 37) % 900,
                output_tokens: 20 + (i * 53) % 400,
                class: 0,
            })
            .collect(),
    };
    out.push(("trace".into(), trace));
    out
}

fn main() {
    let mut args = std::env::args().skip(1);
    let first = args
        .next()
        .expect("usage: golden DIR | golden --fixtures DIR");
    // `--fixtures DIR`: for each variant its scenario, its share link and its
    // report, compact, as the golden tests read them.
    let (dir, fixtures) = if first == "--fixtures" {
        (args.next().expect("usage: golden --fixtures DIR"), true)
    } else {
        (first, false)
    };
    std::fs::create_dir_all(&dir).expect("create DIR");
    for (name, s) in variants() {
        if fixtures {
            let scenario = serde_json::to_string(&s).expect("serialise");
            std::fs::write(format!("{dir}/{name}.scenario.json"), scenario).expect("write");
            std::fs::write(format!("{dir}/{name}.link"), sim_core::link::encode(&s))
                .expect("write");
        }
        let r = sim_core::run_scenario(s).expect("valid scenario");
        let json = if fixtures {
            serde_json::to_string(&r)
        } else {
            serde_json::to_string_pretty(&r)
        }
        .expect("serialise");
        let file = if fixtures {
            format!("{dir}/{name}.report.json")
        } else {
            format!("{dir}/{name}.json")
        };
        std::fs::write(file, json).expect("write");
        println!(
            "{name:28} done {:>6} preempt {:>5} out tok/s {:>8.0}",
            r.requests.completed, r.utilisation.preemptions, r.throughput.output_tokens_per_s
        );
    }
}
