//! A pool's autoscaler as catalogue parameters (on a pool beside the first
//! as `NAME@POOL`, like every serving parameter).

use super::edits::{from_key, key};
use super::serving::{keys, owned};
use super::{Choice, Group, Kind, Number, Param};
use crate::scenario::{Autoscale, ScaleSignal, Scenario, bounds};

fn signal_options(_: &Scenario, _: usize) -> Vec<(String, String)> {
    owned(&[
        ("off", "Off: a fixed number of replicas"),
        ("queue_per_replica", "Requests waiting per replica"),
        ("kv_use", "KV-cache use"),
        ("gpu_busy", "GPU busy"),
    ])
}

/// Edit the first pool's autoscaler, its starting replicas kept within its
/// bounds. Bounds that cross are refused, never moved: the value asked for
/// is the value run.
fn with(s: &mut Scenario, edit: impl FnOnce(&mut Autoscale)) -> Result<(), String> {
    let serving = &mut s.serving;
    let mut a = serving
        .autoscale
        .clone()
        .ok_or("the pool does not autoscale: choose an autoscaling signal first")?;
    edit(&mut a);
    if a.min_replicas > a.max_replicas {
        return Err(format!(
            "the fewest replicas (autoscale.min, {}) must be at most the most (autoscale.max, {}): change the other bound first",
            a.min_replicas, a.max_replicas
        ));
    }
    serving.replicas = serving.replicas.clamp(a.min_replicas, a.max_replicas);
    serving.autoscale = Some(a);
    Ok(())
}

fn get(s: &Scenario, f: impl FnOnce(&Autoscale) -> f64) -> Option<f64> {
    s.serving.autoscale.as_ref().map(f)
}

pub(super) const PARAMS: &[Param] = &[
    Param {
        path: "autoscale",
        id: "autoscale",
        group: Group::Serving,
        label: "Autoscaling",
        unit: "",
        help: "Add and remove replicas as the load moves, reading this signal every interval and asking for replicas × signal ÷ target (Kubernetes' HPA rule); replicas are billed while up, cold starts included. Off keeps the replica count fixed.",
        kind: Kind::Choice(Choice {
            options: signal_options,
            get: |s, _| {
                Some(
                    s.serving
                        .autoscale
                        .as_ref()
                        .map_or("off".to_owned(), |a| key(&a.signal)),
                )
            },
            set: |s, i, k| {
                let known = keys(signal_options(s, i));
                if k == "off" {
                    s.serving.autoscale = None;
                    s.serving.replicas = s.serving.replicas.max(1);
                    return Ok(());
                }
                let signal: ScaleSignal = from_key("autoscale", k, &known)?;
                let n = s.serving.replicas.max(1);
                match &mut s.serving.autoscale {
                    Some(a) => {
                        if a.signal != signal {
                            a.target = signal.default_target();
                        }
                        a.signal = signal;
                    }
                    None => {
                        s.serving.autoscale =
                            Some(Autoscale::new(signal, 1, (4 * n).min(bounds::REPLICAS)))
                    }
                }
                Ok(())
            },
        }),
    },
    Param {
        path: "autoscale.target",
        id: "autoscale-target",
        group: Group::Serving,
        label: "Scaling target",
        unit: "",
        help: "The signal's value the autoscaler steers to: requests waiting per replica, or a fraction of the KV cache or of the time busy (0.01–1).",
        kind: Kind::Number(Number {
            min: 0.01,
            max: 1_000_000.0,
            slider: (0.05, 64.0),
            log: true,
            decimals: 2,
            get: |s, _| get(s, |a| a.target),
            set: |s, _, v| with(s, |a| a.target = v),
        }),
    },
    Param {
        path: "autoscale.min",
        id: "autoscale-min",
        group: Group::Serving,
        label: "Fewest replicas",
        unit: "servers",
        help: "The autoscaler never goes below this many replicas; 0 scales to zero when nothing arrives (the next request waits for a cold start).",
        kind: Kind::Number(Number {
            min: 0.0,
            max: bounds::REPLICAS as f64,
            slider: (0.0, 16.0),
            log: false,
            decimals: 0,
            get: |s, _| get(s, |a| f64::from(a.min_replicas)),
            set: |s, _, v| with(s, |a| a.min_replicas = v as u32),
        }),
    },
    Param {
        path: "autoscale.max",
        id: "autoscale-max",
        group: Group::Serving,
        label: "Most replicas",
        unit: "servers",
        help: "The autoscaler never goes above this many replicas.",
        kind: Kind::Number(Number {
            min: 1.0,
            max: bounds::REPLICAS as f64,
            slider: (1.0, 64.0),
            log: true,
            decimals: 0,
            get: |s, _| get(s, |a| f64::from(a.max_replicas)),
            set: |s, _, v| with(s, |a| a.max_replicas = v as u32),
        }),
    },
    Param {
        path: "autoscale.engine_start_s",
        id: "autoscale-engine-start",
        group: Group::Serving,
        label: "Engine start",
        unit: "s",
        help: "Seconds from a new replica's weights being loaded to its first request: process start, compilation, CUDA graphs and warm-up (60 s by default).",
        kind: Kind::Number(Number {
            min: 0.0,
            max: 3600.0,
            slider: (0.0, 600.0),
            log: false,
            decimals: 0,
            get: |s, _| {
                get(s, |a| {
                    a.engine_start_s.unwrap_or(crate::scenario::ENGINE_START_S)
                })
            },
            set: |s, _, v| with(s, |a| a.engine_start_s = Some(v)),
        }),
    },
    Param {
        path: "autoscale.load_gb_per_s",
        id: "autoscale-load",
        group: Group::Serving,
        label: "Weight loading",
        unit: "GB/s",
        help: "How fast a new replica reads its weights: about 2 GB/s from local NVMe (the default), 0.5–1 GB/s from object storage over the network.",
        kind: Kind::Number(Number {
            min: 0.01,
            max: 1000.0,
            slider: (0.1, 20.0),
            log: true,
            decimals: 1,
            get: |s, _| {
                get(s, |a| {
                    a.load_gb_per_s.unwrap_or(crate::scenario::LOAD_GB_PER_S)
                })
            },
            set: |s, _, v| with(s, |a| a.load_gb_per_s = Some(v)),
        }),
    },
    Param {
        path: "autoscale.scale_down_after_s",
        id: "autoscale-down",
        group: Group::Serving,
        label: "Scale down after",
        unit: "s",
        help: "Seconds a lower replica count must hold before replicas stop (Kubernetes HPA waits 300 s): shorter saves money, longer avoids cold starts when the load comes back.",
        kind: Kind::Number(Number {
            min: 0.0,
            max: 86_400.0,
            slider: (0.0, 1800.0),
            log: false,
            decimals: 0,
            get: |s, _| get(s, |a| a.scale_down_after_s),
            set: |s, _, v| with(s, |a| a.scale_down_after_s = v),
        }),
    },
    Param {
        path: "autoscale.interval_s",
        id: "autoscale-interval",
        group: Group::Serving,
        label: "Scaling interval",
        unit: "s",
        help: "Seconds between the autoscaler's readings (Kubernetes HPA reads every 15 s).",
        kind: Kind::Number(Number {
            min: 1.0,
            max: 3600.0,
            slider: (1.0, 120.0),
            log: true,
            decimals: 0,
            get: |s, _| get(s, |a| a.interval_s),
            set: |s, _, v| with(s, |a| a.interval_s = v),
        }),
    },
];
