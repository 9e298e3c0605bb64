//! Pools and routing rules as catalogue parameters: the pools beside the
//! first as a list of names, and the rules in a readable format of their
//! own. A pool's own settings are the serving parameters written
//! `NAME@POOL` (see [`super::apply`]).

use super::{Group, Kind, Param, Text};
use crate::api::SELF_HOSTED;
use crate::format::show;
use crate::scenario::{MAX_POOLS, MAX_RULES, Overflow, RoutingRule, Scenario};

/// The rules as the `routing` parameter writes them, `; ` between rules:
/// `class chat and prompt < 1000 -> small; 30% -> frontier; all -> big
/// overflow > 8 -> frontier`.
pub fn routing_text(rules: &[RoutingRule]) -> String {
    rules.iter().map(rule_text).collect::<Vec<_>>().join("; ")
}

fn rule_text(r: &RoutingRule) -> String {
    let mut when = Vec::new();
    if let Some(c) = &r.class {
        when.push(format!("class {c}"));
    }
    if let Some(n) = r.prompt_under {
        when.push(format!("prompt < {n}"));
    }
    if let Some(s) = r.share {
        when.push(format!("{}%", show(s * 100.0)));
    }
    let when = if when.is_empty() {
        "all".to_owned()
    } else {
        when.join(" and ")
    };
    let mut out = format!("{when} -> {}", r.to);
    if let Some(o) = &r.overflow {
        out += &format!(" overflow > {} -> {}", o.queue_per_replica, o.to);
    }
    out
}

/// Parse the `routing` parameter's text (see [`routing_text`]); each
/// problem names the rule (counted from 1) and what is wrong.
pub fn parse_routing(text: &str) -> Result<Vec<RoutingRule>, String> {
    let parts: Vec<&str> = text
        .split([';', '\n'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if parts.len() > MAX_RULES {
        return Err(format!(
            "routing: at most {MAX_RULES} rules, got {}",
            parts.len()
        ));
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| parse_rule(p).map_err(|e| format!("routing rule {} ({p:?}): {e}", i + 1)))
        .collect()
}

fn parse_rule(text: &str) -> Result<RoutingRule, String> {
    let text = text.replace('→', "->");
    let (when, rest) = text
        .split_once("->")
        .ok_or("write CONDITIONS -> POOL OR TIER, e.g. \"class chat -> small\"")?;
    let (to, overflow) = match rest.split_once(" overflow ") {
        None => (rest.trim(), None),
        Some((to, o)) => {
            let (threshold, elsewhere) = o
                .split_once("->")
                .ok_or("write the overflow as \"overflow > N -> POOL OR TIER\"")?;
            let n = threshold
                .trim()
                .strip_prefix('>')
                .map(str::trim)
                .and_then(|n| n.parse::<u32>().ok())
                .ok_or_else(|| {
                    format!(
                        "the overflow threshold is \"> N\" requests waiting per replica, got {:?}",
                        threshold.trim()
                    )
                })?;
            (
                to.trim(),
                Some(Overflow {
                    queue_per_replica: n,
                    to: elsewhere.trim().to_owned(),
                }),
            )
        }
    };
    if to.is_empty() {
        return Err("name the pool or tier after ->".into());
    }
    let mut rule = RoutingRule {
        class: None,
        prompt_under: None,
        share: None,
        to: to.to_owned(),
        overflow,
    };
    let when = when.trim();
    if when != "all" {
        for cond in when.split(" and ").map(str::trim) {
            if let Some(c) = cond.strip_prefix("class ") {
                rule.class = Some(c.trim().to_owned());
            } else if let Some(n) = cond.strip_prefix("prompt") {
                let n = n.trim().strip_prefix('<').map(str::trim).unwrap_or("");
                rule.prompt_under = Some(n.parse().map_err(|_| {
                    format!("a prompt condition is \"prompt < TOKENS\", got {cond:?}")
                })?);
            } else if let Some(p) = cond.strip_suffix('%') {
                let p: f64 = p
                    .trim()
                    .parse()
                    .map_err(|_| format!("a share is \"P%\", got {cond:?}"))?;
                rule.share = Some(p / 100.0);
            } else {
                return Err(format!(
                    "unknown condition {cond:?}: use \"class NAME\", \"prompt < TOKENS\", \"P%\" (joined by \"and\"), or \"all\""
                ));
            }
        }
    }
    Ok(rule)
}

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
