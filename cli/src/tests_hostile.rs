//! The hostile files of 4 December (`sim-core/tests/repro/hostile-files/`),
//! through the commands a user runs them with: each is refused naming
//! where, or runs as asked.

use crate::*;
use std::path::PathBuf;

/// A file of the hostile corpus.
fn hostile(name: &str) -> PathBuf {
    [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "sim-core",
        "tests",
        "repro",
        "hostile-files",
        name,
    ]
    .iter()
    .collect()
}

fn distil(trace: PathBuf, base: &str) -> Result<String, String> {
    execute(Command::Trace {
        file: trace,
        distil: Some(hostile(base)),
        out: None,
        trace_args: Default::default(),
    })
}

fn run_json(
    scenario: PathBuf,
    set: &[&str],
    trace: Option<PathBuf>,
) -> Result<sim_core::Report, String> {
    let out = execute(Command::Run {
        scenario,
        json: true,
        set: set.iter().map(|s| (*s).to_owned()).collect(),
        trace,
        trace_args: Default::default(),
        ranges: false,
    })?;
    Ok(serde_json::from_str(&out).expect("report JSON"))
}

#[test]
fn n1_a_trace_spanning_more_than_a_week_is_refused_by_its_lines_before_any_work() {
    for file in [
        "trace-ts-1e300ms-distil-panic.jsonl",
        "trace-ts-1e20ms-distil-abort.jsonl",
        "trace-ts-1e13ms-distil-abort-40GB.jsonl",
        "trace-ts-3e11ms-distil-2cpu-s.jsonl",
    ] {
        let e = distil(hostile(file), "chatbot-h100.json").expect_err(file);
        assert!(
            e.contains(file)
                && e.contains("from line 1 to line 4")
                && e.contains("at most 604,800 s"),
            "{file}: {e}"
        );
    }
}

#[test]
fn n3_trace_errors_name_the_line_and_the_field_as_written() {
    let e = run_json(
        hostile("chatbot-h100.json"),
        &[],
        Some(hostile("trace-3-lines-error-names-sorted-index.jsonl")),
    )
    .expect_err("three hashes of 512 tokens do not fit 100 tokens");
    assert!(
        e.contains("line 3: field \"hash_ids\" has 2 hashes, more than its 100-token prompt"),
        "{e}"
    );
    assert!(!e.contains("workload.arrival"), "{e}");
    let e = run_json(
        hostile("chatbot-h100.json"),
        &[],
        Some(hostile("trace-span-7days-plus-1s.jsonl")),
    )
    .expect_err("a week and a second");
    assert!(
        e.contains("spans 604,801 s (from line 1 to line 20)"),
        "{e}"
    );
    assert!(!e.contains("duration_s"), "{e}");
}

#[test]
fn n4_a_byte_order_mark_is_read_past() {
    for file in ["trace-bom-azure.csv", "trace-bom-mooncake.jsonl"] {
        let r = run_json(hostile("chatbot-h100.json"), &[], Some(hostile(file))).expect(file);
        assert!(r.complete && r.requests.completed > 0, "{file}");
    }
}

#[test]
fn n5_a_distilled_scenario_always_validates_and_runs() {
    // 100,001 requests at one instant: faster than a scenario's rate bound.
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = dir.path().join("trace-100001-at-zero.jsonl");
    let line =
        "{\"timestamp\": 0, \"input_length\": 100, \"output_length\": 20, \"hash_ids\": []}\n";
    std::fs::write(&trace, line.repeat(100_001)).expect("write");
    let text = distil(trace, "chatbot-h100.json").expect("distils");
    assert!(
        text.contains("they arrive within 0 s, faster than a scenario's highest rate (100,000 requests/s), so the distilled arrivals spread them over 2 s"),
        "{text}"
    );
    // A routing rule by a class the trace does not have goes, and says so.
    let text = distil(
        crate::tests::test_trace("mooncake-first-2000.jsonl"),
        "pools-class-rule.json",
    )
    .expect("distils");
    assert!(
        text.contains("the routing rule class simple -> small: the trace's requests are classed"),
        "{text}"
    );
}

#[test]
fn n6_set_refuses_what_it_cannot_run_as_written() {
    let e = run_json(hostile("autoscale-1-4.json"), &["autoscale.min=5"], None)
        .expect_err("min above max");
    assert!(
        e.contains("--set autoscale.min=5") && e.contains("autoscale.max, 4"),
        "{e}"
    );
    // In order, both bounds move.
    let r = run_json(
        hostile("autoscale-1-4.json"),
        &["autoscale.max=6", "autoscale.min=5"],
        None,
    )
    .expect("max first");
    assert!(r.complete);
    let e = run_json(
        hostile("pools-class-rule.json"),
        &["routing=class simple and class hard -> small"],
        None,
    )
    .expect_err("two classes in one rule");
    assert!(
        e.contains("at \"class\" (character 18): a request has one class"),
        "{e}"
    );
    let e =
        run_json(hostile("chatbot-h100.json"), &["replicas=2.5"], None).expect_err("half a server");
    assert!(
        e.contains("replicas must be a whole number, got 2.5"),
        "{e}"
    );
}

#[test]
fn n7_a_week_is_refused_before_running_unless_the_limit_covers_it() {
    let e = run_json(
        hostile("duration-week-cut-false-in-flight-warning.json"),
        &[],
        None,
    )
    .expect_err("a one-day limit on a week");
    assert!(
        e.contains("limits.max_sim_time_s (86400 s) must be at least duration_s (604800 s)")
            && e.contains("leave out 85.7 % of its requests"),
        "{e}"
    );
    // Set through the catalogue, the duration raises the limit with it.
    let r = run_json(
        hostile("chatbot-h100.json"),
        &["duration=604800", "arrival.rate=0.01"],
        None,
    )
    .expect("a week");
    assert!(r.complete && r.arrivals_left_out.is_none());
    assert!(r.sim_time_s >= 604_800.0, "{}", r.sim_time_s);
}
