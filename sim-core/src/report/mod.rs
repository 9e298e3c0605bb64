//! The report of a run: serialisable, versioned, documented field by field.
//!
//! Times are in milliseconds and rates per second unless a field's name says
//! otherwise; a statistic over no samples is `null` in JSON.

use serde::{Deserialize, Serialize};

mod features;
pub use features::{
    ApiReport, DisaggregationReport, FallbackStep, PoolReport, SpeculativeReport, TierReport,
};

/// The report format this build writes.
pub const REPORT_VERSION: u32 = 1;

/// Everything a run measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Format version ([`REPORT_VERSION`]).
    pub version: u32,
    /// Problems worth a user's attention (a limit was hit, nothing completed…).
    pub warnings: Vec<String>,
    /// False when a limit stopped the run before all work drained.
    pub complete: bool,
    /// When a limit stopped the run before its arrival window ended: the
    /// share of the window's requests that never arrived (0–1; absent when
    /// every arrival was simulated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals_left_out: Option<f64>,
    /// The measured window, seconds: from 0 to the end of the arrival window or
    /// to when the last work in flight ended, whichever is later (idle timers,
    /// such as closed-loop users thinking after the window, never extend it);
    /// for a run stopped by a limit, to where it stopped. Rates, utilisation and
    /// cost are over this window.
    pub sim_time_s: f64,
    /// Events processed.
    pub events: u64,
    /// Request counts (one agent-chain call is one request).
    pub requests: Counts,
    /// Statistics over every request.
    pub overall: ClassReport,
    /// Statistics per request class, in scenario order.
    pub per_class: Vec<ClassReport>,
    /// Rates over the whole run.
    pub throughput: Throughput,
    /// How busy the fleet was.
    pub utilisation: Utilisation,
    /// Windowed time series (at most [`crate::metrics::MAX_WINDOWS`] windows).
    pub series: Series,
    /// What the run cost.
    pub cost: Cost,
    /// The energy the self-hosted GPUs drew (GPU physics on GPUs with power
    /// figures only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<Energy>,
    /// How close the run came to what the hardware could do (self-hosted physics only).
    pub physical_limit: Option<PhysicalLimit>,
    /// Hosted API traffic, when the scenario uses any.
    pub api: Option<ApiReport>,
    /// Latency distributions over all requests, as quantiles.
    pub distribution: Distribution,
    /// The service-level targets goodput was measured against.
    #[serde(default)]
    pub slo: crate::scenario::Slo,
    /// Per load stage (arrival stages only): the requests that arrived in it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<StageReport>,
    /// Per self-hosted pool, when the scenario has several (with one, the
    /// totals above are the pool's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pools: Vec<PoolReport>,
    /// KV caches moved from prefill pools to decode pools, when some pool
    /// hands off (prefill/decode disaggregation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "handoff")]
    pub disaggregation: Option<DisaggregationReport>,
    /// Speculative decoding, when some pool speculates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speculative: Option<SpeculativeReport>,
}

/// The requests that arrived during one load stage.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageReport {
    /// Stage start, seconds.
    pub start_s: f64,
    /// Stage end, seconds (the arrival window's end for the last stage).
    pub end_s: f64,
    /// Its arrival rate, tasks/s.
    pub rate_per_s: f64,
    /// Requests that arrived in the stage and completed.
    pub completed: u64,
    /// Their time to first token.
    pub ttft: LatencyStats,
    /// Their time per output token after the first.
    pub tpot: LatencyStats,
    /// Their end-to-end latency.
    pub e2e: LatencyStats,
    /// Their time to the first visible token (= `ttft` without reasoning).
    #[serde(default)]
    pub first_visible: LatencyStats,
    /// Output tokens of the stage's requests per second of the stage.
    pub output_tokens_per_s: f64,
}

/// Latency distributions: the value at each quantile in `quantiles`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Distribution {
    /// Quantiles, ascending in (0, 1).
    pub quantiles: Vec<f64>,
    /// TTFT at each quantile, ms (empty when nothing completed).
    pub ttft_ms: Vec<f64>,
    /// End-to-end latency at each quantile, ms (empty when nothing completed).
    pub e2e_ms: Vec<f64>,
}

/// The quantiles a [`Distribution`] reports: every 2 % plus the far tail.
pub fn distribution_quantiles() -> Vec<f64> {
    let mut q: Vec<f64> = (1..50).map(|i| f64::from(i) / 50.0).collect();
    q.extend([0.99, 0.995, 0.999]);
    q
}

