//! The scenario: everything a run depends on, serialisable and versioned.
//!
//! The same JSON is what a share link carries, what `tlab run` reads, and what
//! [`Scenario::validate`] checks field by field before anything runs, turning
//! it into a [`ValidScenario`] — the only form the engine accepts.
//!
//! Rooms: the types here; `bounds`; `validate` (workload and serving) and
//! `validate_api`; `derived` (queries such as the deployment or mean lengths).

use crate::api::Api;
use crate::dist::Dist;
use crate::physics::Gpu;
use serde::{Deserialize, Serialize};

pub mod bounds;
mod derived;
mod disaggregation;
mod speculative;
pub use derived::ProfileStatement;
pub use disaggregation::{
    DECODE_POOL, Disaggregation, KvLink, PREFILL_POOL, RDMA_EFFICIENCY, RDMA_LATENCY_S,
    TCP_EFFICIENCY, TCP_LATENCY_S,
};
pub use speculative::{
    MAX_ACCEPTANCE, MAX_SPECULATIVE_TOKENS, Speculative, SpeculativeMethod, expected_tokens,
};
mod parse;
mod pools;
pub use pools::{
    Autoscale, ENGINE_START_S, LOAD_GB_PER_S, MAX_POOLS, MAX_RULES, Overflow, RoutingRule,
    ScaleSignal, Target,
};
mod serving;
pub use serving::{Batching, Router, SchedulingPolicy, ServiceModel, Serving};
mod trace_requests;
pub use trace_requests::{TraceEntry, TraceRequests};
mod trace_stats;
pub use trace_stats::{TraceStats, repeated_hash};
mod validate;
mod validate_api;
mod validate_model;
mod validate_trace;
mod validate_work;
mod validate_workload;

/// The scenario format this build reads and writes.
pub const SCENARIO_VERSION: u32 = 1;

/// A complete, reproducible description of one simulated run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Format version; must equal [`SCENARIO_VERSION`].
    pub version: u32,
    /// A short human-readable name.
    #[serde(default)]
    pub name: String,
    /// Seed of every random stream in the run.
    pub seed: u64,
    /// Length of the arrival window, seconds. New requests stop after it; work in
    /// flight then drains (within [`Limits`]).
    pub duration_s: f64,
    /// Who sends what, and when.
    pub workload: Workload,
    /// The self-hosted fleet that serves it.
    pub serving: Serving,
    /// Service-level objective used for goodput.
    #[serde(default)]
    pub slo: Slo,
    /// Bounds on the run's work.
    #[serde(default)]
    pub limits: Limits,
    /// Hosted API backends, if any class is sent to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<Api>,
    /// The trace this scenario was distilled from (`traces::Imported::distil`):
    /// its name, content hash and summary, so whoever opens the link can be
    /// asked for the file and replay it exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distilled_from: Option<TraceRef>,
    /// More self-hosted pools beside `serving` (the first pool), each named,
    /// with its own GPU, model, serving software, batching and replicas.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pools: Vec<Serving>,
    /// Rules sending requests to pools and API tiers, tried in order (see
    /// [`RoutingRule`]); without any, each class goes where `api` routes it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routing: Vec<RoutingRule>,
}

/// Traffic: an arrival process and a mix of request classes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// When tasks arrive.
    pub arrival: Arrival,
    /// What they ask for; a task's class is drawn by `share`.
    pub classes: Vec<RequestClass>,
}

