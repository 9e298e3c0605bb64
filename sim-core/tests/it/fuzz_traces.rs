//! Property-based fuzzing of the files a user brings: the five trace
//! formats, a measured run's three files, and the committed corpus of
//! hostile files. Each case ends one of two ways: a refusal that names the
//! line (and column, and field), or an accepted input whose replay runs
//! and keeps every invariant of a report.
//!
//! `TLAB_FUZZ_CASES` sets the cases per surface (a few hundred by default,
//! within the test gate's time); `cargo xtask fuzz` runs 100,000.

use super::fuzz::{Tally, invariants, runner};
use proptest::prelude::*;
use sim_core::traces::{self, Options};
use sim_core::{Scenario, presets};

/// A small fleet the accepted traces replay on.
fn fleet() -> Scenario {
    let mut s = presets::chatbot_h100();
    s.limits.max_events = 2_000_000;
    s
}

/// Run `s` and check every invariant of its report.
fn runs_with_invariants(what: &str, s: Scenario) {
    match s.validate() {
        Ok(v) => invariants(what, &sim_core::run(&v)),
        Err(e) => panic!("{what}: an accepted input made an invalid scenario: {e}"),
    }
}

// ---------------------------------------------------------------- traces

/// A JSON number or, about one time in thirty, a hostile stand-in.
fn json_number(valid: std::ops::Range<u64>) -> impl Strategy<Value = String> {
    number_or_worse(valid, 250)
}

/// A JSON number, or a hostile stand-in one time in `1 + odds / 9`.
fn number_or_worse(valid: std::ops::Range<u64>, odds: u32) -> impl Strategy<Value = String> {
    prop_oneof![
        odds => valid.prop_map(|v| v.to_string()),
        1 => Just("-1".to_owned()),
        1 => Just("0".to_owned()),
        1 => Just("1e300".to_owned()),
        1 => Just("1e13".to_owned()),
        1 => Just("4294967296".to_owned()),
        1 => Just("2.5".to_owned()),
        1 => Just("\"12\"".to_owned()),
        1 => Just("null".to_owned()),
        1 => Just("NaN".to_owned()),
    ]
}

fn hashes() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        10 => Just(None),
        10 => proptest::collection::vec(0u64..50, 0..3)
            .prop_map(|v| Some(format!("{v:?}"))),
        1 => Just(Some("[-1]".to_owned())),
        1 => Just(Some("[\"a\"]".to_owned())),
        1 => Just(Some("7".to_owned())),
        1 => Just(Some("[1e30]".to_owned())),
    ]
}

/// A line that is no line of any format.
fn junk_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("{".to_owned()),
        Just("{}".to_owned()),
        Just("[1, 2]".to_owned()),
        Just("\u{feff}{\"timestamp\": 0}".to_owned()),
        "[ -~]{0,40}",
        "\\PC{0,12}",
    ]
}

fn mooncake_line() -> impl Strategy<Value = String> {
    let line = (
        json_number(0..600_000_000),
        json_number(1_600..20_000),
        json_number(1..2_000),
        hashes(),
    )
        .prop_map(|(t, i, o, h)| {
            let h = h.map_or(String::new(), |h| format!(", \"hash_ids\": {h}"));
            format!("{{\"timestamp\": {t}, \"input_length\": {i}, \"output_length\": {o}{h}}}")
        });
    prop_oneof![40 => line, 1 => junk_line()]
}

fn request_log_line() -> impl Strategy<Value = String> {
    let line = (
        json_number(0..600_000),
        json_number(1..20_000),
        json_number(1..2_000),
        any::<bool>(),
    )
        .prop_map(|(t, i, o, queued)| {
            let clock = if queued { "queued_ts" } else { "arrival_time" };
            format!("{{\"input_toks\": {i}, \"output_toks\": {o}, \"{clock}\": {t}}}")
        });
    prop_oneof![40 => line, 1 => junk_line()]
}

/// A CSV field or a hostile stand-in.
fn csv_number(valid: std::ops::Range<u64>) -> impl Strategy<Value = String> {
    prop_oneof![
        40 => valid.prop_map(|v| v.to_string()),
        1 => Just("-3".to_owned()),
        1 => Just(String::new()),
        1 => Just("1e300".to_owned()),
        1 => Just("x".to_owned()),
        1 => Just("NaN".to_owned()),
    ]
}

