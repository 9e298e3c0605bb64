//! Every number with its range: the step-time model's own measured error,
//! run through the simulation.
//!
//! A profile's error is a table ([`bands`]): per GPU × serving software ×
//! model family, the 10th and 90th percentiles of measured ÷ simulated
//! step time over the real runs compared (`tlab calibrate --bands`, which
//! writes `bands.json`), with the rows behind them. Where nothing was
//! measured, the nearest family's band widened and called an estimate
//! ([`band_for`]).
//!
//! A scenario's ranges are then simulations, not a formula ([`RangeRuns`]):
//! the scenario again with every pass's time scaled to the band's low and
//! high ends, and at its own times, each over [`SEEDS`] seeds. Every
//! headline figure's range is the lowest and highest the runs give, the
//! point run included, and [`Verdict`] says whether the runs' queues drain.
//! Where one replica's capacity sizes the fleet, [`FleetRuns`] then measures
//! each end's capacity and the replicas that meet the targets.

mod fleet;
mod provenance;
mod runs;

use crate::compare::LoadCheck;
use crate::physics::{Gpu, ServingSoftware};
use crate::scenario::Serving;
pub use fleet::{FLEET_FIGURES, FleetRuns};
pub use provenance::{Axis, Extent, Point, Provenance};
pub use runs::{Figure, RangeRuns, Ranges, Verdict, grows, ranges};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// Seeds each end of the band (and the point) runs over.
pub const SEEDS: u64 = 3;

/// Rows a measured band needs to stand on its own; fewer borrow the
/// nearest family's width too.
pub const MIN_ROWS: u32 = 3;

/// How much wider (in log scale) a borrowed band is than the one it comes
/// from, and the narrowest estimate (±25 %, the trust sentence's figure
/// where nothing was measured).
const WIDEN: f64 = 1.5;
const ESTIMATE_FLOOR: (f64, f64) = (0.8, 1.25);

/// One measured band: what the calibration rows of a GPU × software ×
/// family say of the step time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Band {
    /// The GPU.
    pub gpu: Gpu,
    /// The serving software's profile the rows ran under.
    pub software: ServingSoftware,
    /// Whether the model is a mixture of experts.
    pub moe: bool,
    /// 10th percentile of measured ÷ simulated step time.
    pub low: f64,
    /// 90th percentile.
    pub high: f64,
    /// Rows behind it.
    pub rows: u32,
    /// Where the rows come from, in words.
    pub source: String,
    /// 10th and 90th percentiles of measured ÷ simulated time to first
    /// token over the rows that have one, and how many: passes carrying a
    /// prompt err apart from those of decodes alone (absent: as the step
    /// time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill: Option<PrefillBand>,
    /// What the rows measured: the span of model sizes, lengths and loads
    /// ([`Provenance`] places a scenario against it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extent: Option<Extent>,
}

/// The time to first token's band of a [`Band`]'s rows.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrefillBand {
    /// 10th percentile of measured ÷ simulated TTFT.
    pub low: f64,
    /// 90th percentile.
    pub high: f64,
    /// Rows behind it.
    pub rows: u32,
}

/// The band a scenario's fleet runs under, as used.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Basis {
    /// Step-time scale of the low end (faster than the profile when < 1).
    pub low: f64,
    /// Step-time scale of the high end.
    pub high: f64,
    /// Rows measured behind it (0 for an estimate from nothing).
    pub rows: u32,
    /// Whether the band was measured on this GPU, software and family.
    pub measured: bool,
    /// Where it comes from, in words ("nothing measured on …" when borrowed).
    pub source: String,
    /// The ends of the time to first token's own band, where measured on
    /// [`MIN_ROWS`] rows: each pass carrying prompt tokens is run at these
    /// rather than at `low` and `high`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefill: Option<(f64, f64)>,
    /// What the band's rows measured (a borrowed band's, where borrowed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extent: Option<Extent>,
}

impl Basis {
    /// The step-time scale and the prompt passes' scale relative to it
    /// (`serving.step_time_scale`, `serving.prefill_time_scale`) of the
    /// band's low end (`high` false) or high end.
    pub fn end(&self, high: bool) -> (f64, Option<f64>) {
        let step = if high { self.high } else { self.low };
        let prefill = self.prefill.map(|(lo, hi)| {
            let p = if high { hi } else { lo };
            (p / step).clamp(SCALE_BOUNDS.0, SCALE_BOUNDS.1)
        });
        (step, prefill.filter(|p| *p != 1.0))
    }
}

/// The committed table (`tlab calibrate --bands` over `data/calibration/`).
pub fn bands() -> &'static [Band] {
    static BANDS: OnceLock<Vec<Band>> = OnceLock::new();
    BANDS.get_or_init(|| {
        // The file is the project's own, checked by a test: a broken one
        // is a build defect, and then no band is measured.
        serde_json::from_str(include_str!("bands.json")).unwrap_or_default()
    })
}

/// The band for a pool served as `s`: its own measured band when it has
/// [`MIN_ROWS`], else the nearest (same software and family on another
/// GPU, then the same GPU and software, then any of the software),
/// widened [`WIDEN`]× in log scale and no narrower than ±25 %.
pub fn band_for(s: &Serving) -> Basis {
    band_for_in(bands(), s)
}

