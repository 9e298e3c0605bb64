//! One replica's cached KV blocks (the state behind [`super::prefix`]): each
//! owner's blocks as a run of entries, the least-recently-used order of the
//! idle ones, and eviction.
//!
//! A request holds a prefix of each owner's blocks, so within a run the
//! references never grow with the index and a release makes a contiguous
//! range idle with consecutive ticks: the queue keeps such a range as one
//! segment, and eviction walks it block by block without touching the queue
//! again.

use super::prefix::{Owner, PrefixHashes, PromptIdentity};
use std::collections::{BTreeMap, VecDeque};
use std::ops::Range;

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
    fn get(&self, i: u32) -> Option<&Entry> {
        let at = i.checked_sub(self.start)?;
        self.entries.get(at as usize).filter(|e| e.cached)
    }

    /// Whether block `i` is cached, idle, and was released at `tick` (its
    /// LRU queue entry is the current one).
    fn idle_since(&self, i: u32, tick: u64) -> bool {
        self.get(i).is_some_and(|e| e.refs == 0 && e.tick == tick)
    }

    /// Where the entries of blocks `span` that the run has room for lie in
    /// `entries` (from the span's start; none if the run starts after it).
    fn existing(&self, span: Range<u32>) -> Range<usize> {
        let Some(from) = span.start.checked_sub(self.start) else {
            return 0..0;
        };
        let len = self.entries.len() as u32;
        let to = (span.end - self.start).min(len);
        from.min(len) as usize..to as usize
    }

    /// The entries of blocks `span`, made room for (a run grows a span at a
    /// time, without slack).
    fn room(&mut self, span: Range<u32>) -> &mut [Entry] {
        if self.entries.is_empty() {
            self.start = span.start;
        }
        if span.start < self.start {
            let grow = (self.start - span.start) as usize;
            self.entries
                .splice(0..0, std::iter::repeat_n(Entry::default(), grow));
            self.start = span.start;
        }
        let to = (span.end - self.start) as usize;
        if to > self.entries.len() {
            self.entries.reserve_exact(to - self.entries.len());
            self.entries.resize(to, Entry::default());
        }
        &mut self.entries[(span.start - self.start) as usize..to]
    }
}

/// Idle blocks `lo..hi` of run `run`, released one after another from the
/// last: block `hi − 1` at `tick`, block `hi − 2` at `tick + 1`, and so on.
#[derive(Clone, Copy, Debug)]
struct Released {
    tick: u64,
    run: u32,
    lo: u32,
    hi: u32,
}

/// No run: a hashed owner's slot in the table before it has one.
const NONE: u32 = u32::MAX;

/// Hash values below this find their run in a table indexed by value (4
/// bytes each, at most 1 MB a replica: Mooncake numbers its hashes densely
/// from 0); larger ones in the map, as other owners.
const HASH_TABLE: u64 = 1 << 18;

/// One replica's cached blocks.
#[derive(Clone, Debug, Default)]
pub(in crate::engine) struct PrefixCache {
    /// Runs of system prompts, conversations and large hash values.
    owners: BTreeMap<Owner, u32>,
    /// Runs of a trace's small hash values, by value (grown on first use).
    hashed: Vec<u32>,
    runs: Vec<Run>,
    free_runs: Vec<u32>,
    /// Idle blocks by release time, oldest first, with stale entries.
    lru: VecDeque<Released>,
    /// Blocks the queue names, stale ones included.
    queued: u64,
    idle: u64,
    tick: u64,
}

impl PrefixCache {
    /// Unreferenced cached blocks (free space holding reusable content).
    #[cfg(test)]
    pub(super) fn idle(&self) -> u64 {
        self.idle
    }

    /// Blocks the LRU queue names, stale ones included.
    #[cfg(test)]
    pub(super) fn queued(&self) -> u64 {
        self.queued
    }

    /// Whether no owner has a run.
    #[cfg(test)]
    pub(super) fn has_no_owners(&self) -> bool {
        self.owners.is_empty() && self.hashed.iter().all(|&k| k == NONE)
    }

