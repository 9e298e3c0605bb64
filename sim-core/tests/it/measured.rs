//! A measured run in (the RTX 4090 vLLM run, copied to `tests/traces/`):
//! its metrics as its README states them, its server as its meta.json states
//! it, a strict replay that serves every request, and the distribution
//! distance that compares the two.

use sim_core::physics::{Gpu, Model};
use sim_core::scenario::{Arrival, Batching};
use sim_core::traces::measured::{self, ks_distance, mean_and_quantiles, model_from_name};

const REQUESTS: &str = include_str!("../traces/rtx4090-requests.jsonl");
const META: &str = include_str!("../traces/rtx4090-meta.json");
const SERIES: &str = include_str!("../traces/rtx4090-timeseries.csv");

fn run() -> measured::Measured {
    measured::parse(REQUESTS, Some(META), Some(SERIES)).expect("the measured run reads")
}

#[test]
fn the_measured_metrics_are_those_the_run_reports() {
    let m = run();
    assert_eq!(m.requests.len(), 300);
    assert_eq!(m.requests[0].at_s, 0.0);
    // The data's README, ms: TTFT mean, median, p90, p99; TPOT mean,
    // median; end-to-end mean, median.
    let ttft = mean_and_quantiles(m.requests.iter().map(|r| r.ttft_ms).collect());
    let tpot = mean_and_quantiles(m.requests.iter().filter_map(|r| r.tpot_ms()).collect());
    let e2e = mean_and_quantiles(m.requests.iter().map(|r| r.e2e_ms).collect());
    let near =
        |got: f64, want: f64, tol: f64| assert!((got - want).abs() <= tol, "{got} vs {want}");
    near(ttft[0], 65_456.6, 0.1);
    near(ttft[1], 60_110.9, 0.1);
    near(ttft[2], 121_121.7, 0.1);
    near(ttft[3], 137_356.3, 0.1);
    near(tpot[0], 32.4, 0.05);
    near(tpot[1], 30.8, 0.05);
    near(e2e[0], 86_578.3, 0.1);
    near(e2e[1], 83_413.3, 0.1);
    assert_eq!(m.series.len(), SERIES.lines().count() - 1);
    assert_eq!(m.settings.kv_tokens, Some(41_408));
}

#[test]
fn the_replay_is_the_measured_server_and_traffic() {
    let m = run();
    let (s, assumed) = m
        .scenario(&sim_core::presets::chatbot_h100())
        .expect("expressible");
    assert!(
        assumed.is_empty(),
        "meta.json gives every setting: {assumed:?}"
    );
    assert_eq!(s.serving.gpu, Gpu::Rtx4090);
    assert_eq!(s.serving.model, Model::Llama31_8b);
    assert_eq!(s.serving.gpus_per_replica, 1);
    assert_eq!(s.serving.gpu_memory_utilisation, 0.9);
    assert_eq!(s.serving.prefix_caching, Some(true));
    // resolved_config.scheduler_config.async_scheduling: vLLM 0.19 resolved it on.
    assert_eq!(s.serving.async_scheduling, Some(true));
    assert_eq!(
        s.serving.batching,
        Batching::ChunkedPrefill {
            max_num_seqs: 256,
            max_num_batched_tokens: 2048,
            chunk_tokens: 2048
        }
    );
    let Arrival::Trace { requests, .. } = &s.workload.arrival else {
        panic!("a strict replay is a trace");
    };
    for (t, r) in requests.iter().zip(&m.requests) {
        assert_eq!(
            (t.at_s, t.input_tokens, t.output_tokens),
            (r.at_s, r.input, r.output)
        );
    }
    // Every request is served, none refused for a queue the server did not have.
    let report = sim_core::run(&s.validate().expect("valid"));
    assert_eq!(report.requests.arrived, 300);
    assert_eq!(report.overall.completed, 300);
    let c = m.compare(&report);
    assert_eq!(c.rows.len(), 3);
    assert!(
        c.rows
            .iter()
            .all(|r| r.measured.iter().chain(&r.simulated).all(|v| v.is_finite()))
    );
    assert!((0.0..=1.0).contains(&c.ks_ttft) && (0.0..=1.0).contains(&c.ks_e2e));
    assert_eq!(c.peak_running[0], Some(49.0));
    assert_eq!(c.peak_waiting[0], Some(234.0));
}

#[test]
fn what_cannot_be_expressed_is_refused_by_name() {
    let m = measured::parse(
        REQUESTS,
        Some(&META.replace("NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 3060")),
        None,
    )
    .expect("reads");
    let e = m
        .scenario(&sim_core::presets::chatbot_h100())
        .expect_err("no RTX 3060 in the catalogue");
    assert!(
        e.contains("RTX 3060") && e.contains("not in the catalogue"),
        "{e}"
    );
    let m = measured::parse(
        REQUESTS,
        Some(&META.replace("meta-llama/Llama-3.1-8B", "acme/Unknown-9B")),
        None,
    )
    .expect("reads");
    assert!(
        m.scenario(&sim_core::presets::chatbot_h100())
            .expect_err("unknown model")
            .contains("acme/Unknown-9B")
    );
    // Without meta.json: the model is unknown, so no replay.
    let bare = measured::parse(REQUESTS, None, None).expect("reads");
    assert!(
        bare.scenario(&sim_core::presets::chatbot_h100())
            .expect_err("no model")
            .contains("does not name its model")
    );
    // A line without its timestamps is named.
    let broken = REQUESTS.replacen("\"first_token_ts\"", "\"first_tok\"", 1);
    let e = measured::parse(&broken, None, None).expect_err("missing field");
    assert!(
        e.starts_with("request log line 1:") && e.contains("first_token_ts"),
        "{e}"
    );
}

#[test]
fn names_mean_catalogue_models() {
    assert_eq!(
        model_from_name("meta-llama/Llama-3.1-8B"),
        Some(Model::Llama31_8b)
    );
    assert_eq!(
        model_from_name("meta-llama/Llama-3.1-8B-Instruct"),
        Some(Model::Llama31_8b)
    );
    assert_eq!(
        model_from_name("meta-llama/Llama-3.1-70B-Instruct"),
        Some(Model::Llama31_70b)
    );
    assert_eq!(model_from_name("acme/Llama-3.1-8B-distilled"), None);
}

#[test]
fn the_distribution_distance_is_zero_for_the_same_and_one_for_disjoint() {
    let samples: Vec<f64> = (1..=1000).map(f64::from).collect();
    let q = sim_core::report::distribution_quantiles();
    // The samples' own quantiles: within the table's step of 2 %.
    let own: Vec<f64> = q.iter().map(|p| (p * 1000.0).round()).collect();
    assert!(
        ks_distance(&samples, &q, &own) <= 0.021,
        "{}",
        ks_distance(&samples, &q, &own)
    );
    // Everything simulated far above everything measured.
    let above: Vec<f64> = q.iter().map(|p| 10_000.0 + p).collect();
    assert!(ks_distance(&samples, &q, &above) >= 0.999);
    // Shifted by a tenth of the range: a distance of about a tenth.
    let shifted: Vec<f64> = own.iter().map(|v| v + 100.0).collect();
    let d = ks_distance(&samples, &q, &shifted);
    assert!((0.08..=0.12).contains(&d), "{d}");
    assert!(ks_distance(&[], &q, &own).is_nan());
}
