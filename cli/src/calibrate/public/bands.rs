//! The step-time error bands `sim_core::ranges` runs the ranges with, from
//! compared rows: per GPU × profile × model family, the 10th and 90th
//! percentiles of measured ÷ simulated step time.

use std::collections::BTreeMap;

use sim_core::ranges::{Band, PrefillBand, quantile};

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

/// Measured ÷ simulated time to first token of one row (its mean, where
/// both are known): the error of passes carrying a prompt, where the runs
/// were light enough for those passes to make the TTFT (the vLLM runs).
pub fn prefill_ratio(c: &Compared) -> Option<f64> {
    ["ttft_mean_ms", "mean_ttft_ms"]
        .into_iter()
        .find_map(|key| {
            let (m, s) = (*c.measured.get(key)?, *c.simulated.get(key)?);
            (m > 0.0 && s > 0.0 && m.is_finite() && s.is_finite()).then(|| m / s)
        })
}

/// One GPU × profile × family's rows, as they are read.
struct Group {
    band: Band,
    /// Step ratios.
    steps: Vec<f64>,
    sources: Vec<Source>,
    /// TTFT ratios.
    prefill: Vec<f64>,
    /// Where the rows ran.
    points: Vec<sim_core::ranges::Point>,
}

/// The bands of `rows`, one per GPU × profile × family with a step ratio,
/// in the catalogue's order of names (stable for the committed file).
pub fn bands(rows: &[Compared]) -> Vec<Band> {
    bands_of(rows, false)
}

/// The bands of `rows` compared with constants fitted without them (`tlab
/// calibrate --fit --leave-out GPU --bands`): the fitted profile's sources
/// say "held out of the fit".
pub fn held_out_bands(rows: &[Compared]) -> Vec<Band> {
    bands_of(rows, true)
}

fn bands_of(rows: &[Compared], held_out: bool) -> Vec<Band> {
    type Key = (&'static str, &'static str, bool);
    let mut groups: BTreeMap<Key, Group> = BTreeMap::new();
    for c in rows.iter().filter(|c| c.expressible) {
        let (Some((gpu, software, moe)), Some(r)) = (c.system, step_ratio(c)) else {
            continue;
        };
        let g = groups
            .entry((gpu.spec().name, software.name(), moe))
            .or_insert_with(|| Group {
                band: Band {
                    gpu,
                    software,
                    moe,
                    low: 1.0,
                    high: 1.0,
                    rows: 0,
                    source: String::new(),
                    prefill: None,
                    extent: None,
                },
                steps: Vec::new(),
                sources: Vec::new(),
                prefill: Vec::new(),
                points: Vec::new(),
            });
        g.steps.push(r);
        g.points.extend(c.point);
        // The public rows' TTFT is measured at the benchmarks' server loads,
        // where queueing makes most of it (ratios from 0.001 to 15): no
        // prompt passes' error can be read from them.
        if c.source == Source::Vllm {
            g.prefill.extend(prefill_ratio(c));
        }
        if !g.sources.contains(&c.source) {
            g.sources.push(c.source);
        }
    }
    groups
        .into_values()
        .map(|g| {
            let mut band = g.band;
            let (low, high) = prediction(&g.steps).unwrap_or((1.0, 1.0));
            band.low = round(low);
            band.high = round(high);
            band.rows = g.steps.len() as u32;
            band.prefill = prediction(&g.prefill).map(|(low, high)| PrefillBand {
                low: round(low),
                high: round(high),
                rows: g.prefill.len() as u32,
            });
            band.extent = sim_core::ranges::Extent::of(&g.points);
            // TensorRT-LLM 1.x and SGLang are fitted to the public files'
            // Offline and InferenceX rows (`fit`); the others never saw them.
            let fitted = super::fit::FITTED
                .iter()
                .any(|t| t.runs(band.software, &band.gpu));
            let names: Vec<&str> = g
                .sources
                .iter()
                .map(|s| match (s, fitted) {
                    (Source::Mlperf, true) if held_out => {
                        "MLPerf Inference v4.1–v6.0, held out of the fit"
                    }
                    (Source::Inferencex, true) if held_out => {
                        "InferenceX sweeps, held out of the fit"
                    }
                    (Source::Vllm, _) => "vLLM v0.15.1 runs, the fit's own",
                    (Source::Mlperf, false) => "MLPerf Inference v4.1–v6.0, never fitted",
                    (Source::Mlperf, true) => "MLPerf Inference v4.1–v6.0, the fit's own",
                    (Source::Inferencex, false) => "InferenceX sweeps, never fitted",
                    (Source::Inferencex, true) => "InferenceX sweeps, the fit's own",
                })
                .collect();
            band.source = format!("{} rows of {}", band.rows, names.join(" and "));
            band
        })
        .collect()
}

/// The 10th and 90th percentiles of `values` as a prediction interval: the
/// order statistics at positions 0.1 (n + 1) and 0.9 (n + 1) (from 1,
/// linearly between them, clamped to the sample; Hyndman and Fan's type 6),
/// between which one more draw from the same distribution falls 80 % of the
/// time. The sample's own percentiles (positions 1 + 0.1 (n − 1) and
/// 1 + 0.9 (n − 1)) hold a new draw less often: about 0.8 (n − 1) / (n + 1).
fn prediction(values: &[f64]) -> Option<(f64, f64)> {
    let n = values.iter().filter(|x| x.is_finite()).count() as f64;
    if n == 0.0 {
        return None;
    }
    // Type 6's position (from 0), as `quantile`'s share of the sample's
    // span (`quantile` reads position p (n − 1)).
    let at = |p: f64| {
        let share = ((p * (n + 1.0)).clamp(1.0, n) - 1.0) / (n - 1.0).max(1.0);
        quantile(values, share)
    };
    at(0.1).zip(at(0.9))
}

/// Four significant decimals: the committed file reads as the table it is.
fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

#[cfg(test)]
mod tests {
    use super::prediction;

    #[test]
    fn the_prediction_interval_reads_type_6_positions() {
        assert_eq!(prediction(&[]), None);
        assert_eq!(prediction(&[f64::NAN]), None);
        assert_eq!(prediction(&[2.0]), Some((2.0, 2.0)));
        // 19 values: positions 0.1 × 20 = 2 and 0.9 × 20 = 18 (from 1).
        let v: Vec<f64> = (1..=19).rev().map(f64::from).collect();
        assert_eq!(prediction(&v), Some((2.0, 18.0)));
        // 9 values: positions 1 and 9, the ends (the sample's own
        // percentiles would be 1.8 and 8.2).
        let v: Vec<f64> = (1..=9).map(f64::from).collect();
        assert_eq!(prediction(&v), Some((1.0, 9.0)));
        // Between order statistics, linearly: 14 values, 0.1 × 15 = 1.5.
        let v: Vec<f64> = (1..=14).map(f64::from).collect();
        assert_eq!(prediction(&v), Some((1.5, 13.5)));
    }
}
