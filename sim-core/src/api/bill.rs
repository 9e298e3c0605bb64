//! A tier's bill by what it charged for: prompt tokens at the input price,
//! prompt tokens read from the provider's cache, prompt tokens written to
//! it, output tokens, and provisioned units by the hour. Errors are not billed; a batch tier is a tier of
//! its own, with its own bill.

use serde::{Deserialize, Serialize};

/// Dollars billed, by line. The lines add up to the tier's `usd` (to the
/// last few digits: each line is summed apart).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bill {
    /// Prompt tokens at the input price.
    pub input_usd: f64,
    /// Prompt tokens read from the cache, at the cached price.
    pub cached_input_usd: f64,
    /// Prompt tokens written to an explicit cache, at the write price.
    pub cache_write_usd: f64,
    /// Output tokens.
    pub output_usd: f64,
    /// Provisioned units, by the hour whether used or not (the requests
    /// they served pay no per-token price).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub provisioned_usd: f64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

impl Bill {
    /// Add one request: its prompt's three lines (as
    /// [`super::prompt_cache::input_usd_parts`] gives them) and its output,
    /// each at `price` × the list price (a fast variant's multiplier).
    pub fn add(&mut self, price: f64, [plain, cached, written]: [f64; 3], output_usd: f64) {
        self.input_usd += price * plain;
        self.cached_input_usd += price * cached;
        self.cache_write_usd += price * written;
        self.output_usd += price * output_usd;
    }

    /// Every line together.
    pub fn total(&self) -> f64 {
        self.input_usd
            + self.cached_input_usd
            + self.cache_write_usd
            + self.output_usd
            + self.provisioned_usd
    }
}
