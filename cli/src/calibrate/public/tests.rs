//! The public files are read as they are, every row is expressed or given
//! its reason, and the rows that run give the files' own column names.

use super::*;
use sim_core::physics::ServingSoftware;
use sim_core::scenario::Batching;

const MLPERF: &str = include_str!("../../../../data/calibration/public/mlperf-llm-given.csv");
pub(super) const INFERENCEX: &str =
    include_str!("../../../../data/calibration/public/inferencex-dsr1-given.csv");
const VLLM: &str = include_str!("../../../../data/calibration/vllm-h100-runs.csv");

#[test]
fn each_file_is_told_by_its_header() {
    assert_eq!(Source::of(MLPERF), Ok(Source::Mlperf));
    assert_eq!(Source::of(INFERENCEX), Ok(Source::Inferencex));
    assert_eq!(Source::of(VLLM), Ok(Source::Vllm));
    // A spreadsheet's byte-order mark changes nothing.
    assert_eq!(Source::of(&format!("\u{feff}{MLPERF}")), Ok(Source::Mlperf));
    let err = Source::of("a,b,c\n1,2,3\n").expect_err("not a calibration file");
    assert!(err.starts_with("line 1:"), "{err}");
    let (public, vllm) = split(vec![
        ("m.csv".into(), MLPERF.into()),
        ("v.csv".into(), VLLM.into()),
        ("x.csv".into(), INFERENCEX.into()),
    ])
    .expect("all three are known");
    assert_eq!(public.len(), 2);
    assert_eq!(vllm.len(), 1);
    let err = split(vec![("odd.csv".into(), "x\n1\n".into())]).expect_err("refused");
    assert!(err.starts_with("odd.csv: line 1:"), "{err}");
}

#[test]
fn every_row_is_read_with_its_line() {
    let m = mlperf::read(MLPERF).expect("MLPerf parses");
    assert_eq!(m.len(), 749);
    assert_eq!(m[0].line, 2);
    let x = inferencex::read(INFERENCEX).expect("InferenceX parses");
    assert_eq!(x.len(), 1254);
    assert_eq!(x.last().map(|r| r.line), Some(1255));
    // A bad number is refused by line and column.
    let mut lines: Vec<String> = INFERENCEX.lines().take(3).map(str::to_owned).collect();
    lines[2] = lines[2].replacen(",1024,1024,", ",1024,lots,", 1);
    let err = inferencex::read(&lines.join("\n")).expect_err("refused");
    assert!(err.starts_with("line 3, column "), "{err}");
}

/// The reason a row cannot run, without running anything heavy: the checks
/// come before any simulation.
fn reason_mlperf(gpu: &str, engine: &str, benchmark: &str, scenario: &str) -> Option<String> {
    let row = mlperf::read(MLPERF)
        .expect("parses")
        .into_iter()
        .find(|r| {
            r.gpu_norm == gpu
                && r.engine == engine
                && r.benchmark_norm == benchmark
                && r.scenario_norm == scenario
        })?;
    mlperf::compare(&row, None).reason
}

#[test]
fn a_row_the_catalogue_lacks_is_refused_with_its_reason_never_run_as_another() {
    // GB200 is not run as a B200: the name says which part is missing.
    let why = reason_mlperf(
        "GB200",
        "TensorRT-LLM (inferred from TensorRT)",
        "llama2-70b",
        "Offline",
    )
    .expect("a GB200 row, refused");
    assert!(
        why.contains("GB200") && why.contains("not in the catalogue"),
        "{why}"
    );
    let why = reason_mlperf(
        "H100",
        "TensorRT-LLM (inferred from TensorRT)",
        "gptj",
        "Offline",
    )
    .expect("a GPT-J row, refused");
    assert!(why.contains("gptj"), "{why}");
    let rows = mlperf::read(MLPERF).expect("parses");
    let open = rows
        .iter()
        .find(|r| r.division == "open")
        .expect("an open row");
    let why = mlperf::compare(open, None).reason.expect("refused");
    assert!(why.starts_with("open division"), "{why}");
    let harness = rows
        .iter()
        .find(|r| r.division == "closed" && r.system_id.contains("reference"))
        .expect("a reference-harness row");
    let why = mlperf::compare(harness, None).reason.expect("refused");
    assert!(why.contains("reference harness"), "{why}");
    let x = inferencex::read(INFERENCEX).expect("parses");
    for (framework, says) in [
        ("atom", "no profile"),
        ("dynamo-trt", "no profile"),
        // SGLang's disaggregated deployments have its profile but not its layout.
        ("mori-sglang", "disaggregated"),
    ] {
        let row = x
            .iter()
            .find(|r| r.framework == framework && inferencex::gpu(&r.hardware).is_some())
            .expect("such a row");
        let c = inferencex::compare(row, None);
        assert!(!c.expressible);
        assert!(
            c.reason.as_deref().is_some_and(|r| r.contains(says)),
            "{:?}",
            c.reason
        );
        assert!(c.simulated.is_empty());
    }
    let gb = x
        .iter()
        .find(|r| r.hardware == "gb200")
        .expect("a GB200 row");
    assert!(
        inferencex::compare(gb, None)
            .reason
            .is_some_and(|r| r.contains("gb200"))
    );
}

