//! The teaching view: replica 1's forward passes over the first seconds. Each
//! pass is a bar as wide as it lasts and as tall as its batch — token
//! generation (decode) in blue, prompt work (prefill) in orange on top — with
//! the requests waiting for a slot drawn below the axis.

use crate::model::{Axis, BLUE, Bar, Chart, Corner, GREY, ORANGE, Scale};
use sim_core::trace::TraceLog;

/// The chart's content for the first `window_s` seconds.
pub fn model(trace: &TraceLog, window_s: f64) -> Chart {
    let end_ns = (window_s * 1e9) as u64;
    let to_s = |ns: u64| ns as f64 / 1e9;
    let passes: Vec<_> = trace
        .passes
        .iter()
        .filter(|p| p.replica == 0 && p.start_ns < end_ns)
        .collect();
    let top = passes
        .iter()
        .map(|p| p.prefill_seqs + p.decode_seqs)
        .max()
        .unwrap_or(1)
        .max(1) as f64
        * 1.15;
    let bottom = passes.iter().map(|p| p.waiting).max().unwrap_or(0) as f64 * 1.15;
    let mut bars = Vec::new();
    for p in &passes {
        let x = (to_s(p.start_ns), to_s(p.end_ns.min(end_ns)));
        let decode = f64::from(p.decode_seqs);
        if p.decode_seqs > 0 {
            bars.push(Bar {
                x,
                y: (0.0, decode),
                kind: 0,
            });
        }
        if p.prefill_seqs > 0 {
            bars.push(Bar {
                x,
                y: (decode, decode + f64::from(p.prefill_seqs)),
                kind: 1,
            });
        }
        if p.waiting > 0 {
            bars.push(Bar {
                x,
                y: (-f64::from(p.waiting), 0.0),
                kind: 2,
            });
        }
    }
    Chart {
        title: "GPU timeline: forward passes of replica 1 (bars) and requests waiting (below)"
            .into(),
        x: Axis {
            label: "simulated time (s)".into(),
            min: 0.0,
            max: window_s.max(1e-3),
            scale: Scale::Linear,
        },
        y: Axis {
            label: "sequences in pass / waiting (below 0)".into(),
            min: -bottom.max(1.0),
            max: top,
            scale: Scale::Linear,
        },
        lines: Vec::new(),
        bar_kinds: vec![
            ("decode (generating tokens)".into(), BLUE),
            ("prefill (reading prompts)".into(), ORANGE),
            ("requests waiting".into(), GREY),
        ],
        bars,
        marks: Vec::new(),
        circle_note: None,
        legend: Corner::UpperRight,
    }
}
