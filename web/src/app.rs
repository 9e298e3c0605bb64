//! The page: presets and controls on the left; summary cards and live charts on
//! the right; the scenario always mirrored in the URL.

use crate::controls::{ChoiceControl, Control, NumberControl, groups};
use crate::runner::{RunState, Runner};
use lab_charts::{self as charts, ChartFn};
use leptos::prelude::*;
use plotters::prelude::IntoDrawingArea;
use plotters_canvas::CanvasBackend;
use sim_core::link;
use sim_core::presets::{self, Preset};
use sim_core::{Report, Scenario};

/// Format a latency: ms below 10 s, seconds above.
pub fn fmt_ms(v: Option<f64>) -> String {
    match v {
        None => "–".to_owned(),
        Some(x) if x >= 10_000.0 => format!("{:.1} s", x / 1000.0),
        Some(x) if x >= 100.0 => format!("{x:.0} ms"),
        Some(x) => format!("{x:.1} ms"),
    }
}

fn fmt_usd(v: f64) -> String {
    if v >= 10_000.0 {
        format!("${:.0}k", v / 1000.0)
    } else if v >= 100.0 {
        format!("${v:.0}")
    } else {
        format!("${v:.2}")
    }
}

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

fn current_fragment() -> String {
    window().location().hash().unwrap_or_default()
}

/// Offer `data` as a file download.
fn download(name: &str, mime: &str, data: &str) {
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(data));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    download_url(name, &url);
    let _ = web_sys::Url::revoke_object_url(&url);
}

fn download_url(name: &str, url: &str) {
    use wasm_bindgen::JsCast;
    let Ok(el) = document().create_element("a") else {
        return;
    };
    let Ok(a) = el.dyn_into::<web_sys::HtmlAnchorElement>() else {
        return;
    };
    a.set_href(url);
    a.set_download(name);
    a.click();
}

/// Cost curves computed after a run: self-hosted $/Mtok vs load, and API vs
/// self-hosted monthly cost when the scenario has an API tier.
#[derive(Clone, Debug, PartialEq)]
pub struct CostCurves {
    /// (load in tasks/s, $ per million output tokens).
    pub per_mtok: Vec<(f64, f64)>,
    /// API vs self-hosted.
    pub comparison: Option<sim_core::compare::CostComparison>,
}

/// The cost curves of a scenario, given the tasks/s one saturated replica
/// sustains (see `jobs::CostJobs`).
pub fn cost_curves(s: &Scenario, capacity: f64) -> Option<CostCurves> {
    let fleet = capacity * f64::from(s.serving.replicas);
    let (out_per_task, _) = s.mean_tokens();
    let usd_per_hour =
        f64::from(s.serving.replicas * s.serving.gpus_per_replica) * s.usd_per_gpu_hour();
    let loads: Vec<f64> = (1..=30)
        .map(|i| fleet * 1.5 * f64::from(i) / 30.0)
        .collect();
    let per_mtok = loads
        .iter()
        .filter(|l| **l > 0.0)
        .map(|&l| {
            (
                l,
                usd_per_hour / (l.min(fleet) * out_per_task * 3600.0) * 1e6,
            )
        })
        .collect();
    let comparison = s.api.as_ref().and_then(|a| {
        let tier = a
            .tiers
            .iter()
            .position(|t| t.name == a.default_backend)
            .unwrap_or(0);
        let max = (fleet * 3.0).max(1e-3);
        let loads: Vec<f64> = (1..=40).map(|i| max * f64::from(i) / 40.0).collect();
        sim_core::compare::compare_with_capacity(s, tier, &loads, capacity).ok()
    });
    Some(CostCurves {
        per_mtok,
        comparison,
    })
}

fn write_fragment(s: &Scenario) {
    let url = link::encode_fragment(s);
    if let Ok(history) = window().history() {
        // replaceState: the address follows the scenario without a reload or a
        // history entry per slider step.
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
    }
}

/// One summary card: label, test id, and the text and raw value to show.
struct Card {
    label: &'static str,
    id: &'static str,
    help: &'static str,
    value: fn(&Report) -> Option<(String, f64)>,
}