#[test]
fn a_mean_answer_longer_than_the_benchmark_allows_is_refused_by_that_reason() {
    let rows = mlperf::read(MLPERF).expect("parses");
    let row = rows
        .iter()
        .find(|r| {
            r.benchmark_norm == "llama3.1-8b"
                && r.gpu_norm == "B200"
                && r.mean_output_tokens_per_sample.is_some_and(|v| v > 1e6)
        })
        .expect("a row giving a total");
    let why = mlperf::compare(row, None).reason.expect("refused");
    assert!(
        why.contains("longer than the benchmark's longest answer (128 tokens)"),
        "{why}"
    );
}

#[test]
fn an_offline_row_runs_and_reports_under_the_files_column_names() {
    let row = mlperf::read(MLPERF)
        .expect("parses")
        .into_iter()
        .find(|r| {
            r.gpu_norm == "H100"
                && r.engine == "vLLM"
                && r.benchmark_norm == "llama3.1-8b"
                && r.scenario_norm == "Offline"
        })
        .or_else(|| {
            mlperf::read(MLPERF).ok()?.into_iter().find(|r| {
                r.gpu_norm == "H100"
                    && r.engine.starts_with("TensorRT-LLM")
                    && r.benchmark_norm == "llama2-70b"
                    && r.scenario_norm == "Offline"
            })
        })
        .expect("an H100 offline row");
    let c = mlperf::compare(&row, None);
    assert!(c.expressible, "{:?}", c.reason);
    let layout = c.layout.as_deref().expect("the layout is printed");
    assert!(layout.contains("TP"), "{layout}");
    let measured = c.measured["tokens_per_s"];
    let simulated = c.simulated["tokens_per_s"];
    assert_eq!(Some(measured), row.tokens_per_s);
    assert!(simulated.is_finite() && simulated > 0.0, "{simulated}");
    let json = serde_json::to_value(&c).expect("serialises");
    assert_eq!(json["scenario_norm"], "Offline");
    assert_eq!(json["source_path"], row.source_path.as_str());
    assert!(json["simulated"]["tokens_per_s"].is_number());
    assert!(json.get("rate_ratio").is_none());
}

#[test]
fn an_inferencex_row_runs_its_closed_loop() {
    let x = inferencex::read(INFERENCEX).expect("parses");
    for (framework, software) in [
        ("trt", ServingSoftware::TensorrtLlm1),
        ("sglang", ServingSoftware::Sglang),
    ] {
        let row = x
            .iter()
            .filter(|r| r.framework == framework)
            .filter(|r| r.disagg == "False" && r.decode_dp_attention == "False")
            .filter(|r| inferencex::gpu(&r.hardware).is_some())
            .min_by_key(|r| (r.concurrency, r.osl))
            .expect("a co-located row on a catalogue GPU");
        closed_loop_row(row, software);
    }
}

fn closed_loop_row(row: &inferencex::Row, software: ServingSoftware) {
    let (setup, s) = inferencex::scenario(row, None).expect("expressed");
    assert_eq!(setup.software, software);
    assert_eq!(s.serving.software, software);
    // SGLang runs new prompts in passes of their own (no mixed chunks);
    // TensorRT-LLM mixes prompt chunks into the decode passes.
    assert_eq!(
        matches!(s.serving.batching, Batching::Continuous { .. }),
        software == ServingSoftware::Sglang,
        "{:?}",
        s.serving.batching
    );
    let c = inferencex::compare(row, None);
    assert!(c.expressible, "{:?}", c.reason);
    assert_eq!(c.system.map(|s| s.1), Some(software));
    for key in [
        "tput_per_gpu",
        "median_tpot_ms",
        "mean_ttft_ms",
        "median_e2el_ms",
    ] {
        let s = c.simulated.get(key).copied().unwrap_or(f64::NAN);
        assert!(s.is_finite() && s > 0.0, "{key}: {s}");
        assert!(c.measured.contains_key(key), "{key}");
    }
    let json = serde_json::to_value(&c).expect("serialises");
    assert_eq!(json["concurrency"], row.concurrency);
    assert_eq!(json["run_url"], row.run_url.as_str());
    // The same row gives the same numbers on a second run.
    let again = inferencex::compare(row, None);
    assert_eq!(c.simulated, again.simulated);
}