/// [`band_for`] from `table` instead of the committed one (the coverage
/// check's bands, each read without the experiment it checks).
pub fn band_for_in(table: &[Band], s: &Serving) -> Basis {
    let mut b = band_in(table, s.gpu, s.software, s.model.dims().moe.is_some());
    // The ends a scenario may run at (`serving.step_time_scale`), with the
    // scenario's own scale on top.
    let own = s.step_time_scale.unwrap_or(1.0);
    b.low = b.low.max(SCALE_BOUNDS.0 / own);
    b.high = b.high.min(SCALE_BOUNDS.1 / own);
    b
}

/// The step-time scales a scenario may run at (its validation's bounds).
pub const SCALE_BOUNDS: (f64, f64) = crate::scenario::bounds::STEP_TIME_SCALE;

fn band_in(table: &[Band], gpu: Gpu, software: ServingSoftware, moe: bool) -> Basis {
    let own = table
        .iter()
        .find(|b| b.gpu == gpu && b.software == software && b.moe == moe);
    if let Some(b) = own.filter(|b| b.rows >= MIN_ROWS) {
        return Basis {
            low: b.low.min(1.0),
            high: b.high.max(1.0),
            rows: b.rows,
            measured: true,
            source: b.source.clone(),
            prefill: b
                .prefill
                .filter(|p| p.rows >= MIN_ROWS)
                .map(|p| (p.low.min(1.0), p.high.max(1.0))),
            extent: b.extent,
        };
    }
    // The nearest: most rows first among equals, so the pick is stable.
    let near = |f: &dyn Fn(&Band) -> bool| {
        table
            .iter()
            .filter(|b| b.rows >= MIN_ROWS && f(b))
            .max_by(|a, b| a.rows.cmp(&b.rows).then(b.high.total_cmp(&a.high)))
    };
    let borrowed = near(&|b| b.software == software && b.moe == moe)
        .or_else(|| near(&|b| b.gpu == gpu && b.software == software))
        .or_else(|| near(&|b| b.software == software));
    let (low, high, what) = match borrowed {
        Some(b) => (
            (b.low.min(1.0)).powf(WIDEN),
            (b.high.max(1.0)).powf(WIDEN),
            format!(
                "nothing measured on {} with {}; {} widened {WIDEN}×",
                gpu.spec().name,
                software.name(),
                b.source
            ),
        ),
        None => (
            ESTIMATE_FLOOR.0,
            ESTIMATE_FLOOR.1,
            format!("nothing measured with {}; ±25 %", software.name()),
        ),
    };
    Basis {
        low: low.min(ESTIMATE_FLOOR.0),
        high: high.max(ESTIMATE_FLOOR.1),
        rows: own.map_or(0, |b| b.rows),
        measured: false,
        source: what,
        prefill: None,
        extent: borrowed.and_then(|b| b.extent),
    }
}

/// The loads, tasks/s, between which the fleet tips over within the
/// model's error: the saturated capacity `load` measured at the profile's
/// own step times, divided by the band's high and low ends (a saturated
/// replica makes its batch once a pass, so its throughput scales as one
/// over the pass time). A formula on the measured capacity, not a run.
pub fn tipping_loads(load: &LoadCheck, basis: &Basis) -> (f64, f64) {
    let (lo, hi) = tipping_output_tokens_per_s(load, basis);
    let per_task =
        load.tasks_per_s_per_replica / load.tokens_per_s_per_replica.max(f64::MIN_POSITIVE);
    (lo * per_task, hi * per_task)
}

/// [`tipping_loads`] in the fleet's output tokens/s (the curve chart's
/// axis): its saturated output over the band's high and low ends.
pub fn tipping_output_tokens_per_s(load: &LoadCheck, basis: &Basis) -> (f64, f64) {
    (
        load.capacity_tokens_per_s / basis.high,
        load.capacity_tokens_per_s / basis.low,
    )
}

/// [`tipping_output_tokens_per_s`] of `s`, its capacity measured here (one
/// saturated replica's run): None where no fleet serves it or one replica's
/// capacity does not size the fleet ([`crate::compare::load_check`]).
pub fn tipping_of(s: &crate::Scenario) -> Result<Option<(f64, f64)>, crate::ScenarioError> {
    if !s.uses_fleet() || crate::compare::load_check(s, 1.0).is_none() {
        return Ok(None);
    }
    let capacity = crate::compare::replica_capacity_per_s(s)?;
    Ok(crate::compare::load_check(s, capacity)
        .map(|l| tipping_output_tokens_per_s(&l, &band_for(&s.serving))))
}

/// [`tipping_loads`] in a sentence, with the load the traffic asks for:
/// "Between 28.8 and 37.0 tasks/s this fleet tips over; the traffic asks
/// for 32.0."
pub fn tipping_words(load: &LoadCheck, basis: &Basis) -> String {
    let (lo, hi) = tipping_loads(load, basis);
    let asked = load.demand_tokens_per_s * load.tasks_per_s_per_replica
        / load.tokens_per_s_per_replica.max(f64::MIN_POSITIVE);
    format!(
        "Between {lo:.1} and {hi:.1} tasks/s this fleet tips over; the traffic asks for {asked:.1}."
    )
}

/// The `p`-quantile (0..=1) of `values`, linearly between order
/// statistics; None when empty.
pub fn quantile(values: &[f64], p: f64) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let at = p.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let (i, f) = (at.floor() as usize, at.fract());
    let hi = v[(i + 1).min(v.len() - 1)];
    Some(v[i] + f * (hi - v[i]))
}

#[cfg(test)]
mod tests;
