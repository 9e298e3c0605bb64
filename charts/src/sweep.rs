//! A sweep: p99 TTFT and output throughput against the first axis, one line
//! per value of the second (two panels side by side).

use crate::model::{BLUE, Chart, GREEN, Line, ORANGE, PURPLE, RED, Stroke, span, zero_based};
use crate::render::{self, DrawResult};
use plotters::coord::Shift;
use plotters::prelude::*;
use sim_core::sweep::{Axis, Summary};

/// The two panels' content.
pub fn models(axes: &[Axis], rows: &[(Vec<String>, Summary)]) -> [Chart; 2] {
    let x = |labels: &[String]| labels[0].parse::<f64>().unwrap_or(0.0);
    let groups: Vec<String> = match axes.get(1) {
        Some(a) => a.values.clone(),
        None => vec![String::new()],
    };
    let palette = [BLUE, ORANGE, GREEN, RED, PURPLE];
    let panel = |title: &str, metric: fn(&Summary) -> f64| {
        let lines: Vec<Line> = groups
            .iter()
            .enumerate()
            .map(|(gi, g)| {
                let pts = rows
                    .iter()
                    .filter(|(l, _)| l.get(1).is_none_or(|v| v == g))
                    .map(|(l, s)| (x(l), metric(s)))
                    .collect();
                let label = match axes.get(1) {
                    Some(a) => format!("{}={g}", a.parameter),
                    None => title.to_owned(),
                };
                Line::new(label, palette[gi % palette.len()], Stroke::Solid, pts)
            })
            .collect();
        Chart::lines(
            title,
            span(
                axes[0].parameter.as_str(),
                lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)),
            ),
            zero_based(
                title,
                lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)),
            ),
            lines,
        )
    };
    [
        panel("p99 TTFT (ms)", |s| s.ttft_p99_ms.unwrap_or(0.0)),
        panel("output tokens/s", |s| s.output_tokens_per_s),
    ]
}

/// Draw both panels.
pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    axes: &[Axis],
    rows: &[(Vec<String>, Summary)],
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(root.dim_in_pixel().0 / 2);
    let [a, b] = models(axes, rows);
    render::draw(&left, &a)?;
    render::draw(&right, &b)
}
