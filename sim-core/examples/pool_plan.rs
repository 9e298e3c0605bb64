//! The planner over pools on a preset, printed: `cargo run --release -p sim-core --example pool_plan [PRESET]`.

use sim_core::physics::{Gpu, Precision};
use sim_core::plan::{PlanSlo, Space, pools};

fn main() {
    let id = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "chat-and-batch".into());
    let mut s = sim_core::presets::all()
        .into_iter()
        .find(|p| p.id == id)
        .map_or_else(sim_core::presets::chatbot_h100, |p| p.scenario);
    if id == "daily" {
        s = sim_core::presets::chatbot_h100();
        let pt = |at_s: f64, rate_per_s: f64| sim_core::scenario::RatePoint { at_s, rate_per_s };
        s.workload.arrival = sim_core::scenario::Arrival::Schedule {
            points: vec![
                pt(0.0, 1.0),
                pt(2400.0, 1.0),
                pt(3000.0, 30.0),
                pt(3600.0, 30.0),
                pt(3700.0, 1.0),
            ],
            cv: None,
        };
        s.duration_s = 5400.0;
        if let Ok(t) = std::env::var("TTFT") {
            s.slo.ttft_ms = t.parse().expect("ms");
        }
    }
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
    let t = std::time::Instant::now();
    let p = pools::plan_pools(&s, PlanSlo::for_scenario(&s), &space).expect("plan");
    println!("{:.1} s", t.elapsed().as_secs_f64());
    for a in std::iter::once(&p.whole).chain(&p.classes) {
        println!(
            "{:?}: {:?} {:?} — {:?}",
            a.class,
            a.describe(),
            a.usd_per_month(),
            a.scaling_note
        );
    }
    if let Some(sp) = &p.split {
        println!("split {} {:?}", sp.usd_per_month, sp.verdicts);
    }
    println!("no split: {:?}; cheapest {:?}", p.no_split, p.cheapest());
    if std::env::var("DEBUG").is_ok() {
        debug(&s, &p);
    }
}

#[allow(dead_code)]
fn debug(s: &sim_core::Scenario, p: &pools::PoolPlan) {
    let slo = PlanSlo::for_scenario(s);
    let fixed = p.whole.fixed.clone().unwrap();
    for n in [1, 2] {
        let mut t = s.clone();
        sim_core::plan::apply_config(&mut t, &fixed.config, n).unwrap();
        let r = sim_core::run(&t.clone().validate().unwrap());
        println!(
            "fixed {n}: {:?} cost {}",
            slo.check(&r),
            r.cost.usd_per_month
        );
        let mut a = t.clone();
        a.serving.autoscale = Some(sim_core::scenario::Autoscale::new(
            sim_core::scenario::ScaleSignal::QueuePerReplica,
            n,
            16,
        ));
        let r = sim_core::run(&a.validate().unwrap());
        println!(
            "auto {n}-16: {:?} cost {} peak {:?}",
            slo.check(&r),
            r.cost.usd_per_month,
            r.pools.first().map(|p| p.replicas_peak)
        );
    }
}
