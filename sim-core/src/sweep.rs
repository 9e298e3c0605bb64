//! Sweeps: vary one or two scenario parameters over ranges and collect the
//! summary metrics of every point; and the latency–throughput curve of each
//! batching policy as load rises.
//!
//! Everything here is pure: it builds scenarios and summarises reports. Callers
//! decide how to run the points (serially, in parallel, in browser slices); the
//! results do not depend on it.

use crate::Report;
use crate::params;
use crate::scenario::{Scenario, ScenarioError, ValidScenario};
use serde::{Deserialize, Serialize};

/// Most points one sweep may have.
pub const MAX_POINTS: usize = 10_000;

/// One axis of a sweep: a parameter and the values it takes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Axis {
    /// Parameter name (see [`PARAMETERS`]).
    pub parameter: String,
    /// Values, as written.
    pub values: Vec<String>,
}

impl Axis {
    /// Parse `name=start:stop:step` (inclusive) or `name=a,b,c`, where `name`
    /// is a path of the parameter catalogue ([`crate::params`]), with
    /// `[CLASS]` after per-class parameters of multi-class workloads.
    pub fn parse(spec: &str) -> Result<Axis, String> {
        let (name, values) = spec
            .split_once('=')
            .ok_or_else(|| format!("{spec:?}: expected NAME=START:STOP:STEP or NAME=A,B,C"))?;
        let name = name.trim();
        params::check_name(name)?;
        let values = if let [start, stop, step] = values.split(':').collect::<Vec<_>>()[..] {
            range(name, start, stop, step)?
        } else {
            let values: Vec<String> = values
                .split(',')
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
                .collect();
            if values.len() > MAX_POINTS {
                return Err(format!(
                    "{name}: {} values; at most {MAX_POINTS}",
                    values.len()
                ));
            }
            values
        };
        if values.is_empty() {
            return Err(format!("{name}: no values after the ="));
        }
        Ok(Axis {
            parameter: name.to_owned(),
            values,
        })
    }
}

/// The values of `START:STOP:STEP`, inclusive, refusing more than
/// [`MAX_POINTS`] before making any.
fn range(name: &str, start: &str, stop: &str, step: &str) -> Result<Vec<String>, String> {
    let num = |s: &str| {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("{name}: {:?} is not a finite number", s.trim()))
    };
    let (a, b, d) = (num(start)?, num(stop)?, num(step)?);
    if d <= 0.0 || b < a {
        return Err(format!(
            "{name}: need START ≤ STOP and STEP > 0, got {a}:{b}:{d}"
        ));
    }
    let count = ((b - a) / d + 1e-9).floor() + 1.0;
    if count.is_nan() || count > MAX_POINTS as f64 {
        return Err(format!(
            "{name}: {a}:{b}:{d} makes {count:.3e} values; at most {MAX_POINTS}"
        ));
    }
    Ok((0..count as usize)
        .map(|i| trim_float(a + d * i as f64))
        .collect())
}

