//! The scenario: everything a run depends on, serialisable and versioned.
//!
//! The same JSON is what a share link carries, what `tlab run` reads, and what
//! [`Scenario::validate`] checks field by field before anything runs.

use crate::api::{Api, ClientPolicy, LimitStyle, Limiter, SELF_HOSTED};
use crate::dist::Dist;
use crate::physics::{Deployment, Gpu, Model, Precision};
use serde::{Deserialize, Serialize};

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
        /// Requests in non-decreasing time order.
        requests: Vec<TraceRequest>,
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
    /// previous one finishes. The user-visible latency is the chain's.
    #[serde(default = "one")]
    pub calls_per_task: u32,
}

fn one() -> u32 {
    1
}

/// The self-hosted serving fleet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Serving {
    /// Identical replicas behind the router.
    pub replicas: u32,
    /// How the router picks a replica.
    pub router: Router,
    /// GPU type.
    pub gpu: Gpu,
    /// GPUs per replica (tensor parallelism).
    pub gpus_per_replica: u32,
    /// Model served.
    pub model: Model,
    /// Weight format.
    pub weights: Precision,
    /// KV-cache format.
    pub kv_cache: Precision,
    /// Fraction of GPU memory the server may use (vLLM default 0.9).
    pub gpu_memory_utilisation: f64,
    /// Batch formation policy.
    pub batching: Batching,
    /// Requests a replica may hold waiting; beyond it they are rejected.
    pub max_queue_per_replica: u32,
    /// Price override, $/GPU-hour; `None` uses the catalogue's indicative price.
    #[serde(default)]
    pub usd_per_gpu_hour: Option<f64>,
    /// What a forward pass costs: the GPU physics, or a textbook stand-in.
    #[serde(default)]
    pub service: ServiceModel,
}

/// How the router in front of the replicas chooses one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Router {
    /// Each replica in turn.
    RoundRobin,
    /// The replica with the fewest requests waiting or running.
    LeastOutstanding,
    /// The replica with the fewest requests waiting (ties: fewest running).
    JoinShortestQueue,
    /// One shared queue; a replica takes the next request when it has room.
    CentralQueue,
}

/// Batch formation policy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Batching {
    /// One request at a time.
    None,
    /// Batches of up to `max_batch`, sent when full or when the oldest request has
    /// waited `max_wait_ms`; a batch holds the GPU until its longest member finishes.
    Static {
        /// Largest batch.
        max_batch: u32,
        /// Longest a request waits for the batch to fill, ms.
        max_wait_ms: f64,
    },
    /// Iteration-level batching (vLLM-style): sequences join and leave between
    /// forward passes; a pass is either a prefill of newly admitted prompts or a
    /// decode step of every running sequence.
    Continuous {
        /// Largest number of running sequences (`max_num_seqs`).
        max_num_seqs: u32,
        /// Largest number of tokens in one forward pass (`max_num_batched_tokens`).
        max_num_batched_tokens: u32,
    },
    /// Continuous batching with chunked prefill: each pass decodes every running
    /// sequence first, then fills the remaining token budget with prompt chunks of
    /// at most `chunk_tokens` per sequence.
    ChunkedPrefill {
        /// Largest number of running sequences.
        max_num_seqs: u32,
        /// Token budget of one forward pass.
        max_num_batched_tokens: u32,
        /// Largest prompt chunk of one sequence in one pass.
        chunk_tokens: u32,
    },
}

impl Batching {
    /// Largest number of sequences one forward pass may hold.
    pub fn max_seqs(&self) -> u32 {
        match *self {
            Batching::None => 1,
            Batching::Static { max_batch, .. } => max_batch,
            Batching::Continuous { max_num_seqs, .. }
            | Batching::ChunkedPrefill { max_num_seqs, .. } => max_num_seqs,
        }
    }

