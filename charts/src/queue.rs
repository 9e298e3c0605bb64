//! Requests waiting and in flight over time.

use crate::model::{BLUE, Chart, GREY, Line, ORANGE, Stroke, over_time, series};
use sim_core::Report;

/// The chart's content.
pub fn model(r: &Report, pinned: Option<&Report>) -> Chart {
    let s = &r.series;
    let mut lines = vec![
        Line::new(
            "waiting",
            BLUE,
            Stroke::Solid,
            series(&s.t_s, &s.queue_depth),
        ),
        Line::new(
            "in flight",
            GREY,
            Stroke::Solid,
            series(&s.t_s, &s.in_flight),
        ),
    ];
    if let Some(p) = pinned {
        lines.push(Line::new(
            "waiting (A)",
            ORANGE,
            Stroke::Dashed,
            series(&p.series.t_s, &p.series.queue_depth),
        ));
    }
    over_time("Requests waiting and in flight", "requests", lines)
}
