//! What a workload's average request costs at an API tier, by formula, for
//! the cost-against-load comparison (`super`), which prices loads
//! it does not simulate. A run bills request by request
//! (`crate::engine`); this is the same bill in expectation:
//!
//! - a call's prompt is its class's shared system prompt `S`, then the
//!   question `q`; turn `t` of a conversation sends the `t − 1` earlier turns
//!   again (prompts and answers `a`): `S + t·q + (t − 1)·a`;
//! - with a prompt cache of lifetime `T`, a task keeps its system prompt
//!   cached from its first call until `T` after its last: for `L = T + (n −
//!   1)·E[min(think, T)]` with `n` turns (`L = T` for other tasks). Tasks
//!   using one of `P` system prompts come as a Poisson stream of `λ/P` a
//!   second, so a task's first call finds its prompt cached with
//!   probability `1 − e^(−λ·L/P)`; an agent's later calls always do;
//!   turn `t ≥ 2` of a conversation finds the previous turn's prompt cached
//!   when the user came back within `T`, else only the system prompt as a
//!   first call would (the think time's distribution is read from 4,096
//!   draws of a fixed stream);
//! - an explicit cache writes what a call can reuse beyond its hit: the
//!   system prompt, or a conversation's whole prompt;
//! - each part is priced as [`crate::api::input_usd`] prices it.
//!
//! The formula treats lengths as their means and ignores the moment a
//! prompt takes to process before it can be hit; `tests/it/prompt_cache.rs`
//! holds it to the simulated bill.

use crate::api::{CacheMode, PromptCache, ProviderTier};
use crate::rng::{Stream, StreamId};
use crate::scenario::{RequestClass, Scenario};

/// Draws estimating the chance a user returns within a cache's lifetime.
const THINK_DRAWS: u32 = 4096;

/// The mean price of one task (all its calls) of `scenario`'s workload on
/// `tier`, when tasks arrive at `tasks_per_s`.
pub fn usd_per_task(scenario: &Scenario, tier: &ProviderTier, tasks_per_s: f64) -> f64 {
    TaskPrice::new(scenario, tier).at(tasks_per_s)
}

/// A workload's task price on a tier at any load: what does not depend on
/// the load (each class's users' returns within the cache's lifetime) is
/// estimated once.
pub struct TaskPrice<'a> {
    scenario: &'a Scenario,
    tier: &'a ProviderTier,
    /// Per class: the chance a user comes back within the lifetime, and the
    /// mean gap between turns cut at it.
    returns: Vec<(f64, f64)>,
}

impl<'a> TaskPrice<'a> {
    /// The price of `scenario`'s tasks on `tier`.
    pub fn new(scenario: &'a Scenario, tier: &'a ProviderTier) -> Self {
        let returns = scenario
            .workload
            .classes
            .iter()
            .map(|k| match (&tier.prompt_cache, &k.conversation) {
                (Some(c), Some(conv)) => returns_within(&conv.think_time_s, c.ttl_s),
                _ => (0.0, 0.0),
            })
            .collect();
        TaskPrice {
            scenario,
            tier,
            returns,
        }
    }

    /// The mean price of one task when tasks arrive at `tasks_per_s`.
    pub fn at(&self, tasks_per_s: f64) -> f64 {
        let classes = &self.scenario.workload.classes;
        let total: f64 = classes.iter().map(|k| k.share).sum();
        classes
            .iter()
            .zip(&self.returns)
            .map(|(k, &returns)| {
                let w = k.share / total;
                // Hidden reasoning is billed as output.
                let out = k.mean_generated_tokens() * self.tier.usd_per_mtok_output / 1e6;
                let input = mean_input_usd(k, self.tier, tasks_per_s * w, returns);
                w * f64::from(k.calls_per_task) * (input + out)
            })
            .sum()
    }
}

