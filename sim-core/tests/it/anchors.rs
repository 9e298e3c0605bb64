//! Published serving figures for large models (`sim_core::anchors`): every
//! anchor within 25 %, or explained, and every explanation still needed.

use sim_core::anchors::{ANCHORS, TOLERANCE, markdown, table};

#[test]
fn every_anchor_is_within_tolerance_or_explained_and_no_explanation_is_stale() {
    let rows = table().expect("every anchor simulates");
    // Shown with `cargo test -- --nocapture`, and kept in docs/calibration.md.
    println!("{}", markdown(&rows));
    assert_eq!(rows.len(), ANCHORS.len());
    let mut wrong = Vec::new();
    for r in &rows {
        let off = r.error.abs() > TOLERANCE;
        match (off, r.anchor.explained.is_some()) {
            (true, false) => wrong.push(format!(
                "{}: {:+.0} % off with no explanation",
                r.anchor.label(),
                r.error * 100.0
            )),
            (false, true) => wrong.push(format!(
                "{}: now {:+.0} %, its explanation is stale",
                r.anchor.label(),
                r.error * 100.0
            )),
            _ => {}
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_dense_large_models_are_all_within_tolerance() {
    // The point of the anchors: 70B and 405B dense models on H100, H200 and
    // B200, which no calibration run covers, need no excuse.
    let rows = table().expect("every anchor simulates");
    let dense: Vec<_> = rows
        .iter()
        .filter(|r| r.anchor.model.dims().moe.is_none())
        .collect();
    assert!(dense.len() >= 5);
    for r in dense {
        assert!(
            r.error.abs() <= TOLERANCE,
            "{}: {:+.0} %",
            r.anchor.label(),
            r.error * 100.0
        );
    }
}
