//! The import panel's files: scenarios, profiles, traces and measured runs
//! told apart and opened, and the trace options read from the panel.

use super::*;

#[test]
fn an_import_opens_a_valid_scenario_and_names_what_is_wrong_otherwise() {
    let s = sim_core::presets::pay_for_speed();
    let json = serde_json::to_string(&s).expect("json");
    assert_eq!(open_json(&json).expect("opens"), s);
    let bad = json.replace("\"replicas\":1", "\"replicas\":0");
    let err = open_json(&bad).expect_err("invalid");
    assert!(err.contains("serving.replicas"), "{err}");
    assert!(
        open_json("   ")
            .expect_err("empty")
            .contains("nothing to import")
    );
    let syntax = open_json("{\"version\":").expect_err("syntax");
    assert!(syntax.contains("ends too early"), "{syntax}");
    let huge = " ".repeat(MAX_IMPORT_BYTES + 1);
    assert!(open_json(&huge).expect_err("size").contains("at most"));
}

fn traces(name: &str) -> (String, String) {
    let path = format!(
        "{}/../sim-core/tests/traces/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("test data");
    (name.to_owned(), text)
}

#[test]
fn a_measured_run_opens_as_its_strict_replay() {
    let current = sim_core::presets::chatbot_h100();
    let files = [
        traces("rtx4090-requests.jsonl"),
        traces("rtx4090-meta.json"),
        traces("rtx4090-timeseries.csv"),
    ];
    let Ok(Opened::Measured(m)) = open_files(&files, &current, &Default::default()) else {
        panic!("a measured run");
    };
    assert_eq!(m.run.requests.len(), 300);
    assert_eq!(m.replay.serving.gpu, sim_core::physics::Gpu::Rtx4090);
    assert!(m.name.contains("rtx4090-timeseries.csv"), "{}", m.name);
    // The replay's comparison is the CLI's: same function, same numbers.
    let report = sim_core::run_scenario(m.replay.clone()).expect("runs");
    let c = m.run.compare(&report);
    assert_eq!(c.rows.len(), 3);
    assert!((c.rows[0].measured[0] - 65_456.6).abs() < 0.1);
    // meta.json alone names what is missing.
    let e = open_files(
        &[traces("rtx4090-meta.json")],
        &current,
        &Default::default(),
    )
    .expect_err("no log");
    assert!(e.contains("requests.jsonl"), "{e}");
}

/// `n` Mooncake lines of scattered lengths (a link does not compress them).
fn big_trace(n: u64) -> String {
    let mut x = 12_345_u64;
    let mut next = |m: u64| {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) % m
    };
    (0..n)
        .map(|i| {
            format!(
                "{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": {}, \"hash_ids\": []}}\n",
                i * 90 + next(90),
                1 + next(8_000),
                1 + next(900)
            )
        })
        .collect()
}

