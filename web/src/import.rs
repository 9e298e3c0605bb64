//! Import what a user brings: a scenario as JSON (pasted, or a file: what
//! "Scenario JSON" exports and `tlab preset` prints), a profile fitted to
//! their own run (`tlab calibrate --measured DIR --fit --profile-out`), a
//! real request trace (Mooncake, Azure, BurstGPT, `vllm bench serve`,
//! per-request JSON lines) replayed on the scenario's fleet, or a measured
//! run (its `requests.jsonl` with `meta.json`, and `timeseries.csv` when
//! there) replayed strictly and compared. Every text is checked like a link:
//! size first, then every field, with a message naming the file and what is
//! wrong.

use crate::control_views::{control_error, refuse};
use crate::measured_view::MeasuredImport;
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

/// Largest trace or measured-run file read on the page, bytes.
pub const MAX_TRACE_BYTES: f64 = 256.0 * 1024.0 * 1024.0;

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
pub fn open_files(files: &[(String, String)], current: &Scenario) -> Result<Opened, String> {
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
        let (replay, _) = run.scenario()?;
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
    let json = text
        .trim_start()
        .starts_with('{')
        .then(|| serde_json::from_str::<serde_json::Value>(text).ok())
        .flatten();
    match json {
        Some(v) if v.get("costs").is_some() && v.get("validated").is_some() => {
            let p: FittedProfile =
                serde_json::from_str(text).map_err(|e| format!("{name}: {e}"))?;
            let mut s = current.clone();
            s.serving.software = sim_core::physics::ServingSoftware::Vllm;
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
            let options = traces::Options::default();
            let t = traces::read(text, &options).map_err(|e| format!("{name}: {e}"))?;
            let mut s = current.clone();
            t.apply_to(&mut s);
            let exact = s
                .validate()
                .map_err(|e| format!("{name}: {e}"))?
                .into_inner();
            let exact = sim_core::link::shareable(&exact).is_ok().then_some(exact);
            let mut distilled = t.distil(current, name);
            distilled.scenario.distilled_from =
                Some(sim_core::scenario::TraceRef::of(name, text, &t, &options));
            distilled
                .scenario
                .check()
                .map_err(|e| format!("{name}, distilled: {e}"))?;
            Ok(Opened::Trace {
                exact,
                distilled: Box::new(distilled),
                words: t.describe(name),
                trace: std::sync::Arc::new(t),
            })
        }
    }
}

