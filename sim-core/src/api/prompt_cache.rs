//! Prompt caching at a provider tier: what a cached input token costs, how
//! the provider decides what to cache, and how long it keeps it.
//!
//! Which prompts share a prefix is the workload's own prefix model (a class's
//! shared system prompts, a conversation's history, a replayed trace's block
//! hashes), the same that decides hits in a self-hosted prefix cache. A
//! prefix is usable from the moment its request's first token comes back
//! (the provider has processed it by then) until `ttl_s` after it was last
//! written or read.
//!
//! One definition of a request's input bill: [`input_usd`].

use serde::{Deserialize, Serialize};

/// A tier's prompt cache.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptCache {
    /// Price of an input token read from the cache, $ per million.
    pub usd_per_mtok_cached: f64,
    /// Whether the provider caches by itself or the client asks it to.
    pub mode: CacheMode,
    /// Shortest prefix the provider caches, tokens: a prompt shorter than
    /// this is neither written nor read.
    pub min_tokens: u32,
    /// How long a cached prefix lives after it was last written or read, s.
    pub ttl_s: f64,
}

/// How a provider fills its prompt cache.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum CacheMode {
    /// Every prompt of at least `min_tokens` is cached at no charge, and a
    /// hit covers the longest cached prefix in steps of `step_tokens` from
    /// `min_tokens` on (OpenAI: 1,024 tokens, then steps of 128).
    Automatic {
        /// Granularity of a hit beyond `min_tokens`, tokens.
        step_tokens: u32,
    },
    /// The client marks the end of the part later prompts reuse (the shared
    /// system prompt; a conversation's whole prompt, which its next turn
    /// starts with), and the tokens written to the cache are billed at
    /// `write_price_multiplier` × the input price (Anthropic: 1.25 for a
    /// 5-minute lifetime, 2 for an hour).
    Explicit {
        /// A cache write's price as a multiple of the input price.
        write_price_multiplier: f64,
    },
}

impl PromptCache {
    /// OpenAI's automatic caching as documented for its current models:
    /// prompts of 1,024 tokens or more, hits in steps of 128, kept for 5–10
    /// minutes of inactivity (5 here); the cached price is the tier's.
    pub fn automatic(usd_per_mtok_cached: f64) -> PromptCache {
        PromptCache {
            usd_per_mtok_cached,
            mode: CacheMode::Automatic { step_tokens: 128 },
            min_tokens: 1024,
            ttl_s: 300.0,
        }
    }

    /// Anthropic's cache breakpoints: reads at a tenth of the input price,
    /// writes at 1.25× for a 5-minute lifetime or 2× for an hour, prompts
    /// of 1,024 tokens or more (Sonnet and Opus).
    pub fn explicit(usd_per_mtok_input: f64, hour: bool) -> PromptCache {
        PromptCache {
            usd_per_mtok_cached: usd_per_mtok_input / 10.0,
            mode: CacheMode::Explicit {
                write_price_multiplier: if hour { 2.0 } else { 1.25 },
            },
            min_tokens: 1024,
            ttl_s: if hour { 3600.0 } else { 300.0 },
        }
    }

    /// The tokens of a hit on a cached prefix of `cached` tokens: nothing
    /// under `min_tokens`, and an automatic cache's steps.
    pub fn hit_tokens(&self, cached: u32) -> u32 {
        if cached < self.min_tokens.max(1) {
            return 0;
        }
        match self.mode {
            CacheMode::Automatic { step_tokens } => {
                let step = step_tokens.max(1);
                self.min_tokens + (cached - self.min_tokens) / step * step
            }
            CacheMode::Explicit { .. } => cached,
        }
    }

    /// The price multiple of a cache write (1 for an automatic cache, whose
    /// writes are billed as plain input).
    pub fn write_multiplier(&self) -> f64 {
        match self.mode {
            CacheMode::Automatic { .. } => 1.0,
            CacheMode::Explicit {
                write_price_multiplier,
            } => write_price_multiplier,
        }
    }
}

/// What a prompt of `input` tokens costs, `cached` of them read from the
/// cache and `written` written to it: the rest at the input price, the read
/// ones at the cached price, the written ones at the write price. Without a
/// cache, `input` × the input price.
pub fn input_usd(
    input: u64,
    cached: u64,
    written: u64,
    usd_per_mtok_input: f64,
    cache: Option<&PromptCache>,
) -> f64 {
    input_usd_total(input_usd_parts(
        input,
        cached,
        written,
        usd_per_mtok_input,
        cache,
    ))
}

/// The lines of [`input_usd_parts`] added up, in the order the bill was
/// always summed (old reports keep their last digit).
pub fn input_usd_total([plain, read, write]: [f64; 3]) -> f64 {
    plain + read + write
}

/// [`input_usd`] by line: the tokens at the input price, those read from
/// the cache, those written to it.
pub fn input_usd_parts(
    input: u64,
    cached: u64,
    written: u64,
    usd_per_mtok_input: f64,
    cache: Option<&PromptCache>,
) -> [f64; 3] {
    // Per-token prices, as the bill was always computed.
    let per_token = usd_per_mtok_input / 1e6;
    let Some(c) = cache else {
        return [input as f64 * per_token, 0.0, 0.0];
    };
    let plain = input.saturating_sub(cached + written) as f64;
    [
        plain * per_token,
        cached as f64 * (c.usd_per_mtok_cached / 1e6),
        written as f64 * per_token * c.write_multiplier(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_automatic_hit_counts_from_the_minimum_in_whole_steps() {
        let c = PromptCache::automatic(0.25);
        assert_eq!(c.hit_tokens(1023), 0);
        assert_eq!(c.hit_tokens(1024), 1024);
        assert_eq!(c.hit_tokens(1151), 1024);
        assert_eq!(c.hit_tokens(1152), 1152);
        let e = PromptCache::explicit(3.0, false);
        assert_eq!(e.hit_tokens(1000), 0);
        assert_eq!(e.hit_tokens(1500), 1500);
    }

    #[test]
    fn the_input_bill_prices_plain_read_and_written_tokens_apart() {
        // Anthropic-like: $3 input, $0.30 read, 1.25× write.
        let e = PromptCache::explicit(3.0, false);
        let usd = input_usd(10_000, 6_000, 2_000, 3.0, Some(&e));
        let want = (2_000.0 * 3.0 + 6_000.0 * 0.3 + 2_000.0 * 3.75) / 1e6;
        assert!((usd - want).abs() < 1e-15, "{usd} {want}");
        assert!((input_usd(10_000, 0, 0, 3.0, None) - 0.03).abs() < 1e-15);
        // An automatic cache's writes cost plain input.
        let a = PromptCache::automatic(1.5);
        assert_eq!(
            input_usd(4_000, 0, 4_000, 3.0, Some(&a)),
            input_usd(4_000, 0, 0, 3.0, None)
        );
    }
}
