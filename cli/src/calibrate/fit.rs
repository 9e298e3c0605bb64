//! The fit: a bounded coordinate search on log errors over the serving
//! profile's constants, every constant on every row at once.

use super::{Row, compare, compare_each, loss, markdown, read};
use sim_core::physics::{
    FIXED_KNOBS, KNOBS, Knob, MOE_KNOBS, Profile, ServingCosts, Timing, VLLM_COSTS,
};

/// What `tlab calibrate` was asked to do.
pub struct Options {
    /// Refit the constants first.
    pub fit: bool,
    /// A model or experiment (substring of its name) to leave out of the fit
    /// and show alone.
    pub leave_out: Option<String>,
    /// Fit only on rows whose load never passes this rate (req/s), and show
    /// the rows above it: what a user who measured at today's load sees
    /// when asking about a heavier one.
    pub fit_below: Option<f64>,
    /// Rounds of the coordinate search.
    pub rounds: u32,
    /// Start the fit from the profile's constants instead of the priors (a
    /// refit after a change to the model).
    pub from_current: bool,
    /// Include mixture-of-experts rows.
    pub moe: bool,
    /// `vllm` or `tensorrt-llm`: whose step times to compare.
    pub timing: String,
    /// The profile a fit on the public files fits, as `--software` names it
    /// (`tensorrt-llm-1`, `sglang`, `sglang-rocm`).
    pub software: String,
}

impl Default for Options {
    /// As `tlab calibrate` is asked with no flags: compare, no fit.
    fn default() -> Self {
        Options {
            fit: false,
            leave_out: None,
            fit_below: None,
            rounds: 40,
            from_current: false,
            moe: false,
            timing: "vllm".into(),
            software: "tensorrt-llm-1".into(),
        }
    }
}

/// `tlab calibrate`: read the CSVs (one after the other, as one table),
/// optionally fit, and print the tables.
pub fn command(csvs: &[String], opt: &Options) -> Result<String, String> {
    let mut rows: Vec<Row> = Vec::new();
    for (i, text) in csvs.iter().enumerate() {
        rows.extend(read(text).map_err(|e| format!("file {}: {e}", i + 1))?);
    }
    rows.retain(|r| opt.moe || !r.is_moe());
    let held_out = |r: &Row| {
        opt.leave_out
            .as_ref()
            .is_some_and(|m| r.model.contains(m.as_str()) || r.experiment.contains(m.as_str()))
            || opt.fit_below.is_some_and(|rate| r.peak_rate() > rate)
    };
    let mut costs = VLLM_COSTS;
    let mut o = String::new();
    if opt.fit {
        // One fit over every row kept: dense and mixture-of-experts rows
        // together, every constant at once (the MoE ones move only MoE rows).
        let train: Vec<Row> = rows.iter().filter(|r| !held_out(r)).cloned().collect();
        let knobs: Vec<&Knob> = if train.iter().any(Row::is_moe) {
            KNOBS.iter().chain(&MOE_KNOBS).collect()
        } else {
            KNOBS.iter().collect()
        };
        let start = if opt.from_current {
            VLLM_COSTS
        } else {
            FIT_START
        };
        let (best, loss) = fit_knobs(&train, start, opt.rounds, &knobs)?;
        costs = best;
        o += &format!(
            "constants fitted on {} rows (mean squared log error {loss:.4})\n{}\n",
            train.len(),
            as_rust(&costs)
        );
    }
    let shown: Vec<Row> = if opt.leave_out.is_some() || opt.fit_below.is_some() {
        rows.into_iter().filter(held_out).collect()
    } else {
        rows
    };
    let timing = match (opt.timing.as_str(), opt.fit) {
        ("tensorrt-llm", false) => Profile::TENSORRT_LLM.timing,
        ("tensorrt-llm", true) => return Err("--fit fits the vLLM profile; drop --timing".into()),
        _ => Timing::Serving(costs),
    };
    let (table, failed) = compare_each(&shown, timing);
    o += &markdown(&table);
    for (experiment, why) in &failed {
        o += &format!("\nnot run: {experiment}: {why}");
    }
    if !failed.is_empty() {
        o += "\n";
    }
    Ok(o)
}

