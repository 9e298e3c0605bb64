//! Throughput Lab's browser front end: Leptos components over `sim-core`.
//!
//! Components only render and wire events; the simulation runs in `sim-core`,
//! and charts come from `lab-charts`, generic over the plotters backend.

pub mod app;
pub mod charts;
pub mod controls;
pub mod format;
pub mod io;
pub mod plan;
pub mod results;
pub mod table;
pub mod work;

pub use app::App;

use wasm_bindgen::prelude::wasm_bindgen;

/// The full report of a scenario, as JSON: what the page computes, exposed so a
/// test can compare it byte for byte with the native CLI's output.
#[wasm_bindgen]
pub fn report_json(scenario_json: &str) -> Result<String, String> {
    let s = sim_core::Scenario::from_json(scenario_json).map_err(|e| e.to_string())?;
    let r = sim_core::run(&s);
    serde_json::to_string(&r).map_err(|e| e.to_string())
}

/// A scenario's summary CSV (the page's "Summary CSV" export) from a run
/// here, in one go: a test compares it with the export of the run on screen,
/// which the run worker computed.
#[wasm_bindgen]
pub fn summary_csv(scenario_json: &str) -> Result<String, String> {
    let s = sim_core::Scenario::from_json(scenario_json).map_err(|e| e.to_string())?;
    Ok(io::export::summary_csv(&sim_core::run(&s)))
}

/// A scenario's ranges (`sim_core::ranges::ranges`: the range runs, the
/// fleet's included) as JSON: the `ranges` of `tlab run --ranges --json`,
/// exposed so a test can compare them byte for byte.
#[wasm_bindgen]
pub fn ranges_json(scenario_json: &str) -> Result<String, String> {
    let s = sim_core::Scenario::from_json(scenario_json).map_err(|e| e.to_string())?;
    let (_, r) = sim_core::ranges::ranges(&s).map_err(|e| e.to_string())?;
    serde_json::to_string(&r).map_err(|e| e.to_string())
}

/// Run a scenario `runs` times and return each run's wall time in ms (the
/// browser benchmark's probe).
#[wasm_bindgen]
pub fn bench_run_ms(scenario_json: &str, runs: u32) -> Result<Vec<f64>, String> {
    let s = sim_core::Scenario::from_json(scenario_json).map_err(|e| e.to_string())?;
    let now = || {
        web_sys::window()
            .and_then(|w| w.performance())
            .map_or(0.0, |p| p.now())
    };
    Ok((0..runs.min(1000))
        .map(|_| {
            let t0 = now();
            let r = sim_core::run(&s);
            std::hint::black_box(r.requests.completed);
            now() - t0
        })
        .collect())
}

/// Plan the scenario with the default search space and the page's work
/// budget, serially, and return the plan as JSON (the browser benchmark's
/// probe for the planner, and the browser test's check of the workers).
#[wasm_bindgen]
pub fn plan_json(scenario_json: &str) -> Result<String, String> {
    let s = sim_core::Scenario::from_json(scenario_json).map_err(|e| e.to_string())?;
    let space = sim_core::plan::Space {
        budget_events: sim_core::plan::budget::PAGE_PLAN_EVENTS,
        ..sim_core::plan::Space::default()
    };
    let slo = plan::panel::targets(&s);
    // The question the page's planner asks (within its work budget).
    let q = sim_core::plan::budget::question(&s, slo, &space);
    let p = sim_core::plan::plan(&q.scenario, slo, &space);
    serde_json::to_string(&p).map_err(|e| e.to_string())
}

/// How many scenarios the page has submitted to its runner, and the number
/// of the one whose numbers are on screen (the browser benchmark's probe of
/// how closely the page follows a slider).
#[wasm_bindgen]
pub fn run_progress() -> Vec<f64> {
    vec![
        work::runner::submitted() as f64,
        work::runner::shown() as f64,
    ]
}

/// Whether the page's run worker, which long runs' full runs go to, is up
/// (for tests and the browser benchmark).
#[wasm_bindgen]
pub fn run_worker_up() -> bool {
    work::remote::worker_up()
}

/// The default scenario as JSON (for the benchmark and tests).
#[wasm_bindgen]
pub fn default_scenario_json() -> String {
    serde_json::to_string(&sim_core::presets::chatbot_h100()).unwrap_or_default()
}
