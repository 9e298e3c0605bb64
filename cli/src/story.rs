//! `tlab story PRESET`: a preset's story step by step, each claim checked
//! against the run of its step — the same steps, runs and checks as the
//! page's story panel.

use sim_core::presets::story::check_step;

/// The story of preset `id`, every claim checked; Err if the preset is
/// unknown or a step cannot run.
pub fn text(id: &str) -> Result<String, String> {
    let p = sim_core::presets::all()
        .into_iter()
        .find(|p| p.id == id)
        .ok_or_else(|| format!("no preset {id:?}; see `tlab presets`"))?;
    let n = p.steps.len();
    let mut out = format!("{}\n", p.title);
    for (k, step) in p.steps.iter().enumerate() {
        let edits: Vec<String> = step
            .edits
            .iter()
            .map(|(n, v)| format!("--set {n}={v}"))
            .collect();
        let checked = check_step(&p.scenario, p.steps, k)?;
        let values: Vec<Option<f64>> = checked.iter().map(|c| c.value).collect();
        out += &format!(
            "\nStep {} of {n}: {}{}\n{}\n",
            k + 1,
            step.title,
            if edits.is_empty() {
                String::new()
            } else {
                format!(" ({})", edits.join(" "))
            },
            step.say_with(&values)
        );
        for (c, got) in step.claims.iter().zip(checked) {
            let mark = match got.holds {
                Some(true) => "✓",
                Some(false) => "✗",
                None => "?",
            };
            let value = got.value.map_or("no value".to_owned(), |v| c.what.show(v));
            out += &format!(
                "  {mark} {}: {value} (the story says {})\n",
                c.subject(),
                c.expects()
            );
        }
    }
    Ok(out)
}
