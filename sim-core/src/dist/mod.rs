//! Probability distributions for token lengths, think times and service times.
//!
//! Sampling uses only IEEE-exact arithmetic and the `libm` crate, so a given stream
//! produces the same values on every platform (`rand_distr` would route through the
//! platform's maths library whenever any crate in the build enables `num-traits/std`).

mod clamped;

use crate::format::show;
use crate::rng::Stream;
use serde::{Deserialize, Serialize};

/// A distribution of non-negative values, as written in a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Dist {
    /// Always `value`.
    Fixed {
        /// The value.
        value: f64,
    },
    /// Uniform on `[min, max]`.
    Uniform {
        /// Lower bound.
        min: f64,
        /// Upper bound.
        max: f64,
    },
    /// Normal, truncated at zero.
    Normal {
        /// Mean.
        mean: f64,
        /// Standard deviation.
        std_dev: f64,
    },
    /// Log-normal, given by its median and 90th percentile (p90 ≥ median).
    LogNormal {
        /// Median (50th percentile).
        median: f64,
        /// 90th percentile.
        p90: f64,
    },
    /// Exponential with the given mean.
    Exponential {
        /// Mean.
        mean: f64,
    },
    /// An empirical histogram: a bin is picked by weight, then a value uniformly inside it.
    Empirical {
        /// The bins; weights need not sum to one.
        bins: Vec<Bin>,
    },
}

/// One bin of an empirical histogram: values in `[lo, hi]` with relative `weight`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bin {
    /// Lower edge.
    pub lo: f64,
    /// Upper edge (≥ lo).
    pub hi: f64,
    /// Relative weight (> 0).
    pub weight: f64,
}

/// Largest number of bins an empirical distribution may have.
pub const MAX_BINS: usize = 4096;

/// z-score of the 90th percentile of the standard normal.
const Z90: f64 = 1.281_551_565_544_600_5;

impl Dist {
    /// Checks the parameters; `field` names the distribution in messages, and
    /// every value must lie in `[0, max]`.
    pub fn validate(&self, field: &str, max: f64, problems: &mut Vec<String>) {
        let bad = |name: &str, v: f64, lo: f64, lo_inclusive: bool| {
            let ok = v.is_finite() && v <= max && if lo_inclusive { v >= lo } else { v > lo };
            let lower = if lo_inclusive { "≥" } else { ">" };
            (!ok).then(|| {
                format!(
                    "{field}.{name} must be {lower} {} and ≤ {}, got {}",
                    show(lo),
                    show(max),
                    show(v)
                )
            })
        };
        match self {
            Dist::Fixed { value } => problems.extend(bad("value", *value, 0.0, true)),
            Dist::Uniform { min, max: hi } => {
                problems.extend(bad("min", *min, 0.0, true));
                problems.extend(bad("max", *hi, 0.0, true));
                if min > hi {
                    problems.push(format!(
                        "{field}.max must be ≥ {field}.min ({}), got {}",
                        show(*min),
                        show(*hi)
                    ));
                }
            }
            Dist::Normal { mean, std_dev } => {
                problems.extend(bad("mean", *mean, 0.0, true));
                problems.extend(bad("std_dev", *std_dev, 0.0, true));
            }
            Dist::LogNormal { median, p90 } => {
                problems.extend(bad("median", *median, 0.0, false));
                problems.extend(bad("p90", *p90, 0.0, false));
                if p90 < median {
                    problems.push(format!(
                        "{field}: p90 must be ≥ median, got p90 {p90} < median {median}"
                    ));
                }
            }
            Dist::Exponential { mean } => problems.extend(bad("mean", *mean, 0.0, false)),
            Dist::Empirical { bins } => {
                if bins.is_empty() || bins.len() > MAX_BINS {
                    problems.push(format!(
                        "{field}.bins must have 1..={MAX_BINS} bins, got {}",
                        bins.len()
                    ));
                }
                for (i, b) in bins.iter().take(MAX_BINS).enumerate() {
                    problems.extend(bad(&format!("bins[{i}].lo"), b.lo, 0.0, true));
                    problems.extend(bad(&format!("bins[{i}].hi"), b.hi, 0.0, true));
                    problems.extend(bad(&format!("bins[{i}].weight"), b.weight, 0.0, false));
                    if b.lo > b.hi {
                        problems.push(format!(
                            "{field}.bins[{i}]: lo must be ≤ hi, got {} > {}",
                            b.lo, b.hi
                        ));
                    }
                }
            }
        }
    }

