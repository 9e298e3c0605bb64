//! A trace distilled into a scenario that fits a share link: its lengths'
//! quantiles kept, its request count kept, its prefix reuse kept as shared
//! prefixes, and on a fleet that keeps up its numbers close to the exact
//! replay's (what it loses is said, and measured here).

use sim_core::rng::{Stream, StreamId};
use sim_core::scenario::{Arrival, Scenario};
use sim_core::traces::measured::mean_and_quantiles;
use sim_core::traces::{self, Options, quantile_table};
use sim_core::{link, presets};

const MOONCAKE: &str = include_str!("../traces/mooncake-first-2000.jsonl");
const AZURE: &str = include_str!("../traces/azure-code-first-2000.csv");

fn fleet(replicas: u32) -> Scenario {
    let mut s = presets::chatbot_h100();
    s.serving.replicas = replicas;
    s
}

#[test]
fn a_quantile_table_draws_the_values_it_was_made_from() {
    let values: Vec<f64> = (1..=5000).map(|i| f64::from(i % 997) * 7.0 + 1.0).collect();
    let table = quantile_table(values.iter().copied());
    let sampler = table.sampler();
    let mut rng = Stream::new(7, StreamId(99));
    let drawn: Vec<f64> = (0..50_000).map(|_| sampler.sample(&mut rng)).collect();
    let (want, got) = (mean_and_quantiles(values), mean_and_quantiles(drawn));
    for (w, g) in want.iter().zip(&got) {
        assert!((g / w - 1.0).abs() < 0.02, "{want:?} vs {got:?}");
    }
}

#[test]
fn a_distilled_trace_keeps_its_count_and_lengths_and_fits_a_link() {
    let t = traces::read(AZURE, &Options::default()).expect("azure");
    let d = t.distil(&fleet(1), "azure").expect("distils");
    let s = d.scenario.clone().validate().expect("valid").into_inner();
    assert!(link::shareable(&s).is_ok());
    // Expected arrivals over the run: the trace's count.
    let (mean_rate, _) = s.offered_tasks_per_s().expect("open loop");
    let expected = mean_rate * s.duration_s;
    let n = t.requests.len() as f64;
    assert!((expected / n - 1.0).abs() < 0.02, "{expected} vs {n}");
    assert!(matches!(
        s.workload.arrival,
        Arrival::Schedule { .. } | Arrival::Poisson { .. }
    ));
    // Each class's prompt table has the trace's quantiles.
    let inputs = mean_and_quantiles(
        t.requests
            .iter()
            .map(|r| f64::from(r.input_tokens))
            .collect(),
    );
    let k = &s.workload.classes[0];
    assert!(
        (k.input_tokens.mean() / inputs[0] - 1.0).abs() < 0.02,
        "{} vs {}",
        k.input_tokens.mean(),
        inputs[0]
    );
    assert_eq!(d.loses.len(), 2, "{:?}", d.loses);
}

#[test]
fn on_a_fleet_that_keeps_up_the_distilled_run_is_close_to_the_exact_replay() {
    let t = traces::read(AZURE, &Options::default()).expect("azure");
    let base = fleet(1);
    let mut exact = base.clone();
    t.apply_to(&mut exact);
    let d = t.distil(&base, "azure").expect("distils");
    let a = sim_core::run_scenario(exact).expect("exact");
    let b = sim_core::run_scenario(d.scenario).expect("distilled");
    let near = |what: &str, x: f64, y: f64, tol: f64| {
        assert!(
            (y / x - 1.0).abs() <= tol,
            "{what}: exact {x}, distilled {y}"
        );
    };
    // Measured (docs/traces.md): completed 2,000 → 2,148 (a bursty process's
    // count varies), generated tokens/s 69 → 74, time per token 19.6 →
    // 19.7 ms, end-to-end mean 730 → 635 ms, TTFT mean 274 → 221 ms (this
    // trace's bursts outlast a second; the distilled tail is lower).
    near(
        "completed",
        a.requests.completed as f64,
        b.requests.completed as f64,
        0.10,
    );
    near(
        "generated tokens/s",
        a.throughput.output_tokens_per_s,
        b.throughput.output_tokens_per_s,
        0.10,
    );
    near(
        "time per token mean",
        a.overall.tpot.mean_ms.unwrap(),
        b.overall.tpot.mean_ms.unwrap(),
        0.05,
    );
    near(
        "end-to-end mean",
        a.overall.e2e.mean_ms.unwrap(),
        b.overall.e2e.mean_ms.unwrap(),
        0.20,
    );
    near(
        "TTFT mean",
        a.overall.ttft.mean_ms.unwrap(),
        b.overall.ttft.mean_ms.unwrap(),
        0.25,
    );
    // Without its burstiness (Poisson at each window's rate) the distilled
    // TTFT is far lower: the CV is what keeps it near.
    let mut poisson = t.distil(&base, "azure").expect("distils").scenario;
    if let Arrival::Schedule { cv, .. } = &mut poisson.workload.arrival {
        assert!(cv.is_some_and(|c| c > 2.0), "{cv:?}");
        *cv = None;
    }
    let c = sim_core::run_scenario(poisson).expect("poisson");
    assert!(c.overall.ttft.mean_ms.unwrap() < 0.5 * a.overall.ttft.mean_ms.unwrap());
}

