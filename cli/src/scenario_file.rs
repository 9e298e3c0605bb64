//! Reading a scenario file for a command: bounded in size, its
//! `serving.profile` file inlined (`tlab::profile_file`), parsed and
//! validated, with `--set NAME=VALUE` edits applied. A share link from the
//! page (anything holding `#s=`) stands for its scenario.

use sim_core::{Scenario, ValidScenario};
use std::path::{Path, PathBuf};

/// Largest scenario file accepted, bytes.
const MAX_SCENARIO_BYTES: u64 = 64 * 1024 * 1024;

/// The scenario at `path` (a JSON file, "-" for standard input, or a
/// share link), validated; its `serving.profile` file inlined.
pub fn load(path: &Path) -> Result<ValidScenario, String> {
    // A share link from the page (`https://…/#s=v1.…`) runs as the page ran it.
    if let Some(link) = path.to_str().filter(|p| p.contains("#s=")) {
        let fragment = &link[link.find('#').unwrap_or(0)..];
        return sim_core::link::decode_fragment(fragment)
            .map_err(|e| format!("the link {}: {e}", shorten(link)));
    }
    let dir = match path.parent() {
        Some(d) if path.as_os_str() != "-" => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let text = crate::profile_file::inline(&read_scenario(path)?, &dir)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Scenario::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Load a scenario and apply `--set NAME=VALUE` edits, checking the result.
/// What else an edit changed is said on standard error.
pub fn load_with(path: &Path, set: &[String]) -> Result<ValidScenario, String> {
    let (s, notes) = with_edits(load(path)?, set)?;
    for n in notes {
        eprintln!("tlab: {n}");
    }
    Ok(s)
}

/// `s` with `NAME=VALUE` edits applied in order (as `--set` takes them), the
/// result checked; and, for each edit that changed more than its own value,
/// what else it changed, in words: a run never differs silently from what
/// was asked.
pub fn with_edits(
    s: ValidScenario,
    set: &[String],
) -> Result<(ValidScenario, Vec<String>), String> {
    if set.is_empty() {
        return Ok((s, Vec::new()));
    }
    let mut notes = Vec::new();
    let mut edited = s.into_inner();
    for kv in set {
        let (name, value) = kv
            .split_once('=')
            .ok_or_else(|| format!("--set {kv:?}: expected NAME=VALUE"))?;
        let before = edited.clone();
        sim_core::params::apply(&mut edited, name, value)
            .map_err(|e| format!("--set {kv}: {e}"))?;
        if let Ok(p) = sim_core::params::check_name(name) {
            for change in sim_core::params::side_effects(&before, &edited, p) {
                notes.push(format!("--set {kv} also changed {change}"));
            }
        }
    }
    Ok((edited.validate().map_err(|e| e.to_string())?, notes))
}

/// A link cut to its first 60 characters for a message.
fn shorten(link: &str) -> String {
    match link.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &link[..at]),
        None => link.to_string(),
    }
}

fn read_scenario(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let mut text = String::new();
    let limited = |r: &mut dyn Read, text: &mut String| {
        r.take(MAX_SCENARIO_BYTES + 1)
            .read_to_string(text)
            .map_err(|e| format!("{}: {e}", path.display()))
    };
    if path.as_os_str() == "-" {
        limited(&mut std::io::stdin(), &mut text)?;
    } else {
        let mut f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        limited(&mut f, &mut text)?;
    }
    if text.len() as u64 > MAX_SCENARIO_BYTES {
        return Err(format!(
            "{}: larger than {MAX_SCENARIO_BYTES} bytes",
            path.display()
        ));
    }
    Ok(text)
}

/// `tlab preset ID`: the preset's scenario as a JSON file.
pub fn preset_json(id: &str) -> Result<String, String> {
    let all = sim_core::presets::all();
    let p = all.iter().find(|p| p.id == id).ok_or_else(|| {
        let ids: Vec<&str> = all.iter().map(|p| p.id).collect();
        format!("no preset {id:?}; known: {}", ids.join(", "))
    })?;
    serde_json::to_string_pretty(&p.scenario)
        .map(|j| j + "\n")
        .map_err(|e| e.to_string())
}