    /// Largest number of tokens one forward pass may hold (sizes the activations).
    pub fn max_batched_tokens(&self, max_input_tokens: u32) -> u32 {
        match *self {
            Batching::None => max_input_tokens.max(1),
            Batching::Static { max_batch, .. } => max_batch.saturating_mul(max_input_tokens).max(1),
            Batching::Continuous {
                max_num_batched_tokens,
                ..
            }
            | Batching::ChunkedPrefill {
                max_num_batched_tokens,
                ..
            } => max_num_batched_tokens,
        }
    }
}

/// What one unit of service costs.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ServiceModel {
    /// Forward passes timed from the GPU and model physics.
    #[default]
    Physics,
    /// A textbook server for checking the engine against queueing theory: each
    /// dispatch (one request, or one whole batch under static batching) takes a
    /// random time, whatever its size; every member completes at its end.
    Abstract {
        /// Service time, seconds.
        time_s: Dist,
        /// Under static batching, let arrivals join a batch in service while it has room.
        #[serde(default)]
        join_in_progress: bool,
    },
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

/// Upper bounds on scenario sizes; beyond them a run could not finish in a browser tab.
pub mod bounds {
    /// Longest arrival window, s (one week).
    pub const DURATION_S: f64 = 604_800.0;
    /// Highest arrival rate, tasks/s.
    pub const RATE_PER_S: f64 = 100_000.0;
    /// Most tasks an arrival process may be expected to produce.
    pub const EXPECTED_TASKS: f64 = 20_000_000.0;
    /// Most closed-loop users.
    pub const USERS: u32 = 1_000_000;
    /// Most points in a rate or user schedule.
    pub const SCHEDULE_POINTS: usize = 10_000;
    /// Most requests in a trace.
    pub const TRACE_REQUESTS: usize = 5_000_000;
    /// Most request classes.
    pub const CLASSES: usize = 64;
    /// Longest prompt or generation, tokens.
    pub const TOKENS: u32 = 1_048_576;
    /// Most calls in an agent chain.
    pub const CALLS_PER_TASK: u32 = 1_000;
    /// Most replicas.
    pub const REPLICAS: u32 = 1024;
    /// Largest batch or sequence count.
    pub const BATCH: u32 = 65_536;
    /// Largest token budget of one forward pass.
    pub const BATCHED_TOKENS: u32 = 4_194_304;
    /// Largest per-replica queue.
    pub const QUEUE: u32 = 10_000_000;
    /// Longest think time or service time, s.
    pub const TIME_S: f64 = 86_400.0;
    /// Most events in a run.
    pub const EVENTS: u64 = 2_000_000_000;
}

struct Checker {
    problems: Vec<String>,
}

impl Checker {
    fn range_f(&mut self, field: &str, v: f64, lo: f64, hi: f64, unit: &str) {
        if !(v.is_finite() && v >= lo && v <= hi) {
            self.problems
                .push(format!("{field} must be {lo}..={hi}{unit}, got {v}"));
        }
    }
    fn positive_f(&mut self, field: &str, v: f64, hi: f64, unit: &str) {
        if !(v.is_finite() && v > 0.0 && v <= hi) {
            self.problems
                .push(format!("{field} must be > 0 and ≤ {hi}{unit}, got {v}"));
        }
    }
    fn range_u(&mut self, field: &str, v: u64, lo: u64, hi: u64) {
        if !(lo..=hi).contains(&v) {
            self.problems
                .push(format!("{field} must be {lo}..={hi}, got {v}"));
        }
    }
}

impl Checker {
    /// The two limits every iteration-level policy has.
    fn iteration_batching(&mut self, max_num_seqs: u32, max_num_batched_tokens: u32) {
        self.range_u(
            "serving.batching.max_num_seqs",
            u64::from(max_num_seqs),
            1,
            u64::from(bounds::BATCH),
        );
        self.range_u(
            "serving.batching.max_num_batched_tokens",
            u64::from(max_num_batched_tokens),
            1,
            u64::from(bounds::BATCHED_TOKENS),
        );
    }