/// The roofline bound on output tokens/s for this configuration: decode passes
/// only, every datasheet peak reached, no overheads. No real server reaches it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhysicalLimit {
    /// Sequences per pass assumed: the configured batch size, capped by how many
    /// sequences of `context_tokens` the KV cache holds.
    pub batch: u32,
    /// The shortest context a decoding sequence of this workload can have (its
    /// shortest prompt and one token): the bound assumes every sequence has it.
    pub context_tokens: u32,
    /// The bound across all replicas, output tokens/s: decode steps at the
    /// datasheet peak with no overheads. No run of this configuration passes it.
    pub output_tokens_per_s: f64,
    /// Achieved output tokens/s as a fraction of the bound, in [0, 1].
    pub achieved_fraction: f64,
}

/// Request accounting: `arrived = completed + rejected + failed + in_flight`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Requests created (task arrivals and later calls of agent chains).
    pub arrived: u64,
    /// Requests that produced all their tokens.
    pub completed: u64,
    /// Requests refused: a full queue, a client queue timeout, or a prompt larger
    /// than the KV cache.
    pub rejected: u64,
    /// Requests that reached the user as an error (an API 429 not retried).
    pub failed: u64,
    /// Requests their client gave up on (the class's `timeout_s`).
    #[serde(default)]
    pub timed_out: u64,
    /// Requests waiting or running when the run stopped.
    pub in_flight: u64,
    /// Tasks (user-visible units: a single request or a whole agent chain) completed.
    pub tasks_completed: u64,
}

impl Counts {
    /// Requests that got no answer: failed (an error reached the user),
    /// refused (a full queue, a prompt too large) or timed out (the client
    /// gave up). The one definition of "errors": the page's cards and notes,
    /// the CLI summary, sweeps' CSV and the planner's verdicts all use it.
    pub fn unanswered(&self) -> u64 {
        self.failed + self.rejected + self.timed_out
    }

    /// [`Self::unanswered`] as a share of the requests that arrived (0 when
    /// none did).
    pub fn error_fraction(&self) -> f64 {
        self.unanswered() as f64 / self.arrived.max(1) as f64
    }
}

/// Summary statistics of a latency, milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyStats {
    /// Samples.
    pub count: u64,
    /// Exact mean.
    pub mean_ms: Option<f64>,
    /// Median.
    pub p50_ms: Option<f64>,
    /// 90th percentile.
    pub p90_ms: Option<f64>,
    /// 95th percentile.
    pub p95_ms: Option<f64>,
    /// 99th percentile.
    pub p99_ms: Option<f64>,
    /// Exact maximum.
    pub max_ms: Option<f64>,
}

/// Statistics of one request class (or of all of them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassReport {
    /// Class name (`"all"` for the overall report).
    pub name: String,
    /// Requests completed.
    pub completed: u64,
    /// Requests rejected.
    pub rejected: u64,
    /// Requests failed (API errors).
    pub failed: u64,
    /// Requests their client gave up on.
    #[serde(default)]
    pub timed_out: u64,
    /// API spend on this class.
    pub api_usd: f64,
    /// API spend on this class per month (730 h) at this load.
    pub api_usd_per_month: f64,
    /// Time to first token: arrival to the first generated token (a
    /// reasoning model's first hidden one).
    pub ttft: LatencyStats,
    /// Time to the first visible token, what the user waits for: TTFT plus
    /// the thinking (equal to `ttft` without reasoning).
    #[serde(default)]
    pub first_visible: LatencyStats,
    /// Thinking time of reasoning requests: first token to first visible
    /// token, the request's reasoning tokens × its time per output token
    /// (empty without reasoning).
    #[serde(default)]
    pub thinking: LatencyStats,
    /// Time per output token after the first: (e2e − ttft) / (output tokens − 1),
    /// over requests with at least two output tokens.
    pub tpot: LatencyStats,
    /// End-to-end latency of one request: arrival to last token.
    pub e2e: LatencyStats,
    /// Queue wait: arrival to first admission into a batch.
    pub queue_wait: LatencyStats,
    /// Latency of whole tasks (agent chains: first call's arrival to last call's
    /// end); equal to `e2e` when each task is one call.
    pub task_latency: LatencyStats,
    /// Share of completed requests that met the SLO (TTFT and TPOT limits).
    pub slo_met_fraction: Option<f64>,
    /// Completed requests whose first visible token came after the TTFT target.
    #[serde(default)]
    pub ttft_target_missed: u64,
    /// Completed requests whose time per output token exceeded the TPOT target.
    #[serde(default)]
    pub tpot_target_missed: u64,
}

impl ClassReport {
    /// The shares of completed requests that missed the TTFT target and
    /// the TPOT target (0 with none completed): what goodput lost to each.
    pub fn missed_shares(&self) -> (f64, f64) {
        let n = self.completed.max(1) as f64;
        (
            self.ttft_target_missed as f64 / n,
            self.tpot_target_missed as f64 / n,
        )
    }
}

