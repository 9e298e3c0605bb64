//! Requests arriving per second over time.

use crate::model::{Chart, GREY, Line, ORANGE, Stroke, over_time, series};
use sim_core::Report;

/// The chart's content.
pub fn model(r: &Report, pinned: Option<&Report>) -> Chart {
    let s = &r.series;
    let mut lines = vec![Line::new(
        "arrivals/s",
        GREY,
        Stroke::Solid,
        series(&s.t_s, &s.arrivals_per_s),
    )];
    if let Some(p) = pinned {
        lines.push(Line::new(
            "arrivals/s (A)",
            ORANGE,
            Stroke::Dashed,
            series(&p.series.t_s, &p.series.arrivals_per_s),
        ));
    }
    over_time("Requests arriving", "requests/s", lines)
}
