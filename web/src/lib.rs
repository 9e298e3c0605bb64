//! Throughput Lab's browser front end: Leptos components over `sim-core`.
//!
//! Components only render and wire events; the simulation runs in `sim-core`,
//! and chart drawing is generic over the plotters backend (see [`charts`]).

pub mod app;
pub mod charts;
pub mod controls;
pub mod runner;

pub use app::App;
