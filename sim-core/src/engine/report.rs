//! Reading a run: snapshots counted from the queues themselves, and the report.

use super::bill::Bill;
use super::policy::Service;
use super::provider::ApiState;
use super::{BLOCK, NS_PER_S, Simulation};
use crate::report::{
    ApiReport, Cost, Counts, Energy, HOURS_PER_MONTH, REPORT_VERSION, Report, Snapshot, Throughput,
    Utilisation,
};

impl Simulation {
    /// The end of the measured window: for a run that drained, the arrival
    /// window or the last work in flight ending, whichever is later (idle timers
    /// never count); for a run stopped by a limit or still in progress, now.
    pub fn measured_end_ns(&self) -> u64 {
        let end = if self.st.stopped.is_none() && self.st.events.is_empty() {
            self.cfg.duration_ns.max(self.rec.last_work_ns)
        } else {
            self.rec.last_event_ns
        };
        end.max(1)
    }

    /// Counts taken from the queues and replicas themselves (not from the
    /// arrival/completion counters), so `arrived = completed + rejected + waiting
    /// + running` is a real check.
    pub fn snapshot(&self) -> Snapshot {
        let (api_waiting, api_running) = self
            .api
            .as_ref()
            .map_or((0, 0), ApiState::waiting_and_running);
        let holding: u64 = self.st.scaling.iter().map(|s| s.holding.len() as u64).sum();
        let held_waiting: u64 = self.st.queues.iter().map(|q| q.len() as u64).sum::<u64>()
            + api_waiting
            + self.st.in_frontend
            + holding;
        let held_running: u64 = self
            .st
            .replicas
            .iter()
            .map(|r| {
                r.decoding.len() as u64
                    + r.prefilling.len() as u64
                    + r.static_batch.as_ref().map_or(0, |b| b.live())
                    + r.abstract_members.len() as u64
            })
            .sum::<u64>()
            + api_running;
        debug_assert_eq!(
            self.st.queues.iter().map(|q| q.len() as u64).sum::<u64>()
                + self.api.as_ref().map_or(0, ApiState::queued)
                + self.st.in_frontend
                + holding,
            self.st.waiting,
            "the waiting counter disagrees with the queues"
        );
        debug_assert_eq!(
            held_waiting + held_running,
            self.st.requests.len() as u64,
            "requests in flight are neither waiting nor running"
        );
        // Requests whose client gave up count as timed out, not as in flight,
        // even while their container still holds them.
        let waiting = held_waiting - self.st.abandoned_waiting;
        let running = held_running - self.st.abandoned_running;
        Snapshot {
            now_s: self.st.now as f64 / NS_PER_S,
            events: self.st.processed,
            arrived: self.rec.arrived,
            completed: self.rec.completed,
            rejected: self.rec.rejected,
            failed: self.rec.failed,
            timed_out: self.rec.timed_out,
            waiting,
            running,
            finished: self.is_finished(),
        }
    }

    /// The report of the run so far (complete once [`Self::is_finished`]),
    /// assembled from its parts: counts and latencies from the recorder, the
    /// fleet's bill ([`Bill`]), the API tiers' report, energy, and each
    /// feature's own section.
    pub fn report(&self) -> Report {
        let drained = self.st.stopped.is_none() && self.st.events.is_empty();
        if drained {
            debug_assert!(
                self.st.replicas.iter().all(|r| r.kv_used == 0),
                "a drained run returned every KV block"
            );
            debug_assert_eq!(self.st.requests.len(), 0, "a drained run holds no request");
        }
        let rec = &self.rec;
        let end = self.measured_end_ns();
        let secs = end as f64 / NS_PER_S;
        let bill = Bill::new(self, end, secs);
        let month_factor = HOURS_PER_MONTH * 3600.0 / secs;
        let energy = self.energy(rec, month_factor, |i| bill.up_gpu_s(i));
        let api = self.api_report(secs);
        let replicas = self.reached_replicas();
        Report {
            version: REPORT_VERSION,
            warnings: self.warnings(secs, api.as_ref()),
            complete: drained,
            arrivals_left_out: self.st.left_out,
            sim_time_s: secs,
            events: self.st.processed,
            requests: self.counts(),
            overall: rec.overall.report("all", month_factor),
            per_class: self
                .cfg
                .classes
                .iter()
                .enumerate()
                .map(|(i, k)| rec.class_metrics(i).report(&k.name, month_factor))
                .collect(),
            throughput: self.throughput(secs),
            utilisation: self.utilisation(&bill, replicas),
            series: rec.windows.series(
                end,
                replicas as u32,
                self.api.is_some(),
                rec.reasoning,
                self.cfg.autoscales,
            ),
            physical_limit: self.fleet_physical_limit(&bill, secs),
            cost: self.cost(&bill, api.as_ref(), energy.as_ref()),
            energy,
            api,
            distribution: rec.overall.distribution(),
            slo: self.cfg.slo.clone(),
            stages: rec.stage_reports(),
            pools: self.pool_reports(&bill, secs),
            speculative: self.speculative_report(),
            disaggregation: self.disaggregation_report(end),
        }
    }

