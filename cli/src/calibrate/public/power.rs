//! The power model against InferenceX's measured power (`tlab calibrate
//! --power`): each run with `avg_power_w`, at the work it measured.
//!
//! The check isolates power from timing. A run's measured rates (output and
//! input tokens/s, the time per token and between passes) give its average
//! pass: the clients decoding, the prompt tokens per pass, their contexts.
//! The engine's pass model counts that pass's FLOPs and HBM bytes (counts
//! that depend on the model and layout, not on any engine's constants), and
//! over the measured time between passes they are the shares of peak the
//! power model reads. Its watts are then compared with the measured ones;
//! joules per output token are those watts over the measured tokens/s. The
//! coefficients are fitted to the rows given by least squares, and the
//! table shows both the committed coefficients and the fitted ones.

use sim_core::physics::{
    BatchShape, POWER_COEFFICIENTS, Power, PowerCoefficients, ServingSoftware,
};
use sim_core::scenario::SpeculativeMethod;

use super::inferencex::{self, Row};

/// A measured run, at its own work.
#[derive(Clone, Debug)]
pub struct Point {
    /// The row's line in its file.
    pub line: usize,
    /// GPU, engine, precision, lengths and clients.
    pub label: String,
    /// Its GPU's power figures.
    pub power: Power,
    /// FLOP/s over the GPUs' peak, while passes run.
    pub flops_share: f64,
    /// HBM bytes/s over the GPUs' peak bandwidth.
    pub bytes_share: f64,
    /// Measured watts per GPU.
    pub watts: f64,
    /// Measured output tokens/s per GPU.
    pub output_per_gpu: f64,
    /// Measured joules per output token.
    pub joules_per_token: Option<f64>,
}

impl Point {
    /// Watts per GPU the model gives with `c`.
    pub fn watts(&self, c: &PowerCoefficients) -> f64 {
        self.power.pass_watts(c, self.flops_share, self.bytes_share)
    }
}

/// The runs with measured power, each at its work, or why one cannot be
/// read (by its line).
pub fn points(rows: &[Row]) -> (Vec<Point>, Vec<(usize, String)>) {
    let mut out = (Vec::new(), Vec::new());
    for row in rows.iter().filter(|r| r.avg_power_w.is_some()) {
        match point(row) {
            Ok(p) => out.0.push(p),
            Err(why) => out.1.push((row.line, why)),
        }
    }
    out
}

fn point(row: &Row) -> Result<Point, String> {
    if row.disagg.eq_ignore_ascii_case("true") {
        return Err("disaggregated: its prefill and decode GPUs work apart".into());
    }
    // The pass model counts work alone: any profile's counts are the same.
    let setup = inferencex::layout(row, Ok(ServingSoftware::TensorrtLlm1))?;
    let power = setup
        .gpu
        .spec()
        .power
        .ok_or("the GPU has no power figures")?;
    let positive = |v: Option<f64>, what: &str| {
        v.filter(|v| v.is_finite() && *v > 0.0)
            .ok_or(format!("no {what}"))
    };
    let watts = positive(row.avg_power_w, "avg_power_w")?;
    let output = positive(row.output_tput_per_gpu, "output_tput_per_gpu")?;
    let input = row
        .input_tput_per_gpu
        .or_else(|| Some(row.tput_per_gpu? - output))
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or("no input_tput_per_gpu")?;
    let tpot_s = positive(row.mean_tpot_ms.or(row.median_tpot_ms), "time per token")? / 1e3;
    let step_s = row
        .mean_itl_ms
        .filter(|v| v.is_finite() && *v > 0.0)
        .map_or(tpot_s, |ms| ms / 1e3);
    let gpus = f64::from(setup.tp);
    // Sequences decoding in a pass: tokens/s × time per token. Prompt tokens
    // per pass: the input rate × the time between passes.
    let decode = output * gpus * tpot_s;
    let prefill = input * gpus * step_s;
    let prompt = 0.9 * f64::from(row.isl);
    let context = prompt + 0.45 * f64::from(row.osl);
    let draft = if row.spec_method == "mtp" {
        f64::from(SpeculativeMethod::Mtp.defaults().0)
    } else {
        0.0
    };
    let shape = BatchShape {
        prefill_tokens: prefill.round() as u64,
        prefill_attention_pairs: (prefill * prompt / 2.0).round() as u64,
        prefill_cached_tokens: 0,
        prefill_seqs: (prefill / prompt).ceil() as u64,
        decode_seqs: decode.round().max(1.0) as u64,
        decode_context_tokens: (decode.max(1.0) * context).round() as u64,
        speculative_tokens: (decode * draft).round() as u64,
    };
    let model = setup.deployment().serving_step_model();
    let cost = model.step(&shape);
    Ok(Point {
        line: row.line,
        label: format!(
            "{} {} {} {}/{} ×{}{}",
            row.hardware,
            row.framework,
            row.precision,
            row.isl,
            row.osl,
            row.concurrency,
            if draft > 0.0 { " MTP" } else { "" }
        ),
        power,
        flops_share: cost.flops / step_s / model.peak_flops(),
        bytes_share: cost.bytes / step_s / model.peak_bandwidth(),
        watts,
        output_per_gpu: output,
        joules_per_token: row.joules_per_output_token,
    })
}

