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
//! prompt (O(log owners)); the least-recently-used order is a queue of
//! release times, in which a block taken back into use leaves a stale entry
//! that is skipped (and swept away when stale entries outnumber live ones).
//! Every operation is O(1) amortised per block of the prompt, never
//! O(blocks in the cache).

use super::{BLOCK, blocks_for};
use std::collections::{BTreeMap, VecDeque};

/// Whose content a run of blocks holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Owner {
    /// Shared system prompt `prompt` of class `class`.
    System { class: u16, prompt: u32 },
    /// Conversation `conversation`'s history (after its system prompt).
    History { conversation: u64 },
    /// A trace's hashed block `hash` (and, the hashes being chained, the
    /// prompt before it); its KV blocks are indexed from the hash's first.
    Hashed { hash: u64 },
}

/// The prefix-block hashes of a replayed trace's requests, flattened.
#[derive(Clone, Debug, Default)]
pub(super) struct PrefixHashes {
    pub(super) hashes: Vec<u64>,
    /// Per trace request: where its hashes start in `hashes`, and how many.
    pub(super) of_request: Vec<(usize, u32)>,
    /// KV blocks one hash covers.
    pub(super) blocks_per_hash: u32,
}

impl PrefixHashes {
    /// A replayed trace's hashes, moved out of its requests into one table
    /// (none for other arrivals, or when no request has any).
    pub(super) fn take_from(arrival: &mut crate::scenario::Arrival) -> Self {
        let crate::scenario::Arrival::Trace {
            requests,
            prefix_block_tokens: Some(block_tokens),
        } = arrival
        else {
            return PrefixHashes::default();
        };
        if requests.iter().all(|r| r.prefix_blocks.is_empty()) {
            return PrefixHashes::default();
        }
        let mut hashes = Vec::with_capacity(requests.iter().map(|r| r.prefix_blocks.len()).sum());
        let of_request = requests
            .iter_mut()
            .map(|r| {
                let at = hashes.len();
                hashes.append(&mut r.prefix_blocks);
                (at, (hashes.len() - at) as u32)
            })
            .collect();
        let block_tokens = *block_tokens;
        PrefixHashes {
            hashes,
            of_request,
            blocks_per_hash: (block_tokens / BLOCK as u32).max(1),
        }
    }

