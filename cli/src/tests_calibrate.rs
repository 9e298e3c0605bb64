//! `tlab calibrate` on public files end to end: JSON rows, refusals.

use crate::*;
use std::path::PathBuf;

/// A file of `data/calibration/`.
pub(crate) fn calibration_file(name: &str) -> PathBuf {
    [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "data",
        "calibration",
        name,
    ]
    .iter()
    .collect()
}

fn calibrate(csv: Vec<PathBuf>, json: bool, fit: bool) -> Result<String, String> {
    execute(Command::Calibrate {
        csv,
        fit,
        leave_out: None,
        fit_below: None,
        rounds: 1,
        from_current: false,
        moe: false,
        timing: "vllm".into(),
        software: "tensorrt-llm-1".into(),
        measured: None,
        holdout: false,
        profile_out: None,
        json,
        bands: false,
        coverage: false,
        power: false,
    })
}

/// The header and the given lines (1-based, as in the file) of a public file.
fn excerpt(dir: &tempfile::TempDir, name: &str, lines: &[usize]) -> PathBuf {
    let path = calibration_file(&format!("public/{name}"));
    let text = std::fs::read_to_string(path).expect("the public file");
    let all: Vec<&str> = text.lines().collect();
    let mut out = vec![all[0]];
    out.extend(lines.iter().map(|l| all[l - 1]));
    let to = dir.path().join(name);
    std::fs::write(&to, out.join("\n") + "\n").expect("write");
    to
}

#[test]
fn json_rows_keep_the_files_columns_and_the_summary_counts_them() {
    let dir = tempfile::tempdir().expect("dir");
    let rows = sim_core_rows();
    let m = excerpt(&dir, "mlperf-llm-given.csv", &rows);
    let json = calibrate(vec![m], true, false).expect("runs");
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let out = v["rows"].as_array().expect("rows");
    assert_eq!(out.len(), rows.len());
    for (r, line) in out.iter().zip(&rows) {
        // The line in the excerpt, and the file's own keys.
        assert!(r["line"].as_u64().is_some(), "{r}");
        assert!(
            r["source_path"].is_string() && r["scenario_norm"].is_string(),
            "{r}"
        );
        let expressible = r["expressible"].as_bool().expect("expressible");
        assert_eq!(expressible, r.get("reason").is_none(), "line {line}: {r}");
        if expressible {
            assert!(!r["simulated"].as_object().expect("simulated").is_empty());
        }
    }
    let summary = &v["summary"]["mlperf"];
    assert_eq!(summary["rows"].as_u64(), Some(rows.len() as u64));
    // The GB200 row is refused; the H100 and L40S rows run.
    assert_eq!(summary["expressed"].as_u64(), Some(2), "{summary}");
    assert_eq!(out[0]["expressible"], false);
    let refused: u64 = summary["not_expressed"]
        .as_object()
        .expect("reasons")
        .values()
        .filter_map(serde_json::Value::as_u64)
        .sum();
    assert_eq!(
        refused + summary["expressed"].as_u64().expect("count"),
        rows.len() as u64
    );
}

/// Lines of `mlperf-llm-given.csv`: a GB200 row (refused), an H100
/// TensorRT-LLM Offline row and an L40S vLLM Offline row of the closed
/// division, not the reference harness (simulated).
fn sim_core_rows() -> Vec<usize> {
    let path = calibration_file("public/mlperf-llm-given.csv");
    let text = std::fs::read_to_string(path).expect("file");
    let find =
        |f: &dyn Fn(&str) -> bool| text.lines().position(f).map(|i| i + 1).expect("such a row");
    vec![
        find(&|l| l.contains(",GB200,") && l.contains(",Offline,")),
        find(&|l| {
            l.contains(",H100,")
                && l.contains(",llama2-70b,")
                && l.contains(",Offline,")
                && l.contains("TensorRT-LLM")
        }),
        find(&|l| {
            l.contains(",L40S,")
                && l.contains(",closed,")
                && !l.contains("reference")
                && l.contains(",Offline,")
                && l.contains(",vLLM,")
        }),
    ]
}

#[test]
fn a_fit_on_public_files_needs_their_own_rows_and_an_unknown_file_is_named() {
    let dir = tempfile::tempdir().expect("dir");
    // A GB200 row only: nothing TensorRT-LLM 1.x runs, so nothing to fit.
    let m = excerpt(&dir, "mlperf-llm-given.csv", &sim_core_rows()[..1]);
    let why = calibrate(vec![m.clone()], false, true).expect_err("nothing to fit");
    assert!(
        why.contains("no rows to fit") && why.contains("TensorRT-LLM 1.x"),
        "{why}"
    );
    // The public fit is TensorRT-LLM 1.x's alone: vLLM runs or --json beside it are refused.
    let why = calibrate(vec![m.clone()], true, true).expect_err("--json refused");
    assert!(why.contains("--fit") && why.contains("--json"), "{why}");
    let vllm = calibration_file("vllm-h100-runs.csv");
    let why = calibrate(vec![m, vllm], false, true).expect_err("vLLM runs refused");
    assert!(why.contains("no vLLM runs"), "{why}");
    let odd = dir.path().join("odd.csv");
    std::fs::write(&odd, "a,b\n1,2\n").expect("write");
    let why = calibrate(vec![odd.clone()], false, false).expect_err("refused");
    assert!(
        why.contains("odd.csv: line 1: not a calibration file"),
        "{why}"
    );
}

#[test]
fn json_gives_the_vllm_runs_rows_too_under_their_own_columns() {
    let dir = tempfile::tempdir().expect("dir");
    let vllm = calibration_file("vllm-h100-runs.csv");
    let m = excerpt(&dir, "mlperf-llm-given.csv", &sim_core_rows()[..1]);
    let json = calibrate(vec![m, vllm], true, false).expect("runs");
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let rows = v["rows"].as_array().expect("rows");
    let of = |source: &str| rows.iter().filter(|r| r["source"] == source).count();
    assert_eq!(of("mlperf"), 1);
    // The dense rows of the first file (the mixture-of-experts ones need --moe).
    let dense = of("vllm");
    assert!((20..34).contains(&dense), "{dense} vLLM rows");
    let r = rows
        .iter()
        .find(|r| r["source"] == "vllm")
        .expect("a vLLM row");
    assert!(
        r["experiment"].is_string() && r["stage_index"].is_i64(),
        "{r}"
    );
    for column in ["per_token_mean_ms", "e2e_mean_ms"] {
        let (m, s) = (&r["measured"][column], &r["simulated"][column]);
        assert!(
            m.as_f64().is_some_and(|v| v > 0.0) && s.as_f64().is_some_and(|v| v > 0.0),
            "{column}: {r}"
        );
    }
    let mape = v["summary"]["vllm"]["mape"]["per_token_mean_ms"]["mape"]
        .as_f64()
        .expect("a MAPE");
    assert!(mape < 0.15, "per-token MAPE {mape}");
    // --json compares; the fit stays with the tables.
    let vllm = calibration_file("vllm-h100-runs.csv");
    let why = calibrate(vec![vllm], true, true).expect_err("--fit with --json");
    assert!(why.contains("--json compares"), "{why}");
}
