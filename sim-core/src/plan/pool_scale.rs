//! The searches a plan over pools runs on each self-hosted answer of N
//! fixed replicas ([`super::pools`]), one bisection each:
//!
//! - **autoscaling** (where the load varies): the same setup autoscaled on
//!   requests waiting per replica, at most 2N, the fewest kept up bisected in
//!   1..N;
//! - **overflow to an API tier** (where the scenario has API tiers): fewer
//!   replicas, bisected in 1..N, with a rule sending a request to the
//!   tier whose price per request of this traffic is lowest while the pool
//!   has more than [`overflow_queue`] requests waiting per replica.
//!
//! Each keeps the cheapest passing run it saw (its cost is the pool's
//! replica-hours plus the API's tokens, so the fewest replicas is not always
//! the cheapest) and says what it found.

use super::pool_plan::{Answer, Overflowed, Scaled, overflow_queue, overflow_rule};
use super::pools::PoolQuestion;
use super::{Evaluated, Space, apply_config};
use crate::Report;
use crate::format::usd;
use crate::scenario::Scenario;
use crate::sweep::Summary;

/// What a search tries.
#[derive(Clone, Debug)]
pub(super) enum Kind {
    /// The fixed setup autoscaled.
    Autoscale,
    /// Fewer replicas overflowing to this API tier.
    Overflow(String),
}

/// A bisection of the fewest replicas: `lo` failing (0: scaling to zero, or
/// no pool at all, is not tried), `hi` passing (the fixed answer's count).
#[derive(Clone, Debug)]
pub(super) struct ScaleSearch {
    pub question: usize,
    pub lo: i64,
    pub hi: i64,
    pub kind: Kind,
}

impl ScaleSearch {
    /// The replica count it runs next, if it is not done.
    pub fn next(&self) -> Option<u32> {
        (self.hi - self.lo > 1).then(|| ((self.lo + self.hi) / 2) as u32)
    }
}

/// Whether a scenario's load varies enough for autoscaling to save anything:
/// its peak is over 1.2 × its mean.
fn varies(s: &Scenario) -> bool {
    s.offered_tasks_per_s()
        .is_some_and(|(mean, _)| s.peak_tasks_per_s() > 1.2 * mean)
}

/// The most replicas an autoscaled answer may reach: twice the fixed
/// answer's (replicas started late for a rise clear its backlog), within the
/// space's bound. Replicas never started cost nothing.
fn scaled_max(fixed: &Evaluated, space: &Space) -> u32 {
    (2 * fixed.replicas)
        .min(space.max_replicas)
        .max(fixed.replicas)
}

/// The API tier whose mean price per request of `s`'s traffic is lowest
/// (the first of equals).
fn cheapest_tier(s: &Scenario) -> Option<String> {
    let api = s.api.as_ref()?;
    api.tiers
        .iter()
        .map(|t| (crate::compare::api_usd_per_request(s, t), &t.name))
        .fold(None, |best: Option<(f64, &String)>, (c, n)| match best {
            Some((b, _)) if b <= c => best,
            _ => Some((c, n)),
        })
        .map(|(_, n)| n.clone())
}

/// The searches to run on question `i`'s cheapest self-hosted setup
/// `hosted`, and why each of the two was not tried where it was not:
/// (searches, autoscaling's note, overflow's note).
pub(super) fn start(
    i: usize,
    q: &PoolQuestion,
    hosted: Option<&Evaluated>,
) -> (Vec<ScaleSearch>, Option<String>, Option<String>) {
    let Some(e) = hosted.filter(|e| matches!(e.config, super::Config::SelfHosted { .. })) else {
        return (Vec::new(), None, None);
    };
    let one = e.replicas < 2;
    let why_one = || Some("not tried: one replica is the least a served class keeps up".to_owned());
    let mut out = Vec::new();
    let search = |kind| ScaleSearch {
        question: i,
        lo: 0,
        hi: i64::from(e.replicas),
        kind,
    };
    let scaling = if !varies(&q.scenario) {
        Some("not tried: the load is steady (its peak within 1.2 × its mean), so replicas kept up for it are all needed".into())
    } else if one {
        why_one()
    } else {
        out.push(search(Kind::Autoscale));
        None
    };
    let overflow = match cheapest_tier(&q.scenario) {
        None => None,
        Some(_) if one => why_one(),
        Some(tier) => {
            out.push(search(Kind::Overflow(tier)));
            None
        }
    };
    (out, scaling, overflow)
}

/// The scenario of `search`'s next run on question `q`'s self-hosted setup `fixed`.
pub(super) fn step(search: &ScaleSearch, q: &PoolQuestion, fixed: &Evaluated) -> Option<Scenario> {
    let n = search.next()?;
    let mut s = q.scenario.clone();
    let api = s.api.clone();
    apply_config(&mut s, &fixed.config, fixed.replicas).ok()?;
    match &search.kind {
        Kind::Autoscale => {
            super::pool_plan::autoscale(&mut s, n, scaled_max(fixed, &q.space));
        }
        Kind::Overflow(tier) => {
            let mut api = api?;
            api.routes.clear();
            s.api = Some(api);
            s.serving.replicas = n;
            let pool = s.serving.pool_name().to_owned();
            s.routing = vec![overflow_rule(None, &pool, tier)];
        }
    }
    Some(s)
}

