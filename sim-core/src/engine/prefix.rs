//! Automatic prefix caching, as vLLM does it: a full KV block is addressed by
//! the content of every token up to its end, so a prompt that starts like an
//! earlier one finds those blocks computed; blocks freed by finished requests
//! stay cached until evicted, least recently used first, when space is needed.
//!
//! Content is named, not hashed: a block of a shared system prompt is
//! `(class, prompt, index)`; a block of a conversation's history is
//! `(conversation, index)` (the history of turn t is a prefix of turn t + 1's).
//! A prompt with neither can never be matched again and costs nothing here.
//!
//! Accounting: a cached block with references counts once in the replica's KV
//! use however many requests share it; an unreferenced cached block is free
//! space that happens to hold reusable content, evicted on demand, so
//! eviction never frees a block in use. Each operation is O(log blocks) per
//! block of the prompt: a lookup costs O(blocks in the prompt), never
//! O(blocks in the cache).

use super::{BLOCK, blocks_for};
use std::collections::BTreeMap;

/// What a KV block holds, named by the content that determines it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum BlockKey {
    /// Block `index` of shared system prompt `prompt` of class `class`.
    System { class: u16, prompt: u32, index: u32 },
    /// Block `index` of conversation `conversation`'s history.
    History { conversation: u64, index: u32 },
}

/// What a request's prompt shares with others, if anything.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct PromptIdentity {
    /// The shared system prompt: (class, prompt index, tokens).
    pub(super) system: Option<(u16, u32, u32)>,
    /// The conversation this turn belongs to, and the tokens of its history
    /// before this turn's new question (system prompt included).
    pub(super) conversation: Option<(u64, u32)>,
}

impl PromptIdentity {
    /// Whether any block of the prompt can ever be shared.
    pub(super) fn shareable(&self) -> bool {
        self.system.is_some() || self.conversation.is_some()
    }

    /// The key of full block `i`, if it can be shared: blocks inside the
    /// system prompt by the prompt, blocks after it by the conversation.
    pub(super) fn key(&self, i: u32) -> Option<BlockKey> {
        let end = u64::from(i + 1) * BLOCK;
        if let Some((class, prompt, tokens)) = self.system
            && end <= u64::from(tokens)
        {
            return Some(BlockKey::System {
                class,
                prompt,
                index: i,
            });
        }
        self.conversation
            .map(|(conversation, _)| BlockKey::History {
                conversation,
                index: i,
            })
    }

    /// Full blocks of a prompt that another request could have computed: the
    /// system prompt's, then the conversation history's.
    pub(super) fn matchable_blocks(&self) -> u32 {
        let tokens = match (self.system, self.conversation) {
            (_, Some((_, history))) => history,
            (Some((_, _, tokens)), None) => tokens,
            (None, None) => 0,
        };
        tokens / BLOCK as u32
    }
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    refs: u32,
    /// When it was last released (its place in the LRU order while unreferenced).
    tick: u64,
}

/// One replica's cached blocks.
#[derive(Clone, Debug, Default)]
pub(super) struct PrefixCache {
    entries: BTreeMap<BlockKey, Entry>,
    /// Unreferenced blocks by release time, oldest first.
    lru: BTreeMap<u64, BlockKey>,
    tick: u64,
}

impl PrefixCache {
    /// Unreferenced cached blocks (free space holding reusable content).
    pub(super) fn idle(&self) -> u64 {
        self.lru.len() as u64
    }

    /// How many leading blocks of the prompt are cached, and how many of those
    /// are unreferenced now (holding them would add that many to KV use).
    pub(super) fn probe(&self, p: &PromptIdentity) -> (u32, u64) {
        let mut hits = 0;
        let mut idle = 0;
        while hits < p.matchable_blocks() {
            let Some(e) = p.key(hits).and_then(|k| self.entries.get(&k)) else {
                break;
            };
            idle += u64::from(e.refs == 0);
            hits += 1;
        }
        (hits, idle)
    }

