//! The planner for a split deployment: the cheapest prefill:decode ratio
//! (xPyD) of the scenario's first pool that meets the targets, beside the
//! fewest colocated replicas of the same setup that do.
//!
//! Both searches keep the pool's GPU, GPUs per replica, model, weights and
//! batching (the ordinary planner searches those); they choose replica
//! counts. The colocated count doubles until the targets hold, then
//! bisects. The split walks the frontier: for each prefill count P from 1
//! the fewest decode replicas D(P) that meet the targets, bisected below
//! D(P − 1) (more prefill replicas never need more decode ones), stopping
//! once P alone costs as much as the cheapest split found. Every run is a
//! planning run (it stops as soon as its verdict is settled) and counts
//! against one work budget of simulated events; what the budget cuts off is
//! said.

use super::{PlanSlo, planning_run};
use crate::scenario::{KvLink, Scenario, bounds};
use serde::{Deserialize, Serialize};

/// One replica count tried.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tried {
    /// Prefill replicas (0: colocated, every replica prefills and decodes).
    pub prefill: u32,
    /// Decode replicas (colocated: the replicas).
    pub decode: u32,
    /// Cost at this load, $ per month.
    pub usd_per_month: f64,
    /// p99 first visible token, ms.
    pub ttft_p99_ms: Option<f64>,
    /// p99 time per output token, ms.
    pub tpot_p99_ms: Option<f64>,
    /// Met the targets (with its worst margin), or why not.
    pub verdict: Result<f64, String>,
}

/// The answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SplitPlan {
    /// The link the split's caches cross.
    pub link: KvLink,
    /// The fewest colocated replicas that meet the targets.
    pub colocated: Option<Tried>,
    /// The cheapest split that does.
    pub split: Option<Tried>,
    /// Every run, in the order run.
    pub tried: Vec<Tried>,
    /// Simulated events used.
    pub events: u64,
    /// What the work budget left unsettled, if anything.
    pub unsettled: Option<String>,
}

/// Most replicas on either side of a split, and colocated.
pub const MAX_SIDE: u32 = 64;

/// Plan `s` (its first pool's setup; other pools and rules go) against
/// `slo` within `budget_events`, its caches crossing `link` (the
/// scenario's own hand-off link when it has one).
pub fn plan_split(
    s: &Scenario,
    slo: PlanSlo,
    link: Option<KvLink>,
    budget_events: u64,
) -> Result<SplitPlan, String> {
    let slo = slo.checked()?;
    let mut base = s.clone();
    let link = link
        .or_else(|| base.serving.disaggregation.as_ref().map(|h| h.link))
        .unwrap_or(KvLink::Infiniband);
    base.serving.disaggregation = None;
    base.serving.autoscale = None;
    base.pools.clear();
    base.routing.clear();
    if base
        .workload
        .classes
        .iter()
        .any(|k| base.backend_of(&k.name).is_some())
    {
        return Err("a split is planned for self-hosted traffic; this scenario sends some to an API tier (plan it with the ordinary planner)".into());
    }
    let max = MAX_SIDE.min(bounds::REPLICAS / 2);
    let mut p = Planner {
        slo,
        run: Box::new(planning_run(slo)),
        budget: budget_events,
        plan: SplitPlan {
            link,
            colocated: None,
            split: None,
            tried: Vec::new(),
            events: 0,
            unsettled: None,
        },
    };
    // Colocated: double, then bisect.
    let colocated = |n: u32| {
        let mut c = base.clone();
        c.serving.replicas = n;
        c
    };
    p.plan.colocated = p.fewest(1, max, |n| (0, n), &colocated, false)?;
    // Split: the frontier.
    let mut d_cap = max;
    let mut best: Option<u32> = None;
    for prefill in 1..=max {
        if best.is_some_and(|b| prefill + 1 >= b) || p.out_of_budget() {
            break;
        }
        let split = |d: u32| base.split_prefill_decode(prefill, d, link);
        let found = p.fewest(1, d_cap, |d| (prefill, d), &split, true)?;
        if let Some(t) = found {
            d_cap = t.decode;
            let total = t.prefill + t.decode;
            if best.is_none_or(|b| total < b) {
                best = Some(total);
                p.plan.split = Some(t);
            }
        }
    }
    if p.out_of_budget() && p.plan.unsettled.is_none() {
        p.plan.unsettled = Some(format!(
            "the work budget of {} simulated events ran out: larger prefill counts were not tried",
            crate::format::thousands(budget_events)
        ));
    }
    Ok(p.plan)
}

