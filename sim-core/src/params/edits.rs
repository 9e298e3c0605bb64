//! Scenario edits with rules of their own, shared by the catalogue's setters:
//! launch-spike schedules, class shares that keep summing to 100 %, fresh
//! settings for a batching policy, the API's main tier.

use super::{Kind, Param};
use crate::api::ProviderTier;
use crate::format::plain;
use crate::scenario::{Arrival, Batching, RatePoint, Scenario, UserStep, bounds};

/// A launch spike: the base rate, then `k` × it through the middle third of the
/// arrival window, then the base rate again (ramps of 1 % of the window).
pub fn spike_schedule(base: f64, k: f64, duration_s: f64) -> Arrival {
    let (a, b, ramp) = (duration_s / 3.0, 2.0 * duration_s / 3.0, duration_s / 100.0);
    let point = |at_s, rate_per_s| RatePoint { at_s, rate_per_s };
    Arrival::Schedule {
        points: vec![
            point(0.0, base),
            point(a, base),
            point(a + ramp, base * k),
            point(b, base * k),
            point(b + ramp, base),
        ],
        cv: None,
    }
}

/// The spike factor of a Poisson process (1) or of a schedule made by
/// [`spike_schedule`]; None for any other arrival process.
pub(super) fn spike_factor(s: &Scenario) -> Option<f64> {
    match &s.workload.arrival {
        Arrival::Poisson { .. } => Some(1.0),
        Arrival::Schedule { points, .. } if is_spike(points) => {
            Some(points[2].rate_per_s / points[0].rate_per_s)
        }
        _ => None,
    }
}

fn is_spike(points: &[RatePoint]) -> bool {
    points.len() == 5
        && points[0].rate_per_s > 0.0
        && points[1].rate_per_s == points[0].rate_per_s
        && points[2].rate_per_s == points[3].rate_per_s
        && points[4].rate_per_s == points[0].rate_per_s
}

/// The base rate of an open-loop process: its rate, or a schedule's first point.
pub(super) fn base_rate(s: &Scenario) -> Option<f64> {
    match &s.workload.arrival {
        Arrival::Poisson { rate_per_s } | Arrival::Gamma { rate_per_s, .. } => Some(*rate_per_s),
        Arrival::Schedule { points, .. } => points.first().map(|p| p.rate_per_s),
        Arrival::Stages { stages } => stages.first().map(|s| s.rate_per_s),
        _ => None,
    }
}

/// Set the base rate; a schedule is scaled as a whole, so a spike keeps its shape.
pub(super) fn set_base_rate(s: &mut Scenario, v: f64) -> Result<(), String> {
    match &mut s.workload.arrival {
        Arrival::Poisson { rate_per_s } | Arrival::Gamma { rate_per_s, .. } => *rate_per_s = v,
        Arrival::Schedule { points, .. } => {
            let old = points.first().map_or(1.0, |p| p.rate_per_s);
            if old <= 0.0 {
                return Err(
                    "arrival.rate scales a rate schedule by its first point, which is 0 here"
                        .into(),
                );
            }
            for p in points.iter_mut() {
                p.rate_per_s *= v / old;
            }
        }
        Arrival::Stages { stages } => {
            let old = stages.first().map_or(1.0, |s| s.rate_per_s);
            if old <= 0.0 {
                return Err(
                    "arrival.rate scales the stages by the first one's rate, which is 0 here"
                        .into(),
                );
            }
            for st in stages.iter_mut() {
                st.rate_per_s *= v / old;
            }
        }
        Arrival::ClosedLoop { .. } | Arrival::Trace { .. } => {
            return Err(
                "arrival.rate needs an open-loop arrival process (Poisson, gamma, a rate schedule or stages)"
                    .into(),
            );
        }
    }
    Ok(())
}

/// The closed-loop user schedule, if the scenario has one.
pub(super) fn users(s: &Scenario) -> Option<&Vec<UserStep>> {
    match &s.workload.arrival {
        Arrival::ClosedLoop { users, .. } => Some(users),
        _ => None,
    }
}

/// Give class `i` `pct` % of the traffic; the other classes keep their
/// proportions to each other and share the rest. With every other share at 0,
/// class `i` keeps its old share (it already has all the traffic).
pub fn set_share(s: &mut Scenario, i: usize, pct: f64) -> Result<(), String> {
    let classes = &mut s.workload.classes;
    if i >= classes.len() {
        return Err(format!("no class {i}"));
    }
    let pct = pct.clamp(0.0, 100.0);
    let rest: f64 = classes
        .iter()
        .enumerate()
        .filter(|(j, _)| *j != i)
        .map(|(_, k)| k.share)
        .sum();
    if rest > 0.0 {
        for (j, k) in classes.iter_mut().enumerate() {
            if j != i {
                k.share *= (100.0 - pct) / rest;
            }
        }
        classes[i].share = pct;
    }
    Ok(())
}

