use super::*;
use crate::physics::{Gpu, ServingSoftware};

fn band(gpu: Gpu, moe: bool, low: f64, high: f64, rows: u32) -> Band {
    Band {
        gpu,
        software: ServingSoftware::Vllm,
        moe,
        low,
        high,
        rows,
        source: format!("{} rows", rows),
        prefill: None,
        extent: None,
    }
}

#[test]
fn a_measured_band_is_its_own_and_holds_the_profile() {
    let t = [band(Gpu::H100, false, 0.95, 1.08, 40)];
    let b = band_in(&t, Gpu::H100, ServingSoftware::Vllm, false);
    assert!(b.measured);
    assert_eq!((b.low, b.high, b.rows), (0.95, 1.08, 40));
    // A band on one side of the profile still reaches it.
    let t = [band(Gpu::H100, false, 1.1, 1.3, 40)];
    let b = band_in(&t, Gpu::H100, ServingSoftware::Vllm, false);
    assert_eq!((b.low, b.high), (1.0, 1.3));
}

#[test]
fn an_unmeasured_system_borrows_the_nearest_band_widened() {
    let t = [
        band(Gpu::H100, false, 0.9, 1.1, 40),
        band(Gpu::H100, true, 0.85, 1.2, 30),
        band(Gpu::A100, false, 0.5, 2.0, 2),
    ];
    // Same software and family on another GPU: H100 dense, widened 1.5×
    // in log scale, no narrower than ±25 %.
    let b = band_in(&t, Gpu::B200, ServingSoftware::Vllm, false);
    assert!(!b.measured);
    assert_eq!(b.low, 0.8, "0.9^1.5 = 0.854 is narrower than the floor");
    assert_eq!(b.high, 1.25);
    assert!(b.source.starts_with("nothing measured on B200"));
    // Two rows on A100 are too few: the estimate says so by its rows.
    let a = band_in(&t, Gpu::A100, ServingSoftware::Vllm, false);
    assert!(!a.measured);
    assert_eq!(a.rows, 2);
    let m = band_in(&t, Gpu::B200, ServingSoftware::Vllm, true);
    assert!((m.low - 0.85f64.powf(1.5)).abs() < 1e-12);
    assert!((m.high - 1.2f64.powf(1.5)).abs() < 1e-12);
    // Nothing of the software at all: ±25 %.
    let n = band_in(&t, Gpu::H100, ServingSoftware::TensorrtLlm, false);
    assert_eq!((n.low, n.high, n.rows), (0.8, 1.25, 0));
}

#[test]
fn quantiles_interpolate_between_order_statistics() {
    assert_eq!(quantile(&[], 0.5), None);
    assert_eq!(quantile(&[3.0], 0.9), Some(3.0));
    let v = [4.0, 1.0, 3.0, 2.0, 5.0];
    assert_eq!(quantile(&v, 0.0), Some(1.0));
    assert_eq!(quantile(&v, 0.5), Some(3.0));
    assert!((quantile(&v, 0.9).unwrap() - 4.6).abs() < 1e-12);
    assert_eq!(quantile(&[1.0, f64::NAN, 2.0], 1.0), Some(2.0));
}

#[test]
fn the_committed_table_reads() {
    // An unreadable file would silently make every band an estimate.
    let parsed: Result<Vec<Band>, _> = serde_json::from_str(include_str!("bands.json"));
    assert!(parsed.is_ok(), "{:?}", parsed.err());
}

#[test]
fn a_measured_prompt_band_sets_the_prompt_part_of_each_end() {
    let mut b = band(Gpu::H100, false, 0.9, 1.2, 40);
    b.prefill = Some(PrefillBand {
        low: 0.8,
        high: 1.08,
        rows: 40,
    });
    let basis = band_in(&[b.clone()], Gpu::H100, ServingSoftware::Vllm, false);
    assert_eq!(basis.prefill, Some((0.8, 1.08)));
    // Passes with a prompt, relative to every pass: 0.8 / 0.9 and 1.08 / 1.2.
    let (step, prompt) = basis.end(false);
    assert_eq!(step, 0.9);
    assert!((prompt.unwrap() - 0.8 / 0.9).abs() < 1e-12);
    let (step, prompt) = basis.end(true);
    assert_eq!(step, 1.2);
    assert!((prompt.unwrap() - 0.9).abs() < 1e-12);
    // Too few rows: passes with a prompt run at every pass's band.
    b.prefill = Some(PrefillBand {
        low: 0.5,
        high: 2.0,
        rows: 2,
    });
    let basis = band_in(&[b], Gpu::H100, ServingSoftware::Vllm, false);
    assert_eq!(basis.prefill, None);
    assert_eq!(basis.end(true), (1.2, None));
}

