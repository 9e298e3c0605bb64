//! The planner on every core: groups of searches (see `sim_core::plan::groups`)
//! run in Web Workers, each a copy of the simulator (`src/bin/plan_worker.rs`).
//! A worker is told the plan once ([`Message::Plan`]), then sent one group at
//! a time ([`Message::Group`]) whenever it is free, so the work balances
//! itself; the page assembles the groups in their own order, so the plan is
//! the same however many workers ran it and in whatever order they finished.

use serde::{Deserialize, Serialize};
use sim_core::Scenario;
use sim_core::plan::{Finished, PlanSlo, Search, Space, groups, run_group, searches};

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
}

/// A plan as a worker holds it: its id, targets, and groups not yet run.
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
            Message::Group { id, index } => {
                let Some((plan, slo, all)) = self.plan.as_mut().filter(|p| p.0 == id) else {
                    return Some(Reply::Failed(format!(
                        "group {index} of an unknown plan {id}"
                    )));
                };
                let Some(group) = all.get_mut(index).and_then(Option::take) else {
                    return Some(Reply::Failed(format!("no group {index} to run")));
                };
                let done = run_group(group, sim_core::plan::planning_run(*slo));
                Some(Reply::Done {
                    id: *plan,
                    index,
                    searches: done.into_iter().map(Search::finish).collect(),
                })
            }
        }
    }
}

/// The plan from every group's finished searches, in group order.
pub fn assemble(mut parts: Vec<(usize, Vec<Finished>)>, space: &Space) -> sim_core::plan::Plan {
    parts.sort_by_key(|(i, _)| *i);
    sim_core::plan::assemble(parts.into_iter().flat_map(|(_, s)| s).collect(), space)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message or reply through JSON, as they travel.
    fn wire<T: Serialize + for<'de> Deserialize<'de>>(t: &T) -> T {
        serde_json::from_str(&serde_json::to_string(t).expect("to JSON")).expect("from JSON")
    }

    #[test]
    fn a_plan_shared_among_workers_in_any_order_equals_the_plan_run_in_one_place() {
        let mut base = sim_core::presets::chatbot_h100();
        base.duration_s = 60.0;
        let slo = crate::planner::targets(&base);
        let space = Space {
            gpus: vec![sim_core::physics::Gpu::H100, sim_core::physics::Gpu::L4],
            tps: vec![1, 2],
            ..Space::default()
        };
        let serial = sim_core::plan::plan(&base, slo, &space);
        let n = groups(searches(&base, slo, &space)).len();
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
            let mut parts = Vec::new();
            for (k, index) in (0..n).rev().enumerate() {
                let reply = pool[k % workers].handle(wire(&Message::Group { id: 7, index }));
                match wire(&reply.expect("a reply")) {
                    Reply::Done {
                        id,
                        index,
                        searches,
                    } => {
                        assert_eq!(id, 7);
                        parts.push((index, searches));
                    }
                    other => panic!("{other:?}"),
                }
            }
            assert_eq!(assemble(parts, &space), serial, "{workers} workers");
        }
        let mut w = Worker::default();
        assert!(matches!(
            w.handle(Message::Group { id: 1, index: 0 }),
            Some(Reply::Failed(_))
        ));
    }
}
