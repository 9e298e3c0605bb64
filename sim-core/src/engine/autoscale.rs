//! Autoscaling a pool: every interval the signal is read over the replicas
//! serving and a count asked for (Kubernetes' HPA rule); replicas start,
//! serve once their cold start ends, drain and stop. Each replica is billed
//! from its start to its stop.
//!
//! An autoscaled pool has `max_replicas` slots in the fleet's array; a slot
//! is off, starting, serving or draining (serving its own work, taking no
//! new). Requests that reach a pool with none serving wait in the pool's
//! holding queue until one is.

use super::replica::Up;
use super::request::ReqId;
use super::{Event, NS_PER_S, Simulation, later, secs_to_ns};
use crate::scenario::{Autoscale, ENGINE_START_S, LOAD_GB_PER_S, ScaleSignal, ServiceModel};
use std::collections::VecDeque;

/// Kubernetes HPA's default tolerance: no change while the signal is
/// within 10 % of its target.
const TOLERANCE: f64 = 0.1;

/// An autoscaler's fixed settings.
pub(super) struct ScaleCfg {
    signal: ScaleSignal,
    target: f64,
    min: u32,
    max: u32,
    interval_ns: u64,
    down_after_ns: u64,
    /// Weights at the load bandwidth, then the engine's start.
    pub(super) cold_start_ns: u64,
}

impl ScaleCfg {
    pub(super) fn new(a: &Autoscale, weight_bytes: f64, service: &ServiceModel) -> Self {
        let load = match service {
            ServiceModel::Physics => {
                weight_bytes / (a.load_gb_per_s.unwrap_or(LOAD_GB_PER_S) * 1e9)
            }
            ServiceModel::Abstract { .. } => 0.0,
        };
        ScaleCfg {
            signal: a.signal,
            target: a.target,
            min: a.min_replicas,
            max: a.max_replicas,
            interval_ns: secs_to_ns(a.interval_s).max(1),
            down_after_ns: secs_to_ns(a.scale_down_after_s),
            cold_start_ns: secs_to_ns(load + a.engine_start_s.unwrap_or(ENGINE_START_S)),
        }
    }
}

/// An autoscaled pool as the run goes.
#[derive(Default)]
pub(super) struct PoolScale {
    /// Slots serving, and up (starting, serving or draining).
    pub(super) serving: u32,
    pub(super) up: u32,
    /// Most slots up at once.
    pub(super) peak_up: u32,
    /// Replica-nanoseconds billed by slots already stopped.
    pub(super) stopped_ns: u128,
    /// Since when fewer replicas have been asked for than are up.
    pub(super) below_since: Option<u64>,
    /// The pool's busy time at the last reading (for the GPU-busy signal).
    pub(super) busy_at_check: u64,
    /// Requests that arrived while no replica served (per-replica routers).
    pub(super) holding: VecDeque<ReqId>,
}

impl PoolScale {
    /// A pool at the start: its first replicas up and serving.
    pub(super) fn new(initial: u32) -> Self {
        let n = initial;
        PoolScale {
            serving: n,
            up: n,
            peak_up: n,
            ..PoolScale::default()
        }
    }
}

impl Simulation {
    /// Start the autoscalers' clocks (at time 0, after the first replicas).
    pub(super) fn start_autoscalers(&mut self) {
        for p in 0..self.cfg.pools.len() {
            let Some(at) = self.cfg.pools[p].scale.as_ref().map(|s| s.interval_ns) else {
                continue;
            };
            // Slots off at the start are never routed to.
            for r in self.cfg.pools[p].range() {
                self.touch(r);
            }
            self.st
                .events
                .push(at, Event::ScaleCheck { pool: p as u16 });
            self.st.scale_checks += 1;
        }
    }

    /// Replica-nanoseconds pool `p` has been billed for by `t`.
    pub(super) fn up_ns(&self, p: usize, t: u64) -> u128 {
        let pool = &self.cfg.pools[p];
        let running: u128 = pool
            .range()
            .map(|r| &self.st.replicas[r])
            .filter(|rep| rep.up != Up::Off)
            .map(|rep| u128::from(t.saturating_sub(rep.up_since)))
            .sum();
        self.st.scaling[p].stopped_ns + running
    }

