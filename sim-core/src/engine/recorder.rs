//! What a run measures as it goes: counters, per-class latency histograms,
//! utilisation sums, windowed series and the bounded trace of the first passes.

use crate::metrics::{LatencyRecorder, Windows};
use crate::report::{ClassReport, LatencyStats};
pub(super) use crate::trace::{ArrivalRecord, PassRecord, TraceLog};

/// Latency histograms and counters of one class (or of all of them).
#[derive(Clone, Debug, Default)]
pub(super) struct ClassMetrics {
    pub(super) completed: u64,
    pub(super) rejected: u64,
    pub(super) failed: u64,
    pub(super) timed_out: u64,
    pub(super) api_usd: f64,
    pub(super) slo_met: u64,
    /// Completed requests over the TTFT target (on the first visible token).
    pub(super) ttft_missed: u64,
    /// Completed requests over the TPOT target.
    pub(super) tpot_missed: u64,
    pub(super) ttft: LatencyRecorder,
    pub(super) tpot: LatencyRecorder,
    pub(super) e2e: LatencyRecorder,
    pub(super) wait: LatencyRecorder,
    pub(super) task: LatencyRecorder,
    /// Recorded only when some class reasons (else it equals `ttft`).
    pub(super) visible: LatencyRecorder,
    pub(super) thinking: LatencyRecorder,
}

impl ClassMetrics {
    pub(super) fn report(&self, name: &str, month_factor: f64) -> ClassReport {
        ClassReport {
            name: name.to_owned(),
            api_usd_per_month: self.api_usd * month_factor,
            completed: self.completed,
            rejected: self.rejected,
            failed: self.failed,
            timed_out: self.timed_out,
            api_usd: self.api_usd,
            ttft: self.ttft.stats(),
            first_visible: self.first_visible(),
            thinking: self.thinking.stats(),
            tpot: self.tpot.stats(),
            e2e: self.e2e.stats(),
            queue_wait: self.wait.stats(),
            task_latency: self.task.stats(),
            slo_met_fraction: (self.completed > 0)
                .then(|| self.slo_met as f64 / self.completed as f64),
            ttft_target_missed: self.ttft_missed,
            tpot_target_missed: self.tpot_missed,
        }
    }

    /// Time to the first visible token: TTFT's when nothing reasoned.
    pub(super) fn first_visible(&self) -> LatencyStats {
        if self.visible.count() == 0 {
            self.ttft.stats()
        } else {
            self.visible.stats()
        }
    }
}

/// One pool's measurements (kept only when a scenario has several).
#[derive(Clone, Debug, Default)]
pub(super) struct PoolMetrics {
    pub(super) busy_ns: u128,
    pub(super) batch_area: f64,
    pub(super) kv_area: f64,
    pub(super) flops: f64,
    /// Σ pass time × its power share (`PowerCoefficients::share`), ns.
    pub(super) span_ns: f64,
    pub(super) passes: u64,
    pub(super) completed: u64,
    pub(super) input_tokens: u64,
    pub(super) output_tokens: u64,
    pub(super) ttft: LatencyRecorder,
    pub(super) tpot: LatencyRecorder,
    pub(super) e2e: LatencyRecorder,
}

/// The latencies of a completed request, as the recorder takes them.
pub(super) struct Sample {
    pub(super) class: u16,
    /// The pool that served it (None: an API tier).
    pub(super) pool: Option<u16>,
    pub(super) arrival_ns: u64,
    pub(super) ttft_ns: u64,
    pub(super) tpot_ns: Option<u64>,
    pub(super) e2e_ns: u64,
    pub(super) wait_ns: u64,
    /// First token to first visible token (reasoning requests only).
    pub(super) thinking_ns: Option<u64>,
}

impl Sample {
    /// Arrival to the first token the user sees.
    pub(super) fn visible_ns(&self) -> u64 {
        self.ttft_ns.saturating_add(self.thinking_ns.unwrap_or(0))
    }
}

/// A forward pass's cost and shape, as the recorder takes it.
#[derive(Clone, Debug)]
pub(super) struct PassSample {
    pub(super) replica: u32,
    pub(super) pool: u16,
    pub(super) start_ns: u64,
    pub(super) time_ns: u64,
    pub(super) seqs: u64,
    pub(super) decode_seqs: u64,
    pub(super) prefill_tokens: u64,
    pub(super) flops: f64,
    pub(super) bytes: f64,
    /// The share of its GPUs' span between idle and board power it draws.
    pub(super) power_share: f64,
    /// KV-cache use of the replica when the pass starts, 0..=1.
    pub(super) kv_use: f64,
    /// Requests waiting for the replica when the pass starts.
    pub(super) waiting: u32,
}