/// An arrival process.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Arrival {
    /// Poisson arrivals at a constant rate.
    Poisson {
        /// Tasks per second.
        rate_per_s: f64,
    },
    /// Gamma-distributed inter-arrival times: bursty when `cv` > 1 (vLLM bench's burstiness = 1/cv²).
    Gamma {
        /// Tasks per second.
        rate_per_s: f64,
        /// Coefficient of variation of the inter-arrival time (1 = Poisson).
        cv: f64,
    },
    /// A Poisson process whose rate follows a piecewise-linear schedule (ramps,
    /// spikes); the rate holds its last value after the last point.
    Schedule {
        /// (time, rate) points in increasing time, the first at 0.
        points: Vec<RatePoint>,
        /// Burstiness: the coefficient of variation of the gaps between
        /// arrivals once the schedule's rate is taken out (gamma-distributed
        /// gaps in the schedule's own time, so the rate over time is kept).
        /// None (or 1) is Poisson.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cv: Option<f64>,
    },
    /// Load stages: Poisson arrivals at a constant rate for each stage in turn
    /// (`8 req/s for 600 s, then 20 req/s for 600 s`); the report breaks its
    /// numbers down per stage. The last rate holds if `duration_s` is longer.
    Stages {
        /// The stages, in order.
        stages: Vec<Stage>,
    },
    /// Closed loop: N users, each sending a task, waiting for it, thinking, and
    /// sending the next. The user count may change over time (a launch spike).
    ClosedLoop {
        /// User count from each time on, in increasing time, the first at 0.
        users: Vec<UserStep>,
        /// Think time between a task's end and the user's next task, seconds.
        think_time_s: Dist,
    },
    /// Replay of a recorded trace.
    Trace {
        /// Requests in non-decreasing time order (kept by column; in JSON a
        /// list of [`TraceRequest`]).
        requests: TraceRequests,
        /// Tokens each of a request's `prefix_blocks` hashes covers (512 in
        /// Mooncake's traces); needed when any request has them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prefix_block_tokens: Option<u32>,
    },
}

/// One point of a rate schedule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatePoint {
    /// Time, seconds from the start.
    pub at_s: f64,
    /// Tasks per second at that time.
    pub rate_per_s: f64,
}

/// One load stage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stage {
    /// Tasks per second through the stage.
    pub rate_per_s: f64,
    /// How long the stage lasts, seconds.
    pub duration_s: f64,
}

/// One step of a closed-loop user schedule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserStep {
    /// Time, seconds from the start.
    pub at_s: f64,
    /// Concurrent users from then on.
    pub users: u32,
}

/// One recorded request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceRequest {
    /// Arrival time, seconds from the start.
    pub at_s: f64,
    /// Prompt tokens.
    pub input_tokens: u32,
    /// Generated tokens.
    pub output_tokens: u32,
    /// Index into `workload.classes` the request is reported under.
    #[serde(default)]
    pub class: u32,
    /// Content hashes of the prompt's leading blocks of
    /// `prefix_block_tokens` each, chained (a hash names its block and all
    /// before it): requests that share a hash share those KV blocks through
    /// the prefix cache. Empty: a prompt nobody shares.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prefix_blocks: Vec<u64>,
}

/// A kind of request with its own token lengths (a chat turn, a summary, a classification…).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestClass {
    /// Name shown in reports.
    pub name: String,
    /// Relative share of tasks (need not sum to one across classes).
    pub share: f64,
    /// Prompt length, tokens.
    pub input_tokens: Dist,
    /// Generated length, tokens (capped at `max_tokens`).
    pub output_tokens: Dist,
    /// The request's `max_tokens`: a cap on generated tokens.
    pub max_tokens: u32,
    /// Calls per task: an agent chain of K sequential calls, each sent when the
    /// previous one finishes (or, for a conversation, the K turns). The
    /// user-visible latency is the chain's.
    #[serde(default = "one")]
    pub calls_per_task: u32,
    /// Prompts start with one of N shared system prompts (chosen at random per
    /// task); `input_tokens` is then the rest of the prompt, the question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_prefix: Option<SharedPrefix>,
    /// The calls of a task are the turns of one conversation: each turn's
    /// prompt sends the earlier turns (prompts and answers) again, then a new
    /// question, after the user thinks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<Conversation>,
    /// The client gives up on a request not finished within this many
    /// seconds: it counts as timed out, and its KV blocks and batch slot are
    /// freed. None waits forever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<f64>,
    /// A reasoning model's hidden thinking: tokens generated before the
    /// visible answer (on top of `output_tokens`, which `max_tokens` caps).
    /// They take decode steps, KV cache and batch slots like any token, and
    /// API tiers bill them as output; the user waits for the first visible one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<Dist>,
    /// Scheduling priority under `serving.scheduling_policy: priority`
    /// (vLLM's `--scheduling-policy priority`): lower is admitted first and
    /// preempted last, ties first come, first served; None is 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<u32>,
    /// This class's own targets (chat answers in 500 ms while a batch job
    /// may take a minute), in place of the scenario's `slo`: its requests
    /// meet the SLO by these, its goodput and the planner's verdict on it
    /// too. None uses the scenario's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<Slo>,
}

