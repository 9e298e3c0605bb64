//! Old links keep their numbers: scenarios, share links and reports written
//! before serving-software profiles existed (`tests/golden/2026-11-30`, by
//! `cargo run -p sim-core --example golden -- --fixtures DIR`). A scenario that
//! names no profile means those constants; every field of the old report must
//! come out bit for bit (new fields may be added around them).

use serde_json::Value;
use sim_core::Scenario;
use std::path::Path;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/2026-11-30");

/// Paths where `new` differs from `old` (fields only `new` has are fine).
fn differences(old: &Value, new: &Value, at: &str, out: &mut Vec<String>) {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                match b.get(k) {
                    Some(w) => differences(v, w, &format!("{at}.{k}"), out),
                    None => out.push(format!("{at}.{k} is gone")),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (v, w)) in a.iter().zip(b).enumerate() {
                differences(v, w, &format!("{at}[{i}]"), out);
            }
        }
        _ if old == new => {}
        _ => out.push(format!("{at}: {old} then, {new} now")),
    }
}

#[test]
fn old_scenarios_and_links_reproduce_their_reports_bit_for_bit() {
    let mut names: Vec<String> = std::fs::read_dir(DIR)
        .expect("golden fixtures")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".scenario.json").map(str::to_owned)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 10, "{} fixtures", names.len());
    for name in names {
        let read = |ext: &str| {
            std::fs::read_to_string(Path::new(DIR).join(format!("{name}.{ext}")))
                .expect("fixture file")
        };
        let scenario = Scenario::from_json(&read("scenario.json")).expect("an old scenario opens");
        let from_link = sim_core::link::decode(read("link").trim()).expect("an old link opens");
        assert_eq!(from_link, scenario, "{name}: link and file agree");
        let old: Value = serde_json::from_str(&read("report.json")).expect("report");
        let new = serde_json::to_value(sim_core::run(&scenario)).expect("serialises");
        let mut diffs = Vec::new();
        differences(&old, &new, "", &mut diffs);
        assert!(
            diffs.is_empty(),
            "{name}: {} differences, e.g. {:?}",
            diffs.len(),
            &diffs[..diffs.len().min(5)]
        );
    }
}

#[test]
fn an_old_link_says_it_predates_profiles_and_a_new_one_does_not() {
    let old = std::fs::read_to_string(Path::new(DIR).join("chatbot-h100.link")).expect("link");
    let d = sim_core::link::decode_detail(old.trim()).expect("opens");
    assert!(d.before_profiles);
    assert_eq!(
        d.scenario.serving.software,
        sim_core::physics::ServingSoftware::TensorrtLlm
    );
    let new = sim_core::link::encode(&sim_core::presets::chatbot_h100());
    assert!(
        !sim_core::link::decode_detail(&new)
            .expect("opens")
            .before_profiles
    );
}
