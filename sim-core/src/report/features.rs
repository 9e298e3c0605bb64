//! The report's per-feature parts: speculative decoding, the prefill/decode
//! hand-off, each pool's own row, and the hosted API tiers. Each is present
//! only when its feature is in the scenario.

use super::LatencyStats;
use serde::{Deserialize, Serialize};

/// What speculative decoding's steps yielded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpeculativeReport {
    /// Tokens a decode step made per sequence, over the sequences that
    /// finished (each step's accepted drafts and the target's own token).
    pub tokens_per_step: Option<f64>,
    /// What the acceptance rate promises: (1 − α^(k+1)) / (1 − α), for the
    /// first speculating pool.
    pub expected_tokens_per_step: f64,
}

/// The KV caches that moved from prefill replicas to decode replicas.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DisaggregationReport {
    /// Caches that arrived.
    pub transfers: u64,
    /// From the decode replica's admission to the cache's arrival: waiting
    /// for the replica's link, the bytes on the wire and the link's fixed
    /// latency.
    pub transfer: LatencyStats,
    /// Bytes moved, GB.
    pub gb_moved: f64,
    /// KV cache on the way, averaged over the measured window, GB.
    pub in_flight_gb_mean: f64,
    /// Most KV cache on the way at once, GB.
    pub in_flight_gb_peak: f64,
}

impl DisaggregationReport {
    /// The hand-off in one sentence, as the page and the CLI print it.
    pub fn describe(&self) -> String {
        format!(
            "{} caches moved ({:.2} GB); each took {} on average, {} at p99 (waiting for the decode replica's link, on the wire, and the link's fixed latency); {:.3} GB on the way on average, {:.3} GB at most",
            self.transfers,
            self.gb_moved,
            crate::format::duration_ms(self.transfer.mean_ms),
            crate::format::duration_ms(self.transfer.p99_ms),
            self.in_flight_gb_mean,
            self.in_flight_gb_peak,
        )
    }
}

/// One self-hosted pool's share of the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PoolReport {
    /// The pool's name.
    pub name: String,
    /// The decode pool it hands its prompts to, when it only prefills (its
    /// requests complete there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefills_for: Option<String>,
    /// Its hardware and model in words (`Serving::hardware_text`).
    pub hardware: String,
    /// Its GPUs: the most replicas up at once (`replicas_peak`; all of a
    /// fixed pool's) × GPUs per replica.
    pub gpus: u32,
    /// Requests it completed.
    pub completed: u64,
    /// How busy its replicas were while up (the whole run for a fixed
    /// pool), 0..=1.
    pub gpu_busy_fraction: f64,
    /// Replica-hours it was up: replicas × the run for a fixed pool, the
    /// hours each replica was up (cold starts included) when autoscaled.
    pub replica_hours: f64,
    /// Replicas up on average over the run.
    pub replicas_mean: f64,
    /// Most replicas up at once (a fixed pool's replicas).
    pub replicas_peak: u32,
    /// Sequences per pass, weighted by time busy.
    pub mean_batch_size: f64,
    /// KV-cache use, weighted by time busy, 0..=1.
    pub kv_use_mean: f64,
    /// Forward passes it ran.
    pub forward_passes: u64,
    /// Time to first token of the requests it completed.
    pub ttft: LatencyStats,
    /// Time per output token of the requests it completed.
    pub tpot: LatencyStats,
    /// End-to-end latency of the requests it completed.
    pub e2e: LatencyStats,
    /// Prompt tokens of its completed requests per second of the run.
    pub input_tokens_per_s: f64,
    /// Tokens it generated per second of the run.
    pub output_tokens_per_s: f64,
    /// One replica's KV-cache capacity, tokens (0 for the abstract server).
    pub kv_capacity_tokens: u64,
    /// What its GPUs cost over the run (0 when no route reaches it).
    pub usd: f64,
    /// What its GPUs cost per month, up all month.
    pub usd_per_month: f64,
    /// Its cost per million tokens it generated.
    pub usd_per_mtok_output: Option<f64>,
}

/// What happened at the hosted APIs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ApiReport {
    /// Requests sent to API tiers.
    pub requests: u64,
    /// Attempts at the provider (first tries and retries).
    pub attempts: u64,
    /// Attempts refused with HTTP 429.
    pub throttled_429: u64,
    /// Retries scheduled by the client.
    pub retries: u64,
    /// Attempts per request: the retry amplification (1 = no retries).
    pub attempts_per_request: f64,
    /// Requests that reached the user as a 429 error (fail-fast, or retries exhausted).
    pub failed_429: u64,
    /// Requests larger than the limits could ever admit.
    pub failed_too_large: u64,
    /// Errors the tiers answered with besides 429s.
    #[serde(default)]
    pub errors: u64,
    /// Requests that failed because their last attempt got such an error.
    #[serde(default)]
    pub failed_errors: u64,
    /// Requests sent on down `api.fallback`'s chain when their tier gave up
    /// on them (a request counted once per step it took).
    #[serde(default)]
    pub fallbacks: u64,
    /// With a chain of several: how many went to each step, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallbacks_by_step: Vec<FallbackStep>,
    /// Hedged copies sent (`api.hedge`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub hedges: u64,
    /// Of them, those whose first token came before the first attempt's
    /// (the request then had the copy's answer).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub hedges_won: u64,
    /// What the cancelled attempts' prompts were billed, the copy's or the
    /// first attempt's, whichever streamed second (in `usd` too).
    #[serde(default, skip_serializing_if = "is_zero_f")]
    pub usd_hedges_cancelled: f64,
    /// Requests that failed because the breaker was open (no fallback).
    #[serde(default)]
    pub failed_breaker: u64,
    /// Requests the client's own queue turned away (full, or waited too long).
    pub rejected_by_client: u64,
    /// API spend over the run.
    pub usd: f64,
    /// API spend per month (730 h) at this load.
    pub usd_per_month: f64,
    /// Per tier.
    pub tiers: Vec<TierReport>,
}

