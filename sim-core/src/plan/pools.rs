//! The planner over pools: the cheapest set of pools (and API share) that
//! meets each class's targets.
//!
//! Each class is planned on its own traffic (its share of the arrivals) and
//! its own targets, as a question of the ordinary planner: a pool of its own
//! or an API tier; for a few classes ([`pool_split::MAX_GROUPED`]), every
//! set of them is planned too, sharing one pool at its tightest targets. The
//! whole traffic is planned once more on one setup, at the tightest class's
//! targets. Where the load varies over time, each
//! self-hosted answer is tried autoscaled too ([`crate::scenario::Autoscale`] on requests
//! waiting per replica, at most the fixed answer's replicas, the fewest kept
//! warm bisected), and kept where its replica-hours cost less. The cheapest
//! cover of the classes by groups with answers ([`pool_split::cheapest_cover`])
//! is then composed into one deployment (a pool per self-hosted group, a
//! rule per class) and run together, every class judged against its own
//! targets: the split is an answer only if that run meets them.
//!
//! The questions' plans come from the ordinary planner on any path (CLI
//! threads, page slices, Web Workers); the rest is a state machine
//! ([`PoolPlanner::next`], [`PoolPlanner::feed`]) like the headroom search.

use super::{Plan, PlanSlo, Runs, Space, budget, pool_scale, pool_split};
use crate::Report;
use crate::scenario::{Arrival, Scenario};
use crate::sweep::Summary;

pub use super::pool_plan::{Answer, Chosen, Overflowed, PoolPlan, Scaled, Split};

/// Most classes a plan over pools plans one by one (one pool each at most,
/// within the scenario's bound on pools).
pub const MAX_CLASSES: usize = 8;

/// One question of a plan over pools: the ordinary planner's, on `scenario`.
#[derive(Clone, Debug)]
pub struct PoolQuestion {
    /// The class it serves (a group's classes joined by " + "), or None for
    /// all the traffic.
    pub class: Option<String>,
    /// The classes it serves, a bitmask over the scenario's (bit `i` for
    /// class `i`; every class's for all the traffic).
    pub mask: u32,
    /// Those classes' names.
    pub classes: Vec<String>,
    /// The traffic (as [`budget::question`] made it: maybe a shorter window).
    pub scenario: Scenario,
    /// Its targets.
    pub slo: PlanSlo,
    /// Its space, with its share of the work budget.
    pub space: Space,
    /// What the question became, said before it runs.
    pub notes: Vec<String>,
}

/// A class's share of the traffic as a scenario of its own: only that class,
/// its arrivals scaled by its share, its own targets as the scenario's.
pub fn class_scenario(base: &Scenario, i: usize) -> Result<Scenario, String> {
    if i >= base.workload.classes.len() || i >= 32 {
        return Err(format!("no class {i}"));
    }
    let mut s = pool_split::group_scenario(base, 1 << i)?;
    s.slo = base.class_slo(i).clone();
    let k = &mut s.workload.classes[0];
    k.slo = None;
    k.share = 1.0;
    Ok(s)
}

/// The targets a class is planned for: its own TTFT and TPOT as p99s, the
/// errors and goodput of `slo`.
pub fn class_slo(base: &Scenario, i: usize, slo: PlanSlo) -> PlanSlo {
    let t = base.class_slo(i);
    let scenario_slo = PlanSlo::for_scenario(base);
    // Targets given to the plan (not the scenario's own) hold for every class.
    if (slo.ttft_p99_ms, slo.tpot_p99_ms) != (scenario_slo.ttft_p99_ms, scenario_slo.tpot_p99_ms) {
        return slo;
    }
    PlanSlo {
        ttft_p99_ms: t.ttft_ms,
        tpot_p99_ms: t.tpot_ms,
        ..slo
    }
}

/// Why `base` cannot be planned class by class, if it cannot: one class,
/// too many, or arrivals that cannot be split by class.
pub fn why_not_split(base: &Scenario) -> Option<String> {
    let n = base.workload.classes.len();
    if n < 2 {
        return Some("one class: there is nothing to split".into());
    }
    if n > MAX_CLASSES {
        return Some(format!(
            "planning pools class by class takes at most {MAX_CLASSES} classes, got {n}"
        ));
    }
    matches!(
        base.workload.arrival,
        Arrival::ClosedLoop { .. } | Arrival::Trace { .. }
    )
    .then(|| "a closed loop's users or a trace's requests cannot be split by class (planning class by class needs open-loop arrivals, a rate)".into())
}

