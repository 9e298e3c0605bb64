//! Where a range comes from: the measured runs behind a profile's band, and
//! whether a scenario lies inside what they measured or beyond it.
//!
//! A band's rows each ran one model at one mix of lengths and one load;
//! `tlab calibrate --bands` writes their [`Extent`] beside the band. A
//! scenario is then placed on the same axes ([`Point`]): its model's
//! parameters, its calls' mean prompt and generated tokens, and its requests
//! in flight per replica (the load: queued and running, as a benchmark's
//! concurrency counts them). An axis outside the extent is an extrapolation,
//! and how far is the ratio to the nearest measured end.

use super::Basis;
use crate::physics::Model;
use crate::report::Report;
use crate::scenario::{RequestClass, Scenario};
use serde::{Deserialize, Serialize};

/// Where one row (or a scenario) sits on the axes the step time depends on.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Point {
    /// The model's parameters, billions (all experts counted).
    pub params_b: f64,
    /// Prompt tokens per call, mean.
    pub prompt_tokens: f64,
    /// Generated tokens per call, mean (hidden reasoning included).
    pub output_tokens: f64,
    /// Requests in flight per replica, mean (None where not known: a
    /// saturated throughput run states none).
    pub in_flight: Option<f64>,
}

impl Point {
    /// A row that ran `model` on calls of `class` with `in_flight` requests
    /// per replica: its lengths as the engine draws them
    /// ([`RequestClass::mean_input_tokens`], `mean_generated_tokens`).
    pub fn of_class(model: &Model, class: &RequestClass, in_flight: Option<f64>) -> Point {
        Point {
            params_b: model.dims().params() / 1e9,
            prompt_tokens: class.mean_input_tokens(),
            output_tokens: class.mean_generated_tokens(),
            in_flight,
        }
    }

    /// Where `s`'s main fleet ran in `r`, its own run: the tokens of its
    /// completed calls (shared prompts and conversation history included,
    /// as the engine saw them) and the requests in flight, mean over the
    /// run's windows, per replica. None where no call completed.
    pub fn of_run(s: &Scenario, r: &Report) -> Option<Point> {
        let t = &r.throughput;
        if t.requests_per_s.is_nan() || t.requests_per_s <= 0.0 {
            return None;
        }
        let flight = &r.series.in_flight;
        let replicas = r
            .pools
            .first()
            .map_or(f64::from(s.serving.replicas), |p| p.replicas_mean)
            .max(1.0);
        let in_flight = (!flight.is_empty())
            .then(|| flight.iter().sum::<f64>() / flight.len() as f64 / replicas);
        Some(Point {
            params_b: s.serving.model.dims().params() / 1e9,
            prompt_tokens: t.input_tokens_per_s / t.requests_per_s,
            output_tokens: t.output_tokens_per_s / t.requests_per_s,
            in_flight,
        })
    }
}

/// The lowest and highest of each axis over a band's rows.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Extent {
    /// Model parameters, billions.
    pub params_b: [f64; 2],
    /// Prompt tokens per call.
    pub prompt_tokens: [f64; 2],
    /// Generated tokens per call.
    pub output_tokens: [f64; 2],
    /// Requests in flight per replica, over the rows that state it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_flight: Option<[f64; 2]>,
}

impl Extent {
    /// The extent of `points` (None when empty), each end to three
    /// significant digits so the committed file reads as a table.
    pub fn of(points: &[Point]) -> Option<Extent> {
        let span = |read: &dyn Fn(&Point) -> Option<f64>| -> Option<[f64; 2]> {
            let v: Vec<f64> = points
                .iter()
                .filter_map(read)
                .filter(|x| x.is_finite())
                .collect();
            let lo = v.iter().copied().reduce(f64::min)?;
            let hi = v.iter().copied().reduce(f64::max)?;
            Some([significant(lo), significant(hi)])
        };
        Some(Extent {
            params_b: span(&|p| Some(p.params_b))?,
            prompt_tokens: span(&|p| Some(p.prompt_tokens))?,
            output_tokens: span(&|p| Some(p.output_tokens))?,
            in_flight: span(&|p| p.in_flight),
        })
    }
}

