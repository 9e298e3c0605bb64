//! Real traces in: every format read (the stored traces and the measured
//! run, copied to `tests/traces/`), a bad line named by line and field,
//! scaling and windows that keep counts and order, and prefix reuse equal
//! to what the hash ids imply.

use sim_core::traces::{self, Format, Options};

const MOONCAKE: &str = include_str!("../traces/mooncake-first-2000.jsonl");
const AZURE: &str = include_str!("../traces/azure-code-first-2000.csv");
const MEASURED: &str = include_str!("../traces/rtx4090-requests.jsonl");

#[test]
fn each_format_is_detected_and_read_whole() {
    let m = traces::read(MOONCAKE, &Options::default()).expect("mooncake");
    assert_eq!(m.format, Format::Mooncake);
    assert_eq!(m.requests.len(), MOONCAKE.lines().count());
    assert_eq!(m.prefix_block_tokens, Some(512));
    assert!((0..m.requests.len()).all(|i| m.requests.hash_count(i) > 0));
    let a = traces::read(AZURE, &Options::default()).expect("azure");
    assert_eq!(a.format, Format::Azure);
    assert_eq!(a.requests.len(), AZURE.lines().count() - 1);
    // Wall-clock times made relative to the first request, 100 ns resolution kept.
    assert_eq!(a.requests.get(0).at_s, 0.0);
    assert!(
        (a.requests.get(1).at_s - 0.052).abs() < 1e-6,
        "{}",
        a.requests.get(1).at_s
    );
    let r = traces::read(MEASURED, &Options::default()).expect("request log");
    assert_eq!(r.format, Format::RequestLog);
    assert_eq!(r.requests.len(), 300);
    let s = r.summary();
    assert!(
        (s.input[0] - 857.5).abs() < 0.1,
        "mean prompt {}",
        s.input[0]
    );
    assert!(
        (s.output[0] - 652.5).abs() < 0.1,
        "mean output {}",
        s.output[0]
    );
    for t in [&m, &a, &r] {
        assert!(
            t.requests
                .iter()
                .zip(t.requests.iter().skip(1))
                .all(|(a, b)| a.at_s <= b.at_s)
        );
    }
}

#[test]
fn burst_gpt_and_vllm_bench_are_read() {
    let burst = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\n7.5,GPT-4,1087,130,1217,API log\n";
    let b = traces::read(burst, &Options::default()).expect("burstgpt");
    assert_eq!(b.format, Format::BurstGpt);
    assert_eq!(
        b.requests
            .iter()
            .map(|r| (r.at_s, r.input_tokens, r.output_tokens))
            .collect::<Vec<_>>(),
        [(0.0, 472, 18), (2.5, 1087, 130)]
    );
    let bench = r#"{"request_rate": "inf", "input_lens": [100, 200], "output_lens": [10, 20], "ttfts": [0.1, 0.2]}"#;
    let v = traces::read(bench, &Options::default()).expect("vllm bench");
    assert_eq!(v.format, Format::VllmBench);
    assert!(v.requests.iter().all(|r| r.at_s == 0.0), "inf: all at once");
    let paced =
        r#"{"request_rate": 4, "input_lens": [100, 200, 300], "output_lens": [10, 20, 30]}"#;
    let p = traces::read(paced, &Options::default()).expect("paced");
    assert_eq!(p.requests.get(2).at_s, 0.5);
}

#[test]
fn a_bad_line_is_named_by_line_and_field_never_skipped() {
    let mut lines: Vec<&str> = MOONCAKE.lines().take(5).collect();
    lines[3] = r#"{"timestamp": 10, "input_length": -3, "output_length": 5, "hash_ids": []}"#;
    let err = traces::read(&lines.join("\n"), &Options::default()).expect_err("negative");
    assert!(
        err.contains("line 4") && err.contains("input_length"),
        "{err}"
    );
    let truncated = format!(
        "{}\n{{\"timestamp\": 12, \"input_len",
        MOONCAKE.lines().next().unwrap()
    );
    let err = traces::read(&truncated, &Options::default()).expect_err("cut off");
    assert!(err.contains("line 2") && err.contains("not JSON"), "{err}");
    let csv = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,4808,10\n2023-11-16 18:17:04,abc,8\n";
    let err = traces::read(csv, &Options::default()).expect_err("not a number");
    assert!(
        err.contains("line 3") && err.contains("ContextTokens"),
        "{err}"
    );
    let err = traces::read("hello,world\n1,2\n", &Options::default()).expect_err("unknown");
    assert!(err.contains("not a trace format"), "{err}");
}

