//! The commands end to end, and parallel runs equal serial ones.

/// A file of `sim-core/tests/traces/` (the traces and the measured run).
pub(crate) fn test_trace(name: &str) -> std::path::PathBuf {
    [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "sim-core",
        "tests",
        "traces",
        name,
    ]
    .iter()
    .collect()
}

mod runs {
    use super::test_trace;
    use crate::*;
    use std::path::PathBuf;

    /// Write preset `id` as a scenario file in `dir`.
    fn preset_file(dir: &tempfile::TempDir, id: &str) -> PathBuf {
        let path = dir.path().join(format!("{id}.json"));
        let json = execute(Command::Preset { id: id.into() }).expect("preset");
        std::fs::write(&path, json).expect("write");
        path
    }

    #[test]
    fn a_share_link_runs_as_the_scenario_it_carries() {
        let mut s = sim_core::presets::launch_day_gpus();
        s.duration_s = 60.0;
        let link = format!(
            "https://example.org/throughput-lab/{}",
            sim_core::link::encode_fragment_compared(&s, None)
        );
        let run = |scenario: PathBuf| {
            execute(Command::Run {
                scenario,
                json: true,
                set: Vec::new(),
                trace: None,
                trace_args: Default::default(),
                ranges: false,
            })
        };
        let from_link = run(PathBuf::from(&link)).expect("a link runs");
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s.json");
        std::fs::write(&path, serde_json::to_string(&s).expect("json")).expect("write");
        assert_eq!(from_link, run(path).expect("the file runs"));
        // A damaged link says it is the link, cut short.
        let bad = format!("{}X", &link[..link.len() - 10]);
        let err = run(PathBuf::from(&bad)).expect_err("refused");
        assert!(err.starts_with("the link https://example.org/"), "{err}");
        assert!(err.chars().count() < 400, "{err}");
    }

    #[test]
    fn a_story_prints_every_step_with_its_claims_checked() {
        let text = execute(Command::Story {
            id: "pay-for-speed".into(),
        })
        .expect("story");
        assert!(
            text.contains(
                "Step 2 of 2: Route to the 200 tokens/s variant (--set backend=voice-llm+fast)"
            ),
            "{text}"
        );
        assert_eq!(text.matches('✓').count(), 6, "{text}");
        // The prose carries the run's numbers.
        assert!(text.contains("0.0 % of answers meet them"), "{text}");
        assert!(!text.contains('✗'), "{text}");
        assert!(execute(Command::Story { id: "nope".into() }).is_err());
    }

    #[test]
    fn a_measured_run_is_replayed_strictly_and_compared_per_metric() {
        let dir = tempfile::tempdir().expect("temp dir");
        let data: PathBuf = [
            env!("CARGO_MANIFEST_DIR"),
            "..",
            "sim-core",
            "tests",
            "traces",
        ]
        .iter()
        .collect();
        for (from, to) in [
            ("rtx4090-requests.jsonl", "requests.jsonl"),
            ("rtx4090-meta.json", "meta.json"),
            ("rtx4090-timeseries.csv", "timeseries.csv"),
        ] {
            std::fs::copy(data.join(from), dir.path().join(to)).expect("copy");
        }
        let text = tlab::measured::command(dir.path(), &Default::default()).expect("replayed");
        assert!(
            text.starts_with("Measured run: meta-llama/Llama-3.1-8B on NVIDIA GeForce RTX 4090: 300 requests over 29.1 s, replayed strictly"),
            "{text}"
        );
        assert!(text.contains("KV cache: measured 41,408 tokens"), "{text}");
        // The measured side as the run's README states it.
        assert!(
            text.contains("65.5 s") && text.contains("32.4 ms") && text.contains("86.6 s"),
            "{text}"
        );
        assert!(text.contains("Kolmogorov–Smirnov"), "{text}");
        assert!(text.contains("most waiting: measured 234"), "{text}");
        // The request log alone: its model is unknown, said so.
        let e = tlab::measured::command(&data.join("rtx4090-requests.jsonl"), &Default::default())
            .expect_err("no meta.json beside it");
        assert!(e.contains("does not name its model"), "{e}");
    }

