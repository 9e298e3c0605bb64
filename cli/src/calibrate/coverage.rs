//! How often the measured runs fall inside their ranges
//! (`sim_core::ranges`): each experiment's range runs, and per metric the
//! rows whose measured value lies between the lowest and the highest the
//! runs give (`tlab calibrate --coverage`, `docs/ranges.md`): with the
//! committed bands, and with each experiment's band read without it.

use rayon::prelude::*;
use sim_core::Report;
use sim_core::ranges::RangeRuns;

use super::public::Compared;
use super::public::bands::bands;
use super::{METRICS, Row, predicted, scenario};

/// Per metric of [`METRICS`]: rows inside their range, rows compared, and
/// the median width of the ranges relative to the measured value.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Metric {
    /// Rows whose measured value lies inside its range.
    pub inside: u32,
    /// Rows compared.
    pub rows: u32,
    /// Median of (highest − lowest) ÷ measured over the rows.
    pub median_width: f64,
}

/// [`Metric`] for each of [`METRICS`].
pub type Coverage = [Metric; 4];

/// The coverage of `rows` with the committed bands (each experiment's
/// range runs in parallel; an experiment that cannot run is refused by
/// name).
pub fn coverage(rows: &[Row]) -> Result<Coverage, String> {
    coverage_with(rows, |_| None)
}

/// The coverage of `rows`, each experiment's ranges run with the bands read
/// from `compared` without that experiment's rows (leave one out): how
/// often a run the bands never saw falls inside its range.
pub fn held_out(rows: &[Row], compared: &[Compared]) -> Result<Coverage, String> {
    coverage_with(rows, |e| {
        let others: Vec<Compared> = compared
            .iter()
            .filter(|c| c.keys.get("experiment").and_then(|v| v.as_str()) != Some(e))
            .cloned()
            .collect();
        Some(bands(&others))
    })
}

fn coverage_with(
    rows: &[Row],
    table: impl Fn(&str) -> Option<Vec<sim_core::ranges::Band>> + Sync,
) -> Result<Coverage, String> {
    let mut experiments: Vec<&str> = rows.iter().map(|r| r.experiment.as_str()).collect();
    experiments.dedup();
    let runs: Vec<(&str, Vec<Report>)> = experiments
        .par_iter()
        .map(|e| {
            let row = rows.iter().find(|r| r.experiment == *e).ok_or("no row")?;
            let s = scenario(row).map_err(|why| format!("{e}: {why}"))?;
            let mut runs = match table(e) {
                Some(t) => RangeRuns::with_bands(&s, t),
                None => RangeRuns::new(&s),
            };
            sim_core::plan::drive(&mut runs).map_err(|why| format!("{e}: {why}"))?;
            Ok((*e, runs.reports().cloned().collect()))
        })
        .collect::<Result<_, String>>()?;
    let mut out: Coverage = [Metric::default(); 4];
    let mut widths: [Vec<f64>; 4] = Default::default();
    for row in rows {
        let Some((_, reports)) = runs.iter().find(|(e, _)| *e == row.experiment) else {
            continue;
        };
        let simulated: Vec<[f64; 4]> = reports
            .iter()
            .map(|r| predicted(r, row.stage_index))
            .collect();
        let measured = [
            row.ttft_mean_ms,
            row.per_token_mean_ms,
            row.e2e_mean_ms,
            row.e2e_p99_ms,
        ];
        for (i, m) in measured.into_iter().enumerate() {
            // A warm-up row's TTFT mean and end-to-end p99 are left out, as
            // the tables leave them out of the MAPE.
            if row.warm_up_outliers() && (i == 0 || i == 3) {
                continue;
            }
            let (lo, hi) = simulated
                .iter()
                .map(|p| p[i])
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(v), hi.max(v))
                });
            out[i].rows += 1;
            if lo <= m && m <= hi {
                out[i].inside += 1;
            }
            widths[i].push((hi - lo) / m);
        }
    }
    for (metric, w) in out.iter_mut().zip(&widths) {
        metric.median_width = sim_core::ranges::quantile(w, 0.5).unwrap_or(0.0);
    }
    Ok(out)
}

/// The coverage as a table: with the committed bands, and with each
/// experiment left out of its own band.
pub fn markdown(c: &Coverage, held_out: &Coverage) -> String {
    let mut o = String::from(
        "| metric | rows inside their range | median width | experiment left out of its band | median width |\n|---|---|---|---|---|\n",
    );
    let share = |m: &Metric| {
        format!(
            "{} of {} ({:.0} %)",
            m.inside,
            m.rows,
            100.0 * f64::from(m.inside) / f64::from(m.rows.max(1))
        )
    };
    for ((name, m), h) in METRICS.iter().zip(c).zip(held_out) {
        o += &format!(
            "| {name} | {} | {:.0} % | {} | {:.0} % |\n",
            share(m),
            100.0 * m.median_width,
            share(h),
            100.0 * h.median_width
        );
    }
    o
}
