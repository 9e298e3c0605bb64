//! How a plan over pools splits the classes ([`super::pools`]): the groups
//! of classes it asks about (each class alone, and, for a few classes, every
//! set of them sharing a pool), the traffic of a group, the cheapest way to
//! cover every class with groups that have answers, and that cover as one
//! deployment.
//!
//! Groups are bitmasks over the scenario's classes (bit `i` for class `i`).
//! Sharing a pool pays where classes too small to fill a replica each fill
//! one together (a replica is the least a served pool keeps up), or where
//! their peaks fall at different times; it costs where one class's targets
//! are much tighter than another's (one first-come-first-served pool serves
//! them all at the tightest).

use super::{Config, PlanSlo};
use crate::scenario::{RoutingRule, Scenario};

/// Most classes whose every set is planned as a group sharing a pool (the
/// sets of 3 classes or 4: 1 or 11 more questions). Beyond it, each class is
/// planned alone.
pub const MAX_GROUPED: usize = 4;

/// The groups a plan over `n` classes asks about, after all the traffic:
/// each class alone (in order), then, for 3..=[`MAX_GROUPED`] classes, every
/// set of two or more that is not all of them (in bitmask order).
pub fn groups(n: usize) -> Vec<u32> {
    let mut out: Vec<u32> = (0..n).map(|i| 1 << i).collect();
    if (3..=MAX_GROUPED).contains(&n) {
        let all = (1u32 << n) - 1;
        out.extend((1..all).filter(|m| m.count_ones() >= 2));
    }
    out
}

/// The classes of group `mask`, in order.
pub fn members(mask: u32) -> Vec<usize> {
    (0..32).filter(|i| mask & (1 << i) != 0).collect()
}

/// A group's traffic as a scenario of its own: only its classes (their
/// shares, targets and routes to API tiers kept), the arrivals scaled by
/// their share. No pools or routing rules: the question places them.
pub fn group_scenario(base: &Scenario, mask: u32) -> Result<Scenario, String> {
    let classes = &base.workload.classes;
    let total: f64 = classes.iter().map(|c| c.share).sum();
    if total.is_nan() || total <= 0.0 {
        return Err("the classes' shares add up to 0".into());
    }
    let picked: Vec<usize> = members(mask);
    if picked.is_empty() || picked.iter().any(|&i| i >= classes.len()) {
        return Err(format!("no group {mask:#b} of {} classes", classes.len()));
    }
    let share: f64 = picked.iter().map(|&i| classes[i].share).sum();
    let mut s = super::scale_load(base, share / total);
    s.workload.classes = picked.iter().map(|&i| classes[i].clone()).collect();
    s.routing.clear();
    s.pools.clear();
    if let Some(api) = s.api.as_mut() {
        let names: Vec<&str> = s.workload.classes.iter().map(|k| k.name.as_str()).collect();
        api.routes.retain(|r| names.contains(&r.class.as_str()));
    }
    Ok(s)
}

/// The targets a group is planned for: the tightest of its classes' (one
/// pool serves them first come, first served).
pub fn tightest(slos: &[PlanSlo], mask: u32, slo: PlanSlo) -> PlanSlo {
    let picked = members(mask);
    let least = |f: fn(&PlanSlo) -> f64| {
        picked
            .iter()
            .map(|&i| f(&slos[i]))
            .fold(f64::INFINITY, f64::min)
    };
    PlanSlo {
        ttft_p99_ms: least(|t| t.ttft_p99_ms),
        tpot_p99_ms: least(|t| t.tpot_p99_ms),
        ..slo
    }
}

/// A group's name: its classes' names joined.
pub fn name(base: &Scenario, mask: u32) -> String {
    members(mask)
        .iter()
        .map(|&i| base.workload.classes[i].name.as_str())
        .collect::<Vec<_>>()
        .join(" + ")
}

/// The cheapest way to cover the `n` classes with more than one group
/// (each class in exactly one): the groups, among those `cost` prices (None:
/// the group has no answer), sorted. Of covers costing the same (within a
/// millionth), the one with fewer groups (fewer pools to run), then the
/// first found in a fixed order. None if no cover has every group priced.
pub fn cheapest_cover(n: usize, cost: impl Fn(u32) -> Option<f64>) -> Option<Vec<u32>> {
    if n == 0 || n > 16 {
        return None;
    }
    let all = (1u32 << n) - 1;
    // best[m]: the cheapest cover of the classes in m by proper groups.
    let mut best: Vec<Option<(f64, Vec<u32>)>> = vec![None; (all + 1) as usize];
    let better = |total: f64, len: usize, found: &Option<(f64, Vec<u32>)>| match found {
        None => true,
        Some((f, v)) if (total - f).abs() <= 1e-6 * f.abs().max(1.0) => len < v.len(),
        Some((f, _)) => total < *f,
    };
    best[0] = Some((0.0, Vec::new()));
    for m in 1..=all {
        let low = m & m.wrapping_neg();
        // Every group within m that holds m's lowest class.
        let mut g = m;
        let mut found: Option<(f64, Vec<u32>)> = None;
        while g != 0 {
            if g & low != 0
                && g != all
                && let (Some(c), Some((rest, groups))) = (cost(g), &best[(m ^ g) as usize])
            {
                let total = c + rest;
                if better(total, groups.len() + 1, &found) {
                    let mut v = groups.clone();
                    v.push(g);
                    found = Some((total, v));
                }
            }
            g = (g - 1) & m;
        }
        best[m as usize] = found;
    }
    best[all as usize].take().map(|(_, mut v)| {
        v.sort_unstable();
        v
    })
}

/// One group of a cover and its answer: the setup's config and how to make
/// a scenario that setup ([`super::pool_plan::Answer::apply`]).
pub struct Placed<'a> {
    /// The group.
    pub mask: u32,
    /// Its answer.
    pub answer: &'a super::pool_plan::Answer,
}

