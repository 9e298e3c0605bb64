//! A provider tier's prompt cache as the run sees it (the settings are
//! `crate::api::PromptCache`): for each owner of prompt content (a shared
//! system prompt, a conversation's history, a trace's hashed block; see
//! [`super::prefix`]) how far its blocks are cached, from when, and until
//! when.
//!
//! A hit is the longest cached prefix of the prompt: its spans in order, each
//! owner's cached blocks covering the span, stopping at the first span not
//! wholly covered. An owner's entry grows when a longer prompt is written
//! (usable from that request's first token, the older length until then) and
//! lives `ttl` after its last write or read. Expired entries are swept when
//! the table has doubled since the last sweep, so it holds at most about
//! twice the owners used within one lifetime.

use super::prefix::{Owner, PrefixHashes, PromptIdentity};
use super::request::ReqId;
use super::{BLOCK, Simulation};
use crate::api::CacheMode;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    /// Blocks (in the owner's own numbering) usable now.
    ready: u32,
    /// Blocks being written, usable from `pending_at`.
    pending: u32,
    pending_at: u64,
    /// No block is usable from this time on.
    expires: u64,
}

impl Entry {
    fn usable(&self, now: u64) -> u32 {
        if now >= self.expires {
            0
        } else if now >= self.pending_at {
            self.ready.max(self.pending)
        } else {
            self.ready
        }
    }
}

/// One tier's cached prefixes.
#[derive(Clone, Debug)]
pub(super) struct ProviderCache {
    entries: BTreeMap<Owner, Entry>,
    ttl_ns: u64,
    /// Entries after the last sweep.
    swept_at: usize,
}

impl ProviderCache {
    pub(super) fn new(ttl_ns: u64) -> Self {
        ProviderCache {
            entries: BTreeMap::new(),
            ttl_ns: ttl_ns.max(1),
            swept_at: 0,
        }
    }

    /// Tokens of the longest prefix of the first `tokens` tokens of a
    /// prompt cached at `now` (whole blocks).
    pub(super) fn cached(
        &self,
        identity: PromptIdentity,
        tokens: u32,
        h: &PrefixHashes,
        now: u64,
    ) -> u32 {
        let n = tokens / BLOCK as u32;
        let mut blocks = 0;
        for (owner, span, base) in identity.spans(n, h) {
            let have = self.entries.get(&owner).map_or(0, |e| e.usable(now));
            let (lo, hi) = (span.start - base, span.end - base);
            if have < hi {
                blocks += have.saturating_sub(lo);
                break;
            }
            blocks += hi - lo;
        }
        blocks * BLOCK as u32
    }

    /// The cached prefix of `hit` tokens was read at `now`: its owners live
    /// a lifetime from now.
    pub(super) fn touch(&mut self, identity: PromptIdentity, hit: u32, h: &PrefixHashes, now: u64) {
        let until = now.saturating_add(self.ttl_ns);
        for (owner, _, _) in identity.spans(hit / BLOCK as u32, h) {
            if let Some(e) = self.entries.get_mut(&owner) {
                e.expires = e.expires.max(until);
            }
        }
    }

    /// The first `tokens` tokens of a prompt are written at `now`, usable
    /// from `ready_at`.
    pub(super) fn write(
        &mut self,
        identity: PromptIdentity,
        tokens: u32,
        h: &PrefixHashes,
        now: u64,
        ready_at: u64,
    ) {
        let until = ready_at.saturating_add(self.ttl_ns);
        for (owner, span, base) in identity.spans(tokens / BLOCK as u32, h) {
            let hi = span.end - base;
            let e = self.entries.entry(owner).or_default();
            if now >= e.expires {
                *e = Entry::default();
            }
            if now >= e.pending_at {
                e.ready = e.ready.max(e.pending);
            }
            if hi > e.ready.max(e.pending) {
                e.pending = hi;
                e.pending_at = ready_at;
            }
            e.expires = e.expires.max(until);
        }
        if self.entries.len() > 2 * self.swept_at + 1024 {
            self.entries.retain(|_, e| e.expires > now);
            self.swept_at = self.entries.len();
        }
    }

    /// Owners held (for tests and bounds).
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }
}

