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
            tally(
                &mut out[i],
                &mut widths[i],
                m,
                simulated.iter().map(|p| p[i]),
            );
        }
    }
    for (metric, w) in out.iter_mut().zip(&widths) {
        metric.median_width = sim_core::ranges::quantile(w, 0.5).unwrap_or(0.0);
    }
    Ok(out)
}

/// Count one measured value `m` against the lowest and highest of its
/// range runs' `simulated` values: inside or not, and the range's width
/// relative to it.
fn tally(metric: &mut Metric, widths: &mut Vec<f64>, m: f64, simulated: impl Iterator<Item = f64>) {
    let (lo, hi) = simulated.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    metric.rows += 1;
    if lo <= m && m <= hi {
        metric.inside += 1;
    }
    widths.push((hi - lo) / m);
}

/// The coverage as a table: with the committed bands, and with each
/// experiment left out of its own band.
pub fn markdown(c: &Coverage, held_out: &Coverage) -> String {
    table(
        "metric",
        "experiment left out of its band",
        &METRICS,
        c,
        held_out,
    )
}

/// A coverage table: one row per name (in the metrics' order), the
/// committed bands' column and the held-out one headed `left_out`.
fn table(head: &str, left_out: &str, names: &[&str], c: &Coverage, held_out: &Coverage) -> String {
    let mut o = format!(
        "| {head} | rows inside their range | median width | {left_out} | median width |\n|---|---|---|---|---|\n"
    );
    let share = |m: &Metric| {
        format!(
            "{} of {} ({:.0} %)",
            m.inside,
            m.rows,
            100.0 * f64::from(m.inside) / f64::from(m.rows.max(1))
        )
    };
    for ((name, m), h) in names.iter().zip(c).zip(held_out) {
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

/// The InferenceX figures the public coverage checks, in [`public`]'s
/// order (its other two places stay empty).
const PUBLIC: [&str; 3] = ["TPOT mean", "TPOT median", "output tokens/s per GPU"];

/// How often InferenceX's closed-loop runs (never fitted) fall inside their
/// ranges: TPOT mean and median and output throughput per GPU, the figures a closed
/// loop measures without a server-load queue (its TTFT is mostly the
/// clients' own prompts queued behind each other). With the committed bands, and
/// with each row's band read from `compared` (every public row compared)
/// without the rows of its own benchmark run (`run_url`: a whole sweep of
/// one configuration's concurrencies).
pub fn public(
    rows: &[super::public::inferencex::Row],
    compared: &[Compared],
) -> Result<(Coverage, Coverage), String> {
    use super::public::inferencex;
    // The rows the comparison ran (a refused row says why there).
    let ran: Vec<(&inferencex::Row, sim_core::Scenario)> = rows
        .iter()
        .filter(|row| {
            compared.iter().any(|c| {
                c.source == super::public::Source::Inferencex && c.line == row.line && c.expressible
            })
        })
        .filter_map(|row| Some((row, inferencex::scenario(row, None).ok()?.1)))
        .collect();
    // Each benchmark run's held-out bands, read once for all its rows.
    let mut held_out: std::collections::BTreeMap<&str, Vec<sim_core::ranges::Band>> =
        std::collections::BTreeMap::new();
    for (row, _) in &ran {
        held_out.entry(row.run_url.as_str()).or_insert_with(|| {
            let others: Vec<Compared> = compared
                .iter()
                .filter(|c| c.keys.get("run_url").and_then(|v| v.as_str()) != Some(&row.run_url))
                .cloned()
                .collect();
            bands(&others)
        });
    }
    let ranged: Vec<(&inferencex::Row, [Vec<Report>; 2])> = ran
        .par_iter()
        .map(|(row, s)| {
            let run = |runs: &mut RangeRuns| -> Result<Vec<Report>, String> {
                sim_core::plan::drive(runs).map_err(|e| format!("line {}: {e}", row.line))?;
                Ok(runs.reports().cloned().collect())
            };
            let table = held_out
                .get(row.run_url.as_str())
                .cloned()
                .unwrap_or_default();
            let both = run(&mut RangeRuns::new(s))
                .and_then(|c| Ok([c, run(&mut RangeRuns::with_bands(s, table))?]));
            both.map(|b| (*row, b))
        })
        .collect::<Result<_, String>>()?;
    let mut out: [Coverage; 2] = Default::default();
    let mut widths: [[Vec<f64>; 4]; 2] = Default::default();
    for (row, runs) in &ranged {
        let gpus = f64::from(inferencex::gpus(row));
        let measured = [
            row.mean_tpot_ms,
            row.median_tpot_ms,
            row.output_tput_per_gpu,
        ];
        for (k, reports) in runs.iter().enumerate() {
            for (i, m) in measured.iter().enumerate() {
                let Some(m) = m.filter(|m| *m > 0.0) else {
                    continue;
                };
                let simulated = reports.iter().filter_map(|r| match i {
                    0 => r.overall.tpot.mean_ms,
                    1 => r.overall.tpot.p50_ms,
                    _ => Some(r.throughput.output_tokens_per_s / gpus),
                });
                tally(&mut out[k][i], &mut widths[k][i], m, simulated);
            }
        }
    }
    for (c, w) in out.iter_mut().zip(&widths) {
        for (metric, w) in c.iter_mut().zip(w) {
            metric.median_width = sim_core::ranges::quantile(w, 0.5).unwrap_or(0.0);
        }
    }
    Ok((out[0], out[1]))
}

/// [`public`] as a table.
pub fn public_markdown(c: &Coverage, held_out: &Coverage) -> String {
    table(
        "InferenceX metric",
        "run left out of its band",
        &PUBLIC,
        c,
        held_out,
    )
}

/// `tlab calibrate --coverage` with public files: every public row compared
/// (the bands' rows), then the InferenceX rows' coverage; the vLLM runs'
/// table after it when given.
pub fn public_command(
    files: &[(String, String)],
    vllm_files: &[(String, String)],
    opt: &super::Options,
) -> Result<String, String> {
    use super::public::{Source, inferencex};
    let compared = super::public::compare(files)?;
    let mut rows = Vec::new();
    for (name, text) in files {
        let text = sim_core::text::without_bom(text);
        if Source::of(text).map_err(|e| format!("{name}: {e}"))? == Source::Inferencex {
            rows.extend(inferencex::read(text).map_err(|e| format!("{name}: {e}"))?);
        }
    }
    if rows.is_empty() {
        return Err(
            "--coverage ranges InferenceX rows: give its file (the MLPerf rows only make bands)"
                .into(),
        );
    }
    let (c, h) = public(&rows, &compared.rows)?;
    let mut out = public_markdown(&c, &h);
    if !vllm_files.is_empty() {
        let vrows: Vec<Row> = super::public::vllm::read_all(vllm_files, opt.moe)?
            .into_iter()
            .map(|(_, r)| r)
            .collect();
        let vcompared = super::public::vllm::rows(vllm_files, opt)?;
        out += "\n";
        out += &markdown(&coverage(&vrows)?, &held_out(&vrows, &vcompared)?);
    }
    Ok(out)
}