/// The questions of a plan over pools of `base`: all the traffic first (at
/// the tightest class's targets), then, when it can be split
/// ([`why_not_split`]), each class, then each group of classes that may share
/// a pool ([`pool_split::groups`]); each with its share of the space's
/// work budget: half of it split evenly, half by the question's estimated
/// work ([`budget::estimate`]: all the traffic asks the most).
pub fn questions(
    base: &Scenario,
    slo: PlanSlo,
    space: &Space,
) -> Result<Vec<PoolQuestion>, String> {
    // The classes' answers share one fallback chain when merged: no
    // question tries units or fallbacks.
    let space = &Space {
        api_strategies: false,
        ..space.clone()
    };
    let n = base.workload.classes.len();
    let groups = match why_not_split(base) {
        None => pool_split::groups(n),
        Some(_) => Vec::new(),
    };
    let slos: Vec<PlanSlo> = (0..n).map(|i| class_slo(base, i, slo)).collect();
    let all = if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
    let tightest = pool_split::tightest(&slos, all, slo);
    let mut whole = base.clone();
    whole.pools.clear();
    whole.routing.clear();
    let mut asked = vec![(None, all, whole, tightest)];
    for mask in groups {
        let name = pool_split::name(base, mask);
        let (s, t) = if mask.count_ones() == 1 {
            let i = mask.trailing_zeros() as usize;
            (class_scenario(base, i)?, slos[i])
        } else {
            let s = pool_split::group_scenario(base, mask)?;
            (s, pool_split::tightest(&slos, mask, slo))
        };
        asked.push((Some(name), mask, s, t));
    }
    let work: Vec<f64> = asked
        .iter()
        .map(|(_, _, s, t)| budget::estimate(&super::searches(s, *t, space)).max(1.0))
        .collect();
    let total: f64 = work.iter().sum();
    let k = asked.len() as f64;
    Ok(asked
        .into_iter()
        .zip(work)
        .map(|((class, mask, s, t), w)| {
            let mut space = space.clone();
            if space.budget_events != u64::MAX {
                let b = space.budget_events as f64;
                space.budget_events = (b / 2.0 / k + b / 2.0 * w / total) as u64;
            }
            question(class, mask, s, t, &space)
        })
        .collect())
}

fn question(
    class: Option<String>,
    mask: u32,
    s: Scenario,
    slo: PlanSlo,
    space: &Space,
) -> PoolQuestion {
    let q = budget::question(&s, slo, space);
    let classes = s.workload.classes.iter().map(|k| k.name.clone()).collect();
    PoolQuestion {
        class,
        mask,
        classes,
        scenario: q.scenario,
        slo,
        space: space.clone(),
        notes: q.notes,
    }
}

/// What runs next.
#[derive(Clone, Debug)]
enum Stage {
    /// Waiting for the questions' plans.
    Plans,
    /// Bisecting autoscaling bounds and overflowing pools, one search at a time.
    Scaling(usize),
    /// Running the split.
    Split(Box<Scenario>),
    /// Finished.
    Done,
}

/// The planner over pools after the questions' plans: autoscaling bounds,
/// then the split's run.
#[derive(Clone, Debug)]
pub struct PoolPlanner {
    questions: Vec<PoolQuestion>,
    answers: Vec<Option<Answer>>,
    scaling: Vec<pool_scale::ScaleSearch>,
    stage: Stage,
    split: Option<Split>,
    no_split: Option<String>,
    /// The split's groups (each its classes' names), once composed.
    cover: Vec<Vec<String>>,
    /// The user's arrival window, seconds: the questions may run a shorter
    /// one within the work budget; the split applies with this one.
    duration_s: f64,
}

impl PoolPlanner {
    /// The planner for `base`'s questions ([`questions`]).
    pub fn new(base: &Scenario, slo: PlanSlo, space: &Space) -> Result<PoolPlanner, String> {
        let questions = questions(base, slo, space)?;
        Ok(PoolPlanner {
            answers: vec![None; questions.len()],
            questions,
            scaling: Vec::new(),
            stage: Stage::Plans,
            split: None,
            no_split: None,
            cover: Vec::new(),
            duration_s: base.duration_s,
        })
    }

    /// The questions, whose plans [`Self::give`] takes.
    pub fn questions(&self) -> &[PoolQuestion] {
        &self.questions
    }

