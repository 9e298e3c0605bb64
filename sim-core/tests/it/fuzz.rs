//! The fuzzers' classes, kept in the suite: every numeric field of every
//! preset and of scenarios with the newer blocks (stages, timeouts, shared
//! prompts, conversations, reasoning, mixture-of-experts) set to each hostile
//! value. A refused input names its field; an accepted one runs (shortened)
//! and its report keeps every invariant.

use proptest::test_runner::{Config, TestRunner};
use serde_json::Value;
use sim_core::Scenario;
use sim_core::dist::Dist;
use sim_core::report::{LatencyStats, Report};
use sim_core::scenario::{Conversation, SharedPrefix, Stage};

/// Every numeric leaf of `v`: (dotted path, JSON pointer); arrays to 3 items.
fn leaves(v: &Value, at: &str, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let path = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                leaves(x, &path, out);
            }
        }
        Value::Array(xs) => {
            for (i, x) in xs.iter().enumerate().take(3) {
                leaves(x, &format!("{at}[{i}]"), out);
            }
        }
        Value::Number(_) => out.push((at.to_owned(), pointer(at))),
        _ => {}
    }
}

fn pointer(path: &str) -> String {
    let mut p = String::new();
    for part in path.split('.') {
        let (key, rest) = part.split_once('[').unwrap_or((part, ""));
        p.push('/');
        p.push_str(key);
        for idx in rest.split('[').filter(|s| !s.is_empty()) {
            p.push('/');
            p.push_str(idx.trim_end_matches(']'));
        }
    }
    p
}

const BAD: [&str; 10] = [
    "NaN",
    "Infinity",
    "-Infinity",
    "-1",
    "-0.0",
    "0",
    "1e308",
    "\"x\"",
    "null",
    "true",
];

/// Scenarios with the blocks the presets do not all have.
fn newer_blocks() -> Vec<(&'static str, Scenario)> {
    let base = sim_core::presets::chatbot_h100();
    let mut stages = base.clone();
    stages.workload.arrival = sim_core::scenario::Arrival::Stages {
        stages: vec![
            Stage {
                rate_per_s: 4.0,
                duration_s: 20.0,
            },
            Stage {
                rate_per_s: 12.0,
                duration_s: 20.0,
            },
        ],
    };
    let mut timeouts = base.clone();
    timeouts.workload.classes[0].timeout_s = Some(2.0);
    let mut shared = base.clone();
    shared.workload.classes[0].shared_prefix = Some(SharedPrefix {
        prompts: 4,
        tokens: 600,
    });
    let mut conversation = base.clone();
    conversation.workload.classes[0].calls_per_task = 3;
    conversation.workload.classes[0].conversation = Some(Conversation {
        think_time_s: Dist::Exponential { mean: 5.0 },
    });
    let moe: Scenario = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/repro/moe-1024-experts-ep2-day-110cpu-s.json"
        ))
        .expect("repro file"),
    )
    .expect("a scenario");
    vec![
        ("stages", stages),
        ("timeouts", timeouts),
        ("shared-prompts", shared),
        ("conversations", conversation),
        ("moe", moe),
    ]
}

fn monotone(what: &str, l: &LatencyStats) {
    let qs = [l.p50_ms, l.p90_ms, l.p95_ms, l.p99_ms, l.max_ms];
    let qs: Vec<f64> = qs.into_iter().flatten().collect();
    assert!(
        qs.windows(2).all(|w| w[0] <= w[1]),
        "{what}: percentiles out of order {qs:?}"
    );
    if let (Some(mean), Some(max)) = (l.mean_ms, l.max_ms) {
        assert!(
            mean <= max * (1.0 + 1e-9),
            "{what}: mean {mean} > max {max}"
        );
    }
}

