//! Fitting the public profiles: the loss, a fit's rows and its held-out
//! GPU, and SGLang's two builds fitted apart.

use super::tests::INFERENCEX;
use super::*;
use sim_core::physics::{ServingCosts, ServingSoftware};

/// The H200 InferenceX rows of TensorRT-LLM at the two lowest
/// concurrencies of each configuration: a small file for the fit's tests.
fn h200_low_concurrency() -> String {
    let mut lines = INFERENCEX.lines();
    let header = lines.next().expect("header");
    let rows: Vec<&str> = lines
        .filter(|l| l.contains(",h200,") && l.contains(",trt,") && l.contains(",False,False,"))
        .filter(|l| l.split(',').nth(27).is_some_and(|c| c == "4" || c == "8"))
        .collect();
    assert!(rows.len() >= 4, "{} rows", rows.len());
    std::iter::once(header)
        .chain(rows)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_fit_loss_is_each_figures_mean_squared_log_error_averaged() {
    let text = h200_low_concurrency();
    let c = compare(&[("x.csv".into(), text)]).expect("runs");
    let l = fit::loss(&c.rows);
    // By hand: the three InferenceX figures' mean squared log errors, averaged.
    let term = |figure: &str| {
        let e: Vec<f64> = c
            .rows
            .iter()
            .filter_map(|r| r.error(figure))
            .map(|e| (1.0 + e).ln().powi(2))
            .collect();
        assert!(!e.is_empty(), "{figure}");
        e.iter().sum::<f64>() / e.len() as f64
    };
    let by_hand = (term("tput_per_gpu") + term("median_tpot_ms") + term("median_ttft_ms")) / 3.0;
    assert!((l - by_hand).abs() < 1e-12, "{l} vs {by_hand}");
    assert!(l > 0.0);
    // Simulated = measured is a loss of 0.
    let mut exact = c.rows.clone();
    for r in &mut exact {
        r.simulated = r.measured.clone();
    }
    assert_eq!(fit::loss(&exact), 0.0);
}

#[test]
fn a_fit_on_public_rows_lowers_its_loss_and_keeps_every_constant_in_range() {
    let text = h200_low_concurrency();
    let files = vec![("x.csv".to_owned(), text)];
    let start = sim_core::physics::VLLM_COSTS;
    let before = fit::loss(
        &compare_jobs(
            &jobs(&files).expect("rows"),
            &indicatif::ProgressBar::hidden(),
            Some(Trial {
                target: fit::FITTED[0],
                costs: start,
                rate_search: false,
            }),
        )
        .rows,
    );
    let (costs, after, n) = fit::fit(&files, fit::FITTED[0], None, start, 1).expect("fits");
    assert!(n >= 4);
    assert!(after < 0.8 * before, "{before} → {after}");
    for k in sim_core::physics::KNOBS
        .iter()
        .chain(&sim_core::physics::MOE_KNOBS)
        .chain(&sim_core::physics::FIXED_KNOBS)
    {
        let v = (k.get)(&costs);
        assert!(v >= k.range.0 && v <= k.range.1, "{} = {v}", k.name);
    }
    // Leaving the only GPU out leaves nothing to fit, said so, however
    // the GPU is spelt.
    for spelt in ["H200", "h-200", "h200"] {
        let e = fit::fit(&files, fit::FITTED[0], Some(spelt), start, 1).expect_err("nothing left");
        assert!(e.contains(&format!("besides {spelt}")), "{e}");
    }
    // A GPU no row runs on is refused, never a fit of every row.
    let e =
        fit::fit(&files, fit::FITTED[0], Some("rtx-pro-6000"), start, 1).expect_err("not there");
    assert!(
        e.contains("--leave-out \"rtx-pro-6000\"") && e.contains("they run on h200"),
        "{e}"
    );
}

#[test]
fn the_rows_of_a_left_out_gpu_are_the_table_and_never_the_fit() {
    let mut text = h200_low_concurrency();
    // One B200 row beside them: the fit without H200 has it alone.
    let b200_line = inferencex::read(INFERENCEX)
        .expect("parses")
        .iter()
        .filter(|r| r.hardware == "b200" && r.framework == "trt")
        .find(|r| inferencex::compare(r, None).expressible)
        .map(|r| r.line)
        .expect("a B200 row that runs");
    let b200 = INFERENCEX.lines().nth(b200_line - 1).expect("its line");
    text = format!("{text}\n{b200}");
    let files = vec![("x.csv".to_owned(), text)];
    let out = fit::command(&files, fit::FITTED[0], Some("h200"), false, 0, false).expect("fits");
    assert!(out.contains("fitted on 1 rows (without h200)"), "{out}");
    assert!(out.contains("| h200 | trt |"), "{out}");
    assert!(!out.contains("| b200 | trt |"), "{out}");
    // Its bands: the left-out GPU's alone, said to be held out.
    let json = fit::command(&files, fit::FITTED[0], Some("h200"), false, 0, true).expect("fits");
    let bands: Vec<sim_core::ranges::Band> = serde_json::from_str(&json).expect("bands");
    assert!(!bands.is_empty());
    for b in &bands {
        assert_eq!(b.gpu, sim_core::physics::Gpu::H200);
        assert!(b.source.contains("held out of the fit"), "{}", b.source);
    }
}

#[test]
fn sglangs_cuda_and_rocm_builds_are_fitted_apart_each_on_its_own_rows() {
    use sim_core::physics::Platform;
    let cuda = fit::Target::named("sglang").expect("a target");
    let rocm = fit::Target::named("sglang-rocm").expect("a target");
    assert_eq!(
        (cuda.software, cuda.platform),
        (ServingSoftware::Sglang, Platform::Cuda)
    );
    assert_eq!(rocm.platform, Platform::Rocm);
    let e = fit::Target::named("vllm").expect_err("not fitted to these files");
    assert!(e.contains("tensorrt-llm-1, sglang, sglang-rocm"), "{e}");
    // Both are weighed by the size of their log errors; TensorRT-LLM 1.x
    // keeps the squares it was fitted with.
    assert_eq!(cuda.weighing(), fit::Weighing::Absolute);
    assert_eq!(fit::FITTED[0].weighing(), fit::Weighing::Squared);
    // A trial of the ROCm build's constants runs on the MI300X row and
    // leaves the B200 row of the same engine as it is.
    let x = inferencex::read(INFERENCEX).expect("parses");
    let row = |gpu: &str| {
        x.iter()
            .find(|r| r.framework == "sglang" && r.hardware == gpu && r.disagg == "False")
            .expect("a co-located SGLang row")
    };
    let slow = ServingCosts {
        step_ns: 50_000_000,
        ..sim_core::physics::SGLANG_ROCM_COSTS
    };
    let trial = Some(Trial {
        target: rocm,
        costs: slow,
        rate_search: false,
    });
    let tpot = |r: &inferencex::Row, t: Option<Trial>| inferencex::compare(r, t).simulated["median_tpot_ms"];
    let (mi300x, b200) = (row("mi300x"), row("b200"));
    assert!(tpot(mi300x, trial) > tpot(mi300x, None) + 40.0);
    assert_eq!(tpot(b200, trial), tpot(b200, None));
    // The held-out fit refuses a GPU none of the build's rows run on.
    let files = vec![("x.csv".to_owned(), INFERENCEX.to_owned())];
    let e = fit::fit(&files, rocm, Some("b200"), slow, 0).expect_err("no B200 rows on ROCm");
    assert!(e.contains("mi300x") && !e.contains("b200,"), "{e}");
}
