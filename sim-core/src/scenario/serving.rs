//! The self-hosted side of a scenario, one pool of it: the GPU, the model,
//! the serving software, the replicas, how they batch, schedule and route.

use super::{Autoscale, Disaggregation, Speculative};
use crate::dist::Dist;
use crate::physics::{Gpu, Model, Precision, ServingSoftware};
use serde::{Deserialize, Serialize};

/// The self-hosted serving fleet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Serving {
    /// The pool's name in routing rules and reports; needed for every pool
    /// but the first, which is `"self-hosted"` when unnamed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Identical replicas behind the router (with `autoscale`, those serving
    /// at the start).
    pub replicas: u32,
    /// Replicas added and removed as the load moves; None keeps `replicas`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscale: Option<Autoscale>,
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
    /// Electricity price, $/kWh, for the energy the GPUs draw (absent: 0,
    /// the GPU-hour price covering it, as a cloud's does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usd_per_kwh: Option<f64>,
    /// What a forward pass costs: the GPU physics, or a textbook stand-in.
    #[serde(default)]
    pub service: ServiceModel,
    /// The serving software: its overheads, kernel efficiencies and memory
    /// rules shape every step. A scenario that names none means TensorRT-LLM's
    /// constants (every scenario written before profiles existed).
    #[serde(default)]
    pub software: ServingSoftware,
    /// Automatic prefix caching; None follows the software's default (on for
    /// vLLM, off for TensorRT-LLM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_caching: Option<bool>,
    /// Async scheduling (the scheduler forms each pass while the one before
    /// it runs); None follows the software's default (on for vLLM, which
    /// `--no-async-scheduling` turns off). Only profiles timed by serving
    /// parts (vLLM, a fitted profile) model it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub async_scheduling: Option<bool>,
    /// Which waiting request is admitted next, and which running one is
    /// preempted when KV runs out; None is first come, first served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduling_policy: Option<SchedulingPolicy>,
    /// For a mixture-of-experts model on several GPUs: spread whole experts
    /// across them (expert parallelism) instead of splitting every expert.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expert_parallel: bool,
    /// A profile of the user's own, fitted to their measured run (`tlab
    /// calibrate --measured DIR --fit` writes it; the CLI reads a file named
    /// here): it times every pass and sizes the KV cache in place of the
    /// software's constants, and says where it was validated.
    #[serde(default, rename = "profile", skip_serializing_if = "Option::is_none")]
    pub fitted_profile: Option<Box<crate::physics::FittedProfile>>,
    /// Every forward pass's time multiplied by this (absent: 1): an engine
    /// slower or faster than its profile. The range runs scale by the
    /// profile's measured error in the same way (`crate::ranges`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_time_scale: Option<f64>,
    /// Every pass that carries prompt tokens multiplied by this as well
    /// (absent: 1): a profile whose time to first token errs apart from its
    /// decode. The range runs set it where the profile's TTFT error was
    /// measured (`crate::ranges`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_time_scale: Option<f64>,
    /// Prefill only, and hand each prompt's KV cache to another pool, which
    /// decodes (prefill/decode disaggregation); None serves both phases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disaggregation: Option<Disaggregation>,
    /// Speculative decoding: a proposer drafts tokens that each decode step
    /// verifies; None decodes one token a step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speculative: Option<Speculative>,
}

/// A replica's order of admission (vLLM's `--scheduling-policy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchedulingPolicy {
    /// First come, first served; a preempted sequence goes back to the front.
    #[default]
    Fcfs,
    /// By the class's `priority` (lower first), then first come, first
    /// served; when KV runs out the lowest-priority, newest sequence is
    /// preempted.
    Priority,
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
    /// Cache-aware, as vLLM's router and SGLang's gateway do it by default:
    /// the replica whose prefix cache holds the longest start of the prompt
    /// when that is at least 30 % of it, else the least outstanding; and the
    /// least outstanding whenever the busiest replica has more than 64
    /// requests over the idlest and more than 1.5 times as many. Without
    /// prefix caching, least outstanding.
    CacheAware,
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
    /// The policy's key, as `batching.policy` and the curve name it: none,
    /// static, continuous, chunked_prefill.
    pub fn policy_key(&self) -> &'static str {
        match self {
            Batching::None => "none",
            Batching::Static { .. } => "static",
            Batching::Continuous { .. } => "continuous",
            Batching::ChunkedPrefill { .. } => "chunked_prefill",
        }
    }

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
