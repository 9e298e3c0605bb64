//! What a card's number is and which way it improves, and how a
//! difference between two runs' numbers is told in its unit.

use super::cards::Card;
use crate::format::{fmt_ms, fmt_usd};
use sim_core::Report;

/// What a card's number is, for stating a difference in its own unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A latency, ms.
    Ms,
    /// Tokens per second.
    TokS,
    /// A percentage: differences are in points.
    Percent,
    /// Dollars.
    Usd,
    /// A count.
    Count,
    /// Joules.
    Joules,
}

impl Card {
    /// Which way is better for this number, if either.
    pub fn better(&self) -> Option<Better> {
        match self.id {
            "user-speed" | "throughput" | "goodput" | "spec-tokens" | "cache-saving"
            | "cache-hits" => Some(Better::Higher),
            "failed" | "throttled" | "energy" => Some(Better::Lower),
            id if id.starts_with("usd-") => Some(Better::Lower),
            _ if self.unit() == Unit::Ms => Some(Better::Lower),
            _ => None,
        }
    }

    /// The scenario's target this card's latency is held to, ms: the TTFT
    /// target for the first (visible) token, the TPOT target for time per token.
    pub fn target(&self, r: &Report) -> Option<f64> {
        match self.id {
            "ttft-p50" | "ttft-p99" | "visible-p50" => Some(r.slo.ttft_ms),
            "tpot-p50" | "tpot-p99" => Some(r.slo.tpot_ms),
            _ => None,
        }
    }

    /// The unit of the card's raw value.
    pub fn unit(&self) -> Unit {
        match self.id {
            "user-speed" | "throughput" => Unit::TokS,
            "goodput" | "failed" | "cache-hits" => Unit::Percent,
            "throttled" | "spec-tokens" => Unit::Count,
            "energy" => Unit::Joules,
            id if id.starts_with("usd-") => Unit::Usd,
            "cache-saving" => Unit::Usd,
            _ => Unit::Ms,
        }
    }
}

/// Which way a number improves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    /// Latencies, costs, errors.
    Lower,
    /// Throughput, goodput, per-user speed.
    Higher,
}

/// Whether B is better or worse than A for a number that improves `way`;
/// neither when the card's unit shows no difference.
pub fn judged(way: Option<Better>, unit: Unit, a: f64, b: f64) -> Option<&'static str> {
    if a == b || within_rounding(unit, a, b) {
        return None;
    }
    match (way?, b < a) {
        (Better::Lower, true) | (Better::Higher, false) => Some("better"),
        _ => Some("worse"),
    }
}

/// B − A in the card's unit: latencies in ms/s/min, dollars, tokens/s, counts,
/// percentages in points.
pub fn difference_text(unit: Unit, a: f64, b: f64) -> String {
    let d = b - a;
    let sign = if d < 0.0 { "-" } else { "+" };
    let m = d.abs();
    match unit {
        Unit::Ms => format!("{sign}{}", fmt_ms(Some(m))),
        Unit::TokS => format!("{sign}{} tok/s", sim_core::format::rounded(m)),
        Unit::Percent => format!("{sign}{m:.1} points"),
        Unit::Usd => format!("{sign}{}", fmt_usd(m)),
        Unit::Count => format!("{sign}{}", sim_core::format::rounded(m)),
        Unit::Joules => format!("{sign}{m:.2} J"),
    }
}

/// Whether B differs from A by less than the card's unit shows: the
/// difference would print as zero ("-0.0 points").
pub fn within_rounding(unit: Unit, a: f64, b: f64) -> bool {
    shows_nothing(&difference_text(unit, a, b))
}

/// A difference as printed has no digit but zeros.
fn shows_nothing(difference: &str) -> bool {
    !difference.chars().any(|c| matches!(c, '1'..='9'))
}

/// How B differs from A, as the card shows it: the difference in the card's
/// unit and, except for percentages, relative to A.
pub fn delta_text(unit: Unit, a: f64, b: f64) -> String {
    if a == b {
        return "same as A".to_owned();
    }
    let abs = difference_text(unit, a, b);
    if shows_nothing(&abs) {
        return "about the same as A".to_owned();
    }
    if unit == Unit::Percent || a.abs() <= 1e-12 {
        format!("{abs} vs A")
    } else {
        format!("{abs} ({:+.1} %) vs A", (b - a) / a.abs() * 100.0)
    }
}