/// Where the fit starts: priors from vLLM's design and other simulators'
/// defaults (reference §3–§3b): ~10 ms of API server per request, ~1.5 ms of
/// scheduler per step, CUDA-graph decode launches, kernels at 50–85 % of peak.
pub const FIT_START: ServingCosts = ServingCosts {
    frontend_in_ns: 8_000_000,
    frontend_out_ns: 2_000_000,
    step_ns: 1_500_000,
    per_seq_ns: 20_000,
    layer_decode_ns: 10_000,
    layer_prefill_ns: 60_000,
    compute_prefill: 0.60,
    compute_decode: 0.50,
    // The constants no fit moves are the profile's own.
    compute_fp8: VLLM_COSTS.compute_fp8,
    bandwidth_decode: 0.85,
    bandwidth_prefill: 0.80,
    bandwidth_kv: 0.55,
    compute_attention: 0.6,
    allreduce_ns: 15_000,
    link_efficiency: 0.7,
    overlap_exponent: VLLM_COSTS.overlap_exponent,
    bandwidth_experts: 0.92,
    compute_experts: VLLM_COSTS.compute_experts,
    expert_tile_rows: 64.0,
    // About eight dependent small kernels (routing, sorting by expert,
    // activation, combining) of 5–10 µs each under CUDA graphs.
    moe_layer_ns: 60_000,
};

/// Fit the vLLM profile's dense constants to `rows`: a coordinate search
/// that multiplies one constant at a time by a step factor (both ways),
/// keeps what lowers the mean squared log error, and halves the step when
/// nothing does. Every constant stays in its physical range (efficiencies ≤ 1).
pub fn fit(rows: &[Row], start: ServingCosts, rounds: u32) -> Result<(ServingCosts, f64), String> {
    fit_knobs(rows, start, rounds, &KNOBS.iter().collect::<Vec<_>>())
}

fn fit_knobs(
    rows: &[Row],
    start: ServingCosts,
    rounds: u32,
    knobs: &[&Knob],
) -> Result<(ServingCosts, f64), String> {
    search(start, rounds, knobs, |c| {
        Ok(loss(&compare(rows, Timing::Serving(*c))?))
    })
}

/// The coordinate search itself, on any loss of the constants: each knob
/// multiplied by a step factor both ways, kept when the loss falls, the step
/// halved when nothing does; every knob stays in its range.
pub fn search(
    start: ServingCosts,
    rounds: u32,
    knobs: &[&Knob],
    mut loss_of: impl FnMut(&ServingCosts) -> Result<f64, String>,
) -> Result<(ServingCosts, f64), String> {
    // A start outside a knob's range (a prior older than the range) begins
    // at the range's nearest end: the search never leaves the ranges.
    let mut best = start;
    for &k in knobs {
        let v = (k.get)(&best);
        (k.set)(&mut best, v.clamp(k.range.0, k.range.1));
    }
    let mut best_loss = loss_of(&best)?;
    let mut step = 1.6_f64;
    for round in 1..=rounds {
        let mut improved = false;
        for &k in knobs {
            for dir in [step, 1.0 / step] {
                let mut trial = best;
                let v = (k.get)(&trial);
                // A constant at 0 moves to a small value of its range first.
                let next = if v == 0.0 { k.range.1 * 1e-3 } else { v * dir };
                (k.set)(&mut trial, next.clamp(k.range.0, k.range.1));
                if (k.get)(&trial) == v {
                    continue;
                }
                let l = loss_of(&trial)?;
                if l < best_loss {
                    // A step that gains less than 0.1 % of the loss is noise
                    // in the runs, not a better constant: keep it, but let
                    // the step shrink.
                    improved |= l < best_loss * 0.999;
                    best_loss = l;
                    best = trial;
                }
            }
        }
        eprintln!(
            "fit: round {round}: loss {best_loss:.5}, step ×{step:.3}\n{}",
            as_rust(&best)
        );
        if !improved {
            step = 1.0 + (step - 1.0) / 2.0;
            if step < 1.01 {
                break;
            }
        }
    }
    Ok((best, best_loss))
}

/// The fitted constants as Rust, to paste into `physics/profile.rs`.
pub fn as_rust(c: &ServingCosts) -> String {
    KNOBS
        .iter()
        .chain(&MOE_KNOBS)
        .chain(FIXED_KNOBS.iter().filter(|k| k.name == "compute_fp8"))
        .map(|k| {
            let v = (k.get)(c);
            if k.name.ends_with("_ns") {
                format!("    {}: {},\n", k.name, v.round() as u64)
            } else {
                format!("    {}: {:.3},\n", k.name, v)
            }
        })
        .collect()
}