    #[test]
    fn a_trace_is_distilled_beside_its_exact_replay_and_written_out() {
        let dir = tempfile::tempdir().expect("temp dir");
        let base = preset_file(&dir, "chatbot-h100");
        let trace = test_trace("mooncake-first-2000.jsonl");
        let out = dir.path().join("distilled.json");
        let text = execute(Command::Trace {
            file: trace,
            distil: Some(base),
            out: Some(out.clone()),
            trace_args: Default::default(),
        })
        .expect("distilled");
        assert!(
            text.contains("Distilled into \"mooncake-first-2000.jsonl, distilled\": 2 classes"),
            "{text}"
        );
        assert!(
            text.contains("exact replay") && text.contains("prompt tokens from cache"),
            "{text}"
        );
        assert!(text.contains("which requests share which prefix"), "{text}");
        // The written scenario runs as any scenario, and fits a link.
        let s = sim_core::Scenario::from_json(&std::fs::read_to_string(&out).expect("written"))
            .expect("valid");
        assert!(sim_core::link::shareable(s.scenario()).is_ok());
    }

    #[test]
    fn a_trace_file_is_summarised_and_replayed_on_the_scenario_s_fleet() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = preset_file(&dir, "chatbot-h100");
        let trace = test_trace("rtx4090-requests.jsonl");
        let text = execute(Command::Trace {
            file: trace.clone(),
            distil: None,
            out: None,
            trace_args: Default::default(),
        })
        .expect("summary");
        assert!(
            text.starts_with(
                "rtx4090-requests.jsonl: per-request JSON lines, 300 requests over 29.1 s"
            ),
            "{text}"
        );
        let out = execute(Command::Run {
            scenario: path,
            json: true,
            set: Vec::new(),
            trace: Some(trace.clone()),
            trace_args: trace::TraceArgs {
                speed: 2.0,
                ..Default::default()
            },
            ranges: false,
        })
        .expect("run");
        let report: sim_core::Report = serde_json::from_str(&out).expect("report JSON");
        assert_eq!(report.requests.arrived, 300);
        let err = execute(Command::Trace {
            file: trace,
            distil: None,
            out: None,
            trace_args: trace::TraceArgs {
                window: Some("10-20".into()),
                ..Default::default()
            },
        })
        .expect_err("bad window");
        assert!(err.contains("FROM:TO"), "{err}");
    }

    #[test]
    fn a_trace_in_arrival_order_is_streamed_and_one_out_of_order_read_whole_alike() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = preset_file(&dir, "chatbot-h100");
        let trace = test_trace("mooncake-first-2000.jsonl");
        let run = |file: std::path::PathBuf| -> sim_core::Report {
            let out = execute(Command::Run {
                scenario: path.clone(),
                json: true,
                set: Vec::new(),
                trace: Some(file),
                trace_args: Default::default(),
                ranges: false,
            })
            .expect("run");
            serde_json::from_str(&out).expect("report JSON")
        };
        // Streamed: the library's replay of the trace held in memory.
        let text = std::fs::read_to_string(&trace).expect("read");
        let held = sim_core::traces::read(&text, &Default::default()).expect("trace");
        let mut s = sim_core::presets::chatbot_h100();
        held.apply_to(&mut s);
        assert_eq!(run(trace), sim_core::run_scenario(s).expect("valid"));
        // Lines reversed: read whole and sorted, every request replayed.
        let reversed = dir.path().join("reversed.jsonl");
        let lines: Vec<&str> = text.lines().rev().collect();
        std::fs::write(&reversed, lines.join("\n")).expect("write");
        assert_eq!(run(reversed).requests.completed, 2000);
        // A vllm bench serve document, one JSON value in arrival order: read
        // whole (it was once summarised as if streamable, and replayed
        // nothing).
        let bench = dir.path().join("bench.json");
        std::fs::write(
            &bench,
            "{\"input_lens\": [100, 200, 300], \"output_lens\": [10, 20, 30], \"start_times\": [0.0, 0.5, 1.0]}",
        )
        .expect("write");
        assert_eq!(run(bench).requests.completed, 3);
    }

    #[test]
    fn a_line_that_does_not_read_names_the_flag_that_leaves_it_out() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("broken.csv");
        std::fs::write(
            &path,
            "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,4808,10\n2023-11-16 18:17:04.0319600,many,8\n2023-11-16 18:17:05.0319600,300,8\n",
        )
        .expect("write");
        let summary = |skip_bad_lines| {
            execute(Command::Trace {
                file: path.clone(),
                distil: None,
                out: None,
                trace_args: trace::TraceArgs {
                    skip_bad_lines,
                    ..Default::default()
                },
            })
        };
        let e = summary(false).expect_err("a bad line");
        assert!(
            e.contains("line 3") && e.contains("--trace-skip-bad-lines"),
            "{e}"
        );
        let text = summary(true).expect("the rest");
        assert!(
            text.contains("2 requests") && text.contains("1 line left out as unreadable (line 3)"),
            "{text}"
        );
        // A header that does not read is no line to leave out: no such hint.
        std::fs::write(&path, "TIMESTAMP,Tokens\n1,2\n").expect("write");
        let e = summary(false).expect_err("a bad header");
        assert!(!e.contains("--trace-skip-bad-lines"), "{e}");
    }

    #[test]
    fn a_preset_round_trips_through_a_file_and_reproduces_the_library_run() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = preset_file(&dir, "chatbot-h100");
        let out = execute(Command::Run {
            scenario: path.clone(),
            json: true,
            set: Vec::new(),
            trace: None,
            trace_args: Default::default(),
            ranges: false,
        })
        .expect("run");
        let report: sim_core::Report = serde_json::from_str(&out).expect("report JSON");
        assert_eq!(
            report,
            sim_core::run_scenario(sim_core::presets::chatbot_h100()).expect("valid")
        );
        let text = execute(Command::Run {
            scenario: path,
            json: false,
            set: Vec::new(),
            trace: None,
            trace_args: Default::default(),
            ranges: false,
        })
        .expect("run");
        assert!(
            text.contains("TTFT") && text.contains("per million output tokens"),
            "{text}"
        );
    }

    #[test]
    fn a_bad_file_is_reported_with_its_problem() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("bad.json");
        let mut v = serde_json::to_value(sim_core::presets::chatbot_h100()).expect("value");
        v["serving"]["replicas"] = serde_json::json!(0);
        std::fs::write(&path, v.to_string()).expect("write");
        let err = execute(Command::Run {
            scenario: path,
            json: false,
            set: Vec::new(),
            trace: None,
            trace_args: Default::default(),
            ranges: false,
        })
        .expect_err("invalid");
        assert!(
            err.contains("serving.replicas must be 1..=1024, got 0"),
            "{err}"
        );
        let err = execute(Command::Run {
            scenario: dir.path().join("missing.json"),
            json: false,
            set: Vec::new(),
            trace: None,
            trace_args: Default::default(),
            ranges: false,
        })
        .expect_err("missing");
        assert!(err.contains("missing.json"), "{err}");
        assert!(
            execute(Command::Preset { id: "nope".into() })
                .expect_err("unknown")
                .contains("known: chatbot-h100")
        );
    }

    #[test]
    fn compare_prints_both_costs_and_the_crossover() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = preset_file(&dir, "pay-for-speed");
        let out = execute(Command::Compare {
            scenario: path.clone(),
            tier: None,
            loads: vec![0.1, 5.0, 50.0],
            json: false,
        })
        .expect("compare");
        assert!(
            out.contains("API tier \"voice-llm\"") && out.contains("self-hosted $/month"),
            "{out}"
        );
        assert!(out.contains("cheaper from 0.35 tasks/s"), "{out}");
        let err = execute(Command::Compare {
            scenario: path,
            tier: Some("nope".into()),
            loads: vec![1.0],
            json: false,
        })
        .expect_err("unknown tier");
        assert!(err.contains("the scenario has: voice-llm"), "{err}");
    }

    #[test]
    fn planning_commands_take_the_serving_software_as_a_setting() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = preset_file(&dir, "chatbot-h100");
        let headroom = |set: Vec<String>| {
            execute(Command::Headroom {
                scenario: path.clone(),
                slo: crate::commands::SloArgs {
                    ttft_p99_ms: Some(2000.0),
                    tpot_p99_ms: Some(200.0),
                    max_errors: None,
                    min_goodput: Some(0.0),
                },
                set,
            })
        };
        let vllm = headroom(Vec::new()).expect("headroom");
        let trt = headroom(vec!["software=tensorrt-llm".into()]).expect("headroom");
        assert!(vllm.starts_with("you can grow"), "{vllm}");
        assert_ne!(vllm, trt, "the software changes the step times");
        let err = execute(Command::Headroom {
            scenario: path.clone(),
            slo: crate::commands::SloArgs {
                ttft_p99_ms: Some(-1.0),
                tpot_p99_ms: None,
                max_errors: None,
                min_goodput: None,
            },
            set: Vec::new(),
        })
        .expect_err("a negative target");
        assert!(err.starts_with("--ttft-p99-ms must be > 0"), "{err}");
        let err = headroom(vec!["software=lmdeploy".into()]).expect_err("unknown");
        assert!(
            err.contains("--set software=lmdeploy")
                && err.contains("vllm")
                && err.contains("sglang"),
            "{err}"
        );
    }

    #[test]
    fn plan_split_answers_the_cheapest_ratio_beside_colocated_and_how_to_run_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = preset_file(&dir, "split-prefill-decode");
        let plan = |link: Option<&str>, json: bool| {
            execute(Command::Plan {
                scenario: path.clone(),
                slo: crate::commands::SloArgs {
                    ttft_p99_ms: None,
                    tpot_p99_ms: None,
                    max_errors: None,
                    min_goodput: None,
                },
                max_replicas: 64,
                gpus: Vec::new(),
                self_hosted: false,
                serial: false,
                pools: false,
                split: true,
                link: link.map(str::to_owned),
                full: false,
                json,
                set: Vec::new(),
                confidence: None,
            })
        };
        let text = plan(Some("nvlink"), false).expect("plan --split");
        assert!(text.contains("split over nvlink"), "{text}");
        assert!(text.contains("colocated: 8 replicas"), "{text}");
        assert!(text.contains("split:     2P1D"), "{text}");
        assert!(
            text.contains("--set decode_pool=decode --set kv_link=nvlink --set replicas=2 --set replicas@decode=1"),
            "{text}"
        );
        assert!(text.contains("less than what colocated does"), "{text}");
        let json: serde_json::Value =
            serde_json::from_str(&plan(Some("nvlink"), true).expect("json")).expect("JSON");
        assert_eq!(json["split"]["prefill"], 2);
        let err = plan(Some("carrier-pigeon"), false).expect_err("unknown link");
        assert!(err.contains("--link must be"), "{err}");
    }

    #[test]
    fn plan_pools_gives_each_class_its_answer_and_the_split_in_parallel_as_serially() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = preset_file(&dir, "chat-and-batch");
        let plan = |serial: bool, json: bool| {
            execute(Command::Plan {
                scenario: path.clone(),
                slo: crate::commands::SloArgs {
                    ttft_p99_ms: None,
                    tpot_p99_ms: None,
                    max_errors: None,
                    min_goodput: None,
                },
                max_replicas: 8,
                gpus: vec!["h100".into(), "l40s".into()],
                self_hosted: false,
                serial,
                pools: true,
                split: false,
                link: None,
                full: false,
                json,
                set: vec![
                    "ttft_target_ms[batch job]=60000".into(),
                    "tpot_target_ms[batch job]=200".into(),
                ],
                confidence: None,
            })
            .expect("plan --pools")
        };
        let text = plan(false, false);
        assert!(
            text.contains("class batch job (p99 TTFT 60.0 s, p99 TPOT 200 ms): "),
            "{text}"
        );
        assert!(
            text.contains("each class on its own, run together: "),
            "{text}"
        );
        assert!(text.contains("batch job: meets its targets"), "{text}");
        assert!(text.contains("\ncheapest: "), "{text}");
        assert_eq!(
            plan(false, true),
            plan(true, true),
            "parallel and serial plans differ"
        );
    }
}
