//! What a pool's replicas do, fixed at the start: how passes are formed
//! (the batching policy) and what a pass costs (the service model).

use super::secs_to_ns;
use crate::dist::Sampler;
use crate::physics::{StepModel, Timing};
use crate::scenario::{Batching, ServiceModel, Serving, ValidScenario};

/// How passes are formed.
pub(super) enum Policy {
    /// Continuous batching; `chunk` is `None` without chunked prefill. Batching
    /// "none" is this with one sequence and no token budget.
    Iteration {
        max_seqs: u64,
        budget: u64,
        chunk: Option<u64>,
    },
    /// Static batches (or abstract bulk service).
    Static { max_batch: u64, max_wait_ns: u64 },
}

impl Policy {
    pub(super) fn new(batching: &Batching) -> Policy {
        let policy = Self::of(batching);
        debug_assert!(
            match policy {
                Policy::Iteration {
                    max_seqs,
                    budget,
                    chunk,
                } => max_seqs >= 1 && budget >= 1 && chunk.is_none_or(|c| c >= 1),
                Policy::Static { max_batch, .. } => max_batch >= 1,
            },
            "validation let through a policy that forms no pass"
        );
        policy
    }

    fn of(batching: &Batching) -> Policy {
        match *batching {
            Batching::None => Policy::Iteration {
                max_seqs: 1,
                budget: u64::MAX,
                chunk: None,
            },
            Batching::Static {
                max_batch,
                max_wait_ms,
            } => Policy::Static {
                max_batch: u64::from(max_batch),
                max_wait_ns: secs_to_ns(max_wait_ms / 1000.0),
            },
            Batching::Continuous {
                max_num_seqs,
                max_num_batched_tokens,
            } => Policy::Iteration {
                max_seqs: u64::from(max_num_seqs),
                budget: u64::from(max_num_batched_tokens),
                chunk: None,
            },
            Batching::ChunkedPrefill {
                max_num_seqs,
                max_num_batched_tokens,
                chunk_tokens,
            } => Policy::Iteration {
                max_seqs: u64::from(max_num_seqs),
                budget: u64::from(max_num_batched_tokens),
                chunk: Some(u64::from(chunk_tokens)),
            },
        }
    }
}

/// What a pass costs.
pub(super) enum Service {
    /// Forward passes timed by the GPU physics (boxed: it is large, and read
    /// once per pass through the pointer).
    Physics(Box<StepModel>),
    /// The textbook server: a random time per dispatch, whatever its size.
    Abstract {
        time: Sampler,
        join_in_progress: bool,
    },
}

impl Service {
    /// The service model and one replica's KV capacity in blocks (unbounded for
    /// the abstract server).
    pub(super) fn new(scenario: &ValidScenario, s: &Serving, timing: Timing) -> (Service, u64) {
        match &s.service {
            ServiceModel::Physics => {
                let deployment = scenario.deployment_for(s);
                // Validation refused every deployment with no room for one block.
                let blocks = deployment.kv_capacity_blocks().unwrap_or(1);
                (
                    Service::Physics(Box::new(deployment.step_model_for(timing))),
                    blocks,
                )
            }
            ServiceModel::Abstract {
                time_s,
                join_in_progress,
            } => (
                Service::Abstract {
                    time: time_s.sampler(),
                    join_in_progress: *join_in_progress,
                },
                u64::MAX / 4,
            ),
        }
    }
}
