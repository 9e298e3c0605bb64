//! Mean batch size and KV-cache use over time.

use crate::model::{BLUE, Chart, RED, Stroke, series, time_chart};
use sim_core::Report;

/// The chart's content (the pinned run is not overlaid: two scales already).
pub fn model(r: &Report, _pinned: Option<&Report>) -> Chart {
    time_chart(
        "Batch size and KV-cache use",
        "sequences / %",
        r,
        &[
            ("sequences per pass", BLUE, Stroke::Solid, |s| {
                series(&s.t_s, &s.batch_size)
            }),
            ("KV cache used (%)", RED, Stroke::Dashed, |s| {
                let kv: Vec<f64> = s.kv_use.iter().map(|k| k * 100.0).collect();
                series(&s.t_s, &kv)
            }),
        ],
        None,
    )
}
