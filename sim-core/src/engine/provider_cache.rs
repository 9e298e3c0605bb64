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

use super::BLOCK;
use super::prefix::{Owner, PrefixHashes, PromptIdentity};
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
