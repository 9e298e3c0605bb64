//! How a tier serves a request: its standard service, its fast variant
//! (priority processing, at a premium), or its flex variant (cheaper,
//! slower, refused when the provider is busy); and capacity bought by the
//! hour (provisioned throughput) in front of pay-as-you-go. Backends are
//! named by key where one is chosen: `NAME`, `NAME+fast`, `NAME+flex`.

use serde::{Deserialize, Serialize};

/// Which of a tier's services a request uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Service {
    /// The tier as listed.
    #[default]
    Standard,
    /// Its fast variant ([`super::FastVariant`]).
    Fast,
    /// Its flex variant ([`FlexVariant`]).
    Flex,
}

impl Service {
    /// The suffix of its [`backend_key`] (`""` for the standard service).
    fn suffix(self) -> &'static str {
        match self {
            Service::Standard => "",
            Service::Fast => "+fast",
            Service::Flex => "+flex",
        }
    }
}

/// A backend's key where one is chosen (the page's "Served by", the
/// planner's API setups): a tier, a pool or `"self-hosted"` by name, and a
/// tier's fast or flex variant as `NAME+fast`, `NAME+flex`.
pub fn backend_key(name: &str, service: Service) -> String {
    format!("{name}{}", service.suffix())
}

/// A [`backend_key`] read back: the backend's name, and which service.
pub fn parse_backend_key(key: &str) -> (&str, Service) {
    for service in [Service::Fast, Service::Flex] {
        if let Some(name) = key.strip_suffix(service.suffix()) {
            return (name, service);
        }
    }
    (key, Service::Standard)
}

/// A [`backend_key`] in words: "voice-llm", "voice-llm (fast)",
/// "voice-llm (flex)".
pub fn backend_label(key: &str) -> String {
    match parse_backend_key(key) {
        (name, Service::Fast) => format!("{name} (fast)"),
        (name, Service::Flex) => format!("{name} (flex)"),
        (name, Service::Standard) => name.to_owned(),
    }
}

/// A tier's flex variant (OpenAI's flex processing: Batch API prices,
/// slower answers, and "resource unavailable" 429s when the provider is
/// short of capacity). The same model and rate limits as the tier.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlexVariant {
    /// Both prices multiplied by this (0.5: OpenAI prices flex as its Batch API).
    pub price_multiplier: f64,
    /// Its time to first token and its time per token are this many times the
    /// tier's (≥ 1; providers say only "slower": an assumption, `docs/api.md`).
    pub slowdown: f64,
    /// Share of attempts refused with a 429 when the provider runs at its
    /// usual load. It grows with the provider's load: at an hour or an
    /// incident that makes the tier k times slower (`errors.diurnal`,
    /// `errors.incidents`), k times as many are refused, at most all.
    pub refusal_rate: f64,
}

impl FlexVariant {
    /// OpenAI's flex processing as `docs/api.md` reads it: half price; twice
    /// as slow and 5 % refused at the usual load are assumptions.
    pub const OPENAI: FlexVariant = FlexVariant {
        price_multiplier: 0.5,
        slowdown: 2.0,
        refusal_rate: 0.05,
    };

    /// The share of attempts refused when the provider runs `load` times
    /// slower than usual (1 at its usual load).
    pub fn refusal_at(&self, load: f64) -> f64 {
        (self.refusal_rate * load.max(0.0)).min(1.0)
    }

    /// Problems with the settings, each naming its field under `at`.
    pub fn problems(&self, at: &str) -> Vec<String> {
        let mut out = Vec::new();
        let m = self.price_multiplier;
        if !(m.is_finite() && m > 0.0 && m <= 1.0) {
            out.push(format!(
                "{at}.price_multiplier must be in (0, 1] (flex is the cheaper service), got {m}"
            ));
        }
        let s = self.slowdown;
        if !(s.is_finite() && (1.0..=100.0).contains(&s)) {
            out.push(format!("{at}.slowdown must be 1..=100, got {s}"));
        }
        let r = self.refusal_rate;
        if !(r.is_finite() && (0.0..=1.0).contains(&r)) {
            out.push(format!("{at}.refusal_rate must be 0..=1, got {r}"));
        }
        out
    }
}

