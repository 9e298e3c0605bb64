//! Each class's own targets (`ttft_target_ms[chat]`), in place of the
//! scenario's: its requests meet the SLO by them, and the planner over pools
//! sizes each class's pool for them.

use super::{Group, Kind, Number, Param};
use crate::scenario::{Scenario, Slo};

/// A class's targets as its requests are judged: its own, else the
/// scenario's. None for a scenario of one class (the scenario's targets are
/// its own) or a class that does not exist.
fn class_slo(s: &Scenario, i: usize) -> Option<Slo> {
    if s.workload.classes.len() < 2 {
        return None;
    }
    s.workload.classes.get(i)?;
    Some(s.class_slo(i).clone())
}

/// Edit class `i`'s targets with `f`; targets equal to the scenario's are
/// no targets of its own (one way to write each scenario).
fn edit(s: &mut Scenario, i: usize, f: impl FnOnce(&mut Slo)) -> Result<(), String> {
    let mut slo = class_slo(s, i).ok_or_else(|| {
        "a class's own targets need two classes or more (with one, set the scenario's)".to_owned()
    })?;
    f(&mut slo);
    let own = (slo != s.slo).then_some(slo);
    s.workload.classes[i].slo = own;
    Ok(())
}

pub(super) const PARAMS: &[Param] = &[
    Param {
        path: "ttft_target_ms",
        id: "class-ttft-target",
        group: Group::Workload,
        label: "This class's TTFT target",
        unit: "ms",
        help: "The class's own time-to-first-token target in place of the scenario's (chat in half a second, a batch job in minutes): its requests meet the SLO by it, and the planner sizes its pool for it.",
        kind: Kind::Number(Number {
            min: 0.001,
            max: 1e9,
            slider: (10.0, 3_600_000.0),
            log: true,
            decimals: 0,
            get: |s, i| class_slo(s, i).map(|t| t.ttft_ms),
            set: |s, i, v| edit(s, i, |t| t.ttft_ms = v),
        }),
    },
    Param {
        path: "tpot_target_ms",
        id: "class-tpot-target",
        group: Group::Workload,
        label: "This class's TPOT target",
        unit: "ms",
        help: "The class's own time-per-output-token target in place of the scenario's.",
        kind: Kind::Number(Number {
            min: 0.001,
            max: 1e9,
            slider: (1.0, 2000.0),
            log: true,
            decimals: 0,
            get: |s, i| class_slo(s, i).map(|t| t.tpot_ms),
            set: |s, i, v| edit(s, i, |t| t.tpot_ms = v),
        }),
    },
];