fn trim_float(v: f64) -> String {
    let s = format!("{:.6}", v);
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// Set one parameter of a scenario through the catalogue (validation comes
/// later, on the whole scenario).
pub fn apply(s: &mut Scenario, parameter: &str, value: &str) -> Result<(), String> {
    params::apply(s, parameter, value)
}

/// The scenarios of a sweep, in row-major order (the last axis varies fastest),
/// each with its axis values. Every scenario is validated.
pub fn points(
    base: &Scenario,
    axes: &[Axis],
) -> Result<Vec<(Vec<String>, ValidScenario)>, ScenarioError> {
    let bad = |m: String| ScenarioError { problems: vec![m] };
    if axes.is_empty() || axes.len() > 2 {
        return Err(bad(format!(
            "a sweep varies 1 or 2 parameters, got {}",
            axes.len()
        )));
    }
    let total: usize = axes.iter().map(|a| a.values.len()).product();
    if total > MAX_POINTS {
        return Err(bad(format!(
            "the sweep has {total} points; at most {MAX_POINTS}"
        )));
    }
    let mut out = Vec::with_capacity(total);
    for i in 0..total {
        let mut rem = i;
        let mut labels = vec![String::new(); axes.len()];
        for (k, a) in axes.iter().enumerate().rev() {
            labels[k] = a.values[rem % a.values.len()].clone();
            rem /= a.values.len();
        }
        let mut s = base.clone();
        for (a, v) in axes.iter().zip(&labels) {
            apply(&mut s, &a.parameter, v)
                .map_err(|e| bad(format!("at {}: {e}", describe(axes, &labels))))?;
        }
        let s = s.validate().map_err(|e| ScenarioError {
            problems: e
                .problems
                .into_iter()
                .map(|p| format!("at {}: {p}", describe(axes, &labels)))
                .collect(),
        })?;
        out.push((labels, s));
    }
    Ok(out)
}

fn describe(axes: &[Axis], labels: &[String]) -> String {
    axes.iter()
        .zip(labels)
        .map(|(a, v)| format!("{}={v}", a.parameter))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The summary metrics of one run, flat for tables and CSV.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// TTFT median, ms.
    pub ttft_p50_ms: Option<f64>,
    /// TTFT 99th percentile, ms.
    pub ttft_p99_ms: Option<f64>,
    /// TPOT median, ms.
    pub tpot_p50_ms: Option<f64>,
    /// TPOT 99th percentile, ms.
    pub tpot_p99_ms: Option<f64>,
    /// End-to-end median, ms.
    pub e2e_p50_ms: Option<f64>,
    /// End-to-end 99th percentile, ms.
    pub e2e_p99_ms: Option<f64>,
    /// Output tokens/s.
    pub output_tokens_per_s: f64,
    /// Completed requests/s.
    pub requests_per_s: f64,
    /// Share of arrived requests within the SLO.
    pub goodput_fraction: Option<f64>,
    /// Share of arrived requests with no answer ([`crate::report::Counts::error_fraction`]).
    pub error_fraction: f64,
    /// API 429s.
    pub throttled_429: u64,
    /// $ per million output tokens.
    pub usd_per_mtok_output: Option<f64>,
    /// $ per month.
    pub usd_per_month: f64,
}

impl Summary {
    /// Summarise a report.
    pub fn of(r: &Report) -> Summary {
        Summary {
            ttft_p50_ms: r.overall.ttft.p50_ms,
            ttft_p99_ms: r.overall.ttft.p99_ms,
            tpot_p50_ms: r.overall.tpot.p50_ms,
            tpot_p99_ms: r.overall.tpot.p99_ms,
            e2e_p50_ms: r.overall.e2e.p50_ms,
            e2e_p99_ms: r.overall.e2e.p99_ms,
            output_tokens_per_s: r.throughput.output_tokens_per_s,
            requests_per_s: r.throughput.requests_per_s,
            goodput_fraction: r.throughput.goodput_fraction,
            error_fraction: r.requests.error_fraction(),
            throttled_429: r.api.as_ref().map_or(0, |a| a.throttled_429),
            usd_per_mtok_output: r.cost.usd_per_mtok_output,
            usd_per_month: r.cost.usd_per_month,
        }
    }

    /// CSV header of [`Self::csv_row`].
    pub const CSV_HEADER: &'static str = "ttft_p50_ms,ttft_p99_ms,tpot_p50_ms,tpot_p99_ms,e2e_p50_ms,e2e_p99_ms,output_tokens_per_s,requests_per_s,goodput_fraction,error_fraction,throttled_429,usd_per_mtok_output,usd_per_month";

    /// The summary as CSV fields.
    pub fn csv_row(&self) -> String {
        let o = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
        format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{}",
            o(self.ttft_p50_ms),
            o(self.ttft_p99_ms),
            o(self.tpot_p50_ms),
            o(self.tpot_p99_ms),
            o(self.e2e_p50_ms),
            o(self.e2e_p99_ms),
            self.output_tokens_per_s,
            self.requests_per_s,
            o(self.goodput_fraction),
            self.error_fraction,
            self.throttled_429,
            o(self.usd_per_mtok_output),
            self.usd_per_month
        )
    }
}

/// A sweep's results as CSV: one column per axis, then the summary.
pub fn csv(axes: &[Axis], rows: &[(Vec<String>, Summary)]) -> String {
    let mut out = axes
        .iter()
        .map(|a| a.parameter.clone())
        .collect::<Vec<_>>()
        .join(",");
    out.push(',');
    out.push_str(Summary::CSV_HEADER);
    out.push('\n');
    for (labels, s) in rows {
        out.push_str(&labels.join(","));
        out.push(',');
        out.push_str(&s.csv_row());
        out.push('\n');
    }
    out
}

/// One policy's latency–throughput curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    /// Batching policy.
    pub policy: String,
    /// Per offered load: (offered tasks/s, achieved output tok/s, p50 e2e ms, p99 e2e ms).
    pub points: Vec<(f64, f64, f64, f64)>,
    /// Index of the saturation point: the last load whose requests still complete
    /// at the rate they arrive (≥ 95 % of offered), if any.
    pub saturation: Option<usize>,
}