    /// The mean of the distribution (before any clamping by the caller).
    pub fn mean(&self) -> f64 {
        match self {
            Dist::Fixed { value } => *value,
            Dist::Uniform { min, max } => (min + max) / 2.0,
            Dist::Normal { mean, .. } => *mean,
            Dist::LogNormal { median, p90 } => {
                let sigma = libm::log(p90 / median) / Z90;
                median * libm::exp(sigma * sigma / 2.0)
            }
            Dist::Exponential { mean } => *mean,
            Dist::Empirical { bins } => {
                let w: f64 = bins.iter().map(|b| b.weight).sum();
                bins.iter()
                    .map(|b| b.weight * (b.lo + b.hi) / 2.0)
                    .sum::<f64>()
                    / w
            }
        }
    }

    /// The same shape scaled so its mean becomes `mean` (every parameter
    /// multiplied by the same factor). A distribution with mean 0 becomes fixed.
    pub fn with_mean(&self, mean: f64) -> Dist {
        let old = self.mean();
        if !(old > 0.0 && old.is_finite()) {
            return Dist::Fixed { value: mean };
        }
        let k = mean / old;
        match self {
            Dist::Fixed { .. } => Dist::Fixed { value: mean },
            Dist::Uniform { min, max } => Dist::Uniform {
                min: min * k,
                max: max * k,
            },
            Dist::Normal { mean: m, std_dev } => Dist::Normal {
                mean: m * k,
                std_dev: std_dev * k,
            },
            Dist::LogNormal { median, p90 } => Dist::LogNormal {
                median: median * k,
                p90: p90 * k,
            },
            Dist::Exponential { .. } => Dist::Exponential { mean },
            Dist::Empirical { bins } => Dist::Empirical {
                bins: bins
                    .iter()
                    .map(|b| Bin {
                        lo: b.lo * k,
                        hi: b.hi * k,
                        weight: b.weight,
                    })
                    .collect(),
            },
        }
    }

    /// The largest value the distribution can produce, if bounded.
    pub fn upper_bound(&self) -> Option<f64> {
        match self {
            Dist::Fixed { value } => Some(*value),
            Dist::Uniform { max, .. } => Some(*max),
            Dist::Empirical { bins } => bins.iter().map(|b| b.hi).reduce(f64::max),
            _ => None,
        }
    }

    /// The parameter that sets the distribution's typical size (for messages
    /// about its mean).
    pub fn size_field(&self) -> &'static str {
        match self {
            Dist::Fixed { .. } => "value",
            Dist::Uniform { .. } => "max",
            Dist::Normal { .. } | Dist::Exponential { .. } => "mean",
            Dist::LogNormal { .. } => "median",
            Dist::Empirical { .. } => "bins",
        }
    }

    /// The smallest value the distribution can take (0 when unbounded below).
    pub fn lower_bound(&self) -> f64 {
        match self {
            Dist::Fixed { value } => *value,
            Dist::Uniform { min, .. } => *min,
            Dist::Empirical { bins } => bins.iter().map(|b| b.lo).reduce(f64::min).unwrap_or(0.0),
            _ => 0.0,
        }
        .max(0.0)
    }

    /// A sampler with precomputed constants. Call only on a validated distribution.
    pub fn sampler(&self) -> Sampler {
        match self {
            Dist::Fixed { value } => Sampler::Fixed(*value),
            Dist::Uniform { min, max } => Sampler::Uniform {
                lo: *min,
                width: max - min,
            },
            Dist::Normal { mean, std_dev } => Sampler::Normal {
                mean: *mean,
                sd: *std_dev,
            },
            Dist::LogNormal { median, p90 } => Sampler::LogNormal {
                mu: libm::log(*median),
                sigma: libm::log(p90 / median) / Z90,
            },
            Dist::Exponential { mean } => Sampler::Exponential(*mean),
            Dist::Empirical { bins } => {
                let mut acc = 0.0;
                let cumulative = bins
                    .iter()
                    .map(|b| {
                        acc += b.weight;
                        (acc, b.lo, b.hi - b.lo)
                    })
                    .collect();
                Sampler::Empirical {
                    cumulative,
                    total: acc,
                }
            }
        }
    }
}

