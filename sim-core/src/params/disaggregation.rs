//! Prefill/decode disaggregation as catalogue parameters: which pool
//! decodes what this pool prefills, and the link its KV cache crosses. Both
//! are a pool's own settings (`decode_pool@POOL`, `kv_link@POOL`).

use super::{Choice, Group, Kind, Param};
use crate::scenario::{DECODE_POOL, Disaggregation, KvLink, Scenario};

/// "none", the other pools by name, and — when no pool is called
/// [`DECODE_POOL`] — a new one by that name.
fn decode_options(s: &Scenario, _: usize) -> Vec<(String, String)> {
    let mut out = vec![(
        "none".to_owned(),
        "None: prefill and decode here".to_owned(),
    )];
    for p in &s.pools {
        out.push((p.pool_name().to_owned(), format!("Pool {}", p.pool_name())));
    }
    if !s.all_pools().any(|p| p.pool_name() == DECODE_POOL) {
        out.push((
            DECODE_POOL.to_owned(),
            format!("A new pool {DECODE_POOL:?} (a copy of this one)"),
        ));
    }
    out
}

/// Hand this pool's prompts to `key` (a pool, created as a copy of this one
/// if it is [`DECODE_POOL`] and missing), or stop handing off ("none").
fn set_decode_pool(s: &mut Scenario, key: &str) -> Result<(), String> {
    if key == "none" {
        s.serving.disaggregation = None;
        return Ok(());
    }
    let known = s.pools.iter().any(|p| p.pool_name() == key);
    if !known {
        if key != DECODE_POOL {
            return Err(format!(
                "decode_pool: no pool {key:?} beside this one (add it under More pools, or choose {DECODE_POOL:?} to add a copy of this pool)"
            ));
        }
        if s.pools.len() + 1 >= crate::scenario::MAX_POOLS {
            return Err(format!(
                "decode_pool: a scenario has at most {} pools",
                crate::scenario::MAX_POOLS
            ));
        }
        s.pools.push(crate::scenario::Serving {
            name: Some(DECODE_POOL.to_owned()),
            disaggregation: None,
            ..s.serving.clone()
        });
    }
    let link = s
        .serving
        .disaggregation
        .as_ref()
        .map_or(KvLink::Infiniband, |h| h.link);
    s.serving.disaggregation = Some(Disaggregation {
        decode_pool: key.to_owned(),
        link,
    });
    Ok(())
}

fn link_options(s: &Scenario, _: usize) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = KvLink::NAMED
        .iter()
        .map(|l| {
            let label = match l {
                KvLink::Nvlink => "NVLink (one node)",
                KvLink::Infiniband => "InfiniBand NDR, 400 Gb/s per GPU",
                KvLink::Roce => "RoCE, 200 Gb/s per GPU",
                KvLink::Ethernet => "Ethernet, 100 Gb/s per node (TCP)",
                KvLink::Custom { .. } => "",
            };
            (l.name().to_owned(), label.to_owned())
        })
        .collect();
    if let Some(Disaggregation {
        link: KvLink::Custom {
            gb_per_s,
            latency_us,
        },
        ..
    }) = &s.serving.disaggregation
    {
        out.push((
            "custom".to_owned(),
            format!(
                "Your own: {} GB/s, {} µs",
                crate::format::plain(*gb_per_s),
                crate::format::plain(*latency_us)
            ),
        ));
    }
    out
}

pub(super) const PARAMS: &[Param] = &[
    Param {
        path: "decode_pool",
        id: "decode-pool",
        group: Group::Serving,
        label: "Decode in pool",
        unit: "",
        help: "Prefill/decode disaggregation: this pool only prefills, and each prompt's KV cache moves to the chosen pool, which admits it when its cache has room, pulls it over the link and generates every output token (the first after its first pass). None prefills and decodes here.",
        kind: Kind::Choice(Choice {
            options: decode_options,
            get: |s, _| {
                Some(
                    s.serving
                        .disaggregation
                        .as_ref()
                        .map_or_else(|| "none".to_owned(), |h| h.decode_pool.clone()),
                )
            },
            set: |s, _, k| set_decode_pool(s, k),
        }),
    },
    Param {
        path: "kv_link",
        id: "kv-link",
        group: Group::Serving,
        label: "KV-cache link",
        unit: "",
        help: "What a prompt's KV cache crosses from the prefill pool to the decode pool: NVLink inside a node, InfiniBand or RoCE between nodes (GPUDirect RDMA, 72 % of the line rate after 0.4 ms, fitted to Mooncake's published transfers), or TCP over Ethernet. A replica's GPUs each move their shard; pulls into one decode replica take turns.",
        kind: Kind::Choice(Choice {
            options: link_options,
            get: |s, _| {
                s.serving
                    .disaggregation
                    .as_ref()
                    .map(|h| h.link.name().to_owned())
            },
            set: |s, _, k| {
                let Some(h) = s.serving.disaggregation.as_mut() else {
                    return Err(
                        "kv_link: this pool hands nothing off (set decode_pool first)".into(),
                    );
                };
                if k == "custom" && matches!(h.link, KvLink::Custom { .. }) {
                    return Ok(());
                }
                h.link = KvLink::named(k).ok_or_else(|| {
                    format!(
                        "kv_link: unknown link {k:?} (one of {}; a link of your own is \"link\": {{\"custom\": {{\"gb_per_s\": …, \"latency_us\": …}}}} in the scenario file)",
                        KvLink::NAMED.map(|l| l.name()).join(", ")
                    )
                })?;
                Ok(())
            },
        }),
    },
];