#[test]
fn every_benchmark_with_a_model_has_its_dataset_lengths() {
    let all = mlperf::datasets();
    assert_eq!(all.len(), 7, "datasets.csv parses whole");
    for r in mlperf::read(MLPERF).expect("parses") {
        if mlperf::model(&r.benchmark_norm).is_some() {
            assert!(
                all.iter().any(|d| d.benchmark == r.benchmark_norm),
                "no lengths for {}",
                r.benchmark_norm
            );
        }
    }
}

#[test]
fn a_truncated_log_normal_keeps_under_its_cap_with_its_median() {
    let Dist::Empirical { bins } = mlperf::truncated_log_normal(220.0, 600.0, 1024.0) else {
        panic!("a histogram");
    };
    assert!(bins.iter().all(|b| b.hi <= 1024.0 + 1e-9 && b.lo < b.hi));
    let total: f64 = bins.iter().map(|b| b.weight).sum();
    let below: f64 = bins
        .iter()
        .filter(|b| b.hi <= 220.0)
        .map(|b| b.weight)
        .sum();
    let share = below / total;
    // Half the untruncated mass lies under the median; cutting the tail
    // above 1,024 (about 4 % of it) raises the share a little.
    assert!((0.45..0.56).contains(&share), "{share}");
}

use sim_core::dist::Dist;

/// Saturated throughput where the physics holds without any fit to these
/// files: TensorRT-LLM's Llama-2-70B on B200 and RTX PRO 6000 (GDDR7, PCIe),
/// vLLM's on MI325X. Offline tokens/s within 8 % on every group (today 2.2,
/// 6.4 and 2.7 %): a guard for the physics changes to come.
#[test]
fn offline_throughput_of_llama_2_70b_holds_on_b200_rtx_pro_6000_and_mi325x() {
    let rows = mlperf::read(MLPERF).expect("parses");
    for (gpu, engine) in [
        ("B200", "TensorRT-LLM"),
        ("RTX PRO 6000", "TensorRT-LLM"),
        ("MI325X", "vLLM"),
    ] {
        let group: Vec<&mlperf::Row> = rows
            .iter()
            .filter(|r| {
                r.gpu_norm == gpu
                    && r.engine.starts_with(engine)
                    && r.benchmark_norm == "llama2-70b"
                    && r.scenario_norm == "Offline"
                    && r.division == "closed"
            })
            .collect();
        let errors: Vec<f64> = group
            .par_iter()
            .map(|r| mlperf::compare(r, None))
            .filter_map(|c| c.error("tokens_per_s"))
            .collect();
        assert!(errors.len() >= 5, "{gpu}: {} rows ran", errors.len());
        let mape = errors.iter().map(|e| e.abs()).sum::<f64>() / errors.len() as f64;
        assert!(
            mape < 0.08,
            "{gpu} {engine}: MAPE {:.1} % over {} rows",
            mape * 100.0,
            errors.len()
        );
    }
}

#[test]
fn a_row_listed_twice_is_simulated_once_and_keeps_its_own_line_and_path() {
    let lines: Vec<&str> = MLPERF.lines().collect();
    let row = lines
        .iter()
        .position(|l| {
            l.contains(",B200,")
                && l.contains(",llama2-70b,")
                && l.contains(",Offline,")
                && l.contains(",closed,")
        })
        .expect("a B200 Offline row");
    let again = lines[row].replacen("/Offline/performance/", "/Offline/performance-again/", 1);
    assert_ne!(again, lines[row]);
    let text = [lines[0], lines[row], again.as_str()].join("\n");
    let c = compare(&[("m.csv".into(), text)]).expect("runs");
    assert_eq!(c.rows.len(), 2);
    let (a, b) = (&c.rows[0], &c.rows[1]);
    assert!(a.expressible, "{:?}", a.reason);
    assert_eq!((a.line, b.line), (2, 3));
    assert_ne!(a.keys["source_path"], b.keys["source_path"]);
    assert_eq!(a.simulated, b.simulated);
    assert_eq!(a.measured, b.measured);
}

