//! The page's controls as data: what each one shows, its range and units, its
//! one-sentence definition, and how it reads and writes the scenario.
//!
//! Components render these tables; nothing here touches the DOM, so the whole
//! mapping is testable natively.

use sim_core::api::{ClientPolicy, Route, SELF_HOSTED};
use sim_core::physics::{Gpu, Model, Precision};
use sim_core::scenario::{Arrival, Batching, Router, Scenario};

/// A number with a slider and a typed box.
#[derive(Clone, Copy)]
pub struct NumberControl {
    /// Stable id (DOM ids and tests).
    pub id: &'static str,
    /// Label.
    pub label: &'static str,
    /// Unit shown after the value.
    pub unit: &'static str,
    /// One sentence defining the term.
    pub help: &'static str,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Whether the slider moves on a logarithmic scale.
    pub log: bool,
    /// Decimal places shown and kept.
    pub decimals: usize,
    /// Current value, or None when the control does not apply to this scenario.
    pub get: fn(&Scenario, usize) -> Option<f64>,
    /// Write a value (already range-checked).
    pub set: fn(&mut Scenario, usize, f64),
}

/// A choice among named options.
#[derive(Clone, Copy)]
pub struct ChoiceControl {
    /// Stable id.
    pub id: &'static str,
    /// Label.
    pub label: &'static str,
    /// One sentence defining the term.
    pub help: &'static str,
    /// (key, label) pairs available for this scenario.
    pub options: fn(&Scenario, usize) -> Vec<(String, String)>,
    /// Current key, or None when the control does not apply.
    pub get: fn(&Scenario, usize) -> Option<String>,
    /// Select a key (one of `options`).
    pub set: fn(&mut Scenario, usize, &str),
}

/// One control of either kind.
#[derive(Clone, Copy)]
pub enum Control {
    /// A number.
    Number(NumberControl),
    /// A choice.
    Choice(ChoiceControl),
}

/// A titled, collapsible group of controls; `per_class` groups repeat for each
/// request class (the index passed to getters and setters).
pub struct Group {
    /// Title.
    pub title: &'static str,
    /// Repeat for every request class.
    pub per_class: bool,
    /// The controls.
    pub controls: Vec<Control>,
}

impl NumberControl {
    /// Slider positions run 0..=SLIDER_STEPS.
    pub const SLIDER_STEPS: f64 = 1000.0;

    /// Value → slider position.
    pub fn to_slider(&self, v: f64) -> f64 {
        let f = if self.log {
            (v.max(self.min).ln() - self.min.ln()) / (self.max.ln() - self.min.ln())
        } else {
            (v - self.min) / (self.max - self.min)
        };
        (f.clamp(0.0, 1.0) * Self::SLIDER_STEPS).round()
    }

    /// Slider position → value, rounded to the control's decimals.
    pub fn from_slider(&self, pos: f64) -> f64 {
        let f = (pos / Self::SLIDER_STEPS).clamp(0.0, 1.0);
        let v = if self.log {
            (self.min.ln() + f * (self.max.ln() - self.min.ln())).exp()
        } else {
            self.min + f * (self.max - self.min)
        };
        self.round(v).clamp(self.min, self.max)
    }

    /// Slider position → value, moving at least one unit of the last decimal
    /// place away from `current` when the position moved, so that every arrow-key
    /// press changes the value even where rounding would swallow a small step.
    pub fn from_slider_moving(&self, pos: f64, current: f64) -> f64 {
        let v = self.from_slider(pos);
        let from = self.to_slider(current);
        if v != current && (pos - from).signum() == (v - current).signum() {
            return v;
        }
        if pos == from {
            return current;
        }
        let unit = 10f64.powi(-(self.decimals as i32));
        self.round(current + (pos - from).signum() * unit)
            .clamp(self.min, self.max)
    }

    /// Round to the control's decimals.
    pub fn round(&self, v: f64) -> f64 {
        let k = 10f64.powi(self.decimals as i32);
        (v * k).round() / k
    }

    /// Check a typed value: a number within range, or a message saying what is allowed.
    pub fn parse(&self, text: &str) -> Result<f64, String> {
        let v: f64 = text
            .trim()
            .parse()
            .map_err(|_| format!("{} must be a number, got {:?}", self.label, text.trim()))?;
        if !v.is_finite() || v < self.min || v > self.max {
            return Err(format!(
                "{} must be between {} and {} {}, got {}",
                self.label,
                fmt_num(self.min, self.decimals),
                fmt_num(self.max, self.decimals),
                self.unit,
                text.trim()
            ));
        }
        Ok(self.round(v))
    }