    /// Why the numbers may not be what they seem: a stopped or unfinished
    /// run, requests refused for memory or length, none completed.
    fn warnings(&self, secs: f64, api: Option<&ApiReport>) -> Vec<String> {
        let rec = &self.rec;
        let mut warnings = Vec::new();
        if let Some(w) = &self.st.stopped {
            warnings.push(w.clone());
        } else if !self.st.events.is_empty() {
            warnings.push(format!("run in progress at {secs:.1} s of simulated time"));
        }
        if rec.rejected_in_flight > 0 {
            warnings.push(format!(
                "{} request(s) refused because {} were already in flight (the simulator's memory bound): demand far exceeds capacity",
                rec.rejected_in_flight,
                crate::scenario::bounds::IN_FLIGHT
            ));
        }
        if rec.completed == 0 {
            warnings.push("no request completed".to_owned());
        }
        if rec.rejected_too_long > 0 {
            warnings.push(format!(
                "{} request(s) rejected because prompt and output exceed the KV cache ({} tokens)",
                rec.rejected_too_long,
                self.cfg
                    .pools
                    .iter()
                    .map(|p| p.kv_blocks)
                    .min()
                    .unwrap_or(0)
                    * BLOCK
            ));
        }
        if let Some(e) = &rec.too_large_example {
            warnings.push(format!(
                "{} request(s) failed because they can never fit the rate limits or the batch queue ({e})",
                api.map_or(0, |a| a.failed_too_large)
            ));
        }
        warnings
    }

    /// Replicas of the pools some route reaches (all when none is).
    fn reached_replicas(&self) -> usize {
        match self
            .cfg
            .pools
            .iter()
            .filter(|p| p.used)
            .map(|p| p.replicas)
            .sum()
        {
            0 => self.st.replicas.len(),
            n => n,
        }
    }

    fn counts(&self) -> Counts {
        let rec = &self.rec;
        Counts {
            arrived: rec.arrived,
            completed: rec.completed,
            rejected: rec.rejected,
            failed: rec.failed,
            timed_out: rec.timed_out,
            in_flight: self.in_flight(),
            tasks_completed: rec.tasks_completed,
        }
    }

    fn throughput(&self, secs: f64) -> Throughput {
        let rec = &self.rec;
        let goodput_requests = rec.overall.slo_met;
        Throughput {
            input_tokens_per_s: rec.input_tokens_done as f64 / secs,
            output_tokens_per_s: rec.output_tokens_done as f64 / secs,
            requests_per_s: rec.completed as f64 / secs,
            goodput_requests_per_s: goodput_requests as f64 / secs,
            goodput_fraction: (rec.arrived > 0)
                .then(|| goodput_requests as f64 / rec.arrived as f64),
        }
    }

