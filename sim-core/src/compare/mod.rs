//! API or self-hosted? Monthly cost of one workload both ways as load grows, and
//! the load where self-hosting becomes cheaper.
//!
//! API spend grows linearly with load: requests/s × 730 h × the mean price of a
//! request. A self-hosted fleet costs the same per hour busy or idle and grows in
//! whole replicas: enough that each runs at no more than [`TARGET_UTILISATION`]
//! of the request rate one replica sustains when saturated (simulated).

pub mod price;

use crate::api::ProviderTier;
use crate::report::HOURS_PER_MONTH;
use crate::scenario::{Arrival, Scenario, ScenarioError, UserStep};
use serde::{Deserialize, Serialize};

/// A fleet is sized to run each replica at no more than this share of its
/// saturated throughput, leaving room for bursts and for latency.
pub const TARGET_UTILISATION: f64 = 0.8;

/// Monthly costs at one load.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostPoint {
    /// Tasks per second.
    pub load_per_s: f64,
    /// API spend per month.
    pub api_usd_per_month: f64,
    /// Replicas the self-hosted fleet needs.
    pub replicas: u32,
    /// Fleet cost per month.
    pub self_hosted_usd_per_month: f64,
}

/// The comparison over a range of loads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostComparison {
    /// The API tier priced.
    pub tier: String,
    /// Mean API price of one task of the workload (all its calls; one
    /// request when a task is one call), at the scenario's own load.
    pub api_usd_per_request: f64,
    /// Requests/s one replica sustains when saturated (simulated).
    pub replica_capacity_per_s: f64,
    /// One replica's cost per month.
    pub replica_usd_per_month: f64,
    /// The costs at each load asked for.
    pub points: Vec<CostPoint>,
    /// The lowest load at which self-hosting is cheaper, if any.
    pub crossover_load_per_s: Option<f64>,
    /// In words.
    pub verdict: String,
}

/// The mean API price of one task of `scenario`'s workload on `tier` at the
/// scenario's own peak load ([`price::usd_per_task`]).
pub fn api_usd_per_request(scenario: &Scenario, tier: &ProviderTier) -> f64 {
    price::usd_per_task(scenario, tier, scenario.peak_tasks_per_s())
}

/// Requests/s one replica of `scenario.serving` sustains when saturated: closed-loop
/// users with no think time, twice as many as the batch holds (at most 1,024), for 60 s.
pub fn replica_capacity_per_s(scenario: &Scenario) -> Result<f64, ScenarioError> {
    let s = capacity_scenario(scenario);
    Ok(capacity_from(scenario, &crate::run_scenario(s)?))
}

/// The saturation run behind [`replica_capacity_per_s`] (for callers that run
/// it themselves, in slices).
pub fn capacity_scenario(scenario: &Scenario) -> Scenario {
    capacity_scenario_over(scenario, CAPACITY_RUN_S)
}

/// [`capacity_scenario`] over `duration_s` simulated seconds: a replica
/// whose requests take minutes (long prompts on a large model) needs a
/// longer run before its first third is behind it.
pub fn capacity_scenario_over(scenario: &Scenario, duration_s: f64) -> Scenario {
    let mut s = scenario.clone();
    s.api = None;
    s.serving.replicas = 1;
    s.duration_s = duration_s;
    let users = (2 * s.serving.batching.max_seqs()).clamp(2, 1024);
    s.workload.arrival = Arrival::ClosedLoop {
        users: vec![UserStep { at_s: 0.0, users }],
        think_time_s: crate::dist::Dist::Fixed { value: 0.0 },
    };
    s
}

/// The offered load against what the fleet can serve: from the scenario's
/// arrival rate (a formula) and one saturated replica's measured capacity.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LoadCheck {
    /// Output tokens/s the traffic asks for, on average over the arrival
    /// window: tasks/s × generated tokens per task.
    pub demand_tokens_per_s: f64,
    /// Output tokens/s the fleet makes when saturated: replicas × one
    /// replica's saturated tasks/s × tokens per task.
    pub capacity_tokens_per_s: f64,
    /// One saturated replica's tasks/s.
    pub tasks_per_s_per_replica: f64,
    /// One saturated replica's output tokens/s.
    pub tokens_per_s_per_replica: f64,
    /// Replicas the peak of the traffic needs at full load (no headroom).
    pub replicas_needed: u32,
    /// Demand above capacity: the queue grows for as long as it lasts.
    pub overloaded: bool,
}