/// Every invariant a report keeps.
pub fn invariants(what: &str, r: &Report) {
    let c = r.requests;
    assert_eq!(
        c.arrived,
        c.completed + c.rejected + c.failed + c.timed_out + c.in_flight,
        "{what}: counts"
    );
    for (name, l) in [
        ("ttft", &r.overall.ttft),
        ("first_visible", &r.overall.first_visible),
        ("tpot", &r.overall.tpot),
        ("e2e", &r.overall.e2e),
    ] {
        monotone(&format!("{what} {name}"), l);
    }
    // Per request TTFT ≤ first visible ≤ E2E, so their maxima and means are
    // ordered too (exactly: both are exact).
    let o = &r.overall;
    if let (Some(t), Some(v), Some(e)) = (o.ttft.max_ms, o.first_visible.max_ms, o.e2e.max_ms) {
        assert!(
            t <= v && v <= e,
            "{what}: max ttft {t}, visible {v}, e2e {e}"
        );
    }
    if let (Some(t), Some(v), Some(e)) = (o.ttft.mean_ms, o.first_visible.mean_ms, o.e2e.mean_ms) {
        let tol = 1e-6 * e.max(1.0);
        assert!(
            t <= v + tol && v <= e + tol,
            "{what}: mean ttft {t}, visible {v}, e2e {e}"
        );
    }
    if !r.stages.is_empty() {
        let sum: u64 = r.stages.iter().map(|s| s.completed).sum();
        assert_eq!(sum, c.completed, "{what}: stage completions");
    }
    let k = &r.cost;
    // One pool: billed at most its GPUs for the whole run (exactly, when
    // it does not autoscale); several: each its own price, added up below.
    let fleet = f64::from(k.gpus) * k.usd_per_gpu_hour * r.sim_time_s / 3600.0;
    if k.fleet_usd > 0.0 && r.pools.is_empty() {
        assert!(
            k.fleet_usd <= fleet + 1e-9 * fleet.max(1.0),
            "{what}: fleet cost {} vs rate × time {fleet}",
            k.fleet_usd
        );
    }
    assert!(
        (k.total_usd - k.fleet_usd - k.api_usd - k.electricity_usd).abs()
            <= 1e-9 * k.total_usd.max(1.0),
        "{what}: total cost {} is not fleet {} + API {} + electricity {}",
        k.total_usd,
        k.fleet_usd,
        k.api_usd,
        k.electricity_usd
    );
    for (part, usd) in [
        ("fleet", k.fleet_usd),
        ("api", k.api_usd),
        ("electricity", k.electricity_usd),
        ("total", k.total_usd),
    ] {
        assert!(usd.is_finite() && usd >= 0.0, "{what}: {part} cost {usd}");
    }
    // Pools add up: their costs to the fleet's, their completions to no
    // more than the run's.
    if !r.pools.is_empty() {
        let usd: f64 = r.pools.iter().map(|p| p.usd).sum();
        assert!(
            (usd - k.fleet_usd).abs() <= 1e-6 * k.fleet_usd.max(1.0),
            "{what}: pools cost {usd} against the fleet's {}",
            k.fleet_usd
        );
        let done: u64 = r.pools.iter().map(|p| p.completed).sum();
        assert!(
            done <= c.completed,
            "{what}: pools completed {done} of {}",
            c.completed
        );
        for p in &r.pools {
            for l in [&p.ttft, &p.tpot, &p.e2e] {
                monotone(&format!("{what} pool {}", p.name), l);
            }
        }
    }
    if let Some(share) = r.arrivals_left_out {
        assert!(
            !r.complete && share > 0.0 && share <= 1.0,
            "{what}: left out {share}"
        );
    }
}

#[test]
fn every_hostile_value_is_named_or_runs_with_every_invariant() {
    let mut cases: Vec<(&str, Scenario)> = sim_core::presets::all()
        .into_iter()
        .map(|p| (p.id, p.scenario))
        .collect();
    cases.extend(newer_blocks());
    let (mut refused, mut ran) = (0, 0);
    let mut unnamed = Vec::new();
    for (id, scenario) in cases {
        let doc = serde_json::to_value(&scenario).expect("serialises");
        let mut fields = Vec::new();
        leaves(&doc, "", &mut fields);
        for (path, ptr) in &fields {
            for b in BAD {
                let mut v = doc.clone();
                *v.pointer_mut(ptr).expect("leaf") = Value::String("@@".into());
                let text = serde_json::to_string(&v)
                    .expect("serialises")
                    .replace("\"@@\"", b);
                match Scenario::from_json(&text) {
                    Err(e) => {
                        refused += 1;
                        let msg = e.problems.join("; ");
                        if !msg.contains(path.as_str()) && unnamed.len() < 10 {
                            unnamed.push(format!("{id}: {path} = {b}: {msg}"));
                        }
                    }
                    Ok(valid) => {
                        // Run it shortened: the invariants hold at any length.
                        let mut s = valid.into_inner();
                        s.duration_s = s.duration_s.min(10.0);
                        s.limits.max_events = s.limits.max_events.min(100_000);
                        s.limits.max_sim_time_s = s.limits.max_sim_time_s.min(600.0);
                        let Ok(r) = sim_core::run_scenario(s) else {
                            continue;
                        };
                        invariants(&format!("{id}: {path} = {b}"), &r);
                        ran += 1;
                    }
                }
            }
        }
    }
    assert!(refused > 1500, "{refused} refused");
    assert!(ran > 50, "{ran} accepted inputs ran");
    assert!(unnamed.is_empty(), "unnamed:\n{}", unnamed.join("\n"));
}

// The input fuzzers' shared parts (`fuzz_traces`, `fuzz_text`).

/// Cases for one surface: `TLAB_FUZZ_CASES`, else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("TLAB_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// How the cases of one surface ended: a fuzzer whose inputs are all
/// refused (or all accepted) tests only half of what it claims.
#[derive(Default)]
pub struct Tally {
    pub refused: std::cell::Cell<u32>,
    pub ran: std::cell::Cell<u32>,
}

impl Tally {
    pub fn refused(&self) {
        self.refused.set(self.refused.get() + 1);
    }

    pub fn ran(&self) {
        self.ran.set(self.ran.get() + 1);
    }

    /// Both ends reached, each at least `share` of the cases.
    pub fn check(&self, what: &str, share: f64) {
        let (no, yes) = (self.refused.get(), self.ran.get());
        let n = f64::from(no + yes).max(1.0);
        eprintln!("{what}: {no} refused, {yes} ran");
        assert!(
            f64::from(no) >= share * n && f64::from(yes) >= share * n,
            "{what}: {no} refused and {yes} ran: the generator misses one end"
        );
    }
}

pub fn runner(default: u32) -> TestRunner {
    TestRunner::new(Config {
        cases: cases(default),
        failure_persistence: None,
        ..Config::default()
    })
}
