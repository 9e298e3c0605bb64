//! The scenario in the address bar: read at start-up, written after every
//! change (at most every [`WRITE_EVERY_MS`], the last change always).

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

/// The address bar is written at most this often. A drag changes the
/// scenario every frame, and each write (`replaceState` of a link of some
/// 900 characters) costs the page a few milliseconds and the browser's own
/// process more, on the cores the run on screen needs.
pub const WRITE_EVERY_MS: f64 = 100.0;

#[derive(Default)]
struct Writes {
    /// The scenario (and A) waiting to be written.
    pending: Option<(Scenario, Option<Scenario>)>,
    /// When the address was last written.
    last_ms: f64,
    /// A write is scheduled.
    armed: bool,
}

thread_local! {
    static WRITES: std::cell::RefCell<Writes> = std::cell::RefCell::default();
}

/// Put the scenario (and the pinned scenario A, if any) in the address bar:
/// now, unless it was written less than [`WRITE_EVERY_MS`] ago; then when
/// that interval is up, with whatever is the latest by then.
pub fn write_fragment(s: &Scenario, pinned: Option<&Scenario>) {
    let now = crate::work::jobs::now_ms();
    let wait = WRITES.with(|w| {
        let mut w = w.borrow_mut();
        w.pending = Some((s.clone(), pinned.cloned()));
        if w.armed {
            // The write already scheduled takes this scenario.
            return None;
        }
        let wait = WRITE_EVERY_MS - (now - w.last_ms);
        w.armed = wait > 0.0;
        Some(wait)
    });
    match wait {
        None => {}
        Some(ms) if ms > 0.0 => set_timeout(
            || {
                WRITES.with(|w| w.borrow_mut().armed = false);
                flush_fragment();
            },
            std::time::Duration::from_millis(ms.ceil() as u64),
        ),
        Some(_) => flush_fragment(),
    }
}

/// Write the waiting scenario to the address bar now (before the address is
/// read: copying the link, leaving the page).
pub fn flush_fragment() {
    let Some((s, pinned)) = WRITES.with(|w| w.borrow_mut().pending.take()) else {
        return;
    };
    let url = link::encode_fragment_compared(&s, pinned.as_ref());
    if let Ok(history) = window().history() {
        // replaceState: the address follows the scenario without a reload or a
        // history entry per slider step.
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
    }
    WRITES.with(|w| w.borrow_mut().last_ms = crate::work::jobs::now_ms());
}
