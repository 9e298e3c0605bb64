//! Output and input tokens per second over time.

use crate::model::{BLUE, Chart, GREEN, Pick, Stroke, series, time_chart};
use sim_core::Report;

/// The chart's content.
pub fn model(r: &Report, pinned: Option<&Report>) -> Chart {
    let output: Pick = |s| series(&s.t_s, &s.output_tokens_per_s);
    time_chart(
        "Throughput",
        "tokens/s",
        r,
        &[
            ("output tok/s", BLUE, Stroke::Solid, output),
            ("input tok/s", GREEN, Stroke::Dashed, |s| {
                series(&s.t_s, &s.input_tokens_per_s)
            }),
        ],
        pinned.map(|p| (p, "output tok/s (A)", output)),
    )
}
