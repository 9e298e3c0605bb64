//! Requests arriving per second over time.

use crate::model::{Chart, GREY, Pick, Stroke, series, time_chart};
use sim_core::Report;

/// The chart's content.
pub fn model(r: &Report, pinned: Option<&Report>) -> Chart {
    let arrivals: Pick = |s| series(&s.t_s, &s.arrivals_per_s);
    time_chart(
        "Requests arriving",
        "requests/s",
        r,
        &[("arrivals/s", GREY, Stroke::Solid, arrivals)],
        pinned.map(|p| (p, "arrivals/s (A)", arrivals)),
    )
}
