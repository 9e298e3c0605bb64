//! Upper bounds on scenario sizes; beyond them a run could not finish in a browser tab.

/// Longest arrival window, s (one week).
pub const DURATION_S: f64 = 604_800.0;
/// Highest arrival rate, tasks/s.
pub const RATE_PER_S: f64 = 100_000.0;
/// Most tasks an arrival process may be expected to produce.
pub const EXPECTED_TASKS: f64 = 20_000_000.0;
/// Most requests (agent-chain calls count one each) a run may be expected to
/// send; at about 2 µs each natively, a minute's work.
pub const EXPECTED_REQUESTS: f64 = 25_000_000.0;
/// Most requests a run creates: it stops there with a warning (the expected
/// count is an estimate; this is the hard stop).
pub const REQUESTS: u64 = 30_000_000;
/// Most requests in flight at once (waiting anywhere or running); arrivals
/// beyond it are refused and counted. About 150 bytes each: ≈ 300 MB.
pub const IN_FLIGHT: usize = 2_000_000;
/// Most closed-loop users.
pub const USERS: u32 = 1_000_000;
/// Most points in a rate or user schedule.
pub const SCHEDULE_POINTS: usize = 10_000;
/// Most requests in a trace held in memory (a link, a scenario file, the
/// page's import, a file out of arrival order).
pub const TRACE_REQUESTS: usize = 5_000_000;
/// Most requests in a trace streamed from its file during the run (the
/// CLI's replay of a file in arrival order): memory then holds the requests
/// in flight, not the trace, and the run's own bounds apply.
pub const STREAMED_TRACE_REQUESTS: u64 = 20_000_000;
/// Most tokens one prefix-block hash of a trace covers.
pub const PREFIX_BLOCK_TOKENS: u32 = 65_536;
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
/// Longest simulated time a run may be given, s (ten weeks: a week's
/// arrivals and room to drain them).
pub const SIM_TIME_S: f64 = 10.0 * DURATION_S;
/// Most events in a run.
pub const EVENTS: u64 = 300_000_000;
/// Prompt blocks the prefix cache may be expected to look up, hold and let
/// go of in one run (≈ 100 ns each natively: about 40 s at the bound).
pub const PREFIX_BLOCKS: f64 = 400_000_000.0;
/// KV blocks the fleet's prefix caches may hold at once (≈ 40 bytes of
/// simulator memory each: about 1 GB at the bound).
pub const CACHED_BLOCKS: f64 = 24_000_000.0;
/// A class's scheduling priority (vLLM takes any integer; lower first).
pub const PRIORITY: u32 = 1_000;
/// Lowest and highest `serving.step_time_scale`: a quarter to four times
/// the profile, wider than any error measured (`docs/ranges.md`), narrow
/// enough that a typo (0.01, 100) is refused rather than run.
pub const STEP_TIME_SCALE: (f64, f64) = (0.25, 4.0);
