//! Integration tests of sim-core, one binary: features through the public API.

mod anchors;
mod async_scheduling;
mod autoscale;
mod batch_api;
mod behaviour;
mod calibration;
mod capacity;
mod daily_limits;
mod defects;
mod determinism;
mod disaggregation;
mod distil;
mod energy;
mod fitted_profile;
mod fuzz;
mod fuzz_text;
mod fuzz_traces;
mod golden;
mod gpus;
mod load;
mod measured;
mod planning;
mod pool_plan;
mod pools;
mod preset_reports;
mod priority;
mod prompt_cache;
mod provider_errors;
mod providers;
mod queueing;
mod ranges;
mod reasoning;
mod repro;
mod service_tiers;
mod serving;
mod sliding_window;
mod speculative;
mod stories;
mod trace_prefix;
mod trace_stream;
mod traces;
mod validation;

use sim_core::dist::Dist;
use sim_core::scenario::{
    Arrival, Batching, Limits, RequestClass, Router, SCENARIO_VERSION, Scenario, ServiceModel,
    Serving, Slo, Workload,
};

/// A one-class workload with fixed token lengths.
pub fn fixed_class(input: u32, output: u32) -> RequestClass {
    RequestClass::new(
        "fixed",
        Dist::Fixed {
            value: f64::from(input),
        },
        Dist::Fixed {
            value: f64::from(output),
        },
        output,
    )
}

/// A trace of one-class requests of `input` tokens in and `output` out,
/// arriving at `times` (seconds).
pub fn trace_at(times: impl Iterator<Item = f64>, input: u32, output: u32) -> Arrival {
    let requests: Vec<sim_core::scenario::TraceRequest> = times
        .map(|at_s| sim_core::scenario::TraceRequest {
            at_s,
            input_tokens: input,
            output_tokens: output,
            class: 0,
            prefix_blocks: Vec::new(),
        })
        .collect();
    Arrival::Trace {
        requests: requests.into(),
        prefix_block_tokens: None,
    }
}

/// A textbook queue: Poisson arrivals at `rate`, `servers` replicas behind `router`,
/// the abstract service model with the given service-time distribution.
pub fn textbook(
    rate: f64,
    servers: u32,
    router: Router,
    batching: Batching,
    time_s: Dist,
    requests: f64,
) -> Scenario {
    Scenario {
        distilled_from: None,
        pools: Vec::new(),
        routing: Vec::new(),
        version: SCENARIO_VERSION,
        name: "textbook".into(),
        seed: 2024,
        duration_s: requests / rate,
        workload: Workload {
            arrival: Arrival::Poisson { rate_per_s: rate },
            classes: vec![fixed_class(1, 1)],
        },
        serving: Serving {
            name: None,
            autoscale: None,
            replicas: servers,
            router,
            batching,
            max_queue_per_replica: 10_000_000,
            service: ServiceModel::Abstract {
                time_s,
                join_in_progress: false,
            },
            software: Default::default(),
            ..sim_core::presets::h100_llama_8b()
        },
        slo: Slo::default(),
        limits: Limits {
            max_events: 200_000_000,
            max_sim_time_s: 6_000_000.0,
        },
        api: None,
    }
}

/// Validate a scenario the test built and run it.
pub fn run(s: &Scenario) -> Result<sim_core::Report, sim_core::ScenarioError> {
    sim_core::run_scenario(s.clone())
}

/// Validate a scenario the test built and set up a run of it.
pub fn simulation(s: &Scenario) -> Result<sim_core::Simulation, sim_core::ScenarioError> {
    Ok(sim_core::Simulation::new(&s.clone().validate()?))
}

/// Relative error helper with a readable failure.
#[track_caller]
pub fn assert_close(what: &str, got: f64, want: f64, rel: f64) {
    let err = (got - want).abs() / want.abs();
    assert!(
        err <= rel,
        "{what}: got {got:.4}, expected {want:.4} (error {:.2} % > {:.2} %)",
        err * 100.0,
        rel * 100.0
    );
}

/// `k` within four standard deviations of a binomial's mean.
pub fn binomial(what: &str, k: u64, n: u64, p: f64) {
    let (mean, sd) = (n as f64 * p, (n as f64 * p * (1.0 - p)).sqrt());
    assert!(
        (k as f64 - mean).abs() <= 4.0 * sd + 1.0,
        "{what}: {k} of {n}, expected {mean:.0} ± {:.0}",
        4.0 * sd
    );
}