    /// A time-ordered schedule: 1..=SCHEDULE_POINTS entries, each within the
    /// longest run, the first at 0, strictly increasing.
    fn schedule(&mut self, field: &str, noun: &str, times: &[f64]) {
        let n = times.len();
        if n == 0 || n > bounds::SCHEDULE_POINTS {
            self.problems.push(format!(
                "{field} must have 1..={} {noun}s, got {n}",
                bounds::SCHEDULE_POINTS
            ));
        }
        for (i, &t) in times.iter().take(bounds::SCHEDULE_POINTS).enumerate() {
            let f = format!("{field}[{i}].at_s");
            self.range_f(&f, t, 0.0, bounds::DURATION_S, " s");
            if i == 0 && t != 0.0 {
                self.problems
                    .push(format!("{f} must be 0 (the schedule starts at 0), got {t}"));
            }
            if i > 0 && t <= times[i - 1] {
                self.problems.push(format!(
                    "{f} must be after the previous {noun}'s {}, got {t}",
                    times[i - 1]
                ));
            }
        }
    }
}

impl Scenario {
    /// Check every field; on failure list every problem found.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        let mut c = Checker {
            problems: Vec::new(),
        };
        if self.version != SCENARIO_VERSION {
            c.problems.push(format!(
                "version must be {SCENARIO_VERSION} (this build's scenario format), got {}",
                self.version
            ));
        }
        c.positive_f("duration_s", self.duration_s, bounds::DURATION_S, " s");
        if self.name.len() > 200 {
            c.problems.push(format!(
                "name must be at most 200 bytes, got {}",
                self.name.len()
            ));
        }
        self.validate_workload(&mut c);
        self.validate_serving(&mut c);
        self.validate_api(&mut c);
        c.positive_f("slo.ttft_ms", self.slo.ttft_ms, 1e9, " ms");
        c.positive_f("slo.tpot_ms", self.slo.tpot_ms, 1e9, " ms");
        c.range_u(
            "limits.max_events",
            self.limits.max_events,
            1,
            bounds::EVENTS,
        );
        c.positive_f(
            "limits.max_sim_time_s",
            self.limits.max_sim_time_s,
            10.0 * bounds::DURATION_S,
            " s",
        );
        if c.problems.is_empty() {
            Ok(())
        } else {
            Err(ScenarioError {
                problems: c.problems,
            })
        }
    }

    fn validate_workload(&self, c: &mut Checker) {
        let w = &self.workload;
        let d = if self.duration_s.is_finite() {
            self.duration_s.clamp(0.0, bounds::DURATION_S)
        } else {
            0.0
        };
        let expected_tasks = match &w.arrival {
            Arrival::Poisson { rate_per_s } => {
                c.positive_f(
                    "workload.arrival.rate_per_s",
                    *rate_per_s,
                    bounds::RATE_PER_S,
                    " tasks/s",
                );
                rate_per_s * d
            }
            Arrival::Gamma { rate_per_s, cv } => {
                c.positive_f(
                    "workload.arrival.rate_per_s",
                    *rate_per_s,
                    bounds::RATE_PER_S,
                    " tasks/s",
                );
                c.range_f("workload.arrival.cv", *cv, 0.05, 20.0, "");
                rate_per_s * d
            }
            Arrival::Schedule { points } => {
                let times: Vec<f64> = points.iter().map(|p| p.at_s).collect();
                c.schedule("workload.arrival.points", "point", &times);
                let mut peak: f64 = 0.0;
                for (i, p) in points.iter().take(bounds::SCHEDULE_POINTS).enumerate() {
                    c.range_f(
                        &format!("workload.arrival.points[{i}].rate_per_s"),
                        p.rate_per_s,
                        0.0,
                        bounds::RATE_PER_S,
                        " tasks/s",
                    );
                    if p.rate_per_s.is_finite() {
                        peak = peak.max(p.rate_per_s);
                    }
                }
                if !points.is_empty() && peak <= 0.0 {
                    c.problems
                        .push("workload.arrival.points: at least one rate must be > 0".into());
                }
                peak * d
            }
            Arrival::ClosedLoop {
                users,
                think_time_s,
            } => {
                let times: Vec<f64> = users.iter().map(|u| u.at_s).collect();
                c.schedule("workload.arrival.users", "step", &times);
                let mut peak = 0u32;
                for (i, u) in users.iter().take(bounds::SCHEDULE_POINTS).enumerate() {
                    c.range_u(
                        &format!("workload.arrival.users[{i}].users"),
                        u64::from(u.users),
                        0,
                        u64::from(bounds::USERS),
                    );
                    peak = peak.max(u.users);
                }
                think_time_s.validate(
                    "workload.arrival.think_time_s",
                    bounds::TIME_S,
                    &mut c.problems,
                );
                // A user sends at most one task per think time plus service time;
                // bound by think time alone, with a floor of 10 ms per task.
                let mean_think = think_time_s.mean().max(1e-2);
                f64::from(peak) * d / mean_think
            }
            Arrival::Trace { requests } => {
                let n = requests.len();
                if n == 0 || n > bounds::TRACE_REQUESTS {
                    c.problems.push(format!(
                        "workload.arrival.requests must have 1..={} requests, got {n}",
                        bounds::TRACE_REQUESTS
                    ));
                }
                let mut last = 0.0;
                for (i, r) in requests.iter().take(bounds::TRACE_REQUESTS).enumerate() {
                    let f = format!("workload.arrival.requests[{i}]");
                    c.range_f(&format!("{f}.at_s"), r.at_s, 0.0, bounds::DURATION_S, " s");
                    if r.at_s < last {
                        c.problems.push(format!(
                            "{f}.at_s must not be before the previous request's {last}, got {}",
                            r.at_s
                        ));
                    }
                    if r.at_s.is_finite() {
                        last = r.at_s;
                    }
                    c.range_u(
                        &format!("{f}.input_tokens"),
                        u64::from(r.input_tokens),
                        1,
                        u64::from(bounds::TOKENS),
                    );
                    c.range_u(
                        &format!("{f}.output_tokens"),
                        u64::from(r.output_tokens),
                        1,
                        u64::from(bounds::TOKENS),
                    );
                    if r.class as usize >= w.classes.len().max(1) {
                        c.problems.push(format!(
                            "{f}.class must be 0..{} (an index into workload.classes), got {}",
                            w.classes.len(),
                            r.class
                        ));
                    }
                    if c.problems.len() > 50 {
                        break;
                    }
                }
                n as f64
            }
        };
        if expected_tasks > bounds::EXPECTED_TASKS {
            c.problems.push(format!(
                "workload: the arrival process would send about {expected_tasks:.0} tasks in duration_s; at most {} are allowed — lower the rate, the users or the duration",
                bounds::EXPECTED_TASKS
            ));
        }

        let n = w.classes.len();
        if n == 0 || n > bounds::CLASSES {
            c.problems.push(format!(
                "workload.classes must have 1..={} classes, got {n}",
                bounds::CLASSES
            ));
        }
        let mut total_share = 0.0;
        for (i, k) in w.classes.iter().take(bounds::CLASSES).enumerate() {
            let f = format!("workload.classes[{i}]");
            if k.name.is_empty() || k.name.len() > 64 {
                c.problems.push(format!(
                    "{f}.name must be 1..=64 bytes, got {}",
                    k.name.len()
                ));
            }
            c.range_f(&format!("{f}.share"), k.share, 0.0, 1e6, "");
            if k.share.is_finite() {
                total_share += k.share;
            }
            let max_tok = f64::from(bounds::TOKENS);
            k.input_tokens
                .validate(&format!("{f}.input_tokens"), max_tok, &mut c.problems);
            k.output_tokens
                .validate(&format!("{f}.output_tokens"), max_tok, &mut c.problems);
            c.range_u(
                &format!("{f}.max_tokens"),
                u64::from(k.max_tokens),
                1,
                u64::from(bounds::TOKENS),
            );
            c.range_u(
                &format!("{f}.calls_per_task"),
                u64::from(k.calls_per_task),
                1,
                u64::from(bounds::CALLS_PER_TASK),
            );
        }
        if n > 0 && total_share <= 0.0 && !matches!(w.arrival, Arrival::Trace { .. }) {
            c.problems
                .push("workload.classes: at least one share must be > 0".into());
        }
    }

    fn validate_serving(&self, c: &mut Checker) {
        let s = &self.serving;
        c.range_u(
            "serving.replicas",
            u64::from(s.replicas),
            1,
            u64::from(bounds::REPLICAS),
        );
        if ![1, 2, 4, 8].contains(&s.gpus_per_replica) {
            c.problems.push(format!(
                "serving.gpus_per_replica must be 1, 2, 4 or 8, got {}",
                s.gpus_per_replica
            ));
        }
        c.range_f(
            "serving.gpu_memory_utilisation",
            s.gpu_memory_utilisation,
            0.1,
            0.99,
            "",
        );
        c.range_u(
            "serving.max_queue_per_replica",
            u64::from(s.max_queue_per_replica),
            1,
            u64::from(bounds::QUEUE),
        );
        if let Some(p) = s.usd_per_gpu_hour {
            c.range_f("serving.usd_per_gpu_hour", p, 0.0, 1000.0, " $/h");
        }
        if let Model::Custom(d) = s.model {
            let f = "serving.model.custom";
            c.range_u(&format!("{f}.layers"), u64::from(d.layers), 1, 1024);
            c.range_u(&format!("{f}.hidden"), u64::from(d.hidden), 1, 131_072);
            c.range_u(&format!("{f}.q_heads"), u64::from(d.q_heads), 1, 1024);
            c.range_u(
                &format!("{f}.kv_heads"),
                u64::from(d.kv_heads),
                1,
                u64::from(d.q_heads.max(1)),
            );
            c.range_u(&format!("{f}.head_dim"), u64::from(d.head_dim), 1, 1024);
            c.range_u(&format!("{f}.ffn"), u64::from(d.ffn), 1, 1_048_576);
            c.range_u(&format!("{f}.vocab"), u64::from(d.vocab), 1, 4_194_304);
        }
        if matches!(s.weights, Precision::Fp8) && s.gpu.spec().fp8_tflops.is_none() {
            // Weight-only FP8 still works (as on A100 via Marlin kernels) but at BF16 compute.
        }
        let max_input = self.max_input_tokens();
        match &s.batching {
            Batching::None => {}
            Batching::Static {
                max_batch,
                max_wait_ms,
            } => {
                c.range_u(
                    "serving.batching.max_batch",
                    u64::from(*max_batch),
                    1,
                    u64::from(bounds::BATCH),
                );
                c.range_f(
                    "serving.batching.max_wait_ms",
                    *max_wait_ms,
                    0.0,
                    3_600_000.0,
                    " ms",
                );
            }
            Batching::Continuous {
                max_num_seqs,
                max_num_batched_tokens,
            } => {
                c.iteration_batching(*max_num_seqs, *max_num_batched_tokens);
                if let Some(m) = max_input
                    && *max_num_batched_tokens < m
                {
                    c.problems.push(format!(
                        "serving.batching.max_num_batched_tokens must be ≥ the longest prompt ({m} tokens) without chunked prefill, got {max_num_batched_tokens}"
                    ));
                }
            }
            Batching::ChunkedPrefill {
                max_num_seqs,
                max_num_batched_tokens,
                chunk_tokens,
            } => {
                c.iteration_batching(*max_num_seqs, *max_num_batched_tokens);
                c.range_u(
                    "serving.batching.chunk_tokens",
                    u64::from(*chunk_tokens),
                    1,
                    u64::from(bounds::BATCHED_TOKENS),
                );
                if max_num_seqs > max_num_batched_tokens {
                    c.problems.push(format!(
                        "serving.batching.max_num_batched_tokens must be ≥ max_num_seqs ({max_num_seqs}) so every running sequence can decode in each pass, got {max_num_batched_tokens}"
                    ));
                }
            }
        }
        match &s.service {
            ServiceModel::Physics => {
                if c.problems.is_empty() {
                    let dep = self.deployment();
                    if let Err(e) = dep.kv_capacity_blocks() {
                        c.problems.push(format!("serving: {e}"));
                    }
                }
            }
            ServiceModel::Abstract { time_s, .. } => {
                time_s.validate("serving.service.time_s", bounds::TIME_S, &mut c.problems);
                if matches!(
                    s.batching,
                    Batching::Continuous { .. } | Batching::ChunkedPrefill { .. }
                ) {
                    c.problems.push(
                        "serving.service: the abstract service model works with batching none or static, got an iteration-level policy"
                            .into(),
                    );
                }
            }
        }
    }

    fn validate_api(&self, c: &mut Checker) {
        let Some(api) = &self.api else { return };
        let n = api.tiers.len();
        if n == 0 || n > 16 {
            c.problems
                .push(format!("api.tiers must have 1..=16 tiers, got {n}"));
        }
        for (i, t) in api.tiers.iter().take(16).enumerate() {
            let f = format!("api.tiers[{i}]");
            if t.name.is_empty() || t.name.len() > 64 || t.name == SELF_HOSTED {
                c.problems.push(format!(
                    "{f}.name must be 1..=64 bytes and not \"{SELF_HOSTED}\", got {:?}",
                    t.name
                ));
            }
            if api.tiers[..i].iter().any(|o| o.name == t.name) {
                c.problems
                    .push(format!("{f}.name {:?} is used by an earlier tier", t.name));
            }
            t.ttft_s
                .validate(&format!("{f}.ttft_s"), 3600.0, &mut c.problems);
            t.output_tokens_per_s.validate(
                &format!("{f}.output_tokens_per_s"),
                1e6,
                &mut c.problems,
            );
            if t.output_tokens_per_s.mean() <= 0.0
                || t.output_tokens_per_s.upper_bound() == Some(0.0)
            {
                c.problems
                    .push(format!("{f}.output_tokens_per_s must be > 0 on average"));
            }
            c.positive_f(
                &format!("{f}.input_tokens_per_s"),
                t.input_tokens_per_s,
                1e9,
                " tokens/s",
            );
            c.range_f(
                &format!("{f}.usd_per_mtok_input"),
                t.usd_per_mtok_input,
                0.0,
                10_000.0,
                " $",
            );
            c.range_f(
                &format!("{f}.usd_per_mtok_output"),
                t.usd_per_mtok_output,
                0.0,
                10_000.0,
                " $",
            );
            if let Some(fast) = &t.fast {
                fast.output_tokens_per_s.validate(
                    &format!("{f}.fast.output_tokens_per_s"),
                    1e6,
                    &mut c.problems,
                );
                c.range_f(
                    &format!("{f}.fast.price_multiplier"),
                    fast.price_multiplier,
                    1.0,
                    100.0,
                    "",
                );
            }
            let l = &t.limits;
            if l.style != LimitStyle::Azure {
                c.range_u(&format!("{f}.limits.rpm"), l.rpm, 1, 1_000_000_000);
            }
            c.range_u(&format!("{f}.limits.tpm"), l.tpm, 1, 100_000_000_000);
            if l.style == LimitStyle::Anthropic {
                c.range_u(
                    &format!("{f}.limits.output_tpm"),
                    l.output_tpm,
                    1,
                    100_000_000_000,
                );
            }
            if l.style == LimitStyle::Azure && l.tpm * 6 / 1000 < 6 {
                c.problems.push(format!(
                    "{f}.limits.tpm must be ≥ 1000 for Azure (6 RPM per 1,000 TPM, enforced per 10 s), got {}",
                    l.tpm
                ));
            }
        }
        c.range_u(
            "api.rate_limit_multiplier",
            u64::from(api.rate_limit_multiplier),
            1,
            1000,
        );
        if let Some(cap) = api.concurrency_cap {
            c.range_u("api.concurrency_cap", u64::from(cap), 1, 10_000_000);
        }
        match &api.client {
            ClientPolicy::FailFast => {}
            ClientPolicy::SdkRetries { max_retries } => {
                c.range_u("api.client.max_retries", u64::from(*max_retries), 0, 100)
            }
            ClientPolicy::FullJitter {
                max_retries,
                base_s,
                cap_s,
            } => {
                c.range_u("api.client.max_retries", u64::from(*max_retries), 0, 100);
                c.positive_f("api.client.base_s", *base_s, 3600.0, " s");
                c.positive_f("api.client.cap_s", *cap_s, 3600.0, " s");
            }
            ClientPolicy::Queue {
                max_queue,
                max_wait_s,
            } => {
                c.range_u(
                    "api.client.max_queue",
                    u64::from(*max_queue),
                    1,
                    u64::from(bounds::QUEUE),
                );
                c.positive_f("api.client.max_wait_s", *max_wait_s, bounds::TIME_S, " s");
            }
        }
        let backend_ok = |b: &str| b == SELF_HOSTED || api.tiers.iter().any(|t| t.name == b);
        if !backend_ok(&api.default_backend) {
            c.problems.push(format!(
                "api.default_backend must be \"{SELF_HOSTED}\" or a tier name, got {:?}",
                api.default_backend
            ));
        }
        if api.routes.len() > bounds::CLASSES {
            c.problems.push(format!(
                "api.routes must have at most {} routes, got {}",
                bounds::CLASSES,
                api.routes.len()
            ));
        }
        for (i, r) in api.routes.iter().take(bounds::CLASSES).enumerate() {
            let f = format!("api.routes[{i}]");
            if !self.workload.classes.iter().any(|k| k.name == r.class) {
                c.problems.push(format!(
                    "{f}.class {:?} is not a class of workload.classes",
                    r.class
                ));
            }
            if !backend_ok(&r.backend) {
                c.problems.push(format!(
                    "{f}.backend must be \"{SELF_HOSTED}\" or a tier name, got {:?}",
                    r.backend
                ));
            }
            if r.fast
                && !api
                    .tiers
                    .iter()
                    .any(|t| t.name == r.backend && t.fast.is_some())
            {
                c.problems.push(format!(
                    "{f}.fast needs a tier with a fast variant, and {:?} has none",
                    r.backend
                ));
            }
        }
        if !c.problems.is_empty() {
            return;
        }
        // A request that can never fit the limits would be retried forever: refuse
        // the scenario when the class's largest request is known to exceed them.
        for (i, k) in self.workload.classes.iter().enumerate() {
            let Some(tier) = self.backend_of(&k.name).and_then(|(t, _)| api.tiers.get(t)) else {
                continue;
            };
            let Some(input) = k.input_tokens.upper_bound() else {
                continue;
            };
            let limiter = Limiter::new(&tier.limits, api.rate_limit_multiplier);
            if let Err(e) = limiter.fits(libm::round(input) as u64, u64::from(k.max_tokens)) {
                c.problems.push(format!(
                    "workload.classes[{i}] ({}): its largest request ({} input + max_tokens {}) can never be admitted by tier {:?}: {e}",
                    k.name,
                    libm::round(input),
                    k.max_tokens,
                    tier.name
                ));
            }
        }
    }

    /// Where a class is served: `Some((tier index, fast))` for an API tier, `None`
    /// for the self-hosted fleet.
    pub fn backend_of(&self, class: &str) -> Option<(usize, bool)> {
        let api = self.api.as_ref()?;
        let (backend, fast) = api
            .routes
            .iter()
            .find(|r| r.class == class)
            .map_or((api.default_backend.as_str(), false), |r| {
                (r.backend.as_str(), r.fast)
            });
        api.tiers
            .iter()
            .position(|t| t.name == backend)
            .map(|i| (i, fast))
    }

    /// True when some class is served by the self-hosted fleet (which is then billed).
    pub fn uses_fleet(&self) -> bool {
        self.workload
            .classes
            .iter()
            .any(|k| self.backend_of(&k.name).is_none())
    }

    /// The workload's mean shape: generated tokens per task (each call capped at
    /// its `max_tokens`, agent chains counted whole) and the mean context of a
    /// decoding sequence (prompt + half the answer). From the trace when the
    /// arrivals replay one, else from the class mix.
    pub fn mean_tokens(&self) -> (f64, f64) {
        let w = &self.workload;
        if let Arrival::Trace { requests } = &w.arrival {
            let n = requests.len().max(1) as f64;
            let out: f64 = requests.iter().map(|r| f64::from(r.output_tokens)).sum();
            let input: f64 = requests.iter().map(|r| f64::from(r.input_tokens)).sum();
            return (out / n, (input + out / 2.0) / n);
        }
        let total = w.classes.iter().map(|k| k.share).sum::<f64>().max(1e-12);
        let (mut out, mut ctx) = (0.0, 0.0);
        for k in &w.classes {
            let o = k.output_tokens.mean().min(f64::from(k.max_tokens));
            out += k.share * o * f64::from(k.calls_per_task);
            ctx += k.share * (k.input_tokens.mean() + o / 2.0);
        }
        (out / total, ctx / total)
    }

    /// The longest prompt the workload can send, if bounded.
    pub fn max_input_tokens(&self) -> Option<u32> {
        match &self.workload.arrival {
            Arrival::Trace { requests } => requests.iter().map(|r| r.input_tokens).max(),
            _ => self
                .workload
                .classes
                .iter()
                .map(|k| {
                    k.input_tokens
                        .upper_bound()
                        .map(|u| libm::round(u).clamp(1.0, f64::from(bounds::TOKENS)) as u32)
                })
                .try_fold(0u32, |m, u| u.map(|u| m.max(u))),
        }
    }

    /// The replica's hardware, model and memory settings.
    pub fn deployment(&self) -> Deployment {
        let s = &self.serving;
        let max_input = self.max_input_tokens().unwrap_or(8192);
        Deployment {
            gpu: s.gpu,
            tp: s.gpus_per_replica,
            model: s.model,
            weights: s.weights,
            kv: s.kv_cache,
            memory_utilisation: s.gpu_memory_utilisation,
            max_batched_tokens: s.batching.max_batched_tokens(max_input).min(65_536),
            max_seqs: s.batching.max_seqs(),
        }
    }

    /// Price of one GPU-hour in this scenario.
    pub fn usd_per_gpu_hour(&self) -> f64 {
        self.serving
            .usd_per_gpu_hour
            .unwrap_or(self.serving.gpu.spec().usd_per_hour)
    }

    /// Parse a scenario from JSON and validate it.
    pub fn from_json(json: &str) -> Result<Scenario, ScenarioError> {
        let s: Scenario = serde_json::from_str(json).map_err(|e| ScenarioError {
            problems: vec![format!("not a valid scenario document: {e}")],
        })?;
        s.validate()?;
        Ok(s)
    }
}
