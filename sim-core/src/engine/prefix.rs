//! Automatic prefix caching, as vLLM does it: a full KV block is addressed by
//! the content of every token up to its end, so a prompt that starts like an
//! earlier one finds those blocks computed; blocks freed by finished requests
//! stay cached until evicted, least recently used first, when space is needed.
//! A request lets go of its blocks last one first (as vLLM frees them), so
//! under pressure a prompt loses its tail before its head.
//!
//! Content is named, not hashed: the blocks of a shared system prompt belong
//! to `(class, prompt)`; the blocks of a conversation's history after it to
//! the conversation (the history of turn t is a prefix of turn t + 1's). A
//! prompt with neither can never be matched again and costs nothing here.
//! A replayed trace that gives content hashes (Mooncake's `hash_ids`, one per
//! 512 tokens, chained) names each hashed block by its hash instead: prompts
//! that share a hash share its blocks, whatever their class.
//!
//! Accounting: a cached block with references counts once in the replica's KV
//! use however many requests share it; an unreferenced cached block is free
//! space that happens to hold reusable content, evicted on demand, so
//! eviction never frees a block in use.
//!
//! Cost: the blocks of one owner are a vector indexed by block, found once per
//! owner of the prompt (a trace's small hash values, as Mooncake's dense
//! ones, index a table; other owners O(log owners)); the
//! least-recently-used order is a queue of release times kept as segments of
//! blocks released one after another, in which a block taken back into use
//! leaves a stale entry that is skipped (and swept away when stale entries
//! outnumber live ones). Every operation is O(1) amortised per block of the
//! prompt, never O(blocks in the cache), and a block costs a few
//! instructions: the LRU queue grows by a segment per owner released.

use super::{BLOCK, blocks_for};

/// Whose content a run of blocks holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Owner {
    /// Shared system prompt `prompt` of class `class`.
    System { class: u16, prompt: u32 },
    /// Conversation `conversation`'s history (after its system prompt).
    History { conversation: u64 },
    /// A trace's hashed block, by its hash (and, the hashes being chained,
    /// the prompt before it); its KV blocks are indexed from the hash's
    /// first.
    Hashed { hash: u64 },
}

/// The prefix-block hashes of a replayed trace's requests in flight, each
/// request's in a slot from its arrival until it leaves (so they cost
/// memory while it is in flight, never for the whole trace).
#[derive(Clone, Debug, Default)]
pub(super) struct PrefixHashes {
    /// Per slot, a request's hashes (a freed slot keeps its allocation).
    held: Vec<Vec<u64>>,
    free: Vec<u32>,
    /// KV blocks one hash covers.
    pub(super) blocks_per_hash: u32,
}

impl PrefixHashes {
    /// The table of a run whose trace's hashes each cover `block_tokens`.
    pub(super) fn new(block_tokens: Option<u32>) -> Self {
        PrefixHashes {
            blocks_per_hash: block_tokens.map_or(1, |t| (t / BLOCK as u32).max(1)),
            ..PrefixHashes::default()
        }
    }

    /// Keep a request's `hashes` until [`Self::release`]; its slot.
    pub(super) fn keep(&mut self, hashes: &[u64]) -> u32 {
        let slot = match self.free.pop() {
            Some(k) => k,
            None => {
                self.held.push(Vec::new());
                (self.held.len() - 1) as u32
            }
        };
        let h = &mut self.held[slot as usize];
        h.clear();
        h.extend_from_slice(hashes);
        slot
    }

    /// Let a slot go (its request left).
    pub(super) fn release(&mut self, slot: u32) {
        debug_assert!(self.free.len() < self.held.len(), "a slot freed twice");
        self.free.push(slot);
    }

    /// Slots holding a request's hashes.
    pub(super) fn in_use(&self) -> usize {
        self.held.len() - self.free.len()
    }

    /// How many hashes slot `slot` holds.
    pub(super) fn count(&self, slot: u32) -> u32 {
        self.held[slot as usize].len() as u32
    }

