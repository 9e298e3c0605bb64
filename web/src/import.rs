//! Import a scenario as JSON: pasted, or from a file (what "Scenario JSON"
//! exports and `tlab preset` prints). The text is checked like a link: size
//! first, then every field, with a message naming what is wrong.

use crate::control_views::{control_error, refuse};
use leptos::prelude::*;
use sim_core::Scenario;
use wasm_bindgen::JsCast;

/// Largest scenario accepted, bytes (the same bound as a link's).
pub const MAX_IMPORT_BYTES: usize = sim_core::link::MAX_SCENARIO_BYTES;

/// Parse and validate an imported scenario.
pub fn open_json(text: &str) -> Result<Scenario, String> {
    if text.len() > MAX_IMPORT_BYTES {
        return Err(format!(
            "the file is {} bytes; at most {MAX_IMPORT_BYTES} are accepted",
            text.len()
        ));
    }
    if text.trim().is_empty() {
        return Err("there is nothing to import: paste a scenario's JSON or choose a file".into());
    }
    Scenario::from_json(text)
        .map(sim_core::ValidScenario::into_inner)
        .map_err(|e| e.to_string())
}

/// The import panel.
pub fn import_view(
    scenario: RwSignal<Scenario>,
    problem: RwSignal<Option<String>>,
) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let open = move |json: &str| match open_json(json) {
        Ok(s) => {
            problem.set(None);
            scenario.set(s);
        }
        Err(e) => refuse(
            problem,
            "import",
            format!("The imported scenario could not be opened: {e}"),
        ),
    };
    view! {
        <details class="group import" data-testid="import">
            <summary>"Import a scenario (JSON)"</summary>
            <p class="help-text">
                "Paste a scenario's JSON (as \u{201c}Scenario JSON\u{201d} exports it or "
                <code>"tlab preset"</code>
                " prints it), or choose a file."
            </p>
            <textarea
                data-testid="import-text"
                rows="4"
                aria-label="Scenario JSON"
                prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))
            ></textarea>
            <div class="import-actions">
                <button data-testid="import-open" on:click=move |_| open(&text.get_untracked())>
                    "Open pasted JSON"
                </button>
                <input
                    type="file"
                    accept=".json,application/json"
                    data-testid="import-file"
                    aria-label="Scenario JSON file"
                    on:change=move |ev| {
                        let file = ev
                            .target()
                            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
                            .and_then(|input| input.files())
                            .and_then(|files| files.get(0));
                        let Some(file) = file else { return };
                        if file.size() > MAX_IMPORT_BYTES as f64 {
                            refuse(problem, "import", format!(
                                "The imported scenario could not be opened: the file is {} bytes; at most {MAX_IMPORT_BYTES} are accepted",
                                file.size()
                            ));
                            return;
                        }
                        let promise = file.text();
                        wasm_bindgen_futures::spawn_local(async move {
                            match wasm_bindgen_futures::JsFuture::from(promise).await {
                                Ok(v) => open(&v.as_string().unwrap_or_default()),
                                Err(_) => refuse(problem, "import", "The file could not be read.".into()),
                            }
                        });
                    }
                />
            </div>
            {control_error("import".into(), problem)}
        </details>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_import_opens_a_valid_scenario_and_names_what_is_wrong_otherwise() {
        let s = sim_core::presets::pay_for_speed();
        let json = serde_json::to_string(&s).expect("json");
        assert_eq!(open_json(&json).expect("opens"), s);
        let bad = json.replace("\"replicas\":1", "\"replicas\":0");
        let err = open_json(&bad).expect_err("invalid");
        assert!(err.contains("serving.replicas"), "{err}");
        assert!(
            open_json("   ")
                .expect_err("empty")
                .contains("nothing to import")
        );
        let syntax = open_json("{\"version\":").expect_err("syntax");
        assert!(syntax.contains("ends too early"), "{syntax}");
        let huge = " ".repeat(MAX_IMPORT_BYTES + 1);
        assert!(open_json(&huge).expect_err("size").contains("at most"));
    }
}
