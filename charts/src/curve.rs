//! Latency against achieved throughput, one line per batching policy (p50
//! solid, p99 dashed), the last load each policy kept up with circled (the
//! legend says so), the run on screen marked where its throughput is, and
//! the throughputs between which the fleet tips over within the model's
//! error shaded (`sim_core::ranges::tipping_loads`).

use crate::model::{
    BLUE, Chart, Corner, GREEN, GREY, Line, Mark, ORANGE, PURPLE, RED, Stroke, log_ms, zero_based,
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

/// The chart's content: y on a log axis of durations fitted to the data
/// (ticks read 30 ms, 3 s, 5 min); x from 0 to past the largest throughput,
/// today's load (`current`, output tokens/s of the scenario's own policy at
/// today's rate) included and marked, and the tipping band (`tipping`,
/// output tokens/s from the band's slow end to its fast end) shaded.
pub fn model(curves: &[Curve], current: Option<f64>, tipping: Option<(f64, f64)>) -> Chart {
    let palette = [GREY, ORANGE, GREEN, BLUE];
    let mut lines = Vec::new();
    for (i, c) in curves.iter().enumerate() {
        let colour = palette[i % palette.len()];
        let name = policy_name(&c.policy);
        let p50 = c.points.iter().map(|p| (p.1, p.2)).collect();
        let p99: Vec<(f64, f64)> = c.points.iter().map(|p| (p.1, p.3)).collect();
        let mut p99_line = Line::new(format!("{name} p99"), colour, Stroke::Dashed, p99);
        p99_line.circle = c
            .saturation
            .and_then(|i| c.points.get(i))
            .map(|p| (p.1, p.3));
        lines.push(Line::new(format!("{name} p50"), colour, Stroke::Solid, p50));
        lines.push(p99_line);
    }
    let y = log_ms(
        "end-to-end latency",
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)),
    );
    let current = current.filter(|c| c.is_finite() && *c > 0.0);
    let tipping = tipping.filter(|(a, b)| a.is_finite() && b.is_finite() && 0.0 < *a && a < b);
    let mut chart = Chart::lines(
        "Latency vs throughput by batching policy",
        zero_based(
            "achieved output tokens/s",
            lines
                .iter()
                .flat_map(|l| l.points.iter().map(|p| p.0))
                .chain(current)
                .chain(tipping.map(|t| t.1)),
        ),
        y,
        lines,
    );
    // Latency rises with throughput: high throughput at low latency, the
    // lower right, is where no policy reaches, so the legend covers none.
    chart.legend = Corner::LowerRight;
    if chart.lines.iter().any(|l| l.circle.is_some()) {
        chart.circle_note = Some("○ the highest load each policy kept up with".into());
    }
    if let Some((a, b)) = tipping {
        chart.marks.push(Mark::Span {
            x: (a, b),
            label: format!(
                "tips over within the model's error: {}–{} output tok/s",
                crate::model::short(a),
                crate::model::short(b)
            ),
            colour: RED,
        });
    }
    if let Some(c) = current {
        chart.marks.push(Mark::Vertical {
            x: c,
            label: format!("today's load: {} output tok/s", crate::model::short(c)),
            colour: PURPLE,
        });
    }
    chart
}
