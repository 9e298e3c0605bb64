//! A provider's latency by hour of the day: its peak hours slow its
//! answers. Hours count from the run's start (the run starts at midnight).

use super::ProviderErrors;

/// Hours in a day, the length of a curve.
pub const HOURS: usize = 24;

/// The multiplier of hour `h` (0..24) of `curve`: 1 where there is none.
pub fn multiplier(curve: &[f64], t_s: f64) -> f64 {
    if curve.len() != HOURS || !(t_s.is_finite() && t_s >= 0.0) {
        return 1.0;
    }
    // Whole hours since the start, modulo a day (exact for any finite t).
    let h = (t_s / 3600.0).floor() % HOURS as f64;
    curve[h as usize]
}

/// Problems with a curve, naming it as `at`.
pub fn problems(curve: &[f64], at: &str) -> Vec<String> {
    let mut out = Vec::new();
    if !curve.is_empty() && curve.len() != HOURS {
        out.push(format!(
            "{at} must hold 24 hourly multipliers (or none), got {}",
            curve.len()
        ));
    }
    for (h, m) in curve.iter().enumerate().take(HOURS) {
        if !(m.is_finite() && (0.25..=100.0).contains(m)) {
            out.push(format!("{at}[{h}] must be 0.25..=100, got {m}"));
        }
    }
    out
}

impl ProviderErrors {
    /// The hours slower or faster than usual, as the page writes them:
    /// `14–18 h ×1.5; 22–6 h ×0.8` (runs of equal hours; empty: none).
    pub fn diurnal_text(&self) -> String {
        let c = &self.diurnal;
        if c.len() != HOURS {
            return String::new();
        }
        let mut runs: Vec<(usize, usize, f64)> = Vec::new();
        for (h, &m) in c.iter().enumerate() {
            match runs.last_mut() {
                Some((_, end, v)) if *end == h && *v == m => *end = h + 1,
                _ => runs.push((h, h + 1, m)),
            }
        }
        // A run that ends at midnight and one that starts there are one.
        if runs.len() > 1 {
            let (first, last) = (runs[0], runs[runs.len() - 1]);
            if first.0 == 0 && last.1 == HOURS && first.2 == last.2 {
                runs[0].0 = last.0;
                runs.pop();
                runs.sort_by_key(|r| r.0);
            }
        }
        runs.iter()
            .filter(|(_, _, m)| *m != 1.0)
            .map(|(a, b, m)| format!("{a}–{} h ×{}", b % HOURS, crate::format::plain(*m)))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// Read hours written as [`Self::diurnal_text`] writes them (`-` for `–`,
    /// `x` for `×`, `h` optional; a range past midnight wraps); hours not
    /// named keep ×1. Empty text is no curve.
    pub fn parse_diurnal(text: &str) -> Result<Vec<f64>, String> {
        let mut curve = vec![1.0; HOURS];
        let mut any = false;
        for (k, part) in super::errors::entries(text) {
            let bad = || {
                format!(
                    "hours {} ({part:?}): write them as \"FROM–TO h ×SLOWER\", e.g. \"14–18 h ×1.5\"",
                    k + 1
                )
            };
            let (hours, m) = part
                .split_once('×')
                .or_else(|| part.split_once('x'))
                .ok_or_else(bad)?;
            let (a, b) = hours
                .trim()
                .trim_end_matches('h')
                .split_once(['–', '-'])
                .ok_or_else(bad)?;
            let hour = |s: &str| {
                s.trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|h| *h <= HOURS)
                    .ok_or_else(bad)
            };
            let (a, b) = (hour(a)? % HOURS, hour(b)? % HOURS);
            let m: f64 = m.trim().parse().map_err(|_| bad())?;
            if !(m.is_finite() && (0.25..=100.0).contains(&m)) {
                return Err(format!("hours {}: ×{m} must be 0.25..=100", k + 1));
            }
            let len = if b > a { b - a } else { b + HOURS - a };
            for i in 0..len {
                curve[(a + i) % HOURS] = m;
            }
            any = true;
        }
        Ok(if any { curve } else { Vec::new() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hours_read_back_as_written_and_wrap_at_midnight() {
        let c = ProviderErrors::parse_diurnal("14-18 h x1.5; 22–6 ×0.8").expect("reads");
        assert_eq!(c[13], 1.0);
        assert_eq!((c[14], c[17], c[18]), (1.5, 1.5, 1.0));
        assert_eq!((c[22], c[23], c[0], c[5], c[6]), (0.8, 0.8, 0.8, 0.8, 1.0));
        let e = ProviderErrors {
            diurnal: c.clone(),
            ..ProviderErrors::default()
        };
        assert_eq!(e.diurnal_text(), "14–18 h ×1.5; 22–6 h ×0.8");
        assert_eq!(
            ProviderErrors::parse_diurnal(&e.diurnal_text()),
            Ok(c.clone())
        );
        // The hour of a time, by the day.
        assert_eq!(multiplier(&c, 14.0 * 3600.0), 1.5);
        assert_eq!(multiplier(&c, 86_400.0 + 23.5 * 3600.0), 0.8);
        assert_eq!(multiplier(&[], 14.0 * 3600.0), 1.0);
        assert!(ProviderErrors::parse_diurnal("").expect("none").is_empty());
        let why = ProviderErrors::parse_diurnal("14 to 18 ×2").expect_err("no range");
        assert!(why.contains("\"FROM–TO h ×SLOWER\""), "{why}");
        assert!(ProviderErrors::parse_diurnal("1-2 ×1000").is_err());
        assert!(ProviderErrors::parse_diurnal("1-25 ×2").is_err());
        assert_eq!(
            problems(&[1.0; 3], "d"),
            vec!["d must hold 24 hourly multipliers (or none), got 3"]
        );
    }
}
