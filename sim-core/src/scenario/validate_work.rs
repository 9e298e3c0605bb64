//! Work bounds that depend on the fleet as well as the traffic: the prefix
//! cache's per-block work and the memory its blocks take in the simulator;
//! and the time-ordered schedules (rates, stages, users) the traffic takes.

use super::validate::Checker;
use super::{Scenario, bounds};
use crate::physics::KV_BLOCK_TOKENS;

impl Scenario {
    /// With prefix caching and prompts that can share blocks: the blocks
    /// every request looks up, holds and lets go of, and the blocks the
    /// fleet's caches can hold, both bounded (the first by time, the second
    /// by memory), with what to change when over.
    pub(super) fn validate_prefix_work(&self, c: &mut Checker) {
        let w = &self.workload;
        let caching: Vec<&super::Serving> =
            self.all_pools().filter(|p| p.caches_prefixes()).collect();
        if caching.is_empty()
            || !w
                .classes
                .iter()
                .any(|k| k.shared_prefix.is_some() || k.conversation.is_some())
        {
            return;
        }
        let block = f64::from(KV_BLOCK_TOKENS);
        let total_share: f64 = w.classes.iter().map(|k| k.share.max(0.0)).sum();
        let (mut work, mut distinct, mut conversations) = (0.0, 0.0, false);
        for k in &w.classes {
            let system = k
                .shared_prefix
                .as_ref()
                .map_or(0.0, |p| f64::from(p.tokens));
            // A conversation's history grows by a question and an answer a
            // turn: turn t sends about system + (t − 1)·(q + a) tokens again.
            let history = if k.conversation.is_some() {
                conversations = true;
                let turn = k.mean_input_tokens() + k.mean_generated_tokens();
                f64::from(k.calls_per_task - 1) / 2.0 * turn
            } else {
                0.0
            };
            let blocks = ((system + history) / block).min(f64::from(bounds::TOKENS) / block);
            let requests = c.expected_tasks * k.share.max(0.0) / total_share.max(1e-12)
                * f64::from(k.calls_per_task);
            work += requests * blocks;
            if let Some(p) = &k.shared_prefix {
                distinct += f64::from(p.prompts) * (f64::from(p.tokens) / block).ceil();
            }
        }
        if work > bounds::PREFIX_BLOCKS {
            c.problems.push(format!(
                "workload: with prefix caching, requests would look up about {work:.3e} prompt blocks of {KV_BLOCK_TOKENS} tokens in the cache; at most {:.0e} are allowed — shorten the run, the shared system prompts or the conversations, or set serving.prefix_caching to false",
                bounds::PREFIX_BLOCKS
            ));
        }
        let (mut cached, mut replicas) = (0.0, 0);
        for s in caching {
            let Ok(per_replica) = self.deployment_for(s).kv_capacity_blocks() else {
                return; // said by the fit check
            };
            // A replica caches at most its free KV blocks, and at most the
            // distinct content there is (conversations: as good as unlimited).
            let per_replica = if conversations {
                per_replica as f64
            } else {
                (per_replica as f64).min(distinct)
            };
            cached += per_replica * f64::from(s.replicas);
            replicas += s.replicas;
        }
        if cached > bounds::CACHED_BLOCKS {
            c.problems.push(format!(
                "serving: with prefix caching, {} replicas could cache about {cached:.3e} KV blocks, more than the {:.1e} this simulator tracks (about 1 GB) — use fewer replicas, or set serving.prefix_caching to false",
                replicas,
                bounds::CACHED_BLOCKS
            ));
        }
    }
}

impl Checker {
    /// A time-ordered schedule: 1..=SCHEDULE_POINTS entries, each within the
    /// longest run, the first at 0, strictly increasing.
    pub(super) fn schedule(&mut self, field: &str, noun: &str, times: &[f64]) {
        let n = times.len();
        if n == 0 || n > bounds::SCHEDULE_POINTS {
            self.problems.push(format!(
                "{field} must have 1..={} {noun}s, got {n}",
                bounds::SCHEDULE_POINTS
            ));
        }
        for (i, &t) in times.iter().take(bounds::SCHEDULE_POINTS).enumerate() {
            let f = format!("{field}[{i}].at_s");
            self.range_f(&f, t, 0.0, bounds::DURATION_S, " s");
            if i == 0 && t != 0.0 {
                self.problems
                    .push(format!("{f} must be 0 (the schedule starts at 0), got {t}"));
            }
            if i > 0 && t <= times[i - 1] {
                self.problems.push(format!(
                    "{f} must be after the previous {noun}'s {}, got {t}",
                    times[i - 1]
                ));
            }
        }
    }
}
