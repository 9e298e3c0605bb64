//! A measured run's own time series (the engine's per-second running,
//! waiting and KV use) against the replay's, over the run: where the two
//! queues part, and why.

use crate::model::{BLUE, Chart, GREEN, GREY, Line, Stroke, over_time, series};
use sim_core::Report;
use sim_core::traces::measured::Measured;

/// Sequences running and requests waiting, measured (dashed, per second) and
/// simulated (solid, window means); None when the run has no time series.
pub fn queue(r: &Report, m: &Measured) -> Option<Chart> {
    if m.series.is_empty() {
        return None;
    }
    let measured = |f: fn(&sim_core::traces::measured::Tick) -> f64| {
        m.series.iter().map(|t| (t.t_s, f(t))).collect::<Vec<_>>()
    };
    let s = &r.series;
    Some(over_time(
        "Running and waiting: measured against simulated",
        "sequences / requests",
        vec![
            Line::new(
                "running",
                GREY,
                Stroke::Solid,
                series(&s.t_s, &s.batch_size),
            ),
            Line::new(
                "running measured",
                GREY,
                Stroke::Dashed,
                measured(|t| t.running),
            ),
            Line::new(
                "waiting",
                BLUE,
                Stroke::Solid,
                series(&s.t_s, &s.queue_depth),
            ),
            Line::new(
                "waiting measured",
                BLUE,
                Stroke::Dashed,
                measured(|t| t.waiting),
            ),
        ],
    ))
}

/// KV cache in use, %, measured (dashed) and simulated (solid); None when
/// the run has no time series.
pub fn kv(r: &Report, m: &Measured) -> Option<Chart> {
    if m.series.is_empty() {
        return None;
    }
    let s = &r.series;
    let simulated: Vec<f64> = s.kv_use.iter().map(|u| u * 100.0).collect();
    let mut chart = over_time(
        "KV cache in use: measured against simulated",
        "% of the KV cache",
        vec![
            Line::new(
                "KV in use",
                GREEN,
                Stroke::Solid,
                series(&s.t_s, &simulated),
            ),
            Line::new(
                "KV in use measured",
                GREEN,
                Stroke::Dashed,
                m.series.iter().map(|t| (t.t_s, t.kv_pct)).collect(),
            ),
        ],
    );
    chart.y.max = chart.y.max.max(100.0);
    Some(chart)
}
