//! Speculative decoding in the engine: each decode step of a pool that
//! speculates verifies k draft tokens per sequence and keeps, per sequence,
//! its accepted drafts and one token of its own.
//!
//! The decoding set stays O(log n) a step: a sequence's steps are drawn when
//! it is admitted, step by step from the request's own stream (each step's
//! accepted drafts: successes of chance α before the first failure, at most
//! k), so the set knows the step its last token comes in and nothing is
//! touched per step. In the set a sequence's context grows one token a step;
//! the pass's attention adds the mean tokens a step yields beyond one
//! ([`SpeculativeCfg::context`]), and the KV blocks its extra tokens and the k
//! lookahead slots need beyond that are taken at admission
//! (`Request::speculative_blocks`) and freed with the rest.

use super::decode::ONE_TOKEN;
use super::request::ReqId;
use super::{Simulation, blocks_for};
use crate::physics::{BatchShape, StepCost, StepModel};
use crate::rng::{Stream, StreamId};
use crate::scenario::{Speculative, ValidScenario};

/// A pool's speculation, ready to run.
pub(super) struct SpeculativeCfg {
    /// Draft tokens per sequence per step.
    pub(super) k: u32,
    /// Chance each draft token is accepted.
    pub(super) alpha: f64,
    /// Tokens a step yields on average.
    pub(super) mean: f64,
    /// The proposer's passes.
    pub(super) draft: Box<StepModel>,
}

impl SpeculativeCfg {
    /// Pool `index`'s speculation, if it speculates, its proposer timed
    /// with the pool's `timing`.
    pub(super) fn of(
        scenario: &ValidScenario,
        index: usize,
        timing: crate::physics::Timing,
    ) -> Option<SpeculativeCfg> {
        let s = scenario.pool(index);
        let sp: Speculative = s.speculative?;
        let draft = scenario.proposer_deployment(s, &sp).step_model_for(timing);
        Some(SpeculativeCfg {
            k: sp.tokens,
            alpha: sp.acceptance,
            mean: sp.mean_tokens_per_step(),
            draft: Box::new(draft),
        })
    }

    /// Steps to generate `tokens` tokens, drawn step by step.
    pub(super) fn steps_for(&self, tokens: u64, rng: &mut Stream) -> u64 {
        let mut steps = 0;
        let mut made = 0;
        while made < tokens {
            let mut accepted = 0;
            while accepted < self.k && rng.uniform() < self.alpha {
                accepted += 1;
            }
            made += u64::from(accepted) + 1;
            steps += 1;
        }
        // Each step makes one token and at most k more.
        debug_assert!(steps <= tokens && steps * (u64::from(self.k) + 1) >= tokens);
        steps
    }

    /// The decoding sequences' context as a pass reads it: the set's (one
    /// token a step) plus the mean tokens a step yields beyond one, for
    /// every step since each joined.
    pub(super) fn context(&self, context_sum: u64, joined_sum: u64) -> u64 {
        let grown = context_sum.saturating_sub(joined_sum) as f64;
        context_sum + (grown * (self.mean - 1.0)) as u64
    }

    /// The k draft passes of a decode step over `shape`'s sequences.
    pub(super) fn drafts(&self, shape: &BatchShape) -> StepCost {
        let one = self.draft.inner_pass(&BatchShape {
            decode_seqs: shape.decode_seqs,
            decode_context_tokens: shape.decode_context_tokens,
            ..BatchShape::default()
        });
        let k = u64::from(self.k);
        StepCost {
            time_ns: one.time_ns.saturating_mul(k),
            flops: one.flops * k as f64,
            bytes: one.bytes * k as f64,
        }
    }
}

/// The tokens a step request `req` makes as it decodes, in
/// [`ONE_TOKEN`]ths: one without speculation (`speculates` false), else its drawn
/// tokens over its drawn steps.
pub(super) fn step_rate(speculates: bool, req: &super::request::Request) -> u64 {
    if speculates {
        (u64::from(req.speculative_left) * ONE_TOKEN) / u64::from(req.speculative_steps.max(1))
    } else {
        ONE_TOKEN
    }
}

impl Simulation {
    /// The rate request `id` decodes at on replica `r` ([`step_rate`]).
    pub(super) fn step_rate(&self, r: usize, id: ReqId) -> u64 {
        step_rate(pool!(self, r).speculative.is_some(), &self.st.requests[id])
    }

