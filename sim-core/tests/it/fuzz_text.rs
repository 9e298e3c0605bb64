//! Property-based fuzzing of the text a user types or pastes: routing
//! rules, `--set` expressions, scenario JSON and share links. Each case
//! ends one of two ways: a refusal that says where (the rule's character,
//! the parameter, the field), or an accepted input that runs as asked and
//! keeps every invariant of a report.
//!
//! `TLAB_FUZZ_CASES` sets the cases per surface (a thousand or more by
//! default); `cargo xtask fuzz` runs 100,000.

use super::fuzz::{Tally, invariants, runner};
use proptest::prelude::*;
use sim_core::{Scenario, presets};

// ------------------------------------------------------------- routing

fn rule_words() -> impl Strategy<Value = String> {
    let word = prop_oneof![
        Just("class"),
        Just("simple"),
        Just("hard"),
        Just("and"),
        Just("prompt"),
        Just("<"),
        Just(">"),
        Just("1000"),
        Just("30%"),
        Just("->"),
        Just("→"),
        Just("small"),
        Just("self-hosted"),
        Just("overflow"),
        Just("8"),
        Just("all"),
        Just("\"two words\""),
        Just("\""),
        Just(";"),
        Just("x%"),
        Just("-1"),
    ];
    proptest::collection::vec(word, 0..14).prop_map(|w| w.join(" "))
}

