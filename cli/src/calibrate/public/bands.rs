//! The step-time error bands `sim_core::ranges` runs the ranges with, from
//! compared rows: per GPU × profile × model family, the 10th and 90th
//! percentiles of measured ÷ simulated step time.

use std::collections::BTreeMap;

use sim_core::ranges::{Band, quantile};

use super::{Compared, Source};

/// Measured ÷ simulated step time of one row: its time per output token
/// where it has one, else its saturated throughput inverted (a pass twice
/// as long makes half the tokens). None for a row not expressed or with
/// neither figure.
pub fn step_ratio(c: &Compared) -> Option<f64> {
    let both = |key: &str| {
        let (m, s) = (*c.measured.get(key)?, *c.simulated.get(key)?);
        (m > 0.0 && s > 0.0 && m.is_finite() && s.is_finite()).then_some((m, s))
    };
    if let Some((m, s)) = ["per_token_mean_ms", "tpot_mean_ms", "mean_tpot_ms"]
        .into_iter()
        .find_map(both)
    {
        return Some(m / s);
    }
    ["tokens_per_s", "output_tput_per_gpu"]
        .into_iter()
        .find_map(both)
        .map(|(m, s)| s / m)
}

/// The bands of `rows`, one per GPU × profile × family with a step ratio,
/// in the catalogue's order of names (stable for the committed file).
pub fn bands(rows: &[Compared]) -> Vec<Band> {
    type Key = (&'static str, &'static str, bool);
    let mut groups: BTreeMap<Key, (Band, Vec<f64>, Vec<Source>)> = BTreeMap::new();
    for c in rows.iter().filter(|c| c.expressible) {
        let (Some((gpu, software, moe)), Some(r)) = (c.system, step_ratio(c)) else {
            continue;
        };
        let entry = groups
            .entry((gpu.spec().name, software.name(), moe))
            .or_insert_with(|| {
                let band = Band {
                    gpu,
                    software,
                    moe,
                    low: 1.0,
                    high: 1.0,
                    rows: 0,
                    source: String::new(),
                };
                (band, Vec::new(), Vec::new())
            });
        entry.1.push(r);
        if !entry.2.contains(&c.source) {
            entry.2.push(c.source);
        }
    }
    groups
        .into_values()
        .map(|(mut band, ratios, sources)| {
            band.low = round(quantile(&ratios, 0.1).unwrap_or(1.0));
            band.high = round(quantile(&ratios, 0.9).unwrap_or(1.0));
            band.rows = ratios.len() as u32;
            let names: Vec<&str> = sources
                .iter()
                .map(|s| match s {
                    Source::Vllm => "vLLM v0.15.1 runs, the fit's own",
                    Source::Mlperf => "MLPerf Inference v4.1–v6.0, never fitted",
                    Source::Inferencex => "InferenceX sweeps, never fitted",
                })
                .collect();
            band.source = format!("{} rows of {}", band.rows, names.join(" and "));
            band
        })
        .collect()
}

/// Four significant decimals: the committed file reads as the table it is.
fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}
