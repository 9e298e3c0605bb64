//! Headroom: how far the load of one configuration can grow before its SLO
//! breaks — doubling, then bisecting the load multiplier.

use super::{PlanSlo, Runs};
use crate::Report;
use crate::scenario::{Arrival, Scenario, ScenarioError};
use serde::{Deserialize, Serialize};

/// How far the load of a configuration can grow before the SLO breaks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Headroom {
    /// Largest load multiplier found to pass.
    pub passes_at: f64,
    /// Smallest load multiplier found to fail (None if none failed up to the cap).
    pub fails_at: Option<f64>,
    /// Why it fails there.
    pub reason: Option<String>,
    /// In words.
    pub verdict: String,
    /// Simulated events the search took (within [`super::budget::HEADROOM_EVENTS`]).
    #[serde(default)]
    pub events: u64,
}

/// Scale a scenario's load (arrival rate, users or schedule) by `k`.
pub fn scale_load(s: &Scenario, k: f64) -> Scenario {
    let mut s = s.clone();
    match &mut s.workload.arrival {
        Arrival::Poisson { rate_per_s } | Arrival::Gamma { rate_per_s, .. } => *rate_per_s *= k,
        Arrival::ClosedLoop { users, .. } => {
            for u in users.iter_mut() {
                u.users = ((f64::from(u.users) * k).round() as u32).max(1);
            }
        }
        Arrival::Schedule { points, .. } => {
            for p in points.iter_mut() {
                p.rate_per_s *= k;
            }
        }
        Arrival::Stages { stages } => {
            for st in stages.iter_mut() {
                st.rate_per_s *= k;
            }
        }
        Arrival::Trace { .. } => {}
    }
    s
}

/// The headroom search as a state machine (`next` load multiplier's scenario to
/// run, `feed` its report), so a page can run it in slices.
#[derive(Clone, Debug)]
pub struct HeadroomSearch {
    base: Scenario,
    slo: PlanSlo,
    tolerance: f64,
    lo: f64,
    hi: Option<(f64, String)>,
    next: Option<f64>,
    result: Option<Headroom>,
    /// The largest multiplier tried: [`MAX_GROWTH`], or less where the
    /// scenario would leave the simulator's bounds (and why).
    cap: (f64, Option<String>),
    /// Simulated events the search may still use ([`super::budget::HEADROOM_EVENTS`]).
    budget: u64,
    /// Events per unit of load multiplier in the last run (to foresee the next).
    events_per_k: f64,
    /// Events its runs took.
    events: u64,
}

/// Largest load multiplier the headroom search tries.
pub const MAX_GROWTH: f64 = 64.0;

impl HeadroomSearch {
    /// Start at today's load.
    pub fn new(base: &Scenario, slo: PlanSlo, tolerance: f64) -> Self {
        Self {
            base: base.clone(),
            slo,
            tolerance: tolerance.max(1e-4),
            lo: 0.0,
            hi: None,
            next: Some(1.0),
            result: None,
            cap: growth_cap(base),
            budget: super::budget::HEADROOM_EVENTS,
            events_per_k: 0.0,
            events: 0,
        }
        .with_budget(super::budget::HEADROOM_EVENTS)
    }

    /// The same search under another work budget (`u64::MAX`: none).
    pub fn with_budget(mut self, events: u64) -> Self {
        self.budget = events;
        self.refuse_if_too_large();
        self
    }

    /// Said before starting: a first run clearly beyond the budget (twice
    /// over, by [`super::budget::run_events`]) is not started at all.
    fn refuse_if_too_large(&mut self) {
        let Some(first) = self.upcoming() else { return };
        let needs = super::budget::run_events(&first);
        if self.budget != u64::MAX && needs > 2.0 * self.budget as f64 {
            self.next = None;
            self.result = Some(Headroom {
                events: 0,
                passes_at: 0.0,
                fails_at: None,
                reason: None,
                verdict: format!(
                    "not asked: one run at today's load needs about {:.0}M simulated events, more than the work budget of {:.0}M — ask with a shorter duration_s",
                    needs / 1e6,
                    self.budget as f64 / 1e6
                ),
            });
        }
    }

    /// The scenario [`Runs::next`] gives, without taking it.
    pub fn upcoming(&self) -> Option<Scenario> {
        self.next.map(|k| {
            let mut s = scale_load(&self.base, k);
            s.limits.max_events = s.limits.max_events.min(self.budget.max(1));
            s
        })
    }

    /// The largest load multiplier the search tries, and the bound that stops
    /// it below [`MAX_GROWTH`], if one does.
    pub fn cap(&self) -> (f64, Option<&str>) {
        (self.cap.0, self.cap.1.as_deref())
    }

    /// The load multiplier of [`Self::next`].
    pub fn next_multiplier(&self) -> Option<f64> {
        self.next
    }