fn cards() -> Vec<Card> {
    vec![
        Card {
            label: "Time to first token, p50",
            id: "ttft-p50",
            help: "TTFT: from sending a request to the first token of the answer; half of the requests are faster.",
            value: |r| r.overall.ttft.p50_ms.map(|v| (fmt_ms(Some(v)), v)),
        },
        Card {
            label: "Time to first token, p99",
            id: "ttft-p99",
            help: "The TTFT that 99 % of requests beat: what your unluckiest users see.",
            value: |r| r.overall.ttft.p99_ms.map(|v| (fmt_ms(Some(v)), v)),
        },
        Card {
            label: "Time per output token, p50",
            id: "tpot-p50",
            help: "TPOT: the average gap between tokens after the first; it sets how fast the answer streams.",
            value: |r| r.overall.tpot.p50_ms.map(|v| (fmt_ms(Some(v)), v)),
        },
        Card {
            label: "Time per output token, p99",
            id: "tpot-p99",
            help: "The TPOT that 99 % of requests beat: the slowest streams your users see.",
            value: |r| r.overall.tpot.p99_ms.map(|v| (fmt_ms(Some(v)), v)),
        },
        Card {
            label: "End-to-end, p50",
            id: "e2e-p50",
            help: "From sending a request to its last token, including any queueing and retries; half of the requests are faster.",
            value: |r| r.overall.e2e.p50_ms.map(|v| (fmt_ms(Some(v)), v)),
        },
        Card {
            label: "End-to-end, p99",
            id: "e2e-p99",
            help: "From sending a request to its last token, including any queueing and retries.",
            value: |r| r.overall.e2e.p99_ms.map(|v| (fmt_ms(Some(v)), v)),
        },
        Card {
            label: "Output throughput",
            id: "throughput",
            help: "Tokens generated per second across all requests: what the system as a whole delivers.",
            value: |r| {
                Some((
                    format!("{:.0} tok/s", r.throughput.output_tokens_per_s),
                    r.throughput.output_tokens_per_s,
                ))
            },
        },
        Card {
            label: "Goodput",
            id: "goodput",
            help: "The share of requests that completed within both targets (TTFT and TPOT); errors count as misses.",
            value: |r| {
                r.throughput
                    .goodput_fraction
                    .map(|g| (format!("{:.1} %", g * 100.0), g * 100.0))
            },
        },
        Card {
            label: "Cost per million output tokens",
            id: "usd-per-mtok",
            help: "What the run cost (servers by the hour plus API spend) divided by the tokens it generated.",
            value: |r| r.cost.usd_per_mtok_output.map(|v| (fmt_usd(v), v)),
        },
        Card {
            label: "Cost per month",
            id: "usd-per-month",
            help: "Servers for 730 hours at this size, plus API spend at this load for a month.",
            value: |r| Some((fmt_usd(r.cost.usd_per_month), r.cost.usd_per_month)),
        },
        Card {
            label: "429 responses",
            id: "throttled",
            help: "429: the provider refusing a request because the account is over its rate limit.",
            value: |r| {
                r.api
                    .as_ref()
                    .map(|a| (format!("{}", a.throttled_429), a.throttled_429 as f64))
            },
        },
        Card {
            label: "Failed requests",
            id: "failed",
            help: "Requests that reached the user as an error, or that the client's queue turned away.",
            value: |r| {
                let n = r.requests.failed + r.requests.rejected;
                let pct = 100.0 * n as f64 / r.requests.arrived.max(1) as f64;
                Some((format!("{n} ({pct:.1} %)"), pct))
            },
        },
    ]
}

/// Apply a change only if the result is a valid scenario; otherwise say why.
fn apply(
    scenario: RwSignal<Scenario>,
    problem: RwSignal<Option<String>>,
    change: impl FnOnce(&mut Scenario),
) {
    let mut s = scenario.get_untracked();
    change(&mut s);
    match s.check() {
        Ok(()) => {
            problem.set(None);
            scenario.set(s);
        }
        Err(e) => problem.set(Some(e.problems.join("; "))),
    }
}