fn point(params_b: f64, prompt: f64, output: f64, in_flight: Option<f64>) -> Point {
    Point {
        params_b,
        prompt_tokens: prompt,
        output_tokens: output,
        in_flight,
    }
}

#[test]
fn an_extent_spans_its_rows_and_a_point_outside_says_how_far() {
    let e = Extent::of(&[
        point(8.03, 600.0, 250.0, Some(4.0)),
        point(70.6, 1_090.0, 1_450.0, None),
        point(34.0, 800.0, 500.0, Some(91.0)),
    ])
    .unwrap();
    assert_eq!(e.params_b, [8.03, 70.6]);
    assert_eq!(e.prompt_tokens, [600.0, 1_090.0]);
    assert_eq!(
        e.in_flight,
        Some([4.0, 91.0]),
        "rows without a load are left out"
    );
    assert_eq!(Extent::of(&[]), None);
    let mut b = band(Gpu::H100, false, 0.9, 1.15, 49);
    b.extent = Some(e);
    let basis = band_in(&[b.clone()], Gpu::H100, ServingSoftware::Vllm, false);
    // Inside on every axis.
    let p = Provenance::new(&basis, Some(&point(8.03, 700.0, 300.0, Some(20.0))));
    assert!(p.inside());
    assert_eq!(p.beyond(), 1.0);
    assert_eq!(p.axes.len(), 4);
    assert!(
        p.lines()[0].starts_with("Inside the measured: 49 rows"),
        "{:?}",
        p.lines()
    );
    // A prompt of 4,360 tokens is 4× the longest measured; a load of 2 in
    // flight is half the least.
    let p = Provenance::new(&basis, Some(&point(8.03, 4_360.0, 300.0, Some(2.0))));
    assert!(!p.inside());
    assert!((p.beyond() - 4.0).abs() < 1e-12);
    let lines = p.lines();
    assert!(
        lines[0].starts_with("Extrapolated, up to 4.0× beyond the measured"),
        "{lines:?}"
    );
    assert_eq!(
        lines[2],
        "prompt 4,360 tokens: extrapolated, 4.0× the most measured (600 – 1,090)"
    );
    assert_eq!(
        lines[4],
        "load 2.0 requests in flight per replica: extrapolated, 2.0× under the least measured (4.0 – 91.0)"
    );
    // A borrowed band carries the rows it borrows from, and says it is an
    // estimate whatever the axes.
    let other = band_in(&[b], Gpu::B200, ServingSoftware::Vllm, false);
    let p = Provenance::new(&other, Some(&point(8.03, 700.0, 300.0, Some(20.0))));
    assert!(!p.inside());
    assert!(p.lines()[0].starts_with("Estimated: nothing measured on B200"));
    assert_eq!(p.axes.len(), 4);
}

#[test]
fn a_scenario_run_is_placed_by_what_its_replicas_served() {
    let s = crate::presets::chatbot_h100();
    let r = crate::run_scenario(s.clone()).unwrap();
    let p = Point::of_run(&s, &r).unwrap();
    assert!((p.params_b - 8.03).abs() < 0.01, "{p:?}");
    // The chatbot asks for prompts and answers of a few hundred tokens.
    let (per_task, _) = s.mean_tokens();
    assert!(
        (p.output_tokens / per_task - 1.0).abs() < 0.05,
        "{p:?} vs {per_task}"
    );
    assert!(p.prompt_tokens > 50.0 && p.prompt_tokens < 5_000.0, "{p:?}");
    // Little's law on the run: in flight ≈ completions/s × mean E2E, per replica.
    let little = r.throughput.requests_per_s * r.overall.e2e.mean_ms.unwrap()
        / 1000.0
        / f64::from(s.serving.replicas);
    let flight = p.in_flight.unwrap();
    assert!((flight / little - 1.0).abs() < 0.15, "{flight} vs {little}");
    // The committed table places it: the default chatbot runs on H100 vLLM.
    let (_, ranges) = super::ranges(&s).unwrap();
    let prov = ranges.provenance.unwrap();
    assert!(prov.measured);
    assert_eq!(prov.axes.len(), 4);
}
