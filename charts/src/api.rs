//! Rate limits: 429s and retries per second, and the share of the token limit left.

use crate::model::{Chart, GREY, ORANGE, Pick, RED, Stroke, series, series_opt, time_chart};
use sim_core::Report;

/// The chart's content.
pub fn model(r: &Report, pinned: Option<&Report>) -> Chart {
    let throttled: Pick = |s| series(&s.t_s, &s.throttled_per_s);
    time_chart(
        "Rate limits: 429s and headroom",
        "per s / %",
        r,
        &[
            ("retries per second", ORANGE, Stroke::Solid, |s| {
                series(&s.t_s, &s.retries_per_s)
            }),
            ("429s per second", RED, Stroke::Solid, throttled),
            ("token limit left (%)", GREY, Stroke::Dashed, |s| {
                let fill: Vec<Option<f64>> = s
                    .api_token_fill
                    .iter()
                    .map(|f| f.map(|f| f * 100.0))
                    .collect();
                series_opt(&s.t_s, &fill)
            }),
        ],
        pinned.map(|p| (p, "429s per second (A)", throttled)),
    )
}