/// The load check of a scenario served entirely by its fleet, given one
/// replica's saturated tasks/s; None for closed-loop users (their rate
/// adapts to the fleet), when API tiers serve some class, and when several
/// pools or routing rules share the traffic, or the pool autoscales (one
/// replica's capacity does not say what the whole deployment serves).
pub fn load_check(s: &Scenario, capacity_per_replica: f64) -> Option<LoadCheck> {
    if s.workload
        .classes
        .iter()
        .any(|k| s.backend_of(&k.name).is_some())
        || s.pool_count() > 1
        || !s.routing.is_empty()
        || s.serving.autoscale.is_some()
        || capacity_per_replica <= 0.0
    {
        return None;
    }
    let (mean, peak) = s.offered_tasks_per_s()?;
    let (out_per_task, _) = s.mean_tokens();
    let capacity = capacity_per_replica * f64::from(s.serving.replicas);
    Some(LoadCheck {
        demand_tokens_per_s: mean * out_per_task,
        capacity_tokens_per_s: capacity * out_per_task,
        tasks_per_s_per_replica: capacity_per_replica,
        tokens_per_s_per_replica: capacity_per_replica * out_per_task,
        replicas_needed: libm::ceil(peak / capacity_per_replica).clamp(1.0, 1e6) as u32,
        overloaded: mean > capacity,
    })
}

/// What `replicas` replicas of the scenario's fleet cost a month, busy or
/// idle: replicas × GPUs per replica × $/GPU-hour × [`HOURS_PER_MONTH`].
pub fn fleet_usd_per_month(s: &Scenario, replicas: u32) -> f64 {
    f64::from(replicas)
        * f64::from(s.serving.gpus_per_replica)
        * s.usd_per_gpu_hour()
        * HOURS_PER_MONTH
}

/// Simulated seconds of the saturation run.
pub const CAPACITY_RUN_S: f64 = 60.0;

/// Tasks/s one replica sustained in the report of [`capacity_scenario`]:
/// the tokens it generated per second once saturated (the windows after the
/// first third of the run, while every user is active), divided by the
/// tokens a task generates on average. Counting completed tasks instead
/// overstates it: a run that starts cold finishes its short requests first
/// (36 tasks/s against the 28.8 the default chatbot serves when
/// overloaded); tokens generated per second do not depend on which
/// requests happen to finish inside the window.
pub fn capacity_from(scenario: &Scenario, report: &crate::Report) -> f64 {
    capacity_from_over(scenario, report, CAPACITY_RUN_S)
}

/// [`capacity_from`] for a run of [`capacity_scenario_over`] `duration_s`.
pub fn capacity_from_over(scenario: &Scenario, report: &crate::Report, duration_s: f64) -> f64 {
    let s = &report.series;
    let (from, to) = (duration_s / 3.0, duration_s);
    let (mut tokens, mut time) = (0.0, 0.0);
    for (i, rate) in s.output_tokens_per_s.iter().enumerate() {
        let start = i as f64 * s.window_s;
        if start >= from && start + s.window_s <= to {
            tokens += rate * s.window_s;
            time += s.window_s;
        }
    }
    let (per_task, _) = scenario.mean_tokens();
    if time <= 0.0 || per_task <= 0.0 {
        return 0.0;
    }
    tokens / time / per_task
}

/// The index of the API tier named `tier` in `s` (the first when None), as
/// `compare` takes it; an unknown name is refused with the tiers there are.
pub fn tier_index(s: &Scenario, tier: Option<&str>) -> Result<usize, String> {
    let names: Vec<&str> = s
        .api
        .as_ref()
        .map(|a| a.tiers.iter().map(|t| t.name.as_str()).collect())
        .unwrap_or_default();
    match tier {
        None => Ok(0),
        Some(name) => names
            .iter()
            .position(|t| *t == name)
            .ok_or_else(|| format!("no tier {name:?}; the scenario has: {}", names.join(", "))),
    }
}

/// Compare the API tier `tier` with the self-hosted fleet of `scenario` at each load.
pub fn compare(
    scenario: &Scenario,
    tier: usize,
    loads: &[f64],
) -> Result<CostComparison, ScenarioError> {
    scenario.check()?;
    check_inputs(scenario, tier, loads)?;
    let capacity = replica_capacity_per_s(scenario)?;
    compare_with_capacity(scenario, tier, loads, capacity)
}

fn check_inputs(scenario: &Scenario, tier: usize, loads: &[f64]) -> Result<(), ScenarioError> {
    let bad = |m: String| ScenarioError { problems: vec![m] };
    let api = scenario
        .api
        .as_ref()
        .ok_or_else(|| bad("compare needs a scenario with an api section".into()))?;
    api.tiers.get(tier).ok_or_else(|| {
        bad(format!(
            "tier index must be 0..{}, got {tier}",
            api.tiers.len()
        ))
    })?;
    if loads.is_empty() || loads.len() > 1000 {
        return Err(bad(format!(
            "loads must be 1..=1000 values, got {}",
            loads.len()
        )));
    }
    if let Some((i, l)) = loads
        .iter()
        .enumerate()
        .find(|(_, l)| !(l.is_finite() && **l > 0.0 && **l <= 1e6))
    {
        return Err(bad(format!(
            "loads[{i}] must be > 0 and ≤ 1000000 tasks/s, got {}",
            crate::format::show(*l)
        )));
    }
    Ok(())
}

