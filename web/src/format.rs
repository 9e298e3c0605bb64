//! How numbers read on the page: sim-core's one set of formatters
//! (`sim_core::format`), which the CLI and the planner's messages use too.

/// A latency in the unit that fits it (`sim_core::format::duration_ms`).
pub fn fmt_ms(v: Option<f64>) -> String {
    sim_core::format::duration_ms(v)
}

/// Dollars (`sim_core::format::usd`): $2.22, $3,102, $22.5k, $1.83M.
pub fn fmt_usd(v: f64) -> String {
    sim_core::format::usd(v)
}

/// `s` with its first letter in capitals (a class name may start with any).
pub fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
