//! The public calibration's summary (MAPE per source, metric and group) and
//! its Markdown tables.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Compared, Source};

/// A mean absolute percentage error and the rows behind it.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Mape {
    /// Rows with both figures.
    pub rows: usize,
    /// Mean of |simulated / measured − 1|.
    pub mape: f64,
}

/// One GPU × engine × model group's errors.
#[derive(Clone, Debug, Serialize)]
pub struct Group {
    /// The GPU, as the file names it.
    pub gpu: String,
    /// The engine.
    pub engine: String,
    /// The model or benchmark.
    pub model: String,
    /// Rows of the group, expressed or not.
    pub rows: usize,
    /// Rows simulated.
    pub expressed: usize,
    /// MAPE per metric.
    pub mape: BTreeMap<&'static str, Mape>,
}

/// How MLPerf's Server and Interactive capacities came out.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct RateSummary {
    /// Rows with a rate ratio.
    pub rows: usize,
    /// Share with the highest rate within ±15 % of `target_qps`.
    pub within_15_percent: f64,
    /// Rows below 0.75 × `target_qps`.
    pub below_0_75: usize,
    /// The lowest ratio.
    pub min: f64,
    /// The median ratio.
    pub median: f64,
}

/// One source's summary.
#[derive(Clone, Debug, Serialize)]
pub struct SourceSummary {
    /// Rows read.
    pub rows: usize,
    /// Rows simulated.
    pub expressed: usize,
    /// Rows not expressed, by reason.
    pub not_expressed: BTreeMap<String, usize>,
    /// MAPE per metric over the rows simulated.
    pub mape: BTreeMap<&'static str, Mape>,
    /// Per GPU × engine × model.
    pub groups: Vec<Group>,
    /// MLPerf Server and Interactive rows' capacities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_ratio: Option<RateSummary>,
}

fn mape_of<'a>(rows: impl Iterator<Item = &'a Compared> + Clone) -> BTreeMap<&'static str, Mape> {
    let mut metrics: Vec<&'static str> = rows
        .clone()
        .flat_map(|c| c.measured.keys().copied())
        .collect();
    metrics.sort_unstable();
    metrics.dedup();
    metrics
        .into_iter()
        .map(|m| {
            let errors: Vec<f64> = rows.clone().filter_map(|c| c.error(m)).collect();
            let mape = errors.iter().map(|e| e.abs()).sum::<f64>() / errors.len().max(1) as f64;
            (
                m,
                Mape {
                    rows: errors.len(),
                    mape,
                },
            )
        })
        .collect()
}

fn rates(rows: &[&Compared]) -> Option<RateSummary> {
    let mut r: Vec<f64> = rows.iter().filter_map(|c| c.rate_ratio).collect();
    if r.is_empty() {
        return None;
    }
    r.sort_by(f64::total_cmp);
    let n = r.len();
    Some(RateSummary {
        rows: n,
        within_15_percent: r.iter().filter(|v| (**v - 1.0).abs() <= 0.15).count() as f64 / n as f64,
        below_0_75: r.iter().filter(|v| **v < 0.75).count(),
        min: r[0],
        median: r[n / 2],
    })
}

