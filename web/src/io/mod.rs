//! What a user brings and takes away: imported scenarios, profiles, traces
//! and measured runs; the address bar; downloads and CSV.

pub mod downloads;
pub mod export;
pub mod file_lines;
pub mod import;
pub mod measured_view;
pub mod trace_ref_view;
pub mod url_state;