/// [`compare`] with the replica capacity already measured (tasks/s of one
/// saturated replica).
pub fn compare_with_capacity(
    scenario: &Scenario,
    tier: usize,
    loads: &[f64],
    capacity: f64,
) -> Result<CostComparison, ScenarioError> {
    check_inputs(scenario, tier, loads)?;
    let bad = |m: String| ScenarioError { problems: vec![m] };
    let t = scenario
        .api
        .as_ref()
        .and_then(|a| a.tiers.get(tier))
        .ok_or_else(|| bad(format!("tier index {tier} is not a tier of the scenario")))?;
    let per_request = api_usd_per_request(scenario, t);
    // A prompt cache makes a task cheaper as load grows (it is hit more).
    let pricer = price::TaskPrice::new(scenario, t);
    let price_at = |load: f64| match t.prompt_cache {
        None => per_request,
        Some(_) => pricer.at(load),
    };
    let replica_month = fleet_usd_per_month(scenario, 1);
    let month_s = HOURS_PER_MONTH * 3600.0;
    let usable = capacity * TARGET_UTILISATION;
    let points = loads
        .iter()
        .map(|&load| {
            let replicas = if usable > 0.0 {
                libm::ceil(load / usable).max(1.0)
            } else {
                f64::INFINITY
            };
            CostPoint {
                load_per_s: load,
                api_usd_per_month: load * month_s * price_at(load),
                replicas: replicas.min(f64::from(u32::MAX)) as u32,
                self_hosted_usd_per_month: replicas * replica_month,
            }
        })
        .collect();
    // API: a·λ. Fleet: k·F on ((k−1)·c, k·c]. The fleet wins from λ = F/a if one
    // replica carries that load (F/a ≤ c); otherwise it never does, since every
    // extra replica adds F but only c of load.
    let a = month_s * per_request;
    let crossover = if t.prompt_cache.is_none() {
        let break_even = if a > 0.0 {
            replica_month / a
        } else {
            f64::INFINITY
        };
        (break_even <= usable).then_some(break_even)
    } else {
        // The API's monthly cost λ·a(λ) still grows with λ: bisect for F.
        let over = |load: f64| load * month_s * price_at(load) >= replica_month;
        (usable > 0.0 && over(usable)).then(|| {
            let (mut lo, mut hi) = (0.0, usable);
            for _ in 0..60 {
                let mid = 0.5 * (lo + hi);
                if over(mid) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            hi
        })
    };
    let verdict = match crossover {
        Some(x) => format!(
            "self-hosting on {} × {} is cheaper from {x:.2} tasks/s ({:.0} tasks a month); below that the API is",
            scenario.serving.gpus_per_replica,
            scenario.serving.gpu.spec().name,
            x * month_s
        ),
        None => format!(
            "the API stays cheaper at every load: one replica costs {} a month but carries only {usable:.2} tasks/s, which cost {} on the API",
            crate::format::usd(replica_month),
            crate::format::usd(usable * month_s * price_at(usable))
        ),
    };
    Ok(CostComparison {
        tier: t.name.clone(),
        api_usd_per_request: per_request,
        replica_capacity_per_s: capacity,
        replica_usd_per_month: replica_month,
        points,
        crossover_load_per_s: crossover,
        verdict,
    })
}

/// Cost curves of a scenario: self-hosted $/Mtok as load grows, and API vs
/// self-hosted monthly cost when the scenario has an API tier.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostCurves {
    /// (load in tasks/s, $ per million output tokens), up to 1.5 × what the
    /// fleet sustains; beyond capacity the fleet makes no more tokens.
    pub per_mtok: Vec<(f64, f64)>,
    /// API vs self-hosted, up to 3 × the fleet's capacity.
    pub comparison: Option<CostComparison>,
    /// Today's load, tasks/s ([`Scenario::peak_tasks_per_s`]): where the
    /// scenario sits on both curves.
    pub today_per_s: f64,
}

