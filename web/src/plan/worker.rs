//! The planner on every core: groups of searches (see `sim_core::plan::groups`)
//! run in Web Workers, each a copy of the simulator (`src/bin/plan_worker.rs`).
//! A worker is told the plan once ([`Message::Plan`]), then sent one group at
//! a time ([`Message::Group`]) whenever it is free, so the work balances
//! itself; the page assembles the groups in their own order, so the plan is
//! the same however many workers ran it and in whatever order they finished.
//! A worker keeps the groups it ran: a later pass of the plan (see
//! `sim_core::plan::budget`) sends the unsettled ones back to the worker
//! that holds them ([`Message::Resume`]) with their share of what is left.

use serde::{Deserialize, Serialize};
use sim_core::plan::budget::{Outcome, second_pass_shares};
use sim_core::plan::{Finished, PlanSlo, Search, Space, groups, run_group, searches};
use sim_core::{Report, Scenario};

/// What the page tells a worker.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Message {
    /// The plan to work on (replacing any earlier one).
    Plan {
        /// Which plan (replies carry it, so late ones are recognised).
        id: u64,
        /// The scenario planned for.
        base: Box<Scenario>,
        /// The targets.
        slo: PlanSlo,
        /// The space searched.
        space: Space,
    },
    /// Run one group of the plan.
    Group {
        /// The plan.
        id: u64,
        /// The group's index in `groups(searches(..))`.
        index: usize,
    },
    /// Run a group this worker ran before again, its unsettled searches
    /// reopened with `share` simulated events (a later pass).
    Resume {
        /// The plan.
        id: u64,
        /// The group.
        index: usize,
        /// Its share of what the passes so far left of the budget.
        share: u64,
    },
    /// Run this scenario in full as run `id` (the run on screen, see
    /// `crate::work::remote`), replacing the run in progress.
    Run {
        /// Which run (its report carries it).
        id: u64,
        /// The scenario.
        scenario: Box<Scenario>,
    },
    /// Drop the run in progress.
    StopRun,
}

/// What a worker says back.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Reply {
    /// The worker is up and listening.
    Ready,
    /// A group finished.
    Done {
        /// The plan.
        id: u64,
        /// The group.
        index: usize,
        /// Its finished searches.
        searches: Vec<Finished>,
    },
    /// A message could not be handled.
    Failed(String),
    /// Run `id` finished.
    Ran {
        /// The run.
        id: u64,
        /// What it measured.
        report: Box<Report>,
    },
    /// How far run `id` is (of its arrival window).
    RunProgress {
        /// The run.
        id: u64,
        /// 0 to 1.
        fraction: f64,
    },
    /// Run `id` could not start.
    RunFailed {
        /// The run.
        id: u64,
        /// Why.
        why: String,
    },
}

/// A plan as a worker holds it: its id, targets, and its groups, each not
/// yet run or as this worker last ran it.
type HeldPlan = (u64, PlanSlo, Vec<Option<Vec<Search>>>);

/// A worker's state: the plan it was told.
#[derive(Default)]
pub struct Worker {
    plan: Option<HeldPlan>,
}

impl Worker {
    /// Handle one message; `Group` answers with its results.
    pub fn handle(&mut self, msg: Message) -> Option<Reply> {
        match msg {
            Message::Plan {
                id,
                base,
                slo,
                space,
            } => {
                let all = groups(searches(&base, slo, &space));
                self.plan = Some((id, slo, all.into_iter().map(Some).collect()));
                None
            }
            Message::Group { id, index } => self.run(id, index, None),
            Message::Resume { id, index, share } => self.run(id, index, Some(share)),
            // The run on screen's messages go to `crate::work::remote::RunHost`.
            Message::Run { .. } | Message::StopRun => None,
        }
    }

    /// Run group `index` of plan `id` (again, reopened with `share`, for a
    /// later pass), keep it, and say how its searches finished.
    fn run(&mut self, id: u64, index: usize, share: Option<u64>) -> Option<Reply> {
        let Some((plan, slo, all)) = self.plan.as_mut().filter(|p| p.0 == id) else {
            return Some(Reply::Failed(format!(
                "group {index} of an unknown plan {id}"
            )));
        };
        let Some(mut group) = all.get_mut(index).and_then(Option::take) else {
            return Some(Reply::Failed(format!("no group {index} to run")));
        };
        if let Some(share) = share {
            sim_core::plan::budget::reopen(&mut group, share);
        }
        let done = run_group(group, sim_core::plan::planning_run(*slo));
        let searches = done.iter().cloned().map(Search::finish).collect();
        all[index] = Some(done);
        Some(Reply::Done {
            id: *plan,
            index,
            searches,
        })
    }
}

/// The next pass's share of each group, from every group's finished
/// searches so far (`parts` in any order; one entry per group): as
/// `sim_core::plan::reopen_groups` shares it.
pub fn next_pass(parts: &[(usize, Vec<Finished>)], budget: u64) -> Vec<(usize, u64)> {
    let mut sorted: Vec<&(usize, Vec<Finished>)> = parts.iter().collect();
    sorted.sort_by_key(|(i, _)| *i);
    let outcomes: Vec<Outcome> = sorted
        .iter()
        .map(|(_, f)| Outcome::of_finished(f))
        .collect();
    sorted
        .iter()
        .zip(second_pass_shares(budget, &outcomes))
        .filter(|(_, share)| *share > 0)
        .map(|((i, _), share)| (*i, share))
        .collect()
}