#[test]
fn the_verdict_is_right_where_the_saturated_throughput_was_measured() {
    // Issue 45: an MLPerf Offline row measured its system's saturated
    // throughput. On the systems whose band is narrow enough to tell
    // (high ÷ low ≤ 1.25), each row the band claims (its own step ratio
    // inside it) is stable at 75 % of its measured capacity and overloaded
    // at 133 % of it (a 6.7 % margin past the band's ends), open-loop arrivals
    // on one replica. A wider band says "near the knee" there, as it should:
    // the simulation cannot tell.
    use sim_core::ranges::{RangeRuns, Verdict, band_for};
    use sim_core::scenario::Arrival;
    let (mut checked, mut wide, mut outside) = (Vec::new(), Vec::new(), 0);
    for row in mlperf::read(MLPERF).expect("MLPerf parses") {
        let Ok((setup, class, measured, simulated)) = mlperf::measured_capacity(&row) else {
            continue;
        };
        let probe = setup.scenario(
            "probe",
            Arrival::Poisson { rate_per_s: 1.0 },
            class.clone(),
            1.0,
        );
        let band = band_for(&probe.serving);
        let ratio = simulated / measured;
        if !(band.low..=band.high).contains(&ratio) {
            outside += 1;
            continue;
        }
        // A wide band cannot say stable or overloaded so close to the
        // capacity, but it is never wrong the other way: its fast end drains
        // at 75 % and its slow end grows at 133 %. Checked on the first row
        // of each system.
        let narrow = band.measured && band.high / band.low <= 1.25;
        let system = (
            row.gpu_norm.clone(),
            row.engine.clone(),
            row.benchmark_norm.clone(),
        );
        if !narrow {
            if wide.contains(&system) {
                continue;
            }
            wide.push(system);
        }
        for (share, want) in [(0.75, Verdict::Stable), (4.0 / 3.0, Verdict::Overloaded)] {
            let rate = share * measured;
            // Long enough for a queue at 133 % to show: 3,000 arrivals, each
            // run to its end as a user's scenario is (a calibration run stops
            // half a window after its arrivals).
            let mut s = setup.scenario(
                "verdict",
                Arrival::Poisson { rate_per_s: rate },
                class.clone(),
                (3_000.0 / rate).clamp(60.0, 1_800.0),
            );
            s.limits = sim_core::scenario::Limits::default();
            let mut runs = RangeRuns::new(&s);
            sim_core::plan::drive(&mut runs).expect("runs");
            let got = runs.result().expect("ranges").verdict;
            let what = format!(
                "line {}: {} {} at {share} × its measured {measured:.2} tasks/s (simulated {simulated:.2}, ratio {ratio:.3}, band {:.2}–{:.2}): {got:?}",
                row.line, row.gpu_norm, row.benchmark_norm, band.low, band.high
            );
            if narrow {
                assert_eq!(got, want, "{what}");
            } else {
                assert_ne!(
                    got,
                    if share < 1.0 {
                        Verdict::Overloaded
                    } else {
                        Verdict::Stable
                    },
                    "{what}"
                );
            }
        }
        if !narrow {
            continue;
        }
        checked.push(format!(
            "{} {} {} (line {})",
            row.gpu_norm, row.engine, row.benchmark_norm, row.line
        ));
    }
    assert!(checked.len() >= 3, "rows checked: {checked:?}");
    assert!(wide.len() >= 10, "systems with a wide band: {wide:?}");
    eprintln!(
        "verdict checked on {checked:?}; {} systems with a wide band; {outside} rows outside their band",
        wide.len()
    );
}

#[test]
fn inferencex_runs_the_fit_never_saw_fall_inside_their_ranges() {
    // Issue 45: coverage on runs never fitted. B200 with TensorRT-LLM: each
    // row's ranges with the committed bands, then with bands read from these
    // rows without its own benchmark run (`run_url`, a sweep of one
    // configuration's concurrencies). The
    // whole files' table is in docs/ranges.md (`tlab calibrate --coverage`
    // with the public files).
    let rows: Vec<inferencex::Row> = inferencex::read(INFERENCEX)
        .expect("InferenceX parses")
        .into_iter()
        .filter(|r| r.hardware == "b200" && r.framework == "trt")
        .collect();
    let compared: Vec<Compared> = rows
        .par_iter()
        .map(|r| inferencex::compare(r, None))
        .collect();
    let (committed, held_out) =
        crate::calibrate::coverage::public(&rows, &compared).expect("coverage");
    // TPOT median and output tokens/s per GPU: most rows state them.
    for c in [&committed, &held_out] {
        for m in &c[1..3] {
            assert!(m.rows >= 40, "{c:?}");
            assert!(f64::from(m.inside) >= 0.8 * f64::from(m.rows), "{c:?}");
        }
    }
    eprintln!("committed {committed:?}\nheld out {held_out:?}");
}
