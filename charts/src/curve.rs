//! Latency against achieved throughput, one line per batching policy (p50
//! solid, p99 dashed), the last load each policy kept up with circled.

use crate::model::{
    BLUE, Chart, GREEN, GREY, Line, ORANGE, Stroke, TimeUnit, log_fitted, zero_based,
};
use sim_core::sweep::Curve;

/// A policy's name as the page shows it.
pub fn policy_name(key: &str) -> &str {
    match key {
        "none" => "none (one at a time)",
        "static" => "static batches",
        "continuous" => "continuous",
        "chunked_prefill" => "continuous + chunked prefill",
        other => other,
    }
}

/// The chart's content: y on a log axis fitted to the data.
pub fn model(curves: &[Curve]) -> Chart {
    let palette = [GREY, ORANGE, GREEN, BLUE];
    let max_ms = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.3))
        .fold(0.0, f64::max);
    let unit = TimeUnit::for_max_ms(max_ms);
    let mut lines = Vec::new();
    for (i, c) in curves.iter().enumerate() {
        let colour = palette[i % palette.len()];
        let name = policy_name(&c.policy);
        let p50 = c.points.iter().map(|p| (p.1, p.2 / unit.ms())).collect();
        let p99: Vec<(f64, f64)> = c.points.iter().map(|p| (p.1, p.3 / unit.ms())).collect();
        let mut p99_line = Line::new(format!("{name} p99"), colour, Stroke::Dashed, p99);
        p99_line.circle = c
            .saturation
            .and_then(|i| c.points.get(i))
            .map(|p| (p.1, p.3 / unit.ms()));
        lines.push(Line::new(format!("{name} p50"), colour, Stroke::Solid, p50));
        lines.push(p99_line);
    }
    Chart::lines(
        "Latency vs throughput by batching policy",
        zero_based(
            "achieved output tokens/s",
            lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)),
        ),
        log_fitted(
            format!("end-to-end latency ({}, log)", unit.symbol()),
            lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)),
        ),
        lines,
    )
}
