//! A change that means to move no number moves none: every preset's report,
//! and every step of its story, hashes to the value recorded in
//! `tests/golden/preset-reports.txt` (the first 96 bits of the SHA-256 of
//! the report's JSON). A change that does move numbers re-records
//! them with `TLAB_BLESS=1 cargo test -p sim-core --test it preset_reports`
//! and says in CHANGELOG.md what moved.

use sha2::{Digest, Sha256};
use sim_core::presets::story::scenario_at;
use std::fmt::Write as _;

const FILE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/golden/preset-reports.txt"
);

/// The first 96 bits of the SHA-256 of `s`'s report as JSON, in hex.
fn digest(s: sim_core::Scenario) -> String {
    let report = sim_core::run_scenario(s).expect("a valid scenario");
    let json = serde_json::to_string(&report).expect("a report serialises");
    // The page's run worker sends its report as this JSON: it must read
    // back to the very same report.
    let back: sim_core::Report = serde_json::from_str(&json).expect("a report reads back");
    assert!(back == report, "a report changed on its way through JSON");
    Sha256::digest(json.as_bytes())[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `preset step hash` for every preset and story step, in the catalogue's order.
fn digests() -> String {
    let mut out = String::new();
    for p in sim_core::presets::all() {
        for k in 0..p.steps.len() {
            let s = scenario_at(&p.scenario, p.steps, k).expect("the story's edits apply");
            writeln!(out, "{} {} {}", p.id, k + 1, digest(s)).expect("a string takes writes");
        }
    }
    // Features no story step reaches as hard: speculation under KV
    // pressure (preemptions) and near capacity, an autoscaled pool.
    let variants: [(&str, &[(&str, &str)]); 3] = [
        (
            "eagle-long-answers",
            &[
                ("arrival.rate", "12"),
                ("speculative", "eagle"),
                ("output_tokens", "4000"),
            ],
        ),
        (
            "eagle-at-45",
            &[("arrival.rate", "45"), ("speculative", "eagle")],
        ),
        (
            "autoscaled",
            &[
                ("arrival.rate", "30"),
                ("autoscale", "queue_per_replica"),
                ("autoscale.max", "4"),
            ],
        ),
    ];
    for (name, edits) in variants {
        let mut s = sim_core::presets::chatbot_h100();
        for (k, v) in edits {
            sim_core::params::apply(&mut s, k, v).expect("a catalogue edit");
        }
        writeln!(out, "chatbot-h100 {name} {}", digest(s)).expect("a string takes writes");
    }
    out
}

#[test]
fn every_preset_and_story_step_reports_the_numbers_recorded() {
    let now = digests();
    if std::env::var_os("TLAB_BLESS").is_some() {
        std::fs::write(FILE, &now).expect("the golden file is writable");
        return;
    }
    let then = std::fs::read_to_string(FILE).expect("tests/golden/preset-reports.txt");
    let moved: Vec<&str> = now
        .lines()
        .zip(then.lines())
        .filter(|(a, b)| a != b)
        .map(|(a, _)| a)
        .collect();
    assert!(
        moved.is_empty() && now.lines().count() == then.lines().count(),
        "{} of {} reports moved (first: {:?}); if meant, re-record with TLAB_BLESS=1 and say what moved in CHANGELOG.md",
        moved.len(),
        now.lines().count(),
        moved.first()
    );
}