fn significant(x: f64) -> f64 {
    if x == 0.0 {
        return 0.0;
    }
    let scale = 10f64.powi(2 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

/// How far past a measured end still counts as inside: ×1.1.
pub const NEAR: f64 = 1.1;

/// One axis of a scenario against the band's rows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Axis {
    /// Its name in the JSON (`params_b`, `prompt_tokens`, `output_tokens`,
    /// `in_flight`).
    pub name: &'static str,
    /// The scenario's value.
    pub value: f64,
    /// The measured rows' lowest and highest.
    pub measured: [f64; 2],
    /// 1 inside the measured span; else how many times beyond its nearest
    /// end the value lies (2: twice the largest, or half the smallest).
    pub beyond: f64,
}

impl Axis {
    fn new(name: &'static str, value: f64, measured: [f64; 2]) -> Axis {
        let [lo, hi] = measured;
        let beyond = if value > hi && hi > 0.0 {
            value / hi
        } else if value < lo && value > 0.0 {
            lo / value
        } else {
            1.0
        };
        Axis {
            name,
            value,
            measured,
            beyond,
        }
    }

    /// Whether the value lies within the measured span, or within
    /// [`NEAR`] of its ends (the physics is smooth: a tenth past the last
    /// measured row is as well known as the row).
    pub fn inside(&self) -> bool {
        self.beyond <= NEAR
    }

    /// In words: "prompt 12,000 tokens: 3.0× the most measured (150 –
    /// 4,000)".
    pub fn words(&self) -> String {
        let (label, unit, span_unit) = match self.name {
            "params_b" => ("model", " B parameters", " B"),
            "prompt_tokens" => ("prompt", " tokens", ""),
            "output_tokens" => ("answer", " tokens", ""),
            _ => ("load", " requests in flight per replica", ""),
        };
        let n = |v: f64| {
            if v >= 100.0 {
                crate::format::rounded(v)
            } else {
                format!("{v:.1}")
            }
        };
        let [lo, hi] = self.measured;
        let span = format!("{} – {}{span_unit}", n(lo), n(hi));
        if self.inside() {
            format!(
                "{label} {}{unit}: inside the measured {span}",
                n(self.value)
            )
        } else {
            let side = if self.value > hi {
                "the most"
            } else {
                "under the least"
            };
            format!(
                "{label} {}{unit}: extrapolated, {:.1}× {side} measured ({span})",
                n(self.value),
                self.beyond
            )
        }
    }
}

/// Where a scenario's ranges come from, in the form the page and the CLI
/// show beside the figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Provenance {
    /// The measured runs behind the band, in words (or what it borrows).
    pub source: String,
    /// Rows measured on this GPU, software and family.
    pub rows: u32,
    /// Whether the band was measured on them (false: borrowed, an estimate).
    pub measured: bool,
    /// The band's measured ÷ simulated step time, p10 and p90.
    pub error: [f64; 2],
    /// Each axis against the rows' extent (empty where the band's rows
    /// state none).
    pub axes: Vec<Axis>,
}

impl Provenance {
    /// The provenance of a run at `point` under `basis`.
    pub fn new(basis: &Basis, point: Option<&Point>) -> Provenance {
        let axes = match (basis.extent, point) {
            (Some(e), Some(p)) => {
                let mut axes = vec![
                    Axis::new("params_b", p.params_b, e.params_b),
                    Axis::new("prompt_tokens", p.prompt_tokens, e.prompt_tokens),
                    Axis::new("output_tokens", p.output_tokens, e.output_tokens),
                ];
                if let (Some(v), Some(m)) = (p.in_flight, e.in_flight) {
                    axes.push(Axis::new("in_flight", v, m));
                }
                axes
            }
            _ => Vec::new(),
        };
        Provenance {
            source: basis.source.clone(),
            rows: basis.rows,
            measured: basis.measured,
            error: [basis.low, basis.high],
            axes,
        }
    }

    /// Whether the band was measured here and every axis lies inside it.
    pub fn inside(&self) -> bool {
        self.measured && !self.axes.is_empty() && self.axes.iter().all(Axis::inside)
    }

    /// The furthest any axis lies beyond the measured (1 inside).
    pub fn beyond(&self) -> f64 {
        self.axes.iter().map(|a| a.beyond).fold(1.0, f64::max)
    }

    /// In a few words, for beside the figures: "inside the measured runs",
    /// "up to 3.7× beyond the measured runs" or "an estimate: nothing
    /// measured here".
    pub fn short(&self) -> String {
        if !self.measured {
            "an estimate: nothing measured here".to_owned()
        } else if self.inside() {
            "inside the measured runs".to_owned()
        } else if self.axes.is_empty() {
            "measured here; the runs state no lengths or load".to_owned()
        } else {
            format!("up to {:.1}× beyond the measured runs", self.beyond())
        }
    }

    /// A headline, then one line per axis.
    pub fn lines(&self) -> Vec<String> {
        let head = if !self.measured {
            format!("Estimated: {}.", self.source)
        } else if self.inside() {
            format!(
                "Inside the measured: {}; step time ×{:.2} – ×{:.2} of the simulated (p10–p90).",
                self.source, self.error[0], self.error[1]
            )
        } else if self.axes.is_empty() {
            format!(
                "Measured: {}; the rows state no lengths or load.",
                self.source
            )
        } else {
            format!(
                "Extrapolated, up to {:.1}× beyond the measured: {}; step time ×{:.2} – ×{:.2} of the simulated there (p10–p90).",
                self.beyond(),
                self.source,
                self.error[0],
                self.error[1]
            )
        };
        std::iter::once(head)
            .chain(self.axes.iter().map(Axis::words))
            .collect()
    }
}
