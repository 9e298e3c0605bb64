//! Mean batch size and KV-cache use over time.

use crate::model::{BLUE, Chart, Line, RED, Stroke, over_time, series};
use sim_core::Report;

/// The chart's content (the pinned run is not overlaid: two scales already).
pub fn model(r: &Report, _pinned: Option<&Report>) -> Chart {
    let s = &r.series;
    let kv: Vec<f64> = s.kv_use.iter().map(|k| k * 100.0).collect();
    let lines = vec![
        Line::new(
            "sequences per pass",
            BLUE,
            Stroke::Solid,
            series(&s.t_s, &s.batch_size),
        ),
        Line::new(
            "KV cache used (%)",
            RED,
            Stroke::Dashed,
            series(&s.t_s, &kv),
        ),
    ];
    over_time("Batch size and KV-cache use", "sequences / %", lines)
}
