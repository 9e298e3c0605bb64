//! The run's limits: the simulator's request bound, `limits.max_events`
//! and `limits.max_sim_time_s`. A limit that stops a run says which, where,
//! and what it left out (`Report::arrivals_left_out`, the requests still in
//! flight); validation refuses a time limit inside the arrival window, so a
//! run stopped by time has simulated every arrival.

use super::{NS_PER_S, Simulation};
use crate::scenario::bounds;

impl Simulation {
    /// Whether a limit stops the run before the event at `next` (ns); if
    /// so the run is stopped, saying why.
    pub(super) fn limit_reached(&mut self, next: u64) -> bool {
        if self.rec.arrived >= bounds::REQUESTS {
            self.limit_stop(format!(
                "stopped after {} requests (the simulator's bound)",
                bounds::REQUESTS
            ));
            return true;
        }
        if self.st.processed >= self.cfg.max_events {
            self.limit_stop(format!(
                "stopped after limits.max_events = {} events",
                self.cfg.max_events
            ));
            return true;
        }
        if next > self.cfg.max_sim_ns {
            self.limit_stop(format!(
                "stopped at limits.max_sim_time_s = {} s",
                self.cfg.max_sim_ns as f64 / NS_PER_S
            ));
            return true;
        }
        false
    }

    /// Stop the run at a limit, saying which, where, and what it left out:
    /// the share of the arrival window's requests that never arrived, and
    /// the requests still waiting or running.
    fn limit_stop(&mut self, what: String) {
        debug_assert!(self.st.stopped.is_none(), "a run stops at one limit, once");
        let now_s = self.st.now as f64 / NS_PER_S;
        let duration_s = self.cfg.duration_ns as f64 / NS_PER_S;
        let left_out = match &self.st.feed {
            // A trace: the share of its requests not yet read.
            Some(f) if now_s < duration_s => {
                (f.stats.requests - f.fed.min(f.stats.requests)) as f64
                    / f.stats.requests.max(1) as f64
            }
            Some(_) => 0.0,
            None => self.cfg.arrival.left_out(now_s, duration_s),
        };
        debug_assert!((0.0..=1.0).contains(&left_out), "a share left out");
        let in_flight = self.in_flight();
        let mut why = format!("{what} at {now_s:.1} s of simulated time");
        if left_out > 0.0 {
            why += &format!(
                ", {} before the arrival window's end: {:.1} % of its requests never arrived",
                crate::format::duration_ms(Some(
                    self.cfg.duration_ns.saturating_sub(self.st.now) as f64 / 1e6
                )),
                100.0 * left_out
            );
            self.st.left_out = Some(left_out);
        }
        if in_flight > 0 {
            why += &format!(", {in_flight} still waiting or running");
        }
        why += "; the numbers cover the partial run";
        self.stop(why);
    }
}
