//! Pools and routing rules as catalogue parameters: the pools beside the
//! first as a list of names, and the rules in a readable format of their
//! own. A pool's own settings are the serving parameters written
//! `NAME@POOL` (see [`super::apply`]).

use super::routing_text::{parse_routing, routing_text};
use super::{Group, Kind, Param, Text};
use crate::api::SELF_HOSTED;
use crate::scenario::{MAX_POOLS, Scenario};

/// The pools beside the first, by name, as the `pools` parameter writes them.
fn pools_text(s: &Scenario) -> String {
    s.pools
        .iter()
        .map(|p| p.pool_name().to_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Keep the pools named in `text`, in its order; a new name is a copy of
/// the first pool. Rules that name a pool no longer there go too.
fn set_pools(s: &mut Scenario, text: &str) -> Result<(), String> {
    let names: Vec<&str> = text
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    if names.len() >= MAX_POOLS {
        return Err(format!(
            "pools: at most {} pools beside the first, got {}",
            MAX_POOLS - 1,
            names.len()
        ));
    }
    let mut old = std::mem::take(&mut s.pools);
    for n in &names {
        if *n == SELF_HOSTED || *n == s.serving.pool_name() {
            return Err(format!("pools: {n:?} is the first pool's name"));
        }
        let pool = match old.iter().position(|p| p.pool_name() == *n) {
            Some(i) => old.remove(i),
            None => crate::scenario::Serving {
                name: Some((*n).to_owned()),
                ..s.serving.clone()
            },
        };
        s.pools.push(pool);
    }
    let gone: Vec<String> = old.iter().map(|p| p.pool_name().to_owned()).collect();
    s.routing.retain(|r| {
        !gone.contains(&r.to) && !r.overflow.as_ref().is_some_and(|o| gone.contains(&o.to))
    });
    Ok(())
}

pub(super) const PARAMS: &[Param] = &[
    Param {
        path: "pools",
        id: "pools",
        group: Group::Serving,
        label: "More pools",
        unit: "",
        help: "Self-hosted pools beside the first, by name (\"small, big\"): each its own GPU, model, serving software, batching and replicas, set with NAME@POOL (\"model@small\"); a new name starts as a copy of the first pool. Routing rules send requests to them.",
        kind: Kind::Text(Text {
            example: "small",
            get: |s, _| Some(pools_text(s)),
            set: |s, _, text| set_pools(s, text),
        }),
    },
    Param {
        path: "routing",
        id: "routing",
        group: Group::Serving,
        label: "Routing rules",
        unit: "",
        help: "Rules tried in order, the first that matches a request deciding where it goes: CONDITIONS -> POOL OR TIER, with conditions \"class NAME\", \"prompt < TOKENS\" and \"P%\" (a share of the tasks) joined by \"and\", or \"all\"; \"overflow > N -> OTHER\" sends requests elsewhere while the pool has more than N waiting per replica. A request no rule matches goes where its class is served.",
        kind: Kind::Text(Text {
            example: "prompt < 1000 -> small; all -> self-hosted overflow > 8 -> frontier",
            get: |s, _| Some(routing_text(&s.routing)),
            set: |s, _, text| {
                s.routing = parse_routing(text)?;
                Ok(())
            },
        }),
    },
];
