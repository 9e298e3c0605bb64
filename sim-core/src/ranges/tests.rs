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
