//! A scenario's `serving.profile` given as a file name: the CLI reads the
//! file (relative to the scenario's directory) and puts the profile inline
//! before the scenario is parsed, so sim-core never does I/O and a link made
//! from the scenario carries the profile itself.

use sim_core::physics::FittedProfile;
use std::path::Path;

/// Largest profile file read (a profile is about 1 kB).
const MAX_PROFILE_BYTES: u64 = 64 * 1024;

/// `text` with a `serving.profile` file name replaced by the file's profile;
/// `text` unchanged when it names none (or is not JSON: the parser reports
/// that, by line and column). Errors name the profile file.
pub fn inline(text: &str, scenario_dir: &Path) -> Result<String, String> {
    let text = sim_core::text::without_bom(text);
    let Ok(mut doc) = serde_json::from_str::<serde_json::Value>(text) else {
        return Ok(text.to_owned());
    };
    let Some(name) = doc
        .pointer("/serving/profile")
        .and_then(|p| p.as_str())
        .map(str::to_owned)
    else {
        return Ok(text.to_owned());
    };
    let path = scenario_dir.join(&name);
    let shown = path.display();
    let size = std::fs::metadata(&path)
        .map_err(|e| format!("serving.profile: {shown}: {e}"))?
        .len();
    if size > MAX_PROFILE_BYTES {
        return Err(format!(
            "serving.profile: {shown} is larger than {MAX_PROFILE_BYTES} bytes; a profile is about 1 kB"
        ));
    }
    let body =
        std::fs::read_to_string(&path).map_err(|e| format!("serving.profile: {shown}: {e}"))?;
    let profile: FittedProfile = serde_json::from_str(sim_core::text::without_bom(&body)).map_err(|e| {
        format!("serving.profile: {shown}: {e} (a profile as `tlab calibrate --measured DIR --fit --profile-out FILE` writes it)")
    })?;
    let problems = profile.problems(&format!("{shown}"));
    if !problems.is_empty() {
        return Err(format!("serving.profile: {}", problems.join("; ")));
    }
    doc["serving"]["profile"] = serde_json::to_value(&profile).map_err(|e| e.to_string())?;
    serde_json::to_string(&doc).map_err(|e| e.to_string())
}
