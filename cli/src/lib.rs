//! The analyses behind `tlab` (sweeps, curves, plans), shared with its benchmarks.

pub mod analysis;
pub mod calibrate;
pub mod measured;
pub mod measured_fit;
pub mod profile_file;
pub mod summary;