    /// A value as shown in the box.
    pub fn show(&self, v: f64) -> String {
        fmt_num(v, self.decimals)
    }
}

fn fmt_num(v: f64, decimals: usize) -> String {
    format!("{v:.decimals$}")
}

fn rate(s: &Scenario) -> Option<f64> {
    match &s.workload.arrival {
        Arrival::Poisson { rate_per_s } | Arrival::Gamma { rate_per_s, .. } => Some(*rate_per_s),
        Arrival::Schedule { points } => points.first().map(|p| p.rate_per_s),
        _ => None,
    }
}

/// A launch spike: the base rate, then `k` × it through the middle third of the
/// arrival window, then the base rate again (ramps of 1 % of the window).
pub fn spike_schedule(base: f64, k: f64, duration_s: f64) -> Arrival {
    use sim_core::scenario::RatePoint;
    let (a, b, ramp) = (duration_s / 3.0, 2.0 * duration_s / 3.0, duration_s / 100.0);
    Arrival::Schedule {
        points: vec![
            RatePoint {
                at_s: 0.0,
                rate_per_s: base,
            },
            RatePoint {
                at_s: a,
                rate_per_s: base,
            },
            RatePoint {
                at_s: a + ramp,
                rate_per_s: base * k,
            },
            RatePoint {
                at_s: b,
                rate_per_s: base * k,
            },
            RatePoint {
                at_s: b + ramp,
                rate_per_s: base,
            },
        ],
    }
}

/// The spike factor of a schedule made by [`spike_schedule`].
fn spike_factor(s: &Scenario) -> Option<f64> {
    match &s.workload.arrival {
        Arrival::Poisson { .. } => Some(1.0),
        Arrival::Schedule { points } if points.len() == 5 && points[0].rate_per_s > 0.0 => {
            Some(points[2].rate_per_s / points[0].rate_per_s)
        }
        _ => None,
    }
}

fn users(s: &Scenario) -> Option<&Vec<sim_core::scenario::UserStep>> {
    match &s.workload.arrival {
        Arrival::ClosedLoop { users, .. } => Some(users),
        _ => None,
    }
}

/// The tier the default backend names (the API's main model).
fn main_tier(s: &Scenario) -> Option<&sim_core::api::ProviderTier> {
    let a = s.api.as_ref()?;
    a.tiers
        .iter()
        .find(|t| t.name == a.default_backend)
        .or(a.tiers.first())
}

fn main_tier_mut(s: &mut Scenario) -> Option<&mut sim_core::api::ProviderTier> {
    let a = s.api.as_mut()?;
    let i = a
        .tiers
        .iter()
        .position(|t| t.name == a.default_backend)
        .unwrap_or(0);
    a.tiers.get_mut(i)
}

fn batching_max_seqs(s: &Scenario) -> Option<f64> {
    match s.serving.batching {
        Batching::Continuous { max_num_seqs, .. }
        | Batching::ChunkedPrefill { max_num_seqs, .. } => Some(f64::from(max_num_seqs)),
        Batching::Static { max_batch, .. } => Some(f64::from(max_batch)),
        Batching::None => None,
    }
}

