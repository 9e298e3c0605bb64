//! The latency distribution as a cumulative curve, with the TTFT target (and
//! a measured run's, when one was imported).

use crate::model::{
    Axis, BLUE, Chart, Corner, GREEN, Line, Mark, ORANGE, RED, Scale, Stroke, TimeUnit,
};
use sim_core::Report;
use sim_core::traces::measured::Measured;

/// The chart's content: x is latency, y the share of requests faster.
pub fn model(r: &Report, pinned: Option<&Report>) -> Chart {
    with_measured(r, pinned, None)
}

/// The same, with a measured run's TTFT and end-to-end drawn dashed over the
/// simulated curves (at the report's quantile levels): how far the replay is
/// from what the user measured.
pub fn with_measured(r: &Report, pinned: Option<&Report>, measured: Option<&Measured>) -> Chart {
    let d = &r.distribution;
    let measured = measured.map(|m| m.at_quantiles(&d.quantiles));
    let max_ms = d
        .e2e_ms
        .iter()
        .chain(&d.ttft_ms)
        .chain(pinned.iter().flat_map(|p| p.distribution.e2e_ms.iter()))
        .chain(measured.iter().flatten().flatten())
        .copied()
        .filter(|v| v.is_finite())
        .fold(r.slo.ttft_ms, f64::max);
    let unit = TimeUnit::for_max_ms(max_ms);
    let cdf = |v: &[f64], q: &[f64]| -> Vec<(f64, f64)> {
        v.iter()
            .map(|v| v / unit.ms())
            .zip(q.iter().map(|q| q * 100.0))
            .collect()
    };
    let mut lines = vec![
        Line::new("TTFT", GREEN, Stroke::Solid, cdf(&d.ttft_ms, &d.quantiles)),
        Line::new(
            "end-to-end",
            BLUE,
            Stroke::Solid,
            cdf(&d.e2e_ms, &d.quantiles),
        ),
    ];
    if let Some([ttft, e2e]) = &measured {
        lines.push(Line::new(
            "TTFT measured",
            GREEN,
            Stroke::Dashed,
            cdf(ttft, &d.quantiles),
        ));
        lines.push(Line::new(
            "end-to-end measured",
            BLUE,
            Stroke::Dashed,
            cdf(e2e, &d.quantiles),
        ));
    }
    if let Some(p) = pinned {
        lines.push(Line::new(
            "end-to-end (A)",
            ORANGE,
            Stroke::Dashed,
            cdf(&p.distribution.e2e_ms, &p.distribution.quantiles),
        ));
    }
    let mut chart = Chart::lines(
        "Latency distribution (share of requests faster than x)",
        Axis {
            label: format!("latency ({})", unit.symbol()),
            min: 0.0,
            max: (max_ms / unit.ms() * 1.05).max(1e-3),
            scale: Scale::Linear,
        },
        Axis {
            label: "% of requests".into(),
            min: 0.0,
            max: 100.0,
            scale: Scale::Linear,
        },
        lines,
    );
    chart.legend = Corner::LowerRight;
    let target = r.slo.ttft_ms / unit.ms();
    chart.marks.push(Mark::Vertical {
        x: target,
        label: format!(
            "TTFT target {}",
            sim_core::format::duration_ms(Some(r.slo.ttft_ms))
        ),
        colour: RED,
    });
    chart
}