/// The cost curves of a scenario, given the tasks/s one saturated replica
/// sustains ([`replica_capacity_per_s`], or [`capacity_from`] of a
/// [`capacity_scenario`] run): the fleet costs the same per hour at every
/// load, so $/Mtok = $/h ÷ (tokens/s at min(load, capacity) × 3,600) × 10⁶.
pub fn cost_curves(s: &Scenario, capacity: f64) -> CostCurves {
    let fleet = capacity * f64::from(s.serving.replicas);
    let (out_per_task, _) = s.mean_tokens();
    let usd_per_hour =
        f64::from(s.serving.replicas * s.serving.gpus_per_replica) * s.usd_per_gpu_hour();
    let per_mtok = (1..=30)
        .map(|i| fleet * 1.5 * f64::from(i) / 30.0)
        .filter(|l| *l > 0.0)
        .map(|l| {
            (
                l,
                usd_per_hour / (l.min(fleet) * out_per_task * 3600.0) * 1e6,
            )
        })
        .collect();
    let comparison = s.api.as_ref().and_then(|a| {
        let tier = a
            .tiers
            .iter()
            .position(|t| t.name == a.default_backend)
            .unwrap_or(0);
        let max = (fleet * 3.0).max(1e-3);
        let loads: Vec<f64> = (1..=40).map(|i| max * f64::from(i) / 40.0).collect();
        compare_with_capacity(s, tier, &loads, capacity).ok()
    });
    CostCurves {
        per_mtok,
        comparison,
        today_per_s: s.peak_tasks_per_s(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_per_token_falls_with_load_until_the_fleet_is_full_then_stays() {
        let s = crate::presets::chatbot_h100();
        let capacity = 10.0;
        let c = cost_curves(&s, capacity);
        assert_eq!(c.per_mtok.len(), 30);
        assert!(c.comparison.is_none(), "no API tier, no comparison");
        let (out, _) = s.mean_tokens();
        let usd_per_hour = s.usd_per_gpu_hour();
        for &(load, usd) in &c.per_mtok {
            let tokens_per_s = load.min(capacity) * out;
            let want = usd_per_hour / (tokens_per_s * 3600.0) * 1e6;
            assert!(
                (usd - want).abs() <= want * 1e-12,
                "{load}: {usd} vs {want}"
            );
        }
        for w in c.per_mtok.windows(2) {
            assert!(w[1].1 <= w[0].1, "never dearer at a higher load");
        }
        let full = c.per_mtok.last().expect("points").1;
        let at_capacity = c
            .per_mtok
            .iter()
            .find(|(l, _)| *l >= capacity)
            .expect("past capacity")
            .1;
        assert_eq!(full, at_capacity, "flat beyond capacity");
        let api = cost_curves(&crate::presets::pay_for_speed(), capacity);
        assert_eq!(api.comparison.expect("an API tier").points.len(), 40);
    }

    #[test]
    fn the_crossover_is_where_the_curves_meet_and_costs_are_monotone() {
        let mut s = crate::presets::pay_for_speed();
        s.serving.batching = crate::scenario::Batching::ChunkedPrefill {
            max_num_seqs: 128,
            max_num_batched_tokens: 4096,
            chunk_tokens: 4096,
        };
        let loads: Vec<f64> = (1..=40).map(|i| f64::from(i) * 0.5).collect();
        let c = compare(&s, 0, &loads).expect("valid");
        // $0.0034 a request on the API.
        assert!((c.api_usd_per_request - 0.0034).abs() < 1e-9);
        let x = c
            .crossover_load_per_s
            .expect("an H100 beats this API at some load");
        // At the crossover the one-replica fleet equals the API bill.
        assert!(
            (x * HOURS_PER_MONTH * 3600.0 * c.api_usd_per_request - c.replica_usd_per_month).abs()
                < 1e-6
        );
        for p in &c.points {
            if p.load_per_s >= x {
                assert!(
                    p.self_hosted_usd_per_month <= p.api_usd_per_month + 1e-6,
                    "{p:?}"
                );
            } else {
                assert!(p.self_hosted_usd_per_month > p.api_usd_per_month, "{p:?}");
            }
        }
        for w in c.points.windows(2) {
            assert!(w[1].api_usd_per_month > w[0].api_usd_per_month);
            assert!(w[1].self_hosted_usd_per_month >= w[0].self_hosted_usd_per_month);
        }
    }

    #[test]
    fn bad_inputs_are_named() {
        let s = crate::presets::pay_for_speed();
        assert!(
            compare(&s, 3, &[1.0]).expect_err("no tier 3").problems[0]
                .contains("tier index must be 0..1, got 3")
        );
        assert!(
            compare(&s, 0, &[2.0, f64::NAN])
                .expect_err("NaN load")
                .problems[0]
                .contains("loads[1] must be > 0 and ≤ 1000000 tasks/s, got NaN")
        );
        assert!(
            compare(&crate::presets::chatbot_h100(), 0, &[1.0])
                .expect_err("no api")
                .problems[0]
                .contains("api section")
        );
    }
}