    fn run_of(&self, owner: Owner) -> Option<u32> {
        match owner {
            Owner::Hashed { hash } if hash < HASH_TABLE => self
                .hashed
                .get(hash as usize)
                .copied()
                .filter(|&k| k != NONE),
            _ => self.owners.get(&owner).copied(),
        }
    }

    fn run_for(&mut self, owner: Owner) -> u32 {
        if let Some(k) = self.run_of(owner) {
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
        match owner {
            Owner::Hashed { hash } if hash < HASH_TABLE => {
                let at = hash as usize;
                if at >= self.hashed.len() {
                    self.hashed.resize(at + 1, NONE);
                }
                self.hashed[at] = k;
            }
            _ => {
                self.owners.insert(owner, k);
            }
        }
        k
    }

    /// How many leading blocks of the prompt are cached, and how many of those
    /// are unreferenced now (holding them would add that many to KV use).
    pub(in crate::engine) fn probe(&self, p: &PromptIdentity, h: &PrefixHashes) -> (u32, u64) {
        let mut hits = 0;
        let mut idle = 0;
        for (owner, span, base) in p.spans(p.matchable_blocks(), h) {
            let Some(run) = self.run_of(owner).map(|k| &self.runs[k as usize]) else {
                return (hits, idle);
            };
            let want = span.len() as u32;
            let mut found = 0;
            for e in &run.entries[run.existing(span.start - base..span.end - base)] {
                if !e.cached {
                    break;
                }
                idle += u64::from(e.refs == 0);
                found += 1;
            }
            hits += found;
            if found < want {
                return (hits, idle);
            }
        }
        (hits, idle)
    }

    /// Take a reference to the first `n` blocks of the prompt (found by
    /// [`Self::probe`]); returns how many it holds.
    pub(in crate::engine) fn hold(&mut self, p: &PromptIdentity, h: &PrefixHashes, n: u32) -> u32 {
        let mut held = 0;
        for (owner, span, base) in p.spans(n, h) {
            let Some(k) = self.run_of(owner) else {
                return held;
            };
            let want = span.len() as u32;
            let mut taken = 0;
            let run = &mut self.runs[k as usize];
            let at = run.existing(span.start - base..span.end - base);
            for e in &mut run.entries[at] {
                if !e.cached {
                    break;
                }
                // An idle block's queue entry is stale now.
                self.idle -= u64::from(e.refs == 0);
                e.refs += 1;
                taken += 1;
            }
            held += taken;
            if taken < want {
                return held;
            }
        }
        held
    }

    /// A request computed blocks `from..to` of its prompt and holds them:
    /// cache them, until one is found that another request cached meanwhile
    /// (that copy and the rest stay the request's own). Returns how many the
    /// request now holds through the cache.
    pub(in crate::engine) fn publish(
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
            let mut fresh = 0;
            let mut blocked = false;
            for e in run.room(span) {
                if e.cached {
                    blocked = true;
                    break;
                }
                *e = Entry {
                    tick: 0,
                    refs: 1,
                    cached: true,
                };
                fresh += 1;
            }
            run.live += fresh;
            published += fresh;
            if blocked {
                self.recycle_if_empty(k);
                return published;
            }
        }
        published
    }

