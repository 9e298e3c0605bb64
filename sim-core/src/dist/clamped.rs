//! The mean of a distribution as the engine draws it: clamped to `[lo, hi]`
//! (token counts to `[1, max_tokens]`, think times to `≥ 0`). Work bounds and
//! mean shapes use it, never the nominal mean: a `normal(1, 10⁶)` prompt has
//! nominal mean 1 but, clamped to `[1, 2²⁰]`, averages ≈ 4·10⁵ tokens.
//!
//! Closed forms: for `Y = clamp(X, lo, hi)`,
//! `E[Y] = lo·P(X < lo) + hi·P(X > hi) + E[X; lo ≤ X ≤ hi]`, with the partial
//! expectations of the normal (`μ·ΔΦ − σ·Δφ`) and log-normal
//! (`e^{μ+σ²/2}·ΔΦ(· − σ)`) distributions, and `lo + m·(e^{−lo/m} − e^{−hi/m})`
//! for the exponential.

use super::{Bin, Dist, Z90};
use core::f64::consts::{FRAC_1_SQRT_2, PI};

/// Standard normal CDF.
fn cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z * FRAC_1_SQRT_2)
}

/// Standard normal density.
fn pdf(z: f64) -> f64 {
    libm::exp(-0.5 * z * z) / libm::sqrt(2.0 * PI)
}

/// `x·p`, 0 when `p` is 0 (so an infinite bound with no mass past it adds nothing).
fn mass(x: f64, p: f64) -> f64 {
    if p > 0.0 { x * p } else { 0.0 }
}

/// `E[clamp(U, lo, hi)]` for `U` uniform on `[a, b]`.
fn uniform(a: f64, b: f64, lo: f64, hi: f64) -> f64 {
    if b <= a {
        return a.max(lo).min(hi);
    }
    let w = b - a;
    let (l, h) = (lo.max(a), hi.min(b));
    if l >= h {
        // All of [a, b] is below lo, above hi, or [lo, hi] is a point inside it.
        return if b <= lo {
            lo
        } else if a >= hi {
            hi
        } else {
            lo.max(a.min(hi))
        };
    }
    let below = (lo - a).max(0.0) / w;
    let above = (b - hi).max(0.0) / w;
    mass(lo, below) + mass(hi, above) + (h * h - l * l) / (2.0 * w)
}

impl Dist {
    /// The mean of `clamp(X, lo, hi)` where `X` follows this distribution (as
    /// [`super::Sampler::sample`] draws it), for `0 ≤ lo ≤ hi`. Call on a
    /// validated distribution; the result is always within `[lo, hi]`.
    pub fn clamped_mean(&self, lo: f64, hi: f64) -> f64 {
        let hi = hi.max(lo);
        let m = match self {
            Dist::Fixed { value } => *value,
            Dist::Uniform { min, max } => uniform(*min, *max, lo, hi),
            Dist::Normal { mean, std_dev } if *std_dev > 0.0 => {
                // The sampler clamps at 0 first; lo ≥ 0 covers that.
                let (a, b) = ((lo - mean) / std_dev, (hi - mean) / std_dev);
                let (pa, pb) = (cdf(a), cdf(b));
                mass(lo, pa) + mass(hi, 1.0 - pb) + mean * (pb - pa) - std_dev * (pdf(b) - pdf(a))
            }
            Dist::Normal { mean, .. } => *mean,
            Dist::LogNormal { median, p90 } => {
                let (mu, sigma) = (libm::log(*median), libm::log(p90 / median) / Z90);
                if sigma <= 0.0 {
                    *median
                } else {
                    let z = |x: f64| {
                        if x <= 0.0 {
                            f64::NEG_INFINITY
                        } else {
                            (libm::log(x) - mu) / sigma
                        }
                    };
                    let (a, b) = (z(lo), z(hi));
                    let (pa, pb) = (cdf(a), cdf(b));
                    let partial =
                        libm::exp(mu + sigma * sigma / 2.0) * (cdf(b - sigma) - cdf(a - sigma));
                    mass(lo, pa) + mass(hi, 1.0 - pb) + partial
                }
            }
            Dist::Exponential { mean } if *mean > 0.0 => {
                lo + mean * (libm::exp(-lo / mean) - libm::exp(-hi / mean))
            }
            Dist::Exponential { .. } => 0.0,
            Dist::Empirical { bins } => {
                let w: f64 = bins.iter().map(|b| b.weight).sum();
                if w > 0.0 {
                    bins.iter()
                        .map(
                            |Bin {
                                 lo: a,
                                 hi: b,
                                 weight,
                             }| weight * uniform(*a, *b, lo, hi),
                        )
                        .sum::<f64>()
                        / w
                } else {
                    lo
                }
            }
        };
        if m.is_nan() { lo } else { m.clamp(lo, hi) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Stream, StreamId};

    /// The sample mean of `clamp(X, lo, hi)` over `n` draws.
    fn sampled(d: &Dist, lo: f64, hi: f64, n: u32) -> f64 {
        let s = d.sampler();
        let mut rng = Stream::new(11, StreamId::LENGTHS);
        (0..n)
            .map(|_| s.sample(&mut rng).clamp(lo, hi))
            .sum::<f64>()
            / f64::from(n)
    }

    #[test]
    fn clamped_means_match_what_the_sampler_draws() {
        let cases = [
            (Dist::Fixed { value: 7.0 }, 1.0, 5.0),
            (
                Dist::Uniform {
                    min: 0.0,
                    max: 100.0,
                },
                10.0,
                60.0,
            ),
            (Dist::Uniform { min: 0.0, max: 1.0 }, 1.0, 10.0),
            (
                Dist::Normal {
                    mean: 1.0,
                    std_dev: 1e6,
                },
                1.0,
                1_048_576.0,
            ),
            (
                Dist::Normal {
                    mean: 500.0,
                    std_dev: 50.0,
                },
                1.0,
                480.0,
            ),
            (
                Dist::LogNormal {
                    median: 200.0,
                    p90: 600.0,
                },
                1.0,
                256.0,
            ),
            (
                Dist::LogNormal {
                    median: 2.0,
                    p90: 2000.0,
                },
                1.0,
                1e5,
            ),
            (Dist::Exponential { mean: 300.0 }, 1.0, 500.0),
            (
                Dist::Empirical {
                    bins: vec![
                        Bin {
                            lo: 0.0,
                            hi: 10.0,
                            weight: 1.0,
                        },
                        Bin {
                            lo: 100.0,
                            hi: 300.0,
                            weight: 3.0,
                        },
                    ],
                },
                5.0,
                200.0,
            ),
        ];
        for (d, lo, hi) in cases {
            let want = sampled(&d, lo, hi, 400_000);
            let got = d.clamped_mean(lo, hi);
            assert!(
                (got - want).abs() <= 0.01 * want.abs().max(1.0),
                "{d:?} in [{lo}, {hi}]: closed form {got}, sampled {want}"
            );
        }
    }

    #[test]
    fn an_unclamped_range_gives_the_nominal_mean() {
        let d = Dist::LogNormal {
            median: 200.0,
            p90: 600.0,
        };
        assert!((d.clamped_mean(0.0, f64::INFINITY) - d.mean()).abs() < 1e-9 * d.mean());
        let e = Dist::Exponential { mean: 3.0 };
        assert!((e.clamped_mean(0.0, f64::INFINITY) - 3.0).abs() < 1e-12);
    }
}