    /// Take a reference to the first `n` blocks of the prompt (found by
    /// [`Self::probe`]); returns how many it holds.
    pub(super) fn hold(&mut self, p: &PromptIdentity, n: u32) -> u32 {
        let mut held = 0;
        for i in 0..n {
            let Some(k) = p.key(i) else { break };
            let Some(e) = self.entries.get_mut(&k) else {
                break;
            };
            if e.refs == 0 {
                self.lru.remove(&e.tick);
            }
            e.refs += 1;
            held += 1;
        }
        held
    }

    /// A request finished computing block `key` and holds it: cache it, unless
    /// another request cached the same content meanwhile (then it stays the
    /// request's own). Returns whether the request now holds it through the cache.
    pub(super) fn publish(&mut self, key: BlockKey) -> bool {
        if self.entries.contains_key(&key) {
            return false;
        }
        self.entries.insert(key, Entry { refs: 1, tick: 0 });
        true
    }

    /// Drop a reference; returns true when the block became unreferenced (it
    /// no longer counts as in use, but stays cached).
    pub(super) fn release(&mut self, key: BlockKey) -> bool {
        let Some(e) = self.entries.get_mut(&key) else {
            return false;
        };
        debug_assert!(e.refs > 0, "releasing an unreferenced block");
        e.refs -= 1;
        if e.refs > 0 {
            return false;
        }
        self.tick += 1;
        e.tick = self.tick;
        self.lru.insert(self.tick, key);
        true
    }

    /// Keep a block a request is freeing, unreferenced, for a later turn.
    /// Returns false if it was already cached (the freed block goes).
    pub(super) fn keep(&mut self, key: BlockKey) -> bool {
        if self.entries.contains_key(&key) {
            return false;
        }
        self.tick += 1;
        self.entries.insert(
            key,
            Entry {
                refs: 0,
                tick: self.tick,
            },
        );
        self.lru.insert(self.tick, key);
        true
    }

    /// Evict the least recently used unreferenced blocks until at most `room`
    /// remain (they are the free space the replica can hand out).
    pub(super) fn evict_to(&mut self, room: u64) {
        while self.idle() > room {
            let Some((_, key)) = self.lru.pop_first() else {
                return;
            };
            let gone = self.entries.remove(&key);
            debug_assert!(gone.is_some_and(|e| e.refs == 0), "evicted a block in use");
        }
    }
}

/// Blocks a context of `tokens` holds beyond those held through the cache.
pub(super) fn private_blocks(tokens: u64, shared: usize) -> u64 {
    blocks_for(tokens).saturating_sub(shared as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(p: u32) -> PromptIdentity {
        PromptIdentity {
            system: Some((0, p, 100)),
            conversation: None,
        }
    }

    #[test]
    fn a_shared_prompt_hits_after_it_is_published_and_eviction_spares_blocks_in_use() {
        let mut c = PrefixCache::default();
        let a = prompt(0);
        assert_eq!(a.matchable_blocks(), 6, "100 tokens: 6 full blocks");
        assert_eq!(c.probe(&a), (0, 0));
        for i in 0..6 {
            assert!(c.publish(a.key(i).expect("key")));
        }
        assert_eq!(c.probe(&a), (6, 0), "all held");
        assert_eq!(c.hold(&a, 6), 6);
        c.evict_to(0);
        assert_eq!(c.probe(&a), (6, 0), "blocks in use are never evicted");
        // The first holder lets go: still one reference each.
        for i in 0..6 {
            assert!(!c.release(a.key(i).expect("key")));
        }
        // The second lets go: unreferenced, cached, then evicted oldest first.
        for i in 0..6 {
            assert!(c.release(a.key(i).expect("key")));
        }
        assert_eq!(c.idle(), 6);
        c.evict_to(2);
        assert_eq!(c.idle(), 2);
        assert_eq!(c.probe(&a), (0, 0), "the leading blocks went first");
        assert_eq!(c.probe(&prompt(1)), (0, 0));
    }
}
