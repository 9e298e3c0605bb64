//! The planning panel: the cheapest setup meeting the targets at this load, how
//! far this setup's load can grow, and the latency–throughput curve of every
//! batching policy. All of it runs in the background, in slices.

use crate::charts::views::{ChartSpec, chart_canvas};
use crate::plan::view::plan_view;
use crate::work::jobs::{self, CurveJobs, PlanJobs};
use leptos::prelude::*;
use sim_core::Scenario;
use sim_core::plan::confidence::{Confidence, ConfidenceRuns};
use sim_core::plan::{Headroom, HeadroomSearch, Plan, PlanSlo, Space};
use sim_core::sweep::Curve;

/// The targets the planner uses: sim-core's one definition (the scenario's
/// TTFT and TPOT targets as p99 limits, 1 % errors, 90 % goodput), which
/// `tlab plan` and `tlab headroom` start from too.
pub fn targets(s: &Scenario) -> PlanSlo {
    PlanSlo::for_scenario(s)
}

/// Where today's load sits on the curve: the output tokens/s of the
/// scenario's own batching policy at today's rate (the fifth of
/// [`curve_rates`]), as the curve's run of it measured.
fn today_on_curve(s: &Scenario, curves: &[Curve]) -> Option<f64> {
    let key = s.serving.batching.policy_key();
    let c = curves.iter().find(|c| c.policy == key)?;
    c.points.get(TODAY_INDEX).map(|p| p.1)
}

/// The share of its range runs a setup must meet the targets in for the
/// page's planner to call it confident (`tlab plan --confidence` asks).
pub const PAGE_CONFIDENCE: f64 = 0.9;

/// Today's rate is the fifth of the curve's ten.
const TODAY_INDEX: usize = 4;

/// Arrival rates for the curve: from a fifth to twice today's load.
fn curve_rates(s: &Scenario) -> Vec<f64> {
    let today = s
        .offered_tasks_per_s()
        .map_or_else(|| s.peak_tasks_per_s(), |(mean, _)| mean);
    (1..=10).map(|i| today * 0.2 * f64::from(i)).collect()
}