/// Capacity bought by the hour in front of a tier (Azure's provisioned
/// throughput units): `units` × `tokens_per_minute_per_unit` of prompt and
/// answer tokens a minute, billed whether used or not. A request it has room
/// for skips the tier's rate limits and per-token prices; one it has no room
/// for overflows to the tier's pay-as-you-go service (Azure's spillover).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provisioned {
    /// Units bought.
    pub units: u32,
    /// Prompt and answer tokens a minute one unit serves (a request is
    /// charged its prompt and its `max_tokens` when it starts, the unused
    /// part given back when it ends).
    pub tokens_per_minute_per_unit: u64,
    /// Price of one unit for an hour, $.
    pub usd_per_unit_hour: f64,
}

impl Provisioned {
    /// Tokens a minute all units serve.
    pub fn tokens_per_minute(&self) -> u64 {
        u64::from(self.units).saturating_mul(self.tokens_per_minute_per_unit)
    }

    /// What the units cost over `secs` seconds, $.
    pub fn usd_over(&self, secs: f64) -> f64 {
        f64::from(self.units) * self.usd_per_unit_hour * secs / 3600.0
    }

    /// Problems with the settings, each naming its field under `at`.
    pub fn problems(&self, at: &str) -> Vec<String> {
        let mut out = Vec::new();
        if !(1..=100_000).contains(&self.units) {
            out.push(format!("{at}.units must be 1..=100000, got {}", self.units));
        }
        if !(1..=1_000_000_000).contains(&self.tokens_per_minute_per_unit) {
            out.push(format!(
                "{at}.tokens_per_minute_per_unit must be 1..=1000000000, got {}",
                self.tokens_per_minute_per_unit
            ));
        }
        let p = self.usd_per_unit_hour;
        if !(p.is_finite() && (0.0..=1e6).contains(&p)) {
            out.push(format!(
                "{at}.usd_per_unit_hour must be 0..=1000000, got {p}"
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_read_back_to_their_service() {
        for service in [Service::Standard, Service::Fast, Service::Flex] {
            let key = backend_key("frontier", service);
            assert_eq!(parse_backend_key(&key), ("frontier", service));
        }
        assert_eq!(backend_label("frontier+flex"), "frontier (flex)");
        assert_eq!(backend_label("frontier+fast"), "frontier (fast)");
        assert_eq!(backend_label("self-hosted"), "self-hosted");
    }

    #[test]
    fn flex_refusals_grow_with_the_providers_load_and_stop_at_all() {
        let f = FlexVariant::OPENAI;
        assert_eq!(f.refusal_at(1.0), 0.05);
        assert_eq!(f.refusal_at(3.0), 0.05 * 3.0);
        assert_eq!(f.refusal_at(40.0), 1.0);
        assert!(f.problems("f").is_empty());
        let bad = FlexVariant {
            price_multiplier: 1.5,
            slowdown: 0.5,
            refusal_rate: f64::NAN,
        };
        let p = bad.problems("api.tiers[0].flex");
        assert_eq!(p.len(), 3, "{p:?}");
        assert!(p[0].starts_with("api.tiers[0].flex.price_multiplier"));
    }

    #[test]
    fn provisioned_units_cost_by_the_hour() {
        let p = Provisioned {
            units: 3,
            tokens_per_minute_per_unit: 2_500,
            usd_per_unit_hour: 2.0,
        };
        assert_eq!(p.tokens_per_minute(), 7_500);
        assert_eq!(p.usd_over(1800.0), 3.0);
        assert!(p.problems("p").is_empty());
        let none = Provisioned { units: 0, ..p };
        assert!(none.problems("p")[0].contains("p.units"));
    }
}