    /// Block span `j` of the hashed prompt in `slot`, cut at block `n`: its
    /// owner, its blocks, and the first block's index.
    fn span(&self, slot: u32, j: u32, n: u32) -> (Owner, std::ops::Range<u32>, u32) {
        let start = j * self.blocks_per_hash;
        let owner = Owner::Hashed {
            hash: self.held[slot as usize][j as usize],
        };
        (owner, start..(start + self.blocks_per_hash).min(n), start)
    }

    /// How many spans of a hashed prompt with `len` hashes blocks `0..n` cross.
    fn spans(&self, len: u32, n: u32) -> u32 {
        n.div_ceil(self.blocks_per_hash.max(1)).min(len)
    }
}

/// What a request's prompt shares with others, if anything.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct PromptIdentity {
    /// The shared system prompt: (class, prompt index, tokens).
    pub(super) system: Option<(u16, u32, u32)>,
    /// The conversation this turn belongs to, and the tokens of its history
    /// before this turn's new question (system prompt included).
    pub(super) conversation: Option<(u64, u32)>,
    /// A replayed trace's hashed prompt: its slot in [`PrefixHashes`], how
    /// many hashes, and the full KV blocks of the prompt (system prompt and
    /// conversation are then ignored).
    pub(super) hashed: Option<(u32, u32, u32)>,
}

impl PromptIdentity {
    /// Whether any block of the prompt can ever be shared.
    pub(super) fn shareable(&self) -> bool {
        self.system.is_some() || self.conversation.is_some() || self.hashed.is_some()
    }

    /// Who owns full block `i`, if it can be shared: blocks inside the system
    /// prompt its prompt, blocks after it the conversation.
    pub(super) fn owner(&self, i: u32) -> Option<Owner> {
        let end = u64::from(i + 1) * BLOCK;
        if let Some((class, prompt, tokens)) = self.system
            && end <= u64::from(tokens)
        {
            return Some(Owner::System { class, prompt });
        }
        self.conversation
            .map(|(conversation, _)| Owner::History { conversation })
    }

    /// Full blocks of a prompt that another request could have computed: the
    /// system prompt's, then the conversation history's.
    pub(super) fn matchable_blocks(&self) -> u32 {
        if let Some((_, _, blocks)) = self.hashed {
            return blocks;
        }
        let tokens = match (self.system, self.conversation) {
            (_, Some((_, history))) => history,
            (Some((_, _, tokens)), None) => tokens,
            (None, None) => 0,
        };
        tokens / BLOCK as u32
    }

    /// The owners of blocks `0..n`, each with the range of blocks it owns
    /// and the index its own blocks count from, in order (the system
    /// prompt's, then the history's; or a hashed prompt's, hash by hash).
    pub(super) fn spans(
        self,
        n: u32,
        h: &PrefixHashes,
    ) -> impl DoubleEndedIterator<Item = (Owner, std::ops::Range<u32>, u32)> {
        let hashed = self
            .hashed
            .into_iter()
            .flat_map(move |(at, len, _)| (0..h.spans(len, n)).map(move |j| h.span(at, j, n)));
        let plain = self.hashed.is_none().then(|| self.plain_spans(n));
        plain
            .into_iter()
            .flatten()
            .map(|(o, r)| (o, r, 0))
            .chain(hashed)
    }

    /// [`Self::spans`] of a prompt without hashes: at most two.
    fn plain_spans(self, n: u32) -> impl DoubleEndedIterator<Item = (Owner, std::ops::Range<u32>)> {
        let system_end = match self.system {
            Some((_, _, tokens)) => (tokens / BLOCK as u32).min(n),
            None => 0,
        };
        let system = self
            .owner(0)
            .filter(|_| system_end > 0)
            .map(|o| (o, 0..system_end));
        let history = self
            .conversation
            .filter(|_| system_end < n)
            .map(|(conversation, _)| (Owner::History { conversation }, system_end..n));
        system.into_iter().chain(history)
    }
}