#[test]
fn prefix_reuse_is_distilled_into_shared_prefixes() {
    let t = traces::read(MOONCAKE, &Options::default()).expect("mooncake");
    let d = t.distil(&fleet(4), "mooncake").expect("distils");
    let sharing = d
        .scenario
        .workload
        .classes
        .iter()
        .find(|k| k.shared_prefix.is_some())
        .expect("a class that reuses a prefix");
    let p = sharing.shared_prefix.as_ref().expect("shared prefix");
    assert!(p.tokens >= 512 && p.prompts >= 1, "{p:?}");
    assert_eq!(d.loses.len(), 3);
    let shares: f64 = d.scenario.workload.classes.iter().map(|k| k.share).sum();
    assert!((shares - 1.0).abs() < 1e-9, "{shares}");
    let r = sim_core::run_scenario(d.scenario).expect("runs");
    assert!(r.utilisation.prefix_cache_hit_rate > 0.0);
}

#[test]
fn a_bursty_schedule_keeps_its_rate_over_time_and_its_burstiness() {
    use sim_core::scenario::RatePoint;
    let point = |at_s, rate_per_s| RatePoint { at_s, rate_per_s };
    let mut s = fleet(50);
    s.duration_s = 4_000.0;
    let arrivals = |cv: Option<f64>, seed: u64| {
        let mut s = s.clone();
        s.seed = seed;
        s.workload.arrival = Arrival::Schedule {
            points: vec![point(0.0, 1.0), point(1_999.0, 1.0), point(2_000.0, 4.0)],
            cv,
        };
        let r = sim_core::run_scenario(s).expect("runs");
        let per_s: Vec<f64> = r.series.arrivals_per_s.clone();
        (r.requests.arrived as f64, per_s, r.series.t_s.clone())
    };
    // 1 req/s for 2,000 s, then 4 req/s: 10,000 expected either way.
    for cv in [None, Some(3.0)] {
        let (n, per_s, t) = arrivals(cv, 1);
        assert!((n / 10_000.0 - 1.0).abs() < 0.08, "{cv:?}: {n}");
        let mean_over = |lo: f64, hi: f64| {
            let v: Vec<f64> = t
                .iter()
                .zip(&per_s)
                .filter(|(t, _)| **t >= lo && **t < hi)
                .map(|(_, v)| *v)
                .collect();
            v.iter().sum::<f64>() / v.len().max(1) as f64
        };
        let (early, late) = (mean_over(100.0, 1_900.0), mean_over(2_100.0, 3_900.0));
        assert!(
            (early - 1.0).abs() < 0.25 && (late - 4.0).abs() < 0.8,
            "{cv:?}: {early} then {late}"
        );
    }
    // Burstier: the arrivals per window vary more than Poisson's.
    let spread = |cv| {
        let (_, per_s, t) = arrivals(cv, 2);
        let v: Vec<f64> = t
            .iter()
            .zip(&per_s)
            .filter(|(t, _)| **t >= 2_100.0 && **t < 3_900.0)
            .map(|(_, v)| *v)
            .collect();
        let m = v.iter().sum::<f64>() / v.len() as f64;
        v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len() as f64
    };
    assert!(spread(Some(3.0)) > 3.0 * spread(None));
}

#[test]
fn an_exact_replay_too_large_for_a_link_is_linked_by_name_and_hash() {
    use sim_core::scenario::TraceRef;
    let t = traces::read(MOONCAKE, &Options::default()).expect("mooncake");
    let base = fleet(2);
    let mut distilled = t.distil(&base, "mooncake").expect("distils").scenario;
    distilled.distilled_from = Some(TraceRef::of("m.jsonl", MOONCAKE, &t, &Options::default()));
    let r = distilled.distilled_from.clone().expect("reference");
    assert_eq!(r.sha256, traces::sha256_hex(MOONCAKE.as_bytes()));
    assert_eq!(r.requests, 2_000);
    // The exact replay on the distilled scenario's fleet, then a fleet edit.
    let mut exact = traces::exact_replay(&distilled, &t);
    assert!(matches!(exact.workload.arrival, Arrival::Trace { .. }));
    assert!(
        exact
            .workload
            .classes
            .iter()
            .all(|k| k.shared_prefix.is_none())
    );
    exact.serving.replicas = 3;
    let linked = traces::link_form(&exact, &distilled);
    assert_eq!(linked.serving.replicas, 3, "the fleet edit travels");
    assert_eq!(linked.workload, distilled.workload);
    assert!(linked.distilled_from.as_ref().is_some_and(|r| r.exact));
    let back = link::decode(&link::encode(&linked))
        .expect("decodes")
        .into_inner();
    assert_eq!(back, linked);
    // A reference out of bounds is refused by field.
    let mut bad = linked;
    if let Some(r) = &mut bad.distilled_from {
        r.sha256 = "xyz".into();
        r.speed = 0.0;
    }
    let e = bad.validate().expect_err("bad reference").to_string();
    assert!(
        e.contains("distilled_from.sha256 must be 64 hexadecimal digits"),
        "{e}"
    );
    assert!(e.contains("distilled_from.speed must be > 0"), "{e}");
}

#[test]
fn a_trace_of_nearly_a_week_distils_within_a_week() {
    // 599,855.5 s: its 120 windows' last point once landed past the week
    // (found by the fuzzer).
    let text = "{\"timestamp\": 0, \"input_length\": 1600, \"output_length\": 1}\n{\"timestamp\": 599855538, \"input_length\": 1600, \"output_length\": 1}";
    let t = sim_core::traces::read(text, &Default::default()).expect("trace");
    let d = t
        .distil(&sim_core::presets::chatbot_h100(), "week")
        .expect("distils");
    let Arrival::Schedule { points, .. } = &d.scenario.workload.arrival else {
        panic!("a schedule");
    };
    assert_eq!(points.len(), 240, "120 windows, two points each");
    assert!(points.iter().all(|p| p.at_s <= 604_800.0));
    assert!(d.scenario.validate().is_ok());
}