    /// Record the report of the last run.
    fn record(&mut self, report: &Report) {
        let Some(k) = self.next else { return };
        let cap = self.base.limits.max_events.min(self.budget.max(1));
        self.budget = self.budget.saturating_sub(report.events);
        self.events += report.events;
        if !report.complete && report.events >= cap && cap < self.base.limits.max_events {
            return self.out_of_budget(k);
        }
        self.events_per_k = report.events as f64 / k;
        match self.slo.check(report) {
            Ok(_) => self.lo = k,
            Err(why) if k == 1.0 => {
                self.next = None;
                self.result = Some(Headroom {
                    passes_at: 0.0,
                    fails_at: Some(1.0),
                    verdict: format!("already over the targets at today's load: {why}"),
                    reason: Some(why),
                    events: self.events,
                });
                return;
            }
            Err(why) => self.hi = Some((k, why)),
        }
        let (cap, why_cap) = &self.cap;
        self.next = match &self.hi {
            // Double until something fails…
            None if k < *cap => Some((k * 2.0).min(*cap)),
            None => {
                let verdict = match why_cap {
                    None => format!(
                        "meets the targets at {:.0}× today's load, the largest tried",
                        self.lo
                    ),
                    Some(why) => format!(
                        "meets the targets at {}× today's load, the most the simulator runs for this scenario (beyond it: {why})",
                        crate::format::show((self.lo * 100.0).round() / 100.0)
                    ),
                };
                self.result = Some(Headroom {
                    passes_at: self.lo,
                    fails_at: None,
                    reason: None,
                    verdict,
                    events: self.events,
                });
                None
            }
            // …then bisect to the tolerance.
            Some((h, why)) if (h - self.lo) / self.lo <= self.tolerance => {
                let first = why.split(';').next().unwrap_or(why).to_owned();
                self.result = Some(Headroom {
                    passes_at: self.lo,
                    fails_at: Some(*h),
                    verdict: format!("you can grow {:.2}× before {first}", self.lo),
                    reason: Some(why.clone()),
                    events: self.events,
                });
                None
            }
            Some((h, _)) => Some((self.lo + h) / 2.0),
        };
        // A run the budget cannot finish is not started: a run's work grows
        // with its load.
        if let Some(k) = self.next
            && self.budget != u64::MAX
            && self.events_per_k * k > self.budget as f64
        {
            self.out_of_budget(k);
        }
    }

    /// Stop before the run at `k`: the work budget is spent.
    fn out_of_budget(&mut self, k: f64) {
        self.next = None;
        let at = match &self.hi {
            Some((h, why)) => format!(
                "; it misses them at {h:.2}× ({})",
                why.split(';').next().unwrap_or(why)
            ),
            None => String::new(),
        };
        self.result = Some(Headroom {
            events: self.events,
            passes_at: self.lo,
            fails_at: self.hi.as_ref().map(|(h, _)| *h),
            reason: self.hi.as_ref().map(|(_, w)| w.clone()),
            verdict: if self.lo > 0.0 {
                format!(
                    "meets the targets at {:.2}× today's load{at}; {k:.2}× was not tried: it needs more than the rest of the work budget ({:.0}M simulated events) — ask with a shorter duration_s",
                    self.lo,
                    (self.events + self.budget) as f64 / 1e6
                )
            } else {
                format!(
                    "not settled: today's load alone needs more than the work budget ({:.0}M simulated events) — ask with a shorter duration_s",
                    (self.events + self.budget) as f64 / 1e6
                )
            },
        });
    }

    /// The answer, once `next` is None.
    pub fn result(&self) -> Option<&Headroom> {
        self.result.as_ref()
    }
}

/// The largest load multiplier (at most [`MAX_GROWTH`]) whose scenario stays
/// valid, and the first problem beyond it: a scenario at 1,600 req/s can grow
/// 62.5× before the simulator's 100,000 req/s bound, and the search says so
/// instead of failing on a rate the user never wrote.
fn growth_cap(base: &Scenario) -> (f64, Option<String>) {
    let valid = |k: f64| scale_load(base, k).check();
    let Err(beyond) = valid(MAX_GROWTH) else {
        return (MAX_GROWTH, None);
    };
    if valid(1.0).is_err() {
        return (1.0, beyond.problems.first().cloned());
    }
    let (mut lo, mut hi) = (1.0, MAX_GROWTH);
    // 40 halvings: well within a thousandth of the bound.
    for _ in 0..40 {
        let mid = (lo + hi) / 2.0;
        if valid(mid).is_ok() {
            lo = mid
        } else {
            hi = mid
        }
    }
    let why = valid(hi).err().and_then(|e| e.problems.into_iter().next());
    ((lo * 1000.0).floor() / 1000.0, why)
}

/// Bisect the load multiplier (doubling from 1× up to 64×, then halving the
/// bracket) until the passing and failing multipliers are within `tolerance`
/// (relative) of each other.
pub fn headroom(s: &Scenario, slo: PlanSlo, tolerance: f64) -> Result<Headroom, ScenarioError> {
    let mut h = HeadroomSearch::new(s, slo, tolerance);
    // Bounded: 6 doublings and at most ~40 halvings, within the work budget.
    super::drive(&mut h)?;
    h.result().cloned().ok_or_else(|| ScenarioError {
        problems: vec!["the headroom search did not converge".into()],
    })
}

impl Runs for HeadroomSearch {
    fn next(&mut self) -> Option<Scenario> {
        self.upcoming()
    }

    fn feed(&mut self, report: &Report) {
        self.record(report);
    }

    fn progress(&self) -> f64 {
        if self.result().is_some() { 1.0 } else { 0.5 }
    }

    /// Its settled misses count against the targets.
    fn begin(&self, sim: &mut crate::Simulation) {
        self.slo.watch(sim);
    }

    /// Whether the run already misses the targets whatever follows, and why
    /// (see [`PlanSlo::settled_fail`]).
    fn settled(&self, sim: &crate::Simulation) -> Option<String> {
        let s = self.upcoming()?;
        super::early_bound(&s).and_then(|u| self.slo.settled_fail(sim, u))
    }
}
