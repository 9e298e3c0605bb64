//! Cost against latency: every setup a plan settled, at its p99 time to
//! first token and its cost per month (both on log axes), those that meet
//! every target apart from those that miss one, the frontier among those
//! that meet them (no setup both cheaper and faster), the setup as it is,
//! and the pinned run A.

use crate::model::{
    BLUE, Chart, Corner, GREEN, Line, ORANGE, PURPLE, RED, Stroke, log_fitted, log_ms,
};
use sim_core::plan::{Config, Evaluated, Plan};

/// A setup's place on the plane: (p99 TTFT in ms, $ per month).
fn place(e: &Evaluated) -> Option<(f64, f64)> {
    let ttft = e.summary.ttft_p99_ms?;
    (ttft.is_finite() && ttft > 0.0 && e.usd_per_month > 0.0).then_some((ttft, e.usd_per_month))
}

/// The frontier of `points`: sorted by latency, each cheaper than every
/// faster one (so nothing else is both cheaper and at least as fast).
pub fn frontier(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut out: Vec<(f64, f64)> = Vec::new();
    for p in sorted {
        if out.last().is_none_or(|l| p.1 < l.1) {
            out.push(p);
        }
    }
    out
}

/// The chart of `plan`'s settled setups; `pinned`, the pinned run A's
/// (p99 TTFT ms, $ per month), when there is one.
pub fn model(plan: &Plan, pinned: Option<(f64, f64)>) -> Chart {
    let searched = |e: &&Evaluated| e.config != Config::AsIs;
    let met: Vec<(f64, f64)> = plan
        .feasible
        .iter()
        .filter(searched)
        .filter_map(place)
        .collect();
    let missed: Vec<(f64, f64)> = plan
        .near_misses
        .iter()
        .filter(searched)
        .filter_map(place)
        .collect();
    let as_is = plan
        .feasible
        .iter()
        .chain(&plan.near_misses)
        .find(|e| e.config == Config::AsIs);
    let mut lines = vec![
        Line::new("meets every target", GREEN, Stroke::Dots, met.clone()),
        Line::new("misses one", RED, Stroke::Dots, missed),
    ];
    let mut on_frontier = met.clone();
    if let Some(p) = as_is.filter(|e| e.verdict.is_ok()).and_then(place) {
        on_frontier.push(p);
    }
    lines.push(Line::new(
        "frontier: nothing both cheaper and faster",
        BLUE,
        Stroke::Solid,
        frontier(&on_frontier),
    ));
    if let Some(p) = as_is.and_then(place) {
        let mut mine = Line::new("your setup as it is", PURPLE, Stroke::Dots, vec![p]);
        mine.circle = Some(p);
        lines.push(mine);
    }
    if let Some(a) = pinned.filter(|a| a.0 > 0.0 && a.1 > 0.0) {
        let mut pin = Line::new("pinned A", ORANGE, Stroke::Dots, vec![a]);
        pin.circle = Some(a);
        lines.push(pin);
    }
    let all = || lines.iter().flat_map(|l| l.points.iter().copied());
    let x = log_ms("p99 time to first token", all().map(|p| p.0));
    let y = log_fitted("$ per month (log)", all().map(|p| p.1));
    let mut chart = Chart::lines(
        "Cost against latency: the setups the plan settled",
        x,
        y,
        lines,
    );
    // Nothing is both cheap and fast: the lower left is where no setup
    // can be, so the legend covers none.
    chart.legend = Corner::LowerLeft;
    chart
}
