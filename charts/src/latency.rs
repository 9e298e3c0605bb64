//! TTFT and end-to-end latency (p50, p99) per window, with the TTFT target;
//! for reasoning models also the first visible token, the gap to TTFT being
//! the thinking.

use crate::model::{
    BLUE, Chart, GREEN, Line, Mark, ORANGE, PURPLE, RED, Stroke, TimeUnit, series_opt, span,
    zero_based,
};
use sim_core::Report;

/// The chart's content. Latencies read in ms, s or min as their size needs.
pub fn model(r: &Report, pinned: Option<&Report>) -> Chart {
    let s = &r.series;
    let mut raw = vec![
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
        (
            "end-to-end p50",
            BLUE,
            Stroke::Solid,
            series_opt(&s.t_s, &s.e2e_p50_ms),
        ),
        (
            "end-to-end p99",
            BLUE,
            Stroke::Dashed,
            series_opt(&s.t_s, &s.e2e_p99_ms),
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
            "end-to-end p99 (A)",
            ORANGE,
            Stroke::Dashed,
            series_opt(&p.series.t_s, &p.series.e2e_p99_ms),
        ));
    }
    let max_ms = raw
        .iter()
        .flat_map(|l| l.3.iter().map(|p| p.1))
        .fold(r.slo.ttft_ms, f64::max);
    let unit = TimeUnit::for_max_ms(max_ms);
    let lines: Vec<Line> = raw
        .into_iter()
        .map(|(label, colour, stroke, pts)| {
            let pts = pts.into_iter().map(|(t, v)| (t, v / unit.ms())).collect();
            Line::new(label, colour, stroke, pts)
        })
        .collect();
    let target = r.slo.ttft_ms / unit.ms();
    let mut chart = Chart::lines(
        "Latency over time",
        span(
            "simulated time (s)",
            lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)),
        ),
        zero_based(
            format!("latency ({})", unit.symbol()),
            lines
                .iter()
                .flat_map(|l| l.points.iter().map(|p| p.1))
                .chain([target]),
        ),
        lines,
    );
    chart.marks.push(Mark::Horizontal {
        y: target,
        label: format!(
            "TTFT target {}",
            crate::model::short(target) + " " + unit.symbol()
        ),
        colour: RED,
    });
    chart
}