/// Record the report of `search`'s run on question `q` into its answer `a`:
/// the bisection moves, a cheaper passing run is kept, and once the search
/// is done its note says what it found.
pub(super) fn record(search: &mut ScaleSearch, q: &PoolQuestion, a: &mut Answer, report: &Report) {
    let n = search.next().unwrap_or(0);
    let passed = q.slo.check(report).is_ok();
    if passed {
        search.hi = i64::from(n);
    } else {
        search.lo = i64::from(n);
    }
    let Some(fixed) = a.hosted.clone() else {
        return;
    };
    let cost = report.cost.usd_per_month;
    match &search.kind {
        Kind::Autoscale => {
            let max = scaled_max(&fixed, &q.space);
            if passed && a.scaled.as_ref().is_none_or(|s| cost < s.usd_per_month) {
                let peak = report
                    .pools
                    .first()
                    .map_or(fixed.replicas, |p| p.replicas_peak);
                a.scaled = Some(Scaled {
                    min_replicas: n,
                    max_replicas: max,
                    peak_replicas: peak,
                    usd_per_month: cost,
                    description: if peak > n {
                        format!(
                            "{} autoscaled {n}–{max} (at most {peak} up)",
                            fixed.config.describe(n)
                        )
                    } else {
                        // Never scaled: the fixed count `n` is the answer.
                        format!(
                            "{} (autoscaling from {n} never started more)",
                            fixed.config.describe(n)
                        )
                    },
                    summary: Summary::of(report),
                });
            }
            if search.next().is_none() {
                a.scaling_note = Some(scaling_note(a, &fixed));
            }
        }
        Kind::Overflow(tier) => {
            if passed && a.overflow.as_ref().is_none_or(|o| cost < o.usd_per_month) {
                let arrived = report.requests.arrived.max(1) as f64;
                let api_share = report
                    .api
                    .as_ref()
                    .map_or(0.0, |x| x.requests as f64 / arrived);
                a.overflow = Some(Overflowed {
                    replicas: n,
                    tier: tier.clone(),
                    queue_per_replica: overflow_queue(),
                    api_share,
                    usd_per_month: cost,
                    description: format!(
                        "{} overflowing to {tier} above {} waiting per replica ({:.0} % of requests)",
                        fixed.config.describe(n),
                        overflow_queue(),
                        api_share * 100.0
                    ),
                    summary: Summary::of(report),
                });
            }
            if search.next().is_none() {
                a.overflow_note = Some(match &a.overflow {
                    Some(o) if o.usd_per_month < fixed.usd_per_month => format!(
                        "{} replica(s) and {} for {:.0} % of the requests cost {} against {} for {} fixed",
                        o.replicas,
                        o.tier,
                        o.api_share * 100.0,
                        usd(o.usd_per_month),
                        usd(fixed.usd_per_month),
                        fixed.replicas
                    ),
                    Some(o) => format!(
                        "{} replicas overflowing to {} meet the targets but cost {}, no less than {} fixed",
                        o.replicas,
                        o.tier,
                        usd(o.usd_per_month),
                        usd(fixed.usd_per_month)
                    ),
                    None => format!(
                        "fewer than {} replicas overflowing to {tier} miss the targets (the tier's own latency, its rate limits, or the share it takes)",
                        fixed.replicas
                    ),
                });
            }
        }
    }
}

/// What the autoscaling search found, in words.
fn scaling_note(a: &Answer, fixed: &Evaluated) -> String {
    match &a.scaled {
        Some(s) if !s.scales() && s.usd_per_month < fixed.usd_per_month => format!(
            "{} replicas kept up meet the targets and the autoscaler never started more: {} against {} for the fixed search's answer (which did not settle lower within its budget)",
            s.min_replicas,
            usd(s.usd_per_month),
            usd(fixed.usd_per_month)
        ),
        Some(s) if s.usd_per_month < fixed.usd_per_month => format!(
            "autoscaling from {} to {} costs {} against {} fixed",
            s.min_replicas,
            s.max_replicas,
            usd(s.usd_per_month),
            usd(fixed.usd_per_month)
        ),
        Some(s) => format!(
            "autoscaling from {} to {} meets the targets but costs {}, no less than {} fixed",
            s.min_replicas,
            s.max_replicas,
            usd(s.usd_per_month),
            usd(fixed.usd_per_month)
        ),
        None => format!(
            "autoscaling below {} replicas kept warm misses the targets (cold starts take too long for the load's rises)",
            fixed.replicas
        ),
    }
}
