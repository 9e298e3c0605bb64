//! Throughput Lab's simulation core: a deterministic discrete-event simulator of
//! LLM inference serving under load.
//!
//! Architecture invariants (see `ARCHITECTURE.md`): no I/O, no clock, no global
//! random state; simulated time is integer nanoseconds; the same scenario and
//! seed give bit-identical results natively and in WebAssembly.

#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]
#![warn(clippy::too_many_lines)]

pub mod anchors;
pub mod api;
pub mod calibration;
pub mod compare;
pub mod dist;
pub mod engine;
pub mod event;
pub mod format;
pub mod link;
pub mod metrics;
pub mod params;
pub mod physics;
pub mod plan;
pub mod presets;
pub mod ranges;
pub mod report;
pub mod rng;
pub mod scenario;
pub mod sweep;
pub mod text;
pub mod trace;
pub mod traces;

pub use engine::{Simulation, TraceFeed, run, run_timed, run_with_feed};

/// Validate a scenario, then run it: for callers that build scenarios
/// themselves (sweeps, searches, tests). Everything else runs a
/// [`ValidScenario`] with [`run`].
pub fn run_scenario(s: Scenario) -> Result<Report, ScenarioError> {
    Ok(run(&s.validate()?))
}
pub use report::{Report, Snapshot};
pub use scenario::{Scenario, ScenarioError, ValidScenario};
