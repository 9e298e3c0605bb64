//! Print the large-model anchors table for `docs/calibration.md`: published
//! serving figures against the simulator's.
//!
//! `cargo run --release -p sim-core --example anchors`

fn main() {
    match sim_core::anchors::table() {
        Ok(rows) => print!("{}", sim_core::anchors::markdown(&rows)),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