/// Blocks a context of `tokens` holds beyond those held through the cache.
pub(super) fn private_blocks(tokens: u64, shared: usize) -> u64 {
    blocks_for(tokens).saturating_sub(shared as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::prefix_cache::PrefixCache;

    const NO_HASHES: PrefixHashes = PrefixHashes {
        held: Vec::new(),
        free: Vec::new(),
        blocks_per_hash: 1,
    };

    fn prompt(p: u32) -> PromptIdentity {
        PromptIdentity {
            hashed: None,
            system: Some((0, p, 100)),
            conversation: None,
        }
    }

    #[test]
    fn a_shared_prompt_hits_after_it_is_published_and_eviction_spares_blocks_in_use() {
        let mut c = PrefixCache::default();
        let a = prompt(0);
        assert_eq!(a.matchable_blocks(), 6, "100 tokens: 6 full blocks");
        assert_eq!(c.probe(&a, &NO_HASHES), (0, 0));
        assert_eq!(c.publish(&a, &NO_HASHES, 0, 6), 6);
        assert_eq!(
            c.publish(&a, &NO_HASHES, 0, 6),
            0,
            "already cached: stays private"
        );
        assert_eq!(c.probe(&a, &NO_HASHES), (6, 0), "all held");
        assert_eq!(c.hold(&a, &NO_HASHES, 6), 6);
        c.evict_to(0);
        assert_eq!(
            c.probe(&a, &NO_HASHES),
            (6, 0),
            "blocks in use are never evicted"
        );
        // The first holder lets go: still one reference each.
        assert_eq!(c.let_go(&a, &NO_HASHES, 6, 0), 0);
        // The second lets go: unreferenced, cached, then evicted tail first.
        assert_eq!(c.let_go(&a, &NO_HASHES, 6, 0), 6);
        assert_eq!(c.idle(), 6);
        c.evict_to(2);
        assert_eq!(c.idle(), 2);
        assert_eq!(
            c.probe(&a, &NO_HASHES),
            (2, 2),
            "the head stays, the tail went first"
        );
        assert_eq!(c.probe(&prompt(1), &NO_HASHES), (0, 0));
        c.evict_to(0);
        assert_eq!(c.probe(&a, &NO_HASHES), (0, 0));
        assert!(
            c.has_no_owners(),
            "an owner with nothing cached is recycled"
        );
    }

    #[test]
    fn a_conversation_keeps_its_history_and_stale_queue_entries_are_skipped() {
        let mut c = PrefixCache::default();
        // Turn 1: 40 tokens of system prompt, then the question and answer.
        let turn = |history| PromptIdentity {
            hashed: None,
            system: Some((0, 0, 40)),
            conversation: Some((7, history)),
        };
        let first = turn(40);
        assert_eq!(
            c.publish(&first, &NO_HASHES, 0, 2),
            2,
            "the system prompt's 2 full blocks"
        );
        // It ends with 100 tokens of context: blocks 0..6 kept, 2..6 new.
        assert_eq!(c.let_go(&first, &NO_HASHES, 2, 6), 2);
        assert_eq!(c.idle(), 6);
        let second = turn(100);
        assert_eq!(
            c.probe(&second, &NO_HASHES),
            (6, 6),
            "the whole history is found, idle"
        );
        // Taken back into use, released again, taken again: the queue holds
        // stale entries that eviction skips.
        for _ in 0..50 {
            assert_eq!(c.hold(&second, &NO_HASHES, 6), 6);
            assert_eq!(c.idle(), 0);
            assert_eq!(c.let_go(&second, &NO_HASHES, 6, 0), 6);
        }
        assert!(c.queued() <= 6 + 3 + 64, "stale entries are swept");
        c.evict_to(4);
        assert_eq!(
            c.probe(&second, &NO_HASHES),
            (4, 4),
            "the last blocks let go of went first"
        );
        // Evicting the history's blocks keeps the system prompt's.
        c.evict_to(2);
        assert_eq!(c.probe(&turn(40), &NO_HASHES), (2, 2));
        assert_eq!(c.probe(&second, &NO_HASHES), (2, 2));
    }
}
