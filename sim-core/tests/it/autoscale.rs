//! Autoscaling a pool: replicas start on demand, serve only once their
//! cold start ends, stop after the load falls, and are billed for the
//! time they are up.

use crate::{fixed_class, run, textbook};
use proptest::prelude::*;
use sim_core::dist::Dist;
use sim_core::scenario::{
    Arrival, Autoscale, Batching, RatePoint, Router, ScaleSignal, Scenario, TraceRequest,
    TraceRequests,
};

fn autoscale(min: u32, max: u32) -> Autoscale {
    Autoscale {
        signal: ScaleSignal::QueuePerReplica,
        target: 1.0,
        min_replicas: min,
        max_replicas: max,
        interval_s: 10.0,
        scale_down_after_s: 30.0,
        load_gb_per_s: None,
        engine_start_s: Some(20.0),
    }
}

/// One request at 1 s on a pool scaled to zero, served in 1 s.
fn one_request() -> Scenario {
    let mut s = textbook(
        1.0,
        0,
        Router::LeastOutstanding,
        Batching::None,
        Dist::Fixed { value: 1.0 },
        100.0,
    );
    s.duration_s = 100.0;
    s.workload.classes = vec![fixed_class(1, 1)];
    let mut requests = TraceRequests::default();
    requests.push_request(TraceRequest {
        at_s: 1.0,
        input_tokens: 1,
        output_tokens: 1,
        class: 0,
        prefix_blocks: Vec::new(),
    });
    s.workload.arrival = Arrival::Trace {
        requests,
        prefix_block_tokens: None,
    };
    s.serving.autoscale = Some(autoscale(0, 1));
    s.serving.usd_per_gpu_hour = Some(3.6);
    s
}

#[test]
fn scaled_to_zero_a_request_waits_for_the_cold_start_and_the_bill_is_the_time_up() {
    // The reading at 10 s finds it waiting and starts a replica, serving
    // at 30 s (20 s engine start, no weights for the textbook server); it
    // is done at 31 s (the textbook server's first token comes at the end
    // of its service). The reading at 30 s, just after it was sent to the
    // replica, finds nothing waiting and wants none; 30 s later, at 60 s, the
    // replica stops: up from 10 s to 60 s, one GPU at $3.60/h = $0.05.
    let r = run(&one_request()).expect("valid");
    assert_eq!(r.requests.completed, 1);
    assert_eq!(
        r.overall.ttft.max_ms,
        Some(30_000.0),
        "9 s for the reading, 20 s for the start, 1 s of service (the textbook server's first token is at its end)"
    );
    let pool = &r.pools[0];
    assert_eq!(pool.replicas_peak, 1);
    assert!(
        (pool.replica_hours - 50.0 / 3600.0).abs() < 1e-12,
        "{} h",
        pool.replica_hours
    );
    assert!(
        (r.cost.fleet_usd - 0.05).abs() < 1e-12,
        "${}",
        r.cost.fleet_usd
    );
    assert!((pool.usd - r.cost.fleet_usd).abs() < 1e-15);
    assert_eq!(r.cost.gpus, 1, "the most GPUs up at once");
    // The series shows the replica up from 10 s to 60 s.
    let s = &r.series;
    let area: f64 = s.replicas_up.iter().map(|n| n * s.window_s).sum();
    assert!(
        (area - 50.0).abs() < 1e-6,
        "{area} replica-seconds in the series"
    );
}

#[test]
fn a_replica_never_serves_before_its_cold_start_ends() {
    let mut s = one_request();
    s.serving
        .autoscale
        .as_mut()
        .expect("autoscale")
        .engine_start_s = Some(45.0);
    let r = run(&s).expect("valid");
    // Reading at 10 s, 45 s start, 1 s of service: done at 56 s, 55 s after arrival.
    assert_eq!(r.overall.ttft.max_ms, Some(55_000.0));
}

#[test]
fn weights_load_at_the_stated_bandwidth() {
    // Llama-3.1-8B in BF16 is 16.06 GB: at 2 GB/s that is 8.03 s, plus the
    // 60 s engine start by default.
    let mut s = sim_core::presets::chatbot_h100();
    s.duration_s = 60.0;
    s.serving.replicas = 0;
    s.serving.autoscale = Some(Autoscale {
        engine_start_s: None,
        ..autoscale(0, 2)
    });
    let r = run(&s).expect("valid");
    let weights = s.deployment().weight_bytes();
    let cold = weights / 2e9 + 60.0;
    // The first reading (10 s) starts replicas; nothing completes before 10 s + cold.
    let first = r
        .series
        .t_s
        .iter()
        .zip(&r.series.output_tokens_per_s)
        .find(|(_, v)| **v > 0.0);
    let (t, _) = first.expect("tokens made");
    assert!(
        *t >= 10.0 + cold - r.series.window_s,
        "first tokens in the window ending {t} s, cold start {cold} s"
    );
    assert!(
        r.overall.ttft.max_ms.expect("ttft") >= (cold + 9.0) * 1000.0,
        "the first requests waited for the cold start"
    );
}