#[test]
fn speed_and_windows_keep_counts_and_order() {
    let whole = traces::read(MOONCAKE, &Options::default()).expect("trace");
    let fast = traces::read(
        MOONCAKE,
        &Options {
            speed: 2.0,
            ..Options::default()
        },
    )
    .expect("trace");
    assert_eq!(fast.requests.len(), whole.requests.len());
    for (a, b) in whole.requests.iter().zip(&fast.requests) {
        assert_eq!(b.at_s, a.at_s / 2.0);
        assert_eq!(
            (a.input_tokens, a.output_tokens),
            (b.input_tokens, b.output_tokens)
        );
    }
    let part = traces::read(
        MOONCAKE,
        &Options {
            window: Some((60.0, 120.0)),
            ..Options::default()
        },
    )
    .expect("window");
    let expected = whole
        .requests
        .iter()
        .filter(|r| r.at_s >= 60.0 && r.at_s < 120.0)
        .count();
    assert_eq!(part.requests.len(), expected);
    assert_eq!(part.requests.get(0).at_s, 0.0, "the window starts at 0");
    // At a rate: the same requests in the same order, every gap scaled
    // alike, at the mean rate asked for.
    let whole_rate = whole.summary().mean_rate_per_s;
    let at = |rate: f64| Options {
        rate_per_s: Some(rate),
        ..Options::default()
    };
    let busy = traces::read(MOONCAKE, &at(3.0 * whole_rate)).expect("rate");
    assert_eq!(busy.requests.len(), whole.requests.len());
    assert!((busy.speed - 3.0).abs() < 1e-9, "speed {}", busy.speed);
    assert!((busy.summary().mean_rate_per_s - 3.0 * whole_rate).abs() < 1e-9);
    for (i, (a, b)) in whole.requests.iter().zip(&busy.requests).enumerate() {
        assert!((b.at_s - a.at_s / busy.speed).abs() < 1e-9);
        assert_eq!(a.input_tokens, b.input_tokens);
        assert!(whole.requests.hashes(i).eq(busy.requests.hashes(i)));
    }
    let both = Options {
        speed: 2.0,
        ..at(1.0)
    };
    let e = traces::read(MOONCAKE, &both).expect_err("both");
    assert!(e.contains("a speed or a rate, not both"), "{e}");
    let e = traces::read(MOONCAKE, &at(-1.0)).expect_err("negative");
    assert!(e.contains("rate must be > 0"), "{e}");
    let once = "{\"timestamp\": 5, \"input_length\": 10, \"output_length\": 2}\n";
    let e = traces::read(once, &at(1.0)).expect_err("one instant");
    assert!(e.contains("all arrive at once"), "{e}");
}

#[test]
fn prefix_reuse_is_what_the_hash_ids_imply() {
    let t = traces::read(MOONCAKE, &Options::default()).expect("trace");
    // Computed here from the raw lines: a block is reusable when an earlier
    // request had the same id at the same position.
    let mut seen = std::collections::HashSet::new();
    let (mut total, mut reused) = (0usize, 0usize);
    for line in MOONCAKE.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("json");
        for (i, h) in v["hash_ids"].as_array().expect("ids").iter().enumerate() {
            total += 1;
            reused += usize::from(!seen.insert((i, h.as_u64().expect("id"))));
        }
    }
    let share = t.summary().prefix_reuse.expect("mooncake names blocks");
    assert!((share - reused as f64 / total as f64).abs() < 1e-12);
    assert!(
        share > 0.2,
        "a chat service's prompts share prefixes: {share}"
    );
}