fn azure_text() -> impl Strategy<Value = String> {
    let header = prop_oneof![
        4 => Just("TIMESTAMP,ContextTokens,GeneratedTokens".to_owned()),
        1 => Just("\u{feff}TIMESTAMP,ContextTokens,GeneratedTokens".to_owned()),
        1 => Just("ContextTokens, TIMESTAMP ,GeneratedTokens,Extra".to_owned()),
        1 => Just("TIMESTAMP,ContextTokens".to_owned()),
    ];
    let stamp = prop_oneof![
        40 => (0u32..7, 0u32..24, 0u32..60, 0u32..60, 0u32..1000).prop_map(|(d, h, m, s, ms)| {
            format!("2023-11-{:02} {h:02}:{m:02}:{s:02}.{ms:03}", d + 16)
        }),
        1 => Just("2023-13-01 00:00:00".to_owned()),
        1 => Just("yesterday".to_owned()),
        1 => Just("2023-11-16T25:00:00".to_owned()),
    ];
    let row = (stamp, csv_number(1..20_000), csv_number(1..2_000))
        .prop_map(|(t, i, o)| format!("{t},{i},{o}"));
    let rows = proptest::collection::vec(prop_oneof![40 => row, 1 => junk_line()], 0..12);
    (header, rows).prop_map(|(h, rows)| {
        // Columns in the header's own order.
        let reorder = h.starts_with("ContextTokens");
        let body: Vec<String> = rows
            .into_iter()
            .map(|r| {
                let f: Vec<&str> = r.split(',').collect();
                if reorder && f.len() == 3 {
                    format!("{},{},{},x", f[1], f[0], f[2])
                } else {
                    r.clone()
                }
            })
            .collect();
        format!("{h}\n{}\n", body.join("\n"))
    })
}

fn burst_gpt_text() -> impl Strategy<Value = String> {
    let header = prop_oneof![
        4 => Just("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type".to_owned()),
        1 => Just("\u{feff}Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type".to_owned()),
    ];
    let model = prop_oneof![Just("ChatGPT"), Just("GPT-4"), Just("")];
    let row = (
        csv_number(0..600_000),
        model,
        csv_number(1..20_000),
        csv_number(0..2_000),
    )
        .prop_map(|(t, m, i, o)| format!("{t},{m},{i},{o},0,Conversation log"));
    let rows = proptest::collection::vec(prop_oneof![40 => row, 1 => junk_line()], 0..12);
    (header, rows).prop_map(|(h, rows)| format!("{h}\n{}\n", rows.join("\n")))
}

fn vllm_bench_text() -> impl Strategy<Value = String> {
    // Lists of one length, one time in ten of different lengths.
    let lengths = prop_oneof![
        9 => (0usize..8).prop_map(|n| (n, n, n)),
        1 => (0usize..8, 0usize..8, 0usize..8),
    ];
    let lists = lengths.prop_flat_map(|(a, b, c)| {
        (
            proptest::collection::vec(json_number(1..20_000), a),
            proptest::collection::vec(json_number(1..2_000), b),
            prop_oneof![
                Just(None),
                proptest::collection::vec(json_number(0..100), c).prop_map(Some)
            ],
        )
    });
    (
        lists,
        prop_oneof![Just("\"inf\""), Just("4.0"), Just("0"), Just("-2")],
    )
        .prop_map(|((i, o, starts), rate)| {
            let starts = starts.map_or(String::new(), |s| {
                format!(", \"start_times\": [{}]", s.join(", "))
            });
            format!(
                "{{\"input_lens\": [{}], \"output_lens\": [{}], \"request_rate\": {rate}{starts}}}",
                i.join(", "),
                o.join(", ")
            )
        })
}

fn lines_text(line: impl Strategy<Value = String>) -> impl Strategy<Value = String> {
    (proptest::collection::vec(line, 0..14), any::<bool>()).prop_map(|(lines, bom)| {
        let text = lines.join("\n");
        if bom { format!("\u{feff}{text}") } else { text }
    })
}

fn options() -> impl Strategy<Value = Options> {
    let window = prop_oneof![
        20 => Just(None),
        2 => (0.0f64..1e5, 0.0f64..1e6).prop_map(|(a, b)| Some((a, b))),
        1 => Just(Some((5.0, 1.0))),
    ];
    let speed = prop_oneof![
        20 => Just(1.0),
        1 => Just(0.0),
        1 => Just(1e7),
        2 => 0.01f64..100.0,
    ];
    (window, speed, proptest::bool::weighted(0.3)).prop_map(|(window, speed, skip)| Options {
        speed,
        window,
        skip_bad_lines: skip,
        ..Options::default()
    })
}