/// The cover as one deployment of `base`: a pool per self-hosted group
/// (named after its classes), an API tier per API group, and a routing rule
/// per class (with the group's overflow to an API tier, where that is its
/// answer). Groups sharing a tier share its limits: the rate-limit multiple
/// is the largest, over the tiers, of the multiples its groups chose added
/// up (an overflowing group counts the scenario's own).
pub fn compose(base: &Scenario, cover: &[Placed]) -> Result<Scenario, String> {
    let mut s = base.clone();
    s.pools.clear();
    s.routing.clear();
    let mut first = true;
    // Each tier's multiples, added up over the groups using it.
    let mut per_tier: Vec<(String, u32)> = Vec::new();
    let mut uses = |tier: &str, m: u32| match per_tier.iter_mut().find(|(t, _)| t == tier) {
        Some((_, sum)) => *sum = sum.saturating_add(m),
        None => per_tier.push((tier.to_owned(), m)),
    };
    let own = base.api.as_ref().map_or(1, |a| a.rate_limit_multiplier);
    let tiers: Vec<&str> = base
        .api
        .iter()
        .flat_map(|a| a.tiers.iter().map(|t| t.name.as_str()))
        .collect();
    for (k, p) in cover.iter().enumerate() {
        let group = name(base, p.mask);
        let fixed = p
            .answer
            .setup()
            .ok_or_else(|| format!("{group} has no setup of its own that meets its targets"))?;
        let to = match &fixed.config {
            Config::SelfHosted { .. } => {
                let mut pool = base.clone();
                p.answer
                    .apply(&mut pool)
                    .map_err(|e| format!("{group}: {e}"))?;
                let mut serving = pool.serving;
                let joined = members(p.mask)
                    .iter()
                    .map(|&i| base.workload.classes[i].name.as_str())
                    .collect::<Vec<_>>()
                    .join("+");
                let mut pool_name = if joined.len() <= 64 {
                    joined
                } else {
                    format!("pool {}", k + 1)
                };
                if tiers.contains(&pool_name.as_str()) {
                    pool_name = format!("{} pool", pool_name.chars().take(59).collect::<String>());
                }
                serving.name = Some(pool_name.clone());
                if std::mem::take(&mut first) {
                    s.serving = serving;
                } else {
                    s.pools.push(serving);
                }
                pool_name
            }
            // A pool plan's questions leave units and fallbacks out
            // (`Space::api_strategies`).
            Config::Api {
                tier,
                multiplier: m,
                client,
                ..
            } => {
                uses(tier, *m);
                if let (Some(c), Some(api)) = (client, s.api.as_mut()) {
                    api.client = c.clone();
                }
                tier.clone()
            }
            Config::AsIs => return Err(format!("{group}: the whole scenario cannot be one pool")),
        };
        if let Some(tier) = p.answer.overflows_to() {
            uses(tier, own);
        }
        for i in members(p.mask) {
            let class = Some(base.workload.classes[i].name.clone());
            s.routing.push(match p.answer.overflows_to() {
                Some(tier) => super::pool_plan::overflow_rule(class, &to, tier),
                None => RoutingRule {
                    class,
                    prompt_under: None,
                    share: None,
                    to: to.clone(),
                    overflow: None,
                },
            });
        }
    }
    // No group self-hosted: nothing may reach (and bill) the scenario's
    // fleet, so a class no rule matched would go to the first tier used.
    if first && let (Some(api), Some((tier, _))) = (s.api.as_mut(), per_tier.first()) {
        api.default_backend = tier.clone();
        api.routes.clear();
    }
    let multiplier = per_tier.iter().map(|(_, m)| *m).max().unwrap_or(0);
    if let Some(api) = s.api.as_mut()
        && multiplier > 0
    {
        api.rate_limit_multiplier = multiplier.min(1000);
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_each_class_then_every_proper_set_of_a_few() {
        assert_eq!(groups(2), vec![0b01, 0b10]);
        assert_eq!(groups(3), vec![0b001, 0b010, 0b100, 0b011, 0b101, 0b110]);
        // 4 classes: 4 alone and the 10 sets of 2 or 3.
        assert_eq!(groups(4).len(), 14);
        assert_eq!(groups(5).len(), 5);
    }

    #[test]
    fn the_cheapest_cover_finds_a_shared_group_and_never_all_of_them() {
        // Alone each class costs 3; 0 and 1 together 4; all three 5 (not a split).
        let cost = |g: u32| match g {
            0b001 | 0b010 | 0b100 => Some(3.0),
            0b011 => Some(4.0),
            0b111 => Some(1.0),
            _ => None,
        };
        assert_eq!(cheapest_cover(3, cost), Some(vec![0b011, 0b100]));
        // A class without an answer alone and in no priced group: no cover.
        let none = |g: u32| (g != 0b100).then_some(1.0).filter(|_| g.count_ones() == 1);
        assert_eq!(cheapest_cover(3, none), None);
        // Of covers costing the same, fewer pools: 0+1 together (6) against
        // each alone (3 + 3), whichever order they are found in.
        let tie = |g: u32| match g {
            0b001 | 0b010 => Some(3.0),
            0b011 => Some(6.0),
            0b100 => Some(1.0),
            _ => None,
        };
        assert_eq!(cheapest_cover(3, tie), Some(vec![0b011, 0b100]));
        let tie = |g: u32| match g {
            0b010 | 0b100 => Some(3.0),
            0b110 => Some(6.0),
            0b001 => Some(1.0),
            _ => None,
        };
        assert_eq!(cheapest_cover(3, tie), Some(vec![0b001, 0b110]));
    }
}
