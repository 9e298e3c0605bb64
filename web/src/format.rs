//! How numbers read on the page: latencies in ms or s, dollars, rates.

/// Format a latency: ms below 10 s, seconds above.
pub fn fmt_ms(v: Option<f64>) -> String {
    match v {
        None => "–".to_owned(),
        Some(x) if x >= 10_000.0 => format!("{:.1} s", x / 1000.0),
        Some(x) if x >= 100.0 => format!("{x:.0} ms"),
        Some(x) => format!("{x:.1} ms"),
    }
}

/// Format dollars: cents below $100, whole dollars, then thousands.
pub fn fmt_usd(v: f64) -> String {
    if v >= 10_000.0 {
        format!("${:.0}k", v / 1000.0)
    } else if v >= 100.0 {
        format!("${v:.0}")
    } else if v >= 0.1 || v == 0.0 {
        format!("${v:.2}")
    } else {
        // Fractions of a cent (a request's cost): two significant digits.
        let digits = (-v.log10()).ceil().clamp(2.0, 8.0) as usize + 1;
        format!("${v:.digits$}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_and_dollars_read_naturally() {
        assert_eq!(fmt_ms(None), "–");
        assert_eq!(fmt_ms(Some(7.25)), "7.2 ms");
        assert_eq!(fmt_ms(Some(320.4)), "320 ms");
        assert_eq!(fmt_ms(Some(12_345.0)), "12.3 s");
        assert_eq!(fmt_usd(2.2222), "$2.22");
        assert_eq!(fmt_usd(151.4), "$151");
        assert_eq!(fmt_usd(151_000.0), "$151k");
        assert_eq!(fmt_usd(0.0034), "$0.0034");
        assert_eq!(fmt_usd(0.0205), "$0.021");
    }
}
