//! The set of decoding sequences on one replica, kept so that a decode step
//! costs O(log n) in the number of sequences, not O(n).
//!
//! No sequence is touched per step. A sequence that started decoding at step
//! `k0` with context `c0` has context `c0 + (step − k0)`; the set keeps the sum
//! of contexts, a count of sequences per phase of their context modulo the KV
//! block size (the ones that cross into a new block this step), and a heap of
//! the step at which each one finishes. Entries left in the heap by sequences
//! that left early are skipped when they surface (the caller checks them).

use super::BLOCK;
use super::request::{Joined, ReqId};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// When a decoding sequence finishes, ordered by (step, admission order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Finish {
    /// The decode step that produces the sequence's last token.
    pub(super) step: u64,
    pub(super) admit_order: u64,
    pub(super) id: ReqId,
    /// The request's preemption epoch when the entry was made.
    pub(super) epoch: u32,
}

#[derive(Clone, Debug, Default)]
pub(super) struct DecodeSet {
    /// Decode steps completed on the replica.
    step: u64,
    /// Members by admission order, which is unique (newest last: preempted first).
    by_admission: BTreeMap<u64, ReqId>,
    finishing: BinaryHeap<Reverse<Finish>>,
    context_sum: u64,
    /// Σ of the members' contexts when they joined.
    joined_sum: u64,
    /// Members counted by (c0 − k0) mod BLOCK.
    phase: [u64; BLOCK as usize],
    /// Σ of the members' tokens a step, in [`ONE_TOKEN`]ths: one each,
    /// or under speculative decoding each one's drawn tokens over its
    /// steps.
    tokens_per_step: u64,
    /// What [`Self::step_tokens`] has not yet counted, in [`ONE_TOKEN`]ths.
    carry: u64,
}

/// One token a step, the unit of a member's rate (2¹⁶: a rate is exact to
/// 1.5·10⁻⁵ token a step).
pub(super) const ONE_TOKEN: u64 = 1 << 16;

impl DecodeSet {
    /// Members.
    pub(super) fn len(&self) -> usize {
        self.by_admission.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.by_admission.is_empty()
    }

    /// Σ of the members' contexts, tokens.
    pub(super) fn context_sum(&self) -> u64 {
        self.context_sum
    }

    /// Σ of the members' contexts when they joined (so `context_sum −
    /// joined_sum` is the steps they have been here, summed).
    pub(super) fn joined_sum(&self) -> u64 {
        self.joined_sum
    }

    /// A member's context now.
    pub(super) fn context(&self, j: Joined) -> u64 {
        j.c0 + (self.step - j.k0)
    }

    /// KV blocks the next decode step needs: one for every member whose next
    /// token starts a new block.
    pub(super) fn blocks_needed_now(&self) -> u64 {
        self.phase[((BLOCK - self.step % BLOCK) % BLOCK) as usize]
    }

    /// The most recently admitted member (the one preemption evicts).
    pub(super) fn newest(&self) -> Option<ReqId> {
        self.by_admission.last_key_value().map(|(_, &id)| id)
    }

    /// A sequence starts decoding with `context` tokens and `tokens_left` to
    /// generate (≥ 1; under speculation, the steps left), making `rate`
    /// [`ONE_TOKEN`]ths of a token a step.
    pub(super) fn join(
        &mut self,
        id: ReqId,
        admit_order: u64,
        epoch: u32,
        context: u64,
        tokens_left: u64,
        rate: u64,
    ) -> Joined {
        debug_assert!(tokens_left >= 1);
        let j = Joined {
            c0: context,
            k0: self.step,
        };
        let before = self.by_admission.insert(admit_order, id);
        debug_assert!(before.is_none(), "admission order {admit_order} is taken");
        self.phase[j.phase()] += 1;
        self.context_sum += context;
        self.joined_sum += context;
        self.tokens_per_step += rate;
        self.finishing.push(Reverse(Finish {
            step: j.k0 + tokens_left - 1,
            admit_order,
            id,
            epoch,
        }));
        j
    }

    /// A member leaves (finished, preempted or refused), with the rate it
    /// joined with; returns its context.
    pub(super) fn leave(&mut self, id: ReqId, admit_order: u64, j: Joined, rate: u64) -> u64 {
        let ctx = self.context(j);
        let was = self.by_admission.remove(&admit_order);
        debug_assert_eq!(was, Some(id), "{id:?} was not decoding");
        self.phase[j.phase()] -= 1;
        self.context_sum -= ctx;
        self.joined_sum -= j.c0;
        debug_assert!(self.tokens_per_step >= rate, "a member's rate left twice");
        self.tokens_per_step -= rate;
        if self.by_admission.is_empty() {
            debug_assert_eq!(self.tokens_per_step, 0, "an empty set makes no tokens");
        }
        ctx
    }

    /// Tokens the step that just ran made, whole: the members' rates summed,
    /// what a step leaves over carried to the next, so the counts over a
    /// sequence's steps add up to its tokens (to the unit's rounding).
    pub(super) fn step_tokens(&mut self) -> u64 {
        let t = self.tokens_per_step + self.carry;
        self.carry = t % ONE_TOKEN;
        t / ONE_TOKEN
    }

    /// One decode step completed: every member's context grows by one. Returns
    /// the step that just ran.
    pub(super) fn advance(&mut self) -> u64 {
        let step = self.step;
        self.step += 1;
        self.context_sum += self.len() as u64;
        step
    }

    /// The next heap entry due at or before `step` (possibly stale: the caller
    /// checks it against the request).
    pub(super) fn pop_due(&mut self, step: u64) -> Option<Finish> {
        match self.finishing.peek() {
            Some(Reverse(f)) if f.step <= step => {
                let f = *f;
                self.finishing.pop();
                Some(f)
            }
            _ => None,
        }
    }
}