fn one() -> u32 {
    1
}

/// Shared system prompts at the start of every prompt of a class.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharedPrefix {
    /// How many different system prompts the class's users share.
    pub prompts: u32,
    /// Tokens in each.
    pub tokens: u32,
}

/// A trace named in a scenario without its requests (they would not fit a
/// link): enough to ask for the file and to know it is the same one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceRef {
    /// The file's name.
    pub name: String,
    /// SHA-256 of the file's bytes, hex.
    pub sha256: String,
    /// Requests it holds.
    pub requests: u64,
    /// What it holds, in words (`Imported::describe`).
    pub summary: String,
    /// How it was taken: time this many times faster.
    #[serde(default = "one_f64")]
    pub speed: f64,
    /// How it was taken: the requests arriving in `[from, to)` seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<[f64; 2]>,
    /// The link was made of the exact replay, not of the distilled scenario.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exact: bool,
    /// Lines of the file left out as unreadable when it was taken (the
    /// same file, read again the same way, leaves out the same ones).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped_lines: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn one_f64() -> f64 {
    1.0
}

/// Multi-turn conversations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conversation {
    /// Time the user reads and thinks between an answer and the next turn, s.
    pub think_time_s: Dist,
}

/// Service-level objective: a request meets it when both limits hold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Slo {
    /// Time-to-first-token limit, ms.
    pub ttft_ms: f64,
    /// Time-per-output-token limit, ms.
    pub tpot_ms: f64,
}

impl Default for Slo {
    /// MLPerf's Llama-2-70B server targets (reference §7): TTFT ≤ 2 s, TPOT ≤ 200 ms.
    fn default() -> Self {
        Slo {
            ttft_ms: 2000.0,
            tpot_ms: 200.0,
        }
    }
}

/// Bounds that keep every run finite.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Events processed before the run stops with a warning.
    pub max_events: u64,
    /// Simulated seconds before the run stops with a warning.
    pub max_sim_time_s: f64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_events: 50_000_000,
            max_sim_time_s: 86_400.0,
        }
    }
}

/// Everything wrong with a scenario, one line per problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// Each problem names the field, the allowed range and the value given.
    pub problems: Vec<String>,
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("invalid scenario: ")?;
        f.write_str(&self.problems.join("; "))
    }
}

impl std::error::Error for ScenarioError {}

/// A scenario that passed [`Scenario::validate`]: the engine, the CLI and the
/// page run only these, so validation happens once, at the boundary.
/// Deserialising one validates it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Scenario", into = "Scenario")]
pub struct ValidScenario(Scenario);

impl ValidScenario {
    /// The scenario.
    pub fn scenario(&self) -> &Scenario {
        &self.0
    }

    /// Give the scenario back (to edit it and validate again).
    pub fn into_inner(self) -> Scenario {
        self.0
    }
}

impl std::ops::Deref for ValidScenario {
    type Target = Scenario;
    fn deref(&self) -> &Scenario {
        &self.0
    }
}

impl TryFrom<Scenario> for ValidScenario {
    type Error = ScenarioError;
    fn try_from(s: Scenario) -> Result<Self, ScenarioError> {
        s.validate()
    }
}

impl From<ValidScenario> for Scenario {
    fn from(v: ValidScenario) -> Scenario {
        v.0
    }
}