    /// Block span `j` of a hashed prompt whose hashes start at `at`, cut at
    /// block `n`: its owner, its blocks, and the first block's index.
    fn span(&self, at: usize, j: u32, n: u32) -> (Owner, std::ops::Range<u32>, u32) {
        let start = j * self.blocks_per_hash;
        let owner = Owner::Hashed {
            hash: self.hashes[at + j as usize],
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
    /// A replayed trace's hashed prompt: where its hashes start in
    /// [`PrefixHashes`], how many, and the full KV blocks of the prompt
    /// (system prompt and conversation are then ignored).
    pub(super) hashed: Option<(usize, u32, u32)>,
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
    fn spans(
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

/// One cached block.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    /// When it was last released (its place in the LRU queue while idle).
    tick: u64,
    /// Requests holding it.
    refs: u32,
    /// Whether the block is cached at all.
    cached: bool,
}

/// The blocks one owner has cached, by block index from `start`.
#[derive(Clone, Debug, Default)]
struct Run {
    owner: Option<Owner>,
    start: u32,
    entries: Vec<Entry>,
    /// Cached entries (the run is recycled at zero).
    live: u32,
}

impl Run {
    /// Make room for the blocks of `span` at once.
    fn reserve(&mut self, span: &std::ops::Range<u32>) {
        if self.entries.is_empty() {
            self.start = span.start;
        }
        let have = self.start + self.entries.len() as u32;
        if span.end > have {
            self.entries.reserve_exact((span.end - have) as usize);
        }
    }

    fn get(&self, i: u32) -> Option<&Entry> {
        let at = i.checked_sub(self.start)?;
        self.entries.get(at as usize).filter(|e| e.cached)
    }

    /// The entry of block `i`, made room for.
    fn slot(&mut self, i: u32) -> &mut Entry {
        if self.entries.is_empty() {
            self.start = i;
        }
        if i < self.start {
            let grow = (self.start - i) as usize;
            self.entries
                .splice(0..0, std::iter::repeat_n(Entry::default(), grow));
            self.start = i;
        }
        let at = (i - self.start) as usize;
        if at >= self.entries.len() {
            // Runs grow a span at a time (see `reserve`), without slack.
            self.entries.resize(at + 1, Entry::default());
        }
        &mut self.entries[at]
    }
}

/// An idle block's place in the least-recently-used order.
#[derive(Clone, Copy, Debug)]
struct Released {
    tick: u64,
    run: u32,
    index: u32,
}

/// One replica's cached blocks.
#[derive(Clone, Debug, Default)]
pub(super) struct PrefixCache {
    owners: BTreeMap<Owner, u32>,
    runs: Vec<Run>,
    free_runs: Vec<u32>,
    /// Idle blocks by release time, oldest first, with stale entries.
    lru: VecDeque<Released>,
    idle: u64,
    tick: u64,
}

impl PrefixCache {
    /// Unreferenced cached blocks (free space holding reusable content).
    #[cfg(test)]
    pub(super) fn idle(&self) -> u64 {
        self.idle
    }

    fn run_of(&self, owner: Owner) -> Option<u32> {
        self.owners.get(&owner).copied()
    }

    fn run_for(&mut self, owner: Owner) -> u32 {
        if let Some(&k) = self.owners.get(&owner) {
            return k;
        }
        let k = match self.free_runs.pop() {
            Some(k) => k,
            None => {
                self.runs.push(Run::default());
                (self.runs.len() - 1) as u32
            }
        };
        self.runs[k as usize].owner = Some(owner);
        self.owners.insert(owner, k);
        k
    }

    /// How many leading blocks of the prompt are cached, and how many of those
    /// are unreferenced now (holding them would add that many to KV use).
    pub(super) fn probe(&self, p: &PromptIdentity, h: &PrefixHashes) -> (u32, u64) {
        let mut hits = 0;
        let mut idle = 0;
        for (owner, span, base) in p.spans(p.matchable_blocks(), h) {
            let Some(run) = self.run_of(owner).map(|k| &self.runs[k as usize]) else {
                return (hits, idle);
            };
            for i in span {
                let Some(e) = run.get(i - base) else {
                    return (hits, idle);
                };
                idle += u64::from(e.refs == 0);
                hits += 1;
            }
        }
        (hits, idle)
    }

    /// Take a reference to the first `n` blocks of the prompt (found by
    /// [`Self::probe`]); returns how many it holds.
    pub(super) fn hold(&mut self, p: &PromptIdentity, h: &PrefixHashes, n: u32) -> u32 {
        let mut held = 0;
        for (owner, span, base) in p.spans(n, h) {
            let Some(k) = self.run_of(owner) else {
                return held;
            };
            let run = &mut self.runs[k as usize];
            for i in span {
                if run.get(i - base).is_none() {
                    return held;
                }
                let e = run.slot(i - base);
                if e.refs == 0 {
                    self.idle -= 1; // its queue entry is stale now
                }
                e.refs += 1;
                held += 1;
            }
        }
        held
    }

    /// A request computed blocks `from..to` of its prompt and holds them:
    /// cache them, until one is found that another request cached meanwhile
    /// (that copy and the rest stay the request's own). Returns how many the
    /// request now holds through the cache.
    pub(super) fn publish(
        &mut self,
        p: &PromptIdentity,
        h: &PrefixHashes,
        from: u32,
        to: u32,
    ) -> u32 {
        let mut published = 0;
        for (owner, span, base) in p.spans(to, h) {
            let span = span.start.max(from) - base..span.end - base;
            if span.is_empty() {
                continue;
            }
            let k = self.run_for(owner);
            let run = &mut self.runs[k as usize];
            run.reserve(&span);
            for i in span {
                let e = run.slot(i);
                if e.cached {
                    self.recycle_if_empty(k);
                    return published;
                }
                *e = Entry {
                    tick: 0,
                    refs: 1,
                    cached: true,
                };
                run.live += 1;
                published += 1;
            }
        }
        published
    }

    /// A request lets go of the prompt's first `held` blocks (those it holds
    /// through the cache) and, for a conversation turn, keeps the blocks up to
    /// `keep` cached for the next turn: last block first, so the tail is the
    /// first to be evicted. Returns how many held blocks became unreferenced
    /// (no longer in use, but still cached).
    pub(super) fn let_go(
        &mut self,
        p: &PromptIdentity,
        h: &PrefixHashes,
        held: u32,
        keep: u32,
    ) -> u64 {
        let mut unreferenced = 0;
        for (owner, span, base) in p.spans(held.max(keep), h).rev() {
            unreferenced += self.release(owner, span, base, held);
        }
        self.sweep();
        unreferenced
    }

    /// [`Self::let_go`] of one owner's blocks `span` (counted from `base`),
    /// last first; returns how many held blocks became unreferenced.
    fn release(&mut self, owner: Owner, span: std::ops::Range<u32>, base: u32, held: u32) -> u64 {
        let mut unreferenced = 0;
        let k = self.run_for(owner);
        self.runs[k as usize].reserve(&(span.start - base..span.end - base));
        for i in span.rev() {
            let tick = self.tick + 1;
            let run = &mut self.runs[k as usize];
            let e = run.slot(i - base);
            let new = if i < held {
                debug_assert!(e.cached && e.refs > 0, "letting go of a block not held");
                e.refs -= 1;
                if e.refs > 0 {
                    continue;
                }
                unreferenced += 1;
                false
            } else if e.cached {
                continue; // already cached: the request's copy goes
            } else {
                e.cached = true;
                true
            };
            e.tick = tick;
            run.live += u32::from(new);
            self.tick = tick;
            self.idle += 1;
            self.lru.push_back(Released {
                tick,
                run: k,
                index: i - base,
            });
        }
        self.recycle_if_empty(k);
        unreferenced
    }

    /// Whether a queue entry still names an idle block released at its tick.
    fn current(&self, r: &Released) -> bool {
        self.runs[r.run as usize]
            .get(r.index)
            .is_some_and(|e| e.refs == 0 && e.tick == r.tick)
    }

    /// Drop stale queue entries once they are a third of the queue (each
    /// sweep follows at least idle / 2 releases: O(1) amortised).
    fn sweep(&mut self) {
        if self.lru.len() as u64 > self.idle + self.idle / 2 + 64 {
            let lru = std::mem::take(&mut self.lru);
            self.lru = lru.into_iter().filter(|r| self.current(r)).collect();
        }
    }

    fn recycle_if_empty(&mut self, k: u32) {
        let run = &mut self.runs[k as usize];
        if run.live == 0
            && let Some(owner) = run.owner.take()
        {
            *run = Run::default();
            self.owners.remove(&owner);
            self.free_runs.push(k);
        }
    }

    /// Evict the least recently used unreferenced blocks until at most `room`
    /// remain (they are the free space the replica can hand out).
    pub(super) fn evict_to(&mut self, room: u64) {
        while self.idle > room
            && let Some(r) = self.lru.pop_front()
        {
            if !self.current(&r) {
                continue;
            }
            let run = &mut self.runs[r.run as usize];
            *run.slot(r.index) = Entry::default();
            run.live -= 1;
            self.idle -= 1;
            self.recycle_if_empty(r.run);
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

    const NO_HASHES: PrefixHashes = PrefixHashes {
        hashes: Vec::new(),
        of_request: Vec::new(),
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
            c.owners.is_empty(),
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
        assert!(c.lru.len() <= 6 + 3 + 64, "stale entries are swept");
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