/// Rates over the whole simulated time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    /// Prompt tokens of completed requests per second.
    pub input_tokens_per_s: f64,
    /// Generated tokens of completed requests per second.
    pub output_tokens_per_s: f64,
    /// Completed requests per second.
    pub requests_per_s: f64,
    /// Completed requests that met the SLO, per second.
    pub goodput_requests_per_s: f64,
    /// Share of arrived requests that completed within the SLO (rejections count as misses).
    pub goodput_fraction: Option<f64>,
}

/// How busy the hardware was.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Utilisation {
    /// Fraction of replica-time spent in forward passes.
    pub gpu_busy_fraction: f64,
    /// Mean sequences per forward pass, weighted by pass duration.
    pub mean_batch_size: f64,
    /// Mean fraction of KV-cache blocks in use, over busy time.
    pub kv_use_mean: f64,
    /// Highest fraction of KV-cache blocks in use.
    pub kv_use_peak: f64,
    /// Most sequences in one forward pass (or batch).
    #[serde(default)]
    pub peak_batch: u64,
    /// Sequences evicted from the KV cache and recomputed later.
    pub preemptions: u64,
    /// Forward passes run, all replicas.
    pub forward_passes: u64,
    /// Achieved FLOP/s over busy time as a fraction of peak (model FLOPs utilisation).
    pub mfu: f64,
    /// Achieved HBM bytes/s over busy time as a fraction of peak.
    pub bandwidth_utilisation: f64,
    /// KV-cache capacity of one replica, tokens.
    pub kv_capacity_tokens: u64,
    /// Prompt tokens served from the prefix cache, as a fraction of the prompt
    /// tokens of admitted requests (0 without prefix caching).
    #[serde(default)]
    pub prefix_cache_hit_rate: f64,
}

/// Windowed time series; every vector has one entry per window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Width of each window, seconds.
    pub window_s: f64,
    /// End time of each window, seconds.
    pub t_s: Vec<f64>,
    /// Requests arriving per second.
    pub arrivals_per_s: Vec<f64>,
    /// Mean requests waiting for admission.
    pub queue_depth: Vec<f64>,
    /// Mean requests waiting or running.
    pub in_flight: Vec<f64>,
    /// Mean sequences per forward pass (over busy time).
    pub batch_size: Vec<f64>,
    /// Mean fraction of KV-cache blocks in use.
    pub kv_use: Vec<f64>,
    /// Tokens generated per second, all replicas.
    pub output_tokens_per_s: Vec<f64>,
    /// Prompt tokens processed per second (prefill, or sent to an API).
    pub input_tokens_per_s: Vec<f64>,
    /// Median TTFT of requests completing in the window, ms.
    pub ttft_p50_ms: Vec<Option<f64>>,
    /// 99th-percentile TTFT of requests completing in the window, ms.
    pub ttft_p99_ms: Vec<Option<f64>>,
    /// Median end-to-end latency of requests completing in the window, ms.
    pub e2e_p50_ms: Vec<Option<f64>>,
    /// 99th-percentile end-to-end latency of requests completing in the window, ms.
    pub e2e_p99_ms: Vec<Option<f64>>,
    /// Median time to the first visible token in the window, ms (empty
    /// unless some class reasons before answering).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub first_visible_p50_ms: Vec<Option<f64>>,
    /// Its 99th percentile, ms (empty unless some class reasons).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub first_visible_p99_ms: Vec<Option<f64>>,
    /// API 429s per second (empty without an API).
    pub throttled_per_s: Vec<f64>,
    /// Client retries scheduled per second (empty without an API).
    pub retries_per_s: Vec<f64>,
    /// API tokens admitted per minute (empty without an API).
    pub api_tokens_per_min: Vec<f64>,
    /// Mean fraction of the token limit available at attempts (empty without an API).
    pub api_token_fill: Vec<Option<f64>>,
    /// Mean replicas up (starting, serving or draining) in every pool
    /// (empty unless some pool autoscales).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas_up: Vec<f64>,
}

impl Series {
    /// The windows that end by `t_s` seconds (for replaying a run up to a time).
    pub fn until(&self, t_s: f64) -> Series {
        let n = self.t_s.partition_point(|&t| t <= t_s + 1e-9);
        let cut = |v: &Vec<f64>| v[..n.min(v.len())].to_vec();
        let cut_opt = |v: &Vec<Option<f64>>| v[..n.min(v.len())].to_vec();
        Series {
            window_s: self.window_s,
            t_s: cut(&self.t_s),
            arrivals_per_s: cut(&self.arrivals_per_s),
            queue_depth: cut(&self.queue_depth),
            in_flight: cut(&self.in_flight),
            batch_size: cut(&self.batch_size),
            kv_use: cut(&self.kv_use),
            output_tokens_per_s: cut(&self.output_tokens_per_s),
            input_tokens_per_s: cut(&self.input_tokens_per_s),
            ttft_p50_ms: cut_opt(&self.ttft_p50_ms),
            ttft_p99_ms: cut_opt(&self.ttft_p99_ms),
            e2e_p50_ms: cut_opt(&self.e2e_p50_ms),
            e2e_p99_ms: cut_opt(&self.e2e_p99_ms),
            first_visible_p50_ms: cut_opt(&self.first_visible_p50_ms),
            first_visible_p99_ms: cut_opt(&self.first_visible_p99_ms),
            throttled_per_s: cut(&self.throttled_per_s),
            retries_per_s: cut(&self.retries_per_s),
            api_tokens_per_min: cut(&self.api_tokens_per_min),
            api_token_fill: cut_opt(&self.api_token_fill),
            replicas_up: cut(&self.replicas_up),
        }
    }
}

