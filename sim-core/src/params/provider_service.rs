//! The main API tier's services as parameters: its flex variant, and the
//! provisioned units in front of its pay-as-you-go (their count, their
//! throughput and their price by the hour).

use super::edits::{known_key, main_tier, main_tier_mut, unknown_key};
use super::provider::no_api;
use super::serving::{keys, owned};
use super::{Choice, Group, Kind, Number, Param};
use crate::api::catalogue::{LISTINGS, listing};
use crate::api::{FlexVariant, Hedge, Provisioned, Service, backend_key};
use crate::scenario::Scenario;

fn flex_options(_: &Scenario, _: usize) -> Vec<(String, String)> {
    owned(&[
        ("off", "Off"),
        (
            "on",
            "On: half price, twice as slow, 5 % refused when the provider is busy",
        ),
    ])
}

/// Give the main tier a flex variant, or take it away and send what went
/// to it to the tier's standard service.
fn set_flex(s: &mut Scenario, on: bool) -> Result<(), String> {
    let tier = main_tier_mut(s)?;
    if on {
        tier.flex.get_or_insert(FlexVariant::OPENAI);
        return Ok(());
    }
    tier.flex = None;
    let name = tier.name.clone();
    let key = backend_key(&name, Service::Flex);
    if let Some(a) = s.api.as_mut() {
        for r in a.routes.iter_mut().filter(|r| r.backend == name) {
            r.flex = false;
        }
        if a.default_backend == key {
            a.default_backend.clone_from(&name);
        }
    }
    for rule in &mut s.routing {
        if rule.to == key {
            rule.to.clone_from(&name);
        }
        if let Some(o) = rule.overflow.as_mut().filter(|o| o.to == key) {
            o.to.clone_from(&name);
        }
    }
    Ok(())
}

/// Prompt and answer tokens a minute a unit serves when units are chosen
/// afresh: an assumption (`docs/api.md`); a unit's throughput depends on
/// the model and is read from the provider's capacity calculator.
const TOKENS_PER_MINUTE_PER_UNIT: u64 = 2_500;
/// A unit's price for an hour when units are chosen afresh ($2: Azure's
/// hourly rate without a reservation, as `docs/api.md` cites it).
const USD_PER_UNIT_HOUR: f64 = 2.0;

fn provisioned_mut<'a>(s: &'a mut Scenario, path: &str) -> Result<&'a mut Provisioned, String> {
    main_tier_mut(s)?
        .provisioned
        .as_mut()
        .ok_or_else(|| format!("{path} needs provisioned units (api.provisioned_units above 0)"))
}

