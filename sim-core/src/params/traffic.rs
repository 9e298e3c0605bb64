//! Traffic and workload parameters: arrivals, users, duration, class shares
//! and token lengths.

use super::edits::{
    base_rate, parse_stages, set_base_rate, set_share, spike_factor, spike_schedule, stages_text,
    users,
};
use super::{Group, Kind, Number, Param, Text};
use crate::dist::Dist;
use crate::scenario::{Arrival, Conversation, SharedPrefix, bounds};

fn class_err(i: usize) -> String {
    format!("no class {i}")
}

pub(super) const PARAMS: &[Param] = &[
    Param {
        path: "arrival.rate",
        id: "arrival-rate",
        group: Group::Traffic,
        label: "Arrival rate",
        unit: "req/s",
        help: "How many new tasks arrive per second, on average (open loop: they keep coming whatever the latency).",
        kind: Kind::Number(Number {
            min: 0.001,
            max: bounds::RATE_PER_S,
            slider: (0.1, 500.0),
            log: true,
            decimals: 1,
            get: |s, _| base_rate(s),
            // A rate schedule is scaled as a whole: a spike keeps its shape.
            set: |s, _, v| set_base_rate(s, v),
        }),
    },
    Param {
        path: "arrival.spike",
        id: "spike",
        group: Group::Traffic,
        label: "Launch spike",
        unit: "× rate",
        help: "Multiplies the arrival rate through the middle third of the run, as a launch or a viral moment does; 1 means no spike.",
        kind: Kind::Number(Number {
            min: 1.0,
            max: 50.0,
            slider: (1.0, 50.0),
            log: true,
            decimals: 1,
            get: |s, _| spike_factor(s),
            set: |s, _, k| {
                if spike_factor(s).is_none() {
                    return Err(
                        "arrival.spike needs Poisson arrivals or a spike made by this control"
                            .into(),
                    );
                }
                let base = base_rate(s).unwrap_or(1.0);
                s.workload.arrival = if k <= 1.0 {
                    Arrival::Poisson { rate_per_s: base }
                } else {
                    spike_schedule(base, k, s.duration_s)
                };
                Ok(())
            },
        }),
    },
    Param {
        path: "arrival.stages",
        id: "stages",
        group: Group::Traffic,
        label: "Load stages",
        unit: "",
        help: "Constant-rate stages one after another, each RATE (req/s) for SECONDS: \"8 for 600, 24 for 600\" runs 8 req/s for 10 minutes, then 24; the simulated time becomes the stages' total, and the report breaks its numbers down per stage. Empty: one steady rate.",
        kind: Kind::Text(Text {
            example: "8 for 600, 24 for 600",
            get: |s, _| match &s.workload.arrival {
                Arrival::Poisson { .. } => Some(String::new()),
                Arrival::Stages { stages } => Some(stages_text(stages)),
                _ => None,
            },
            set: |s, _, text| {
                let open = matches!(
                    s.workload.arrival,
                    Arrival::Poisson { .. } | Arrival::Stages { .. }
                );
                if !open {
                    return Err("arrival.stages needs Poisson arrivals or stages".into());
                }
                if text.trim().is_empty() {
                    let rate_per_s = base_rate(s).unwrap_or(1.0);
                    s.workload.arrival = Arrival::Poisson { rate_per_s };
                    return Ok(());
                }
                let stages = parse_stages(text)?;
                let total: f64 = stages.iter().map(|st| st.duration_s).sum();
                if total.is_finite() && total > 0.0 {
                    s.set_duration(total);
                }
                s.workload.arrival = Arrival::Stages { stages };
                Ok(())
            },
        }),
    },
    Param {
        path: "arrival.cv",
        id: "burstiness",
        group: Group::Traffic,
        label: "Burstiness",
        unit: "CV",
        help: "Coefficient of variation of the gaps between arrivals: 1 is random (Poisson), above 1 comes in bursts, below 1 is steadier.",
        kind: Kind::Number(Number {
            min: 0.05,
            max: 20.0,
            slider: (0.2, 5.0),
            log: true,
            decimals: 2,
            get: |s, _| match s.workload.arrival {
                Arrival::Poisson { .. } => Some(1.0),
                Arrival::Gamma { cv, .. } => Some(cv),
                // A schedule that carries its burstiness (a distilled trace's).
                Arrival::Schedule { cv, .. } => cv,
                _ => None,
            },
            set: |s, _, cv| {
                let poisson = (cv - 1.0).abs() < 1e-9;
                match &mut s.workload.arrival {
                    Arrival::Poisson { rate_per_s } | Arrival::Gamma { rate_per_s, .. } => {
                        let rate_per_s = *rate_per_s;
                        s.workload.arrival = if poisson {
                            Arrival::Poisson { rate_per_s }
                        } else {
                            Arrival::Gamma { rate_per_s, cv }
                        };
                        Ok(())
                    }
                    // Kept even at 1, so the control stays while it is dragged.
                    Arrival::Schedule { cv: c @ Some(_), .. } => {
                        *c = Some(cv);
                        Ok(())
                    }
                    _ => {
                        Err("arrival.cv needs a Poisson or gamma process, or a schedule with its own burstiness (a distilled trace's)".into())
                    }
                }
            },
        }),
    },
    Param {
        path: "users.start",
        id: "users-start",
        group: Group::Traffic,
        label: "Users before the spike",
        unit: "users",
        help: "Concurrent users at the start; each sends a task, waits for the answer, thinks, and sends the next.",
        kind: Kind::Number(Number {
            min: 1.0,
            max: bounds::USERS as f64,
            slider: (1.0, 20_000.0),
            log: true,
            decimals: 0,
            get: |s, _| {
                users(s)
                    .filter(|u| u.len() > 1)
                    .map(|u| f64::from(u[0].users))
            },
            set: |s, _, v| match &mut s.workload.arrival {
                Arrival::ClosedLoop { users, .. } if users.len() > 1 => {
                    users[0].users = v as u32;
                    Ok(())
                }
                _ => Err("users.start needs closed-loop users whose count changes".into()),
            },
        }),
    },
    Param {
        path: "users",
        id: "users",
        group: Group::Traffic,
        label: "Concurrent users",
        unit: "users",
        help: "Concurrent users (after the spike, if there is one); each sends a task, waits for the answer, thinks, and sends the next.",
        kind: Kind::Number(Number {
            min: 1.0,
            max: bounds::USERS as f64,
            slider: (1.0, 20_000.0),
            log: true,
            decimals: 0,
            get: |s, _| users(s).and_then(|u| u.last()).map(|u| f64::from(u.users)),
            set: |s, _, v| match &mut s.workload.arrival {
                Arrival::ClosedLoop { users, .. } => {
                    if let Some(last) = users.last_mut() {
                        last.users = v as u32;
                    }
                    Ok(())
                }
                _ => Err("users needs a closed-loop arrival process".into()),
            },
        }),
    },
    Param {
        path: "think_time_s",
        id: "think-time",
        group: Group::Traffic,
        label: "Think time",
        unit: "s",
        help: "How long a user reads and thinks between getting an answer and sending the next task, on average.",
        kind: Kind::Number(Number {
            min: 0.01,
            max: bounds::TIME_S,
            slider: (0.1, 3600.0),
            log: true,
            decimals: 1,
            get: |s, _| match &s.workload.arrival {
                Arrival::ClosedLoop { think_time_s, .. } => Some(think_time_s.mean()),
                _ => None,
            },
            set: |s, _, v| match &mut s.workload.arrival {
                Arrival::ClosedLoop { think_time_s, .. } => {
                    *think_time_s = think_time_s.with_mean(v);
                    Ok(())
                }
                _ => Err("think_time_s needs a closed-loop arrival process".into()),
            },
        }),
    },
    Param {
        path: "duration",
        id: "duration",
        group: Group::Traffic,
        label: "Simulated time",
        unit: "s",
        help: "How long new tasks keep arriving; work still in flight then finishes.",
        kind: Kind::Number(Number {
            min: 1.0,
            max: bounds::DURATION_S,
            slider: (10.0, 3600.0),
            log: true,
            decimals: 0,
            get: |s, _| Some(s.duration_s),
            set: |s, _, v| {
                s.set_duration(v);
                Ok(())
            },
        }),
    },
    Param {
        path: "share",
        id: "share",
        group: Group::Workload,
        label: "Share of traffic",
        unit: "%",
        help: "The part of all tasks that are of this kind; the other kinds keep their proportions and share the rest.",
        kind: Kind::Number(Number {
            min: 0.0,
            max: 100.0,
            slider: (0.0, 100.0),
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
                if s.workload.classes.len() < 2 {
                    return Err("share needs two or more request classes".into());
                }
                set_share(s, i, v)
            },
        }),
    },
    Param {
        path: "input_tokens",
        id: "input-tokens",
        group: Group::Workload,
        label: "Prompt length",
        unit: "tokens",
        help: "Tokens sent to the model (instructions, context, the user's text), on average; the spread keeps its shape.",
        kind: Kind::Number(Number {
            min: 1.0,
            max: bounds::TOKENS as f64,
            slider: (1.0, 32_000.0),
            log: true,
            decimals: 0,
            get: |s, i| s.workload.classes.get(i).map(|k| k.input_tokens.mean()),
            set: |s, i, v| {
                let k = s.workload.classes.get_mut(i).ok_or_else(|| class_err(i))?;
                k.input_tokens = k.input_tokens.with_mean(v);
                Ok(())
            },
        }),
    },
    Param {
        path: "output_tokens",
        id: "output-tokens",
        group: Group::Workload,
        label: "Answer length",
        unit: "tokens",
        help: "Tokens the model generates, on average; max_tokens rises to fit the mean if needed.",
        kind: Kind::Number(Number {
            min: 1.0,
            max: bounds::TOKENS as f64,
            slider: (1.0, 8_000.0),
            log: true,
            decimals: 0,
            get: |s, i| s.workload.classes.get(i).map(|k| k.output_tokens.mean()),
            set: |s, i, v| {
                let k = s.workload.classes.get_mut(i).ok_or_else(|| class_err(i))?;
                k.output_tokens = k.output_tokens.with_mean(v);
                k.max_tokens = k.max_tokens.max(v.ceil() as u32);
                Ok(())
            },
        }),
    },
    Param {
        path: "reasoning_tokens",
        id: "reasoning-tokens",
        group: Group::Workload,
        label: "Thinking before answering",
        unit: "tokens",
        help: "A reasoning model's hidden tokens before its visible answer, on average: generated at the same speed, billed as output, and waited for before the first visible word (0 = answers at once).",
        kind: Kind::Number(Number {
            min: 0.0,
            max: bounds::TOKENS as f64,
            slider: (0.0, 20_000.0),
            log: false,
            decimals: 0,
            get: |s, i| {
                s.workload
                    .classes
                    .get(i)
                    .map(|k| k.reasoning_tokens.as_ref().map_or(0.0, Dist::mean))
            },
            set: |s, i, v| {
                let k = s.workload.classes.get_mut(i).ok_or_else(|| class_err(i))?;
                k.reasoning_tokens = (v >= 1.0).then(|| match &k.reasoning_tokens {
                    Some(d) => d.with_mean(v),
                    None => Dist::Fixed { value: v.round() },
                });
                Ok(())
            },
        }),
    },
    Param {
        path: "calls_per_task",
        id: "calls-per-task",
        group: Group::Workload,
        label: "Calls per task",
        unit: "calls",
        help: "An agent makes this many model calls one after another for each task; the user waits for all of them.",
        kind: Kind::Number(Number {
            min: 1.0,
            max: bounds::CALLS_PER_TASK as f64,
            slider: (1.0, 50.0),
            log: true,
            decimals: 0,
            get: |s, i| {
                s.workload
                    .classes
                    .get(i)
                    .map(|k| f64::from(k.calls_per_task))
            },
            set: |s, i, v| {
                let k = s.workload.classes.get_mut(i).ok_or_else(|| class_err(i))?;
                k.calls_per_task = v as u32;
                Ok(())
            },
        }),
    },
    Param {
        path: "timeout_s",
        id: "timeout",
        group: Group::Workload,
        label: "Client timeout",
        unit: "s",
        help: "The client gives up on a request not finished in this many seconds: it counts as timed out and its GPU memory is freed (0 = waits forever).",
        kind: Kind::Number(Number {
            min: 0.0,
            max: bounds::TIME_S,
            slider: (0.0, 600.0),
            log: false,
            decimals: 1,
            get: |s, i| {
                s.workload
                    .classes
                    .get(i)
                    .map(|k| k.timeout_s.unwrap_or(0.0))
            },
            set: |s, i, v| {
                let k = s.workload.classes.get_mut(i).ok_or_else(|| class_err(i))?;
                k.timeout_s = (v > 0.0).then_some(v);
                Ok(())
            },
        }),
    },
    Param {
        path: "shared_prompt.tokens",
        id: "shared-prompt",
        group: Group::Workload,
        label: "Shared system prompt",
        unit: "tokens",
        help: "Every prompt starts with a system prompt shared by the class's users, which prefix caching can reuse; the prompt length is then the rest, the question (0 = no shared prompt).",
        kind: Kind::Number(Number {
            min: 0.0,
            max: bounds::TOKENS as f64,
            slider: (0.0, 16_000.0),
            log: false,
            decimals: 0,
            get: |s, i| {
                s.workload.classes.get(i).map(|k| {
                    k.shared_prefix
                        .as_ref()
                        .map_or(0.0, |p| f64::from(p.tokens))
                })
            },
            set: |s, i, v| {
                let k = s.workload.classes.get_mut(i).ok_or_else(|| class_err(i))?;
                let tokens = v.round() as u32;
                k.shared_prefix = (tokens >= 1).then(|| SharedPrefix {
                    prompts: k.shared_prefix.as_ref().map_or(1, |p| p.prompts),
                    tokens,
                });
                Ok(())
            },
        }),
    },
    Param {
        path: "shared_prompt.count",
        id: "shared-prompts",
        group: Group::Workload,
        label: "Different system prompts",
        unit: "prompts",
        help: "How many different shared system prompts the class's users start from, each task choosing one at random: more of them, less reuse.",
        kind: Kind::Number(Number {
            min: 1.0,
            max: 1_000_000.0,
            slider: (1.0, 1_000.0),
            log: true,
            decimals: 0,
            get: |s, i| {
                s.workload
                    .classes
                    .get(i)
                    .and_then(|k| k.shared_prefix.as_ref())
                    .map(|p| f64::from(p.prompts))
            },
            set: |s, i, v| {
                let k = s.workload.classes.get_mut(i).ok_or_else(|| class_err(i))?;
                let p = k.shared_prefix.as_mut().ok_or_else(|| {
                    "shared_prompt.count needs a shared system prompt (shared_prompt.tokens > 0)"
                        .to_owned()
                })?;
                p.prompts = v.round() as u32;
                Ok(())
            },
        }),
    },
    Param {
        path: "conversation.think_s",
        id: "conversation-think",
        group: Group::Workload,
        label: "Time between turns",
        unit: "s",
        help: "Makes a task's calls the turns of one conversation: each turn sends the earlier turns again, then a new question, after the user reads and thinks this long on average (0 = independent calls, as an agent makes them).",
        kind: Kind::Number(Number {
            min: 0.0,
            max: bounds::TIME_S,
            slider: (0.0, 300.0),
            log: false,
            decimals: 1,
            get: |s, i| {
                s.workload
                    .classes
                    .get(i)
                    .filter(|k| k.calls_per_task > 1)
                    .map(|k| {
                        k.conversation
                            .as_ref()
                            .map_or(0.0, |c| c.think_time_s.mean())
                    })
            },
            set: |s, i, v| {
                let k = s.workload.classes.get_mut(i).ok_or_else(|| class_err(i))?;
                if k.calls_per_task < 2 {
                    return Err(
                        "conversation.think_s needs two or more calls per task (the turns)".into(),
                    );
                }
                k.conversation = (v > 0.0).then(|| Conversation {
                    think_time_s: match &k.conversation {
                        Some(c) => c.think_time_s.with_mean(v),
                        None => Dist::Exponential { mean: v },
                    },
                });
                Ok(())
            },
        }),
    },
];