/// The import panel.
pub fn import_view(
    scenario: RwSignal<Scenario>,
    problem: RwSignal<Option<String>>,
    measured: RwSignal<Option<MeasuredImport>>,
    held: RwSignal<Option<crate::trace_ref_view::Held>>,
) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let note = RwSignal::new(None::<String>);
    // The distilled scenario of the trace being replayed exactly, offered.
    let distil = RwSignal::new(None::<Scenario>);
    let fail = move |e: String| {
        note.set(None);
        refuse(
            problem,
            "import",
            format!("The import could not be opened: {e}"),
        );
    };
    let open = move |files: Vec<(String, String)>| {
        let current = scenario.get_untracked();
        match open_files(&files, &current) {
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
        }
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
                        if let Some(f) = files.iter().find(|f| f.size() > MAX_TRACE_BYTES) {
                            fail(format!(
                                "{} is {} bytes; the page reads at most {} (replay larger traces with tlab run --trace)",
                                f.name(),
                                f.size(),
                                MAX_TRACE_BYTES
                            ));
                            return;
                        }
                        wasm_bindgen_futures::spawn_local(async move {
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
                            open(read);
                        });
                    }
                />
            </div>
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

    fn traces(name: &str) -> (String, String) {
        let path = format!(
            "{}/../sim-core/tests/traces/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).expect("test data");
        (name.to_owned(), text)
    }

    #[test]
    fn a_measured_run_opens_as_its_strict_replay() {
        let current = sim_core::presets::chatbot_h100();
        let files = [
            traces("rtx4090-requests.jsonl"),
            traces("rtx4090-meta.json"),
            traces("rtx4090-timeseries.csv"),
        ];
        let Ok(Opened::Measured(m)) = open_files(&files, &current) else {
            panic!("a measured run");
        };
        assert_eq!(m.run.requests.len(), 300);
        assert_eq!(m.replay.serving.gpu, sim_core::physics::Gpu::Rtx4090);
        assert!(m.name.contains("rtx4090-timeseries.csv"), "{}", m.name);
        // The replay's comparison is the CLI's: same function, same numbers.
        let report = sim_core::run_scenario(m.replay.clone()).expect("runs");
        let c = m.run.compare(&report);
        assert_eq!(c.rows.len(), 3);
        assert!((c.rows[0].measured[0] - 65_456.6).abs() < 0.1);
        // meta.json alone names what is missing.
        let e = open_files(&[traces("rtx4090-meta.json")], &current).expect_err("no log");
        assert!(e.contains("requests.jsonl"), "{e}");
    }

    /// `n` Mooncake lines of scattered lengths (a link does not compress them).
    fn big_trace(n: u64) -> String {
        let mut x = 12_345_u64;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) % m
        };
        (0..n)
            .map(|i| {
                format!(
                    "{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": {}, \"hash_ids\": []}}\n",
                    i * 90 + next(90),
                    1 + next(8_000),
                    1 + next(900)
                )
            })
            .collect()
    }

    #[test]
    fn a_trace_replays_on_this_fleet_and_a_profile_times_it() {
        let current = sim_core::presets::chatbot_h100();
        // The request log alone is a trace: replayed on the scenario's fleet.
        let Ok(Opened::Trace {
            exact: Some(s),
            distilled,
            words,
            ..
        }) = open_files(&[traces("rtx4090-requests.jsonl")], &current)
        else {
            panic!("a trace replayed exactly");
        };
        assert_eq!(s.serving.gpu, current.serving.gpu);
        assert!(words.contains("300 requests"), "{words}");
        assert_eq!(distilled.scenario.serving, current.serving);
        // A trace too large for a link opens distilled only.
        let Ok(Opened::Trace {
            exact: None,
            distilled,
            ..
        }) = open_files(&[("big.jsonl".into(), big_trace(40_000))], &current)
        else {
            panic!("a trace too large to share exactly");
        };
        assert!(sim_core::link::shareable(&distilled.scenario).is_ok());
        // It names its trace: the file's hash, its count and summary.
        let r = distilled
            .scenario
            .distilled_from
            .as_ref()
            .expect("a reference");
        assert_eq!(
            r.sha256,
            sim_core::traces::sha256_hex(big_trace(40_000).as_bytes())
        );
        assert_eq!(
            (r.requests, r.name.as_str(), r.exact),
            (40_000, "big.jsonl", false)
        );
        // A fitted profile file: vLLM's constants refitted, named.
        let mut p = serde_json::json!({
            "name": "mine",
            "costs": sim_core::physics::VLLM_COSTS,
            "non_torch_bytes": 0.65e9,
            "sampler_logit_copies": 12.0,
            "validated": {
                "source": "a test", "gpu": "h100", "model": "llama-3.1-8b", "tp": 1,
                "tokens_per_s": 1e6, "error_pct": [1.0, 2.0, 3.0]
            }
        });
        let text = p.to_string();
        let Ok(Opened::Profile(s)) = open_files(&[("mine.json".into(), text)], &current) else {
            panic!("a profile");
        };
        assert_eq!(
            s.serving.fitted_profile.as_ref().map(|p| p.name.as_str()),
            Some("mine")
        );
        p["costs"]["compute_decode"] = 2.0.into();
        let e = open_files(&[("mine.json".into(), p.to_string())], &current).expect_err("range");
        assert!(
            e.contains("mine.json") && e.contains("compute_decode"),
            "{e}"
        );
        // A broken trace line is named by file, format and line.
        let e = open_files(
            &[(
                "t.jsonl".into(),
                "{\"timestamp\": 1, \"input_length\": 5}\n".into(),
            )],
            &current,
        )
        .expect_err("broken");
        assert!(e.starts_with("t.jsonl: "), "{e}");
        let two = [
            traces("rtx4090-requests.jsonl"),
            traces("rtx4090-timeseries.csv"),
        ];
        assert!(
            open_files(&two, &current)
                .expect_err("two")
                .contains("2 files chosen")
        );
    }
}