/// One step of the fallback chain: where it sends, and how many went.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FallbackStep {
    /// The backend, by name.
    pub to: String,
    /// Requests sent there.
    pub requests: u64,
}

/// One API tier's traffic and spend.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TierReport {
    /// Tier name.
    pub name: String,
    /// Requests routed to the tier.
    pub requests: u64,
    /// Requests it completed.
    pub completed: u64,
    /// Requests whose client gave up while the tier was answering (billed for
    /// the prompt and the output streamed until then; not counted as completed).
    #[serde(default)]
    pub timed_out: u64,
    /// 429s it returned.
    pub throttled_429: u64,
    /// Input tokens of completed requests.
    pub input_tokens: u64,
    /// Output tokens of completed requests.
    pub output_tokens: u64,
    /// Spend over the run (completed and timed-out requests).
    pub usd: f64,
    /// Of `usd`, the spend on requests whose client gave up.
    #[serde(default)]
    pub usd_timed_out: f64,
    /// Spend per month at this load.
    pub usd_per_month: f64,
    /// The token limit per minute after the rate-limit tier multiplier.
    pub tokens_per_minute_limit: u64,
    /// Prompt tokens billed at the cached price (completed and timed-out
    /// requests), with a prompt cache.
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Prompt tokens billed at an explicit cache's write price.
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// Billed requests that read some of their prompt from the cache.
    #[serde(default)]
    pub cache_hits: u64,
    /// What the cache saved on the bill: the same prompts at the plain input
    /// price, less what they cost (negative when writes cost more than reads
    /// saved).
    #[serde(default)]
    pub usd_saved_by_cache: f64,
    /// `usd` by line: input, cached input, cache writes, output.
    #[serde(default)]
    pub bill: crate::api::Bill,
    /// A batch tier: the most input tokens its queue held at once.
    #[serde(default)]
    pub batch_enqueued_peak_tokens: u64,
    /// Errors it answered with besides 429s (overloaded, server errors).
    #[serde(default)]
    pub errors: u64,
    /// Times the client's breaker opened for it.
    #[serde(default)]
    pub breaker_opened: u64,
    /// Time its breaker was open, s.
    #[serde(default)]
    pub breaker_open_s: f64,
    /// Attempts at its flex variant refused for want of capacity (429s,
    /// counted in `throttled_429` too).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flex_refused: u64,
    /// Requests its provisioned units admitted (the rest went to
    /// pay-as-you-go).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub provisioned_requests: u64,
    /// Requests it gave up on (retries spent, too large, its breaker open):
    /// sent on down the fallback chain, or failed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub gave_up: u64,
    /// Requests sent here and answered by their hedged copy at another
    /// tier (`api.hedge.to`), which counts them from then on.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub hedged_away: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_zero_f(v: &f64) -> bool {
    *v == 0.0
}

impl ApiReport {
    /// Whether any tier's prompt cache did anything in the run.
    pub fn cache_used(&self) -> bool {
        self.tiers.iter().any(TierReport::cache_used)
    }

    /// What the tiers' prompt caches saved on the run, if any tier used one.
    pub fn usd_saved_by_cache(&self) -> Option<f64> {
        self.cache_used()
            .then(|| self.tiers.iter().map(|t| t.usd_saved_by_cache).sum())
    }

    /// The share of billed requests, over every tier, that read part of
    /// their prompt from a prompt cache.
    pub fn cache_hit_rate(&self) -> f64 {
        let hits: u64 = self.tiers.iter().map(|t| t.cache_hits).sum();
        let billed: u64 = self.tiers.iter().map(|t| t.completed + t.timed_out).sum();
        if billed == 0 {
            0.0
        } else {
            hits as f64 / billed as f64
        }
    }
}

impl TierReport {
    /// The share of billed requests (completed or timed out) that read some
    /// of their prompt from the tier's prompt cache.
    pub fn cache_hit_rate(&self) -> f64 {
        let billed = self.completed + self.timed_out;
        if billed == 0 {
            0.0
        } else {
            self.cache_hits as f64 / billed as f64
        }
    }

    /// Whether the tier's prompt cache did anything in the run.
    pub fn cache_used(&self) -> bool {
        self.cache_hits > 0 || self.cache_write_tokens > 0
    }
}
