//! What a run records for the teaching timeline and tests, as data: the
//! first forward passes and arrivals (`Simulation::record_trace`). The page
//! and the charts read these without importing the engine.

use serde::{Deserialize, Serialize};

/// A forward pass, as recorded for the teaching timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassRecord {
    /// Replica index.
    pub replica: u32,
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
    /// Prompt tokens processed.
    pub prefill_tokens: u64,
    /// Sequences whose prompt (or a chunk of it) ran in the pass.
    pub prefill_seqs: u32,
    /// Sequences that generated a token.
    pub decode_seqs: u32,
    /// Requests waiting for admission when the pass started.
    pub waiting: u32,
}

/// An arrival, as recorded for tests and the teaching timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrivalRecord {
    /// Time, ns.
    pub at_ns: u64,
    /// Request class.
    pub class: u16,
    /// Prompt tokens.
    pub input_tokens: u32,
    /// Tokens to generate.
    pub output_tokens: u32,
}

/// Bounded recording of the first passes and arrivals of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceLog {
    /// Largest number of entries kept in each list.
    pub capacity: usize,
    /// The first forward passes.
    pub passes: Vec<PassRecord>,
    /// The first arrivals.
    pub arrivals: Vec<ArrivalRecord>,
}