/// A ready-to-draw form of a [`Dist`].
#[derive(Clone, Debug)]
pub enum Sampler {
    /// See [`Dist::Fixed`].
    Fixed(f64),
    /// See [`Dist::Uniform`].
    Uniform {
        /// Lower bound.
        lo: f64,
        /// max − min.
        width: f64,
    },
    /// See [`Dist::Normal`].
    Normal {
        /// Mean.
        mean: f64,
        /// Standard deviation.
        sd: f64,
    },
    /// See [`Dist::LogNormal`].
    LogNormal {
        /// Mean of the logarithm.
        mu: f64,
        /// Standard deviation of the logarithm.
        sigma: f64,
    },
    /// See [`Dist::Exponential`].
    Exponential(f64),
    /// See [`Dist::Empirical`]: (cumulative weight, lo, width) per bin.
    Empirical {
        /// Running sums of the weights, with each bin's edges.
        cumulative: Vec<(f64, f64, f64)>,
        /// Sum of all weights.
        total: f64,
    },
}

impl Sampler {
    /// Draw one value (≥ 0).
    pub fn sample(&self, s: &mut Stream) -> f64 {
        match self {
            Sampler::Fixed(v) => *v,
            Sampler::Uniform { lo, width } => lo + width * s.uniform(),
            Sampler::Normal { mean, sd } => (mean + sd * standard_normal(s)).max(0.0),
            Sampler::LogNormal { mu, sigma } => libm::exp(mu + sigma * standard_normal(s)),
            Sampler::Exponential(mean) => s.exponential(*mean),
            Sampler::Empirical { cumulative, total } => {
                let u = s.uniform() * total;
                let i = cumulative
                    .partition_point(|&(c, _, _)| c <= u)
                    .min(cumulative.len() - 1);
                let (_, lo, width) = cumulative[i];
                lo + width * s.uniform()
            }
        }
    }

    /// Draw a token count: rounded to the nearest integer and clamped to `[1, max]`.
    pub fn sample_tokens(&self, s: &mut Stream, max: u32) -> u32 {
        let v = libm::round(self.sample(s));
        if v < 1.0 {
            1
        } else if v >= f64::from(max) {
            max
        } else {
            v as u32
        }
    }
}

/// A standard normal draw by the Box–Muller transform (one of the pair; the
/// other is discarded so that each draw consumes a fixed two uniforms).
pub fn standard_normal(s: &mut Stream) -> f64 {
    let u1 = s.uniform_open0();
    let u2 = s.uniform();
    libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * core::f64::consts::PI * u2)
}