/// Distinct runs: a run the file lists twice (its latest and its history)
/// counted once.
pub fn distinct(points: Vec<Point>) -> Vec<Point> {
    let mut out: Vec<Point> = Vec::new();
    for p in points {
        if !out.iter().any(|q| {
            q.label == p.label && q.watts == p.watts && q.output_per_gpu == p.output_per_gpu
        }) {
            out.push(p);
        }
    }
    out
}

/// The coefficients that fit `points` best (least squares on the share of
/// each GPU's span between idle and board power), each kept ≥ 0: a term that
/// would come out negative is dropped and the rest refitted.
pub fn fit(points: &[Point]) -> Option<PowerCoefficients> {
    let rows: Vec<([f64; 3], f64)> = points
        .iter()
        .map(|p| {
            let span = p.power.board_w - p.power.idle_w;
            (
                [1.0, p.flops_share, p.bytes_share],
                (p.watts - p.power.idle_w) / span,
            )
        })
        .collect();
    let mut terms = vec![0usize, 1, 2];
    loop {
        let beta = least_squares(&rows, &terms)?;
        match beta.iter().position(|b| *b < 0.0) {
            Some(i) if terms.len() > 1 => {
                terms.remove(i);
            }
            _ => {
                let mut c = [0.0; 3];
                for (t, b) in terms.iter().zip(&beta) {
                    c[*t] = b.max(0.0);
                }
                return Some(PowerCoefficients {
                    active: c[0],
                    compute: c[1],
                    memory: c[2],
                });
            }
        }
    }
}