/// Every measurement of a run.
pub(super) struct Recorder {
    pub(super) arrived: u64,
    pub(super) completed: u64,
    pub(super) rejected: u64,
    /// Requests that reached the user as errors.
    pub(super) failed: u64,
    /// Requests their client gave up on.
    pub(super) timed_out: u64,
    pub(super) tasks_completed: u64,
    pub(super) input_tokens_done: u64,
    pub(super) output_tokens_done: u64,
    /// All requests' metrics, and each class's when there is more than one
    /// (none for a run of one class, whose class's are all's: see
    /// [`Recorder::metrics`]).
    pub(super) overall: ClassMetrics,
    per_class: Vec<ClassMetrics>,
    pub(super) windows: Windows,
    pub(super) busy_ns: u128,
    pub(super) batch_area: f64,
    pub(super) kv_area: f64,
    pub(super) kv_peak: f64,
    /// Most sequences in one pass.
    pub(super) peak_batch: u64,
    pub(super) flops: f64,
    pub(super) bytes: f64,
    /// Σ pass time × its power share (`PowerCoefficients::share`), ns.
    pub(super) span_ns: f64,
    pub(super) passes: u64,
    pub(super) preemptions: u64,
    pub(super) last_event_ns: u64,
    /// When work last ended: a request completed, failed or was rejected, or a
    /// pass finished. With the arrival window it bounds the measured window.
    pub(super) last_work_ns: u64,
    pub(super) rejected_too_long: u64,
    /// Prompt tokens of admitted requests (first admission), and those served
    /// from the prefix cache.
    pub(super) prompt_tokens: u64,
    pub(super) cached_prompt_tokens: u64,
    /// Arrivals refused because `bounds::IN_FLIGHT` requests were in flight.
    pub(super) rejected_in_flight: u64,
    pub(super) trace: Option<TraceLog>,
    /// The first request too large for its tier's limits, for the warning.
    pub(super) too_large_example: Option<String>,
    /// Per pool, when there are several (else empty: the totals are the pool's).
    pub(super) pools: Vec<PoolMetrics>,
    /// Per load stage: (start ns, end ns, rate, metrics, output tokens).
    pub(super) stages: Vec<StageMetrics>,
    /// Whether some class reasons before answering (then the time to the
    /// first visible token is recorded apart from TTFT).
    pub(super) reasoning: bool,
    /// KV caches moved between pools (prefill/decode disaggregation).
    pub(super) disaggregation: DisaggregationMetrics,
    /// Speculative decoding: tokens decode steps made, and the steps, of
    /// the sequences that finished.
    pub(super) speculative_tokens: u64,
    pub(super) speculative_steps: u64,
}

/// KV caches on the way from prefill replicas to decode replicas.
#[derive(Default)]
pub(super) struct DisaggregationMetrics {
    pub(super) transfers: u64,
    /// From the decode replica's admission to the arrival.
    pub(super) time: LatencyRecorder,
    pub(super) bytes_moved: f64,
    in_flight: f64,
    /// ∫ bytes in flight dt, byte·ns, up to `since`.
    area: f64,
    since: u64,
    pub(super) peak: f64,
}

impl DisaggregationMetrics {
    fn integrate(&mut self, now: u64) {
        debug_assert!(now >= self.since, "a transfer's time went back");
        self.area += self.in_flight * (now - self.since) as f64;
        self.since = now;
    }

    /// A pull of `bytes` started at `now`.
    pub(super) fn started(&mut self, now: u64, bytes: f64) {
        self.integrate(now);
        self.in_flight += bytes;
        self.peak = self.peak.max(self.in_flight);
    }

    /// A pull of `bytes` arrived at `now`, `took_ns` after it was admitted.
    pub(super) fn arrived(&mut self, now: u64, bytes: f64, took_ns: u64) {
        self.integrate(now);
        debug_assert!(
            bytes <= self.in_flight * (1.0 + 1e-9) + 1.0,
            "a pull of {bytes} B arrived with {} B in flight",
            self.in_flight
        );
        self.in_flight = (self.in_flight - bytes).max(0.0);
        self.transfers += 1;
        self.bytes_moved += bytes;
        self.time.record_ns(took_ns);
    }

    /// Mean bytes in flight over `0..end`.
    pub(super) fn mean_in_flight(&self, end: u64) -> f64 {
        let area = self.area + self.in_flight * end.saturating_sub(self.since) as f64;
        if end == 0 { 0.0 } else { area / end as f64 }
    }
}

/// Stages up to which each keeps exact (HDR) percentiles; a longer schedule's
/// stages keep compact ones (2 KB per latency), so the breakdown's memory is
/// bounded up front: at most `bounds::SCHEDULE_POINTS` × 8 KB, whatever the
/// latencies (an HDR histogram grows with its largest value: ≈ 400 KB for
/// hour-long waits).
pub const EXACT_STAGES: usize = 64;

