//! Time to first token (p50, p99) per window, with the TTFT target; for
//! reasoning models also the first visible token, the gap to TTFT being the
//! thinking. End-to-end latency has its own chart ([`crate::e2e`]), so
//! seconds of generation never flatten the TTFT this chart is about.

use crate::model::{
    Chart, GREEN, Line, Mark, ORANGE, PURPLE, RED, Stroke, TimeUnit, series_opt, span, zero_based,
};
use sim_core::Report;

/// A latency line before scaling: label, colour, stroke, points in ms.
pub(crate) type Raw = (
    &'static str,
    plotters::style::RGBColor,
    Stroke,
    Vec<(f64, f64)>,
);

/// Lines in ms scaled to the unit their largest value (and `floor_ms`) needs.
pub(crate) fn scaled(raw: Vec<Raw>, floor_ms: f64) -> (TimeUnit, Vec<Line>) {
    let max_ms = raw
        .iter()
        .flat_map(|l| l.3.iter().map(|p| p.1))
        .fold(floor_ms, f64::max);
    let unit = TimeUnit::for_max_ms(max_ms);
    let lines = raw
        .into_iter()
        .map(|(label, colour, stroke, pts)| {
            let pts = pts.into_iter().map(|(t, v)| (t, v / unit.ms())).collect();
            Line::new(label, colour, stroke, pts)
        })
        .collect();
    (unit, lines)
}

/// A latency chart over time from scaled lines (the y axis includes `extra`).
pub(crate) fn over_time(title: &str, unit: TimeUnit, lines: Vec<Line>, extra: f64) -> Chart {
    Chart::lines(
        title,
        span(
            "simulated time (s)",
            lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)),
        ),
        zero_based(
            format!("latency ({})", unit.symbol()),
            lines
                .iter()
                .flat_map(|l| l.points.iter().map(|p| p.1))
                .chain([extra]),
        ),
        lines,
    )
}

/// The chart's content. Latencies read in ms, s or min as their size needs.
pub fn model(r: &Report, pinned: Option<&Report>) -> Chart {
    let s = &r.series;
    let mut raw: Vec<Raw> = vec![
        (
            "TTFT p50",
            GREEN,
            Stroke::Solid,
            series_opt(&s.t_s, &s.ttft_p50_ms),
        ),
        (
            "TTFT p99",
            GREEN,
            Stroke::Dashed,
            series_opt(&s.t_s, &s.ttft_p99_ms),
        ),
    ];
    if !s.first_visible_p50_ms.is_empty() {
        // Between TTFT (the first hidden token) and these lines: the thinking.
        raw.push((
            "first visible token p50",
            PURPLE,
            Stroke::Solid,
            series_opt(&s.t_s, &s.first_visible_p50_ms),
        ));
        raw.push((
            "first visible token p99",
            PURPLE,
            Stroke::Dashed,
            series_opt(&s.t_s, &s.first_visible_p99_ms),
        ));
    }
    if let Some(p) = pinned {
        raw.push((
            "TTFT p99 (A)",
            ORANGE,
            Stroke::Dashed,
            series_opt(&p.series.t_s, &p.series.ttft_p99_ms),
        ));
    }
    let (unit, lines) = scaled(raw, r.slo.ttft_ms);
    let target = r.slo.ttft_ms / unit.ms();
    let mut chart = over_time("Time to first token over time", unit, lines, target);
    chart.marks.push(Mark::Horizontal {
        y: target,
        label: format!(
            "TTFT target {}",
            sim_core::format::duration_ms(Some(r.slo.ttft_ms))
        ),
        colour: RED,
    });
    chart
}
