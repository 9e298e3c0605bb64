//! A task (one call, or an agent chain of calls, or a conversation's turns)
//! and who sends its calls; a request class, ready to sample.

use super::secs_to_ns;
use super::slab::Key;
use crate::dist::Sampler;
use crate::scenario::RequestClass;

/// A task in flight.
pub(super) type TaskId = Key<Task>;

#[derive(Clone, Debug)]
pub(super) struct Task {
    pub(super) class: u16,
    pub(super) start_ns: u64,
    pub(super) calls_left: u32,
    /// The closed-loop user who sent it, if any.
    pub(super) user: Option<u32>,
    /// Which shared system prompt its prompts start with.
    pub(super) prefix_group: u32,
    /// A conversation's id and the tokens of its history so far (prompts and
    /// answers of the turns before).
    pub(super) conversation: Option<(u64, u32)>,
    /// Where it lands in the routing rules' share splits (uniform in
    /// [0, 1); 0 when no rule splits).
    pub(super) route_u: f64,
}

/// Who sends a new call: its task's record, if it keeps one, and what the
/// call takes from it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Caller {
    pub(super) task: Option<TaskId>,
    pub(super) class: u16,
    pub(super) prefix_group: u32,
    pub(super) conversation: Option<(u64, u32)>,
    pub(super) route_u: f64,
}

impl Caller {
    /// Task `id`'s next call.
    pub(super) fn next_of(id: TaskId, t: &Task) -> Caller {
        debug_assert!(t.calls_left > 0, "a call of a task with none left");
        Caller::of(Some(id), t)
    }

    /// A call of task `t`, whose record is `id` if it keeps one.
    pub(super) fn of(id: Option<TaskId>, t: &Task) -> Caller {
        Caller {
            task: id,
            class: t.class,
            prefix_group: t.prefix_group,
            conversation: t.conversation,
            route_u: t.route_u,
        }
    }
}

/// A request class, ready to sample.
pub(super) struct ClassSpec {
    /// Shared system prompts: (how many, tokens each).
    pub(super) shared_prefix: Option<(u32, u32)>,
    /// Think time between a conversation's turns (None: not a conversation).
    pub(super) turn_think: Option<Sampler>,
    /// When the client gives up on a request, after its arrival.
    pub(super) timeout_ns: Option<u64>,
    /// Hidden reasoning tokens before each answer (None: not a reasoning model).
    pub(super) reasoning: Option<Sampler>,
    pub(super) name: String,
    pub(super) input: Sampler,
    pub(super) output: Sampler,
    pub(super) max_tokens: u32,
    pub(super) calls: u32,
    /// The TTFT and TPOT targets its requests are judged by (ns): its own,
    /// else the scenario's.
    pub(super) slo_ns: (u64, u64),
}

impl ClassSpec {
    /// Class `k` judged by `slo` ([`crate::Scenario::class_slo`]).
    pub(super) fn new(k: &RequestClass, slo: &crate::scenario::Slo) -> ClassSpec {
        ClassSpec {
            slo_ns: (
                secs_to_ns(slo.ttft_ms / 1000.0),
                secs_to_ns(slo.tpot_ms / 1000.0),
            ),
            shared_prefix: k.shared_prefix.as_ref().map(|p| (p.prompts, p.tokens)),
            turn_think: k.conversation.as_ref().map(|c| c.think_time_s.sampler()),
            timeout_ns: k.timeout_s.map(secs_to_ns),
            reasoning: k.reasoning_tokens.as_ref().map(|d| d.sampler()),
            name: k.name.clone(),
            input: k.input_tokens.sampler(),
            output: k.output_tokens.sampler(),
            max_tokens: k.max_tokens,
            calls: k.calls_per_task,
        }
    }
}