    /// How busy the GPUs were, and what they did while busy against what
    /// they could have: FLOP and byte capacity at their peaks.
    fn utilisation(&self, bill: &Bill, replicas: usize) -> Utilisation {
        let rec = &self.rec;
        let pools = &self.cfg.pools;
        let busy = rec.busy_ns as f64;
        let replica_ns = bill.fleet_replica_ns(self.cfg.autoscales, replicas);
        let peaks = |p: &super::pools::PoolCfg| match &p.service {
            Service::Physics(m) => (m.peak_flops(), m.peak_bandwidth()),
            Service::Abstract { .. } => (0.0, 0.0),
        };
        let (flop_capacity, byte_capacity) = if let [only] = pools.as_slice() {
            let (f, b) = peaks(only);
            (f * busy, b * busy)
        } else {
            pools
                .iter()
                .zip(&rec.pools)
                .fold((0.0, 0.0), |(f, b), (p, m)| {
                    let (pf, pb) = peaks(p);
                    (f + pf * m.busy_ns as f64, b + pb * m.busy_ns as f64)
                })
        };
        Utilisation {
            gpu_busy_fraction: ratio(busy, replica_ns),
            mean_batch_size: ratio(rec.batch_area, busy),
            kv_use_mean: ratio(rec.kv_area, busy),
            kv_use_peak: rec.kv_peak,
            peak_batch: rec.peak_batch,
            preemptions: rec.preemptions,
            forward_passes: rec.passes,
            mfu: ratio(rec.flops, flop_capacity / NS_PER_S),
            bandwidth_utilisation: ratio(rec.bytes, byte_capacity / NS_PER_S),
            prefix_cache_hit_rate: ratio(rec.cached_prompt_tokens as f64, rec.prompt_tokens as f64),
            kv_capacity_tokens: kv_capacity_tokens(&pools[0]),
        }
    }

    /// The API tiers' report. Spend scales to a month from the simulated
    /// time; with a batch tier, whose answers come up to a window after the
    /// last request, from the time requests arrived over instead (the spend
    /// is theirs).
    fn api_report(&self, secs: f64) -> Option<ApiReport> {
        let api = self.api.as_ref()?;
        let api_secs = if api.tiers.iter().any(|t| t.batch.is_some()) {
            secs.min((self.cfg.duration_ns as f64 / NS_PER_S).max(1e-9))
        } else {
            secs
        };
        Some(api.report(api_secs, HOURS_PER_MONTH))
    }

    /// The run's dollars: the fleet's bill, the API tiers' spend and the
    /// electricity, over the run, per token, per request and a month.
    fn cost(&self, bill: &Bill, api: Option<&ApiReport>, energy: Option<&Energy>) -> Cost {
        let rec = &self.rec;
        let fleet_usd = bill.fleet_usd();
        let electricity_usd = energy.map_or(0.0, |e| e.usd);
        let api_usd = api.map_or(0.0, |a| a.usd);
        let total_usd = fleet_usd + api_usd + electricity_usd;
        let per_mtok = |tokens: u64| (tokens > 0).then(|| total_usd / tokens as f64 * 1e6);
        Cost {
            gpus: bill.gpus(),
            usd_per_gpu_hour: bill.usd_per_gpu_hour(),
            fleet_usd,
            api_usd,
            total_usd,
            usd_per_mtok_output: per_mtok(rec.output_tokens_done),
            usd_per_mtok_total: per_mtok(rec.output_tokens_done + rec.input_tokens_done),
            usd_per_request: (rec.completed > 0).then(|| total_usd / rec.completed as f64),
            usd_per_month: bill.fleet_usd_per_month()
                + api.map_or(0.0, |a| a.usd_per_month)
                + energy.map_or(0.0, |e| e.usd_per_month),
            electricity_usd,
        }
    }
}

/// `num / den`, or 0 when there is nothing to divide by.
pub(super) fn ratio(num: f64, den: f64) -> f64 {
    if den > 0.0 { num / den } else { 0.0 }
}

/// One replica's KV capacity in tokens (0 for the abstract server).
pub(super) fn kv_capacity_tokens(p: &super::pools::PoolCfg) -> u64 {
    if matches!(p.service, Service::Physics(_)) {
        p.kv_blocks * BLOCK
    } else {
        0
    }
}
