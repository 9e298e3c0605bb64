//! The planner over pools on a preset in a small space (H100 and L40S, one
//! GPU per replica, BF16 or FP8, batch 64 or 256, at most 16 replicas),
//! printed: `cargo run --release -p sim-core --example pool_plan [PRESET]`.
//! On chat-and-batch the batch job is given a minute to its first token and
//! 200 ms a token, its own targets.

use sim_core::physics::{Gpu, Precision};
use sim_core::plan::{PlanSlo, Space, pools};

fn main() {
    let id = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "chat-and-batch".into());
    let Some(preset) = sim_core::presets::all().into_iter().find(|p| p.id == id) else {
        eprintln!("no preset {id}");
        std::process::exit(2);
    };
    let mut s = preset.scenario;
    if id == "chat-and-batch" {
        s.workload.classes[1].slo = Some(sim_core::scenario::Slo {
            ttft_ms: 60_000.0,
            tpot_ms: 200.0,
        });
    }
    let space = Space {
        gpus: vec![Gpu::H100, Gpu::L40s],
        tps: vec![1],
        weights: vec![Precision::Bf16, Precision::Fp8],
        max_seqs: vec![64, 256],
        max_replicas: 16,
        ..Space::for_scenario(&s)
    };
    let p = match pools::plan_pools(&s, PlanSlo::for_scenario(&s), &space) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    for a in std::iter::once(&p.whole).chain(&p.classes) {
        let who = a.class.as_deref().unwrap_or("all the traffic");
        let cost = a.usd_per_month().map_or("-".into(), sim_core::format::usd);
        let what = a
            .describe()
            .unwrap_or_else(|| "nothing meets the targets".into());
        println!("{who}: {what}, {cost}/month");
        if let Some(n) = &a.scaling_note {
            println!("  autoscaling: {n}");
        }
    }
    if let Some(sp) = &p.split {
        println!("split: {}/month", sim_core::format::usd(sp.usd_per_month));
        for (c, v) in &sp.verdicts {
            println!("  {c}: {v:?}");
        }
    }
    if let Some(why) = &p.no_split {
        println!("no split: {why}");
    }
    if let Some((d, c, _)) = p.cheapest() {
        println!("cheapest: {d}, {}/month", sim_core::format::usd(c));
    }
}