/// Per source: counts, reasons, MAPE per metric and per group.
pub fn summary(rows: &[Compared]) -> BTreeMap<&'static str, SourceSummary> {
    let mut out = BTreeMap::new();
    for source in [Source::Mlperf, Source::Inferencex, Source::Vllm] {
        let of: Vec<&Compared> = rows.iter().filter(|c| c.source == source).collect();
        if of.is_empty() {
            continue;
        }
        let mut not_expressed = BTreeMap::new();
        for c in of.iter().filter(|c| !c.expressible) {
            *not_expressed
                .entry(c.reason.clone().unwrap_or_default())
                .or_insert(0) += 1;
        }
        let mut keys: Vec<(&str, &str, &str)> = of
            .iter()
            .map(|c| (c.gpu.as_str(), c.engine.as_str(), c.model.as_str()))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let groups = keys
            .into_iter()
            .map(|(g, e, m)| {
                let members: Vec<&Compared> = of
                    .iter()
                    .copied()
                    .filter(|c| c.gpu == g && c.engine == e && c.model == m)
                    .collect();
                Group {
                    gpu: g.to_owned(),
                    engine: e.to_owned(),
                    model: m.to_owned(),
                    rows: members.len(),
                    expressed: members.iter().filter(|c| c.expressible).count(),
                    mape: mape_of(members.iter().copied().filter(|c| c.expressible)),
                }
            })
            .collect();
        out.insert(
            source.key(),
            SourceSummary {
                rows: of.len(),
                expressed: of.iter().filter(|c| c.expressible).count(),
                not_expressed,
                mape: mape_of(of.iter().copied().filter(|c| c.expressible)),
                groups,
                rate_ratio: rates(&of),
            },
        );
    }
    out
}

fn pct(m: Option<&Mape>) -> String {
    m.filter(|m| m.rows > 0).map_or("–".to_owned(), |m| {
        format!("{:.1} % ({})", m.mape * 100.0, m.rows)
    })
}

/// The calibration as Markdown: per source, the summary, the groups, the
/// reasons rows were not expressed, then every row simulated.
pub fn markdown(c: &super::Calibration) -> String {
    let mut o = String::new();
    // The vLLM runs have their own tables (`calibrate::markdown`).
    for source in [Source::Inferencex, Source::Mlperf] {
        let Some(s) = c.summary.get(source.key()) else {
            continue;
        };
        o += &format!(
            "## {}: {} rows, {} simulated\n\n",
            source.name(),
            s.rows,
            s.expressed
        );
        if let Some(r) = &s.rate_ratio {
            o += &format!(
                "Server and Interactive, highest rate within the p99 limits over target_qps: {} rows, {:.0} % within ±15 %, {} below 0.75×, median {:.2}, lowest {:.2}\n\n",
                r.rows,
                r.within_15_percent * 100.0,
                r.below_0_75,
                r.median,
                r.min
            );
        }
        let metrics: Vec<&'static str> = s.mape.keys().copied().collect();
        o += "| GPU | engine | model | rows | simulated |";
        for m in &metrics {
            o += &format!(" {m} |");
        }
        o += "\n|---|---|---|---:|---:|";
        o += &"---:|".repeat(metrics.len());
        o += "\n";
        o += &format!("| **all** | | | {} | {} |", s.rows, s.expressed);
        for m in &metrics {
            o += &format!(" {} |", pct(s.mape.get(m)));
        }
        o += "\n";
        for g in s.groups.iter().filter(|g| g.expressed > 0) {
            o += &format!(
                "| {} | {} | {} | {} | {} |",
                g.gpu, g.engine, g.model, g.rows, g.expressed
            );
            for m in &metrics {
                o += &format!(" {} |", pct(g.mape.get(m)));
            }
            o += "\n";
        }
        o += "\nNot expressed:\n\n";
        let mut reasons: Vec<(&String, &usize)> = s.not_expressed.iter().collect();
        reasons.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        for (why, n) in reasons {
            o += &format!("- {n} × {why}\n");
        }
        o += "\n| line | GPU | engine | model | layout | figure: measured → simulated (error) |\n|---:|---|---|---|---|---|\n";
        for r in c
            .rows
            .iter()
            .filter(|r| r.source == source && r.expressible)
        {
            let figures: Vec<String> = r
                .measured
                .iter()
                .filter_map(|(k, m)| {
                    let s = r.simulated.get(k)?;
                    Some(format!(
                        "{k} {m:.4} → {s:.4} ({:+.0} %)",
                        (s / m - 1.0) * 100.0
                    ))
                })
                .chain(r.rate_ratio.map(|v| format!("rate ratio {v:.2}")))
                .collect();
            o += &format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                r.line,
                r.gpu,
                r.engine,
                r.model,
                r.layout.as_deref().unwrap_or(""),
                figures.join("; ")
            );
        }
        o += "\n";
    }
    o
}
