//! Requests waiting and running over time: two series that never contain
//! each other (running = in flight − waiting), waiting drawn on top; and,
//! when a pool autoscales, the replicas up beside them.

use crate::model::{BLUE, Chart, GREEN, GREY, Pick, Stroke, series, time_chart};
use sim_core::Report;

type Picked = (&'static str, plotters::style::RGBColor, Stroke, Pick);

/// The chart's content.
pub fn model(r: &Report, pinned: Option<&Report>) -> Chart {
    let waiting: Pick = |s| series(&s.t_s, &s.queue_depth);
    let scaled = !r.series.replicas_up.is_empty();
    let replicas: Option<Picked> = scaled.then_some((
        "replicas up (starting or serving)",
        GREEN,
        Stroke::Dashed,
        |s| series(&s.t_s, &s.replicas_up),
    ));
    let (title, y) = if scaled {
        (
            "Requests waiting and running, and replicas up",
            "requests; replicas",
        )
    } else {
        ("Requests waiting and running", "requests")
    };
    let mut picks: Vec<Picked> = vec![
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
    ];
    picks.extend(replicas);
    time_chart(
        title,
        y,
        r,
        &picks,
        pinned.map(|p| (p, "waiting (A)", waiting)),
    )
}
