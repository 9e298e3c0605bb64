//! `tlab sweep --help-parameters`: the parameter catalogue as the command line names it.

/// Every parameter of the catalogue: path, what values it takes, its label.
pub fn list() -> String {
    use sim_core::params::{self, Kind};
    let preset = sim_core::presets::chatbot_h100();
    params::all()
        .map(|p| {
            let values = match p.kind {
                Kind::Number(n) => format!(
                    "{}..={} {}",
                    params::show(n.min),
                    params::show(n.max),
                    p.unit
                ),
                Kind::Choice(c) => (c.options)(&preset, 0)
                    .into_iter()
                    .map(|(k, _)| k)
                    .collect::<Vec<_>>()
                    .join(", "),
                Kind::Text(t) => format!("text, as in \"{}\"", t.example),
            };
            let class = if p.per_class() { "[CLASS]" } else { "" };
            format!(
                "{:<30} {} — {values}\n",
                format!("{}{class}", p.path),
                p.label
            )
        })
        .collect()
}