    /// At admission on replica `r` of a speculating pool: draw request
    /// `id`'s decode steps (after its prompt's token), and return the KV
    /// blocks its answer needs beyond what one token a step allocates.
    pub(super) fn draw_speculation(&mut self, r: usize, id: ReqId, target: u64) -> u64 {
        let Some(spec) = &pool!(self, r).speculative else {
            return 0;
        };
        let req = &self.st.requests[id];
        // The prefill samples one token; decode steps make the rest.
        let left = u64::from(
            req.output_tokens
                .saturating_sub(req.generated)
                .saturating_sub(1),
        );
        // Its own stream: the same draws whenever (and however often) it
        // is admitted, whatever other requests do. The draw is a function of
        // the request and the tokens left alone, so an admission that waits
        // for memory pass after pass reuses the last one instead of drawing
        // every step of a long answer again.
        // (A drawn answer with tokens left has at least one step.)
        let steps = if req.speculative_steps > 0 && u64::from(req.speculative_left) == left {
            u64::from(req.speculative_steps)
        } else {
            let mut rng = Stream::new(
                self.cfg.seed ^ req.serial.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                StreamId::SPECULATION,
            );
            spec.steps_for(left, &mut rng)
        };
        let extra = blocks_for(target + left + u64::from(spec.k))
            .saturating_sub(blocks_for(target + steps));
        let req = &mut self.st.requests[id];
        req.speculative_left = left as u32;
        req.speculative_steps = steps as u32;
        extra
    }

    /// The tokens a decode step of `decodes` sequences on replica `r`
    /// made: one each, or under speculation each one's tokens a step.
    pub(super) fn step_tokens_made(&mut self, r: usize, decodes: u64) -> u64 {
        if pool!(self, r).speculative.is_some() {
            self.st.replicas[r].decoding.step_tokens()
        } else {
            decodes
        }
    }

    /// The context request `id` holds leaving replica `r`'s decoding set at
    /// `ctx`, counting what it generated: one token a step, or under
    /// speculation its steps' share of its tokens.
    pub(super) fn context_made(&self, r: usize, id: ReqId, ctx: u64) -> u64 {
        if pool!(self, r).speculative.is_some() {
            let c0 = self.st.requests[id].joined.c0;
            c0 + self.speculative_generated(id, ctx - c0)
        } else {
            ctx
        }
    }

    /// Request `id` made its last token on replica `r`, leaving at context
    /// `ctx`: all its tokens generated (under speculation its steps and
    /// tokens counted).
    pub(super) fn finish_generation(&mut self, r: usize, id: ReqId, ctx: u64) {
        let spec = pool!(self, r).speculative.is_some();
        let req = &mut self.st.requests[id];
        if spec {
            // Its steps made its tokens, several a step.
            self.rec.speculative_tokens += u64::from(req.speculative_left);
            self.rec.speculative_steps += u64::from(req.speculative_steps);
            req.generated = req.output_tokens;
        } else {
            req.generated = (ctx + 1 - u64::from(req.input_tokens)) as u32;
        }
        debug_assert_eq!(req.generated, req.output_tokens, "finished early or late");
    }

    /// What request `id`, joining replica `r`'s decoding set, has left to
    /// decode and its rate: its tokens at one a step, or under speculation
    /// its drawn steps at its tokens a step.
    pub(super) fn decode_steps_left(&self, r: usize, id: ReqId) -> (u64, u64) {
        let spec = pool!(self, r).speculative.is_some();
        let req = &self.st.requests[id];
        let left = if spec {
            u64::from(req.speculative_steps.max(1))
        } else {
            u64::from(req.output_tokens - req.generated)
        };
        (left, step_rate(spec, req))
    }

    /// What a speculating sequence leaving replica `r`'s decoding set after
    /// `done` of its steps has really generated in those steps (its tokens
    /// spread evenly over its steps).
    pub(super) fn speculative_generated(&self, id: ReqId, done: u64) -> u64 {
        let req = &self.st.requests[id];
        let steps = u64::from(req.speculative_steps.max(1));
        done.min(steps) * u64::from(req.speculative_left) / steps
    }
}