#[test]
fn the_rate_over_time_counts_every_request_once() {
    for t in [
        traces::read(MOONCAKE, &Options::default()).expect("trace"),
        traces::read(AZURE, &Options::default()).expect("trace"),
    ] {
        let s = t.summary();
        let w = s.rate_window_s;
        assert!(w >= 60.0 && w % 60.0 == 0.0, "whole minutes: {w}");
        let k = s.rate_over_time.len();
        assert!((1..=traces::RATE_WINDOWS + 1).contains(&k), "{k} windows");
        let last = (s.span_s - (k - 1) as f64 * w).max(1.0);
        assert!(
            k == 1 || (last >= w / 2.0 && last < 1.5 * w),
            "last window {last} s"
        );
        let counted: f64 = s.rate_over_time[..k - 1].iter().map(|r| r * w).sum::<f64>()
            + s.rate_over_time[k - 1] * last;
        assert!(
            (counted - t.requests.len() as f64).abs() < 1e-6,
            "{counted}"
        );
        let busiest = s.rate_over_time.iter().copied().fold(0.0, f64::max);
        assert!(
            busiest <= s.peak_minute_rate_per_s + 1e-9,
            "a window is no busier than its busiest minute"
        );
    }
}

#[test]
fn a_trace_runs_as_a_scenario() {
    let t = traces::read(AZURE, &Options::default()).expect("trace");
    let mut s = sim_core::presets::chatbot_h100();
    s.serving.replicas = 4;
    t.apply_to(&mut s);
    let r = sim_core::run_scenario(s).expect("valid");
    assert_eq!(r.requests.arrived, t.requests.len() as u64);
    assert_eq!(r.requests.completed, t.requests.len() as u64);
}

#[test]
fn a_column_maps_requests_to_classes_reported_apart() {
    let burst = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n0,ChatGPT,400,100,500,Conversation log\n1,GPT-4,800,50,850,API log\n2,ChatGPT,300,80,380,Conversation log\n";
    let by_model = Options {
        class_column: Some("Model".into()),
        ..Options::default()
    };
    let t = traces::read(burst, &by_model).expect("classes");
    assert_eq!(t.classes, ["ChatGPT", "GPT-4"]);
    assert_eq!(
        t.requests.iter().map(|r| r.class).collect::<Vec<_>>(),
        [0, 1, 0]
    );
    let mut s = sim_core::presets::chatbot_h100();
    t.apply_to(&mut s);
    let r = sim_core::run_scenario(s).expect("valid");
    let names: Vec<(&str, u64)> = r
        .per_class
        .iter()
        .map(|k| (k.name.as_str(), k.completed))
        .collect();
    assert_eq!(names, [("ChatGPT", 2), ("GPT-4", 1)]);
    // A column the file lacks, or a format without columns, is refused by name.
    let missing = Options {
        class_column: Some("Region".into()),
        ..Options::default()
    };
    let err = traces::read(burst, &missing).expect_err("no such column");
    assert!(err.contains("Region"), "{err}");
    let err = traces::read(MOONCAKE, &by_model).expect_err("no columns");
    assert!(err.contains("no column to take classes from"), "{err}");
}

#[test]
fn a_trace_replayed_on_any_preset_sends_exactly_its_own_requests() {
    // The thinking agent's classes reason before answering and make 20
    // calls a task: a replay adds none of that to the trace's requests.
    let t = traces::read(AZURE, &Options::default()).expect("azure");
    let mut s = sim_core::presets::thinking_agent();
    t.apply_to(&mut s);
    let r = sim_core::run_scenario(s).expect("runs");
    assert_eq!(r.requests.arrived, t.requests.len() as u64);
    let generated: u64 = t.requests.iter().map(|q| u64::from(q.output_tokens)).sum();
    let served = r.throughput.output_tokens_per_s * r.sim_time_s;
    assert!(
        (served / generated as f64 - 1.0).abs() < 1e-6,
        "{served} generated, the trace has {generated}"
    );
}