    /// A request lets go of the prompt's first `held` blocks (those it holds
    /// through the cache) and, for a conversation turn, keeps the blocks up to
    /// `keep` cached for the next turn: last block first, so the tail is the
    /// first to be evicted. Returns how many held blocks became unreferenced
    /// (no longer in use, but still cached).
    pub(in crate::engine) fn let_go(
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
    fn release(&mut self, owner: Owner, span: Range<u32>, base: u32, held: u32) -> u64 {
        let k = self.run_for(owner);
        let Self {
            runs,
            lru,
            queued,
            tick,
            idle,
            ..
        } = self;
        let run = &mut runs[k as usize];
        let first = span.start;
        let (mut unreferenced, mut fresh) = (0, 0);
        for (j, e) in run
            .room(span.start - base..span.end - base)
            .iter_mut()
            .enumerate()
            .rev()
        {
            let i = first + j as u32;
            if i < held {
                debug_assert!(e.cached && e.refs > 0, "letting go of a block not held");
                e.refs -= 1;
                if e.refs > 0 {
                    continue;
                }
                unreferenced += 1;
            } else if e.cached {
                continue; // already cached: the request's copy goes
            } else {
                e.cached = true;
                fresh += 1;
            }
            *tick += 1;
            *idle += 1;
            e.tick = *tick;
            let index = i - base;
            queue_idle(lru, queued, k, index..index + 1, *tick);
        }
        run.live += fresh;
        self.recycle_if_empty(k);
        unreferenced
    }

    /// Whether block `index` of run `run` is idle and was released at `tick`.
    fn current(&self, run: u32, index: u32, tick: u64) -> bool {
        self.runs[run as usize].idle_since(index, tick)
    }

    /// Drop stale queue entries once they are a third of the queue (each
    /// sweep follows at least idle / 2 releases: O(1) amortised).
    fn sweep(&mut self) {
        if self.queued <= self.idle + self.idle / 2 + 64 {
            return;
        }
        let old = std::mem::take(&mut self.lru);
        self.queued = 0;
        for r in old {
            // Oldest first: from the segment's last block down.
            let mut open: Option<(u32, u64)> = None; // (hi, tick of hi − 1)
            for (n, index) in (r.lo..r.hi).rev().enumerate() {
                let tick = r.tick + n as u64;
                match (self.current(r.run, index, tick), open) {
                    (true, None) => open = Some((index + 1, tick)),
                    (false, Some((hi, t))) => {
                        queue_idle(&mut self.lru, &mut self.queued, r.run, index + 1..hi, t);
                        open = None;
                    }
                    _ => {}
                }
            }
            if let Some((hi, t)) = open {
                queue_idle(&mut self.lru, &mut self.queued, r.run, r.lo..hi, t);
            }
        }
    }

    fn recycle_if_empty(&mut self, k: u32) {
        let run = &mut self.runs[k as usize];
        if run.live == 0
            && let Some(owner) = run.owner.take()
        {
            // Keep the entries' allocation for the next owner of the slot.
            run.entries.clear();
            run.start = 0;
            match owner {
                Owner::Hashed { hash } if hash < HASH_TABLE => self.hashed[hash as usize] = NONE,
                _ => {
                    self.owners.remove(&owner);
                }
            }
            self.free_runs.push(k);
        }
    }

    /// Evict the least recently used unreferenced blocks until at most `room`
    /// remain (they are the free space the replica can hand out).
    pub(in crate::engine) fn evict_to(&mut self, room: u64) {
        while self.idle > room
            && let Some(front) = self.lru.front_mut()
        {
            // The front segment's blocks, oldest (its last) first, until
            // enough are evicted; stale ones are passed over.
            let mut need = self.idle - room;
            let k = front.run;
            let run = &mut self.runs[k as usize];
            let mut walked = 0u32;
            let mut evicted = 0u32;
            while front.hi - walked > front.lo && need > 0 {
                let index = front.hi - 1 - walked;
                let tick = front.tick + u64::from(walked);
                walked += 1;
                if run.idle_since(index, tick) {
                    run.entries[(index - run.start) as usize] = Entry::default();
                    evicted += 1;
                    need -= 1;
                }
            }
            front.hi -= walked;
            front.tick += u64::from(walked);
            if front.hi == front.lo {
                self.lru.pop_front();
            }
            self.queued -= u64::from(walked);
            run.live -= evicted;
            self.idle -= u64::from(evicted);
            self.recycle_if_empty(k);
        }
    }
}

/// Queue blocks `blocks` of run `k`, released from the last at `tick`: the
/// last segment grows when they continue it.
fn queue_idle(
    lru: &mut VecDeque<Released>,
    queued: &mut u64,
    k: u32,
    blocks: Range<u32>,
    tick: u64,
) {
    *queued += u64::from(blocks.end - blocks.start);
    if let Some(back) = lru.back_mut()
        && back.run == k
        && back.lo == blocks.end
        && back.tick + u64::from(back.hi - back.lo) == tick
    {
        back.lo = blocks.start;
        return;
    }
    lru.push_back(Released {
        tick,
        run: k,
        lo: blocks.start,
        hi: blocks.end,
    });
}

#[cfg(test)]
#[path = "prefix_cache_tests.rs"]
mod tests;
