//! Import what a user brings: a scenario as JSON (pasted, or a file: what
//! "Scenario JSON" exports and `tlab preset` prints), a profile fitted to
//! their own run (`tlab calibrate --measured DIR --fit --profile-out`), a
//! real request trace (Mooncake, Azure, BurstGPT, `vllm bench serve`,
//! per-request JSON lines) replayed on the scenario's fleet, or a measured
//! run (its `requests.jsonl` with `meta.json`, and `timeseries.csv` when
//! there) replayed strictly and compared. Every text is checked like a link:
//! size first, then every field, with a message naming the file and what is
//! wrong.

use crate::controls::views::{control_error, refuse, refuser};
use crate::io::measured_view::MeasuredImport;
use leptos::prelude::*;
use sim_core::Scenario;
use sim_core::physics::FittedProfile;
use sim_core::traces::{self, measured};
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

/// Largest file read whole on the page (a measured run's, a `vllm bench
/// serve` document), bytes.
pub const MAX_TRACE_BYTES: f64 = 256.0 * 1024.0 * 1024.0;

/// Largest trace read a line at a time on the page, bytes: its memory is
/// the requests kept (at most `bounds::TRACE_REQUESTS`), this bounds the
/// time reading takes.
pub const MAX_STREAMED_BYTES: f64 = 2.0 * 1024.0 * 1024.0 * 1024.0;

/// What a set of files turned out to be.
#[derive(Debug)]
pub enum Opened {
    /// A whole scenario.
    Scenario(Scenario),
    /// The scenario with the user's fitted profile in place of the software's.
    Profile(Scenario),
    /// A trace on the scenario's fleet: its exact replay (None when that
    /// would not fit a share link), its distilled scenario, and the trace in
    /// words.
    Trace {
        /// The exact replay, when its link fits.
        exact: Option<Scenario>,
        /// The distilled scenario and what it loses.
        distilled: Box<traces::Distilled>,
        /// The trace's summary.
        words: String,
        /// The trace itself (to replay it exactly later).
        trace: std::sync::Arc<traces::Imported>,
    },
    /// A measured run and its strict replay.
    Measured(MeasuredImport),
}

/// Open `files` (name, text) against the scenario on screen.
/// How to take a trace, from the panel's fields: speed (×, blank = 1) or a
/// mean rate (requests/s, blank = the trace's own), a window of the trace's own seconds (both ends, or neither), and a column
/// naming each request's class (BurstGPT's `Model` or `Log Type`).
pub fn trace_options(
    speed: &str,
    rate: &str,
    from: &str,
    to: &str,
    column: &str,
) -> Result<traces::Options, String> {
    let num = |what: &str, v: &str| {
        v.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("{what} must be a number, got {v:?}"))
    };
    let speed = if speed.trim().is_empty() {
        1.0
    } else {
        num("the trace speed", speed)?
    };
    let rate_per_s = if rate.trim().is_empty() {
        None
    } else {
        Some(num("the trace rate", rate)?)
    };
    let window = match (from.trim().is_empty(), to.trim().is_empty()) {
        (true, true) => None,
        (false, false) => Some((
            num("the window's start", from)?,
            num("the window's end", to)?,
        )),
        _ => {
            return Err(
                "a window needs both its start and its end (seconds of the trace), or neither"
                    .into(),
            );
        }
    };
    let column = column.trim();
    Ok(traces::Options {
        speed,
        rate_per_s,
        window,
        class_column: (!column.is_empty()).then(|| column.to_owned()),
        skip_bad_lines: false,
    })
}