/// A gamma draw with the given shape and scale (Marsaglia–Tsang, 2000), used for
/// bursty inter-arrival times: shape = 1/cv², scale = mean/shape.
pub fn gamma(s: &mut Stream, shape: f64, scale: f64) -> f64 {
    if shape < 1.0 {
        // Boost: G(k) = G(k + 1) · U^(1/k).
        let u = s.uniform_open0();
        return gamma(s, shape + 1.0, scale) * libm::pow(u, 1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / libm::sqrt(9.0 * d);
    // Acceptance probability is above 0.95 for every shape ≥ 1; the bound only
    // guards against a broken stream.
    for _ in 0..1_000 {
        let x = standard_normal(s);
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = s.uniform_open0();
        if libm::log(u) < 0.5 * x * x + d - d * v + d * libm::log(v) {
            return d * v * scale;
        }
    }
    shape * scale
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamId;

    fn moments(d: &Dist, n: u32) -> (f64, f64) {
        let sampler = d.sampler();
        let mut s = Stream::new(3, StreamId::LENGTHS);
        let xs: Vec<f64> = (0..n).map(|_| sampler.sample(&mut s)).collect();
        let mean = xs.iter().sum::<f64>() / f64::from(n);
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / f64::from(n);
        (mean, var.sqrt())
    }

    /// One distribution of every shape.
    fn every_shape() -> Vec<Dist> {
        vec![
            Dist::Fixed { value: 7.0 },
            Dist::Uniform {
                min: 10.0,
                max: 30.0,
            },
            Dist::Normal {
                mean: 500.0,
                std_dev: 50.0,
            },
            Dist::LogNormal {
                median: 200.0,
                p90: 600.0,
            },
            Dist::Exponential { mean: 3.0 },
            Dist::Empirical {
                bins: vec![
                    Bin {
                        lo: 0.0,
                        hi: 10.0,
                        weight: 1.0,
                    },
                    Bin {
                        lo: 100.0,
                        hi: 100.0,
                        weight: 3.0,
                    },
                ],
            },
        ]
    }

    #[test]
    fn sample_means_match_the_parameters() {
        for d in every_shape() {
            let (mean, _) = moments(&d, 200_000);
            let want = d.mean();
            assert!(
                (mean - want).abs() / want < 0.01,
                "{d:?}: sample mean {mean}, expected {want}"
            );
        }
    }

    #[test]
    fn lognormal_p90_is_where_it_was_asked() {
        let d = Dist::LogNormal {
            median: 100.0,
            p90: 400.0,
        }
        .sampler();
        let mut s = Stream::new(5, StreamId::LENGTHS);
        let mut xs: Vec<f64> = (0..100_000).map(|_| d.sample(&mut s)).collect();
        xs.sort_by(f64::total_cmp);
        assert!(
            (xs[50_000] / 100.0 - 1.0).abs() < 0.03,
            "median {}",
            xs[50_000]
        );
        assert!(
            (xs[90_000] / 400.0 - 1.0).abs() < 0.04,
            "p90 {}",
            xs[90_000]
        );
    }

    #[test]
    fn gamma_has_the_requested_mean_and_cv() {
        for cv in [0.5, 1.0, 2.0, 4.0] {
            let shape = 1.0 / (cv * cv);
            let mut s = Stream::new(11, StreamId::ARRIVALS);
            let n = 400_000;
            let xs: Vec<f64> = (0..n).map(|_| gamma(&mut s, shape, 2.0 / shape)).collect();
            let mean = xs.iter().sum::<f64>() / f64::from(n);
            let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / f64::from(n)).sqrt();
            assert!(
                (mean - 2.0).abs() < 0.04 * cv.max(1.0),
                "cv {cv}: mean {mean}"
            );
            assert!(
                (sd / mean - cv).abs() < 0.05 * cv.max(1.0),
                "cv {cv}: measured cv {}",
                sd / mean
            );
        }
    }

    #[test]
    fn with_mean_rescales_every_shape() {
        for d in every_shape() {
            let m = d.with_mean(123.0).mean();
            assert!((m - 123.0).abs() < 1e-9, "{d:?} → {m}");
        }
    }

    #[test]
    fn token_draws_are_clamped() {
        let d = Dist::Normal {
            mean: 5.0,
            std_dev: 100.0,
        }
        .sampler();
        let mut s = Stream::new(1, StreamId::LENGTHS);
        for _ in 0..10_000 {
            let t = d.sample_tokens(&mut s, 64);
            assert!((1..=64).contains(&t));
        }
    }

    #[test]
    fn validation_names_the_field_and_value() {
        let mut p = Vec::new();
        Dist::Uniform {
            min: 5.0,
            max: f64::NAN,
        }
        .validate("input_tokens", 1e6, &mut p);
        Dist::LogNormal {
            median: 10.0,
            p90: 5.0,
        }
        .validate("think_time_s", 1e6, &mut p);
        Dist::Empirical { bins: vec![] }.validate("output_tokens", 1e6, &mut p);
        Dist::Exponential { mean: 1e12 }.validate("x", 1e6, &mut p);
        assert_eq!(p.len(), 4, "{p:?}");
        assert!(p[0].contains("input_tokens.max") && p[0].contains("NaN"));
        assert!(p[1].contains("p90 must be ≥ median"));
        assert!(p[2].contains("1..=4096 bins, got 0"));
        assert!(
            p[3].contains("x.mean") && p[3].contains("got 1e12"),
            "{}",
            p[3]
        );
    }
}
