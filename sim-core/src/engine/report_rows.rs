//! The report's sections that are rows or a feature's own: a row per pool
//! and per load stage, the fleet's physical bound, the latency
//! distribution, speculative decoding and disaggregation.

use super::bill::Bill;
use super::recorder::{ClassMetrics, Recorder, StageMetrics};
use super::report::{kv_capacity_tokens, ratio};
use super::{NS_PER_S, Simulation};
use crate::report::{
    DisaggregationReport, Distribution, PhysicalLimit, PoolReport, SpeculativeReport, StageReport,
};

impl Simulation {
    /// A row per pool: its GPUs, how busy, its latencies and its bill
    /// (none for a single fixed pool, whose figures are the run's).
    pub(super) fn pool_reports(&self, bill: &Bill, secs: f64) -> Vec<PoolReport> {
        let pools = &self.cfg.pools;
        let end = self.measured_end_ns();
        // A single fixed pool keeps no rows of its own: the run's are its.
        debug_assert!(
            self.rec.pools.is_empty() || self.rec.pools.len() == pools.len(),
            "one metrics row per pool, or none"
        );
        pools
            .iter()
            .zip(&self.rec.pools)
            .enumerate()
            .map(|(i, (p, m))| {
                let busy = m.busy_ns as f64;
                let usd = bill.pool_usd(i);
                let replica_ns = bill.replica_ns(i);
                PoolReport {
                    name: p.name.clone(),
                    prefills_for: p
                        .disaggregation
                        .map(|h| pools[usize::from(h.to)].name.clone()),
                    hardware: p.hardware.clone(),
                    // Autoscaled: the most up at once.
                    gpus: bill.peak_gpus(i),
                    completed: m.completed,
                    gpu_busy_fraction: ratio(busy, replica_ns),
                    replica_hours: replica_ns / NS_PER_S / 3600.0,
                    replicas_mean: replica_ns / end as f64,
                    replicas_peak: bill.peak_replicas(i),
                    mean_batch_size: ratio(m.batch_area, busy),
                    kv_use_mean: ratio(m.kv_area, busy),
                    forward_passes: m.passes,
                    ttft: m.ttft.stats(),
                    tpot: m.tpot.stats(),
                    e2e: m.e2e.stats(),
                    input_tokens_per_s: m.input_tokens as f64 / secs,
                    output_tokens_per_s: m.output_tokens as f64 / secs,
                    kv_capacity_tokens: kv_capacity_tokens(p),
                    usd,
                    usd_per_month: bill.pool_usd_per_month(i),
                    usd_per_mtok_output: (m.output_tokens > 0)
                        .then(|| usd / m.output_tokens as f64 * 1e6),
                }
            })
            .collect()
    }

    /// Every billed pool's replicas at their bound, together (a prefill
    /// pool generates no output tokens); None when no pool has one.
    pub(super) fn fleet_physical_limit(&self, bill: &Bill, secs: f64) -> Option<PhysicalLimit> {
        let mut limited = self
            .cfg
            .pools
            .iter()
            .enumerate()
            .filter(|(_, p)| p.used && p.disaggregation.is_none())
            .filter_map(|(i, p)| p.limit.map(|l| (l, bill.peak_replicas(i) as usize)));
        let (first, n) = limited.next()?;
        let bound = limited.fold(first.output_tokens_per_s * n as f64, |b, (l, n)| {
            b + l.output_tokens_per_s * n as f64
        });
        Some(PhysicalLimit {
            output_tokens_per_s: bound,
            achieved_fraction: ratio(self.rec.output_tokens_done as f64 / secs, bound),
            ..first
        })
    }

    /// Speculative decoding's tokens per step, measured and expected.
    pub(super) fn speculative_report(&self) -> Option<SpeculativeReport> {
        let rec = &self.rec;
        let spec = self.cfg.pools.iter().find_map(|p| p.speculative.as_ref())?;
        Some(SpeculativeReport {
            tokens_per_step: (rec.speculative_steps > 0)
                .then(|| rec.speculative_tokens as f64 / rec.speculative_steps as f64),
            expected_tokens_per_step: spec.mean,
        })
    }

    /// The prefill-to-decode transfers of a disaggregated fleet.
    pub(super) fn disaggregation_report(&self, end: u64) -> Option<DisaggregationReport> {
        if !self.cfg.pools.iter().any(|p| p.disaggregation.is_some()) {
            return None;
        }
        let d = &self.rec.disaggregation;
        Some(DisaggregationReport {
            transfers: d.transfers,
            transfer: d.time.stats(),
            gb_moved: d.bytes_moved / 1e9,
            in_flight_gb_mean: d.mean_in_flight(end) / 1e9,
            in_flight_gb_peak: d.peak / 1e9,
        })
    }
}

impl ClassMetrics {
    /// The TTFT and end-to-end latency at the report's quantiles.
    pub(super) fn distribution(&self) -> Distribution {
        let quantiles = crate::report::distribution_quantiles();
        Distribution {
            ttft_ms: self.ttft.quantiles_ms(&quantiles),
            e2e_ms: self.e2e.quantiles_ms(&quantiles),
            quantiles,
        }
    }
}

impl StageMetrics {
    fn report(&self) -> StageReport {
        let secs = (self.end_ns - self.start_ns).max(1) as f64 / NS_PER_S;
        StageReport {
            start_s: self.start_ns as f64 / NS_PER_S,
            end_s: self.end_ns as f64 / NS_PER_S,
            rate_per_s: self.rate_per_s,
            completed: self.completed,
            ttft: self.ttft.stats(),
            tpot: self.tpot.stats(),
            e2e: self.e2e.stats(),
            first_visible: self.first_visible(),
            output_tokens_per_s: self.output_tokens as f64 / secs,
        }
    }
}

impl Recorder {
    /// A row per load stage.
    pub(super) fn stage_reports(&self) -> Vec<StageReport> {
        self.stages.iter().map(StageMetrics::report).collect()
    }
}
