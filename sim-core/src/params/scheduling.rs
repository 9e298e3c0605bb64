//! Scheduling parameters: a replica's admission order and each class's
//! priority under it.

use super::edits::{from_key, key};
use super::serving::{keys, owned};
use super::{Choice, Group, Kind, Number, Param};
use crate::scenario::{Scenario, SchedulingPolicy, bounds};

fn policy_options(_: &Scenario, _: usize) -> Vec<(String, String)> {
    owned(&[
        ("fcfs", "First come, first served"),
        ("priority", "By class priority (lower first)"),
    ])
}

pub(super) const PARAMS: &[Param] = &[
    Param {
        path: "scheduling_policy",
        id: "scheduling-policy",
        group: Group::Batching,
        label: "Scheduling",
        unit: "",
        help: "Which waiting request a replica admits next (vLLM's --scheduling-policy): first come, first served, or by each class's priority — the lower number first, and when KV memory runs out the least urgent, newest sequence is the one preempted.",
        kind: Kind::Choice(Choice {
            options: policy_options,
            get: |s, _| {
                s.uses_fleet()
                    .then(|| key(&s.serving.scheduling_policy.unwrap_or_default()))
            },
            set: |s, i, k| {
                let p: SchedulingPolicy =
                    from_key("scheduling_policy", k, &keys(policy_options(s, i)))?;
                s.serving.scheduling_policy = (p != SchedulingPolicy::Fcfs).then_some(p);
                Ok(())
            },
        }),
    },
    Param {
        path: "priority",
        id: "priority",
        group: Group::Workload,
        label: "Priority",
        unit: "",
        help: "Under priority scheduling, classes with a lower number are admitted first and preempted last (0 is the default; ties are first come, first served).",
        kind: Kind::Number(Number {
            min: 0.0,
            max: bounds::PRIORITY as f64,
            slider: (0.0, 10.0),
            log: false,
            decimals: 0,
            get: |s, i| {
                // Only a class the fleet serves waits in its queues.
                let k = s.workload.classes.get(i)?;
                s.backend_of(&k.name)
                    .is_none()
                    .then(|| f64::from(k.priority.unwrap_or(0)))
            },
            set: |s, i, v| {
                let k = s
                    .workload
                    .classes
                    .get_mut(i)
                    .ok_or_else(|| format!("no class {i}"))?;
                k.priority = (v > 0.0).then_some(v as u32);
                Ok(())
            },
        }),
    },
];