/// Settings a batching policy starts from, whatever the scenario had before:
/// switching policy is a state, not a history. vLLM's defaults for
/// iteration-level policies (256 sequences; 2,048-token passes with chunked
/// prefill); without chunking, the token budget holds the longest prompt.
pub fn batching_for_policy(s: &Scenario, policy: &str) -> Result<Batching, String> {
    Ok(match policy {
        "none" => Batching::None,
        "static" => Batching::Static {
            max_batch: 64,
            max_wait_ms: 50.0,
        },
        "continuous" => Batching::Continuous {
            max_num_seqs: 256,
            max_num_batched_tokens: s
                .max_input_tokens()
                .unwrap_or(8192)
                .clamp(8192, bounds::BATCHED_TOKENS),
        },
        "chunked_prefill" => Batching::ChunkedPrefill {
            max_num_seqs: 256,
            max_num_batched_tokens: 2048,
            chunk_tokens: 2048,
        },
        _ => {
            return Err(format!(
                "batching.policy: unknown value {policy:?}; one of none, static, continuous, chunked_prefill"
            ));
        }
    })
}

/// The tier the default backend names (the API's main model), else the first.
pub(super) fn main_tier(s: &Scenario) -> Option<&ProviderTier> {
    let a = s.api.as_ref()?;
    a.tiers
        .iter()
        .find(|t| t.name == a.default_backend)
        .or(a.tiers.first())
}

pub(super) fn main_tier_mut(s: &mut Scenario) -> Result<&mut ProviderTier, String> {
    let a = s
        .api
        .as_mut()
        .ok_or("the scenario has no api section".to_owned())?;
    let i = a
        .tiers
        .iter()
        .position(|t| t.name == a.default_backend)
        .unwrap_or(0);
    a.tiers
        .get_mut(i)
        .ok_or_else(|| "the api section has no tiers".to_owned())
}

/// A value's serde name (the key of an option).
pub(super) fn key<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// Ok when `k` is one of the choices `known`; else what `path` accepts.
pub(super) fn known_key(path: &str, k: &str, known: &[String]) -> Result<(), String> {
    if known.iter().any(|o| o == k) {
        Ok(())
    } else {
        Err(unknown_key(path, k, known))
    }
}

pub(super) fn unknown_key(path: &str, k: &str, known: &[String]) -> String {
    format!("{path}: unknown value {k:?}; one of {}", known.join(", "))
}

/// The value a serde name denotes, if it is one of the choices `known`.
pub(super) fn from_key<T: serde::de::DeserializeOwned>(
    path: &str,
    k: &str,
    known: &[String],
) -> Result<T, String> {
    known_key(path, k, known)?;
    serde_json::from_value(serde_json::Value::String(k.to_owned()))
        .map_err(|_| unknown_key(path, k, known))
}

/// Serve `model`: in the format it ships in (FP8 for DeepSeek-V3, MXFP4
/// experts for gpt-oss, 16-bit otherwise), on the fewest GPUs per replica, no
/// fewer than today's, that hold it (left as is when none does: validation
/// then says how much memory it needs). Expert parallelism stays only where
/// it still applies.
pub fn choose_model(s: &mut Scenario, model: crate::physics::Model) {
    s.serving.model = model;
    s.serving.weights = model.native_weights();
    let fits = |s: &Scenario| s.deployment().kv_capacity_blocks().is_ok();
    if !fits(s) {
        let today = s.serving.gpus_per_replica;
        for tp in [1, 2, 4, 8].into_iter().filter(|&t| t > today) {
            s.serving.gpus_per_replica = tp;
            if fits(s) {
                break;
            }
        }
        if !fits(s) {
            s.serving.gpus_per_replica = today;
        }
    }
    if let Some(m) = model.dims().moe {
        let tp = s.serving.gpus_per_replica;
        s.serving.expert_parallel &= tp > 1 && m.experts % tp == 0;
    } else {
        s.serving.expert_parallel = false;
    }
}

/// What else an edit of `edited` changed, as a person reads it ("GPUs per
/// replica: 1 → 2"): every other catalogue parameter whose value differs
/// between `before` and `after` (choosing a model picks the GPUs and the
/// format it needs; a batching policy brings its own settings). The page
/// says these where the user is looking, so no change happens unnoticed.
pub fn side_effects(before: &Scenario, after: &Scenario, edited: &Param) -> Vec<String> {
    changes(before, after)
        .into_iter()
        .filter(|c| c.path != edited.path)
        .map(|c| format!("{}: {} → {}", c.label, c.before, c.after))
        .collect()
}

/// How `s` differs from `base`, parameter by parameter ("Arrival rate 40
/// req/s"): what names a pinned scenario edited from its preset.
pub fn differences(base: &Scenario, s: &Scenario) -> Vec<String> {
    changes(base, s)
        .into_iter()
        .map(|c| format!("{} {}", c.label, c.after))
        .collect()
}

/// One catalogue parameter whose value differs between two scenarios.
struct Change {
    path: &'static str,
    /// The label, with the class in brackets for per-class parameters of
    /// multi-class workloads.
    label: String,
    before: String,
    after: String,
}

