//! Cost as load grows: self-hosted $ per million tokens, and API vs
//! self-hosted monthly cost with the crossover. Both on log axes, so a bill of
//! $300 and one of $300,000 are both visible.

use crate::model::{BLUE, Chart, GREY, Line, Mark, PURPLE, RED, Stroke, log_fitted, short, span};
use sim_core::compare::CostComparison;

/// Today's load marked on a chart over load, when it is inside it.
fn mark_today(chart: &mut Chart, today: Option<f64>) {
    if let Some(t) = today.filter(|t| t.is_finite() && *t > 0.0 && *t <= chart.x.max) {
        chart.marks.push(Mark::Vertical {
            x: t,
            label: format!("today's load {}/s", short(t)),
            colour: PURPLE,
        });
    }
}

/// $ per million output tokens against load, for the fleet as configured;
/// `today`, the scenario's load (tasks/s), marked.
pub fn per_mtok_model(points: &[(f64, f64)], today: Option<f64>) -> Chart {
    let lines = vec![Line::new(
        "$ per million output tokens",
        BLUE,
        Stroke::Solid,
        points.to_vec(),
    )];
    let mut chart = Chart::lines(
        "Self-hosted cost per million tokens vs load",
        span("load (tasks/s)", points.iter().map(|p| p.0)),
        log_fitted("$ / Mtok (log)", points.iter().map(|p| p.1)),
        lines,
    );
    mark_today(&mut chart, today);
    chart
}

/// Monthly cost against load: the API tier and the self-hosted fleet;
/// `today`, the scenario's load (tasks/s), marked.
pub fn monthly_model(c: &CostComparison, today: Option<f64>) -> Chart {
    let api: Vec<(f64, f64)> = c
        .points
        .iter()
        .map(|p| (p.load_per_s, p.api_usd_per_month))
        .collect();
    let own: Vec<(f64, f64)> = c
        .points
        .iter()
        .map(|p| (p.load_per_s, p.self_hosted_usd_per_month))
        .collect();
    let y = log_fitted("$ per month (log)", api.iter().chain(&own).map(|p| p.1));
    let x = span("load (tasks/s)", api.iter().map(|p| p.0));
    let mut chart = Chart::lines(
        format!("Monthly cost: API ({}) vs self-hosted", c.tier),
        x,
        y,
        vec![
            Line::new("API", RED, Stroke::Solid, api),
            Line::new("self-hosted", BLUE, Stroke::Solid, own),
        ],
    );
    if let Some(at) = c.crossover_load_per_s.filter(|v| *v <= chart.x.max) {
        chart.marks.push(Mark::Vertical {
            x: at,
            label: format!("crossover {}/s", short(at)),
            colour: GREY,
        });
    }
    mark_today(&mut chart, today);
    chart
}
