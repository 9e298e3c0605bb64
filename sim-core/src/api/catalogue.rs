//! A dated catalogue of hosted model tiers: the list prices and terms the
//! providers' own pages gave on the day they were read, each listing with
//! the pages it was read from. Applying a listing to a tier
//! ([`Listing::apply`]) sets its prices, its cache's prices and its
//! services' multiples; its speeds and rate limits stay the scenario's
//! (providers publish limits per account tier in their consoles and model
//! pages, not in one list: `docs/api.md`).

use super::{CacheMode, ProviderTier};

/// The day every listing was read.
pub const READ: &str = "2026-12-07";

/// How a provider's prompt cache bills.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CacheTerms {
    /// Cached by the provider by itself, writes billed as plain input.
    Automatic,
    /// Written when the client asks, at these multiples of the input price
    /// for a 5-minute and a 1-hour lifetime.
    Explicit {
        /// A write kept 5 minutes.
        write_5m: f64,
        /// A write kept an hour.
        write_1h: f64,
    },
}

/// One model at one provider, at its list prices.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Listing {
    /// Its key (`api.price_list=KEY`).
    pub key: &'static str,
    /// Provider.
    pub provider: &'static str,
    /// The model, as the provider names it.
    pub model: &'static str,
    /// What it is, for a reader who does not know the name.
    pub what: &'static str,
    /// $ per million input tokens.
    pub usd_per_mtok_input: f64,
    /// $ per million input tokens read from the prompt cache.
    pub usd_per_mtok_cached: f64,
    /// $ per million output tokens.
    pub usd_per_mtok_output: f64,
    /// How its prompt cache bills.
    pub cache: CacheTerms,
    /// The batch API's price as a multiple of the list price.
    pub batch: f64,
    /// The flex service's, if the provider offers one.
    pub flex: Option<f64>,
    /// The priority (fast) service's, if the provider offers one.
    pub priority: Option<f64>,
    /// Where each figure was read: (what, URL).
    pub sources: &'static [(&'static str, &'static str)],
    /// What the figures leave out, if anything.
    pub note: &'static str,
}

const ANTHROPIC_PRICING: (&str, &str) = (
    "Anthropic's price list (model prices, cache writes and hits, batch)",
    "https://platform.claude.com/docs/en/about-claude/pricing",
);
const OPENAI_PRICING: (&str, &str) = (
    "OpenAI's price list (standard, batch and flex)",
    "https://developers.openai.com/api/docs/pricing",
);
const OPENAI_PRIORITY: (&str, &str) = (
    "OpenAI's priority processing prices",
    "https://openai.com/api-priority-processing/",
);

