//! Distribution statistics shared by trace summaries and measured runs:
//! mean and percentiles of a sample, and the Kolmogorov–Smirnov distance
//! between a sample and a quantile table.

/// Mean, p50, p90, p99 of `v` (a trace's lengths, a measured run's
/// latencies), percentiles linearly interpolated between
/// order statistics (NaN for no values).
pub fn mean_and_quantiles(mut v: Vec<f64>) -> [f64; 4] {
    if v.is_empty() {
        return [f64::NAN; 4];
    }
    v.sort_by(f64::total_cmp);
    [
        v.iter().sum::<f64>() / v.len() as f64,
        quantile_of_sorted(&v, 0.5),
        quantile_of_sorted(&v, 0.9),
        quantile_of_sorted(&v, 0.99),
    ]
}

/// The `p` quantile (0–1) of ascending `v`, linearly interpolated between
/// order statistics (NaN for no values).
pub(crate) fn quantile_of_sorted(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let x = (v.len() - 1) as f64 * p.clamp(0.0, 1.0);
    let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (x - lo as f64)
}

/// Kolmogorov–Smirnov distance between the empirical distribution of
/// `samples` and one given by its `values` at the `quantiles` (ascending, as
/// a [`crate::Report::distribution`] gives them): the largest gap between the two
/// distribution functions, checked at every sample and every quantile value.
/// The simulated side is known at its quantiles only, so the distance is
/// exact to within the widest step between them (2 % for a report's).
/// NaN when either side is empty.
pub fn ks_distance(samples: &[f64], quantiles: &[f64], values: &[f64]) -> f64 {
    if samples.is_empty() || values.is_empty() || quantiles.len() != values.len() {
        return f64::NAN;
    }
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len() as f64;
    // Empirical CDF of the samples at x; the quantile table's at x (the
    // largest level whose value is at most x).
    let f_samples = |x: f64| s.partition_point(|&v| v <= x) as f64 / n;
    let f_table = |x: f64| {
        let k = values.partition_point(|&v| v <= x);
        if k == 0 { 0.0 } else { quantiles[k - 1] }
    };
    s.iter()
        .chain(values)
        .map(|&x| (f_samples(x) - f_table(x)).abs())
        .fold(0.0, f64::max)
}