/// The requests that arrived during one load stage.
pub(super) struct StageMetrics {
    pub(super) start_ns: u64,
    pub(super) end_ns: u64,
    pub(super) rate_per_s: f64,
    pub(super) completed: u64,
    pub(super) ttft: LatencyRecorder,
    pub(super) tpot: LatencyRecorder,
    pub(super) e2e: LatencyRecorder,
    /// Recorded only when some class reasons (else it equals `ttft`).
    pub(super) visible: LatencyRecorder,
    pub(super) output_tokens: u64,
}

impl StageMetrics {
    /// Time to the first visible token: TTFT's when nothing reasoned.
    pub(super) fn first_visible(&self) -> LatencyStats {
        if self.visible.count() == 0 {
            self.ttft.stats()
        } else {
            self.visible.stats()
        }
    }
}

impl Recorder {
    pub(super) fn new(classes: usize, duration_ns: u64, pools: usize, reasoning: bool) -> Self {
        Recorder {
            reasoning,
            arrived: 0,
            completed: 0,
            rejected: 0,
            failed: 0,
            timed_out: 0,
            tasks_completed: 0,
            input_tokens_done: 0,
            output_tokens_done: 0,
            overall: ClassMetrics::default(),
            per_class: if classes > 1 {
                (0..classes).map(|_| ClassMetrics::default()).collect()
            } else {
                Vec::new()
            },
            windows: Windows::new(duration_ns / 400),
            busy_ns: 0,
            batch_area: 0.0,
            kv_area: 0.0,
            kv_peak: 0.0,
            peak_batch: 0,
            flops: 0.0,
            bytes: 0.0,
            span_ns: 0.0,
            passes: 0,
            preemptions: 0,
            last_event_ns: 0,
            last_work_ns: 0,
            rejected_too_long: 0,
            prompt_tokens: 0,
            cached_prompt_tokens: 0,
            rejected_in_flight: 0,
            trace: None,
            too_large_example: None,
            pools: (0..pools).map(|_| PoolMetrics::default()).collect(),
            stages: Vec::new(),
            disaggregation: DisaggregationMetrics::default(),
            speculative_tokens: 0,
            speculative_steps: 0,
        }
    }

    /// Break the report down by these load stages (arrival window `duration_ns`).
    pub(super) fn set_stages(&mut self, stages: &[crate::scenario::Stage], duration_ns: u64) {
        let mut start = 0u64;
        let recorder = if stages.len() <= EXACT_STAGES {
            LatencyRecorder::default
        } else {
            LatencyRecorder::compact
        };
        for (i, st) in stages.iter().enumerate() {
            if start >= duration_ns {
                break;
            }
            let end = if i + 1 == stages.len() {
                duration_ns
            } else {
                super::later(start, super::secs_to_ns(st.duration_s)).min(duration_ns)
            };
            self.stages.push(StageMetrics {
                start_ns: start,
                end_ns: end,
                rate_per_s: st.rate_per_s,
                completed: 0,
                ttft: recorder(),
                tpot: recorder(),
                e2e: recorder(),
                visible: recorder(),
                output_tokens: 0,
            });
            start = end;
        }
    }

    /// Keep an arrival if the trace has room.
    pub(super) fn trace_arrival(&mut self, a: ArrivalRecord) {
        if let Some(t) = self
            .trace
            .as_mut()
            .filter(|t| t.arrivals.len() < t.capacity)
        {
            t.arrivals.push(a);
        }
    }

    /// A forward pass of the GPU physics starts (its cost is known up front).
    pub(super) fn pass(&mut self, p: &PassSample) {
        debug_assert!(p.decode_seqs <= p.seqs, "a pass decodes more than it holds");
        debug_assert!(
            (0.0..=1.0).contains(&p.power_share),
            "a pass's power share is a share"
        );
        let end = p.start_ns + p.time_ns.max(1);
        self.kv_peak = self.kv_peak.max(p.kv_use);
        self.peak_batch = self.peak_batch.max(p.seqs);
        self.busy_ns += u128::from(p.time_ns);
        self.batch_area += p.seqs as f64 * p.time_ns as f64;
        self.kv_area += p.kv_use * p.time_ns as f64;
        self.flops += p.flops;
        self.bytes += p.bytes;
        self.span_ns += p.power_share * p.time_ns as f64;
        self.passes += 1;
        if let Some(m) = self.pools.get_mut(usize::from(p.pool)) {
            m.busy_ns += u128::from(p.time_ns);
            m.batch_area += p.seqs as f64 * p.time_ns as f64;
            m.kv_area += p.kv_use * p.time_ns as f64;
            m.flops += p.flops;
            m.span_ns += p.power_share * p.time_ns as f64;
            m.passes += 1;
        }
        self.windows.pass(p.start_ns, end, p.seqs, p.kv_use);
        self.windows.input_tokens(end, p.prefill_tokens);
        if let Some(t) = self.trace.as_mut().filter(|t| t.passes.len() < t.capacity) {
            let prefill_seqs = if p.prefill_tokens > 0 {
                p.seqs - p.decode_seqs
            } else {
                0
            };
            t.passes.push(PassRecord {
                replica: p.replica,
                start_ns: p.start_ns,
                end_ns: end,
                prefill_tokens: p.prefill_tokens,
                prefill_seqs: prefill_seqs as u32,
                decode_seqs: p.decode_seqs as u32,
                waiting: p.waiting,
            });
        }
    }

