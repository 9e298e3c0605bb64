//! Errors a provider tier returns besides its 429s: overloaded (HTTP 529 or
//! 503) and server errors, at a base rate and in incident windows that also
//! slow the tier down. An error comes back after the tier's time to first
//! token (no prompt processing), is not billed, and the client retries it as
//! its policy retries a 429 (a queueing client as the SDKs do), then gives
//! up and the request fails.

use serde::{Deserialize, Serialize};

/// A tier's errors.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderErrors {
    /// Share of attempts answered with an error outside incidents.
    #[serde(default)]
    pub base_rate: f64,
    /// Incident windows, in time order and not overlapping.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incidents: Vec<Incident>,
    /// Latency multipliers by hour of the day (24, or none): the provider's
    /// peak hours, on top of any incident's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diurnal: Vec<f64>,
}

/// A bad spell at the provider.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Incident {
    /// When it starts, s from the run's start.
    pub start_s: f64,
    /// How long it lasts, s.
    pub duration_s: f64,
    /// Share of attempts answered with an error during it.
    pub error_rate: f64,
    /// Time to first token and per token are this many times longer.
    #[serde(default = "one")]
    pub latency_multiplier: f64,
}

fn one() -> f64 {
    1.0
}

/// The non-empty entries of a `;`-separated text, trimmed, numbered from 0
/// (incidents, slow hours).
pub(super) fn entries(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split(';')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .enumerate()
}

/// The client's circuit breaker: after `errors` errors from a tier within
/// `window_s`, it stops sending to the tier for `cool_down_s` (its
/// requests fall back, or fail); then it lets one request through, and
/// closes if that one is answered, or opens again if it errs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Breaker {
    /// Errors that open it.
    pub errors: u32,
    /// Within this many seconds.
    pub window_s: f64,
    /// How long it stays open, s.
    pub cool_down_s: f64,
}

impl Breaker {
    /// Problems with the settings, each naming its field under `at`.
    pub fn problems(&self, at: &str) -> Vec<String> {
        let mut out = Vec::new();
        if !(1..=1_000_000).contains(&self.errors) {
            out.push(format!(
                "{at}.errors must be 1..=1000000, got {}",
                self.errors
            ));
        }
        for (name, v) in [
            ("window_s", self.window_s),
            ("cool_down_s", self.cool_down_s),
        ] {
            if !(v.is_finite() && v > 0.0 && v <= 86_400.0) {
                out.push(format!("{at}.{name} must be > 0 and ≤ 86400 s, got {v}"));
            }
        }
        out
    }
}

impl ProviderErrors {
    /// The error rate and latency multiplier at `t_s` seconds.
    pub fn at(&self, t_s: f64) -> (f64, f64) {
        let (rate, slow) = self
            .incidents
            .iter()
            .find(|i| t_s >= i.start_s && t_s < i.start_s + i.duration_s)
            .map_or((self.base_rate, 1.0), |i| {
                (i.error_rate, i.latency_multiplier)
            });
        (rate, slow * super::diurnal::multiplier(&self.diurnal, t_s))
    }

    /// Whether it changes nothing: no errors, no incidents, no slow hours.
    pub fn is_inert(&self) -> bool {
        self.base_rate == 0.0 && self.incidents.is_empty() && self.diurnal.is_empty()
    }

    /// Problems with the settings, each naming its field under `at`.
    pub fn problems(&self, at: &str) -> Vec<String> {
        let mut out = Vec::new();
        let rate = |v: f64| v.is_finite() && (0.0..=1.0).contains(&v);
        if !rate(self.base_rate) {
            out.push(format!(
                "{at}.base_rate must be 0..=1, got {}",
                self.base_rate
            ));
        }
        if self.incidents.len() > 1000 {
            out.push(format!(
                "{at}.incidents: at most 1,000, got {}",
                self.incidents.len()
            ));
        }
        let mut end = f64::NEG_INFINITY;
        for (k, i) in self.incidents.iter().enumerate().take(1000) {
            let f = format!("{at}.incidents[{k}]");
            if !(i.start_s.is_finite() && i.start_s >= 0.0) {
                out.push(format!("{f}.start_s must be ≥ 0 s, got {}", i.start_s));
            } else if i.start_s < end {
                out.push(format!(
                    "{f}.start_s ({} s) starts before the incident before it ends ({end} s)",
                    i.start_s
                ));
            }
            if !(i.duration_s.is_finite() && i.duration_s > 0.0) {
                out.push(format!(
                    "{f}.duration_s must be > 0 s, got {}",
                    i.duration_s
                ));
            }
            if !rate(i.error_rate) {
                out.push(format!(
                    "{f}.error_rate must be 0..=1, got {}",
                    i.error_rate
                ));
            }
            if !(i.latency_multiplier.is_finite() && (1.0..=100.0).contains(&i.latency_multiplier))
            {
                out.push(format!(
                    "{f}.latency_multiplier must be 1..=100, got {}",
                    i.latency_multiplier
                ));
            }
            end = i.start_s + i.duration_s;
        }
        out.extend(super::diurnal::problems(
            &self.diurnal,
            &format!("{at}.diurnal"),
        ));
        out
    }

