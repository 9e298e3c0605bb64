//! The analyses behind `tlab` (sweeps, curves, plans), shared with its benchmarks.

pub mod analysis;
pub mod calibrate;
pub mod measured;
pub mod summary;
