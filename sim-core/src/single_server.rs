//! A single first-come-first-served server fed by Poisson arrivals.
//!
//! The smallest honest simulation in the crate: it powers the foundation's
//! arrival-rate slider and doubles as an M/D/1 check of the random streams.
//! The full serving engine lives in [`crate::engine`].

use crate::rng::{Stream, StreamId};
use serde::{Deserialize, Serialize};

/// Nanoseconds per second, the unit of simulated time.
const NS_PER_S: u64 = 1_000_000_000;

/// Inputs of [`simulate`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SingleServer {
    /// Mean arrival rate, requests per second (Poisson).
    pub arrival_rate_per_s: f64,
    /// Fixed service time of one request, milliseconds.
    pub service_time_ms: f64,
    /// Length of the simulated window, seconds.
    pub duration_s: f64,
    /// Seed of the arrival stream.
    pub seed: u64,
}

/// Outputs of [`simulate`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SingleServerReport {
    /// Requests that arrived in the window.
    pub arrived: u64,
    /// Mean time spent waiting before service, milliseconds.
    pub mean_wait_ms: f64,
    /// Fraction of the window the server was busy.
    pub utilisation: f64,
    /// Requests in the system (waiting or in service) sampled at evenly spaced instants.
    pub queue_depth: Vec<u32>,
}

/// Why [`simulate`] refused its input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidInput(pub String);

impl std::fmt::Display for InvalidInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidInput {}

/// Number of queue-depth samples in a report.
pub const DEPTH_SAMPLES: usize = 200;
/// Upper bound on arrivals simulated in one call, so a slider can never hang a tab.
pub const MAX_ARRIVALS: u64 = 2_000_000;

fn check(name: &str, value: f64, lo: f64, hi: f64, unit: &str) -> Result<(), InvalidInput> {
    if value.is_finite() && (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(InvalidInput(format!(
            "{name} must be {lo}..={hi} {unit}, got {value}"
        )))
    }
}

/// Simulate the queue and report its waiting time and depth over time.
pub fn simulate(input: &SingleServer) -> Result<SingleServerReport, InvalidInput> {
    check(
        "arrival_rate_per_s",
        input.arrival_rate_per_s,
        0.001,
        10_000.0,
        "req/s",
    )?;
    check(
        "service_time_ms",
        input.service_time_ms,
        0.001,
        600_000.0,
        "ms",
    )?;
    check("duration_s", input.duration_s, 0.001, 1_000_000.0, "s")?;
    let expected = input.arrival_rate_per_s * input.duration_s;
    if expected > MAX_ARRIVALS as f64 / 2.0 {
        return Err(InvalidInput(format!(
            "arrival_rate_per_s × duration_s must be at most {}, got {expected}",
            MAX_ARRIVALS / 2
        )));
    }

    let horizon_ns = (input.duration_s * NS_PER_S as f64) as u64;
    let service_ns = ((input.service_time_ms * 1e6) as u64).max(1);
    let mean_gap_ns = NS_PER_S as f64 / input.arrival_rate_per_s;
    let mut arrivals_rng = Stream::new(input.seed, StreamId::ARRIVALS);

    // Arrival and departure instants; with one FIFO server, departures are
    // monotone, so depth at t = arrivals ≤ t − departures ≤ t.
    let mut arrivals: Vec<u64> = Vec::new();
    let mut departures: Vec<u64> = Vec::new();
    let mut t = 0u64;
    let mut server_free_at = 0u64;
    let mut total_wait_ns: u128 = 0;
    let mut busy_ns: u64 = 0;
    while arrivals.len() < MAX_ARRIVALS as usize {
        let gap = arrivals_rng.exponential(mean_gap_ns) as u64;
        t = t.saturating_add(gap.max(1));
        if t >= horizon_ns {
            break;
        }
        let start = t.max(server_free_at);
        total_wait_ns += u128::from(start - t);
        server_free_at = start + service_ns;
        busy_ns += server_free_at
            .min(horizon_ns)
            .saturating_sub(start.min(horizon_ns));
        arrivals.push(t);
        departures.push(server_free_at);
    }

    let mut queue_depth = Vec::with_capacity(DEPTH_SAMPLES);
    let (mut a, mut d) = (0usize, 0usize);
    for i in 1..=DEPTH_SAMPLES as u64 {
        let at = horizon_ns / DEPTH_SAMPLES as u64 * i;
        while a < arrivals.len() && arrivals[a] <= at {
            a += 1;
        }
        while d < departures.len() && departures[d] <= at {
            d += 1;
        }
        queue_depth.push(u32::try_from(a - d).unwrap_or(u32::MAX));
    }

    let arrived = arrivals.len() as u64;
    Ok(SingleServerReport {
        arrived,
        mean_wait_ms: if arrived == 0 {
            0.0
        } else {
            total_wait_ns as f64 / arrived as f64 / 1e6
        },
        utilisation: busy_ns as f64 / horizon_ns as f64,
        queue_depth,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(rate: f64) -> SingleServer {
        SingleServer {
            arrival_rate_per_s: rate,
            service_time_ms: 1000.0,
            duration_s: 400_000.0,
            seed: 1,
        }
    }

    #[test]
    fn matches_the_m_d_1_mean_wait() {
        // λ = 0.8, D = 1 s: W_q = ρ·D / (2(1 − ρ)) = 2.0 s (reference §6).
        let r = simulate(&input(0.8)).expect("valid");
        assert!(r.arrived > 300_000);
        let w = r.mean_wait_ms / 1000.0;
        assert!((w - 2.0).abs() < 0.04, "W_q = {w}");
        assert!((r.utilisation - 0.8).abs() < 0.01);
    }

    #[test]
    fn more_load_means_a_longer_wait() {
        let mut small = input(0.3);
        small.duration_s = 5_000.0;
        let mut big = small.clone();
        big.arrival_rate_per_s = 0.9;
        let a = simulate(&small).expect("valid");
        let b = simulate(&big).expect("valid");
        assert!(b.mean_wait_ms > 3.0 * a.mean_wait_ms);
        assert_eq!(a.queue_depth.len(), DEPTH_SAMPLES);
    }

    #[test]
    fn rejects_bad_input_with_the_field_name() {
        for (rate, field) in [
            (f64::NAN, "arrival_rate_per_s"),
            (-1.0, "arrival_rate_per_s"),
        ] {
            let err = simulate(&SingleServer {
                arrival_rate_per_s: rate,
                ..input(1.0)
            })
            .expect_err("must reject");
            assert!(err.0.contains(field), "{err}");
        }
        let err = simulate(&SingleServer {
            arrival_rate_per_s: 10_000.0,
            duration_s: 1_000_000.0,
            ..input(1.0)
        })
        .expect_err("too many arrivals");
        assert!(err.0.contains("at most"), "{err}");
    }
}
