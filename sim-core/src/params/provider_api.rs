//! The API tiers' service features as parameters: the prompt cache and its
//! price, the batch API, errors and incidents, the fallback and the
//! circuit breaker, the daily and concurrency limits (each on the main
//! tier, or the client's).

use super::edits::{known_key, main_tier, main_tier_mut, unknown_key};
use super::provider::{backend_options, no_api};
use super::serving::{keys, owned};
use super::{Choice, Group, Kind, Number, Param, Text};
use crate::api::{BatchApi, Breaker, CacheMode, PromptCache, ProviderErrors};
use crate::scenario::Scenario;

fn cache_options(_: &Scenario, _: usize) -> Vec<(String, String)> {
    owned(&[
        ("off", "Off"),
        ("automatic", "Automatic (OpenAI-style, ≥ 1,024 tokens)"),
        ("explicit_5m", "Explicit, 5 minutes (writes 1.25×)"),
        ("explicit_1h", "Explicit, 1 hour (writes 2×)"),
    ])
}

fn cache_key(c: Option<&PromptCache>) -> &'static str {
    match c {
        None => "off",
        Some(c) => match c.mode {
            CacheMode::Automatic { .. } => "automatic",
            CacheMode::Explicit { .. } if c.ttl_s > 300.0 => "explicit_1h",
            CacheMode::Explicit { .. } => "explicit_5m",
        },
    }
}

fn batch_options(_: &Scenario, _: usize) -> Vec<(String, String)> {
    owned(&[
        ("off", "Off"),
        ("on", "On: a batch tier at half price, results within 24 h"),
    ])
}

/// The batch queue a batch tier chosen on the page gets, input tokens.
const BATCH_QUEUE_TOKENS: u64 = 200_000_000;

/// Add the main tier's batch API as a tier of its own (`NAME-batch`, both
/// prices halved, as OpenAI's and Anthropic's Batch APIs are), or remove
/// every batch tier and send what went to them to the main tier.
fn set_batch(s: &mut Scenario, on: bool) -> Result<(), String> {
    let a = s.api.as_mut().ok_or_else(no_api)?;
    // The main tier: the default backend's, else the first, not a batch one.
    let sync = || a.tiers.iter().filter(|t| t.batch.is_none());
    let main = sync()
        .find(|t| t.name == a.default_backend)
        .or_else(|| sync().next())
        .ok_or("api.batch needs a tier that is not a batch tier")?
        .clone();
    if on {
        if a.tiers.iter().any(|t| t.batch.is_some()) {
            return Ok(());
        }
        let mut batch = main.clone();
        batch.name = format!("{}-batch", main.name);
        batch.usd_per_mtok_input *= 0.5;
        batch.usd_per_mtok_output *= 0.5;
        batch.fast = None;
        batch.prompt_cache = None;
        batch.batch = Some(BatchApi::day(BATCH_QUEUE_TOKENS));
        if a.tiers.iter().any(|t| t.name == batch.name) {
            return Err(format!(
                "api.batch: a tier is already named {:?}",
                batch.name
            ));
        }
        a.tiers.push(batch);
        return Ok(());
    }
    let gone: Vec<String> = a
        .tiers
        .iter()
        .filter(|t| t.batch.is_some())
        .map(|t| t.name.clone())
        .collect();
    a.tiers.retain(|t| t.batch.is_none());
    a.routes.retain(|r| !gone.contains(&r.backend));
    if gone.contains(&a.default_backend) {
        a.default_backend = main.name.clone();
    }
    for rule in &mut s.routing {
        if gone.contains(&rule.to) {
            rule.to = main.name.clone();
        }
        if let Some(o) = rule.overflow.as_mut().filter(|o| gone.contains(&o.to)) {
            o.to = main.name.clone();
        }
    }
    Ok(())
}

/// The chain's second step: offered once it has a first.
fn fallback_then_options(s: &Scenario, i: usize) -> Vec<(String, String)> {
    if s.api.as_ref().is_some_and(|a| !a.fallback.is_empty()) {
        fallback_options(s, i)
    } else {
        vec![(
            "none".to_owned(),
            "Nothing: choose where a tier's give-ups go first".to_owned(),
        )]
    }
}

fn fallback_options(s: &Scenario, i: usize) -> Vec<(String, String)> {
    let mut o = vec![("none".to_owned(), "Nothing: the request fails".to_owned())];
    o.extend(
        backend_options(s, i)
            .into_iter()
            .filter(|(k, _)| crate::api::parse_backend_key(k).1 == crate::api::Service::Standard),
    );
    o
}

