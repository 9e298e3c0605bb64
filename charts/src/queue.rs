//! Requests waiting and running over time: two series that never contain
//! each other (running = in flight − waiting), waiting drawn on top.

use crate::model::{BLUE, Chart, GREY, Pick, Stroke, series, time_chart};
use sim_core::Report;

/// The chart's content.
pub fn model(r: &Report, pinned: Option<&Report>) -> Chart {
    let waiting: Pick = |s| series(&s.t_s, &s.queue_depth);
    time_chart(
        "Requests waiting and running",
        "requests",
        r,
        &[
            ("running (in a batch)", GREY, Stroke::Solid, |s| {
                let running: Vec<f64> = s
                    .in_flight
                    .iter()
                    .zip(&s.queue_depth)
                    .map(|(f, q)| (f - q).max(0.0))
                    .collect();
                series(&s.t_s, &running)
            }),
            ("waiting", BLUE, Stroke::Solid, waiting),
        ],
        pinned.map(|p| (p, "waiting (A)", waiting)),
    )
}
