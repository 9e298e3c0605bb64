//! Requests waiting and in flight over time.

use crate::model::{BLUE, Chart, GREY, Pick, Stroke, series, time_chart};
use sim_core::Report;

/// The chart's content.
pub fn model(r: &Report, pinned: Option<&Report>) -> Chart {
    let waiting: Pick = |s| series(&s.t_s, &s.queue_depth);
    time_chart(
        "Requests waiting and in flight",
        "requests",
        r,
        &[
            ("waiting", BLUE, Stroke::Solid, waiting),
            ("in flight", GREY, Stroke::Solid, |s| {
                series(&s.t_s, &s.in_flight)
            }),
        ],
        pinned.map(|p| (p, "waiting (A)", waiting)),
    )
}