#[test]
fn routing_text_reads_back_as_written_or_is_refused_where_it_stops() {
    let mut base = presets::two_models();
    base.limits.max_events = 500_000;
    let tally = Tally::default();
    runner(3000)
        .run(&rule_words(), |text| {
            match sim_core::params::parse_routing(&text) {
                Err(e) => {
                    tally.refused();
                    prop_assert!(
                        e.starts_with("routing")
                            && (e.contains("character")
                                || e.contains("write CONDITIONS")
                                || e.contains("at most")),
                        "a refusal that does not say where: {e}"
                    )
                }
                Ok(rules) => {
                    tally.ran();
                    let again = sim_core::params::routing_text(&rules);
                    let back = sim_core::params::parse_routing(&again)
                        .map_err(|e| TestCaseError::fail(format!("{again}: {e}")))?;
                    prop_assert_eq!(&back, &rules, "{} reads back as {}", text, again);
                    let mut s = base.clone();
                    s.routing = rules;
                    if let Err(e) = s.check() {
                        prop_assert!(e.problems.iter().all(|p| p.contains("routing")), "{e}");
                    }
                }
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    tally.check("routing text", 0.01);
}

// ---------------------------------------------------------------- --set

/// A preset, a parameter name and a value: one time in three a value the
/// parameter takes (within its range, or one of its options for the
/// preset), else anything.
fn set_expression() -> impl Strategy<Value = (usize, String, String)> {
    let params: Vec<&'static sim_core::params::Param> = sim_core::params::all().collect();
    let n = params.len();
    let presets = presets::all().len();
    let any_value = prop_oneof![
        3 => (-10.0f64..10_000.0).prop_map(|v| format!("{v}")),
        2 => (0u32..2000).prop_map(|v| v.to_string()),
        1 => Just("NaN".to_owned()),
        1 => Just("1e300".to_owned()),
        1 => Just(String::new()),
        1 => Just("vllm".to_owned()),
        1 => Just("eagle".to_owned()),
        1 => Just("off".to_owned()),
        1 => Just("8 for 600, 24 for 600".to_owned()),
        1 => Just("class simple and class hard -> small".to_owned()),
    ];
    (
        0..presets,
        0..n + 3,
        any::<f64>(),
        any::<usize>(),
        0u8..3,
        any_value,
    )
        .prop_map(move |(p, i, unit, pick, mode, any)| {
            let Some(param) = params.get(i) else {
                let junk = ["nonsense", "replicas@nowhere", "share[x]"];
                return (p, junk[i - n].to_owned(), any);
            };
            let value = match (mode, param.kind) {
                (0, sim_core::params::Kind::Number(num)) => {
                    let x = num.min + (num.max - num.min) * unit.abs().fract();
                    let k = 10f64.powi(num.decimals as i32);
                    format!("{}", (x * k).round() / k)
                }
                (0, sim_core::params::Kind::Choice(c)) => {
                    let keys = (c.options)(&presets::all()[p].scenario, 0);
                    keys.get(pick % keys.len().max(1))
                        .map_or(any.clone(), |(k, _)| k.clone())
                }
                _ => any,
            };
            (p, param.path.to_owned(), value)
        })
}

#[test]
fn a_set_expression_is_refused_by_name_or_runs_as_asked() {
    let all = presets::all();
    let tally = Tally::default();
    runner(1500)
        .run(&set_expression(), |(p, name, value)| {
            let mut s = all[p].scenario.clone();
            match sim_core::params::apply(&mut s, &name, &value) {
                Err(e) => {
                    tally.refused();
                    prop_assert!(!e.is_empty());
                }
                Ok(()) => {
                    // The value asked for is the value run.
                    let param = sim_core::params::check_name(&name)
                        .map_err(|e| TestCaseError::fail(e.to_string()))?;
                    if let (sim_core::params::Kind::Number(n), Ok(asked)) =
                        (param.kind, value.trim().parse::<f64>())
                        && !name.contains(['@', '['])
                        && !param.per_class()
                        && let Some(got) = (n.get)(&s, 0)
                    {
                        prop_assert!(
                            (got - asked).abs() <= 1e-9 * asked.abs().max(1.0),
                            "--set {}={} runs as {}",
                            name,
                            value,
                            got
                        );
                    }
                    match s.validate() {
                        Err(e) => prop_assert!(e.problems.iter().all(|p| !p.is_empty()), "{e}"),
                        Ok(v) => {
                            let mut short = v.into_inner();
                            short.set_duration(short.duration_s.min(30.0));
                            short.limits.max_events = short.limits.max_events.min(300_000);
                            if let Ok(v) = short.validate() {
                                tally.ran();
                                invariants(&format!("--set {name}={value}"), &sim_core::run(&v));
                            }
                        }
                    }
                }
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    tally.check("--set", 0.05);
}

// ------------------------------------------------------ JSON and links

/// An edit of a text: a character deleted, one inserted, a span repeated.
fn mutation() -> impl Strategy<Value = (u8, usize, char)> {
    (
        0u8..3,
        any::<usize>(),
        prop_oneof![
            Just('"'),
            Just(','),
            Just('}'),
            Just('9'),
            Just('-'),
            Just('e'),
            Just(' '),
            Just('\u{feff}'),
            Just('x'),
        ],
    )
}

fn mutate(text: &str, edits: &[(u8, usize, char)]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for &(kind, at, c) in edits {
        if chars.is_empty() {
            break;
        }
        let i = at % chars.len();
        match kind {
            0 => {
                chars.remove(i);
            }
            1 => chars.insert(i, c),
            _ => {
                let end = (i + 8).min(chars.len());
                let span: Vec<char> = chars[i..end].to_vec();
                chars.splice(i..i, span);
            }
        }
    }
    chars.into_iter().collect()
}

#[test]
fn mutated_scenario_json_is_refused_by_field_or_runs() {
    let all = presets::all();
    let texts: Vec<String> = all
        .iter()
        .map(|p| serde_json::to_string(&p.scenario).expect("JSON"))
        .collect();
    let case = (0..texts.len(), proptest::collection::vec(mutation(), 1..4));
    let tally = Tally::default();
    runner(1500)
        .run(&case, |(p, edits)| {
            let text = mutate(&texts[p], &edits);
            match Scenario::from_json(&text) {
                Err(e) => {
                    tally.refused();
                    prop_assert!(e.problems.iter().all(|m| !m.is_empty()), "an empty refusal")
                }
                Ok(v) => {
                    tally.ran();
                    let mut short = v.into_inner();
                    short.set_duration(short.duration_s.min(30.0));
                    short.limits.max_events = short.limits.max_events.min(300_000);
                    if let Ok(v) = short.validate() {
                        invariants("mutated JSON", &sim_core::run(&v));
                    }
                }
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    tally.check("scenario JSON", 0.01);
}

#[test]
fn mutated_links_are_refused_with_a_message_or_open_valid() {
    let links: Vec<String> = presets::all()
        .iter()
        .map(|p| sim_core::link::encode(&p.scenario))
        .collect();
    let case = (0..links.len(), proptest::collection::vec(mutation(), 1..4));
    let tally = Tally::default();
    runner(1500)
        .run(&case, |(p, edits)| {
            let link = mutate(&links[p], &edits);
            match sim_core::link::decode(&link) {
                Err(e) => {
                    tally.refused();
                    prop_assert!(!e.to_string().is_empty())
                }
                Ok(v) => {
                    tally.ran();
                    // What opens is valid, and reads back as itself.
                    let again = sim_core::link::encode(&v);
                    let back = sim_core::link::decode(&again)
                        .map_err(|e| TestCaseError::fail(e.to_string()))?;
                    prop_assert_eq!(back.into_inner(), v.into_inner());
                }
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    tally.check("links", 0.0);
}
