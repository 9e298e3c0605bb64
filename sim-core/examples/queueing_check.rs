//! Print the engine's values for the queueing-theory cases of the test suite.
use sim_core::dist::Dist;
use sim_core::scenario::*;

fn textbook(
    rate: f64,
    servers: u32,
    router: Router,
    batching: Batching,
    time_s: Dist,
    join: bool,
) -> Scenario {
    let mut s = sim_core::presets::chatbot_h100();
    s.seed = 2024;
    s.duration_s = 1_000_000.0 / rate;
    s.workload.arrival = Arrival::Poisson { rate_per_s: rate };
    s.workload.classes[0].input_tokens = Dist::Fixed { value: 1.0 };
    s.workload.classes[0].output_tokens = Dist::Fixed { value: 1.0 };
    s.workload.classes[0].max_tokens = 1;
    s.serving.replicas = servers;
    s.serving.router = router;
    s.serving.batching = batching;
    s.serving.max_queue_per_replica = 10_000_000;
    s.serving.service = ServiceModel::Abstract {
        time_s,
        join_in_progress: join,
    };
    s.limits = Limits {
        max_events: 200_000_000,
        max_sim_time_s: 6_000_000.0,
    };
    s
}

fn main() {
    let u = 1e-3;
    let ms = |v: Option<f64>| v.unwrap_or(f64::NAN) / 1000.0 / u;
    let r = sim_core::run_scenario(textbook(
        800.0,
        1,
        Router::RoundRobin,
        Batching::None,
        Dist::Exponential { mean: u },
        false,
    ))
    .unwrap();
    println!(
        "M/M/1: W {:.3} (5), W_q {:.3} (4), sojourn p95 {:.3} (14.979)",
        ms(r.overall.e2e.mean_ms),
        ms(r.overall.queue_wait.mean_ms),
        ms(r.overall.e2e.p95_ms)
    );
    let r = sim_core::run_scenario(textbook(
        800.0,
        1,
        Router::RoundRobin,
        Batching::None,
        Dist::Fixed { value: u },
        false,
    ))
    .unwrap();
    println!("M/D/1: W_q {:.3} (2.0)", ms(r.overall.queue_wait.mean_ms));
    let r = sim_core::run_scenario(textbook(
        200.0,
        3,
        Router::CentralQueue,
        Batching::None,
        Dist::Exponential { mean: 10.0 * u },
        false,
    ))
    .unwrap();
    println!(
        "M/M/3: W_q {:.3} (4.444), wait p95 {:.3} (21.848)",
        ms(r.overall.queue_wait.mean_ms),
        ms(r.overall.queue_wait.p95_ms)
    );
    let b = Batching::Static {
        max_batch: 4,
        max_wait_ms: 0.0,
    };
    let r = sim_core::run_scenario(textbook(
        3000.0,
        1,
        Router::RoundRobin,
        b.clone(),
        Dist::Exponential { mean: u },
        false,
    ))
    .unwrap();
    println!("bulk static: W {:.3} (3.552)", ms(r.overall.e2e.mean_ms));
    let r = sim_core::run_scenario(textbook(
        3000.0,
        1,
        Router::RoundRobin,
        b,
        Dist::Exponential { mean: u },
        true,
    ))
    .unwrap();
    println!(
        "bulk join-in-progress: W {:.3} (2.648)",
        ms(r.overall.e2e.mean_ms)
    );
}
