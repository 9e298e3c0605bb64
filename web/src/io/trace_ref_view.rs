//! A scenario distilled from a trace names the trace (its file's name,
//! SHA-256, count and summary): the page offers its exact replay, from the
//! trace it holds or from the file the user chooses (checked against the
//! hash). An exact replay too large for a link is linked as its distilled
//! form with the reference, marked exact, so whoever opens the link is asked
//! for the same file.

use crate::controls::views::{control_error, refuse, refuser};
use leptos::prelude::*;
use sim_core::Scenario;
use sim_core::scenario::{Arrival, Workload};
use sim_core::traces::{self, Imported};
use std::sync::Arc;
use wasm_bindgen::JsCast;

/// What the address bar holds for an exact replay too large for a link: the
/// replay's traffic, and the distilled scenario to link instead.
pub type LinkAs = Option<(Workload, Scenario)>;

/// A trace the page holds, with its file's SHA-256.
pub type Held = (String, Arc<Imported>);

/// The scenario the address bar should carry for `s`: its link form when it
/// is the exact replay `link_as` maps (fleet edits included), else `s`.
pub fn linked(s: &Scenario, link_as: &LinkAs) -> Option<Scenario> {
    match link_as {
        Some((w, d)) if s.workload == *w => Some(traces::link_form(s, d)),
        _ => None,
    }
}

/// Replay `t` exactly on `current`'s fleet, and remember how to link it.
fn replay(
    current: &Scenario,
    t: &Imported,
    scenario: RwSignal<Scenario>,
    link_as: RwSignal<LinkAs>,
    problem: RwSignal<Option<String>>,
    refuse: impl Fn(&str, String),
) {
    let exact = traces::exact_replay(current, t);
    match exact.clone().validate() {
        Ok(_) => {
            problem.set(None);
            link_as.set(Some((exact.workload.clone(), current.clone())));
            scenario.set(exact);
        }
        Err(e) => refuse("trace-needed", format!("The exact replay cannot run: {e}")),
    }
}

/// The banner (hidden unless the scenario names a trace).
pub fn trace_ref_view(
    scenario: RwSignal<Scenario>,
    held: RwSignal<Option<Held>>,
    link_as: RwSignal<LinkAs>,
    problem: RwSignal<Option<String>>,
) -> impl IntoView {
    // Files are read after an await: messages are placed by a refuser
    // made now.
    let later = refuser(problem);
    let reference = move || scenario.with(|s| s.distilled_from.clone());
    let replaying = move || scenario.with(|s| matches!(s.workload.arrival, Arrival::Trace { .. }));
    // The trace the page holds, if it is the one the scenario names.
    let holds = move || {
        reference()
            .is_some_and(|r| held.with(|h| h.as_ref().is_some_and(|(sha, _)| *sha == r.sha256)))
    };
    view! {
        <Show when=move || reference().is_some()>
            <div class="banner info" data-testid="trace-needed">
                {move || reference().map(|r| {
                    let short: String = r.sha256.chars().take(12).collect();
                    if replaying() {
                        format!(
                            "Exact replay of {} ({} requests, SHA-256 {short}…). Its link carries the distilled traffic and the trace's name and hash; whoever opens it is asked for the same file.",
                            r.name, sim_core::format::thousands(r.requests)
                        )
                    } else {
                        format!(
                            "{}distilled from {} ({} requests, SHA-256 {short}…): {}",
                            if r.exact { "This link was made of an exact replay; what runs here is its traffic " } else { "This scenario is " },
                            r.name,
                            sim_core::format::thousands(r.requests),
                            r.summary.trim_end()
                        )
                    }
                })}
                <Show when=move || !replaying()>
                    <Show
                        when=holds
                        fallback=move || view! {
                            <label>
                                " Choose the file to replay it exactly: "
                                <input
                                    type="file"
                                    data-testid="trace-file"
                                    accept=".json,.jsonl,.csv,application/json,text/csv"
                                    on:change=move |ev| {
                                        let Some(file) = ev
                                            .target()
                                            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
                                            .and_then(|i| i.files())
                                            .and_then(|f| f.get(0))
                                        else {
                                            return;
                                        };
                                        if file.size() > crate::io::import::MAX_STREAMED_BYTES {
                                            refuse(problem, "trace-needed", format!("{} is too large for the page", file.name()));
                                            return;
                                        }
                                        wasm_bindgen_futures::spawn_local(async move {
                                            let current = scenario.get_untracked();
                                            let Some(r) = current.distilled_from.clone() else { return };
                                            // Read a line at a time, its SHA-256 on the way.
                                            let read = crate::io::file_lines::read_trace(&file, &r.options()).await;
                                            match read {
                                                Ok((_, got)) if got != r.sha256 => {
                                                    later("trace-needed", format!(
                                                        "{} is not the trace this scenario names: its SHA-256 is {}…, the link's {}…",
                                                        file.name(),
                                                        &got[..12],
                                                        r.sha256.chars().take(12).collect::<String>()
                                                    ));
                                                }
                                                Ok((Ok(t), got)) => {
                                                    let t = Arc::new(t);
                                                    held.set(Some((got, t.clone())));
                                                    replay(&current, &t, scenario, link_as, problem, later);
                                                }
                                                Ok((Err(e), _)) | Err(e) => later("trace-needed", e),
                                            }
                                        });
                                    }
                                />
                            </label>
                        }
                    >
                        <button data-testid="trace-replay" on:click=move |_| {
                            if let Some((_, t)) = held.get_untracked() {
                                replay(&scenario.get_untracked(), &t, scenario, link_as, problem, later);
                            }
                        }>"Replay it exactly"</button>
                    </Show>
                </Show>
                {control_error("trace-needed".into(), problem)}
            </div>
        </Show>
    }
}