#[test]
fn a_launch_spike_scales_out_and_back_and_costs_less_than_a_fleet_for_the_peak() {
    // 2 req/s, a spike to 30 req/s from 600 s to 1,200 s, then 2 again, on
    // a textbook server of 0.25 s per request (4 req/s a replica).
    let points = |rates: &[(f64, f64)]| {
        rates
            .iter()
            .map(|&(at_s, rate_per_s)| RatePoint { at_s, rate_per_s })
            .collect::<Vec<_>>()
    };
    let mut s = textbook(
        2.0,
        8,
        Router::LeastOutstanding,
        Batching::None,
        Dist::Exponential { mean: 0.25 },
        2.0 * 2400.0,
    );
    s.duration_s = 2400.0;
    s.workload.arrival = Arrival::Schedule {
        points: points(&[
            (0.0, 2.0),
            (600.0, 2.0),
            (601.0, 30.0),
            (1200.0, 30.0),
            (1201.0, 2.0),
        ]),
        cv: None,
    };
    let fixed = run(&s).expect("valid");
    s.serving.replicas = 1;
    s.serving.autoscale = Some(Autoscale {
        scale_down_after_s: 120.0,
        ..autoscale(1, 12)
    });
    let scaled = run(&s).expect("valid");
    let pool = &scaled.pools[0];
    assert!(
        pool.replicas_peak >= 8 && pool.replicas_peak <= 12,
        "peak {}",
        pool.replicas_peak
    );
    let up_at = |t: f64| {
        let i = scaled.series.t_s.partition_point(|&x| x < t);
        scaled.series.replicas_up[i.min(scaled.series.replicas_up.len() - 1)]
    };
    assert!(
        up_at(500.0) < 1.5,
        "quiet before the spike: {}",
        up_at(500.0)
    );
    assert!(
        up_at(1100.0) >= 7.0,
        "scaled out during it: {}",
        up_at(1100.0)
    );
    assert!(up_at(2300.0) < 2.5, "back down after it: {}", up_at(2300.0));
    // The queue built during the cold start asks for up to the maximum, as
    // a queue-length HPA does; still well under the fixed fleet's bill.
    assert!(
        scaled.cost.fleet_usd < 0.75 * fixed.cost.fleet_usd,
        "{} vs {}",
        scaled.cost.fleet_usd,
        fixed.cost.fleet_usd
    );
    // The cold start shows as a wait at the spike's start.
    assert!(scaled.overall.ttft.p99_ms > fixed.overall.ttft.p99_ms);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Whatever the settings and load, a pool stays within its bounds, its
    /// bill is its replica-hours at its price, and requests are conserved.
    #[test]
    fn an_autoscaled_pool_keeps_its_bounds_and_bills_its_time_up(
        min in 0u32..3,
        extra in 0u32..5,
        signal in 0usize..3,
        target in 0.2f64..4.0,
        interval in 1.0f64..30.0,
        down in 0.0f64..120.0,
        start in 0.0f64..60.0,
        rate in 0.5f64..20.0,
        central in any::<bool>(),
        seed in 0u64..1000,
    ) {
        let max = min.max(1) + extra;
        let mut s = textbook(
            rate,
            min,
            if central { Router::CentralQueue } else { Router::LeastOutstanding },
            Batching::None,
            Dist::Exponential { mean: 0.2 },
            rate * 300.0,
        );
        s.seed = seed;
        s.serving.usd_per_gpu_hour = Some(2.0);
        s.serving.autoscale = Some(Autoscale {
            signal: [ScaleSignal::QueuePerReplica, ScaleSignal::KvUse, ScaleSignal::GpuBusy][signal],
            target: if signal == 0 { target } else { target / 4.0 },
            min_replicas: min,
            max_replicas: max,
            interval_s: interval,
            scale_down_after_s: down,
            load_gb_per_s: None,
            engine_start_s: Some(start),
        });
        let r = run(&s).expect("valid");
        let c = &r.requests;
        prop_assert_eq!(c.arrived, c.completed + c.rejected + c.failed + c.timed_out + c.in_flight);
        let pool = &r.pools[0];
        prop_assert!(pool.replicas_peak <= max);
        for &up in &r.series.replicas_up {
            prop_assert!(up <= f64::from(max) + 1e-9, "{} up of {}", up, max);
        }
        prop_assert!(pool.replicas_mean >= f64::from(min) - 1e-9);
        let billed = pool.replica_hours * 2.0;
        prop_assert!((billed - r.cost.fleet_usd).abs() <= 1e-9 * billed.max(1e-9), "{} vs {}", billed, r.cost.fleet_usd);
    }
}

#[test]
fn autoscaler_problems_name_the_field() {
    let mut s = one_request();
    s.serving.replicas = 3;
    s.serving.autoscale = Some(Autoscale {
        target: 2.0,
        signal: ScaleSignal::KvUse,
        min_replicas: 5,
        interval_s: 0.0,
        ..autoscale(0, 4)
    });
    let got = s.validate().expect_err("invalid").problems;
    for want in [
        "serving.autoscale.min_replicas (5) must be ≤ max_replicas (4)",
        "serving.replicas (the replicas serving at the start) must be within serving.autoscale.min_replicas..=max_replicas (5..=4), got 3",
        "serving.autoscale.target must be 0.01..=1 for KvUse, got 2",
        "serving.autoscale.interval_s must be 1..=3600 s, got 0",
    ] {
        assert!(
            got.iter().any(|p| p.contains(want)),
            "{want} not in {got:?}"
        );
    }
}

#[test]
fn kv_use_over_time_is_per_replica_up_not_per_slot() {
    // The chatbot never needs a second replica: with room for four, its KV
    // use over time is the one replica's, as in the fixed run.
    let fixed = sim_core::presets::chatbot_h100();
    let mut scaled = fixed.clone();
    sim_core::params::apply(&mut scaled, "autoscale", "queue_per_replica").expect("on");
    sim_core::params::apply(&mut scaled, "autoscale.max", "4").expect("max");
    let (a, b) = (run(&fixed).expect("valid"), run(&scaled).expect("valid"));
    assert_eq!(b.pools[0].replicas_peak, 1);
    assert_eq!(a.series.kv_use.len(), b.series.kv_use.len());
    for (x, y) in a.series.kv_use.iter().zip(&b.series.kv_use) {
        assert!((x - y).abs() <= 1e-9 * x.max(1e-9), "{x} vs {y}");
    }
}
