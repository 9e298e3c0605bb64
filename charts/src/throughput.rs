//! Output and input tokens per second over time.

use crate::model::{BLUE, Chart, GREEN, Line, ORANGE, Stroke, over_time, series};
use sim_core::Report;

/// The chart's content.
pub fn model(r: &Report, pinned: Option<&Report>) -> Chart {
    let s = &r.series;
    let mut lines = vec![
        Line::new(
            "output tok/s",
            BLUE,
            Stroke::Solid,
            series(&s.t_s, &s.output_tokens_per_s),
        ),
        Line::new(
            "input tok/s",
            GREEN,
            Stroke::Dashed,
            series(&s.t_s, &s.input_tokens_per_s),
        ),
    ];
    if let Some(p) = pinned {
        lines.push(Line::new(
            "output tok/s (A)",
            ORANGE,
            Stroke::Dashed,
            series(&p.series.t_s, &p.series.output_tokens_per_s),
        ));
    }
    over_time("Throughput", "tokens/s", lines)
}
