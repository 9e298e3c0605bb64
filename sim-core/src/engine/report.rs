//! Reading a run: snapshots counted from the queues themselves, and the report.

use super::provider::ApiState;
use super::replica::Service;
use super::{BLOCK, NS_PER_S, Simulation};
use crate::physics::Efficiency;
use crate::report::{
    Cost, Counts, Distribution, HOURS_PER_MONTH, PhysicalLimit, PoolReport, REPORT_VERSION, Report,
    Snapshot, StageReport, Throughput, Utilisation,
};
use crate::scenario::{Scenario, Serving};

/// An upper bound on one replica's output tokens/s that no run can pass: decode
/// steps at the datasheet peak with no overheads, as many sequences as the
/// configuration allows (capped by what the KV cache holds), each with the
/// shortest context the workload has (its shortest prompt and one token). A
/// pass of B sequences yields at most B tokens and takes at least this
/// roofline's time for B, and B / time grows with B; so tokens per busy second
/// never exceed the bound, and the achieved fraction stays within [0, 1].
pub(super) fn physical_limit(scenario: &Scenario, pool: &Serving, kv_blocks: u64) -> PhysicalLimit {
    let context = scenario.min_input_tokens().saturating_add(1);
    let fits = (kv_blocks * BLOCK / u64::from(context)).clamp(1, u64::from(u32::MAX)) as u32;
    let batch = pool.batching.max_seqs().min(fits).max(1);
    let model = scenario.deployment_for(pool).step_model(Efficiency::PEAK);
    let per_step = pool.max_tokens_per_step();
    PhysicalLimit {
        batch,
        context_tokens: context,
        output_tokens_per_s: model.decode_roofline_tokens_per_s(batch, context) * per_step,
        achieved_fraction: 0.0,
    }
}

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

    /// The report of the run so far (complete once [`Self::is_finished`]).
    pub fn report(&self) -> Report {
        if self.st.stopped.is_none() && self.st.events.is_empty() {
            debug_assert!(
                self.st.replicas.iter().all(|r| r.kv_used == 0),
                "a drained run returned every KV block"
            );
            debug_assert_eq!(self.st.requests.len(), 0, "a drained run holds no request");
        }
        let rec = &self.rec;
        let end = self.measured_end_ns();
        let secs = end as f64 / NS_PER_S;
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
        let busy = rec.busy_ns as f64;
        // Replicas of the pools some route reaches (all when none is).
        let replicas = match self
            .cfg
            .pools
            .iter()
            .filter(|p| p.used)
            .map(|p| p.replicas)
            .sum()
        {
            0 => self.st.replicas.len(),
            n => n,
        };
        let pools = &self.cfg.pools;
        // An autoscaled pool's replica-time is the time its replicas were up.
        let up: Vec<Option<u128>> = (0..pools.len())
            .map(|p| pools[p].scale.as_ref().map(|_| self.up_ns(p, end)))
            .collect();
        let replica_ns = if self.cfg.autoscales {
            let used = pools.iter().any(|p| p.used);
            pools
                .iter()
                .zip(&up)
                .filter(|(p, _)| p.used || !used)
                .map(|(p, u)| u.map_or(end as f64 * p.replicas as f64, |u| u as f64))
                .sum()
        } else {
            end as f64 * replicas as f64
        };
        // What the GPUs could have done while busy: FLOP and byte capacity.
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
        let ratio = |num: f64, den: f64| if den > 0.0 { num / den } else { 0.0 };
        let goodput_requests = rec.overall.slo_met;
        // A pool is paid by the hour, busy or idle, but only if some route reaches it.
        // The most replicas up at once: a fixed pool's all, an autoscaled
        // one's peak.
        let peak = |i: usize| self.st.scaling[i].peak_up * pools[i].gpus_per_replica;
        let billed_at = |i: usize| if pools[i].used { peak(i) } else { 0 };
        let gpus: u32 = (0..pools.len()).map(billed_at).sum();
        let usd_per_gpu_hour = match pools.as_slice() {
            [only] => only.usd_per_gpu_hour,
            _ if gpus == 0 => pools[0].usd_per_gpu_hour,
            _ => {
                (0..pools.len())
                    .map(|i| f64::from(billed_at(i)) * pools[i].usd_per_gpu_hour)
                    .sum::<f64>()
                    / f64::from(gpus)
            }
        };
        // A fixed pool is paid for every replica all the time; an
        // autoscaled one for its replica-hours up.
        let pool_usd = |i: usize| {
            let p = &pools[i];
            match up[i] {
                Some(ns) if p.used => {
                    super::autoscale::hours(ns) * f64::from(p.gpus_per_replica) * p.usd_per_gpu_hour
                }
                Some(_) => 0.0,
                None => f64::from(billed_at(i)) * p.usd_per_gpu_hour * secs / 3600.0,
            }
        };
        let pool_usd_per_month = |i: usize| {
            let p = &pools[i];
            match up[i] {
                Some(ns) if p.used => {
                    ns as f64 / end as f64
                        * f64::from(p.gpus_per_replica)
                        * p.usd_per_gpu_hour
                        * HOURS_PER_MONTH
                }
                Some(_) => 0.0,
                None => f64::from(billed_at(i)) * p.usd_per_gpu_hour * HOURS_PER_MONTH,
            }
        };
        let fleet_usd = (0..pools.len()).map(pool_usd).fold(0.0, |a, b| a + b);
        // The GPU-seconds each pool was paid for, which draw power.
        let up_gpu_s = |i: usize| {
            let p = &pools[i];
            match up[i] {
                Some(ns) if p.used => ns as f64 / NS_PER_S * f64::from(p.gpus_per_replica),
                Some(_) => 0.0,
                None => f64::from(billed_at(i)) * secs,
            }
        };
        let month_factor = HOURS_PER_MONTH * 3600.0 / secs;
        let energy = self.energy(rec, month_factor, up_gpu_s);
        let electricity_usd = energy.map_or(0.0, |e| e.usd);
        // API spend scales to a month from the simulated time; with a batch
        // tier, whose answers come up to a window after the last request,
        // from the time requests arrived over instead (the spend is theirs).
        let api_secs = match &self.api {
            Some(a) if a.tiers.iter().any(|t| t.batch.is_some()) => {
                secs.min((self.cfg.duration_ns as f64 / NS_PER_S).max(1e-9))
            }
            _ => secs,
        };
        let api = self
            .api
            .as_ref()
            .map(|a| a.report(api_secs, HOURS_PER_MONTH));
        let api_usd = api.as_ref().map_or(0.0, |a| a.usd);
        let total_usd = fleet_usd + api_usd + electricity_usd;
        let per_mtok = |tokens: u64| (tokens > 0).then(|| total_usd / tokens as f64 * 1e6);
        if let Some(e) = &rec.too_large_example {
            warnings.push(format!(
                "{} request(s) failed because they can never fit the rate limits or the batch queue ({e})",
                api.as_ref().map_or(0, |a| a.failed_too_large)
            ));
        }
        let counts = Counts {
            arrived: rec.arrived,
            completed: rec.completed,
            rejected: rec.rejected,
            failed: rec.failed,
            timed_out: rec.timed_out,
            in_flight: self.in_flight(),
            tasks_completed: rec.tasks_completed,
        };
        Report {
            version: REPORT_VERSION,
            warnings,
            complete: self.st.stopped.is_none() && self.st.events.is_empty(),
            arrivals_left_out: self.st.left_out,
            sim_time_s: secs,
            events: self.st.processed,
            requests: counts,
            overall: rec.overall.report("all", month_factor),
            per_class: rec
                .per_class
                .iter()
                .zip(&self.cfg.classes)
                .map(|(m, k)| m.report(&k.name, month_factor))
                .collect(),
            throughput: Throughput {
                input_tokens_per_s: rec.input_tokens_done as f64 / secs,
                output_tokens_per_s: rec.output_tokens_done as f64 / secs,
                requests_per_s: rec.completed as f64 / secs,
                goodput_requests_per_s: goodput_requests as f64 / secs,
                goodput_fraction: (rec.arrived > 0)
                    .then(|| goodput_requests as f64 / rec.arrived as f64),
            },
            utilisation: Utilisation {
                gpu_busy_fraction: ratio(busy, replica_ns),
                mean_batch_size: ratio(rec.batch_area, busy),
                kv_use_mean: ratio(rec.kv_area, busy),
                kv_use_peak: rec.kv_peak,
                peak_batch: rec.peak_batch,
                preemptions: rec.preemptions,
                forward_passes: rec.passes,
                mfu: ratio(rec.flops, flop_capacity / NS_PER_S),
                bandwidth_utilisation: ratio(rec.bytes, byte_capacity / NS_PER_S),
                prefix_cache_hit_rate: ratio(
                    rec.cached_prompt_tokens as f64,
                    rec.prompt_tokens as f64,
                ),
                kv_capacity_tokens: kv_capacity_tokens(&pools[0]),
            },
            series: rec.windows.series(
                end,
                replicas as u32,
                self.api.is_some(),
                rec.reasoning,
                self.cfg.autoscales,
            ),
            physical_limit: {
                // Every billed pool's replicas at their bound, together.
                let mut limited = pools
                    .iter()
                    .zip(&self.st.scaling)
                    // A prefill pool generates no output tokens.
                    .filter(|(p, _)| p.used && p.disaggregation.is_none())
                    .filter_map(|(p, s)| p.limit.map(|l| (l, s.peak_up as usize)));
                limited.next().map(|(l, n)| {
                    let bound = limited.fold(l.output_tokens_per_s * n as f64, |b, (l, n)| {
                        b + l.output_tokens_per_s * n as f64
                    });
                    PhysicalLimit {
                        output_tokens_per_s: bound,
                        achieved_fraction: ratio(rec.output_tokens_done as f64 / secs, bound),
                        ..l
                    }
                })
            },
            cost: Cost {
                gpus,
                usd_per_gpu_hour,
                fleet_usd,
                api_usd,
                total_usd,
                usd_per_mtok_output: per_mtok(rec.output_tokens_done),
                usd_per_mtok_total: per_mtok(rec.output_tokens_done + rec.input_tokens_done),
                usd_per_request: (rec.completed > 0).then(|| total_usd / rec.completed as f64),
                usd_per_month: (0..pools.len())
                    .map(pool_usd_per_month)
                    .fold(0.0, |a, b| a + b)
                    + api.as_ref().map_or(0.0, |a| a.usd_per_month)
                    + energy.map_or(0.0, |e| e.usd_per_month),
                electricity_usd,
            },
            energy,
            api,
            distribution: {
                let quantiles = crate::report::distribution_quantiles();
                Distribution {
                    ttft_ms: rec.overall.ttft.quantiles_ms(&quantiles),
                    e2e_ms: rec.overall.e2e.quantiles_ms(&quantiles),
                    quantiles,
                }
            },
            slo: self.cfg.slo.clone(),
            stages: rec
                .stages
                .iter()
                .map(|st| {
                    let secs = (st.end_ns - st.start_ns).max(1) as f64 / NS_PER_S;
                    StageReport {
                        start_s: st.start_ns as f64 / NS_PER_S,
                        end_s: st.end_ns as f64 / NS_PER_S,
                        rate_per_s: st.rate_per_s,
                        completed: st.completed,
                        ttft: st.ttft.stats(),
                        tpot: st.tpot.stats(),
                        e2e: st.e2e.stats(),
                        first_visible: st.first_visible(),
                        output_tokens_per_s: st.output_tokens as f64 / secs,
                    }
                })
                .collect(),
            pools: pools
                .iter()
                .zip(&rec.pools)
                .enumerate()
                .map(|(i, (p, m))| {
                    let busy = m.busy_ns as f64;
                    let usd = pool_usd(i);
                    let replica_ns = up[i].map_or(end as f64 * p.replicas as f64, |u| u as f64);
                    PoolReport {
                        name: p.name.clone(),
                        prefills_for: p
                            .disaggregation
                            .map(|h| pools[usize::from(h.to)].name.clone()),
                        hardware: p.hardware.clone(),
                        // Autoscaled: the most up at once.
                        gpus: peak(i),
                        completed: m.completed,
                        gpu_busy_fraction: ratio(busy, replica_ns),
                        replica_hours: replica_ns / NS_PER_S / 3600.0,
                        replicas_mean: replica_ns / end as f64,
                        replicas_peak: self.st.scaling[i].peak_up,
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
                        usd_per_month: pool_usd_per_month(i),
                        usd_per_mtok_output: (m.output_tokens > 0)
                            .then(|| usd / m.output_tokens as f64 * 1e6),
                    }
                })
                .collect(),
            speculative: pools
                .iter()
                .find_map(|p| p.speculative.as_ref())
                .map(|spec| crate::report::SpeculativeReport {
                    tokens_per_step: (rec.speculative_steps > 0)
                        .then(|| rec.speculative_tokens as f64 / rec.speculative_steps as f64),
                    expected_tokens_per_step: spec.mean,
                }),
            disaggregation: pools.iter().any(|p| p.disaggregation.is_some()).then(|| {
                crate::report::DisaggregationReport {
                    transfers: rec.disaggregation.transfers,
                    transfer: rec.disaggregation.time.stats(),
                    gb_moved: rec.disaggregation.bytes_moved / 1e9,
                    in_flight_gb_mean: rec.disaggregation.mean_in_flight(end) / 1e9,
                    in_flight_gb_peak: rec.disaggregation.peak / 1e9,
                }
            }),
        }
    }
}

/// One replica's KV capacity in tokens (0 for the abstract server).
fn kv_capacity_tokens(p: &super::pools::PoolCfg) -> u64 {
    if matches!(p.service, Service::Physics(_)) {
        p.kv_blocks * BLOCK
    } else {
        0
    }
}