/// The whole application.
#[component]
pub fn App() -> impl IntoView {
    let (initial, link_error) = scenario_from_fragment(&current_fragment());
    let scenario = RwSignal::new(initial);
    let link_problem = RwSignal::new(link_error);
    let input_problem = RwSignal::new(None::<String>);
    let copied = RwSignal::new(false);
    let runner = Runner::new();
    let pinned = RwSignal::new(None::<(Scenario, Report)>);
    let costs = RwSignal::new(None::<CostCurves>);
    let trace = RwSignal::new(None::<(sim_core::engine::TraceLog, f64)>);
    let playhead = RwSignal::new(None::<f64>);
    let playing = RwSignal::new(false);
    let speed = RwSignal::new(60.0_f64);

    // Every change of scenario: mirror it in the URL and re-run (coalesced to
    // one run per animation frame by the runner).
    {
        let runner = runner.clone();
        Effect::new(move |_| {
            let s = scenario.get();
            write_fragment(&s);
            runner.submit(s);
        });
    }

    let all_presets = presets::all();
    // (scenario name, explanation), built once rather than per scenario change.
    let explanations = StoredValue::new(
        all_presets
            .iter()
            .map(|p| (p.scenario.name.clone(), p.explanation))
            .collect::<Vec<_>>(),
    );
    let preset_explanation = move || {
        scenario.with(|s| {
            explanations.with_value(|all| {
                all.iter()
                    .find(|(name, _)| *name == s.name)
                    .map(|(_, e)| *e)
            })
        })
    };

    let report = runner.report;
    let state = runner.state;

    let cost_job: std::rc::Rc<std::cell::RefCell<Option<std::rc::Rc<std::cell::RefCell<bool>>>>> =
        Default::default();
    let cost_progress = RwSignal::new(None::<f64>);
    // After each finished run, compute the cost curves and the GPU timeline on
    // later frames, so the numbers show first.
    Effect::new(move |_| {
        if report.with(|r| r.is_some()) {
            let s = scenario.get_untracked();
            playhead.set(None);
            playing.set(false);
            if let Some(alive) = cost_job.borrow_mut().take() {
                *alive.borrow_mut() = false;
            }
            let job = cost_job.clone();
            request_animation_frame(move || {
                trace.set(first_seconds(&s));
                let handle =
                    crate::jobs::run(crate::jobs::CostJobs::new(&s), cost_progress, move |j| {
                        costs.set(j.capacity().and_then(|c| cost_curves(j.scenario(), c)))
                    });
                *job.borrow_mut() = Some(handle);
            });
        }
    });
    // What the charts show: the whole run, or the run up to the playhead.
    let shown = Memo::new(move |_| {
        report.with(|r| {
            r.as_ref().map(|r| match playhead.get() {
                Some(t) => charts::until(r, t),
                None => r.clone(),
            })
        })
    });
    let pinned_report = Signal::derive(move || pinned.with(|p| p.as_ref().map(|(_, r)| r.clone())));

    view! {
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
                            let name = p.scenario.name.clone();
                            view! {
                                <option value=id selected=move || scenario.with(|s| s.name == name)>
                                    {p.title}
                                </option>
                            }
                        })
                        .collect_view()}
                    <option value="custom" disabled=true selected=move || preset_explanation().is_none()>
                        "Custom scenario"
                    </option>
                </select>
                <button
                    data-testid="copy-link"
                    on:click=move |_| {
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
        <Show when=move || link_problem.get().is_some()>
            <p class="banner error" role="alert" data-testid="link-error">
                {move || link_problem.get().unwrap_or_default()}
            </p>
        </Show>
        <Show when=move || preset_explanation().is_some()>
            <p class="banner info" data-testid="preset-explanation">
                {move || preset_explanation().unwrap_or_default()}
            </p>
        </Show>
        <main class="layout">
            <section class="controls" aria-label="Scenario controls">
                <Show when=move || input_problem.get().is_some()>
                    <p class="banner error" role="alert" data-testid="input-error">
                        {move || input_problem.get().unwrap_or_default()}
                    </p>
                </Show>
                {groups().into_iter().map(|g| group_view(g, scenario, input_problem)).collect_view()}
            </section>
            <section class="results" aria-label="Results">
                <div class="status" aria-live="polite">
                    {move || match state.get() {
                        RunState::Running(p) => {
                            view! {
                                <progress data-testid="progress" max="100" value=format!("{:.0}", p * 100.0)></progress>
                                <span>"Simulating…"</span>
                            }
                                .into_any()
                        }
                        RunState::Done(ms) => {
                            view! {
                                <span data-testid="run-time" data-value=format!("{ms:.1}")>
                                    {move || {
                                        report
                                            .with(|r| {
                                                r.as_ref()
                                                    .map(|r| {
                                                        format!(
                                                            "{} requests over {:.0} s simulated, computed in {:.0} ms",
                                                            r.requests.arrived,
                                                            r.sim_time_s,
                                                            ms,
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
                <Show when=move || report.with(|r| r.as_ref().is_some_and(|r| !r.warnings.is_empty()))>
                    <p class="banner warn" data-testid="warnings">
                        {move || report.with(|r| r.as_ref().map(|r| r.warnings.join(" ")).unwrap_or_default())}
                    </p>
                </Show>
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
                            {move || pinned.with(|p| p.as_ref().map(|(s, _)| format!("Comparing with A: {}", s.name))).unwrap_or_default()}
                        </span>
                    </Show>
                    <span class="spacer"></span>
                    {report_export("export-summary", "Summary CSV", "throughput-lab-summary.csv", crate::export::summary_csv, report)}
                    {report_export("export-series", "Time series CSV", "throughput-lab-series.csv", crate::export::series_csv, report)}
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
                <div class="cards">
                    {cards()
                        .into_iter()
                        .map(|c| {
                            let value = c.value;
                            let id = c.id;
                            let shown = move || report.with(|r| r.as_ref().and_then(value));
                            let delta = move || {
                                let b = shown()?.1;
                                let a = pinned.with(|p| p.as_ref().and_then(|(_, r)| value(r)))?.1;
                                Some(if a == b {
                                    "same as A".to_owned()
                                } else if a.abs() > 1e-12 {
                                    format!("{:+.1} % vs A", (b - a) / a.abs() * 100.0)
                                } else {
                                    format!("{:+.3} vs A", b - a)
                                })
                            };
                            view! {
                                <Show when=move || shown().is_some()>
                                    <div class="card" title=c.help>
                                        <span class="card-label">{c.label}</span>
                                        <span
                                            class="card-value"
                                            data-testid=format!("card-{}", c.id)
                                            data-value=move || shown().map(|(_, v)| v.to_string()).unwrap_or_default()
                                        >
                                            {move || shown().map(|(t, _)| t).unwrap_or_default()}
                                        </span>
                                        <Show when=move || delta().is_some()>
                                            <span class="delta" data-testid=format!("card-{id}-delta")>
                                                {move || delta().unwrap_or_default()}
                                            </span>
                                        </Show>
                                    </div>
                                </Show>
                            }
                        })
                        .collect_view()}
                </div>
                <div class="playback" role="group" aria-label="Playback">
                    <button
                        data-testid="play"
                        on:click=move |_| {
                            if playing.get_untracked() {
                                playing.set(false);
                                return;
                            }
                            let end = report.with_untracked(|r| r.as_ref().map_or(0.0, |r| r.sim_time_s));
                            if playhead.get_untracked().is_none_or(|t| t >= end) {
                                playhead.set(Some(0.0));
                            }
                            playing.set(true);
                            play_frame(playhead, playing, speed, end, None);
                        }
                    >
                        {move || if playing.get() { "Pause" } else { "Play" }}
                    </button>
                    <label for="speed">"Speed"</label>
                    <select
                        id="speed"
                        data-testid="speed"
                        on:change=move |ev| {
                            if let Ok(v) = event_target_value(&ev).parse() {
                                speed.set(v);
                            }
                        }
                    >
                        <option value="10">"10× (10 s per second)"</option>
                        <option value="60" selected=true>"60× (a minute per second)"</option>
                        <option value="600">"600× (10 minutes per second)"</option>
                    </select>
                    <label for="playhead">"Time"</label>
                    <input
                        type="range"
                        id="playhead"
                        data-testid="playhead"
                        min="0"
                        step="any"
                        max=move || report.with(|r| r.as_ref().map_or(0.0, |r| r.sim_time_s)).to_string()
                        aria-valuetext=move || format!("{:.0} s", playhead.get().unwrap_or(0.0))
                        prop:value=move || {
                            playhead
                                .get()
                                .unwrap_or_else(|| report.with(|r| r.as_ref().map_or(0.0, |r| r.sim_time_s)))
                                .to_string()
                        }
                        on:input=move |ev| {
                            if let Ok(t) = event_target_value(&ev).parse::<f64>() {
                                playing.set(false);
                                playhead.set(Some(t));
                            }
                        }
                    />
                    <span class="unit" data-testid="playhead-value">
                        {move || playhead.get().map(|t| format!("{t:.0} s")).unwrap_or_else(|| "all".to_owned())}
                    </span>
                </div>
                <div class="charts">
                    {chart_canvas("chart-queue", charts::queue, shown.into(), pinned_report, |_| true)}
                    {chart_canvas("chart-latency", charts::latency, shown.into(), pinned_report, |_| true)}
                    {chart_canvas("chart-throughput", charts::throughput, shown.into(), pinned_report, |_| true)}
                    {chart_canvas("chart-arrivals", charts::arrivals, shown.into(), pinned_report, |_| true)}
                    {chart_canvas("chart-batch", charts::batch, shown.into(), pinned_report, |r| r.cost.gpus > 0)}
                    {chart_canvas("chart-api", charts::api, shown.into(), pinned_report, |r| r.api.is_some())}
                    {chart_canvas("chart-distribution", charts::distribution, shown.into(), pinned_report, |_| true)}
                    {timeline_canvas(trace)}
                    {cost_canvas("chart-cost-mtok", costs, |root, c| charts::usd_per_mtok_curve(root, &c.per_mtok), |c| !c.per_mtok.is_empty())}
                    {cost_canvas(
                        "chart-cost-month",
                        costs,
                        |root, c| match &c.comparison {
                            Some(cmp) => charts::cost_curve(root, cmp),
                            None => Ok(()),
                        },
                        |c| c.comparison.is_some(),
                    )}
                </div>
                <crate::planner::Planner scenario=scenario />
            </section>
        </main>
    }
}

fn group_view(
    g: crate::controls::Group,
    scenario: RwSignal<Scenario>,
    problem: RwSignal<Option<String>>,
) -> impl IntoView {
    let per_class = g.per_class;
    let controls = g.controls;
    let title = g.title;
    let for_visible = controls.clone();
    let visible = move || {
        scenario.with(|s| {
            let n = if per_class {
                s.workload.classes.len()
            } else {
                1
            };
            (0..n).any(|i| for_visible.iter().any(|c| applies(c, s, i)))
        })
    };
    let body = move || {
        let n = if per_class {
            scenario.with(|s| s.workload.classes.len())
        } else {
            1
        };
        (0..n)
            .map(|i| {
                let heading =
                    per_class.then(|| scenario.with(|s| s.workload.classes[i].name.clone()));
                let items = controls
                    .iter()
                    .map(|c| render_control(*c, i, scenario, problem))
                    .collect_view();
                view! {
                    {heading.map(|h| view! { <h3 class="class-name">{h}</h3> })}
                    {items}
                }
            })
            .collect_view()
    };
    view! {
        <Show when=visible.clone()>
            <details class="group" open=true data-testid=format!("group-{}", title.to_lowercase().replace(' ', "-"))>
                <summary>{title}</summary>
                {body.clone()}
            </details>
        </Show>
    }
}

fn applies(c: &Control, s: &Scenario, i: usize) -> bool {
    match c {
        Control::Number(n) => (n.get)(s, i).is_some(),
        Control::Choice(ch) => (ch.get)(s, i).is_some(),
    }
}

fn render_control(
    c: Control,
    i: usize,
    scenario: RwSignal<Scenario>,
    problem: RwSignal<Option<String>>,
) -> AnyView {
    match c {
        Control::Number(n) => number_control(n, i, scenario, problem),
        Control::Choice(ch) => choice_control(ch, i, scenario, problem),
    }
}

fn number_control(
    c: NumberControl,
    i: usize,
    scenario: RwSignal<Scenario>,
    problem: RwSignal<Option<String>>,
) -> AnyView {
    let dom_id = if i == 0 {
        c.id.to_owned()
    } else {
        format!("{}-{i}", c.id)
    };
    let help_id = format!("{dom_id}-help");
    let value = move || scenario.with(|s| (c.get)(s, i));
    let set = move |v: f64| apply(scenario, problem, |s: &mut Scenario| (c.set)(s, i, v));
    view! {
        <Show when=move || value().is_some()>
            <div class="control">
                <label for=dom_id.clone()>
                    {c.label}
                    <span class="help" tabindex="0" role="img" aria-label=format!("What is {}?", c.label) title=c.help>
                        "?"
                    </span>
                </label>
                <p class="help-text" id=help_id.clone()>{c.help}</p>
                <div class="slider-row">
                    <input
                        type="range"
                        id=dom_id.clone()
                        data-testid=dom_id.clone()
                        min="0"
                        max=NumberControl::SLIDER_STEPS.to_string()
                        step="1"
                        aria-describedby=help_id.clone()
                        aria-valuetext=move || value().map(|v| format!("{} {}", c.show(v), c.unit)).unwrap_or_default()
                        prop:value=move || value().map(|v| c.to_slider(v).to_string()).unwrap_or_default()
                        on:input=move |ev| {
                            if let (Ok(pos), Some(cur)) = (event_target_value(&ev).parse::<f64>(), value()) {
                                set(c.from_slider_moving(pos, cur));
                            }
                        }
                    />
                    <input
                        type="number"
                        class="number"
                        data-testid=format!("{dom_id}-number")
                        aria-label=format!("{} in {}", c.label, c.unit)
                        step="any"
                        min=c.min.to_string()
                        max=c.max.to_string()
                        prop:value=move || value().map(|v| c.show(v)).unwrap_or_default()
                        on:change=move |ev| {
                            match c.parse(&event_target_value(&ev)) {
                                Ok(v) => set(v),
                                Err(msg) => problem.set(Some(msg)),
                            }
                        }
                    />
                    <span class="unit">{c.unit}</span>
                </div>
            </div>
        </Show>
    }
    .into_any()
}

fn choice_control(
    c: ChoiceControl,
    i: usize,
    scenario: RwSignal<Scenario>,
    problem: RwSignal<Option<String>>,
) -> AnyView {
    let dom_id = if i == 0 {
        c.id.to_owned()
    } else {
        format!("{}-{i}", c.id)
    };
    let current = move || scenario.with(|s| (c.get)(s, i));
    view! {
        <Show when=move || current().is_some()>
            <div class="control">
                <label for=dom_id.clone()>
                    {c.label}
                    <span class="help" tabindex="0" role="img" aria-label=format!("What is {}?", c.label) title=c.help>
                        "?"
                    </span>
                </label>
                <select
                    id=dom_id.clone()
                    data-testid=dom_id.clone()
                    on:change=move |ev| {
                        let k = event_target_value(&ev);
                        apply(scenario, problem, |s: &mut Scenario| (c.set)(s, i, &k));
                    }
                >
                    {move || {
                        let cur = current();
                        scenario
                            .with(|s| (c.options)(s, i))
                            .into_iter()
                            .map(|(k, label)| {
                                let selected = cur.as_deref() == Some(k.as_str());
                                view! { <option value=k selected=selected>{label}</option> }
                            })
                            .collect_view()
                    }}
                </select>
            </div>
        </Show>
    }
    .into_any()
}

/// A button that downloads a CSV made from the current report.
fn report_export(
    id: &'static str,
    label: &'static str,
    file: &'static str,
    make: fn(&Report) -> String,
    report: RwSignal<Option<Report>>,
) -> impl IntoView {
    view! {
        <button
            class="secondary"
            data-testid=id
            on:click=move |_| {
                if let Some(text) = report.with_untracked(|r| r.as_ref().map(make)) {
                    download(file, "text/csv", &text);
                }
            }
        >
            {label}
        </button>
    }
}

fn png_button(id: &'static str, canvas: NodeRef<leptos::html::Canvas>) -> impl IntoView {
    view! {
        <button
            class="png"
            data-testid=format!("{id}-png")
            aria-label="Download this chart as PNG"
            on:click=move |_| {
                if let Some(c) = canvas.get_untracked()
                    && let Ok(url) = c.to_data_url()
                {
                    download_url(&format!("{id}.png"), &url);
                }
            }
        >
            "PNG"
        </button>
    }
}

fn chart_canvas(
    id: &'static str,
    draw: ChartFn<CanvasBackend>,
    report: Signal<Option<Report>>,
    pinned: Signal<Option<Report>>,
    show: fn(&Report) -> bool,
) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let visible = move || report.with(|r| r.as_ref().is_some_and(show));
    Effect::new(move |_| {
        report.track();
        pinned.track();
        let Some(el) = canvas.get() else { return };
        // Draw on the next frame, apart from the simulation slice that produced
        // the report, so neither makes the other's frame long.
        request_animation_frame(move || {
            let a = pinned.get_untracked();
            report.with_untracked(|r| {
                let Some(r) = r.as_ref().filter(|r| show(r)) else {
                    return;
                };
                if let Some(backend) = CanvasBackend::with_canvas_object(el) {
                    let root = backend.into_drawing_area();
                    // A failed draw leaves the previous frame; nothing better to show.
                    let _ = draw(&root, r, a.as_ref());
                }
            });
        });
    });
    view! {
        <figure class="chart" style:display=move || if visible() { "block" } else { "none" }>
            <canvas node_ref=canvas data-testid=id width="640" height="300"></canvas>
            {png_button(id, canvas)}
        </figure>
    }
}

/// Advance the playhead by the real time since the last frame × speed.
fn play_frame(
    playhead: RwSignal<Option<f64>>,
    playing: RwSignal<bool>,
    speed: RwSignal<f64>,
    end: f64,
    last: Option<f64>,
) {
    if !playing.get_untracked() {
        return;
    }
    let now = window().performance().map_or(0.0, |p| p.now());
    if let Some(prev) = last {
        let t =
            playhead.get_untracked().unwrap_or(0.0) + (now - prev) / 1000.0 * speed.get_untracked();
        if t >= end {
            playhead.set(None);
            playing.set(false);
            return;
        }
        playhead.set(Some(t));
    }
    request_animation_frame(move || play_frame(playhead, playing, speed, end, Some(now)));
}

/// Replica 1's first passes, recorded for the teaching timeline.
pub fn first_seconds(s: &Scenario) -> Option<(sim_core::engine::TraceLog, f64)> {
    let window_s = s.duration_s.min(5.0);
    let mut sim = sim_core::Simulation::new(&s.clone().validate().ok()?);
    sim.record_trace(5_000);
    sim.advance_until((window_s * 1e9) as u64);
    sim.trace()
        .cloned()
        .filter(|t| !t.passes.is_empty())
        .map(|t| (t, window_s))
}

fn timeline_canvas(trace: RwSignal<Option<(sim_core::engine::TraceLog, f64)>>) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    Effect::new(move |_| {
        trace.with(|t| {
            let (Some((t, w)), Some(el)) = (t.as_ref(), canvas.get()) else {
                return;
            };
            if let Some(backend) = CanvasBackend::with_canvas_object(el) {
                let _ = charts::timeline(&backend.into_drawing_area(), t, *w);
            }
        });
    });
    view! {
        <figure
            class="chart wide"
            style:display=move || if trace.with(|t| t.is_some()) { "block" } else { "none" }
        >
            <canvas node_ref=canvas data-testid="chart-timeline" width="1200" height="320"></canvas>
            <figcaption>
                "The first seconds on the GPU. Static batching runs one batch to the end while new requests wait; continuous batching lets them join between passes. Switch the batching policy to compare."
            </figcaption>
            {png_button("chart-timeline", canvas)}
        </figure>
    }
}

fn cost_canvas(
    id: &'static str,
    costs: RwSignal<Option<CostCurves>>,
    draw: fn(
        &plotters::drawing::DrawingArea<CanvasBackend, plotters::coord::Shift>,
        &CostCurves,
    ) -> charts::DrawResult<CanvasBackend>,
    show: fn(&CostCurves) -> bool,
) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let visible = move || costs.with(|c| c.as_ref().is_some_and(show));
    Effect::new(move |_| {
        costs.with(|c| {
            let (Some(c), Some(el)) = (c.as_ref(), canvas.get()) else {
                return;
            };
            if !show(c) {
                return;
            }
            if let Some(backend) = CanvasBackend::with_canvas_object(el) {
                let _ = draw(&backend.into_drawing_area(), c);
            }
        });
    });
    view! {
        <figure class="chart" style:display=move || if visible() { "block" } else { "none" }>
            <canvas node_ref=canvas data-testid=id width="640" height="300"></canvas>
            {png_button(id, canvas)}
        </figure>
    }
}