/// An Anthropic model: explicit cache writes at 1.25× (5 minutes) and 2×
/// (an hour), the Batch API at half price, no flex or priority service.
const fn anthropic(
    [key, model, what, note]: [&'static str; 4],
    [input, cached, output]: [f64; 3],
    sources: &'static [(&'static str, &'static str); 2],
) -> Listing {
    Listing {
        key,
        provider: "Anthropic",
        model,
        what,
        usd_per_mtok_input: input,
        usd_per_mtok_cached: cached,
        usd_per_mtok_output: output,
        cache: CacheTerms::Explicit {
            write_5m: 1.25,
            write_1h: 2.0,
        },
        batch: 0.5,
        flex: None,
        priority: None,
        sources,
        note,
    }
}

/// An OpenAI model: automatic caching, batch and flex at half price,
/// priority at `priority` times the standard price.
const fn openai(
    [key, model, what]: [&'static str; 3],
    [input, cached, output]: [f64; 3],
    priority: f64,
) -> Listing {
    Listing {
        key,
        provider: "OpenAI",
        model,
        what,
        usd_per_mtok_input: input,
        usd_per_mtok_cached: cached,
        usd_per_mtok_output: output,
        cache: CacheTerms::Automatic,
        batch: 0.5,
        flex: Some(0.5),
        priority: Some(priority),
        sources: &[OPENAI_PRICING, OPENAI_PRIORITY],
        note: "Short context; long-context prices are higher and not listed.",
    }
}

/// Every listing, cheapest model of each provider last.
pub const LISTINGS: &[Listing] = &[
    anthropic(
        [
            "anthropic-opus-5.5",
            "Claude Opus 5.5",
            "a frontier model",
            "Cache hits at 0.05× the input price, not the usual 0.1×. Its fast mode's price was not found and is not listed.",
        ],
        [4.0, 0.20, 20.0],
        &[
            ANTHROPIC_PRICING,
            (
                "the model's overview (prices beside the current lineup)",
                "https://platform.claude.com/docs/about-claude/models/whats-new-opus-5",
            ),
        ],
    ),
    anthropic(
        [
            "anthropic-sonnet-5.5",
            "Claude Sonnet 5.5",
            "a mid-size model",
            "Cache hits at $0.10 since Anthropic's cut of 7 October 2026 (the stored copy of the model's overview, older, says $0.20).",
        ],
        [2.0, 0.10, 10.0],
        &[
            ANTHROPIC_PRICING,
            (
                "the model's overview",
                "https://platform.claude.com/docs/en/models/sonnet-5-5/overview",
            ),
        ],
    ),
    anthropic(
        [
            "anthropic-haiku-5.5",
            "Claude Haiku 5.5",
            "a small, fast model",
            "Prompts up to 100,000 tokens; longer prompts cost 5× on every token of the request, which is not modelled.",
        ],
        [0.10, 0.01, 0.50],
        &[
            ANTHROPIC_PRICING,
            (
                "the model's overview",
                "https://platform.claude.com/docs/en/models/haiku-5-5/overview",
            ),
        ],
    ),
    openai(
        ["openai-gpt-5.5", "GPT-5.5", "a frontier model"],
        [5.0, 0.50, 30.0],
        2.5,
    ),
    openai(
        ["openai-gpt-5.4", "GPT-5.4", "a mid-size model"],
        [2.50, 0.25, 15.0],
        2.0,
    ),
    openai(
        ["openai-gpt-5.4-mini", "GPT-5.4 mini", "a small, fast model"],
        [0.75, 0.075, 4.50],
        2.0,
    ),
];

/// The listing `key` names.
pub fn listing(key: &str) -> Option<&'static Listing> {
    LISTINGS.iter().find(|l| l.key == key)
}

impl Listing {
    /// The multiple of the list price `tier` pays: the batch API's on a
    /// batch tier, else 1.
    fn service_multiple(&self, tier: &ProviderTier) -> f64 {
        if tier.batch.is_some() {
            self.batch
        } else {
            1.0
        }
    }

    /// Set `tier`'s prices to these: input and output (at the batch
    /// multiple on a batch tier), its prompt cache's read price and write
    /// multiple (for the cache's lifetime) and mode, its fast and flex
    /// variants' multiples where it has them and the provider offers them.
    /// Its limits, speeds and errors stay.
    pub fn apply(&self, tier: &mut ProviderTier) {
        let m = self.service_multiple(tier);
        tier.usd_per_mtok_input = self.usd_per_mtok_input * m;
        tier.usd_per_mtok_output = self.usd_per_mtok_output * m;
        if let Some(c) = tier.prompt_cache.as_mut() {
            c.usd_per_mtok_cached = self.usd_per_mtok_cached * m;
            c.mode = match self.cache {
                CacheTerms::Automatic => CacheMode::Automatic { step_tokens: 128 },
                CacheTerms::Explicit { write_5m, write_1h } => CacheMode::Explicit {
                    write_price_multiplier: if c.ttl_s > 300.0 { write_1h } else { write_5m },
                },
            };
        }
        if let (Some(f), Some(p)) = (tier.fast.as_mut(), self.priority) {
            f.price_multiplier = p;
        }
        if let (Some(f), Some(p)) = (tier.flex.as_mut(), self.flex) {
            f.price_multiplier = p;
        }
    }

    /// Whether `tier` charges these list prices (at its service's multiple).
    pub fn priced(&self, tier: &ProviderTier) -> bool {
        let m = self.service_multiple(tier);
        let same = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        same(tier.usd_per_mtok_input, self.usd_per_mtok_input * m)
            && same(tier.usd_per_mtok_output, self.usd_per_mtok_output * m)
    }

    /// One line for a menu: provider, model, prices, and the day read.
    pub fn label(&self) -> String {
        format!(
            "{} {} ({}): ${} in, ${} out a million tokens, list of {}",
            self.provider,
            self.model,
            self.what,
            crate::format::plain(self.usd_per_mtok_input),
            crate::format::plain(self.usd_per_mtok_output),
            READ
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets;

    #[test]
    fn every_listing_is_dated_sourced_and_priced_sanely() {
        let mut keys: Vec<&str> = LISTINGS.iter().map(|l| l.key).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), LISTINGS.len(), "keys are unique");
        for l in LISTINGS {
            assert!(!l.sources.is_empty(), "{}", l.key);
            for (what, url) in l.sources {
                assert!(
                    !what.is_empty() && url.starts_with("https://"),
                    "{}: {url}",
                    l.key
                );
            }
            assert!(
                0.0 < l.usd_per_mtok_cached
                    && l.usd_per_mtok_cached < l.usd_per_mtok_input
                    && l.usd_per_mtok_input < l.usd_per_mtok_output,
                "{}",
                l.key
            );
            for m in [Some(l.batch), l.flex, l.priority].into_iter().flatten() {
                assert!(m > 0.0 && m <= 3.0, "{}: ×{m}", l.key);
            }
            assert!(l.label().contains(READ), "{}", l.label());
        }
    }

    #[test]
    fn a_listing_prices_a_tier_and_a_batch_tier_at_its_multiple() {
        let mut s = presets::launch_spike();
        let sonnet = listing("anthropic-sonnet-5.5").expect("listed");
        let tier = &mut s.api.as_mut().expect("api").tiers[0];
        tier.prompt_cache = Some(super::super::PromptCache::explicit(2.5, true));
        sonnet.apply(tier);
        assert!(sonnet.priced(tier));
        assert_eq!(
            (tier.usd_per_mtok_input, tier.usd_per_mtok_output),
            (2.0, 10.0)
        );
        let cache = tier.prompt_cache.as_ref().expect("cache");
        assert_eq!(cache.usd_per_mtok_cached, 0.10);
        // An hour's lifetime writes at 2× the input price.
        assert_eq!(cache.write_multiplier(), 2.0);
        // A batch tier pays the batch API's half.
        tier.batch = Some(super::super::BatchApi::day(1_000_000));
        sonnet.apply(tier);
        assert_eq!(
            (tier.usd_per_mtok_input, tier.usd_per_mtok_output),
            (1.0, 5.0)
        );
        assert!(sonnet.priced(tier));
        assert!(!listing("openai-gpt-5.4").expect("listed").priced(tier));
        // OpenAI's cache is automatic, and its priority service a multiple.
        let mut s = presets::pay_for_speed();
        let tier = &mut s.api.as_mut().expect("api").tiers[0];
        tier.prompt_cache = Some(super::super::PromptCache::explicit(1.0, false));
        listing("openai-gpt-5.4-mini").expect("listed").apply(tier);
        let cache = tier.prompt_cache.as_ref().expect("cache");
        assert_eq!(cache.write_multiplier(), 1.0);
        assert_eq!(tier.fast.as_ref().expect("fast").price_multiplier, 2.0);
    }
}
