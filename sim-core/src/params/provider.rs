//! Provider, routing and target parameters: the API client, limits and prices,
//! which backend serves each class, the GPU price and the service-level targets.

use super::edits::{main_tier, main_tier_mut};
use super::serving::{keys, owned};
use super::{Choice, Group, Kind, Number, Param};
use crate::api::{ClientPolicy, SELF_HOSTED, Service, backend_key, backend_label};
use crate::scenario::{Scenario, Target};

fn client_options(_: &Scenario, _: usize) -> Vec<(String, String)> {
    owned(&[
        ("fail_fast", "Fail: show an error"),
        ("sdk_retries", "Retry like the SDKs (2 retries)"),
        ("full_jitter", "Retry with full jitter (5 retries)"),
        ("queue", "Queue in the client"),
    ])
}

pub(super) fn backend_options(s: &Scenario, _: usize) -> Vec<(String, String)> {
    let mut o = vec![(SELF_HOSTED.to_owned(), "Self-hosted servers".to_owned())];
    for p in &s.pools {
        o.push((p.pool_name().to_owned(), format!("Pool: {}", p.pool_name())));
    }
    if let Some(a) = &s.api {
        for t in &a.tiers {
            let option = |service| {
                let key = backend_key(&t.name, service);
                (key.clone(), format!("API: {}", backend_label(&key)))
            };
            o.push(option(Service::Standard));
            if t.fast.is_some() {
                o.push(option(Service::Fast));
            }
            if t.flex.is_some() {
                o.push(option(Service::Flex));
            }
        }
    }
    o
}

pub(super) fn no_api() -> String {
    "the scenario has no api section".into()
}

