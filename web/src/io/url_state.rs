//! The scenario in the address bar: read at start-up, written on every change.

use leptos::prelude::*;
use sim_core::presets;
use sim_core::{Scenario, link};

/// What a page load starts from.
pub struct Start {
    /// The link's scenario, or the default.
    pub scenario: Scenario,
    /// Why the link could not be used, if it could not.
    pub problem: Option<String>,
    /// The link was made before serving-software profiles (its numbers are
    /// TensorRT-LLM's 2023 constants, as they always were).
    pub before_profiles: bool,
    /// The pinned scenario A the link carries, if any.
    pub pinned: Option<Scenario>,
}

/// The scenario a page load starts from: the link's, or the default with the
/// reason the link could not be used.
pub fn scenario_from_fragment(fragment: &str) -> Start {
    let f = fragment.trim_start_matches('#');
    let default = |problem| Start {
        scenario: presets::chatbot_h100(),
        problem,
        before_profiles: false,
        pinned: None,
    };
    if f.is_empty() {
        return default(None);
    }
    match link::decode_fragment_detail(f) {
        Ok(d) => {
            let (pinned, problem) = match link::decode_fragment_pinned(f) {
                Some(Ok(a)) => (Some(a.into_inner()), None),
                Some(Err(e)) => (
                    None,
                    Some(format!(
                        "The link's pinned scenario A could not be opened: {e}. Showing B alone."
                    )),
                ),
                None => (None, None),
            };
            Start {
                scenario: d.scenario.into_inner(),
                problem,
                before_profiles: d.before_profiles,
                pinned,
            }
        }
        Err(e) => default(Some(format!(
            "This link could not be opened: {e}. Showing the default scenario instead."
        ))),
    }
}

/// The address bar's fragment (`#s=…`).
pub fn current_fragment() -> String {
    window().location().hash().unwrap_or_default()
}

/// Put the scenario (and the pinned scenario A, if any) in the address bar.
pub fn write_fragment(s: &Scenario, pinned: Option<&Scenario>) {
    let url = link::encode_fragment_compared(s, pinned);
    if let Ok(history) = window().history() {
        // replaceState: the address follows the scenario without a reload or a
        // history entry per slider step.
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
    }
}