/// A class's mean input price per call at `tasks_per_s` of its tasks, its
/// users coming back within the cache's lifetime as `returns` says.
fn mean_input_usd(
    k: &RequestClass,
    tier: &ProviderTier,
    tasks_per_s: f64,
    (p_back, gap): (f64, f64),
) -> f64 {
    let (q, a) = (k.mean_input_tokens(), k.mean_generated_tokens());
    let system = k
        .shared_prefix
        .as_ref()
        .map_or(0.0, |p| f64::from(p.tokens));
    let turns = if k.conversation.is_some() {
        k.calls_per_task.max(1)
    } else {
        1
    };
    let prompt = |t: u32| system + f64::from(t) * q + f64::from(t - 1) * a;
    // Means of many calls, in fractional tokens: `input_usd`'s bill.
    let per_token = tier.usd_per_mtok_input / 1e6;
    let price = |input: f64, hit: f64, written: f64| match &tier.prompt_cache {
        None => input * per_token,
        Some(c) => {
            (input - hit - written).max(0.0) * per_token
                + hit * (c.usd_per_mtok_cached / 1e6)
                + written * per_token * c.write_multiplier()
        }
    };
    let Some(cache) = &tier.prompt_cache else {
        let mean: f64 = (1..=turns).map(prompt).sum::<f64>() / f64::from(turns);
        return price(mean, 0.0, 0.0);
    };
    // The system prompt's hit, and how often a task's first call finds it
    // cached: a task keeps its prompt alive from its first call to a
    // lifetime after its last (the gaps between turns, each at most a
    // lifetime, in between), and tasks come as a Poisson stream.
    let system_hit = f64::from(cache.hit_tokens(system as u32));
    let prompts = k.shared_prefix.as_ref().map_or(1, |p| p.prompts.max(1));
    let alive = cache.ttl_s + f64::from(turns - 1) * gap;
    let p_system = 1.0 - libm::exp(-tasks_per_s / f64::from(prompts) * alive);
    let explicit = matches!(cache.mode, CacheMode::Explicit { .. });
    let mut total = 0.0;
    for t in 1..=turns {
        let input = prompt(t);
        // What this call can reuse later, and what it may find cached.
        let reusable = reusable(cache, if turns > 1 { input } else { system });
        let (hit_system, hit_history) = (
            p_system * system_hit,
            if t > 1 {
                f64::from(cache.hit_tokens(prompt(t - 1) as u32))
            } else {
                0.0
            },
        );
        let hit = if t > 1 {
            p_back * hit_history + (1.0 - p_back) * hit_system
        } else if turns == 1 && k.calls_per_task > 1 {
            // An agent's chain: its later calls follow at once and find
            // what its first wrote.
            let n = f64::from(k.calls_per_task);
            (hit_system + (n - 1.0) * system_hit) / n
        } else {
            hit_system
        };
        let written = if explicit {
            (reusable - hit).max(0.0)
        } else {
            0.0
        };
        total += price(input, hit, written);
    }
    total / f64::from(turns)
}

/// The tokens of `tokens` a cache keeps: none under its minimum.
fn reusable(cache: &PromptCache, tokens: f64) -> f64 {
    if tokens >= f64::from(cache.min_tokens.max(1)) {
        tokens
    } else {
        0.0
    }
}

/// The chance a think time drawn from `think` is under `ttl_s`, and the
/// mean of the think time cut at `ttl_s`.
fn returns_within(think: &crate::dist::Dist, ttl_s: f64) -> (f64, f64) {
    let sampler = think.sampler();
    let mut s = Stream::new(0, StreamId::TURNS);
    let (mut within, mut cut) = (0u32, 0.0);
    for _ in 0..THINK_DRAWS {
        let t = sampler.sample(&mut s);
        within += u32::from(t < ttl_s);
        cut += t.min(ttl_s);
    }
    let n = f64::from(THINK_DRAWS);
    (f64::from(within) / n, cut / n)
}
