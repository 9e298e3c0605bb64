//! The scenario in the address bar: read at start-up, written on every change.

use leptos::prelude::*;
use sim_core::presets;
use sim_core::{Scenario, link};

/// The scenario a page load starts from: the link's, or the default with the
/// reason the link could not be used.
pub fn scenario_from_fragment(fragment: &str) -> (Scenario, Option<String>) {
    let f = fragment.trim_start_matches('#');
    if f.is_empty() {
        return (presets::chatbot_h100(), None);
    }
    match link::decode_fragment(f) {
        Ok(s) => (s.into_inner(), None),
        Err(e) => (
            presets::chatbot_h100(),
            Some(format!(
                "This link could not be opened: {e}. Showing the default scenario instead."
            )),
        ),
    }
}

/// The address bar's fragment (`#s=…`).
pub fn current_fragment() -> String {
    window().location().hash().unwrap_or_default()
}

/// Put the scenario in the address bar.
pub fn write_fragment(s: &Scenario) {
    let url = link::encode_fragment(s);
    if let Ok(history) = window().history() {
        // replaceState: the address follows the scenario without a reload or a
        // history entry per slider step.
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
    }
}