    /// The plan of question `i`; once every question has one, the
    /// autoscaling searches and the split are ready to run.
    pub fn give(&mut self, i: usize, plan: Plan) {
        let q = &self.questions[i];
        let fixed = plan.feasible.first().cloned();
        let hosted = plan
            .feasible
            .iter()
            .find(|e| matches!(e.config, super::Config::SelfHosted { .. }))
            .cloned();
        let (searches, scaling_note, overflow_note) = pool_scale::start(i, q, hosted.as_ref());
        self.scaling.extend(searches);
        self.answers[i] = Some(Answer {
            class: q.class.clone(),
            classes: q.classes.clone(),
            slo: q.slo,
            fixed,
            hosted,
            scaled: None,
            scaling_note,
            overflow: None,
            overflow_note,
            plan,
        });
        if self.answers.iter().all(Option::is_some) {
            self.scaling.sort_by_key(|s| s.question);
            self.stage = Stage::Scaling(0);
            self.advance();
        }
    }

    /// Move past finished autoscaling searches to the next run.
    fn advance(&mut self) {
        while let Stage::Scaling(k) = self.stage {
            match self.scaling.get(k) {
                Some(s) if s.next().is_some() => return,
                Some(_) => self.stage = Stage::Scaling(k + 1),
                None => self.stage = self.compose(),
            }
        }
    }

    /// The split's deployment, or why there is none: the cheapest cover of
    /// the classes by groups with answers, as one deployment.
    fn compose(&mut self) -> Stage {
        let base = &self.questions[0].scenario;
        if let Some(why) = why_not_split(base) {
            self.no_split = Some(why);
            return Stage::Done;
        }
        let n = base.workload.classes.len();
        let answer_of = |mask: u32| {
            self.questions
                .iter()
                .position(|q| q.class.is_some() && q.mask == mask)
                .and_then(|i| self.answers[i].as_ref())
        };
        let Some(cover) =
            pool_split::cheapest_cover(n, |m| answer_of(m).and_then(|a| a.usd_per_month()))
        else {
            let alone: Vec<String> = (0..n)
                .filter(|&i| answer_of(1 << i).and_then(|a| a.fixed.as_ref()).is_none())
                .map(|i| base.workload.classes[i].name.clone())
                .collect();
            self.no_split = Some(format!(
                "class {} has no setup of its own that meets its targets, nor in any group that shares a pool",
                alone.join(", ")
            ));
            return Stage::Done;
        };
        let placed: Vec<pool_split::Placed> = cover
            .iter()
            .filter_map(|&mask| {
                Some(pool_split::Placed {
                    mask,
                    answer: answer_of(mask)?,
                })
            })
            .collect();
        match pool_split::compose(base, &placed) {
            Ok(s) => {
                self.cover = cover
                    .iter()
                    .map(|&m| {
                        pool_split::members(m)
                            .into_iter()
                            .map(|i| base.workload.classes[i].name.clone())
                            .collect()
                    })
                    .collect();
                Stage::Split(Box::new(s))
            }
            Err(e) => {
                self.no_split = Some(e);
                Stage::Done
            }
        }
    }

    /// The scenario [`Runs::next`] gives, without taking it: None when the
    /// plan is done (or still waits for the questions' plans).
    pub fn upcoming(&self) -> Option<Scenario> {
        match &self.stage {
            Stage::Plans | Stage::Done => None,
            Stage::Scaling(k) => {
                let search = &self.scaling[*k];
                let a = self.answers[search.question].as_ref()?;
                pool_scale::step(search, &self.questions[search.question], a.hosted.as_ref()?)
            }
            Stage::Split(s) => Some((**s).clone()),
        }
    }

    /// The targets the run of [`Runs::next`] may stop early on (a planning
    /// run's): a scaling search's question's; None for the split's run, which
    /// runs to the end (its classes have targets of their own).
    pub fn targets(&self) -> Option<PlanSlo> {
        match &self.stage {
            Stage::Scaling(k) => Some(self.questions[self.scaling[*k].question].slo),
            _ => None,
        }
    }

    /// The run of [`Runs::next`]'s scenario could not be made (`why`): a
    /// scaling search takes it as a miss, the split as no split.
    pub fn fail(&mut self, why: String) {
        match &self.stage {
            Stage::Scaling(k) => {
                let search = &mut self.scaling[*k];
                search.lo = search.hi - 1;
                self.stage = Stage::Scaling(*k);
                self.advance();
            }
            Stage::Split(_) => {
                self.no_split = Some(why);
                self.stage = Stage::Done;
            }
            _ => {}
        }
    }

    /// Run what is left after the plans with `run` (a scenario and the
    /// targets it may stop early on), serially.
    pub fn drive(
        &mut self,
        mut run: impl FnMut(Scenario, Option<PlanSlo>) -> Result<Report, crate::scenario::ScenarioError>,
    ) {
        while let Some(s) = self.upcoming() {
            match run(s, self.targets()) {
                Ok(r) => self.feed(&r),
                Err(e) => self.fail(e.to_string()),
            }
        }
    }