/// Every group of controls, in page order.
pub fn groups() -> Vec<Group> {
    use Control::{Choice, Number};
    vec![
        Group {
            title: "Traffic",
            per_class: false,
            controls: vec![
                Number(NumberControl {
                    id: "arrival-rate",
                    label: "Arrival rate",
                    unit: "req/s",
                    help: "How many new tasks arrive per second, on average (open loop: they keep coming whatever the latency).",
                    min: 0.1,
                    max: 500.0,
                    log: true,
                    decimals: 1,
                    get: |s, _| rate(s),
                    set: |s, _, v| match &mut s.workload.arrival {
                        Arrival::Poisson { rate_per_s } | Arrival::Gamma { rate_per_s, .. } => {
                            *rate_per_s = v
                        }
                        Arrival::Schedule { points } => {
                            // Scale the whole schedule: the spike keeps its shape.
                            let old = points.first().map_or(1.0, |p| p.rate_per_s).max(1e-12);
                            for p in points.iter_mut() {
                                p.rate_per_s *= v / old;
                            }
                        }
                        _ => {}
                    },
                }),
                Number(NumberControl {
                    id: "spike",
                    label: "Launch spike",
                    unit: "× rate",
                    help: "Multiplies the arrival rate through the middle third of the run, as a launch or a viral moment does; 1 means no spike.",
                    min: 1.0,
                    max: 50.0,
                    log: true,
                    decimals: 1,
                    get: |s, _| spike_factor(s),
                    set: |s, _, k| {
                        if let Some(base) = rate(s) {
                            s.workload.arrival = if k <= 1.0 {
                                Arrival::Poisson { rate_per_s: base }
                            } else {
                                spike_schedule(base, k, s.duration_s)
                            };
                        }
                    },
                }),
                Number(NumberControl {
                    id: "burstiness",
                    label: "Burstiness",
                    unit: "CV",
                    help: "Coefficient of variation of the gaps between arrivals: 1 is random (Poisson), above 1 comes in bursts, below 1 is steadier.",
                    min: 0.2,
                    max: 5.0,
                    log: true,
                    decimals: 2,
                    get: |s, _| match s.workload.arrival {
                        Arrival::Poisson { .. } => Some(1.0),
                        Arrival::Gamma { cv, .. } => Some(cv),
                        _ => None,
                    },
                    set: |s, _, cv| {
                        if let Some(r) = rate(s) {
                            s.workload.arrival = if (cv - 1.0).abs() < 1e-9 {
                                Arrival::Poisson { rate_per_s: r }
                            } else {
                                Arrival::Gamma { rate_per_s: r, cv }
                            };
                        }
                    },
                }),
                Number(NumberControl {
                    id: "users-start",
                    label: "Users before the spike",
                    unit: "users",
                    help: "Concurrent users at the start; each sends a task, waits for the answer, thinks, and sends the next.",
                    min: 1.0,
                    max: 20_000.0,
                    log: true,
                    decimals: 0,
                    get: |s, _| {
                        users(s)
                            .filter(|u| u.len() > 1)
                            .map(|u| f64::from(u[0].users))
                    },
                    set: |s, _, v| {
                        if let Arrival::ClosedLoop { users, .. } = &mut s.workload.arrival {
                            users[0].users = v as u32;
                        }
                    },
                }),
                Number(NumberControl {
                    id: "users",
                    label: "Concurrent users",
                    unit: "users",
                    help: "Concurrent users (after the spike, if there is one); each sends a task, waits for the answer, thinks, and sends the next.",
                    min: 1.0,
                    max: 20_000.0,
                    log: true,
                    decimals: 0,
                    get: |s, _| users(s).and_then(|u| u.last()).map(|u| f64::from(u.users)),
                    set: |s, _, v| {
                        if let Arrival::ClosedLoop { users, .. } = &mut s.workload.arrival
                            && let Some(last) = users.last_mut()
                        {
                            last.users = v as u32;
                        }
                    },
                }),
                Number(NumberControl {
                    id: "think-time",
                    label: "Think time",
                    unit: "s",
                    help: "How long a user reads and thinks between getting an answer and sending the next task, on average.",
                    min: 0.1,
                    max: 3600.0,
                    log: true,
                    decimals: 1,
                    get: |s, _| match &s.workload.arrival {
                        Arrival::ClosedLoop { think_time_s, .. } => Some(think_time_s.mean()),
                        _ => None,
                    },
                    set: |s, _, v| {
                        if let Arrival::ClosedLoop { think_time_s, .. } = &mut s.workload.arrival {
                            *think_time_s = think_time_s.with_mean(v);
                        }
                    },
                }),
                Number(NumberControl {
                    id: "duration",
                    label: "Simulated time",
                    unit: "s",
                    help: "How long new tasks keep arriving; work still in flight then finishes.",
                    min: 10.0,
                    max: 3600.0,
                    log: true,
                    decimals: 0,
                    get: |s, _| Some(s.duration_s),
                    set: |s, _, v| s.duration_s = v,
                }),
            ],
        },
        Group {
            title: "Workload",
            per_class: true,
            controls: vec![
                Number(NumberControl {
                    id: "share",
                    label: "Share of traffic",
                    unit: "%",
                    help: "The part of all tasks that are of this kind.",
                    min: 0.0,
                    max: 100.0,
                    log: false,
                    decimals: 0,
                    get: |s, i| {
                        // A single class has all the traffic: nothing to set.
                        if s.workload.classes.len() < 2 {
                            return None;
                        }
                        let total: f64 = s.workload.classes.iter().map(|k| k.share).sum();
                        s.workload
                            .classes
                            .get(i)
                            .map(|k| 100.0 * k.share / total.max(1e-12))
                    },
                    set: |s, i, v| {
                        if let Some(k) = s.workload.classes.get_mut(i) {
                            let others: f64 = 100.0 - v;
                            k.share = v.max(0.0);
                            let rest: f64 = s
                                .workload
                                .classes
                                .iter()
                                .enumerate()
                                .filter(|(j, _)| *j != i)
                                .map(|(_, k)| k.share)
                                .sum();
                            if rest > 0.0 {
                                for (j, k) in s.workload.classes.iter_mut().enumerate() {
                                    if j != i {
                                        k.share *= others / rest;
                                    }
                                }
                                s.workload.classes[i].share = v;
                            }
                        }
                    },
                }),
                Number(NumberControl {
                    id: "input-tokens",
                    label: "Prompt length",
                    unit: "tokens",
                    help: "Tokens sent to the model (instructions, context, the user's text), on average; the spread keeps its shape.",
                    min: 1.0,
                    max: 32_000.0,
                    log: true,
                    decimals: 0,
                    get: |s, i| s.workload.classes.get(i).map(|k| k.input_tokens.mean()),
                    set: |s, i, v| {
                        if let Some(k) = s.workload.classes.get_mut(i) {
                            k.input_tokens = k.input_tokens.with_mean(v);
                        }
                    },
                }),
                Number(NumberControl {
                    id: "output-tokens",
                    label: "Answer length",
                    unit: "tokens",
                    help: "Tokens the model generates, on average, up to max_tokens.",
                    min: 1.0,
                    max: 8_000.0,
                    log: true,
                    decimals: 0,
                    get: |s, i| s.workload.classes.get(i).map(|k| k.output_tokens.mean()),
                    set: |s, i, v| {
                        if let Some(k) = s.workload.classes.get_mut(i) {
                            k.output_tokens = k.output_tokens.with_mean(v);
                            k.max_tokens = k.max_tokens.max(v.ceil() as u32);
                        }
                    },
                }),
            ],
        },
        Group {
            title: "Serving",
            per_class: false,
            controls: vec![
                Choice(ChoiceControl {
                    id: "gpu",
                    label: "GPU",
                    help: "The accelerator each replica runs on; its compute, memory bandwidth and memory set the step times.",
                    options: |_, _| {
                        Gpu::ALL
                            .iter()
                            .map(|g| (key(g), g.spec().name.to_owned()))
                            .collect()
                    },
                    get: |s, _| Some(key(&s.serving.gpu)),
                    set: |s, _, k| {
                        if let Some(g) = Gpu::ALL.iter().find(|g| key(*g) == k) {
                            s.serving.gpu = *g;
                            s.serving.usd_per_gpu_hour = None;
                        }
                    },
                }),
                Choice(ChoiceControl {
                    id: "model",
                    label: "Model",
                    help: "The model served; its size sets how much must be read from memory for every step.",
                    options: |_, _| {
                        Model::NAMED
                            .iter()
                            .map(|m| (key(m), m.name().to_owned()))
                            .collect()
                    },
                    get: |s, _| Some(key(&s.serving.model)),
                    set: |s, _, k| {
                        if let Some(m) = Model::NAMED.iter().find(|m| key(*m) == k) {
                            s.serving.model = *m;
                        }
                    },
                }),
                Choice(ChoiceControl {
                    id: "weights",
                    label: "Weight precision",
                    help: "Bytes per weight: 8- and 4-bit formats read less memory per step; FP8 also doubles compute on GPUs that have it.",
                    options: |_, _| precisions(),
                    get: |s, _| Some(key(&s.serving.weights)),
                    set: |s, _, k| {
                        if let Some(p) = precision(k) {
                            s.serving.weights = p;
                        }
                    },
                }),
                Choice(ChoiceControl {
                    id: "kv-cache",
                    label: "KV-cache precision",
                    help: "Bytes per cached key/value: FP8 holds twice the tokens in the same memory.",
                    options: |_, _| precisions().into_iter().take(2).collect(),
                    get: |s, _| Some(key(&s.serving.kv_cache)),
                    set: |s, _, k| {
                        if let Some(p) = precision(k) {
                            s.serving.kv_cache = p;
                        }
                    },
                }),
                Choice(ChoiceControl {
                    id: "tp",
                    label: "GPUs per replica",
                    help: "Tensor parallelism: one model split across GPUs, for models too big for one or for faster steps.",
                    options: |_, _| {
                        [1, 2, 4, 8]
                            .iter()
                            .map(|n| (n.to_string(), n.to_string()))
                            .collect()
                    },
                    get: |s, _| Some(s.serving.gpus_per_replica.to_string()),
                    set: |s, _, k| {
                        if let Ok(n) = k.parse() {
                            s.serving.gpus_per_replica = n;
                        }
                    },
                }),
                Number(NumberControl {
                    id: "replicas",
                    label: "Replicas",
                    unit: "servers",
                    help: "Identical copies of the server behind a router; each costs its GPUs by the hour.",
                    min: 1.0,
                    max: 64.0,
                    log: true,
                    decimals: 0,
                    get: |s, _| Some(f64::from(s.serving.replicas)),
                    set: |s, _, v| s.serving.replicas = v as u32,
                }),
                Choice(ChoiceControl {
                    id: "router",
                    label: "Router",
                    help: "How requests are spread over replicas.",
                    options: |_, _| {
                        vec![
                            ("round_robin".into(), "Round robin".into()),
                            (
                                "least_outstanding".into(),
                                "Least outstanding requests".into(),
                            ),
                            ("join_shortest_queue".into(), "Join shortest queue".into()),
                            ("central_queue".into(), "One shared queue".into()),
                        ]
                    },
                    get: |s, _| Some(key(&s.serving.router)),
                    set: |s, _, k| {
                        if let Ok(r) = serde_json::from_value::<Router>(serde_json::Value::String(
                            k.to_owned(),
                        )) {
                            s.serving.router = r;
                        }
                    },
                }),
            ],
        },
        Group {
            title: "Batching",
            per_class: false,
            controls: vec![
                Choice(ChoiceControl {
                    id: "batching",
                    label: "Policy",
                    help: "How requests share the GPU: one at a time, fixed batches, or continuous (iteration-level) batching, optionally with chunked prefill.",
                    options: |_, _| {
                        vec![
                            ("none".into(), "None (one at a time)".into()),
                            ("static".into(), "Static batches".into()),
                            ("continuous".into(), "Continuous".into()),
                            (
                                "chunked_prefill".into(),
                                "Continuous + chunked prefill".into(),
                            ),
                        ]
                    },
                    get: |s, _| {
                        Some(
                            match s.serving.batching {
                                Batching::None => "none",
                                Batching::Static { .. } => "static",
                                Batching::Continuous { .. } => "continuous",
                                Batching::ChunkedPrefill { .. } => "chunked_prefill",
                            }
                            .to_owned(),
                        )
                    },
                    set: |s, _, k| {
                        // The same switch `tlab sweep --vary batching.policy=…` makes.
                        let _ = sim_core::sweep::apply(s, "batching.policy", k);
                    },
                }),
                Number(NumberControl {
                    id: "max-seqs",
                    label: "Max batch size",
                    unit: "sequences",
                    help: "Most requests processed together in one forward pass (vLLM's max_num_seqs): more means more throughput and slower steps.",
                    min: 1.0,
                    max: 1024.0,
                    log: true,
                    decimals: 0,
                    get: |s, _| batching_max_seqs(s),
                    set: |s, _, v| {
                        let _ = sim_core::sweep::apply(s, "batching.max_seqs", &v.to_string());
                    },
                }),
                Number(NumberControl {
                    id: "max-wait",
                    label: "Max batch wait",
                    unit: "ms",
                    help: "Longest the first request of a static batch waits for the batch to fill.",
                    min: 0.0,
                    max: 5000.0,
                    log: false,
                    decimals: 0,
                    get: |s, _| match s.serving.batching {
                        Batching::Static { max_wait_ms, .. } => Some(max_wait_ms),
                        _ => None,
                    },
                    set: |s, _, v| {
                        if let Batching::Static { max_wait_ms, .. } = &mut s.serving.batching {
                            *max_wait_ms = v;
                        }
                    },
                }),
                Number(NumberControl {
                    id: "token-budget",
                    label: "Tokens per pass",
                    unit: "tokens",
                    help: "Most tokens one forward pass processes (max_num_batched_tokens): larger prefills faster, but each pass takes longer.",
                    min: 64.0,
                    max: 65_536.0,
                    log: true,
                    decimals: 0,
                    get: |s, _| match s.serving.batching {
                        Batching::Continuous {
                            max_num_batched_tokens,
                            ..
                        }
                        | Batching::ChunkedPrefill {
                            max_num_batched_tokens,
                            ..
                        } => Some(f64::from(max_num_batched_tokens)),
                        _ => None,
                    },
                    set: |s, _, v| match &mut s.serving.batching {
                        Batching::Continuous {
                            max_num_batched_tokens,
                            ..
                        } => *max_num_batched_tokens = v as u32,
                        Batching::ChunkedPrefill {
                            max_num_batched_tokens,
                            max_num_seqs,
                            chunk_tokens,
                        } => {
                            *max_num_batched_tokens = (v as u32).max(*max_num_seqs);
                            *chunk_tokens = (*chunk_tokens).min(*max_num_batched_tokens);
                        }
                        _ => {}
                    },
                }),
                Number(NumberControl {
                    id: "chunk",
                    label: "Prefill chunk",
                    unit: "tokens",
                    help: "Largest piece of one prompt processed per pass, so long prompts do not stall everyone's next token.",
                    min: 16.0,
                    max: 65_536.0,
                    log: true,
                    decimals: 0,
                    get: |s, _| match s.serving.batching {
                        Batching::ChunkedPrefill { chunk_tokens, .. } => {
                            Some(f64::from(chunk_tokens))
                        }
                        _ => None,
                    },
                    set: |s, _, v| {
                        if let Batching::ChunkedPrefill { chunk_tokens, .. } =
                            &mut s.serving.batching
                        {
                            *chunk_tokens = v as u32;
                        }
                    },
                }),
            ],
        },
        Group {
            title: "Provider",
            per_class: false,
            controls: vec![
                Choice(ChoiceControl {
                    id: "client",
                    label: "When the API says 429",
                    help: "A 429 is the provider refusing a request over the rate limit; the client can fail, retry, or queue requests itself.",
                    options: |_, _| {
                        vec![
                            ("fail_fast".into(), "Fail: show an error".into()),
                            (
                                "sdk_retries".into(),
                                "Retry like the SDKs (2 retries)".into(),
                            ),
                            (
                                "full_jitter".into(),
                                "Retry with full jitter (5 retries)".into(),
                            ),
                            ("queue".into(), "Queue in the client".into()),
                        ]
                    },
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
                    set: |s, _, k| {
                        if let Some(a) = s.api.as_mut() {
                            a.client = match k {
                                "fail_fast" => ClientPolicy::FailFast,
                                "sdk_retries" => ClientPolicy::SdkRetries { max_retries: 2 },
                                "full_jitter" => ClientPolicy::FullJitter {
                                    max_retries: 5,
                                    base_s: 1.0,
                                    cap_s: 30.0,
                                },
                                _ => ClientPolicy::Queue {
                                    max_queue: 20_000,
                                    max_wait_s: 900.0,
                                },
                            };
                        }
                    },
                }),
                Number(NumberControl {
                    id: "tpm",
                    label: "Tokens-per-minute limit",
                    unit: "tokens/min",
                    help: "TPM: the most tokens the provider accepts from the account per minute for the main model tier, before the rate-limit tier multiplier.",
                    min: 1_000.0,
                    max: 100_000_000.0,
                    log: true,
                    decimals: 0,
                    get: |s, _| main_tier(s).map(|t| t.limits.tpm as f64),
                    set: |s, _, v| {
                        if let Some(t) = main_tier_mut(s) {
                            t.limits.tpm = v as u64;
                        }
                    },
                }),
                Number(NumberControl {
                    id: "api-price-input",
                    label: "API price, input",
                    unit: "$/M tokens",
                    help: "What the main model tier charges per million prompt tokens.",
                    min: 0.01,
                    max: 100.0,
                    log: true,
                    decimals: 2,
                    get: |s, _| main_tier(s).map(|t| t.usd_per_mtok_input),
                    set: |s, _, v| {
                        if let Some(t) = main_tier_mut(s) {
                            t.usd_per_mtok_input = v;
                        }
                    },
                }),
                Number(NumberControl {
                    id: "api-price-output",
                    label: "API price, output",
                    unit: "$/M tokens",
                    help: "What the main model tier charges per million generated tokens.",
                    min: 0.01,
                    max: 300.0,
                    log: true,
                    decimals: 2,
                    get: |s, _| main_tier(s).map(|t| t.usd_per_mtok_output),
                    set: |s, _, v| {
                        if let Some(t) = main_tier_mut(s) {
                            t.usd_per_mtok_output = v;
                        }
                    },
                }),
                Number(NumberControl {
                    id: "rate-limit-tier",
                    label: "Rate-limit tier",
                    unit: "× limits",
                    help: "Providers raise every requests- and tokens-per-minute limit as an account spends more; this multiplies them.",
                    min: 1.0,
                    max: 16.0,
                    log: true,
                    decimals: 0,
                    get: |s, _| s.api.as_ref().map(|a| f64::from(a.rate_limit_multiplier)),
                    set: |s, _, v| {
                        if let Some(a) = s.api.as_mut() {
                            a.rate_limit_multiplier = v as u32;
                        }
                    },
                }),
            ],
        },
        Group {
            title: "Routing",
            per_class: true,
            controls: vec![Choice(ChoiceControl {
                id: "backend",
                label: "Served by",
                help: "Which backend answers this kind of request: an API model tier (optionally its faster variant) or your own servers.",
                options: |s, _| {
                    let mut o = vec![(SELF_HOSTED.to_owned(), "Self-hosted servers".to_owned())];
                    if let Some(a) = &s.api {
                        for t in &a.tiers {
                            o.push((t.name.clone(), format!("API: {}", t.name)));
                            if t.fast.is_some() {
                                o.push((
                                    format!("{}+fast", t.name),
                                    format!("API: {} (fast)", t.name),
                                ));
                            }
                        }
                    }
                    o
                },
                get: |s, i| {
                    s.api.as_ref()?;
                    let class = &s.workload.classes.get(i)?.name;
                    Some(match s.backend_of(class) {
                        None => SELF_HOSTED.to_owned(),
                        Some((t, fast)) => {
                            let name = &s.api.as_ref()?.tiers[t].name;
                            if fast {
                                format!("{name}+fast")
                            } else {
                                name.clone()
                            }
                        }
                    })
                },
                set: |s, i, k| {
                    let Some(class) = s.workload.classes.get(i).map(|c| c.name.clone()) else {
                        return;
                    };
                    if let Some(a) = s.api.as_mut() {
                        let (backend, fast) = match k.strip_suffix("+fast") {
                            Some(b) => (b.to_owned(), true),
                            None => (k.to_owned(), false),
                        };
                        a.routes.retain(|r| r.class != class);
                        a.routes.push(Route {
                            class,
                            backend,
                            fast,
                        });
                    }
                },
            })],
        },
        Group {
            title: "Cost and targets",
            per_class: false,
            controls: vec![
                Number(NumberControl {
                    id: "gpu-price",
                    label: "GPU price",
                    unit: "$/GPU-hour",
                    help: "What one GPU costs per hour, busy or idle; the catalogue's indicative price unless you set it.",
                    min: 0.1,
                    max: 20.0,
                    log: true,
                    decimals: 2,
                    get: |s, _| Some(s.usd_per_gpu_hour()),
                    set: |s, _, v| s.serving.usd_per_gpu_hour = Some(v),
                }),
                Number(NumberControl {
                    id: "slo-ttft",
                    label: "Target time to first token",
                    unit: "ms",
                    help: "TTFT: from sending a request to seeing the first token of the answer; requests slower than this miss the target.",
                    min: 10.0,
                    max: 120_000.0,
                    log: true,
                    decimals: 0,
                    get: |s, _| Some(s.slo.ttft_ms),
                    set: |s, _, v| s.slo.ttft_ms = v,
                }),
                Number(NumberControl {
                    id: "slo-tpot",
                    label: "Target time per output token",
                    unit: "ms",
                    help: "TPOT: the average gap between tokens after the first; reading speed needs roughly 50–200 ms or less.",
                    min: 1.0,
                    max: 2000.0,
                    log: true,
                    decimals: 0,
                    get: |s, _| Some(s.slo.tpot_ms),
                    set: |s, _, v| s.slo.tpot_ms = v,
                }),
            ],
        },
    ]
}