pub(super) const PARAMS: &[Param] = &[
    Param {
        path: "api.flex",
        id: "api-flex",
        group: Group::Provider,
        label: "Flex processing",
        unit: "",
        help: "The main model tier's flex service (OpenAI's flex processing): the same model at half price, slower, and some attempts refused with a 429 when the provider is short of capacity (more at its slow hours and in incidents). Send a kind of request to it with 'Served by'.",
        kind: Kind::Choice(Choice {
            options: flex_options,
            get: |s, _| {
                main_tier(s).map(|t| if t.flex.is_some() { "on" } else { "off" }.to_owned())
            },
            set: |s, _, k| match k {
                "on" => set_flex(s, true),
                "off" => set_flex(s, false),
                _ => Err(unknown_key("api.flex", k, &keys(flex_options(s, 0)))),
            },
        }),
    },
    Param {
        path: "api.provisioned_units",
        id: "provisioned-units",
        group: Group::Provider,
        label: "Provisioned units",
        unit: "units",
        help: "Capacity bought by the hour in front of the main model tier (Azure's provisioned throughput units): billed whether used or not; a request they have room for skips the rate limits and the per-token price, the rest overflow to pay-as-you-go. 0: none.",
        kind: Kind::Number(Number {
            min: 0.0,
            max: 100_000.0,
            slider: (0.0, 500.0),
            log: false,
            decimals: 0,
            get: |s, _| {
                main_tier(s).map(|t| t.provisioned.as_ref().map_or(0.0, |p| f64::from(p.units)))
            },
            set: |s, _, v| {
                let tier = main_tier_mut(s)?;
                let units = v as u32;
                if units == 0 {
                    tier.provisioned = None;
                } else {
                    tier.provisioned
                        .get_or_insert(Provisioned {
                            units,
                            tokens_per_minute_per_unit: TOKENS_PER_MINUTE_PER_UNIT,
                            usd_per_unit_hour: USD_PER_UNIT_HOUR,
                        })
                        .units = units;
                }
                Ok(())
            },
        }),
    },
    Param {
        path: "api.provisioned_tpm_per_unit",
        id: "provisioned-tpm",
        group: Group::Provider,
        label: "Tokens per minute per unit",
        unit: "tokens/min",
        help: "Prompt and answer tokens a minute one provisioned unit serves (a request is charged its prompt and its max_tokens when it starts, the unused part given back when it ends). It depends on the model: read it from the provider's capacity calculator.",
        kind: Kind::Number(Number {
            min: 1.0,
            max: 1e9,
            slider: (100.0, 100_000.0),
            log: true,
            decimals: 0,
            get: |s, _| {
                main_tier(s)
                    .and_then(|t| t.provisioned.as_ref())
                    .map(|p| p.tokens_per_minute_per_unit as f64)
            },
            set: |s, _, v| {
                provisioned_mut(s, "api.provisioned_tpm_per_unit")?.tokens_per_minute_per_unit =
                    v as u64;
                Ok(())
            },
        }),
    },
    Param {
        path: "api.usd_per_unit_hour",
        id: "provisioned-price",
        group: Group::Provider,
        label: "Price per unit-hour",
        unit: "$/unit/h",
        help: "What one provisioned unit costs for an hour, used or not.",
        kind: Kind::Number(Number {
            min: 0.0,
            max: 1e6,
            slider: (0.1, 100.0),
            log: true,
            decimals: 2,
            get: |s, _| {
                main_tier(s)
                    .and_then(|t| t.provisioned.as_ref())
                    .map(|p| p.usd_per_unit_hour)
            },
            set: |s, _, v| {
                provisioned_mut(s, "api.usd_per_unit_hour")?.usd_per_unit_hour = v;
                Ok(())
            },
        }),
    },
    Param {
        path: "api.hedge_after_s",
        id: "api-hedge",
        group: Group::Provider,
        label: "Hedge after",
        unit: "s",
        help: "When a request's first token has not come this long after it was sent, the client sends it again (to the tier 'Hedge to' names) and keeps whichever copy streams first; the other is cancelled, billed its prompt. 0: no hedging.",
        kind: Kind::Number(Number {
            min: 0.0,
            max: 3600.0,
            slider: (0.0, 10.0),
            log: false,
            decimals: 2,
            get: |s, _| {
                s.api
                    .as_ref()
                    .map(|a| a.hedge.as_ref().map_or(0.0, |h| h.after_s))
            },
            set: |s, _, v| {
                let a = s.api.as_mut().ok_or_else(no_api)?;
                let to = a.hedge.take().and_then(|h| h.to);
                a.hedge = (v > 0.0).then_some(Hedge { after_s: v, to });
                Ok(())
            },
        }),
    },
    Param {
        path: "api.price_list",
        id: "api-price-list",
        group: Group::Provider,
        label: "List prices",
        unit: "",
        help: "Price the main tier as a provider lists one of its current models, read on the date shown: input, cached input and output, cache writes, and the batch, flex and priority multiples. Its speed and rate limits stay as set. 'As set' keeps the scenario's own prices.",
        kind: Kind::Choice(Choice {
            options: price_list_options,
            get: |s, _| {
                main_tier(s).map(|t| {
                    LISTINGS
                        .iter()
                        .find(|l| l.priced(t))
                        .map_or(AS_SET, |l| l.key)
                        .to_owned()
                })
            },
            set: |s, i, k| {
                known_key("api.price_list", k, &keys(price_list_options(s, i)))?;
                if let Some(l) = listing(k) {
                    l.apply(main_tier_mut(s)?);
                }
                Ok(())
            },
        }),
    },
    Param {
        path: "api.hedge_to",
        id: "api-hedge-to",
        group: Group::Provider,
        label: "Hedge to",
        unit: "",
        help: "Where the hedged copy goes: the request's own tier, or another tier (its standard service), which then answers whenever it streams first.",
        kind: Kind::Choice(Choice {
            options: hedge_to_options,
            get: |s, _| {
                s.api.as_ref().map(|a| {
                    a.hedge
                        .as_ref()
                        .and_then(|h| h.to.clone())
                        .unwrap_or_else(|| SAME_TIER.to_owned())
                })
            },
            set: |s, i, k| {
                known_key("api.hedge_to", k, &keys(hedge_to_options(s, i)))?;
                let a = s.api.as_mut().ok_or_else(no_api)?;
                if let Some(h) = a.hedge.as_mut() {
                    h.to = (k != SAME_TIER).then(|| k.to_owned());
                }
                Ok(())
            },
        }),
    },
];

/// The price list that leaves the tier's prices as the scenario sets them.
const AS_SET: &str = "as-set";

/// The dated catalogue's listings, after "as set".
fn price_list_options(_: &Scenario, _: usize) -> Vec<(String, String)> {
    let mut o = vec![(AS_SET.to_owned(), "As set in the scenario".to_owned())];
    o.extend(LISTINGS.iter().map(|l| (l.key.to_owned(), l.label())));
    o
}

/// The hedge target that is the request's own tier.
const SAME_TIER: &str = "same";

/// The tiers a hedge may go to: once the client hedges, its own tier or
/// any tier that answers in time (not a batch tier).
fn hedge_to_options(s: &Scenario, _: usize) -> Vec<(String, String)> {
    let same = |label: &str| (SAME_TIER.to_owned(), label.to_owned());
    let Some(a) = s.api.as_ref().filter(|a| a.hedge.is_some()) else {
        return vec![same("The request's own tier: choose 'Hedge after' first")];
    };
    std::iter::once(same("The request's own tier"))
        .chain(
            a.tiers
                .iter()
                .filter(|t| t.batch.is_none())
                .map(|t| (t.name.clone(), format!("API: {}", t.name))),
        )
        .collect()
}