/// The breakers the page offers: off, quick to open, patient.
const BREAKERS: [(&str, &str, Option<Breaker>); 3] = [
    ("off", "Off", None),
    (
        "quick",
        "5 errors in a minute: closed for a minute",
        Some(Breaker {
            errors: 5,
            window_s: 60.0,
            cool_down_s: 60.0,
        }),
    ),
    (
        "patient",
        "20 errors in a minute: closed for 5 minutes",
        Some(Breaker {
            errors: 20,
            window_s: 60.0,
            cool_down_s: 300.0,
        }),
    ),
];

fn breaker_options(s: &Scenario, _: usize) -> Vec<(String, String)> {
    let mut o: Vec<(String, String)> = BREAKERS
        .iter()
        .map(|(k, label, _)| ((*k).to_owned(), (*label).to_owned()))
        .collect();
    let custom = s.api.as_ref().is_some_and(|a| {
        !BREAKERS
            .iter()
            .any(|(_, _, b)| a.breaker.as_ref() == b.as_ref())
    });
    if custom {
        o.push(("custom".to_owned(), "As the scenario sets it".to_owned()));
    }
    o
}

pub(super) const PARAMS: &[Param] = &[
    Param {
        path: "api.prompt_cache",
        id: "prompt-cache",
        group: Group::Provider,
        label: "Prompt caching",
        unit: "",
        help: "The provider keeps prompt prefixes it has processed (a shared system prompt, a conversation so far): a later prompt that starts the same way pays the cached price for that part and skips its processing. Automatic caching is free to write; explicit caching bills what it writes at a premium and keeps it 5 minutes or an hour after its last use.",
        kind: Kind::Choice(Choice {
            options: cache_options,
            get: |s, _| main_tier(s).map(|t| cache_key(t.prompt_cache.as_ref()).to_owned()),
            set: |s, i, k| {
                let known = keys(cache_options(s, i));
                let tier = main_tier_mut(s)?;
                // A cache chosen afresh reads at a tenth of the input price
                // (OpenAI's and Anthropic's current models); the cached
                // price already set is kept.
                let read = tier
                    .prompt_cache
                    .as_ref()
                    .map_or(tier.usd_per_mtok_input / 10.0, |c| c.usd_per_mtok_cached);
                tier.prompt_cache = match k {
                    "off" => None,
                    "automatic" => Some(PromptCache::automatic(read)),
                    "explicit_5m" | "explicit_1h" => Some(PromptCache {
                        usd_per_mtok_cached: read,
                        ..PromptCache::explicit(tier.usd_per_mtok_input, k == "explicit_1h")
                    }),
                    _ => return Err(unknown_key("api.prompt_cache", k, &known)),
                };
                Ok(())
            },
        }),
    },
    Param {
        path: "api.usd_per_mtok_cached",
        id: "api-price-cached",
        group: Group::Provider,
        label: "API price, cached input",
        unit: "$/M tokens",
        help: "What the main model tier charges per million prompt tokens read from its prompt cache (at most the input price).",
        kind: Kind::Number(Number {
            min: 0.0,
            max: 10_000.0,
            slider: (0.001, 100.0),
            log: true,
            decimals: 3,
            get: |s, _| {
                main_tier(s)
                    .and_then(|t| t.prompt_cache.as_ref())
                    .map(|c| c.usd_per_mtok_cached)
            },
            set: |s, _, v| {
                let c = main_tier_mut(s)?.prompt_cache.as_mut().ok_or_else(|| {
                    "api.usd_per_mtok_cached needs prompt caching on (api.prompt_cache)".to_owned()
                })?;
                c.usd_per_mtok_cached = v;
                Ok(())
            },
        }),
    },
    Param {
        path: "api.batch",
        id: "batch-api",
        group: Group::Provider,
        label: "Batch API",
        unit: "",
        help: "The provider's batch API for the main model: requests wait in a queue, outside the rate limits, and each answer arrives whole within 24 hours, at half price. It appears as a tier of its own ('…-batch'): send a kind of request to it with 'Served by'.",
        kind: Kind::Choice(Choice {
            options: batch_options,
            get: |s, _| {
                s.api.as_ref().map(|a| {
                    if a.tiers.iter().any(|t| t.batch.is_some()) {
                        "on"
                    } else {
                        "off"
                    }
                    .to_owned()
                })
            },
            set: |s, _, k| match k {
                "on" => set_batch(s, true),
                "off" => set_batch(s, false),
                _ => Err(unknown_key("api.batch", k, &keys(batch_options(s, 0)))),
            },
        }),
    },
    Param {
        path: "api.error_rate",
        id: "api-error-rate",
        group: Group::Provider,
        label: "Provider errors",
        unit: "%",
        help: "The share of attempts the main model tier answers with an error (overloaded, 529 or 503; a server error) outside incidents. Errors are not billed; the client retries them as it retries a 429, then the request fails.",
        kind: Kind::Number(Number {
            min: 0.0,
            max: 100.0,
            slider: (0.0, 20.0),
            log: false,
            decimals: 1,
            get: |s, _| {
                main_tier(s).map(|t| t.errors.as_ref().map_or(0.0, |e| 100.0 * e.base_rate))
            },
            set: |s, _, v| edit_errors(s, |e| e.base_rate = v / 100.0),
        }),
    },
    Param {
        path: "api.incidents",
        id: "api-incidents",
        group: Group::Provider,
        label: "Provider incidents",
        unit: "",
        help: "Bad spells at the main model tier, each \"at START for SECONDS: RATE %, ×SLOWER\": from START seconds for SECONDS, RATE % of attempts get an error and answers come SLOWER times slower (\"at 600 for 300: 50 %, ×3\"). Separate incidents with ';'. Empty: none.",
        kind: Kind::Text(Text {
            example: "at 600 for 300: 50 %, ×3",
            get: |s, _| {
                main_tier(s).map(|t| {
                    t.errors
                        .as_ref()
                        .map_or(String::new(), ProviderErrors::incidents_text)
                })
            },
            set: |s, _, text| {
                let incidents = ProviderErrors::parse_incidents(text)
                    .map_err(|e| format!("api.incidents: {e}"))?;
                edit_errors(s, |e| e.incidents = incidents)
            },
        }),
    },
    Param {
        path: "api.diurnal",
        id: "api-diurnal",
        group: Group::Provider,
        label: "Provider's slow hours",
        unit: "",
        help: "Hours of the day when the main model tier answers slower (its peak) or faster, each \"FROM–TO h ×SLOWER\" (\"14–18 h ×1.5\"); a range past midnight wraps (\"22–6 h ×0.8\"). Hours count from the run's start, at midnight. Separate ranges with ';'. Empty: the same at every hour.",
        kind: Kind::Text(Text {
            example: "14–18 h ×1.5",
            get: |s, _| {
                main_tier(s).map(|t| {
                    t.errors
                        .as_ref()
                        .map_or(String::new(), ProviderErrors::diurnal_text)
                })
            },
            set: |s, _, text| {
                let curve =
                    ProviderErrors::parse_diurnal(text).map_err(|e| format!("api.diurnal: {e}"))?;
                edit_errors(s, |e| e.diurnal = curve)
            },
        }),
    },
    Param {
        path: "api.fallback",
        id: "api-fallback",
        group: Group::Provider,
        label: "When a tier gives up",
        unit: "",
        help: "Where a request goes once its API tier has given up on it (its retries spent on 429s or errors): nowhere (it fails), another tier, or your own servers. 'And if that gives up' adds a second step.",
        kind: Kind::Choice(Choice {
            options: fallback_options,
            get: |s, _| {
                s.api.as_ref().map(|a| {
                    a.fallback
                        .first()
                        .cloned()
                        .unwrap_or_else(|| "none".to_owned())
                })
            },
            set: |s, i, k| {
                known_key("api.fallback", k, &keys(fallback_options(s, i)))?;
                let chain = &mut s.api.as_mut().ok_or_else(no_api)?.fallback;
                if k == "none" {
                    chain.clear();
                } else if let Some(first) = chain.first_mut() {
                    k.clone_into(first);
                } else {
                    chain.push(k.to_owned());
                }
                Ok(())
            },
        }),
    },
    Param {
        path: "api.fallback_then",
        id: "api-fallback-then",
        group: Group::Provider,
        label: "And if that gives up",
        unit: "",
        help: "The fallback chain's second step: where a request goes when the backend it fell back to gives up on it too (nowhere: it fails).",
        kind: Kind::Choice(Choice {
            options: fallback_then_options,
            get: |s, _| {
                s.api.as_ref().map(|a| {
                    a.fallback
                        .get(1)
                        .cloned()
                        .unwrap_or_else(|| "none".to_owned())
                })
            },
            set: |s, i, k| {
                known_key("api.fallback_then", k, &keys(fallback_then_options(s, i)))?;
                let chain = &mut s.api.as_mut().ok_or_else(no_api)?.fallback;
                if chain.is_empty() && k != "none" {
                    return Err(
                        "api.fallback_then needs a first fallback (api.fallback) to follow".into(),
                    );
                }
                chain.truncate(1);
                if k != "none" {
                    chain.push(k.to_owned());
                }
                Ok(())
            },
        }),
    },
    Param {
        path: "api.breaker",
        id: "api-breaker",
        group: Group::Provider,
        label: "Circuit breaker",
        unit: "",
        help: "After a burst of errors from a tier, the client stops sending to it for a while (its requests go where 'When a tier gives up' says, or fail), then lets one request through to see whether the tier has recovered.",
        kind: Kind::Choice(Choice {
            options: breaker_options,
            get: |s, _| {
                s.api.as_ref().map(|a| {
                    BREAKERS
                        .iter()
                        .find(|(_, _, b)| a.breaker.as_ref() == b.as_ref())
                        .map_or("custom", |(k, _, _)| k)
                        .to_owned()
                })
            },
            set: |s, _, k| {
                let (_, _, b) = BREAKERS
                    .iter()
                    .find(|(key, _, _)| *key == k)
                    .ok_or_else(|| {
                        let known: Vec<String> =
                            BREAKERS.iter().map(|(k, _, _)| (*k).to_owned()).collect();
                        unknown_key("api.breaker", k, &known)
                    })?;
                s.api.as_mut().ok_or_else(no_api)?.breaker = b.clone();
                Ok(())
            },
        }),
    },
    Param {
        path: "api.rpd",
        id: "rpd",
        group: Group::Provider,
        label: "Requests-per-day limit",
        unit: "requests/day",
        help: "RPD: the most requests the provider accepts for the main model tier in a day (0: no daily limit), before the rate-limit tier multiplier. Days run from the run's start; once a day's are spent, every request is refused with a 429 until the next.",
        kind: Kind::Number(Number {
            min: 0.0,
            max: 1e12,
            slider: (0.0, 1_000_000.0),
            log: false,
            decimals: 0,
            get: |s, _| main_tier(s).map(|t| t.limits.rpd as f64),
            set: |s, _, v| {
                main_tier_mut(s)?.limits.rpd = v as u64;
                Ok(())
            },
        }),
    },
    Param {
        path: "api.tpd",
        id: "tpd",
        group: Group::Provider,
        label: "Tokens-per-day limit",
        unit: "tokens/day",
        help: "TPD: the most tokens the provider accepts for the main model tier in a day, counted as its tokens-per-minute limit counts them (0: no daily limit), before the rate-limit tier multiplier. Days run from the run's start.",
        kind: Kind::Number(Number {
            min: 0.0,
            max: 1e14,
            slider: (0.0, 1_000_000_000.0),
            log: false,
            decimals: 0,
            get: |s, _| main_tier(s).map(|t| t.limits.tpd as f64),
            set: |s, _, v| {
                main_tier_mut(s)?.limits.tpd = v as u64;
                Ok(())
            },
        }),
    },
    Param {
        path: "api.max_concurrent",
        id: "max-concurrent",
        group: Group::Provider,
        label: "Concurrent-request limit",
        unit: "requests",
        help: "The most requests the provider works on at once for the account on the main model tier (0: no such limit), before the rate-limit tier multiplier. One more is refused with a 429; the client tries again a second later, as it does any 429.",
        kind: Kind::Number(Number {
            min: 0.0,
            max: 10_000_000.0,
            slider: (0.0, 1_000.0),
            log: false,
            decimals: 0,
            get: |s, _| main_tier(s).map(|t| t.limits.max_concurrent as f64),
            set: |s, _, v| {
                main_tier_mut(s)?.limits.max_concurrent = v as u64;
                Ok(())
            },
        }),
    },
];

/// Edit the main tier's provider errors, created when absent and dropped
/// when the edit leaves them doing nothing (so a scenario without errors
/// serialises as before).
fn edit_errors(s: &mut Scenario, edit: impl FnOnce(&mut ProviderErrors)) -> Result<(), String> {
    let t = main_tier_mut(s)?;
    let e = t.errors.get_or_insert_with(ProviderErrors::default);
    edit(e);
    if e.is_inert() {
        t.errors = None;
    }
    Ok(())
}