/// The panel.
#[component]
pub fn Planner(
    /// The scenario to plan for.
    scenario: RwSignal<Scenario>,
    /// The run on screen: the setup as it is, judged beside the plan's
    /// answers when it is a whole run of the scenario asked about.
    report: RwSignal<Option<sim_core::Report>>,
    /// The scenario the run on screen is of.
    ran: RwSignal<Option<Scenario>>,
    /// Whether the run on screen is a preview (then it is not judged).
    preview: RwSignal<Option<(f64, f64)>>,
    /// The pinned run A, marked on the cost–latency chart.
    pinned: RwSignal<Option<(Scenario, sim_core::Report)>>,
    /// Where the fleet tips over within the model's error, in output
    /// tokens/s, and the scenario it was measured for (shaded on the curve
    /// of that scenario).
    tipping: Signal<Option<(Scenario, (f64, f64))>>,
) -> impl IntoView {
    let progress = RwSignal::new(None::<f64>);
    let what = RwSignal::new(String::new());
    let plan = RwSignal::new(None::<Plan>);
    // The plan's answer checked over the model's error (its range runs),
    // after the plan, on the page in slices.
    let confidence = RwSignal::new(None::<Confidence>);
    let confidence_progress = RwSignal::new(None::<f64>);
    // The plan over pools (class by class, autoscaling), when asked for.
    let pool_plan = RwSignal::new(None::<sim_core::plan::pools::PoolPlan>);
    let by_class = RwSignal::new(false);
    // The split planner's answer, when asked for.
    let split_plan = RwSignal::new(None::<sim_core::plan::disaggregation::DisaggregationPlan>);
    let headroom = RwSignal::new(None::<Headroom>);
    let curves = RwSignal::new(None::<Vec<Curve>>);
    let today = RwSignal::new(None::<f64>);
    let curve_tipping = RwSignal::new(None::<(f64, f64)>);
    let error = RwSignal::new(None::<String>);
    // Said before the plan starts: a shorter window, or that some searches
    // may end unsettled (the work budget, `plan::budget`).
    let notes = RwSignal::new(Vec::<String>::new());
    // For a scenario an API serves: also try self-hosting (another model).
    let self_hosting = RwSignal::new(false);
    // The question being answered in slices on the page (asking another
    // stops it).
    let cancel = jobs::Slot::default();
    // Workers the last plan ran on (0: on the page, in slices).
    let workers = RwSignal::new(0usize);
    // The scenario the answers below were asked for: after an edit (or an
    // Apply) they are marked as answers about an earlier scenario.
    let asked_for = RwSignal::new(None::<Scenario>);
    let stale = move || asked_for.with(|a| a.as_ref().is_some_and(|a| scenario.with(|s| a != s)));
    // The row Apply made the scenario (cleared by the next question).
    let applied = RwSignal::new(None::<(usize, String)>);
    // Search the six most rented GPUs, or the whole catalogue.
    let all_gpus = RwSignal::new(false);
    // The most replicas a setup may have, and the work budget of the last
    // question ("Search longer" gives the same question ten times more).
    let max_replicas = RwSignal::new(Space::default().max_replicas);
    let budget = RwSignal::new(sim_core::plan::budget::PAGE_PLAN_EVENTS);

    let stop_previous = {
        let cancel = cancel.clone();
        move || {
            cancel.stop();
            crate::plan::workers::cancel();
        }
    };

    let ask_plan = {
        let (cancel, stop) = (cancel.clone(), stop_previous.clone());
        move |longer: bool| {
            stop();
            if longer {
                budget.update(|b| *b = b.saturating_mul(10));
            } else {
                budget.set(sim_core::plan::budget::PAGE_PLAN_EVENTS);
            }
            let s = scenario.get_untracked();
            what.set("Searching for the cheapest setup…".into());
            error.set(None);
            plan.set(None);
            confidence.set(None);
            pool_plan.set(None);
            applied.set(None);
            asked_for.set(Some(s.clone()));
            let space = Space {
                self_hosted: s.uses_fleet() || self_hosting.get_untracked(),
                gpus: if all_gpus.get_untracked() {
                    sim_core::physics::Gpu::ALL.to_vec()
                } else {
                    sim_core::physics::Gpu::PLANNED.to_vec()
                },
                max_replicas: max_replicas.get_untracked(),
                budget_events: budget.get_untracked(),
                remedies: sim_core::plan::budget::Remedies::Page,
                ..Space::default()
            };
            if by_class.get_untracked() {
                let sinks = crate::plan::pool_view::Sinks {
                    progress,
                    what,
                    result: pool_plan,
                    error,
                    workers,
                };
                notes.set(Vec::new());
                if let Err(e) =
                    crate::plan::pool_view::start(&s, targets(&s), &space, sinks, cancel.renew())
                {
                    error.set(Some(format!("Pools class by class: {e}.")));
                }
                return;
            }
            let q = sim_core::plan::budget::question(&s, targets(&s), &space);
            notes.set(q.notes);
            let s = q.scenario;
            // On every core when workers start; else on the page, in slices.
            // The setup as it is beside the answers, from the run on screen
            // when that is a whole run of the scenario asked about.
            let asked = s.clone();
            let with_as_is = std::rc::Rc::new(move |mut p: Plan| {
                let whole = preview.with_untracked(|p| p.is_none())
                    && ran.with_untracked(|r| r.as_ref() == Some(&asked));
                if whole && let Some(r) = report.get_untracked() {
                    p.include_as_is(&asked, &targets(&asked), &r);
                }
                p
            });
            // Then the answer checked over the model's error.
            let check =
                {
                    let (asked, cancel) = (s.clone(), cancel.clone());
                    std::rc::Rc::new(move |p: Plan| {
                        let runs =
                            ConfidenceRuns::new(&asked, &p, targets(&asked), PAGE_CONFIDENCE);
                        plan.set(Some(p));
                        jobs::run(runs, confidence_progress, &cancel.renew(), move |c| match c
                            .result()
                        {
                            Ok(c) => confidence.set(Some(c)),
                            Err(e) => error.set(Some(format!(
                                "Checking the plan over the model's error: {e}"
                            ))),
                        });
                    })
                };
            let finish = with_as_is.clone();
            let checked = check.clone();
            let done = move |r: Result<Plan, String>| match r {
                Ok(p) => check(with_as_is(p)),
                Err(e) => error.set(Some(format!("The planner's workers failed: {e}"))),
            };
            let started =
                crate::plan::workers::start(&s, targets(&s), space.clone(), progress, done);
            if started {
                workers.set(crate::plan::workers::size());
            } else {
                workers.set(0);
                jobs::run(
                    PlanJobs::new(&s, targets(&s), space),
                    progress,
                    &cancel.renew(),
                    move |mut j| checked(finish(j.plan())),
                );
            }
        }
    };
    let start_plan = {
        let ask = ask_plan.clone();
        move |_| ask(false)
    };
    let search_longer = move |_| ask_plan(true);
    let start_headroom = {
        let (cancel, stop) = (cancel.clone(), stop_previous.clone());
        move |_| {
            stop();
            let s = scenario.get_untracked();
            what.set("Growing the load until a target breaks…".into());
            notes.set(Vec::new());
            error.set(None);
            headroom.set(None);
            asked_for.set(Some(s.clone()));
            jobs::run(
                HeadroomSearch::new(&s, targets(&s), 0.02),
                progress,
                &cancel.renew(),
                move |h| headroom.set(h.result().cloned()),
            );
        }
    };
    let start_split = {
        let (cancel, stop) = (cancel.clone(), stop_previous.clone());
        move |_| {
            stop();
            let s = scenario.get_untracked();
            what.set("Trying colocated counts, then prefill:decode ratios…".into());
            notes.set(Vec::new());
            error.set(None);
            split_plan.set(None);
            applied.set(None);
            asked_for.set(Some(s.clone()));
            if let Err(e) =
                crate::plan::split_view::start(&s, progress, &cancel.renew(), split_plan)
            {
                error.set(Some(format!("Split prefill and decode: {e}.")));
            }
        }
    };
    let start_curve = {
        let (cancel, stop) = (cancel.clone(), stop_previous.clone());
        move |_| {
            stop();
            let s = scenario.get_untracked();
            match CurveJobs::new(&s, &curve_rates(&s)) {
                Ok(j) => {
                    what.set("Running every batching policy at ten loads…".into());
                    notes.set(Vec::new());
                    error.set(None);
                    curves.set(None);
                    asked_for.set(Some(s.clone()));
                    jobs::run(j, progress, &cancel.renew(), move |j| {
                        let c = j.curves();
                        today.set(today_on_curve(&s, &c));
                        curve_tipping.set(tipping.with_untracked(|t| {
                            t.as_ref().filter(|(of, _)| *of == s).map(|(_, t)| *t)
                        }));
                        curves.set(Some(c));
                    });
                }
                Err(e) => error.set(Some(format!(
                    "The curve needs an open-loop arrival rate: {e}"
                ))),
            }
        }
    };

    view! {
        <section class="planner" aria-label="Capacity planning">
            <h2>"Plan capacity"</h2>
            <p class="hint">
                {move || {
                    let t = scenario.with(targets);
                    format!(
                        "Targets: p99 time to first token ≤ {} and p99 time per output token ≤ {} (set them under Cost and targets), at most {} % of requests failed, refused or timed out, at least {} % within both.",
                        crate::format::fmt_ms(Some(t.ttft_p99_ms)),
                        crate::format::fmt_ms(Some(t.tpot_p99_ms)),
                        t.max_error_fraction * 100.0,
                        t.min_goodput * 100.0,
                    )
                }}
            </p>
            <div class="planner-software">
                {crate::controls::views::scoped_control("software", "planner", scenario, error)}
                <p class="hint" data-testid="planner-software-note">
                    {move || {
                        let p = scenario.with(|s| {
                            s.serving.profile_statement(s.offered_tokens_per_s_per_replica())
                        });
                        format!(
                            "Every self-hosted setup below runs on {}: its constants were {}. Switching the software here switches it for the scenario too.",
                            p.name, p.source,
                        )
                    }}
                </p>
            </div>
            <div class="control">
                <label for="planner-gpus">"GPUs to search"</label>
                <select
                    id="planner-gpus"
                    data-testid="planner-gpus"
                    on:change=move |ev| all_gpus.set(event_target_value(&ev) == "all")
                >
                    <option value="planned" selected=move || !all_gpus.get()>
                        {format!(
                            "the six most rented ({})",
                            sim_core::physics::Gpu::PLANNED.map(|g| g.spec().name).join(", ")
                        )}
                    </option>
                    <option value="all" selected=move || all_gpus.get()>
                        {format!(
                            "all {} in the catalogue (B200, B300, H20, RTX PRO 6000, RTX 4090, MI325X, MI355X too): slower, and heavy questions settle fewer setups",
                            sim_core::physics::Gpu::ALL.len()
                        )}
                    </option>
                </select>
            </div>
            <div class="control">
                <label for="planner-max-replicas">"Most replicas"</label>
                <input
                    id="planner-max-replicas"
                    type="number"
                    min="1"
                    max="1024"
                    step="1"
                    data-testid="planner-max-replicas"
                    prop:value=move || max_replicas.get().to_string()
                    on:change=move |ev| {
                        let v = event_target_value(&ev);
                        match v.trim().parse::<u32>() {
                            Ok(n) if (1..=1024).contains(&n) => {
                                error.set(None);
                                max_replicas.set(n);
                            }
                            _ => error.set(Some(format!(
                                "Most replicas must be a whole number from 1 to 1,024, got {v:?}; it stays {}.",
                                max_replicas.get_untracked()
                            ))),
                        }
                    }
                />
            </div>
            <Show when=move || scenario.with(|s| !s.uses_fleet())>
                <label class="hint">
                    <input
                        type="checkbox"
                        data-testid="plan-self-hosted"
                        prop:checked=move || self_hosting.get()
                        on:change=move |ev| self_hosting.set(event_target_checked(&ev))
                    />
                    " Also consider self-hosting (the fleet's model, not the API's)"
                </label>
            </Show>
            <label class="hint">
                <input
                    type="checkbox"
                    data-testid="plan-pools"
                    prop:checked=move || by_class.get()
                    on:change=move |ev| by_class.set(event_target_checked(&ev))
                />
                " Plan pools: each class on a pool or API tier of its own, against its own targets (set them per class under Workload), and autoscaling where the load varies"
            </label>
            <div class="toolbar">
                <button data-testid="plan-run" on:click=start_plan>"Find the cheapest setup"</button>
                <button class="secondary" data-testid="headroom-run" on:click=start_headroom>
                    "How far can this load grow?"
                </button>
                <button class="secondary" data-testid="curve-run" on:click=start_curve>
                    "Latency–throughput curve"
                </button>
                <button class="secondary" data-testid="split-run" on:click=start_split
                    title="The cheapest prefill:decode ratio of this setup (xPyD), beside the fewest colocated replicas">
                    "Split prefill and decode?"
                </button>
            </div>
            <Show when=move || progress.get().is_some()>
                <p class="status">
                    <progress
                        data-testid="planner-progress"
                        data-workers=move || workers.get().to_string()
                        max="100"
                        value=move || format!("{:.0}", progress.get().unwrap_or(0.0) * 100.0)
                        data-slices=move || {
                            progress.track();
                            jobs::SLICES.with(|s| s.borrow().slices).to_string()
                        }
                        data-max-slice-events=move || {
                            progress.track();
                            jobs::SLICES.with(|s| s.borrow().max_events).to_string()
                        }
                    ></progress>
                    {move || what.get()}
                </p>
            </Show>
            // Said before the plan runs: what the question became (a shorter
            // window of steady traffic) and what the work budget may leave unsettled.
            <Show when=move || notes.with(|n| !n.is_empty())>
                <ul class="hint" data-testid="plan-notes">
                    {move || notes.get().into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}
                </ul>
            </Show>
            <Show when=move || error.get().is_some()>
                <p class="banner error" role="alert">{move || error.get().unwrap_or_default()}</p>
            </Show>
            <Show when=move || applied.with(|a| a.is_some())>
                <p class="banner info" role="status" data-testid="plan-applied">
                    {move || applied.get().map(|(_, d)| format!(
                        "Applied: {d}. The scenario now runs this setup; its results are at the top of the page."
                    )).unwrap_or_default()}
                </p>
            </Show>
            <Show when=move || stale() && applied.with(|a| a.is_none())>
                <p class="hint stale" data-testid="planner-stale">
                    "The answers below are for the scenario as it was when you asked; the scenario has changed since (ask again for the current one)."
                </p>
            </Show>
            <Show when=move || stale() && applied.with(|a| a.is_some())>
                <p class="hint stale" data-testid="planner-stale">
                    "The table is the plan for the scenario before you applied a row: ask again to plan from the applied setup."
                </p>
            </Show>
            <Show when=move || headroom.get().is_some()>
                <p class="headroom" data-testid="headroom-verdict">{move || headroom.get().map(|h| h.verdict).unwrap_or_default()}</p>
            </Show>
            <Show when=move || split_plan.with(|p| p.is_some())>
                {move || split_plan.get().map(|p| crate::plan::split_view::disaggregation_plan_view(p, scenario, applied))}
            </Show>
            <Show when=move || pool_plan.with(|p| p.is_some())>
                {move || pool_plan.get().map(|p| crate::plan::pool_view::pool_plan_view(p, scenario, applied))}
            </Show>
            // Shown while the plan on screen left searches unsettled.
            <button
                class="secondary"
                data-testid="plan-longer"
                hidden=move || stale() || !plan.with(|p| p.as_ref().is_some_and(|p| !p.unsettled.is_empty()))
                on:click=search_longer
            >
                {move || format!(
                    "Search longer: {}M simulated events, ten times this search's",
                    sim_core::format::thousands(budget.get().saturating_mul(10) / 1_000_000)
                )}
            </button>
            <Show when=move || plan.get().is_some()>
                {move || {
                    plan.get()
                        .map(|p| {
                            plan_view(p, scenario, error, applied, (confidence, confidence_progress))
                        })
                }}
            </Show>
            {crate::charts::views::clickable_chart_canvas(
                ChartSpec {
                    id: "chart-tradeoff",
                    size: (900, 420),
                    caption: Some("Each dot is a setup the plan settled, at its p99 time to first token (across) and its cost per month (up), both on log scales: green met every target, red missed one. The blue line is the frontier: along it nothing is both cheaper and faster. The purple ring is your setup as it is, the orange one the pinned run A. Click a dot to make that setup the scenario (pin A first to compare)."),
                    wide: false,
                },
                move || plan.with(|p| p.as_ref().is_some_and(|p| !p.feasible.is_empty() || !p.near_misses.is_empty())),
                move || {
                    plan.track();
                    pinned.track();
                },
                move || {
                    let a = pinned.with_untracked(|p| {
                        p.as_ref().and_then(|(_, r)| Some((r.overall.ttft.p99_ms?, r.cost.usd_per_month)))
                    });
                    plan.with_untracked(|p| p.as_ref().map(|p| lab_charts::tradeoff::model(p, a)))
                },
                std::rc::Rc::new(move |_line: &str, point: (f64, f64)| {
                    // The setup drawn there, made the scenario as its row's
                    // Apply would.
                    let Some((row, e)) = plan.with_untracked(|p| {
                        let p = p.as_ref()?;
                        let at = |e: &sim_core::plan::Evaluated| {
                            e.config != sim_core::plan::Config::AsIs
                                && e.summary.ttft_p99_ms == Some(point.0)
                                && e.usd_per_month == point.1
                        };
                        p.feasible
                            .iter()
                            .position(at)
                            .map(|i| (i, p.feasible[i].clone()))
                            .or_else(|| p.near_misses.iter().find(|e| at(e)).map(|e| (usize::MAX - 3, e.clone())))
                    }) else {
                        return;
                    };
                    let mut s = scenario.get_untracked();
                    match sim_core::plan::apply_config(&mut s, &e.config, e.replicas) {
                        Ok(()) => {
                            scenario.set(s);
                            applied.set(Some((row, e.description.clone())));
                            crate::controls::views::show_results();
                        }
                        Err(why) => error.set(Some(why)),
                    }
                }),
            )}
            {chart_canvas(
                ChartSpec {
                    id: "chart-curve",
                    size: (900, 420),
                    caption: Some("Each line is a batching policy: end-to-end latency (p50 solid, p99 dashed) against the throughput it achieved as load rose from a fifth to twice today's; the circle marks the highest load it kept up with, the purple line today's load on the scenario's own policy, and the red shading where this fleet tips over if its engine is as much faster or slower as the model's measured error."),
                    wide: false,
                },
                move || curves.with(|c| c.is_some()),
                move || curves.track(),
                move || {
                    curves.with_untracked(|c| {
                        c.as_ref().map(|c| lab_charts::curve::model(c, today.get_untracked(), curve_tipping.get_untracked()))
                    })
                },
            )}
        </section>
    }
}
