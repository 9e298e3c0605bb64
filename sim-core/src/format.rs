//! How numbers read, in one place: the page, the CLI, the planner's messages
//! and validation's all format through here. A ground-floor module: it
//! imports nothing from the crate, so any module may use it.

/// A number as a person would write it: plain where that is short, else in
/// scientific notation.
pub fn show(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-4..1e9).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// A value as a person writes it: at most six decimals, trailing zeros
/// dropped, so arithmetic's noise never shows ("435.6", not
/// "435.59999999999974"); outside 10⁻⁴..10⁹ in scientific notation as
/// [`show`]. For values shown in controls and labels, whose text may be read
/// back; a refusal quotes the value exactly, with [`show`].
pub fn plain(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-4..1e9).contains(&v.abs()) {
        return format!("{v:e}");
    }
    let s = format!("{v:.6}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        &s
    };
    if s == "-0" {
        "0".to_owned()
    } else {
        s.to_owned()
    }
}

/// A duration given in ms, in the unit that fits it: "7.2 ms", "320 ms",
/// "3.2 s", "4.5 min", "2.1 h"; "–" for none.
pub fn duration_ms(v: Option<f64>) -> String {
    match v {
        None => "–".to_owned(),
        Some(x) if !x.is_finite() => "–".to_owned(),
        Some(x) if x >= 7_200_000.0 => format!("{:.1} h", x / 3_600_000.0),
        Some(x) if x >= 120_000.0 => format!("{:.1} min", x / 60_000.0),
        Some(x) if x >= 1_000.0 => format!("{:.1} s", x / 1_000.0),
        Some(x) if x >= 100.0 => format!("{x:.0} ms"),
        Some(x) => format!("{x:.1} ms"),
    }
}

/// `a` and `b` as [`duration_ms`] gives them, in exact ms when the rounding
/// would show them equal ("1.0 min > 1.0 min" is no explanation).
pub fn duration_pair_ms(a: f64, b: f64) -> (String, String) {
    let (x, y) = (duration_ms(Some(a)), duration_ms(Some(b)));
    if x == y && a != b {
        (format!("{a:.0} ms"), format!("{b:.0} ms"))
    } else {
        (x, y)
    }
}

/// A share (0–1) as a percentage to `decimals` places that never rounds a
/// share to 0 or 100 when it is neither: "63.5 %", "< 0.1 %", "> 99.9 %".
/// A goodput of 99.98 % read "100.0 %" beside a list of what it missed.
pub fn percent(share: f64, decimals: usize) -> String {
    let step = 10f64.powi(-(decimals as i32));
    let p = share * 100.0;
    if p > 0.0 && p < step / 2.0 {
        format!("< {step:.decimals$} %")
    } else if p < 100.0 && p > 100.0 - step / 2.0 {
        format!("> {:.decimals$} %", 100.0 - step)
    } else {
        format!("{p:.decimals$} %")
    }
}

/// Whole numbers with thousands separators: 22,500.
pub fn thousands(v: u64) -> String {
    let digits = v.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A quantity rounded to a whole number, with thousands separators
/// ("8,713"); negative and non-finite values read 0.
pub fn rounded(v: f64) -> String {
    thousands(v.round() as u64)
}

/// Tokens per second, rounded: "8,713 tok/s".
pub fn tokens_per_s(v: f64) -> String {
    format!("{} tok/s", rounded(v))
}

/// Dollars, three significant digits where they are large: "$1.83M",
/// "$22.5k", "$3,102", "$151", "$2.22", and two significant digits for
/// fractions of a cent ("$0.0034").
pub fn usd(v: f64) -> String {
    if !v.is_finite() {
        return "–".to_owned();
    }
    if v < 0.0 {
        return format!("−{}", usd(-v));
    }
    if v >= 999_500.0 {
        let m = v / 1e6;
        let d = if m >= 100.0 {
            0
        } else if m >= 10.0 {
            1
        } else {
            2
        };
        format!("${m:.d$}M")
    } else if v >= 10_000.0 {
        let k = v / 1e3;
        let d = if k >= 100.0 { 0 } else { 1 };
        format!("${k:.d$}k")
    } else if v >= 100.0 {
        format!("${}", rounded(v))
    } else if v >= 0.1 || v == 0.0 {
        format!("${v:.2}")
    } else {
        let digits = (-v.log10()).ceil().clamp(2.0, 8.0) as usize + 1;
        format!("${v:.digits$}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_never_rounds_to_none_or_all_when_it_is_neither() {
        assert_eq!(percent(0.635, 1), "63.5 %");
        assert_eq!(percent(1.0, 1), "100.0 %");
        assert_eq!(percent(0.0, 0), "0 %");
        assert_eq!(percent(0.9998, 1), "> 99.9 %");
        assert_eq!(percent(0.0004, 0), "< 1 %");
        assert_eq!(percent(0.0004, 1), "< 0.1 %");
        assert_eq!(percent(0.996, 0), "> 99 %");
    }

    #[test]
    fn durations_read_in_the_unit_that_fits() {
        assert_eq!(duration_ms(None), "–");
        assert_eq!(duration_ms(Some(7.25)), "7.2 ms");
        assert_eq!(duration_ms(Some(320.4)), "320 ms");
        assert_eq!(duration_ms(Some(3_210.0)), "3.2 s");
        assert_eq!(duration_ms(Some(12_345.0)), "12.3 s");
        assert_eq!(duration_ms(Some(270_000.0)), "4.5 min");
        assert_eq!(duration_ms(Some(7_560_000.0)), "2.1 h");
        assert_eq!(
            duration_pair_ms(60_412.0, 60_000.0),
            ("60.4 s".to_owned(), "60.0 s".to_owned())
        );
        assert_eq!(
            duration_pair_ms(200_400.0, 200_000.0),
            ("200400 ms".to_owned(), "200000 ms".to_owned())
        );
    }

    #[test]
    fn dollars_read_with_three_significant_digits() {
        assert_eq!(usd(2.2222), "$2.22");
        assert_eq!(usd(151.4), "$151");
        assert_eq!(usd(3_102.0), "$3,102");
        assert_eq!(usd(22_500.0), "$22.5k");
        assert_eq!(usd(151_000.0), "$151k");
        assert_eq!(usd(1_828_000.0), "$1.83M");
        assert_eq!(usd(352_000_000.0), "$352M");
        assert_eq!(usd(0.0034), "$0.0034");
        assert_eq!(usd(0.0205), "$0.021");
        assert_eq!(usd(0.0), "$0.00");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(rounded(8_712.6), "8,713");
        assert_eq!(tokens_per_s(1_517.4), "1,517 tok/s");
    }

    #[test]
    fn numbers_are_plain_where_short() {
        assert_eq!(show(0.5), "0.5");
        assert_eq!(show(2e12), "2e12");
    }
}
