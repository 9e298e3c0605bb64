//! The energy a run's GPUs drew, from their power figures and the work of
//! their passes ([`crate::physics::Power`]), and what it cost.

use super::policy::Service;
use super::recorder::Recorder;
use super::{NS_PER_S, Simulation};
use crate::report::Energy;

/// Joules in a kWh.
const J_PER_KWH: f64 = 3.6e6;

impl Simulation {
    /// The energy of the pools some route reaches, and its electricity cost
    /// over the simulated time; None when no route reaches a pool (a run on
    /// hosted APIs alone has no GPUs of its own), or one of them is not
    /// timed by the GPU physics or its GPU states no power. `up_gpu_s(i)` is pool `i`'s
    /// GPU-seconds up (paid for), as the cost counts them; `month_factor`
    /// scales the run to a month, as the report's costs are.
    pub(super) fn energy(
        &self,
        rec: &Recorder,
        month_factor: f64,
        up_gpu_s: impl Fn(usize) -> f64,
    ) -> Option<Energy> {
        let pools = &self.cfg.pools;
        if !pools.iter().any(|p| p.used) {
            return None;
        }
        let (mut joules, mut usd, mut gpu_s) = (0.0, 0.0, 0.0);
        for (i, p) in pools.iter().enumerate().filter(|(_, p)| p.used) {
            let (Service::Physics(_), Some(power)) = (&p.service, p.power) else {
                return None;
            };
            debug_assert!(
                0.0 <= power.idle_w && power.idle_w <= power.board_w,
                "a GPU idles at or below its board power"
            );
            let gpus = f64::from(p.gpus_per_replica.max(1));
            let span_ns = rec.pools.get(i).map_or(rec.span_ns, |pm| pm.span_ns);
            let up = up_gpu_s(i);
            let j = power.energy_j(up, span_ns / NS_PER_S * gpus);
            joules += j;
            usd += j / J_PER_KWH * p.usd_per_kwh;
            gpu_s += up;
        }
        let tokens = rec.output_tokens_done;
        Some(Energy {
            kwh: joules / J_PER_KWH,
            mean_watts_per_gpu: if gpu_s > 0.0 { joules / gpu_s } else { 0.0 },
            joules_per_output_token: (tokens > 0).then(|| joules / tokens as f64),
            usd,
            kwh_per_month: joules / J_PER_KWH * month_factor,
            usd_per_month: usd * month_factor,
        })
    }
}
