//! End-to-end latency (p50, p99) per window: arrival to last token, on its
//! own scale (the TTFT chart keeps TTFT's).

use crate::latency::{Raw, over_time, scaled};
use crate::model::{BLUE, Chart, ORANGE, Stroke, series_opt};
use sim_core::Report;

/// The chart's content. Latencies read in ms, s or min as their size needs.
pub fn model(r: &Report, pinned: Option<&Report>) -> Chart {
    let s = &r.series;
    let mut raw: Vec<Raw> = vec![
        (
            "end-to-end p50",
            BLUE,
            Stroke::Solid,
            series_opt(&s.t_s, &s.e2e_p50_ms),
        ),
        (
            "end-to-end p99",
            BLUE,
            Stroke::Dashed,
            series_opt(&s.t_s, &s.e2e_p99_ms),
        ),
    ];
    if let Some(p) = pinned {
        raw.push((
            "end-to-end p99 (A)",
            ORANGE,
            Stroke::Dashed,
            series_opt(&p.series.t_s, &p.series.e2e_p99_ms),
        ));
    }
    let (unit, lines) = scaled(raw, 0.0);
    over_time("End-to-end latency over time", unit, lines, 0.0)
}
