//! The engine against exact queueing-theory results (reference §6), each over
//! ≥ 10⁶ requests with a textbook service time in place of the GPU model.

use crate::{assert_close, run, textbook};
use sim_core::dist::Dist;
use sim_core::scenario::{Batching, Router, ServiceModel};

const N: f64 = 1_000_000.0;

/// One textbook time unit is 1 ms of simulated time, so a million requests fit in
/// a scenario's arrival window (at most a week).
const UNIT_S: f64 = 1e-3;

/// A reported latency in textbook time units.
fn units(ms: Option<f64>) -> f64 {
    ms.expect("samples recorded") / 1000.0 / UNIT_S
}

fn exp(mean_units: f64) -> Dist {
    Dist::Exponential {
        mean: mean_units * UNIT_S,
    }
}

#[test]
fn m_m_1_mean_and_p95_sojourn() {
    // λ = 0.8, μ = 1: W = 5, W_q = 4, sojourn p95 = 14.979.
    let s = textbook(
        0.8 / UNIT_S,
        1,
        Router::RoundRobin,
        Batching::None,
        exp(1.0),
        N,
    );
    let r = run(&s).expect("valid");
    assert!(
        r.requests.completed as f64 >= 0.99 * N,
        "{} completed",
        r.requests.completed
    );
    assert_close("M/M/1 W", units(r.overall.e2e.mean_ms), 5.0, 0.02);
    assert_close("M/M/1 W_q", units(r.overall.queue_wait.mean_ms), 4.0, 0.02);
    assert_close(
        "M/M/1 sojourn p95",
        units(r.overall.e2e.p95_ms),
        14.979,
        0.02,
    );
}

#[test]
fn m_d_1_mean_wait() {
    // λ = 0.8, D = 1: W_q = ρD / (2(1 − ρ)) = 2.0.
    let s = textbook(
        0.8 / UNIT_S,
        1,
        Router::RoundRobin,
        Batching::None,
        Dist::Fixed { value: UNIT_S },
        N,
    );
    let r = run(&s).expect("valid");
    assert_close("M/D/1 W_q", units(r.overall.queue_wait.mean_ms), 2.0, 0.02);
}

#[test]
fn m_m_3_erlang_c() {
    // c = 3, λ = 0.2, μ = 0.1: W_q = 4.444, wait p95 = 21.848.
    let s = textbook(
        0.2 / UNIT_S,
        3,
        Router::CentralQueue,
        Batching::None,
        exp(10.0),
        N,
    );
    let r = run(&s).expect("valid");
    assert_close(
        "M/M/3 W_q",
        units(r.overall.queue_wait.mean_ms),
        4.444,
        0.02,
    );
    assert_close(
        "M/M/3 wait p95",
        units(r.overall.queue_wait.p95_ms),
        21.848,
        0.02,
    );
}

#[test]
fn bulk_service_static_batches() {
    // Batches of up to K = 4, exponential(μ = 1) per batch, λ = 3: W = 3.552.
    let batching = Batching::Static {
        max_batch: 4,
        max_wait_ms: 0.0,
    };
    let s = textbook(3.0 / UNIT_S, 1, Router::RoundRobin, batching, exp(1.0), N);
    let r = run(&s).expect("valid");
    assert_close("bulk static W", units(r.overall.e2e.mean_ms), 3.552, 0.02);
}

#[test]
fn bulk_service_joining_a_batch_in_progress() {
    // Same, but arrivals join a batch in service while it has room: W = 2.648.
    let batching = Batching::Static {
        max_batch: 4,
        max_wait_ms: 0.0,
    };
    let mut s = textbook(3.0 / UNIT_S, 1, Router::RoundRobin, batching, exp(1.0), N);
    s.serving.service = ServiceModel::Abstract {
        time_s: exp(1.0),
        join_in_progress: true,
    };
    let r = run(&s).expect("valid");
    assert_close(
        "bulk join-in-progress W",
        units(r.overall.e2e.mean_ms),
        2.648,
        0.02,
    );
}

#[test]
fn a_batch_timer_adds_half_its_period() {
    // Light load, capacity never binding: a flush every T adds ≈ T/2 of wait.
    // A service of 10⁻⁴ units keeps the server out of the way.
    let batching = Batching::Static {
        max_batch: 1_000,
        max_wait_ms: 2.0 * UNIT_S * 1000.0,
    };
    let s = textbook(
        0.05 / UNIT_S,
        1,
        Router::RoundRobin,
        batching,
        Dist::Fixed {
            value: 1e-4 * UNIT_S,
        },
        200_000.0,
    );
    let r = run(&s).expect("valid");
    // This policy starts its clock at the oldest waiting request (like Triton's
    // max_queue_delay), not on a free-running tick: the opener waits T and the
    // λT others who join it wait T/2 on average, so
    // W_q = (T + λT · T/2) / (1 + λT) = 2.1 / 1.1 units.
    assert_close(
        "timer wait",
        units(r.overall.queue_wait.mean_ms),
        2.1 / 1.1,
        0.02,
    );
}