/// Open `files` (name, text) against the scenario on screen, a trace taken
/// with `options`.
pub fn open_files(
    files: &[(String, String)],
    current: &Scenario,
    options: &traces::Options,
) -> Result<Opened, String> {
    let named = |suffix: &str| files.iter().find(|(n, _)| n.ends_with(suffix));
    let meta = files
        .iter()
        .find(|(n, t)| n.ends_with("meta.json") || t.contains("\"engine_kwargs\""));
    if let Some((meta_name, meta_text)) = meta {
        let (log_name, log) = named(".jsonl").ok_or_else(|| {
            format!("{meta_name} describes a measured run: choose its request log (requests.jsonl) with it")
        })?;
        let series = files
            .iter()
            .find(|(n, _)| n.ends_with(".csv"))
            .map(|(_, t)| t.as_str());
        let run = measured::parse(log, Some(meta_text), series)
            .map_err(|e| format!("{log_name}: {e}"))?;
        let (replay, _) = run.scenario(&sim_core::presets::chatbot_h100())?;
        let replay = replay.validate().map_err(|e| e.to_string())?.into_inner();
        let mut name = format!("{log_name} with {meta_name}");
        if let Some((csv, _)) = named(".csv") {
            name += &format!(" and {csv}");
        }
        return Ok(Opened::Measured(MeasuredImport {
            name,
            run: std::sync::Arc::new(run),
            replay,
        }));
    }
    let [(name, text)] = files else {
        return Err(format!(
            "{} files chosen: choose one (a scenario, a profile or a trace), or a measured run's requests.jsonl with its meta.json",
            files.len()
        ));
    };
    // What the file is, read past a byte-order mark (the trace readers and
    // the scenario parser skip it too; the file's SHA-256 is of its bytes).
    let body = sim_core::text::without_bom(text);
    let json = body
        .trim_start()
        .starts_with('{')
        .then(|| serde_json::from_str::<serde_json::Value>(body).ok())
        .flatten();
    match json {
        Some(v) if v.get("costs").is_some() && v.get("validated").is_some() => {
            let p: FittedProfile =
                serde_json::from_str(body).map_err(|e| format!("{name}: {e}"))?;
            let mut s = current.clone();
            // A fitted profile is vLLM's: chosen through the catalogue.
            sim_core::params::apply(&mut s, "software", "vllm")
                .map_err(|e| format!("{name}: {e}"))?;
            s.serving.fitted_profile = Some(Box::new(p));
            let s = s
                .validate()
                .map_err(|e| format!("{name}: {e}"))?
                .into_inner();
            Ok(Opened::Profile(s))
        }
        Some(v) if v.get("workload").is_some() || v.get("serving").is_some() => {
            open_json(text).map(Opened::Scenario)
        }
        _ => {
            let t = traces::read(text, options).map_err(|e| format!("{name}: {e}"))?;
            open_trace(
                name,
                t,
                traces::sha256_hex(text.as_bytes()),
                current,
                options,
            )
        }
    }
}

/// The trace `t`, read from the file `name` whose SHA-256 is `sha` with
/// `options`, against the scenario on screen: its exact replay (when its
/// link fits) and its distilled scenario.
pub fn open_trace(
    name: &str,
    t: traces::Imported,
    sha: String,
    current: &Scenario,
    options: &traces::Options,
) -> Result<Opened, String> {
    let mut s = current.clone();
    t.apply_to(&mut s);
    let exact = s
        .validate()
        .map_err(|e| format!("{name}: {e}"))?
        .into_inner();
    let exact = sim_core::link::shareable(&exact).is_ok().then_some(exact);
    let reference = sim_core::scenario::TraceRef::with_digest(name, sha, &t, options);
    let words = reference.summary.clone();
    let mut distilled = t
        .distil(current, name)
        .map_err(|e| format!("{name}: {e}"))?;
    distilled.scenario.distilled_from = Some(reference);
    distilled
        .scenario
        .check()
        .map_err(|e| format!("{name}, distilled: {e}"))?;
    Ok(Opened::Trace {
        exact,
        distilled: Box::new(distilled),
        words,
        trace: std::sync::Arc::new(t),
    })
}