struct Planner {
    slo: PlanSlo,
    run: Box<dyn FnMut(Scenario) -> Result<crate::Report, crate::ScenarioError>>,
    budget: u64,
    plan: SplitPlan,
}

impl Planner {
    fn out_of_budget(&self) -> bool {
        self.plan.events >= self.budget
    }

    /// Run one candidate (within what the budget has left) and record it.
    fn try_one(&mut self, counts: (u32, u32), mut s: Scenario) -> Result<Tried, String> {
        let left = self.budget.saturating_sub(self.plan.events);
        s.limits.max_events = s.limits.max_events.min(left.max(super::EARLY_CHECK_EVENTS));
        let r = (self.run)(s).map_err(|e| e.to_string())?;
        self.plan.events = self.plan.events.saturating_add(r.events);
        if r.events >= left && !r.complete && self.plan.unsettled.is_none() {
            self.plan.unsettled = Some(format!(
                "the work budget of {} simulated events ran out during a run of {}P{}D (0P: colocated)",
                crate::format::thousands(self.budget),
                counts.0,
                counts.1
            ));
        }
        let t = Tried {
            prefill: counts.0,
            decode: counts.1,
            usd_per_month: r.cost.usd_per_month,
            ttft_p99_ms: r.overall.first_visible.p99_ms,
            tpot_p99_ms: r.overall.tpot.p99_ms,
            verdict: self.slo.check(&r),
        };
        self.plan.tried.push(t.clone());
        Ok(t)
    }

    /// The fewest `n` in `lo..=hi` whose scenario meets the targets (the
    /// verdict is taken to hold from there up): doubling from `lo`, then
    /// bisecting. None when `hi` misses too, or the budget ran out first.
    /// With `decode_side`, doubling stops early when it cannot help: the
    /// time per token already meets its target and doubling the decode
    /// replicas did not bring the first token 5 % closer — the prefill side
    /// is what is short.
    fn fewest(
        &mut self,
        lo: u32,
        hi: u32,
        counts: impl Fn(u32) -> (u32, u32),
        scenario: &dyn Fn(u32) -> Scenario,
        decode_side: bool,
    ) -> Result<Option<Tried>, String> {
        let mut miss = lo - 1;
        let mut n = lo;
        let mut before: Option<Tried> = None;
        let hit = loop {
            if self.out_of_budget() {
                return Ok(None);
            }
            let t = self.try_one(counts(n), scenario(n))?;
            if t.verdict.is_ok() {
                break t;
            }
            miss = n;
            if n >= hi || (decode_side && prefill_short(before.as_ref(), &t, self.slo)) {
                return Ok(None);
            }
            before = Some(t);
            n = (n * 2).min(hi);
        };
        // The varied count is the decode side (colocated: the replicas).
        let mut hit = hit;
        while hit.decode > miss + 1 {
            if self.out_of_budget() {
                break;
            }
            let mid = miss + (hit.decode - miss) / 2;
            let t = self.try_one(counts(mid), scenario(mid))?;
            if t.verdict.is_ok() {
                hit = t;
            } else {
                miss = mid;
            }
        }
        Ok(Some(hit))
    }
}

/// Whether doubling the decode side from `before` to `now` showed that only
/// more prefill replicas can help: TPOT meets its target and the first
/// token came less than 5 % closer.
fn prefill_short(before: Option<&Tried>, now: &Tried, slo: PlanSlo) -> bool {
    let (Some(b), Some(tpot), Some(ttft)) = (before, now.tpot_p99_ms, now.ttft_p99_ms) else {
        return false;
    };
    tpot <= slo.tpot_p99_ms && b.ttft_p99_ms.is_some_and(|was| ttft > 0.95 * was)
}
