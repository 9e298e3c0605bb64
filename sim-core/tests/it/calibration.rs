//! The timing model against published measurements (reference §4): every
//! throughput point within 15 %, every batch-1 TTFT within 20 %.

use sim_core::calibration::{MEASUREMENTS, markdown, table};
use sim_core::physics::Efficiency;

#[test]
fn every_published_measurement_is_within_its_target() {
    let rows = table(Efficiency::CALIBRATED).expect("every point simulates");
    // Shown with `cargo test -- --nocapture`, and kept in docs/calibration.md.
    println!("{}", markdown(&rows));
    let misses: Vec<String> = rows
        .iter()
        .filter(|r| r.error.abs() > r.measurement.tolerance())
        .map(|r| {
            format!(
                "{}: published {}, predicted {:.1} ({:+.1} %)",
                r.measurement.label(),
                r.measurement.published,
                r.predicted,
                r.error * 100.0
            )
        })
        .collect();
    assert!(misses.is_empty(), "outside target:\n{}", misses.join("\n"));
    assert_eq!(rows.len(), MEASUREMENTS.len());
}

#[test]
fn a_datasheet_roofline_alone_misses_the_measurements() {
    // Why calibration exists: BLIS-style defaults with no per-layer costs put
    // short-prompt TTFT far too low.
    let rows = table(Efficiency::ROOFLINE_DEFAULTS).expect("every point simulates");
    let worst = rows.iter().map(|r| r.error).fold(0.0, f64::min);
    assert!(
        worst < -0.35,
        "the uncalibrated roofline was only {:.0} % fast at worst",
        worst * 100.0
    );
}
