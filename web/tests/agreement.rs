//! One number, one value: on every preset, each summary card shows the same
//! number as the summary CSV and the CLI's summary (all three read sim-core's
//! definitions and formatters; this test keeps them from drifting apart).
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;
use web::io::export::summary_csv;
use web::results::cards::{Unit, cards};

/// The CSV as (scope, metric) → value.
fn csv_values(csv: &str) -> BTreeMap<(String, String), String> {
    csv.lines()
        .skip(1)
        .filter_map(|l| {
            // Scope may be quoted; metric, value and unit never contain commas.
            let mut parts = l.rsplitn(4, ',');
            let _unit = parts.next()?;
            let value = parts.next()?;
            let metric = parts.next()?;
            let scope = parts.next()?;
            Some(((scope.to_owned(), metric.to_owned()), value.to_owned()))
        })
        .collect()
}

/// The CSV row that holds a card's number, and how the card scales it.
fn csv_of(card: &str) -> Option<(&'static str, &'static str, f64)> {
    Some(match card {
        "ttft-p50" => ("overall", "ttft_p50", 1.0),
        "ttft-p99" => ("overall", "ttft_p99", 1.0),
        "visible-p50" => ("overall", "first_visible_p50", 1.0),
        "thinking-p50" => ("overall", "thinking_p50", 1.0),
        "tpot-p50" => ("overall", "tpot_p50", 1.0),
        "tpot-p99" => ("overall", "tpot_p99", 1.0),
        "e2e-p50" => ("overall", "e2e_p50", 1.0),
        "e2e-p99" => ("overall", "e2e_p99", 1.0),
        "task-p50" => ("overall", "task_p50", 1.0),
        "task-p99" => ("overall", "task_p99", 1.0),
        "throughput" => ("all", "output_tokens_per_s", 1.0),
        "goodput" => ("all", "goodput_fraction", 100.0),
        "usd-per-mtok" => ("all", "usd_per_mtok_output", 1.0),
        "usd-per-month" => ("all", "usd_per_month", 1.0),
        "usd-per-request" => ("all", "usd_per_request", 1.0),
        "usd-per-year" => ("all", "usd_per_month", 12.0),
        "throttled" => ("api", "throttled_429", 1.0),
        "cache-saving" => ("api", "usd_saved_by_cache", 1.0),
        "cache-hits" => ("api", "cache_hit_rate", 100.0),
        "failed" => ("all", "error_fraction", 100.0),
        "energy" => ("all", "joules_per_output_token", 1.0),
        _ => return None,
    })
}

#[test]
fn cards_the_cli_summary_and_the_summary_csv_agree_on_every_preset() {
    // Every preset, and one whose provider caches its prompts.
    let mut cached = sim_core::presets::launch_spike();
    for (name, v) in [
        ("shared_prompt.tokens[short email]", "3000"),
        ("api.prompt_cache", "explicit_5m"),
    ] {
        sim_core::params::apply(&mut cached, name, v).expect("an edit");
    }
    let mut all = sim_core::presets::all();
    all.push(sim_core::presets::Preset {
        id: "launch-spike with a prompt cache",
        scenario: cached,
        ..all[1].clone()
    });
    for p in all {
        let s = p.scenario.clone().validate().expect("a valid preset");
        let r = sim_core::run(&s);
        let csv = csv_values(&summary_csv(&r));
        let cli = tlab::summary::summary(&s, &r);
        let overall = r.overall.name.clone();
        let mut checked = 0;
        for card in cards() {
            let Some((text, value)) = (card.value)(&r) else {
                continue;
            };
            if card.id == "user-speed" {
                // 1 ÷ the CSV's median TPOT.
                let tpot: f64 = csv[&(overall.clone(), "tpot_p50".into())]
                    .parse()
                    .expect("a number");
                assert_eq!(value, 1000.0 / tpot, "{}: user speed", p.id);
                continue;
            }
            let (scope, metric, scale) =
                csv_of(card.id).unwrap_or_else(|| panic!("card {} has no CSV row", card.id));
            let scope = if scope == "overall" {
                overall.as_str()
            } else {
                scope
            };
            let raw = csv
                .get(&(scope.to_owned(), metric.to_owned()))
                .unwrap_or_else(|| panic!("{}: no CSV row {scope},{metric}", p.id));
            let csv_value: f64 = raw.parse().expect("a number");
            assert_eq!(
                value,
                csv_value * scale,
                "{}: card {} vs CSV {metric}",
                p.id,
                card.id
            );
            // The CLI prints the same number the same way.
            let printed = match card.unit() {
                Unit::Ms | Unit::Usd => text.clone(),
                Unit::TokS => format!("{} output tok/s", sim_core::format::rounded(value)),
                Unit::Percent if card.id == "goodput" => format!("{value:.1} % of requests"),
                Unit::Percent if card.id == "cache-hits" => format!("{text} of requests hit it"),
                Unit::Percent => format!("{text} failed, refused or timed out"),
                Unit::Count => format!("{text} × 429"),
                Unit::Joules => format!("{text} per output token"),
            };
            if card.id != "usd-per-year" && card.id != "usd-per-request" {
                assert!(
                    cli.contains(&printed),
                    "{}: card {} shows {printed:?}, the CLI summary does not:\n{cli}",
                    p.id,
                    card.id
                );
            }
            checked += 1;
        }
        assert!(checked >= 10, "{}: {checked} cards checked", p.id);
    }
}