/// Scenarios of the latency–throughput curves: every batching policy × every rate.
pub fn curve_points(
    base: &Scenario,
    rates: &[f64],
) -> Result<Vec<(String, f64, ValidScenario)>, ScenarioError> {
    let policies = ["none", "static", "continuous", "chunked_prefill"];
    let runs = rates.len() * policies.len();
    if rates.is_empty() || runs > MAX_POINTS {
        return Err(ScenarioError {
            problems: vec![format!(
                "rates: {} rates × {} batching policies make {runs} runs; 1..={} rates are allowed",
                rates.len(),
                policies.len(),
                MAX_POINTS / policies.len()
            )],
        });
    }
    let mut out = Vec::new();
    for p in policies {
        for &r in rates {
            let mut s = base.clone();
            s.api = None;
            apply(&mut s, "batching.policy", p).map_err(|m| ScenarioError { problems: vec![m] })?;
            apply(&mut s, "arrival.rate", &r.to_string())
                .map_err(|m| ScenarioError { problems: vec![m] })?;
            out.push((p.to_owned(), r, s.validate()?));
        }
    }
    Ok(out)
}

/// Assemble curves from the reports of [`curve_points`] (same order).
pub fn curves(points: &[(String, f64, ValidScenario)], reports: &[Report]) -> Vec<Curve> {
    let mut out: Vec<Curve> = Vec::new();
    for ((policy, rate, _), r) in points.iter().zip(reports) {
        if out.last().is_none_or(|c| c.policy != *policy) {
            out.push(Curve {
                policy: policy.clone(),
                points: Vec::new(),
                saturation: None,
            });
        }
        let Some(c) = out.last_mut() else { continue };
        let keeps_up = r.throughput.requests_per_s >= 0.95 * rate * per_task_calls(&points[0].2);
        c.points.push((
            *rate,
            r.throughput.output_tokens_per_s,
            r.overall.e2e.p50_ms.unwrap_or(0.0),
            r.overall.e2e.p99_ms.unwrap_or(0.0),
        ));
        // The saturation point ends the run of loads the policy keeps up with.
        let i = c.points.len() - 1;
        if keeps_up && (i == 0 || c.saturation == Some(i - 1)) {
            c.saturation = Some(i);
        }
    }
    out
}

fn per_task_calls(s: &Scenario) -> f64 {
    let total: f64 = s.workload.classes.iter().map(|k| k.share).sum();
    s.workload
        .classes
        .iter()
        .map(|k| k.share * f64::from(k.calls_per_task))
        .sum::<f64>()
        / total.max(1e-12)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets;

    #[test]
    fn axes_parse_ranges_and_lists_and_refuse_nonsense() {
        assert_eq!(
            Axis::parse("arrival.rate=10:100:10")
                .expect("range")
                .values
                .len(),
            10
        );
        assert_eq!(
            Axis::parse("batching.max_seqs=32,64,128,256")
                .expect("list")
                .values,
            ["32", "64", "128", "256"]
        );
        assert_eq!(
            Axis::parse("arrival.rate=0.5:1.5:0.5")
                .expect("range")
                .values,
            ["0.5", "1", "1.5"]
        );
        assert!(
            Axis::parse("warp=1,2")
                .expect_err("unknown")
                .contains("unknown parameter \"warp\"")
        );
        assert!(
            Axis::parse("arrival.rate=5:1:1")
                .expect_err("backwards")
                .contains("START ≤ STOP")
        );
        assert!(
            Axis::parse("arrival.rate=1:1000000:0.001")
                .expect_err("too many")
                .contains("at most")
        );
        assert!(
            Axis::parse("arrival.rate")
                .expect_err("no values")
                .contains("expected NAME=")
        );
    }

    #[test]
    fn points_vary_the_last_axis_fastest_and_validate() {
        let axes = [
            Axis::parse("arrival.rate=1,2").expect("ok"),
            Axis::parse("batching.max_seqs=32,64,128").expect("ok"),
        ];
        let pts = points(&presets::chatbot_h100(), &axes).expect("valid");
        assert_eq!(pts.len(), 6);
        assert_eq!(pts[1].0, ["1", "64"]);
        assert_eq!(pts[3].0, ["2", "32"]);
        assert_eq!(pts[4].1.serving.batching.max_seqs(), 64);
        let bad = [Axis::parse("replicas=0,1").expect("parses")];
        let err = points(&presets::chatbot_h100(), &bad).expect_err("replicas 0");
        assert!(
            err.problems[0].starts_with("at replicas=0: replicas must be 1..=1024 servers, got 0"),
            "{err}"
        );
    }
}