pub(super) const PARAMS: &[Param] = &[
    Param {
        path: "api.client",
        id: "client",
        group: Group::Provider,
        label: "When the API says 429",
        unit: "",
        help: "A 429 is the provider refusing a request over the rate limit; the client can fail, retry, or queue requests itself.",
        kind: Kind::Choice(Choice {
            options: client_options,
            get: |s, _| {
                s.api.as_ref().map(|a| {
                    match a.client {
                        ClientPolicy::FailFast => "fail_fast",
                        ClientPolicy::SdkRetries { .. } => "sdk_retries",
                        ClientPolicy::FullJitter { .. } => "full_jitter",
                        ClientPolicy::Queue { .. } => "queue",
                    }
                    .to_owned()
                })
            },
            set: |s, i, k| {
                let known = keys(client_options(s, i));
                let a = s.api.as_mut().ok_or_else(no_api)?;
                a.client = match k {
                    "fail_fast" => ClientPolicy::FailFast,
                    "sdk_retries" => ClientPolicy::SdkRetries { max_retries: 2 },
                    "full_jitter" => ClientPolicy::FullJitter {
                        max_retries: 5,
                        base_s: 1.0,
                        cap_s: 30.0,
                    },
                    "queue" => ClientPolicy::QUEUE,
                    _ => {
                        return Err(format!(
                            "api.client: unknown value {k:?}; one of {}",
                            known.join(", ")
                        ));
                    }
                };
                Ok(())
            },
        }),
    },
    Param {
        path: "api.tpm",
        id: "tpm",
        group: Group::Provider,
        label: "Tokens-per-minute limit",
        unit: "tokens/min",
        help: "TPM: the most tokens the provider accepts from the account per minute for the main model tier, before the rate-limit tier multiplier.",
        kind: Kind::Number(Number {
            min: 1_000.0,
            max: 100_000_000_000.0,
            slider: (1_000.0, 100_000_000.0),
            log: true,
            decimals: 0,
            get: |s, _| main_tier(s).map(|t| t.limits.tpm as f64),
            set: |s, _, v| {
                main_tier_mut(s)?.limits.tpm = v as u64;
                Ok(())
            },
        }),
    },
    Param {
        path: "api.usd_per_mtok_input",
        id: "api-price-input",
        group: Group::Provider,
        label: "API price, input",
        unit: "$/M tokens",
        help: "What the main model tier charges per million prompt tokens.",
        kind: Kind::Number(Number {
            min: 0.0,
            max: 10_000.0,
            slider: (0.01, 100.0),
            log: true,
            decimals: 2,
            get: |s, _| main_tier(s).map(|t| t.usd_per_mtok_input),
            set: |s, _, v| {
                main_tier_mut(s)?.usd_per_mtok_input = v;
                Ok(())
            },
        }),
    },
    Param {
        path: "api.usd_per_mtok_output",
        id: "api-price-output",
        group: Group::Provider,
        label: "API price, output",
        unit: "$/M tokens",
        help: "What the main model tier charges per million generated tokens.",
        kind: Kind::Number(Number {
            min: 0.0,
            max: 10_000.0,
            slider: (0.01, 300.0),
            log: true,
            decimals: 2,
            get: |s, _| main_tier(s).map(|t| t.usd_per_mtok_output),
            set: |s, _, v| {
                main_tier_mut(s)?.usd_per_mtok_output = v;
                Ok(())
            },
        }),
    },
    Param {
        path: "rate_limit_multiplier",
        id: "rate-limit-tier",
        group: Group::Provider,
        label: "Rate-limit tier",
        unit: "× limits",
        help: "Providers raise every requests- and tokens-per-minute limit as an account spends more; this multiplies them.",
        kind: Kind::Number(Number {
            min: 1.0,
            max: 1000.0,
            slider: (1.0, 16.0),
            log: true,
            decimals: 0,
            get: |s, _| s.api.as_ref().map(|a| f64::from(a.rate_limit_multiplier)),
            set: |s, _, v| {
                s.api.as_mut().ok_or_else(no_api)?.rate_limit_multiplier = v as u32;
                Ok(())
            },
        }),
    },
    Param {
        path: "backend",
        id: "backend",
        group: Group::Routing,
        label: "Served by",
        unit: "",
        help: "Which backend answers this kind of request: an API model tier (optionally its faster variant) or your own servers.",
        kind: Kind::Choice(Choice {
            options: backend_options,
            get: |s, i| {
                let a = s.api.as_ref()?;
                let class = &s.workload.classes.get(i)?.name;
                Some(match s.class_target(class) {
                    Target::Pool(0) => SELF_HOSTED.to_owned(),
                    Target::Pool(p) => s.pool(p).pool_name().to_owned(),
                    Target::Tier(t, fast) => backend_key(&a.tiers[t].name, fast),
                })
            },
            set: |s, i, k| {
                let known = keys(backend_options(s, i));
                if !known.iter().any(|o| o == k) {
                    return Err(format!(
                        "backend: unknown value {k:?}; one of {}",
                        known.join(", ")
                    ));
                }
                let class = s
                    .workload
                    .classes
                    .get(i)
                    .map(|c| c.name.clone())
                    .ok_or_else(|| format!("no class {i}"))?;
                s.api.as_mut().ok_or_else(no_api)?.route(class, k);
                Ok(())
            },
        }),
    },
    Param {
        path: "usd_per_gpu_hour",
        id: "gpu-price",
        group: Group::Targets,
        label: "GPU price",
        unit: "$/GPU-hour",
        help: "What one GPU costs per hour, busy or idle; the catalogue's indicative price unless you set it.",
        kind: Kind::Number(Number {
            min: 0.0,
            max: 1000.0,
            slider: (0.1, 20.0),
            log: true,
            decimals: 2,
            get: |s, _| Some(s.usd_per_gpu_hour()),
            set: |s, _, v| {
                s.serving.usd_per_gpu_hour = Some(v);
                Ok(())
            },
        }),
    },
    Param {
        path: "usd_per_kwh",
        id: "electricity-price",
        group: Group::Targets,
        label: "Electricity price",
        unit: "$/kWh",
        help: "What the energy the GPUs draw costs, added to the bill: 0 when the GPU-hour price covers it (a cloud's does); own hardware pays its site's rate, often $0.05–0.20.",
        kind: Kind::Number(Number {
            min: 0.0,
            max: 10.0,
            slider: (0.0, 0.5),
            log: false,
            decimals: 3,
            get: |s, _| Some(s.serving.usd_per_kwh.unwrap_or(0.0)),
            set: |s, _, v| {
                s.serving.usd_per_kwh = (v > 0.0).then_some(v);
                Ok(())
            },
        }),
    },
    Param {
        path: "slo.ttft_ms",
        id: "slo-ttft",
        group: Group::Targets,
        label: "Target time to first token",
        unit: "ms",
        help: "TTFT: from sending a request to seeing the first token of the answer; requests slower than this miss the target.",
        kind: Kind::Number(Number {
            min: 0.001,
            max: 1e9,
            slider: (10.0, 120_000.0),
            log: true,
            decimals: 0,
            get: |s, _| Some(s.slo.ttft_ms),
            set: |s, _, v| {
                s.slo.ttft_ms = v;
                Ok(())
            },
        }),
    },
    Param {
        path: "slo.tpot_ms",
        id: "slo-tpot",
        group: Group::Targets,
        label: "Target time per output token",
        unit: "ms",
        help: "TPOT: the average gap between tokens after the first; reading speed needs roughly 50–200 ms or less.",
        kind: Kind::Number(Number {
            min: 0.001,
            max: 1e9,
            slider: (1.0, 2000.0),
            log: true,
            decimals: 0,
            get: |s, _| Some(s.slo.tpot_ms),
            set: |s, _, v| {
                s.slo.tpot_ms = v;
                Ok(())
            },
        }),
    },
];