impl Report {
    /// The report with its time series cut at `t_s` seconds (the summary
    /// numbers stay those of the whole run).
    pub fn until(&self, t_s: f64) -> Report {
        Report {
            series: self.series.until(t_s),
            ..self.clone()
        }
    }
}

/// Cost of the self-hosted fleet: it is paid by the hour, busy or idle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    /// GPUs in the fleet (replicas × GPUs per replica).
    pub gpus: u32,
    /// Price of one GPU-hour.
    pub usd_per_gpu_hour: f64,
    /// Self-hosted fleet cost over the simulated time (0 when no class uses it).
    pub fleet_usd: f64,
    /// Hosted API spend over the simulated time.
    pub api_usd: f64,
    /// Fleet and API together.
    pub total_usd: f64,
    /// Dollars per million generated tokens.
    pub usd_per_mtok_output: Option<f64>,
    /// Dollars per million tokens, prompt and generated together.
    pub usd_per_mtok_total: Option<f64>,
    /// Dollars per completed request.
    pub usd_per_request: Option<f64>,
    /// Fleet for a month (730 hours) at this size, plus API spend at this load.
    pub usd_per_month: f64,
    /// Electricity the fleet drew over the simulated time, at the scenario's
    /// $/kWh (0 unless it states one); in `total_usd` and the rates above.
    #[serde(default)]
    pub electricity_usd: f64,
}

/// The energy the self-hosted GPUs drew: idle power while up, more while
/// running passes, by their work ([`crate::physics::Power`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Energy {
    /// Over the simulated time, kWh.
    pub kwh: f64,
    /// Mean power of a GPU up, busy or idle, W.
    pub mean_watts_per_gpu: f64,
    /// Joules per generated token (None when none was generated).
    pub joules_per_output_token: Option<f64>,
    /// Its electricity cost over the simulated time, $.
    pub usd: f64,
    /// A month (730 hours) at this load, kWh.
    pub kwh_per_month: f64,
    /// Its electricity cost for a month at this load, $ (in
    /// `Cost::usd_per_month`).
    #[serde(default)]
    pub usd_per_month: f64,
}

/// Hours in the month used for monthly costs (8,760 / 12).
pub const HOURS_PER_MONTH: f64 = 730.0;

impl Cost {
    /// Twelve months at this load: 8,760 hours of the fleet plus a year's
    /// API spend and electricity.
    pub fn usd_per_year(&self) -> f64 {
        self.usd_per_month * 12.0
    }
}

/// Dollars per million tokens for a server costing `usd_per_hour` that sustains
/// `tokens_per_s`: ($/h) / (tok/s · 3600) · 10⁶ (reference §3).
pub fn usd_per_mtok(usd_per_hour: f64, tokens_per_s: f64) -> Option<f64> {
    (tokens_per_s > 0.0).then(|| usd_per_hour / (tokens_per_s * 3600.0) * 1e6)
}

/// A cheap view of a run in progress, for live playback.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Simulated time, seconds.
    pub now_s: f64,
    /// Events processed so far.
    pub events: u64,
    /// Requests created so far.
    pub arrived: u64,
    /// Requests completed so far.
    pub completed: u64,
    /// Requests rejected so far.
    pub rejected: u64,
    /// Requests failed so far.
    pub failed: u64,
    /// Requests their client gave up on so far.
    pub timed_out: u64,
    /// Requests waiting for admission, counted from the queues.
    pub waiting: u64,
    /// Requests admitted and not finished, counted from the replicas.
    pub running: u64,
    /// True when no work is left or a limit stopped the run.
    pub finished: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_cost_example_to_the_cent() {
        // "A $12/hour server at 1,500 output tok/s costs ≈ $2.22 per million tokens;
        // at 4,000 tok/s ≈ $0.83" (reference §4).
        let cents = |v: Option<f64>| (v.expect("positive rate") * 100.0).round() as i64;
        assert_eq!(cents(usd_per_mtok(12.0, 1500.0)), 222);
        assert_eq!(cents(usd_per_mtok(12.0, 4000.0)), 83);
        assert_eq!(usd_per_mtok(12.0, 0.0), None);
    }
}