/// The import panel.
pub fn import_view(
    scenario: RwSignal<Scenario>,
    problem: RwSignal<Option<String>>,
    measured: RwSignal<Option<MeasuredImport>>,
    held: RwSignal<Option<crate::io::trace_ref_view::Held>>,
) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let note = RwSignal::new(None::<String>);
    // How a trace is taken (blank: as it is).
    let (speed, rate, from, to, column) = (
        RwSignal::new(String::new()),
        RwSignal::new(String::new()),
        RwSignal::new(String::new()),
        RwSignal::new(String::new()),
        RwSignal::new(String::new()),
    );
    // The distilled scenario of the trace being replayed exactly, offered.
    let distil = RwSignal::new(None::<Scenario>);
    // Files are read after an await: the message is placed by a refuser
    // made now.
    let later = refuser(problem);
    let fail = move |e: String| {
        note.set(None);
        later("import", format!("The import could not be opened: {e}"));
    };
    // Leave out a trace's lines that do not read, naming them.
    let skip = RwSignal::new(false);
    let options = move || {
        trace_options(
            &speed.get_untracked(),
            &rate.get_untracked(),
            &from.get_untracked(),
            &to.get_untracked(),
            &column.get_untracked(),
        )
        .map(|o| traces::Options {
            skip_bad_lines: skip.get_untracked(),
            ..o
        })
    };
    let show = move |opened: Result<Opened, String>| match opened {
        Ok(opened) => {
            problem.set(None);
            match opened {
                Opened::Scenario(s) => {
                    note.set(None);
                    distil.set(None);
                    scenario.set(s);
                }
                Opened::Profile(s) => {
                    note.set(Some(format!(
                        "Your profile now times every step: {}",
                        s.serving
                            .profile_statement(s.offered_tokens_per_s_per_replica())
                            .trust
                    )));
                    scenario.set(s);
                }
                Opened::Trace {
                    exact,
                    distilled,
                    words,
                    trace,
                } => {
                    let loses = distilled.loses.join("; ");
                    match exact {
                        Some(s) => {
                            note.set(Some(format!(
                                    "Replaying exactly on this fleet: {words}Pin this run as A, then open the distilled scenario (it fits a short link) to see what distilling loses: {loses}."
                                )));
                            distil.set(Some(distilled.scenario));
                            scenario.set(s);
                        }
                        None => {
                            note.set(Some(format!(
                                    "{words}Its exact replay would not fit in a link, so it opens distilled (a rate schedule, quantile tables of lengths, shared prefixes), which loses {loses}. Its link names the trace by name and hash; \u{201c}Replay it exactly\u{201d} above the results runs every request."
                                )));
                            distil.set(None);
                            let sha = distilled
                                .scenario
                                .distilled_from
                                .as_ref()
                                .map(|r| r.sha256.clone())
                                .unwrap_or_default();
                            held.set(Some((sha, trace)));
                            scenario.set(distilled.scenario);
                        }
                    }
                }
                Opened::Measured(m) => {
                    note.set(Some(format!(
                        "Measured run opened: {}. Its comparison is under the cards.",
                        m.name
                    )));
                    scenario.set(m.replay.clone());
                    measured.set(Some(m));
                }
            }
        }
        Err(e) => fail(e),
    };
    view! {
        <details class="group import" data-testid="import">
            <summary>"Import a scenario, a trace or a measured run"</summary>
            <p class="help-text">
                "Paste a scenario's JSON (as \u{201c}Scenario JSON\u{201d} exports it or "
                <code>"tlab preset"</code>
                " prints it), or choose a file: a scenario; a request trace (Mooncake, Azure, BurstGPT, "
                <code>"vllm bench serve"</code>
                " or per-request JSON lines), replayed on this fleet; a profile fitted to your own run ("
                <code>"tlab calibrate --measured DIR --fit --profile-out"</code>
                "); or a measured run\u{2019}s "
                <code>"requests.jsonl"</code>
                " together with its "
                <code>"meta.json"</code>
                " (and "
                <code>"timeseries.csv"</code>
                "), replayed strictly and compared with what you measured."
            </p>
            <textarea
                data-testid="import-text"
                rows="4"
                aria-label="Scenario JSON"
                prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))
            ></textarea>
            <div class="import-actions">
                <button data-testid="import-open" on:click=move |_| {
                    // Pasted text is a scenario (its own checks and messages).
                    match open_json(&text.get_untracked()) {
                        Ok(s) => {
                            problem.set(None);
                            note.set(None);
                            scenario.set(s);
                        }
                        Err(e) => {
                            note.set(None);
                            refuse(
                                problem,
                                "import",
                                format!("The imported scenario could not be opened: {e}"),
                            );
                        }
                    }
                }>
                    "Open pasted JSON"
                </button>
                <input
                    type="file"
                    multiple=true
                    accept=".json,.jsonl,.csv,application/json,text/csv"
                    data-testid="import-file"
                    aria-label="Scenario, trace, profile or measured-run files"
                    on:change=move |ev| {
                        let Some(list) = ev
                            .target()
                            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
                            .and_then(|input| input.files())
                        else {
                            return;
                        };
                        let files: Vec<web_sys::File> =
                            (0..list.length()).filter_map(|i| list.get(i)).collect();
                        let too_large = move |f: &web_sys::File, most: f64| {
                            fail(format!(
                                "{} is {} bytes; the page reads at most {} of such a file (replay larger traces with tlab run --trace)",
                                f.name(),
                                sim_core::format::thousands(f.size() as u64),
                                sim_core::format::thousands(most as u64),
                            ));
                        };
                        wasm_bindgen_futures::spawn_local(async move {
                            let options = match options() {
                                Ok(o) => o,
                                Err(e) => return fail(e),
                            };
                            // One trace read a line at a time: streamed.
                            if let [f] = files.as_slice() {
                                match crate::io::file_lines::head(f, 65_536.0).await {
                                    Ok(h) if crate::io::file_lines::is_line_trace(&h) => {
                                        if f.size() > MAX_STREAMED_BYTES {
                                            return too_large(f, MAX_STREAMED_BYTES);
                                        }
                                        let read = crate::io::file_lines::read_trace(f, &options).await;
                                        let current = scenario.get_untracked();
                                        return show(read.and_then(|(t, sha)| {
                                            open_trace(&f.name(), t?, sha, &current, &options)
                                        }));
                                    }
                                    Ok(_) => {}
                                    Err(e) => return fail(e),
                                }
                            }
                            if let Some(f) = files.iter().find(|f| f.size() > MAX_TRACE_BYTES) {
                                return too_large(f, MAX_TRACE_BYTES);
                            }
                            let mut read = Vec::new();
                            for f in files {
                                match wasm_bindgen_futures::JsFuture::from(f.text()).await {
                                    Ok(v) => read.push((f.name(), v.as_string().unwrap_or_default())),
                                    Err(_) => {
                                        fail(format!("{} could not be read", f.name()));
                                        return;
                                    }
                                }
                            }
                            show(open_files(&read, &scenario.get_untracked(), &options));
                        });
                    }
                />
            </div>
            <fieldset class="trace-options">
                <legend>"How to take a trace (blank: as it is)"</legend>
                <label>"Speed ×"<input type="text" inputmode="decimal" size="5" data-testid="trace-speed" placeholder="1" prop:value=move || speed.get() on:input=move |ev| speed.set(event_target_value(&ev)) /></label>
                <label>" or rate "<input type="text" inputmode="decimal" size="5" data-testid="trace-rate" placeholder="req/s" prop:value=move || rate.get() on:input=move |ev| rate.set(event_target_value(&ev)) />" req/s"</label>
                <label>" Window from "<input type="text" inputmode="decimal" size="6" data-testid="trace-from" placeholder="s" prop:value=move || from.get() on:input=move |ev| from.set(event_target_value(&ev)) /></label>
                <label>" to "<input type="text" inputmode="decimal" size="6" data-testid="trace-to" placeholder="s" prop:value=move || to.get() on:input=move |ev| to.set(event_target_value(&ev)) /></label>
                <label>" Classes from column "<input type="text" size="10" data-testid="trace-column" placeholder="Model" prop:value=move || column.get() on:input=move |ev| column.set(event_target_value(&ev)) /></label>
                <label><input type="checkbox" data-testid="trace-skip" prop:checked=move || skip.get() on:change=move |ev| skip.set(event_target_checked(&ev)) />" Leave out lines that do not read (the summary names them)"</label>
            </fieldset>
            {control_error("import".into(), problem)}
            <Show when=move || note.with(|n| n.is_some())>
                <p class="hint import-note" data-testid="import-note">
                    {move || note.get().unwrap_or_default()}
                </p>
            </Show>
            <Show when=move || distil.with(|d| d.is_some())>
                <button data-testid="import-distil" on:click=move |_| {
                    if let Some(d) = distil.get_untracked() {
                        distil.set(None);
                        note.set(None);
                        scenario.set(d);
                    }
                }>"Open the distilled scenario"</button>
            </Show>
        </details>
    }
}

#[cfg(test)]
#[path = "import_tests.rs"]
mod tests;