impl Simulation {
    /// The prompt tokens of request `id` tier `tier`'s cache holds now
    /// (0 without a cache).
    pub(super) fn cache_hit(&self, id: ReqId, tier: u16) -> u32 {
        let Some((settings, cache)) = self
            .api
            .as_ref()
            .and_then(|a| a.tiers[tier as usize].cache.as_ref())
        else {
            return 0;
        };
        let req = &self.st.requests[id];
        let cached = cache.cached(
            self.identity(id),
            req.input_tokens,
            &self.st.prefix_hashes,
            self.st.now,
        );
        settings.hit_tokens(cached)
    }

    /// The input tokens of request `id` its tier's input TPM counts: all of
    /// them, or (Anthropic) those not read from the prompt cache, with the
    /// hit it looked up to know (for the send at the same moment).
    pub(super) fn counted_input(&self, id: ReqId, tier: u16) -> (u64, Option<u32>) {
        let input = u64::from(self.st.requests[id].input_tokens);
        match self.api.as_ref() {
            Some(a) if a.tiers[tier as usize].cached_input_free_of_tpm => {
                let hit = self.cache_hit(id, tier);
                (input - u64::from(hit), Some(hit))
            }
            _ => (input, None),
        }
    }

    /// Request `id`, sent now with a hit of `hit` tokens, reads its cached
    /// prefix and writes what later prompts can reuse (usable from its first
    /// token at `ready_at`): the shared system prompt, and a conversation's
    /// whole prompt. An explicit cache bills the tokens written beyond the
    /// hit at its write price.
    pub(super) fn cache_use(&mut self, id: ReqId, tier: u16, hit: u32, ready_at: u64) {
        let now = self.st.now;
        let identity = self.identity(id);
        let input = self.st.requests[id].input_tokens;
        let Some(api) = self.api.as_mut() else { return };
        let Some((settings, cache)) = api.tiers[tier as usize].cache.as_mut() else {
            return;
        };
        let h = &self.st.prefix_hashes;
        if hit > 0 {
            cache.touch(identity, hit, h, now);
        }
        let reusable = identity
            .spans(input / super::BLOCK as u32, h)
            .map(|(_, span, _)| (span.end - span.start) * super::BLOCK as u32)
            .sum::<u32>();
        let mut written = 0;
        if reusable >= settings.min_tokens.max(1) && reusable > hit {
            cache.write(identity, reusable, h, now, ready_at);
            if matches!(settings.mode, CacheMode::Explicit { .. }) {
                written = reusable - hit;
            }
        }
        debug_assert!(hit <= input, "a cache hit longer than its prompt");
        debug_assert!(written <= input - hit, "a cache write beyond its prompt");
        let req = &mut self.st.requests[id];
        req.api_cached = hit;
        req.api_written = written;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conversation(c: u64) -> PromptIdentity {
        PromptIdentity {
            conversation: Some((c, 4096)),
            ..PromptIdentity::default()
        }
    }

    #[test]
    fn expired_owners_are_swept_so_the_table_stays_bounded() {
        let h = PrefixHashes::new(None);
        let s = 1_000_000_000;
        let mut cache = ProviderCache::new(10 * s);
        let mut most = 0;
        for c in 0..100_000u64 {
            let now = c * s / 10;
            cache.write(conversation(c), 4096, &h, now, now + s);
            most = most.max(cache.len());
        }
        // Ten a second live ten seconds: about 100 live, swept at 1,024 + 2×.
        assert!(most <= 2 * 110 + 1024, "{most}");
        // What is live is found, what expired is not.
        let now = 99_999 * s / 10 + s;
        assert_eq!(cache.cached(conversation(99_999), 4096, &h, now), 4096);
        assert_eq!(cache.cached(conversation(0), 4096, &h, now), 0);
    }

    #[test]
    fn a_longer_write_is_usable_from_its_first_token_the_older_length_meanwhile() {
        let h = PrefixHashes::new(None);
        let mut cache = ProviderCache::new(300);
        cache.write(conversation(7), 1024, &h, 0, 10);
        assert_eq!(cache.cached(conversation(7), 4096, &h, 9), 0);
        assert_eq!(cache.cached(conversation(7), 4096, &h, 10), 1024);
        cache.write(conversation(7), 2048, &h, 20, 30);
        assert_eq!(cache.cached(conversation(7), 4096, &h, 25), 1024);
        assert_eq!(cache.cached(conversation(7), 4096, &h, 30), 2048);
        // A prompt reads no further than it goes.
        assert_eq!(cache.cached(conversation(7), 1500, &h, 30), 1488);
    }
}