/// Ordinary least squares over the chosen columns (normal equations,
/// Gaussian elimination with partial pivoting); None when singular.
fn least_squares(rows: &[([f64; 3], f64)], terms: &[usize]) -> Option<Vec<f64>> {
    let n = terms.len();
    if rows.len() < n {
        return None;
    }
    let mut a = vec![vec![0.0; n + 1]; n];
    for (x, y) in rows {
        for i in 0..n {
            for j in 0..n {
                a[i][j] += x[terms[i]] * x[terms[j]];
            }
            a[i][n] += x[terms[i]] * y;
        }
    }
    for col in 0..n {
        let pivot = (col..n).max_by(|&r, &s| a[r][col].abs().total_cmp(&a[s][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        let lead = a[col].clone();
        for (_, row) in a.iter_mut().enumerate().filter(|(r, _)| *r != col) {
            let f = row[col] / lead[col];
            for (x, l) in row.iter_mut().zip(&lead).skip(col) {
                *x -= f * l;
            }
        }
    }
    Some((0..n).map(|i| a[i][n] / a[i][i]).collect())
}

/// Mean absolute relative error of the watts with `c`.
pub fn watts_error(points: &[Point], c: &PowerCoefficients) -> f64 {
    let n = points.len().max(1) as f64;
    points
        .iter()
        .map(|p| (p.watts(c) / p.watts - 1.0).abs())
        .sum::<f64>()
        / n
}

/// Leave-one-run-out: each run's watts with the coefficients fitted to the
/// others, as a mean absolute relative error (None under three runs).
pub fn held_out_error(points: &[Point]) -> Option<f64> {
    if points.len() < 3 {
        return None;
    }
    let mut sum = 0.0;
    for i in 0..points.len() {
        let rest: Vec<Point> = points
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, p)| p.clone())
            .collect();
        let c = fit(&rest)?;
        sum += (points[i].watts(&c) / points[i].watts - 1.0).abs();
    }
    Some(sum / points.len() as f64)
}

/// `tlab calibrate --power`: every run with measured power against the
/// model, with the committed coefficients and those fitted to the runs.
pub fn command(texts: &[String]) -> Result<String, String> {
    let mut rows = Vec::new();
    for t in texts {
        rows.extend(inferencex::read(t)?);
    }
    let (points, refused) = points(&rows);
    let points = distinct(points);
    if points.is_empty() {
        return Err(
            "--power needs InferenceX rows with avg_power_w that can be read at their work".into(),
        );
    }
    let c = POWER_COEFFICIENTS;
    let fitted = fit(&points);
    let mut out = String::from(
        "| line | run | FLOP share | byte share | measured W | model W | error | measured J/token | model J/token |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for p in &points {
        let w = p.watts(&c);
        out += &format!(
            "| {} | {} | {:.3} | {:.3} | {:.0} | {:.0} | {:+.1} % | {} | {:.2} |\n",
            p.line,
            p.label,
            p.flops_share,
            p.bytes_share,
            p.watts,
            w,
            (w / p.watts - 1.0) * 100.0,
            p.joules_per_token.map_or("–".into(), |j| format!("{j:.2}")),
            w / p.output_per_gpu
        );
    }
    out += &format!(
        "\n{} distinct runs; committed coefficients (active {:.3}, compute {:.3}, memory {:.3}): watts and J/token mean absolute error {:.1} %\n",
        points.len(),
        c.active,
        c.compute,
        c.memory,
        watts_error(&points, &c) * 100.0
    );
    if let Some(f) = fitted {
        out += &format!(
            "fitted to these runs: active {:.3}, compute {:.3}, memory {:.3}: {:.1} %\n",
            f.active,
            f.compute,
            f.memory,
            watts_error(&points, &f) * 100.0
        );
    }
    if let Some(e) = held_out_error(&points) {
        out += &format!(
            "each run held out (fitted to the others): {:.1} %\n",
            e * 100.0
        );
    }
    for (line, why) in refused {
        out += &format!("line {line}: not read: {why}\n");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const INFERENCEX: &str =
        include_str!("../../../../data/calibration/public/inferencex-dsr1-given.csv");

    fn synthetic(c: &PowerCoefficients) -> Vec<Point> {
        let power = sim_core::physics::Gpu::Mi355x
            .spec()
            .power
            .expect("figures");
        [
            (0.01, 0.2),
            (0.02, 0.5),
            (0.05, 0.3),
            (0.08, 0.1),
            (0.0, 0.6),
        ]
        .iter()
        .enumerate()
        .map(|(i, &(f, b))| Point {
            line: i + 2,
            label: format!("run {i}"),
            power,
            flops_share: f,
            bytes_share: b,
            watts: power.pass_watts(c, f, b),
            output_per_gpu: 100.0,
            joules_per_token: None,
        })
        .collect()
    }

    #[test]
    fn the_fit_recovers_the_coefficients_that_made_the_watts() {
        let truth = PowerCoefficients {
            active: 0.25,
            compute: 4.0,
            memory: 0.3,
        };
        let points = synthetic(&truth);
        let fitted = fit(&points).expect("fits");
        for (a, b) in [
            (fitted.active, truth.active),
            (fitted.compute, truth.compute),
            (fitted.memory, truth.memory),
        ] {
            assert!((a - b).abs() < 1e-9, "{fitted:?}");
        }
        assert!(watts_error(&points, &fitted) < 1e-12);
        assert!(held_out_error(&points).expect("five runs") < 1e-9);
        // A term the data would make negative is dropped, never kept below 0.
        let falling = PowerCoefficients {
            active: 0.5,
            compute: -2.0,
            memory: 0.2,
        };
        let f = fit(&synthetic(&falling)).expect("fits");
        assert_eq!(f.compute, 0.0, "{f:?}");
        assert!(f.active >= 0.0 && f.memory >= 0.0);
    }

    #[test]
    fn the_measured_runs_read_at_their_work_and_disaggregated_ones_are_named() {
        let rows = inferencex::read(INFERENCEX).expect("reads");
        let (points, refused) = points(&rows);
        let points = distinct(points);
        assert!(points.len() >= 20, "{} runs", points.len());
        assert!(
            refused.iter().all(|(_, why)| why.contains("disaggregated")),
            "{refused:?}"
        );
        for p in &points {
            assert!(p.flops_share > 0.0 && p.flops_share < 1.0, "{p:?}");
            assert!(p.bytes_share > 0.0 && p.bytes_share < 2.0, "{p:?}");
        }
        // The committed coefficients are the least-squares fit to these runs.
        let fitted = fit(&points).expect("fits");
        let c = POWER_COEFFICIENTS;
        assert!((fitted.active - c.active).abs() < 5e-4, "{fitted:?}");
        assert!((fitted.compute - c.compute).abs() < 5e-3, "{fitted:?}");
        assert!((fitted.memory - c.memory).abs() < 5e-4, "{fitted:?}");
        let text = command(&[INFERENCEX.to_owned()]).expect("a table");
        assert!(text.contains("each run held out"), "{text}");
        assert!(watts_error(&points, &c) < 0.15);
    }

    #[test]
    fn power_needs_runs_with_measured_power() {
        let header = INFERENCEX.lines().next().expect("a header");
        let err = command(&[format!("{header}\n")]).expect_err("no rows");
        assert!(err.contains("avg_power_w"), "{err}");
    }
}