/// Whole-file refusals: what is wrong with the file as a whole, said so.
const FILE_LEVEL: [&str; 10] = [
    "the trace is empty",
    "not a trace format",
    "trace spans",
    "speed must be",
    "window",
    "no request of the",
    "input_lens",
    "output_lens",
    "start_times",
    "more than",
];

fn trace_case(text: &str, o: &Options, tally: &Tally) -> Result<(), TestCaseError> {
    match traces::read(text, o) {
        Err(e) => {
            tally.refused();
            prop_assert!(
                e.contains(" line ") || FILE_LEVEL.iter().any(|f| e.contains(f)),
                "a refusal that names no line: {e}"
            );
        }
        Ok(t) => {
            tally.ran();
            // Summarised in one pass, keeping no request, it says what the
            // requests read whole say (a file in arrival order, no rate).
            if let Some(mut s) = traces::TraceSummariser::new(o)
                .map_err(|e| TestCaseError::fail(format!("options: {e}")))?
            {
                let read = text.lines().try_for_each(|l| s.line(l));
                if s.unsorted().is_none() {
                    read.map_err(|e| TestCaseError::fail(format!("summariser: {e}")))?;
                    let streamed = s
                        .finish()
                        .map_err(|e| TestCaseError::fail(format!("summary: {e}")))?;
                    if let Some(streamed) = &streamed {
                        prop_assert_eq!(streamed, &t.trace_summary());
                    }
                    if let Some(streamed) = streamed.filter(|s| s.streamable()) {
                        // Replayed from its lines as the run goes, the same
                        // report as held.
                        let valid = |mut s: Scenario, how: &dyn Fn(&mut Scenario)| {
                            how(&mut s);
                            s.validate()
                                .map_err(|e| TestCaseError::fail(format!("replay: {e}")))
                        };
                        let held = valid(fleet(), &|s| t.apply_to(s))?;
                        let fed = valid(fleet(), &|s| streamed.apply_to(s))?;
                        let lines: Vec<Result<String, String>> =
                            text.lines().map(|l| Ok(l.to_owned())).collect();
                        let feed = traces::LineFeed::new(lines.into_iter(), o, &streamed);
                        let by_feed = sim_core::run_with_feed(&fed, Box::new(feed))
                            .map_err(|e| TestCaseError::fail(format!("feed: {e}")))?;
                        prop_assert_eq!(by_feed, sim_core::run(&held));
                    }
                }
            }
            // An accepted trace always makes a valid replay (no later
            // refusal naming an internal path) and a valid distillation.
            let mut s = fleet();
            t.apply_to(&mut s);
            runs_with_invariants("replay", s);
            let d = t
                .distil(&fleet(), "fuzz")
                .map_err(|e| TestCaseError::fail(format!("distil: {e}")))?;
            let mut short = d.scenario;
            short.set_duration(short.duration_s.min(600.0));
            runs_with_invariants("distilled", short);
        }
    }
    Ok(())
}

#[test]
fn every_trace_format_refuses_by_line_or_replays_with_every_invariant() {
    let formats: [(&str, BoxedStrategy<String>); 5] = [
        ("mooncake", lines_text(mooncake_line()).boxed()),
        ("request log", lines_text(request_log_line()).boxed()),
        ("azure", azure_text().boxed()),
        ("burstgpt", burst_gpt_text().boxed()),
        ("vllm bench", vllm_bench_text().boxed()),
    ];
    for (name, strategy) in formats {
        let tally = Tally::default();
        runner(300)
            .run(&(strategy, options()), |(text, o)| {
                trace_case(&text, &o, &tally)
            })
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        tally.check(name, 0.05);
    }
}

// ---------------------------------------------------------- measured run

fn measured_line() -> impl Strategy<Value = String> {
    let line = (
        json_number(1..4_000),
        json_number(1..500),
        0.0f64..100.0,
        prop_oneof![40 => 0.0f64..2.0, 1 => -5.0f64..0.0],
        0.0f64..20.0,
    )
        .prop_map(|(i, o, q, ttft, decode)| {
            format!(
                "{{\"input_toks\": {i}, \"output_toks\": {o}, \"queued_ts\": {q}, \"first_token_ts\": {}, \"last_token_ts\": {}}}",
                q + ttft,
                q + ttft + decode
            )
        });
    prop_oneof![40 => line, 1 => junk_line()]
}

