//! A plan driven one planning run at a time from outside: the runs that can
//! start now, each the next of its group of searches, and their reports fed
//! back in any order. Python's executors (a process pool, a Ray cluster)
//! drive plans through it; [`super::plan`] and [`super::run_group`] are the
//! same steps driven here, so every driver reaches the same plan.

use super::search::Search;
use super::{Plan, PlanSlo, Runs, Space, assemble, budget, groups, reopen_groups, searches};
use crate::Report;
use crate::scenario::{Scenario, ScenarioError};

/// One group of searches (see [`super::groups`]) run in order, one
/// simulation at a time: each search until it asks for no more runs, then
/// its verdict handed on to the larger batch sizes after it
/// ([`Search::skip_identical`], [`Search::hand_on`]).
#[derive(Clone, Debug)]
pub struct GroupRuns {
    searches: Vec<Search>,
    /// The search in progress.
    at: usize,
    /// Whether its run is out, waiting for its report.
    waiting: bool,
}

impl GroupRuns {
    /// The group, from its first search.
    pub fn new(searches: Vec<Search>) -> GroupRuns {
        GroupRuns {
            searches,
            at: 0,
            waiting: false,
        }
    }

    /// The scenario to simulate next, or None when the group is over (or
    /// its last run's report has not come back yet).
    fn next_scenario(&mut self) -> Option<Scenario> {
        if self.waiting {
            return None;
        }
        while self.at < self.searches.len() {
            let (head, rest) = self.searches.split_at_mut(self.at + 1);
            let search = &mut head[self.at];
            // Out of budget: unsettled without running, as every path does.
            search.starve_if_broke();
            if let Some(s) = search.next() {
                self.waiting = true;
                return Some(s);
            }
            search.skip_identical(rest);
            search.hand_on(rest);
            self.at += 1;
        }
        None
    }

    /// The scenario [`Runs::next`] returned could not run: its search ends
    /// pruned with the reason.
    pub fn refuse(&mut self, error: &ScenarioError) {
        if std::mem::take(&mut self.waiting) {
            self.searches[self.at].refuse(error);
        }
    }

    /// Whether every search of the group is over.
    pub fn is_over(&self) -> bool {
        !self.waiting && self.at >= self.searches.len()
    }

    /// The searches as they ended.
    pub fn into_searches(self) -> Vec<Search> {
        self.searches
    }

    /// Start the group again from its first search (a later pass, after
    /// [`super::reopen_groups`] reopened some of its searches).
    fn restart(&mut self) {
        self.at = 0;
        self.waiting = false;
    }
}

impl Runs for GroupRuns {
    fn next(&mut self) -> Option<Scenario> {
        self.next_scenario()
    }

    fn feed(&mut self, report: &Report) {
        if std::mem::take(&mut self.waiting) {
            self.searches[self.at].feed(report);
        }
    }

    fn progress(&self) -> f64 {
        if self.searches.is_empty() {
            1.0
        } else {
            self.at.min(self.searches.len()) as f64 / self.searches.len() as f64
        }
    }

    fn settled(&self, sim: &crate::Simulation) -> Option<String> {
        let search = self.searches.get(self.at).filter(|_| self.waiting)?;
        search.settled(sim)
    }

    fn begin(&self, sim: &mut crate::Simulation) {
        if let Some(search) = self.searches.get(self.at) {
            search.begin(sim);
        }
    }
}

/// A whole plan as runs: its groups, each with at most one run out at a
/// time, in passes (see [`super::budget`]): when every group is over, the
/// unsettled ones are reopened with their shares of what is left of the
/// budget, until none is or the passes run out.
#[derive(Clone, Debug)]
pub struct PlanSteps {
    groups: Vec<GroupRuns>,
    space: Space,
    /// Passes begun.
    pass: usize,
    /// Whether the last pass ended with nothing to reopen.
    done: bool,
}

impl PlanSteps {
    /// The plan of `base` against `slo` over `space`, before any run.
    pub fn new(base: &Scenario, slo: PlanSlo, space: &Space) -> PlanSteps {
        PlanSteps {
            groups: groups(searches(base, slo, space))
                .into_iter()
                .map(GroupRuns::new)
                .collect(),
            space: space.clone(),
            pass: 1,
            done: false,
        }
    }

    /// How many groups the plan has (a run's group is its index).
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// Whether the plan has no group at all.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The runs that can start now, as (group, scenario): the next run of
    /// every group with none out. Empty while runs are out and none can
    /// start, and once the plan is over ([`Self::is_over`]).
    pub fn ready(&mut self) -> Vec<(usize, Scenario)> {
        // Each turn but the last begins a pass; there are at most PASSES.
        for _ in 0..=budget::PASSES {
            let out: Vec<(usize, Scenario)> = self
                .groups
                .iter_mut()
                .enumerate()
                .filter_map(|(i, g)| g.next().map(|s| (i, s)))
                .collect();
            if !out.is_empty() || self.done || !self.groups.iter().all(GroupRuns::is_over) {
                return out;
            }
            self.next_pass();
        }
        Vec::new()
    }

    /// Every group over: reopen the unsettled ones for another pass, or end.
    fn next_pass(&mut self) {
        if self.pass >= budget::PASSES {
            self.done = true;
            return;
        }
        self.pass += 1;
        let mut held: Vec<Vec<Search>> = self
            .groups
            .iter_mut()
            .map(|g| std::mem::take(&mut g.searches))
            .collect();
        let again = reopen_groups(&mut held, self.space.budget_events);
        for (g, searches) in self.groups.iter_mut().zip(held) {
            g.searches = searches;
        }
        if again.is_empty() {
            self.done = true;
        }
        for i in again {
            self.groups[i].restart();
        }
    }

    /// The report of group `group`'s run from [`Self::ready`], or why its
    /// scenario could not run. A group with no run out ignores it.
    pub fn feed(&mut self, group: usize, report: Result<&Report, &ScenarioError>) {
        if let Some(g) = self.groups.get_mut(group) {
            match report {
                Ok(r) => g.feed(r),
                Err(e) => g.refuse(e),
            }
        }
    }

    /// Whether the plan is over: every pass run, nothing out. True once
    /// [`Self::ready`] has returned nothing with no run out.
    pub fn is_over(&self) -> bool {
        self.done && self.groups.iter().all(GroupRuns::is_over)
    }

    /// The plan, assembled from every search as it ended.
    pub fn plan(self) -> Plan {
        let space = self.space;
        assemble(
            self.groups
                .into_iter()
                .flat_map(GroupRuns::into_searches)
                .map(Search::finish)
                .collect(),
            &space,
        )
    }
}

/// Drive `steps` to its end here, one run at a time with `run`.
pub fn drive_steps(
    steps: &mut PlanSteps,
    mut run: impl FnMut(Scenario) -> Result<Report, ScenarioError>,
) {
    for _ in 0..super::runs::MAX_RUNS {
        let ready = steps.ready();
        if ready.is_empty() {
            break;
        }
        for (g, s) in ready {
            match run(s) {
                Ok(r) => steps.feed(g, Ok(&r)),
                Err(e) => steps.feed(g, Err(&e)),
            }
        }
    }
}