#[test]
fn a_trace_replays_on_this_fleet_and_a_profile_times_it() {
    let current = sim_core::presets::chatbot_h100();
    // The request log alone is a trace: replayed on the scenario's fleet.
    let Ok(Opened::Trace {
        exact: Some(s),
        distilled,
        words,
        ..
    }) = open_files(
        &[traces("rtx4090-requests.jsonl")],
        &current,
        &Default::default(),
    )
    else {
        panic!("a trace replayed exactly");
    };
    assert_eq!(s.serving.gpu, current.serving.gpu);
    assert!(words.contains("300 requests"), "{words}");
    assert_eq!(distilled.scenario.serving, current.serving);
    // A trace too large for a link opens distilled only.
    let Ok(Opened::Trace {
        exact: None,
        distilled,
        ..
    }) = open_files(
        &[("big.jsonl".into(), big_trace(40_000))],
        &current,
        &Default::default(),
    )
    else {
        panic!("a trace too large to share exactly");
    };
    assert!(sim_core::link::shareable(&distilled.scenario).is_ok());
    // It names its trace: the file's hash, its count and summary.
    let r = distilled
        .scenario
        .distilled_from
        .as_ref()
        .expect("a reference");
    assert_eq!(
        r.sha256,
        sim_core::traces::sha256_hex(big_trace(40_000).as_bytes())
    );
    assert_eq!(
        (r.requests, r.name.as_str(), r.exact),
        (40_000, "big.jsonl", false)
    );
    // A fitted profile file: vLLM's constants refitted, named.
    let mut p = serde_json::json!({
        "name": "mine",
        "costs": sim_core::physics::VLLM_COSTS,
        "non_torch_bytes": 0.65e9,
        "sampler_logit_copies": 12.0,
        "validated": {
            "source": "a test", "gpu": "h100", "model": "llama-3.1-8b", "tp": 1,
            "tokens_per_s": 1e6, "error_pct": [1.0, 2.0, 3.0]
        }
    });
    let text = p.to_string();
    let Ok(Opened::Profile(s)) =
        open_files(&[("mine.json".into(), text)], &current, &Default::default())
    else {
        panic!("a profile");
    };
    assert_eq!(
        s.serving.fitted_profile.as_ref().map(|p| p.name.as_str()),
        Some("mine")
    );
    p["costs"]["compute_decode"] = 2.0.into();
    let e = open_files(
        &[("mine.json".into(), p.to_string())],
        &current,
        &Default::default(),
    )
    .expect_err("range");
    assert!(
        e.contains("mine.json") && e.contains("compute_decode"),
        "{e}"
    );
    // A broken trace line is named by file, format and line.
    let e = open_files(
        &[(
            "t.jsonl".into(),
            "{\"timestamp\": 1, \"input_length\": 5}\n".into(),
        )],
        &current,
        &Default::default(),
    )
    .expect_err("broken");
    assert!(e.starts_with("t.jsonl: "), "{e}");
    // Taken twice as fast, in its first 10 minutes: fewer requests, half
    // the time.
    let options = trace_options("2", "", "0", "600", "").expect("options");
    let Ok(Opened::Trace { trace: fast, .. }) =
        open_files(&[traces("azure-code-first-2000.csv")], &current, &options)
    else {
        panic!("a trace");
    };
    let last = fast.requests.last().map_or(0.0, |r| r.at_s);
    assert!(
        fast.requests.len() < 2_000 && last <= 300.0,
        "{} requests to {last} s",
        fast.requests.len()
    );
    assert!(
        trace_options("x", "", "", "", "")
            .expect_err("speed")
            .contains("trace speed")
    );
    // At a rate: every request, at 10 a second.
    let options = trace_options("", "10", "", "", "").expect("rate");
    let Ok(Opened::Trace { trace: at_10, .. }) =
        open_files(&[traces("azure-code-first-2000.csv")], &current, &options)
    else {
        panic!("a trace");
    };
    assert_eq!(at_10.requests.len(), 2_000);
    assert!((at_10.summary().mean_rate_per_s - 10.0).abs() < 1e-9);
    assert!(
        trace_options("", "", "5", "", "")
            .expect_err("half a window")
            .contains("both")
    );
    assert_eq!(
        trace_options("", "", "", "", " Model ")
            .expect("column")
            .class_column
            .as_deref(),
        Some("Model")
    );
    let two = [
        traces("rtx4090-requests.jsonl"),
        traces("rtx4090-timeseries.csv"),
    ];
    assert!(
        open_files(&two, &current, &Default::default())
            .expect_err("two")
            .contains("2 files chosen")
    );
}

#[test]
fn a_trace_read_a_line_at_a_time_is_told_from_its_first_bytes_and_anything_else_read_whole() {
    use crate::io::file_lines::is_line_trace;
    let head = |name: &str| {
        let (_, text) = traces(name);
        text.chars().take(65_536).collect::<String>()
    };
    // Streamed: the line formats, a byte-order mark included.
    assert!(is_line_trace(&head("mooncake-first-2000.jsonl")));
    assert!(is_line_trace(&head("azure-code-first-2000.csv")));
    assert!(is_line_trace(&head("rtx4090-requests.jsonl")));
    assert!(is_line_trace(&format!(
        "\u{feff}{}",
        head("mooncake-first-2000.jsonl")
    )));
    // Read whole: scenarios (pretty or on one line), profiles, a measured
    // run's meta, a vllm bench document, a file of one line.
    let s = sim_core::presets::chatbot_h100();
    assert!(!is_line_trace(
        &serde_json::to_string_pretty(&s).expect("json")
    ));
    assert!(!is_line_trace(
        &(serde_json::to_string(&s).expect("json") + "\n")
    ));
    assert!(!is_line_trace(&head("rtx4090-meta.json")));
    assert!(!is_line_trace(
        "{\n  \"input_lens\": [10, 20],\n  \"output_lens\": [5, 5]\n}\n"
    ));
    assert!(!is_line_trace(
        "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 5, \"hash_ids\": []}"
    ));
    assert!(!is_line_trace(""));
}