    /// Read pool `p`'s signal and start or stop replicas.
    pub(super) fn scale_check(&mut self, p: usize) {
        self.st.scale_checks -= 1;
        let Some(sc) = &self.cfg.pools[p].scale else {
            return;
        };
        let (signal, target, min, max) = (sc.signal, sc.target, sc.min, sc.max);
        let (interval, down_after) = (sc.interval_ns, sc.down_after_ns);
        for r in self.cfg.pools[p].range() {
            self.maybe_stop_drained(r);
        }
        let value = self.signal(p, signal, interval);
        // Draining replicas are on their way out: not counted as capacity.
        let current = self.st.scaling[p].up - self.draining(p);
        let waiting = self.pool_waiting(p);
        let wanted = if current == 0 {
            u32::from(waiting > 0)
        } else if (value / target - 1.0).abs() <= TOLERANCE {
            current
        } else {
            libm::ceil(f64::from(current) * value / target).min(f64::from(max)) as u32
        };
        let wanted = wanted.clamp(min, max);
        let now = self.st.now;
        if wanted > current {
            self.st.scaling[p].below_since = None;
            self.scale_up(p, wanted - current);
        } else if wanted < current {
            let since = *self.st.scaling[p].below_since.get_or_insert(now);
            if now - since >= down_after {
                self.st.scaling[p].below_since = None;
                self.scale_down(p, current - wanted);
            }
        } else {
            self.st.scaling[p].below_since = None;
        }
        self.st.scaling[p].busy_at_check = self.pool_busy(p);
        // Keep reading through the arrival window, and after it while
        // anything else can still happen.
        if now < self.cfg.duration_ns
            || self.st.events.len() > self.st.scale_checks
            || self.in_flight() > 0
        {
            self.st
                .events
                .push(later(now, interval), Event::ScaleCheck { pool: p as u16 });
            self.st.scale_checks += 1;
        }
    }

    fn signal(&self, p: usize, signal: ScaleSignal, interval: u64) -> f64 {
        let pool = &self.cfg.pools[p];
        let serving = f64::from(self.st.scaling[p].serving.max(1));
        match signal {
            ScaleSignal::QueuePerReplica => self.pool_waiting(p) as f64 / serving,
            ScaleSignal::KvUse => {
                let used: u64 = pool
                    .range()
                    .filter(|&r| self.st.replicas[r].up == Up::Serving)
                    .map(|r| self.st.replicas[r].kv_used)
                    .sum();
                used as f64 / (pool.kv_blocks as f64 * serving)
            }
            ScaleSignal::GpuBusy => {
                let busy = self.pool_busy(p) - self.st.scaling[p].busy_at_check;
                busy as f64 / (interval as f64 * serving)
            }
        }
    }

    /// Requests waiting in pool `p`: its queues and its holding queue.
    pub(super) fn pool_waiting(&self, p: usize) -> u64 {
        let pool = &self.cfg.pools[p];
        let queued: u64 = pool.range().map(|r| self.st.queues[r].len() as u64).sum();
        queued + self.st.scaling.get(p).map_or(0, |s| s.holding.len() as u64)
    }

    fn pool_busy(&self, p: usize) -> u64 {
        self.cfg.pools[p]
            .range()
            .map(|r| self.st.replicas[r].busy_ns)
            .sum()
    }

    fn draining(&self, p: usize) -> u32 {
        self.cfg.pools[p]
            .range()
            .filter(|&r| self.st.replicas[r].up == Up::Draining)
            .count() as u32
    }

    /// `n` more replicas: draining ones back to serving first (they are
    /// warm), then slots off start cold.
    fn scale_up(&mut self, p: usize, mut n: u32) {
        let range = self.cfg.pools[p].range();
        for r in range.clone() {
            if n > 0 && self.st.replicas[r].up == Up::Draining {
                self.st.replicas[r].up = Up::Serving;
                self.st.scaling[p].serving += 1;
                self.touch(r);
                n -= 1;
            }
        }
        let cold = self.cfg.pools[p]
            .scale
            .as_ref()
            .map_or(0, |s| s.cold_start_ns);
        let now = self.st.now;
        for r in range {
            if n == 0 {
                break;
            }
            if self.st.replicas[r].up == Up::Off {
                let rep = &mut self.st.replicas[r];
                rep.up = Up::Starting;
                rep.up_since = now;
                rep.up_epoch = rep.up_epoch.wrapping_add(1);
                let epoch = rep.up_epoch;
                let s = &mut self.st.scaling[p];
                s.up += 1;
                s.peak_up = s.peak_up.max(s.up);
                self.st.up_total += 1;
                self.st.events.push(
                    later(now, cold.max(1)),
                    Event::ReplicaReady {
                        replica: r as u32,
                        epoch,
                    },
                );
                n -= 1;
            }
        }
    }