    /// The classes' questions, each class alone.
    fn alone(&self) -> impl Iterator<Item = &PoolQuestion> {
        self.questions[1..]
            .iter()
            .filter(|q| q.mask.count_ones() == 1)
    }

    /// Each class of the split's run against its own targets.
    fn class_verdicts(&self, s: &Scenario, r: &Report) -> Vec<(String, Result<f64, String>)> {
        self.alone()
            .map(|q| {
                let name = q.class.clone().unwrap_or_default();
                let verdict = match r.per_class.iter().find(|c| c.name == name) {
                    Some(c) => q.slo.check_class(c, r.complete),
                    // One class only: the run's totals are the class's.
                    None if s.workload.classes.len() == 1 => q.slo.check(r),
                    None => Err("no requests of this class in the run".into()),
                };
                (name, verdict)
            })
            .collect()
    }

    /// The plan, once done.
    pub fn result(&self) -> Option<PoolPlan> {
        if !matches!(self.stage, Stage::Done) {
            return None;
        }
        let mut answers = self.answers.iter().flatten().cloned();
        let whole = answers.next()?;
        let (classes, groups) = answers.partition(|a| a.classes.len() == 1);
        Some(PoolPlan {
            whole,
            classes,
            groups,
            split: self.split.clone(),
            no_split: self.no_split.clone(),
        })
    }
}

impl Runs for PoolPlanner {
    fn next(&mut self) -> Option<Scenario> {
        self.upcoming()
    }

    /// For a caller running [`Runs::next`]'s scenario itself (in slices):
    /// whether its verdict is already settled, as [`pool_run`] decides it.
    fn settled(&self, sim: &crate::Simulation) -> Option<String> {
        let slo = self.targets()?;
        super::early_bound(&self.upcoming()?).and_then(|u| slo.settled_fail(sim, u))
    }

    /// Prepare a simulation of [`Runs::next`]'s scenario that a caller runs
    /// itself: its settled misses count against the targets it may stop on.
    fn begin(&self, sim: &mut crate::Simulation) {
        if let Some(slo) = self.targets() {
            slo.watch(sim);
        }
    }

    /// Record the report of [`Runs::next`]'s scenario.
    fn feed(&mut self, report: &Report) {
        match std::mem::replace(&mut self.stage, Stage::Done) {
            Stage::Scaling(k) => {
                let search = &mut self.scaling[k];
                let q = &self.questions[search.question];
                if let Some(a) = self.answers[search.question].as_mut() {
                    pool_scale::record(search, q, a, report);
                } else {
                    search.lo = search.hi - 1;
                }
                self.stage = Stage::Scaling(k);
                self.advance();
            }
            Stage::Split(s) => {
                let groups = std::mem::take(&mut self.cover);
                // Judged on the window it ran; applied over the user's own.
                let mut deployment = *s;
                let verdicts = self.class_verdicts(&deployment, report);
                deployment.set_duration(self.duration_s);
                self.split = Some(Split {
                    verdicts,
                    groups,
                    usd_per_month: report.cost.usd_per_month,
                    summary: Summary::of(report),
                    scenario: deployment,
                });
            }
            other => self.stage = other,
        }
    }

    /// Progress after the plans, 0..=1 (the searches left, roughly).
    fn progress(&self) -> f64 {
        match self.stage {
            Stage::Plans => 0.0,
            Stage::Scaling(k) => k as f64 / (self.scaling.len() + 1) as f64,
            Stage::Split(_) => self.scaling.len() as f64 / (self.scaling.len() + 1) as f64,
            Stage::Done => 1.0,
        }
    }
}

/// A run for [`PoolPlanner::drive`]: a planning run on targets, else to the end.
pub fn pool_run(
    s: Scenario,
    slo: Option<PlanSlo>,
) -> Result<Report, crate::scenario::ScenarioError> {
    match slo {
        Some(t) => super::planning_run(t)(s),
        None => Ok(crate::run(&s.validate()?)),
    }
}

/// Plan over pools serially (the CLI runs the questions' plans in parallel itself).
pub fn plan_pools(base: &Scenario, slo: PlanSlo, space: &Space) -> Result<PoolPlan, String> {
    let mut p = PoolPlanner::new(base, slo, space)?;
    for i in 0..p.questions().len() {
        let q = &p.questions()[i];
        let plan = super::plan(&q.scenario, q.slo, &q.space);
        p.give(i, plan);
    }
    p.drive(pool_run);
    p.result()
        .ok_or_else(|| "the plan over pools did not finish".into())
}
