//! Rate limits: 429s and retries per second, and the share of the token limit left.

use crate::model::{Chart, GREY, Line, ORANGE, RED, Stroke, over_time, series, series_opt};
use sim_core::Report;

/// The chart's content.
pub fn model(r: &Report, pinned: Option<&Report>) -> Chart {
    let s = &r.series;
    let fill: Vec<Option<f64>> = s
        .api_token_fill
        .iter()
        .map(|f| f.map(|f| f * 100.0))
        .collect();
    let mut lines = vec![
        Line::new(
            "retries per second",
            ORANGE,
            Stroke::Solid,
            series(&s.t_s, &s.retries_per_s),
        ),
        Line::new(
            "429s per second",
            RED,
            Stroke::Solid,
            series(&s.t_s, &s.throttled_per_s),
        ),
        Line::new(
            "token limit left (%)",
            GREY,
            Stroke::Dashed,
            series_opt(&s.t_s, &fill),
        ),
    ];
    if let Some(p) = pinned {
        lines.push(Line::new(
            "429s per second (A)",
            ORANGE,
            Stroke::Dashed,
            series(&p.series.t_s, &p.series.throttled_per_s),
        ));
    }
    over_time("Rate limits: 429s and headroom", "per s / %", lines)
}