    /// The incidents as the page writes them: `at 600 for 300: 50 %, ×3`.
    pub fn incidents_text(&self) -> String {
        self.incidents
            .iter()
            .map(|i| {
                format!(
                    "at {} for {}: {} %, ×{}",
                    crate::format::plain(i.start_s),
                    crate::format::plain(i.duration_s),
                    crate::format::plain(i.error_rate * 100.0),
                    crate::format::plain(i.latency_multiplier)
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// Read incidents written as [`Self::incidents_text`] writes them
    /// (`×M` may be left out: 1); empty text is none.
    pub fn parse_incidents(text: &str) -> Result<Vec<Incident>, String> {
        let mut out = Vec::new();
        for (k, part) in entries(text) {
            let bad = || {
                format!(
                    "incident {} ({part:?}): write it as \"at START for SECONDS: RATE %, ×SLOWER\", e.g. \"at 600 for 300: 50 %, ×3\"",
                    k + 1
                )
            };
            let rest = part.strip_prefix("at").ok_or_else(bad)?;
            let (when, what) = rest.split_once(':').ok_or_else(bad)?;
            let (start, duration) = when.split_once("for").ok_or_else(bad)?;
            let num = |s: &str| s.trim().parse::<f64>().map_err(|_| bad());
            let (rate, slower) = match what.split_once(',') {
                Some((r, m)) => (r, Some(m)),
                None => (what, None),
            };
            let rate = num(rate.trim().strip_suffix('%').ok_or_else(bad)?)?;
            let latency_multiplier = match slower {
                Some(m) => num(m
                    .trim()
                    .strip_prefix('×')
                    .or_else(|| m.trim().strip_prefix('x'))
                    .ok_or_else(bad)?)?,
                None => 1.0,
            };
            out.push(Incident {
                start_s: num(start)?,
                duration_s: num(duration)?,
                error_rate: rate / 100.0,
                latency_multiplier,
            });
            if out.len() > 1000 {
                return Err("at most 1,000 incidents".into());
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incidents_read_back_as_they_are_written() {
        let text = "at 600 for 300: 50 %, ×3; at 3600 for 60: 100 %";
        let incidents = ProviderErrors::parse_incidents(text).expect("reads");
        assert_eq!(incidents.len(), 2);
        assert_eq!(
            (incidents[1].error_rate, incidents[1].latency_multiplier),
            (1.0, 1.0)
        );
        let e = ProviderErrors {
            base_rate: 0.01,
            incidents,
            diurnal: Vec::new(),
        };
        assert_eq!(
            e.incidents_text(),
            "at 600 for 300: 50 %, ×3; at 3600 for 60: 100 %, ×1"
        );
        assert_eq!(
            ProviderErrors::parse_incidents(&e.incidents_text()),
            Ok(e.incidents.clone())
        );
        assert_eq!(e.at(599.0), (0.01, 1.0));
        assert_eq!(e.at(600.0), (0.5, 3.0));
        assert_eq!(e.at(900.0), (0.01, 1.0));
        let err = ProviderErrors::parse_incidents("at 600 for: 50 %").expect_err("refused");
        assert!(
            err.starts_with("incident 1 (\"at 600 for: 50 %\")"),
            "{err}"
        );
        assert!(e.problems("api.tiers[0].errors").is_empty());
        let overlapping =
            ProviderErrors::parse_incidents("at 0 for 100: 5 %; at 50 for 10: 5 %").expect("reads");
        let p = ProviderErrors {
            base_rate: 2.0,
            incidents: overlapping,
            diurnal: Vec::new(),
        }
        .problems("e");
        assert_eq!(p.len(), 2, "{p:?}");
    }
}