/// A value's serde name, used as the key of an option.
fn key<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

fn precisions() -> Vec<(String, String)> {
    [
        (Precision::Bf16, "BF16"),
        (Precision::Fp8, "FP8"),
        (Precision::Int8, "INT8 (weights only)"),
        (Precision::Int4, "INT4 (weights only)"),
    ]
    .iter()
    .map(|(p, l)| (key(p), (*l).to_owned()))
    .collect()
}

fn precision(k: &str) -> Option<Precision> {
    serde_json::from_value(serde_json::Value::String(k.to_owned())).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_numbers() -> Vec<NumberControl> {
        groups()
            .into_iter()
            .flat_map(|g| g.controls)
            .filter_map(|c| match c {
                Control::Number(n) => Some(n),
                Control::Choice(_) => None,
            })
            .collect()
    }

    #[test]
    fn every_control_writes_what_it_reads_and_keeps_the_scenario_valid() {
        for p in sim_core::presets::all() {
            for c in all_numbers() {
                for i in 0..p.scenario.workload.classes.len() {
                    let mut s = p.scenario.clone();
                    let Some(v) = (c.get)(&s, i) else { continue };
                    let target = c.from_slider(c.to_slider(v.clamp(c.min, c.max)) + 37.0);
                    (c.set)(&mut s, i, target);
                    let back = (c.get)(&s, i).expect("still applies");
                    if let Err(e) = s.validate() {
                        panic!(
                            "{} on {} at {target} made the scenario invalid: {e}",
                            c.id, p.id
                        );
                    }
                    assert!(
                        (back - target).abs() <= target.abs() * 1e-6 + 1e-9,
                        "{} on {}: set {target}, read {back}",
                        c.id,
                        p.id
                    );
                }
            }
        }
    }

    #[test]
    fn every_keyboard_step_moves_the_value() {
        for c in all_numbers() {
            let mut v = c.min;
            let mut steps = 0;
            while v < c.max && steps < 100_000 {
                let next = c.from_slider_moving(c.to_slider(v) + 1.0, v);
                assert!(next > v, "{}: stuck at {v}", c.id);
                v = next;
                steps += 1;
            }
            let down = c.from_slider_moving(c.to_slider(c.max) - 1.0, c.max);
            assert!(down < c.max, "{}: cannot step down from the top", c.id);
        }
    }

    #[test]
    fn sliders_map_both_ways_and_typed_values_are_checked() {
        for c in all_numbers() {
            for pos in [0.0, 250.0, 500.0, 1000.0] {
                let v = c.from_slider(pos);
                assert!((c.min..=c.max).contains(&v), "{}: {v}", c.id);
                // Round trips are stable: a value's slider position gives back the value.
                assert_eq!(c.from_slider(c.to_slider(v)), v, "{} at {pos}", c.id);
            }
            assert!(
                c.parse("abc")
                    .expect_err("not a number")
                    .contains("must be a number")
            );
            let err = c
                .parse(&format!("{}", c.max * 2.0 + 1.0))
                .expect_err("out of range");
            assert!(err.contains("must be between"), "{err}");
            assert!(c.parse("NaN").is_err());
        }
    }

    #[test]
    fn every_choice_offers_the_current_value_and_accepts_each_option() {
        for p in sim_core::presets::all() {
            for g in groups() {
                for c in g.controls {
                    let Control::Choice(c) = c else { continue };
                    for i in 0..p.scenario.workload.classes.len() {
                        let Some(cur) = (c.get)(&p.scenario, i) else {
                            continue;
                        };
                        let opts = (c.options)(&p.scenario, i);
                        assert!(
                            opts.iter().any(|(k, _)| *k == cur),
                            "{}: {cur} not among options",
                            c.id
                        );
                        for (k, _) in opts {
                            let mut s = p.scenario.clone();
                            (c.set)(&mut s, i, &k);
                            assert_eq!(
                                (c.get)(&s, i).as_deref(),
                                Some(k.as_str()),
                                "{} on {}",
                                c.id,
                                p.id
                            );
                        }
                    }
                }
            }
        }
    }
}
