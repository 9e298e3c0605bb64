//! The prefix cache against a model of it written block by block (a map of
//! blocks and an LRU map by release tick): every answer and every count
//! agree over random lifecycles of hashed prompts and conversation turns.

use super::PrefixCache;
use crate::engine::prefix::{Owner, PrefixHashes, PromptIdentity};
use crate::physics::KV_BLOCK_TOKENS as BLOCK_TOKENS;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// The cache's semantics, one block at a time.
#[derive(Default)]
struct Model {
    /// (owner, index) → (references, release tick).
    blocks: BTreeMap<(Owner, u32), (u32, u64)>,
    lru: BTreeMap<u64, (Owner, u32)>,
    tick: u64,
}

impl Model {
    fn probe(&self, p: &PromptIdentity, h: &PrefixHashes) -> (u32, u64) {
        let (mut hits, mut idle) = (0, 0);
        for (o, span, base) in p.spans(p.matchable_blocks(), h) {
            for i in span {
                let Some(&(refs, _)) = self.blocks.get(&(o, i - base)) else {
                    return (hits, idle);
                };
                hits += 1;
                idle += u64::from(refs == 0);
            }
        }
        (hits, idle)
    }

    fn hold(&mut self, p: &PromptIdentity, h: &PrefixHashes, n: u32) -> u32 {
        let mut held = 0;
        for (o, span, base) in p.spans(n, h) {
            for i in span {
                let Some(b) = self.blocks.get_mut(&(o, i - base)) else {
                    return held;
                };
                if b.0 == 0 {
                    self.lru.remove(&b.1);
                }
                b.0 += 1;
                held += 1;
            }
        }
        held
    }

    fn publish(&mut self, p: &PromptIdentity, h: &PrefixHashes, from: u32, to: u32) -> u32 {
        let mut published = 0;
        for (o, span, base) in p.spans(to, h) {
            for i in span.start.max(from)..span.end {
                if self.blocks.contains_key(&(o, i - base)) {
                    return published;
                }
                self.blocks.insert((o, i - base), (1, 0));
                published += 1;
            }
        }
        published
    }

    fn let_go(&mut self, p: &PromptIdentity, h: &PrefixHashes, held: u32, keep: u32) -> u64 {
        let mut unreferenced = 0;
        for (o, span, base) in p.spans(held.max(keep), h).rev() {
            for i in span.rev() {
                let key = (o, i - base);
                if i < held {
                    let b = self.blocks.get_mut(&key).expect("held");
                    b.0 -= 1;
                    if b.0 > 0 {
                        continue;
                    }
                    unreferenced += 1;
                } else if self.blocks.contains_key(&key) {
                    continue;
                }
                self.tick += 1;
                self.blocks.insert(key, (0, self.tick));
                self.lru.insert(self.tick, key);
            }
        }
        unreferenced
    }

    fn evict_to(&mut self, room: u64) {
        while self.lru.len() as u64 > room {
            let (_, key) = self.lru.pop_first().expect("idle");
            self.blocks.remove(&key);
        }
    }
}

/// Requests over a small pool of hashes: each starts like an earlier one
/// (some of its hashes) and goes on with fresh ones; every fourth is a
/// conversation turn instead.
fn prompts(spec: &[(u8, u8, u8)]) -> (PrefixHashes, Vec<PromptIdentity>) {
    let mut h = PrefixHashes::new(Some(3 * BLOCK_TOKENS));
    let mut lists: Vec<Vec<u64>> = Vec::new();
    let mut next = 0;
    let mut out = Vec::new();
    for (r, &(from, shared, fresh)) in spec.iter().enumerate() {
        if r % 4 == 3 {
            let history = 16 * (u32::from(fresh % 9) + 1);
            out.push(PromptIdentity {
                system: Some((0, 0, 32)),
                conversation: Some((u64::from(from % 3), history)),
                hashed: None,
            });
            continue;
        }
        let mut list: Vec<u64> = match lists.get(usize::from(from) % lists.len().max(1)) {
            Some(l) => l[..usize::from(shared).min(l.len())].to_vec(),
            None => Vec::new(),
        };
        // Small values (a table by value) and large ones (a map) alike.
        for _ in 0..=fresh % 5 {
            list.push(if next % 2 == 0 {
                next
            } else {
                next | (1 << 40)
            });
            next += 1;
        }
        let slot = h.keep(&list);
        let blocks = list.len() as u32 * 3 - u32::from(fresh % 3);
        out.push(PromptIdentity {
            hashed: Some((slot, list.len() as u32, blocks)),
            ..Default::default()
        });
        lists.push(list);
    }
    (h, out)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn the_cache_agrees_with_its_block_by_block_model(
        spec in prop::collection::vec((any::<u8>(), 0u8..8, any::<u8>()), 1..24),
        steps in prop::collection::vec((any::<u8>(), 0u8..4, 0u64..40), 1..160),
    ) {
        let (h, ps) = prompts(&spec);
        let mut cache = PrefixCache::default();
        let mut model = Model::default();
        // Requests in flight: (prompt, blocks held through the cache, computed).
        let mut live: Vec<(usize, u32, bool)> = Vec::new();
        for (pick, op, room) in steps {
            match op {
                0 => {
                    let p = usize::from(pick) % ps.len();
                    let found = cache.probe(&ps[p], &h);
                    prop_assert_eq!(found, model.probe(&ps[p], &h));
                    let held = cache.hold(&ps[p], &h, found.0);
                    prop_assert_eq!(held, model.hold(&ps[p], &h, found.0));
                    live.push((p, held, false));
                }
                1 if !live.is_empty() => {
                    let at = usize::from(pick) % live.len();
                    let (p, held, computed) = live[at];
                    if !computed {
                        let to = ps[p].matchable_blocks();
                        let more = cache.publish(&ps[p], &h, held, to);
                        prop_assert_eq!(more, model.publish(&ps[p], &h, held, to));
                        live[at] = (p, held + more, true);
                    }
                }
                2 if !live.is_empty() => {
                    let (p, held, _) = live.swap_remove(usize::from(pick) % live.len());
                    let keep = if ps[p].conversation.is_some() { ps[p].matchable_blocks() } else { 0 };
                    let a = cache.let_go(&ps[p], &h, held, keep);
                    prop_assert_eq!(a, model.let_go(&ps[p], &h, held, keep));
                }
                _ => {
                    cache.evict_to(room);
                    model.evict_to(room);
                }
            }
            prop_assert_eq!(cache.idle(), model.lru.len() as u64);
            prop_assert!(cache.queued() >= cache.idle());
        }
        for p in &ps {
            prop_assert_eq!(cache.probe(p, &h), model.probe(p, &h));
        }
    }
}