/// The plan from every group's finished searches, in group order.
pub fn assemble(mut parts: Vec<(usize, Vec<Finished>)>, space: &Space) -> sim_core::plan::Plan {
    parts.sort_by_key(|(i, _)| *i);
    sim_core::plan::assemble(parts.into_iter().flat_map(|(_, s)| s).collect(), space)
}

/// The plan the pass tests ask (here and in `jobs`): a minute of the
/// default chatbot over three GPUs, one fast and two cheap ones whose groups
/// need later passes, within `budget_events`.
#[cfg(test)]
pub(crate) fn passes_question(budget_events: u64) -> (Scenario, PlanSlo, Space) {
    let mut base = sim_core::presets::chatbot_h100();
    base.duration_s = 60.0;
    let slo = crate::plan::panel::targets(&base);
    let space = Space {
        gpus: vec![
            sim_core::physics::Gpu::H100,
            sim_core::physics::Gpu::L4,
            sim_core::physics::Gpu::Rtx4090,
        ],
        tps: vec![1, 2],
        budget_events,
        ..Space::default()
    };
    (base, slo, space)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A message or reply through JSON, as they travel.
    pub(crate) fn wire<T: Serialize + for<'de> Deserialize<'de>>(t: &T) -> T {
        serde_json::from_str(&serde_json::to_string(t).expect("to JSON")).expect("from JSON")
    }

    #[test]
    fn a_plan_shared_among_workers_in_any_order_equals_the_plan_run_in_one_place() {
        let mut base = sim_core::presets::chatbot_h100();
        base.duration_s = 60.0;
        let slo = crate::plan::panel::targets(&base);
        let space = Space {
            gpus: vec![sim_core::physics::Gpu::H100, sim_core::physics::Gpu::L4],
            tps: vec![1, 2],
            ..Space::default()
        };
        plan_on_workers_equals_serial(&base, slo, &space);
        let mut w = Worker::default();
        assert!(matches!(
            w.handle(Message::Group { id: 1, index: 0 }),
            Some(Reply::Failed(_))
        ));
    }

    #[test]
    fn later_passes_on_the_workers_that_hold_their_groups_equal_the_serial_plan() {
        // A budget the first pass leaves room in: the later passes share
        // out what it left, each group back on the worker that ran it.
        let (base, slo, space) = passes_question(12_000_000);
        let serial = plan_on_workers_equals_serial(&base, slo, &space);
        assert!(serial.events <= space.budget_events, "{}", serial.events);
        // The later passes did something: a single pass leaves more unsettled.
        let first: Vec<Finished> = groups(searches(&base, slo, &space))
            .into_iter()
            .flat_map(|g| run_group(g, sim_core::plan::planning_run(slo)))
            .map(Search::finish)
            .collect();
        let unsettled = |f: &[Finished]| f.iter().filter(|s| s.unsettled.is_some()).count();
        let once = sim_core::plan::assemble(first.clone(), &space);
        assert!(
            unsettled(&first) > 0,
            "the budget is tight enough to matter"
        );
        assert!(
            serial.unsettled.len() + serial.unsettled_dearer < unsettled(&first),
            "{} + {} vs {} after one pass",
            serial.unsettled.len(),
            serial.unsettled_dearer,
            unsettled(&first)
        );
        assert!(serial.events > once.events);
    }

    /// Run the plan on 1 and 3 workers as the pool does (groups handed out
    /// last first, later passes to the worker holding each group) and check
    /// it equals the serial plan, which it returns.
    fn plan_on_workers_equals_serial(
        base: &sim_core::Scenario,
        slo: PlanSlo,
        space: &Space,
    ) -> sim_core::plan::Plan {
        let serial = sim_core::plan::plan(base, slo, space);
        let n = groups(searches(base, slo, space)).len();
        for workers in [1usize, 3] {
            let mut pool: Vec<Worker> = (0..workers).map(|_| Worker::default()).collect();
            for w in &mut pool {
                let plan = Message::Plan {
                    id: 7,
                    base: Box::new(base.clone()),
                    slo,
                    space: space.clone(),
                };
                assert!(w.handle(wire(&plan)).is_none());
            }
            // Groups handed out last first, to whichever worker is next.
            let mut parts: Vec<Option<Vec<Finished>>> = vec![None; n];
            let mut holder = vec![0usize; n];
            let put = |parts: &mut Vec<Option<Vec<Finished>>>, reply: Option<Reply>| match wire(
                &reply.expect("a reply"),
            ) {
                Reply::Done {
                    id,
                    index,
                    searches,
                } => {
                    assert_eq!(id, 7);
                    parts[index] = Some(searches);
                }
                other => panic!("{other:?}"),
            };
            for (k, index) in (0..n).rev().enumerate() {
                holder[index] = k % workers;
                let reply = pool[k % workers].handle(wire(&Message::Group { id: 7, index }));
                put(&mut parts, reply);
            }
            let collected = |parts: &Vec<Option<Vec<Finished>>>| -> Vec<(usize, Vec<Finished>)> {
                parts
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (i, p.clone().expect("every group back")))
                    .collect()
            };
            for _ in 1..sim_core::plan::budget::PASSES {
                let again = next_pass(&collected(&parts), space.budget_events);
                if again.is_empty() {
                    break;
                }
                for (index, share) in again {
                    let msg = Message::Resume {
                        id: 7,
                        index,
                        share,
                    };
                    let reply = pool[holder[index]].handle(wire(&msg));
                    put(&mut parts, reply);
                }
            }
            assert_eq!(
                assemble(collected(&parts), space),
                serial,
                "{workers} workers"
            );
        }
        serial
    }
}
