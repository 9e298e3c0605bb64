//! A replica's KV blocks with prefix caching: taking blocks into use (evicting
//! idle cached ones for room), looking a prompt up at admission, publishing a
//! computed prompt's shareable blocks, and freeing what a request holds.

use super::prefix::private_blocks;
use super::request::ReqId;
use super::{BLOCK, Simulation};

/// What a lookup found for a prompt about to be admitted.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Lookup {
    /// Leading blocks found in the cache.
    pub(super) hits: u32,
    /// Of those, how many nobody holds now (holding them adds to KV use).
    pub(super) idle: u64,
    /// Prompt tokens served from the cache (at most the prompt less one token:
    /// the last is always computed, to produce the next token).
    pub(super) cached_tokens: u64,
}

impl Simulation {
    /// Take `n` more blocks into use on replica `r`, evicting idle cached
    /// blocks so the cache never holds more than the free space.
    pub(super) fn take_blocks(&mut self, r: usize, n: u64) {
        let capacity = pool!(self, r).kv_blocks;
        let rep = &mut self.st.replicas[r];
        rep.kv_used += n;
        debug_assert!(rep.kv_used <= capacity, "KV blocks over capacity");
        let room = capacity.saturating_sub(rep.kv_used);
        rep.cache.evict_to(room);
    }

    /// What the cache holds of request `id`'s prompt (nothing without caching).
    pub(super) fn lookup(&self, r: usize, id: ReqId, target: u64) -> Lookup {
        if !pool!(self, r).prefix_caching || !self.shares_prefix(id) {
            return Lookup::default();
        }
        let identity = self.identity(id);
        let (hits, idle) = self.st.replicas[r]
            .cache
            .probe(&identity, &self.st.prefix_hashes);
        Lookup {
            hits,
            idle,
            cached_tokens: (u64::from(hits) * BLOCK).min(target.saturating_sub(1)),
        }
    }

    /// Hold the blocks a lookup found.
    pub(super) fn hold_cached(&mut self, r: usize, id: ReqId, found: Lookup) {
        if found.hits == 0 {
            return;
        }
        let identity = self.identity(id);
        let held = self.st.replicas[r]
            .cache
            .hold(&identity, &self.st.prefix_hashes, found.hits);
        self.take_blocks(r, found.idle);
        self.st.requests[id].shared = held;
    }

    /// A prompt was computed: publish its shareable full blocks so later
    /// prompts find them (they stay counted once, now through the cache).
    pub(super) fn publish_prompt(&mut self, r: usize, id: ReqId, prompt_tokens: u64) {
        if !pool!(self, r).prefix_caching || !self.shares_prefix(id) {
            return;
        }
        let identity = self.identity(id);
        let full = (prompt_tokens / BLOCK).min(u64::from(identity.matchable_blocks())) as u32;
        let req = &mut self.st.requests[id];
        req.shared +=
            self.st.replicas[r]
                .cache
                .publish(&identity, &self.st.prefix_hashes, req.shared, full);
    }

    /// Free what request `id` holds for a context of `tokens` tokens: its own
    /// blocks, and its references to cached ones (which stay cached, idle).
    /// A conversation turn that `finished` also keeps its full history blocks
    /// cached (idle) for the next turn, within the free space.
    pub(super) fn free_blocks(&mut self, r: usize, id: ReqId, tokens: u64, finished: bool) {
        let shared = std::mem::take(&mut self.st.requests[id].shared);
        let speculative_blocks = std::mem::take(&mut self.st.requests[id].speculative_blocks);
        self.st.replicas[r].kv_used -= private_blocks(tokens, shared as usize)
            + pool!(self, r).seq_kv_blocks
            + u64::from(speculative_blocks);
        // A conversation's turn keeps its history (its class has turns).
        let conversation = {
            let class = self.st.requests[id].class as usize;
            self.cfg.classes[class].turn_think.is_some()
        };
        let keep = if finished && pool!(self, r).prefix_caching && conversation {
            (tokens / BLOCK) as u32
        } else {
            0
        };
        if shared == 0 && keep == 0 {
            return;
        }
        let identity = self.identity(id);
        debug_assert_eq!(conversation, identity.conversation.is_some());
        let capacity = pool!(self, r).kv_blocks;
        let rep = &mut self.st.replicas[r];
        rep.kv_used -= rep
            .cache
            .let_go(&identity, &self.st.prefix_hashes, shared, keep);
        let room = capacity.saturating_sub(rep.kv_used);
        rep.cache.evict_to(room);
    }
}
