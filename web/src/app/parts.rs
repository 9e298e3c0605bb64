//! The page's parts, one job each, wired together by [`crate::app::App`]:
//! the header (presets, share link), the banners (link problems, the
//! preset's story), the run's status, the compare-and-export toolbar, the
//! capacity cards and the charts.

use crate::charts::views::{ChartSpec, chart_canvas, report_chart};
use crate::io::downloads::{download, report_export};
use crate::work::runner::{RunState, Runner};
use lab_charts as charts;
use leptos::prelude::*;
use sim_core::compare::{CostCurves, LoadCheck};
use sim_core::plan::fleet_size::FleetSize;
use sim_core::presets::{self, Preset};
use sim_core::trace::TraceLog;
use sim_core::{Report, Scenario};
use wasm_bindgen::JsCast;

/// Which preset the scenario is or came from: (id, title, story, unchanged).
pub type Origin = Memo<Option<(&'static str, &'static str, &'static str, bool)>>;

/// The title, the preset menu and the share-link button.
pub fn header_view(
    scenario: RwSignal<Scenario>,
    origin: Origin,
    story: Memo<Option<crate::results::story_view::StoryAt>>,
    (input_problem, link_problem): (RwSignal<Option<String>>, RwSignal<Option<String>>),
) -> impl IntoView {
    let copied = RwSignal::new(false);
    let preset_explanation = move || origin.get().map(|(_, _, e, _)| e);
    // Edited from its preset, and not to a step of the preset's own story
    // (a story's step is still the preset).
    let edited = move || {
        origin.get().is_some_and(|(_, _, _, exact)| !exact)
            && story.with(|a| a.as_ref().is_none_or(|a| a.step.is_none()))
    };
    let all_presets = presets::all();
    view! {
        <a
            class="skip-link"
            href="#results"
            data-testid="skip-to-results"
            on:click=move |ev| {
                // Keep the #s=… fragment that holds the scenario: move focus instead.
                ev.prevent_default();
                if let Some(el) = document().get_element_by_id("results") {
                    el.scroll_into_view();
                    if let Ok(el) = el.dyn_into::<web_sys::HtmlElement>() {
                        let _ = el.focus();
                    }
                }
            }
        >
            "Skip to results"
        </a>
        <header class="top">
            <div class="title">
                <h1>"Throughput Lab"</h1>
                <p class="tagline">"How AI inference behaves under load: batching, GPUs, rate limits and cost."</p>
            </div>
            <div class="top-actions">
                <label for="preset">"Preset"</label>
                <select
                    id="preset"
                    data-testid="preset"
                    // The menu's value set as a property: an option's
                    // `selected` attribute stops counting once the user has
                    // chosen from the menu.
                    prop:value=move || match origin.get() {
                        Some((id, ..)) if !edited() => id.to_owned(),
                        _ => "custom".to_owned(),
                    }
                    on:change=move |ev| {
                        let id = event_target_value(&ev);
                        if let Some(p) = presets::all().into_iter().find(|p| p.id == id) {
                            input_problem.set(None);
                            link_problem.set(None);
                            scenario.set(p.scenario);
                        }
                    }
                >
                    {all_presets
                        .iter()
                        .map(|p: &Preset| {
                            let id = p.id;
                            view! {
                                <option value=id selected=move || origin.with(|o| o.is_some_and(|(of, ..)| of == id)) && !edited()>
                                    {p.title}
                                </option>
                            }
                        })
                        .collect_view()}
                    <option value="custom" data-testid="preset-custom" disabled=true selected=move || preset_explanation().is_none() || edited()>
                        {move || match origin.get() {
                            Some((_, title, _, false)) => format!("Custom (from {title})"),
                            _ => "Custom scenario".to_owned(),
                        }}
                    </option>
                </select>
                <button
                    data-testid="copy-link"
                    on:click=move |_| {
                        crate::io::url_state::flush_fragment();
                        let href = window().location().href().unwrap_or_default();
                        let clipboard = window().navigator().clipboard();
                        let promise = clipboard.write_text(&href);
                        wasm_bindgen_futures::spawn_local(async move {
                            let ok = wasm_bindgen_futures::JsFuture::from(promise).await.is_ok();
                            copied.set(ok);
                            set_timeout(move || copied.set(false), std::time::Duration::from_secs(2));
                        });
                    }
                >
                    {move || if copied.get() { "Link copied" } else { "Copy link" }}
                </button>
            </div>
        </header>
    }
}

/// A link's problem, an old link's profile, and the preset's story.
pub fn banners_view(
    scenario: RwSignal<Scenario>,
    origin: Origin,
    story: Memo<Option<crate::results::story_view::StoryAt>>,
    link_problem: RwSignal<Option<String>>,
    legacy_link: RwSignal<bool>,
) -> impl IntoView {
    let preset_explanation = move || origin.get().map(|(_, _, e, _)| e);
    // Changed since the preset, and not by following its story.
    let edited = move || {
        origin.get().is_some_and(|(_, _, _, exact)| !exact)
            && story.with(|s| s.as_ref().is_none_or(|s| s.step.is_none()))
    };
    let on_story = move || {
        story.with(|s| {
            s.as_ref()
                .and_then(|s| s.step.filter(|&k| k > 0).map(|k| (k, s.steps.len())))
        })
    };
    view! {
        <Show when=move || link_problem.get().is_some()>
            <p class="banner error" role="alert" data-testid="link-error">
                {move || link_problem.get().unwrap_or_default()}
            </p>
        </Show>
        <Show when=move || legacy_link.get()>
            <p class="banner info" data-testid="legacy-link">
                "This link was made before Throughput Lab modelled serving software: its numbers use TensorRT-LLM's 2023 constants, exactly as when it was shared. "
                <button
                    data-testid="rerun-vllm"
                    on:click=move |_| {
                        legacy_link.set(false);
                        // Through the catalogue, as every edit goes.
                        scenario.update(|s| {
                            let _ = sim_core::params::apply(s, "software", "vllm");
                        });
                    }
                >
                    "Re-run on vLLM's calibration"
                </button>
            </p>
        </Show>
        <Show when=move || preset_explanation().is_some()>
            <p class="banner info" class:stale=edited data-testid="preset-explanation" data-edited=move || edited().to_string()>
                <Show when=edited>
                    <strong data-testid="preset-edited">
                        {move || origin.get().map(|(_, title, _, _)| format!("The story of the preset \u{201c}{title}\u{201d}, for its own settings: you have changed them since, so the numbers below are yours, not the story's. ")).unwrap_or_default()}
                    </strong>
                </Show>
                <Show when=move || on_story().is_some()>
                    <strong data-testid="preset-on-story">
                        {move || on_story().map(|(k, n)| format!("At step {} of {n} of the story below. ", k + 1)).unwrap_or_default()}
                    </strong>
                </Show>
                {move || preset_explanation().unwrap_or_default()}
            </p>
        </Show>
    }
}

/// The run's progress or timing, which calibration timed it, the overload
/// banner and the run's warnings.
pub fn status_view(
    scenario: RwSignal<Scenario>,
    runner: Runner,
    load: RwSignal<Option<LoadCheck>>,
) -> impl IntoView {
    let (report, state, slices) = (runner.report, runner.state, runner.slices);
    let in_worker = runner.in_worker;
    view! {
                <div class="status" aria-live="polite">
                    {move || match state.get() {
                        RunState::Running => {
                            let (preview, progress) = (runner.preview, runner.progress);
                            view! {
                                <progress data-testid="progress" max="100" value=move || format!("{:.0}", progress.get() * 100.0)></progress>
                                <span>"Simulating…"</span>
                                <Show when=move || preview.with(|p| p.is_some())>
                                    <span class="preview-note" data-testid="run-preview">
                                        {move || preview.get().map(|(p, full)| format!(
                                            "The numbers shown are a preview: the first {} of {} simulated, while the full run finishes.",
                                            crate::format::fmt_ms(Some(p * 1e3)),
                                            crate::format::fmt_ms(Some(full * 1e3)),
                                        )).unwrap_or_default()}
                                    </span>
                                </Show>
                            }
                                .into_any()
                        }
                        RunState::Done(ms) => {
                            view! {
                                <span
                                    data-testid="run-time"
                                    data-value=format!("{ms:.1}")
                                    data-slices=move || slices.get().slices.to_string()
                                    data-max-slice-events=move || slices.get().max_events.to_string()
                                    data-worker=move || in_worker.get().to_string()
                                >
                                    {move || {
                                        report
                                            .with(|r| {
                                                r.as_ref()
                                                    .map(|r| {
                                                        format!(
                                                            "{} requests over {} s simulated, computed in {}{}",
                                                            sim_core::format::thousands(r.requests.arrived),
                                                            sim_core::format::thousands(r.sim_time_s.round() as u64),
                                                            crate::format::fmt_ms(Some(ms)),
                                                            if in_worker.get() { " off the page's thread" } else { "" },
                                                        )
                                                    })
                                            })
                                            .unwrap_or_default()
                                    }}
                                </span>
                            }
                                .into_any()
                        }
                    }}
                </div>
                <p class="calibration-note" data-testid="calibration-note">
                    {move || {
                        scenario.with(|s| {
                            if s.api.is_some() && !s.uses_fleet() {
                                return "Hosted API tiers: latencies and prices as the scenario states them.".to_owned();
                            }
                            let p = s
                                .serving
                                .profile_statement(s.offered_tokens_per_s_per_replica());
                            format!("GPU step times: {} profile, {}. {}", p.name, p.source, p.trust)
                        })
                    }}
                </p>
                <Show when=move || load.with(|l| l.is_some_and(|l| l.overloaded))>
                    <p class="banner warn" role="status" data-testid="overload">
                        {move || load.get().map(|l| format!(
                            "Overloaded: the traffic asks for about {} output tokens/s; the fleet makes about {} when saturated ({} × {:.1} tasks/s per replica, measured). The queue grows for as long as this load lasts; it needs {} replica{}.",
                            sim_core::format::rounded(l.demand_tokens_per_s),
                            sim_core::format::rounded(l.capacity_tokens_per_s),
                            scenario.with_untracked(|s| s.serving.replicas),
                            l.tasks_per_s_per_replica,
                            l.replicas_needed,
                            if l.replicas_needed == 1 { "" } else { "s" },
                        )).unwrap_or_default()}
                    </p>
                </Show>
                <Show when=move || report.with(|r| r.as_ref().is_some_and(|r| !r.warnings.is_empty()))>
                    <p class="banner warn" data-testid="warnings">
                        {move || report.with(|r| r.as_ref().map(|r| r.warnings.join(" ")).unwrap_or_default())}
                    </p>
                </Show>
    }
}

/// What was pinned, as a person tells it: the scenario's name and, if it was
/// edited from a preset, what differs ("Chatbot on one H100, with Arrival
/// rate 40 req/s; Replicas 2 servers").
pub fn pinned_label(s: &Scenario) -> String {
    const SHOWN: usize = 4;
    let all = presets::all();
    let Some(p) = presets::of(&all, s) else {
        return s.name.clone();
    };
    let diff = sim_core::params::differences(&p.scenario, s);
    match diff.len() {
        0 => s.name.clone(),
        n if n <= SHOWN => format!("{}, with {}", s.name, diff.join("; ")),
        n => format!(
            "{}, with {} and {} more changes",
            s.name,
            diff[..SHOWN].join("; "),
            n - SHOWN
        ),
    }
}

/// Pin as A, clear it, and the exports.
pub fn toolbar_view(
    scenario: RwSignal<Scenario>,
    report: RwSignal<Option<Report>>,
    pinned: RwSignal<Option<(Scenario, Report)>>,
) -> impl IntoView {
    view! {
                <div class="toolbar" role="toolbar" aria-label="Compare and export">
                    <button
                        data-testid="pin"
                        title="Keep these results as A; change the scenario and compare B against them"
                        on:click=move |_| {
                            if let Some(r) = report.get_untracked() {
                                pinned.set(Some((scenario.get_untracked(), r)));
                            }
                        }
                    >
                        "Pin as A"
                    </button>
                    <Show when=move || pinned.with(|p| p.is_some())>
                        <button class="secondary" data-testid="unpin" on:click=move |_| pinned.set(None)>
                            "Clear A"
                        </button>
                        <span class="pinned-note" data-testid="pinned-note">
                            {move || pinned.with(|p| p.as_ref().map(|(s, _)| format!("Comparing with A: {}", pinned_label(s)))).unwrap_or_default()}
                        </span>
                    </Show>
                    <span class="spacer"></span>
                    <Show when=move || pinned.with(|p| p.is_some())>
                        <button
                            class="secondary"
                            data-testid="export-compare"
                            title="Every headline number of A and B, their difference and the relative change, as CSV"
                            on:click=move |_| {
                                let csv = pinned.with_untracked(|p| {
                                    report.with_untracked(|b| match (p, b) {
                                        (Some((_, a)), Some(b)) => Some(crate::io::export::compare_csv(a, b)),
                                        _ => None,
                                    })
                                });
                                if let Some(csv) = csv {
                                    download("throughput-lab-compare.csv", "text/csv", &csv);
                                }
                            }
                        >
                            "Compare CSV"
                        </button>
                    </Show>
                    {report_export("export-summary", "Summary CSV", "throughput-lab-summary.csv", crate::io::export::summary_csv, report)}
                    <span title=crate::io::export::SERIES_NOTE data-testid="export-series-note">
                        {report_export("export-series", "Time series CSV", "throughput-lab-series.csv", crate::io::export::series_csv, report)}
                    </span>
                    <button
                        class="secondary"
                        data-testid="export-scenario"
                        title="The scenario as JSON: run it with `tlab run scenario.json`"
                        on:click=move |_| {
                            let json = serde_json::to_string_pretty(&scenario.get_untracked()).unwrap_or_default();
                            download("scenario.json", "application/json", &json);
                        }
                    >
                        "Scenario JSON"
                    </button>
                </div>
    }
}

/// One replica's measured capacity and the replicas the traffic needs.
pub fn capacity_cards(
    scenario: RwSignal<Scenario>,
    load: RwSignal<Option<LoadCheck>>,
    fleet: Signal<Option<FleetSize>>,
) -> impl IntoView {
    let targets = move || {
        scenario.with_untracked(|s| {
            format!(
                "p99 first token ≤ {}, per token ≤ {}, goodput ≥ {:.0} %",
                sim_core::format::duration_ms(Some(s.slo.ttft_ms)),
                sim_core::format::duration_ms(Some(s.slo.tpot_ms)),
                100.0 * sim_core::plan::PlanSlo::MIN_GOODPUT
            )
        })
    };
    view! {
                    <Show when=move || load.with(|l| l.is_some())>
                        <div class="card" title="One replica run saturated (users with no think time) for 60 simulated seconds: what it sustains, in tasks and output tokens per second.">
                            <span class="card-label">"Capacity per replica"</span>
                            <span class="card-value" data-testid="card-capacity" data-value=move || load.get().map(|l| l.tasks_per_s_per_replica.to_string()).unwrap_or_default()>
                                {move || load.get().map(|l| format!("{:.1} tasks/s", l.tasks_per_s_per_replica)).unwrap_or_default()}
                            </span>
                            <span class="card-note neutral" data-testid="card-capacity-note">
                                {move || load.get().map(|l| {
                                    format!("{} output tok/s", sim_core::format::rounded(l.tokens_per_s_per_replica))
                                }).unwrap_or_default()}
                            </span>
                        </div>
                        <div class="card" title="Replicas whose capacity covers this traffic at its peak with every replica saturated (no headroom for bursts, no target on latency): its peak tasks/s ÷ one replica's capacity, rounded up.">
                            <span class="card-label">"Replicas its throughput needs"</span>
                            <span class="card-value" data-testid="card-replicas-needed" data-value=move || load.get().map(|l| l.replicas_needed.to_string()).unwrap_or_default()>
                                {move || load.get().map(|l| l.replicas_needed.to_string()).unwrap_or_default()}
                            </span>
                            <span class="card-note neutral">"saturated, no latency target"</span>
                        </div>
                        <div class="card" title="The fewest replicas of this fleet whose run of this traffic meets the targets, as the planner judges a setup: each count a run of the whole scenario (the run on screen decides its own count).">
                            <span class="card-label">"Replicas to meet the targets"</span>
                            <span class="card-value" data-testid="card-replicas-for-targets" data-value=move || fleet.get().filter(|f| f.met).map(|f| f.replicas.to_string()).unwrap_or_default()>
                                {move || match fleet.get() {
                                    None => "measuring…".to_owned(),
                                    Some(f) if f.met => f.replicas.to_string(),
                                    Some(f) => format!("more than {}", f.replicas),
                                }}
                            </span>
                            <span class="card-note neutral" data-testid="card-replicas-for-targets-note">{targets}</span>
                        </div>
                    </Show>
    }
}

/// Every report chart, the GPU timeline and the cost curves.
pub fn charts_view(
    shown: Memo<Option<Report>>,
    pinned_report: Signal<Option<Report>>,
    trace: RwSignal<Option<(TraceLog, f64)>>,
    costs: RwSignal<Option<CostCurves>>,
) -> impl IntoView {
    view! {
                <div class="charts">
                    {charts::REPORT_CHARTS
                        .into_iter()
                        .map(|c| report_chart(c, shown, pinned_report))
                        .collect_view()}
                    {chart_canvas(
                        ChartSpec {
                            id: "chart-timeline",
                            size: (1200, 320),
                            caption: Some("The first seconds on the GPU. Static batching runs one batch to the end while new requests wait; continuous batching lets them join between passes. Switch the batching policy to compare."),
                            wide: true,
                        },
                        move || trace.with(|t| t.is_some()),
                        move || trace.track(),
                        move || trace.with_untracked(|t| t.as_ref().map(|(t, w)| charts::timeline::model(t, *w))),
                    )}
                    {chart_canvas(
                        ChartSpec {
                            caption: Some("What a million generated tokens cost on this fleet as the load on it grows: the fleet costs the same per hour at every load, so the cost per token falls until the fleet is saturated. The purple line is today's load."),
                            ..ChartSpec::new("chart-cost-mtok")
                        },
                        move || costs.with(|c| c.as_ref().is_some_and(|c| !c.per_mtok.is_empty())),
                        move || costs.track(),
                        move || costs.with_untracked(|c| c.as_ref().map(|c| charts::cost::per_mtok_model(&c.per_mtok, Some(c.today_per_s)))),
                    )}
                    {chart_canvas(
                        ChartSpec {
                            caption: Some("A month's bill as the load grows: the API tier's grows with every request, the self-hosted fleet's in steps of whole replicas. Where the lines cross, self-hosting starts to pay; the purple line is today's load."),
                            ..ChartSpec::new("chart-cost-month")
                        },
                        move || costs.with(|c| c.as_ref().is_some_and(|c| c.comparison.is_some())),
                        move || costs.track(),
                        move || costs.with_untracked(|c| {
                            c.as_ref().and_then(|c| c.comparison.as_ref().map(|m| charts::cost::monthly_model(m, Some(c.today_per_s))))
                        }),
                    )}
                </div>
    }
}