fn meta_text() -> impl Strategy<Value = Option<String>> {
    let model = prop_oneof![
        8 => Just("\"meta-llama/Llama-3.1-8B-Instruct\""),
        1 => Just("\"nobody/unknown-7b\""),
        1 => Just("7"),
    ];
    let gpu = prop_oneof![
        4 => Just("\"NVIDIA H100 80GB HBM3\""),
        4 => Just("\"NVIDIA GeForce RTX 4090\""),
        1 => Just("\"a toaster\""),
    ];
    let seqs = prop_oneof![8 => Just("256"), 1 => Just("-1"), 1 => Just("\"x\"")];
    let meta = (model, gpu, seqs).prop_map(
        |(m, g, seqs)| {
            format!(
                "{{\"model\": {m}, \"hardware\": {{\"device_name\": {g}}}, \"engine_kwargs\": {{\"max_num_seqs\": {seqs}, \"dtype\": \"bfloat16\"}}}}"
            )
        },
    );
    prop_oneof![1 => Just(None), 8 => meta.prop_map(Some), 1 => junk_line().prop_map(Some)]
}

fn series_text() -> impl Strategy<Value = Option<String>> {
    let row = (
        0.0f64..60.0,
        csv_number(0..300),
        csv_number(0..300),
        0.0f64..100.0,
    )
        .prop_map(|(t, r, w, kv)| format!("{t},{r},{w},{kv}"));
    let rows = proptest::collection::vec(prop_oneof![40 => row, 1 => junk_line()], 0..8);
    let header = prop_oneof![
        Just("t,running,waiting,kv_cache_pct"),
        Just("\u{feff}t,running,waiting,kv_cache_pct"),
        Just("t,running"),
    ];
    prop_oneof![
        1 => Just(None),
        3 => (header, rows).prop_map(|(h, r)| Some(format!("{h}\n{}", r.join("\n"))))
    ]
}

#[test]
fn a_measured_run_refuses_by_file_and_line_or_replays() {
    let files = (lines_text(measured_line()), meta_text(), series_text());
    let tally = Tally::default();
    runner(300)
        .run(&files, |(requests, meta, series)| {
            match traces::measured::parse(&requests, meta.as_deref(), series.as_deref()) {
                Err(e) => {
                    tally.refused();
                    prop_assert!(
                        e.contains("line ")
                            || e.contains("meta.json")
                            || e.contains("timeseries.csv")
                            || e.contains("request log"),
                        "a refusal that names no file or line: {e}"
                    )
                }
                Ok(m) => {
                    // The strict replay runs, or says which setting the
                    // catalogue lacks.
                    match m.scenario(&sim_core::presets::chatbot_h100()) {
                        Ok((s, _assumed)) => {
                            tally.ran();
                            runs_with_invariants("measured replay", s);
                        }
                        Err(e) => {
                            tally.refused();
                            prop_assert!(
                                e.contains("model") || e.contains("GPU") || e.contains("dtype"),
                                "{e}"
                            );
                        }
                    }
                }
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    tally.check("measured run", 0.05);
}

// ------------------------------------------------------ the hostile corpus

#[test]
fn every_file_of_the_hostile_corpus_is_refused_by_name_or_runs() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/repro/hostile-files");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("the corpus")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x != "md"))
        .collect();
    files.sort();
    assert!(files.len() >= 16, "{files:?}");
    let tally = Tally::default();
    for path in files {
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(&path).expect("text");
        if name.ends_with(".json") {
            match Scenario::from_json(&text) {
                Err(e) => {
                    tally.refused();
                    assert!(
                        e.problems
                            .iter()
                            .all(|p| p.contains('.') || p.contains('_')),
                        "{name}: {e}"
                    );
                }
                Ok(v) => {
                    tally.ran();
                    invariants(&name, &sim_core::run(&v));
                }
            }
        } else {
            match traces::read(&text, &Options::default()) {
                Err(e) => {
                    tally.refused();
                    assert!(e.contains(" line "), "{name}: {e}");
                }
                Ok(t) => {
                    tally.ran();
                    let mut s = fleet();
                    t.apply_to(&mut s);
                    runs_with_invariants(&name, s);
                }
            }
        }
    }
    tally.check("hostile corpus", 0.1);
}