    /// An abstract service period ended (its length was not known up front).
    pub(super) fn abstract_pass(&mut self, pool: u16, start_ns: u64, end_ns: u64, members: u64) {
        let busy = end_ns - start_ns;
        self.busy_ns += u128::from(busy);
        self.batch_area += members as f64 * busy as f64;
        self.peak_batch = self.peak_batch.max(members);
        self.passes += 1;
        if let Some(m) = self.pools.get_mut(usize::from(pool)) {
            m.busy_ns += u128::from(busy);
            m.batch_area += members as f64 * busy as f64;
            m.passes += 1;
        }
        self.windows.pass(start_ns, end_ns, members, 0.0);
    }

    /// A request finished.
    pub(super) fn completion(
        &mut self,
        now: u64,
        s: &Sample,
        (ttft_ok, tpot_ok): (bool, bool),
        input_tokens: u64,
        output_tokens: u64,
    ) {
        self.completed += 1;
        debug_assert!(
            self.completed <= self.arrived,
            "completed more than arrived"
        );
        self.input_tokens_done += input_tokens;
        self.output_tokens_done += output_tokens;
        let visible = self.reasoning.then(|| s.visible_ns());
        self.windows.completion(now, s.ttft_ns, s.e2e_ns, visible);
        if let Some(m) = s.pool.and_then(|p| self.pools.get_mut(usize::from(p))) {
            m.completed += 1;
            m.input_tokens += input_tokens;
            m.output_tokens += output_tokens;
            m.ttft.record_ns(s.ttft_ns);
            m.e2e.record_ns(s.e2e_ns);
            if let Some(t) = s.tpot_ns {
                m.tpot.record_ns(t);
            }
        }
        if !self.stages.is_empty() {
            let i = self
                .stages
                .partition_point(|st| st.end_ns <= s.arrival_ns)
                .min(self.stages.len() - 1);
            let st = &mut self.stages[i];
            st.output_tokens += output_tokens;
            st.completed += 1;
            st.ttft.record_ns(s.ttft_ns);
            st.e2e.record_ns(s.e2e_ns);
            if let Some(t) = s.tpot_ns {
                st.tpot.record_ns(t);
            }
            if let Some(v) = visible {
                st.visible.record_ns(v);
            }
        }
        for m in self.metrics(s.class) {
            m.completed += 1;
            m.slo_met += u64::from(ttft_ok && tpot_ok);
            m.ttft_missed += u64::from(!ttft_ok);
            m.tpot_missed += u64::from(!tpot_ok);
            m.ttft.record_ns(s.ttft_ns);
            m.e2e.record_ns(s.e2e_ns);
            m.wait.record_ns(s.wait_ns);
            if let Some(t) = s.tpot_ns {
                m.tpot.record_ns(t);
            }
            if let Some(v) = visible {
                m.visible.record_ns(v);
            }
            if let Some(t) = s.thinking_ns {
                m.thinking.record_ns(t);
            }
        }
    }

    /// A task (all its calls) finished.
    pub(super) fn task_done(&mut self, class: u16, latency_ns: u64) {
        self.tasks_completed += 1;
        for m in self.metrics(class) {
            m.task.record_ns(latency_ns);
        }
    }

    /// The metrics a request of `class` counts in: all requests', and its
    /// class's when the run has more than one class (with one, the class's
    /// are all's, recorded once).
    pub(super) fn metrics(&mut self, class: u16) -> impl Iterator<Item = &mut ClassMetrics> {
        let own = self.per_class.get_mut(usize::from(class));
        std::iter::once(&mut self.overall).chain(own)
    }

    /// Class `i`'s metrics.
    pub(super) fn class_metrics(&self, i: usize) -> &ClassMetrics {
        self.per_class.get(i).unwrap_or(&self.overall)
    }
}

impl super::Simulation {
    /// Record the first `capacity` passes and arrivals (for the teaching timeline
    /// and tests). Call before advancing.
    pub fn record_trace(&mut self, capacity: usize) {
        self.rec.trace = Some(TraceLog {
            capacity,
            ..TraceLog::default()
        });
    }

    /// What was recorded by [`Self::record_trace`].
    pub fn trace(&self) -> Option<&TraceLog> {
        self.rec.trace.as_ref()
    }
}
