//! What a run's GPU pools are paid for: the time each pool's replicas were
//! up, the GPUs billed and their dollars, over the run and a month.
//!
//! A pool is paid by the hour, busy or idle, but only if some route reaches
//! it: a fixed pool for every replica all the time, an autoscaled one for its
//! replica-hours up. The report, the energy and the pool rows all read their
//! GPU-time from here, so they never disagree.

use super::pools::PoolCfg;
use super::{NS_PER_S, Simulation};
use crate::report::HOURS_PER_MONTH;

/// The fleet's bill at the end of the measured window.
pub(super) struct Bill<'a> {
    pools: &'a [PoolCfg],
    /// An autoscaled pool's replica-nanoseconds up; None for a fixed pool.
    up: Vec<Option<u128>>,
    /// The most replicas of each pool up at once.
    peak_up: Vec<u32>,
    /// The end of the measured window, in ns and in seconds.
    end: u64,
    secs: f64,
}

impl<'a> Bill<'a> {
    pub(super) fn new(sim: &'a Simulation, end: u64, secs: f64) -> Self {
        let pools = sim.cfg.pools.as_slice();
        debug_assert_eq!(
            sim.st.scaling.len(),
            pools.len(),
            "one scaling state per pool"
        );
        Bill {
            pools,
            up: (0..pools.len())
                .map(|p| pools[p].scale.as_ref().map(|_| sim.up_ns(p, end)))
                .collect(),
            peak_up: sim.st.scaling.iter().map(|s| s.peak_up).collect(),
            end,
            secs,
        }
    }

    /// Pool `i`'s GPUs at its peak: a fixed pool's all, an autoscaled one's
    /// most up at once.
    pub(super) fn peak_gpus(&self, i: usize) -> u32 {
        self.peak_up[i] * self.pools[i].gpus_per_replica
    }

    pub(super) fn peak_replicas(&self, i: usize) -> u32 {
        self.peak_up[i]
    }

    /// Pool `i`'s GPUs billed: its peak if some route reaches it, else none.
    fn billed_at(&self, i: usize) -> u32 {
        if self.pools[i].used {
            self.peak_gpus(i)
        } else {
            0
        }
    }

    /// The GPUs billed across the pools.
    pub(super) fn gpus(&self) -> u32 {
        (0..self.pools.len()).map(|i| self.billed_at(i)).sum()
    }

    /// The price of a GPU-hour: the one pool's, or the billed GPUs' mean.
    pub(super) fn usd_per_gpu_hour(&self) -> f64 {
        let pools = self.pools;
        let gpus = self.gpus();
        match pools {
            [only] => only.usd_per_gpu_hour,
            _ if gpus == 0 => pools[0].usd_per_gpu_hour,
            _ => {
                (0..pools.len())
                    .map(|i| f64::from(self.billed_at(i)) * pools[i].usd_per_gpu_hour)
                    .sum::<f64>()
                    / f64::from(gpus)
            }
        }
    }

    /// Pool `i`'s dollars over the run.
    pub(super) fn pool_usd(&self, i: usize) -> f64 {
        let p = &self.pools[i];
        match self.up[i] {
            Some(ns) if p.used => {
                super::autoscale::hours(ns) * f64::from(p.gpus_per_replica) * p.usd_per_gpu_hour
            }
            Some(_) => 0.0,
            None => f64::from(self.billed_at(i)) * p.usd_per_gpu_hour * self.secs / 3600.0,
        }
    }

    /// Pool `i`'s dollars a month at the run's mean replicas up.
    pub(super) fn pool_usd_per_month(&self, i: usize) -> f64 {
        let p = &self.pools[i];
        match self.up[i] {
            Some(ns) if p.used => {
                ns as f64 / self.end as f64
                    * f64::from(p.gpus_per_replica)
                    * p.usd_per_gpu_hour
                    * HOURS_PER_MONTH
            }
            Some(_) => 0.0,
            None => f64::from(self.billed_at(i)) * p.usd_per_gpu_hour * HOURS_PER_MONTH,
        }
    }

    /// Every pool's dollars over the run.
    pub(super) fn fleet_usd(&self) -> f64 {
        (0..self.pools.len())
            .map(|i| self.pool_usd(i))
            .fold(0.0, |a, b| a + b)
    }

    /// Every pool's dollars a month.
    pub(super) fn fleet_usd_per_month(&self) -> f64 {
        (0..self.pools.len())
            .map(|i| self.pool_usd_per_month(i))
            .fold(0.0, |a, b| a + b)
    }

    /// The GPU-seconds pool `i` was paid for, which draw power.
    pub(super) fn up_gpu_s(&self, i: usize) -> f64 {
        let p = &self.pools[i];
        match self.up[i] {
            Some(ns) if p.used => ns as f64 / NS_PER_S * f64::from(p.gpus_per_replica),
            Some(_) => 0.0,
            None => f64::from(self.billed_at(i)) * self.secs,
        }
    }

    /// Pool `i`'s replica-nanoseconds: up, or all of its replicas all the time.
    pub(super) fn replica_ns(&self, i: usize) -> f64 {
        self.up[i].map_or(self.end as f64 * self.pools[i].replicas as f64, |u| {
            u as f64
        })
    }

    /// The replica-nanoseconds the busy fraction is over: the reached
    /// pools' (all when none is), autoscaled pools' as up.
    pub(super) fn fleet_replica_ns(&self, autoscales: bool, replicas: usize) -> f64 {
        if autoscales {
            let used = self.pools.iter().any(|p| p.used);
            (0..self.pools.len())
                .filter(|&i| self.pools[i].used || !used)
                .map(|i| self.replica_ns(i))
                .sum()
        } else {
            self.end as f64 * replicas as f64
        }
    }
}