fn changes(before: &Scenario, after: &Scenario) -> Vec<Change> {
    let classes = before
        .workload
        .classes
        .len()
        .min(after.workload.classes.len());
    let shown = |p: &Param, s: &Scenario, i: usize| -> Option<String> {
        match p.kind {
            Kind::Number(n) => (n.get)(s, i).map(|v| {
                if p.unit.is_empty() {
                    plain(v)
                } else {
                    format!("{} {}", plain(v), p.unit)
                }
            }),
            Kind::Choice(c) => {
                let key = (c.get)(s, i)?;
                let label = (c.options)(s, i)
                    .into_iter()
                    .find(|(k, _)| *k == key)
                    .map_or(key, |(_, l)| l);
                Some(label)
            }
            Kind::Text(t) => (t.get)(s, i).filter(|t| !t.is_empty()),
        }
    };
    let mut out = Vec::new();
    for p in super::all() {
        let n = if p.per_class() { classes } else { 1 };
        for i in 0..n {
            if let (Some(a), Some(b)) = (p.get_text(before, i), p.get_text(after, i))
                && a != b
                && let (Some(a), Some(b)) = (shown(p, before, i), shown(p, after, i))
            {
                let class = if p.per_class() && classes > 1 {
                    format!(" [{}]", after.workload.classes[i].name)
                } else {
                    String::new()
                };
                out.push(Change {
                    path: p.path,
                    label: format!("{}{class}", p.label),
                    before: a,
                    after: b,
                });
            }
        }
    }
    out
}

/// Load stages as the `arrival.stages` parameter writes them:
/// `8 for 600, 24 for 600` (tasks/s for seconds, in turn).
pub(super) fn stages_text(stages: &[crate::scenario::Stage]) -> String {
    stages
        .iter()
        .map(|st| format!("{} for {}", plain(st.rate_per_s), plain(st.duration_s)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parse [`stages_text`]'s format (units `req/s` and `s` may be written);
/// ranges are checked by validation, which names each stage's field.
pub(super) fn parse_stages(text: &str) -> Result<Vec<crate::scenario::Stage>, String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() > bounds::SCHEDULE_POINTS {
        return Err(format!(
            "arrival.stages must have at most {} stages, got {}",
            bounds::SCHEDULE_POINTS,
            parts.len()
        ));
    }
    let number = |s: &str, units: &[&str]| -> Option<f64> {
        let mut s = s.trim();
        for u in units {
            s = s.strip_suffix(u).unwrap_or(s).trim();
        }
        s.parse::<f64>().ok()
    };
    parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            let parsed = part.split_once(" for ").and_then(|(rate, duration)| {
                Some(crate::scenario::Stage {
                    rate_per_s: number(rate, &["req/s", "tasks/s", "/s"])?,
                    duration_s: number(duration, &["seconds", "s"])?,
                })
            });
            parsed.ok_or_else(|| {
                format!(
                    "arrival.stages: stage {} ({part:?}) must read RATE for SECONDS, as in \"8 for 600, 24 for 600\" (8 req/s for 600 s, then 24 req/s for 600 s)",
                    i + 1
                )
            })
        })
        .collect()
}

/// Why a parameter can change nothing in `s`, when it cannot: the page says
/// it under the control, so a switch that does nothing says why.
pub fn inert(p: &Param, s: &Scenario) -> Option<&'static str> {
    let reuse = || {
        s.workload.classes.iter().any(|k| {
            k.shared_prefix.is_some() || (k.conversation.is_some() && k.calls_per_task > 1)
        }) || matches!(
            s.workload.arrival,
            crate::scenario::Arrival::Trace {
                prefix_block_tokens: Some(_),
                ..
            }
        )
    };
    match p.path {
        "prefix_caching" => (!reuse()).then_some(
            "Nothing to reuse here: no prompt starts the way another does (no shared system prompt, no conversation). Give a class a shared system prompt to see caching work.",
        ),
        "api.prompt_cache" | "api.usd_per_mtok_cached" => (!reuse()).then_some(
            "Nothing for the provider to cache: no prompt starts the way another does (no shared system prompt, no conversation). Give a class a shared system prompt of 1,024 tokens or more to see the bill change.",
        ),
        "priority" => (s.serving.scheduling_policy
            != Some(crate::scenario::SchedulingPolicy::Priority))
        .then_some(
            "Priorities act only under priority scheduling: set Scheduling (under Batching) to 'By class priority'.",
        ),
        "scheduling_policy" => {
            let mut fleet = s
                .workload
                .classes
                .iter()
                .filter(|k| s.backend_of(&k.name).is_none())
                .map(|k| k.priority.unwrap_or(0));
            let first = fleet.next();
            fleet.all(|p| Some(p) == first).then_some(
                "Every class the fleet serves has the same priority, so both policies admit alike: give a class a lower or higher Priority to see it work.",
            )
        }
        _ => None,
    }
}