    /// `n` fewer replicas: starting ones are cancelled, idle serving ones
    /// stop, and busy ones drain (the least loaded first).
    fn scale_down(&mut self, p: usize, mut n: u32) {
        let range = self.cfg.pools[p].range();
        for up in [Up::Starting, Up::Serving] {
            for r in range.clone().rev() {
                if n == 0 {
                    return;
                }
                let rep = &self.st.replicas[r];
                if rep.up == up && rep.outstanding == 0 && !rep.busy && self.st.queues[r].is_empty()
                {
                    self.stop_replica(r);
                    n -= 1;
                }
            }
        }
        // What is left is busy: drain the least loaded. (A central queue
        // hands work to whichever replica is free, so its replicas stop
        // only when idle.)
        let central = self.cfg.pools[p].router == crate::scenario::Router::CentralQueue;
        while n > 0 && !central {
            let Some(r) = range
                .clone()
                .filter(|&r| self.st.replicas[r].up == Up::Serving)
                .min_by_key(|&r| (self.st.replicas[r].outstanding, std::cmp::Reverse(r)))
            else {
                return;
            };
            self.st.replicas[r].up = Up::Draining;
            self.st.scaling[p].serving -= 1;
            self.touch(r);
            n -= 1;
        }
    }

    /// Slot `r` stops: its bill ends and its cache is gone.
    fn stop_replica(&mut self, r: usize) {
        let p = usize::from(self.st.replicas[r].pool);
        let now = self.st.now;
        let rep = &mut self.st.replicas[r];
        debug_assert!(
            rep.outstanding == 0 && rep.kv_used == 0,
            "stopping a replica with work"
        );
        if rep.up == Up::Serving {
            self.st.scaling[p].serving -= 1;
        }
        rep.up = Up::Off;
        rep.cache = Default::default();
        let span = u128::from(now - rep.up_since);
        let s = &mut self.st.scaling[p];
        s.up -= 1;
        s.stopped_ns += span;
        self.st.up_total -= 1;
        self.touch(r);
    }

    /// A starting replica's cold start ended: it serves from now.
    pub(super) fn replica_ready(&mut self, r: usize, epoch: u32) {
        let rep = &mut self.st.replicas[r];
        if rep.up != Up::Starting || rep.up_epoch != epoch {
            return; // cancelled before it was ready
        }
        rep.up = Up::Serving;
        let p = usize::from(rep.pool);
        self.st.scaling[p].serving += 1;
        self.touch(r);
        let pool = &self.cfg.pools[p];
        if pool.router == crate::scenario::Router::CentralQueue {
            self.try_start(r);
        }
        // What waited for a replica is routed now.
        while let Some(id) = self.st.scaling[p].holding.pop_front() {
            if self.st.requests[id].abandoned {
                self.drop_abandoned_waiting(id);
            } else {
                // `route` counts it as waiting again where it lands.
                self.st.waiting -= 1;
                self.route(id);
            }
        }
    }

    /// A draining replica whose work is done stops.
    pub(super) fn maybe_stop_drained(&mut self, r: usize) {
        let rep = &self.st.replicas[r];
        if rep.up == Up::Draining
            && rep.outstanding == 0
            && !rep.busy
            && self.st.queues[r].is_empty()
        {
            self.stop_replica(r);
        }
    }

    /// Hold request `id` for pool `p`, which has no replica serving.
    pub(super) fn hold(&mut self, p: usize, id: ReqId) {
        self.st.scaling[p].holding.push_back(id);
        self.st.waiting += 1;
    }
}

/// Replica-nanoseconds as replica-hours.
pub(super) fn hours(ns: u128) -> f64 {
    ns as f64 / NS_PER_S / 3600.0
}
