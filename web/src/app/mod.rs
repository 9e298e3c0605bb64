//! The page: presets and controls on the left; summary cards and live charts on
//! the right; the scenario always mirrored in the URL.

pub mod parts;

use crate::app::parts::{
    banners_view, capacity_cards, charts_view, header_view, status_view, toolbar_view,
};
use crate::charts::playback::{first_seconds, playback_view};
use crate::controls::groups;
use crate::controls::views::group_view;
use crate::io::url_state::{
    current_fragment, flush_fragment, scenario_from_fragment, write_fragment,
};
use crate::results::cards::cards_view;
use crate::work::runner::Runner;
use leptos::prelude::*;
use sim_core::compare::{CostCurves, LoadCheck, cost_curves, load_check};
use sim_core::plan::fleet_size::{FleetSize, FleetSizeSearch};
use sim_core::presets;
use sim_core::trace::TraceLog;
use sim_core::{Report, Scenario};
use std::cell::RefCell;
use std::rc::Rc;

/// How long a finished run stays on screen before the capacity measurement
/// and the GPU timeline start for it: longer than the moves of a drag are
/// apart, short enough not to be seen.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(100);

/// The whole application.
#[component]
pub fn App() -> impl IntoView {
    let start = scenario_from_fragment(&current_fragment());
    let scenario = RwSignal::new(start.scenario);
    let link_problem = RwSignal::new(start.problem);
    let legacy_link = RwSignal::new(start.before_profiles);
    let input_problem = RwSignal::new(None::<String>);
    // The control whose change caused `input_problem` (its message shows there).
    let problem_at = RwSignal::new(None::<String>);
    provide_context(crate::controls::views::ProblemAt(problem_at));
    // What else the last edit changed, said under its control.
    provide_context(crate::controls::views::ChangeNote(RwSignal::new(None)));
    let runner = Runner::new();
    let pinned = RwSignal::new(None::<(Scenario, Report)>);
    // A measured run the user imported, compared with the run on screen.
    let measured = RwSignal::new(None::<crate::io::measured_view::MeasuredImport>);
    // A trace the page holds, and how to link an exact replay too large for
    // a link (its distilled form with the trace's name and hash).
    let held = RwSignal::new(None::<crate::io::trace_ref_view::Held>);
    let link_as = RwSignal::new(None::<(sim_core::scenario::Workload, Scenario)>);
    // A link's pinned scenario A: run it in the background, then pin it.
    if let Some(a) = start.pinned {
        let progress = RwSignal::new(None::<f64>);
        let never = crate::work::jobs::Stop::default();
        crate::work::jobs::run(
            crate::work::jobs::OneRun::new(a),
            progress,
            &never,
            move |j| {
                if let Some((s, r)) = j.into_result() {
                    pinned.set(Some((s, r)));
                }
            },
        );
    }
    let costs = RwSignal::new(None::<CostCurves>);
    let load = RwSignal::new(None::<LoadCheck>);
    // The fewest replicas meeting the targets, searched once `load` is in,
    // with the scenario it was searched for (shown only while that is the
    // run on screen).
    let fleet = RwSignal::new(None::<(Scenario, FleetSize)>);
    // The range runs of the scenario on screen (`sim_core::ranges`), run
    // after its capacity measurement, with the scenario they are of.
    let ranges = RwSignal::new(None::<(Scenario, sim_core::ranges::Ranges)>);
    // The scenario `load` was measured for.
    let load_for = RwSignal::new(None::<Scenario>);
    let trace = RwSignal::new(None::<(TraceLog, f64)>);
    let playhead = RwSignal::new(None::<f64>);
    let playing = RwSignal::new(false);

    // The capacity measurement, the range runs and the fleet-size search
    // they start: one handle stops them all.
    let cost_job = crate::work::jobs::Slot::default();

    // Every change of scenario: re-run (coalesced to one run per animation
    // frame by the runner), and stop the background work of the scenario
    // before, which no longer matters and would share the page's thread
    // with the new run. The URL mirrors the scenario and the pinned A.
    {
        let (runner, cost_job) = (runner.clone(), cost_job.clone());
        Effect::new(move |_| {
            let s = scenario.get();
            cost_job.stop();
            runner.submit(s);
        });
    }
    // A write still waiting when the page is left (or reloaded) is made.
    let _ = window_event_listener(leptos::ev::pagehide, |_| flush_fragment());
    Effect::new(move |_| {
        scenario.with(|s| {
            let linked = link_as.with(|l| crate::io::trace_ref_view::linked(s, l));
            pinned
                .with(|p| write_fragment(linked.as_ref().unwrap_or(s), p.as_ref().map(|(a, _)| a)))
        });
    });

    // Which preset the scenario is, or was edited from (by its name), built
    // once; exact when nothing was changed since.
    let known = StoredValue::new(presets::all());
    let origin = Memo::new(move |_| {
        scenario.with(|s| {
            known.with_value(|all| {
                presets::of(all, s).map(|p| (p.id, p.title, p.explanation, p.scenario == *s))
            })
        })
    });

    // Where the scenario is in its preset's story.
    let story = Memo::new(move |_| {
        scenario.with(|s| known.with_value(|all| crate::results::story_view::story_at(all, s)))
    });

    let report = runner.report;

    let cost_progress = RwSignal::new(None::<f64>);
    // Every report on screen restarts playback from the whole run, and ends
    // a capacity measurement made for another scenario.
    let (state, ran, preview) = (runner.state, runner.ran, runner.preview);
    let stop_costs = {
        let cost_job = cost_job.clone();
        move || cost_job.stop()
    };
    {
        let stop_costs = stop_costs.clone();
        Effect::new(move |_| {
            if report.with(|r| r.is_some()) {
                playhead.set(None);
                playing.set(false);
                if ran.with_untracked(|r| load_for.with_untracked(|l| r != l)) {
                    stop_costs();
                    load.set(None);
                    fleet.set(None);
                    ranges.set(None);
                }
            }
        });
    }
    // After each finished full run (not a preview, not one a newer scenario
    // was waiting for) that stays on screen for a moment (so not between
    // the moves of a drag), compute the cost curves and the GPU timeline.
    let warm = runner.clone();
    Effect::new(move |_| {
        if matches!(state.get(), crate::work::runner::RunState::Done(_)) {
            let Some(s) = ran.get_untracked() else { return };
            stop_costs();
            let job = cost_job.clone();
            let warm = warm.clone();
            set_timeout(
                move || {
                    let still = matches!(
                        state.get_untracked(),
                        crate::work::runner::RunState::Done(_)
                    ) && ran.with_untracked(|r| r.as_ref() == Some(&s));
                    if !still {
                        return;
                    }
                    // The planner's workers load their simulator in the background
                    // now, so a plan starts at once when asked for.
                    crate::plan::workers::warm();
                    // And the run worker, which long runs' full runs go to.
                    warm.warm_worker();
                    load.set(None);
                    fleet.set(None);
                    ranges.set(None);
                    // The GPU timeline's simulation in a task of its own.
                    let t = s.clone();
                    crate::work::soon::soon(move || {
                        if ran.with_untracked(|r| r.as_ref() == Some(&t)) {
                            trace.set(first_seconds(&t));
                        }
                    });
                    let stop = job.renew();
                    let then = stop.clone();
                    // The range runs beside the capacity measurement, the
                    // run on screen as their first; then, once both are
                    // done, the fleet's capacity and replicas at the
                    // band's ends.
                    let on_screen = report
                        .get_untracked()
                        .filter(|_| preview.with_untracked(|p| p.is_none()));
                    let mut range_runs = sim_core::ranges::RangeRuns::new(&s);
                    if let Some(r) = &on_screen {
                        range_runs = range_runs.with_point(r);
                    }
                    let joined = Rc::new(RefCell::new((
                        None::<Option<f64>>,
                        None::<sim_core::ranges::RangeRuns>,
                    )));
                    let fleet_when_joined = {
                        let (joined, chain, of) = (joined.clone(), then.clone(), s.clone());
                        move || {
                            let (Some(capacity), Some(r)) = joined.borrow().clone() else {
                                return;
                            };
                            let Some(fleet) = capacity.and_then(|c| r.fleet(c)) else {
                                return;
                            };
                            let of = of.clone();
                            crate::work::jobs::run(
                                fleet,
                                RwSignal::new(None::<f64>),
                                &chain,
                                move |f| {
                                    if ran.with_untracked(|s| s.as_ref() == Some(&of)) {
                                        ranges.update(|r| {
                                            if let Some((_, r)) =
                                                r.as_mut().filter(|(s, _)| *s == of)
                                            {
                                                f.add_to(r);
                                            }
                                        });
                                    }
                                },
                            );
                        }
                    };
                    {
                        let (of, joined, fleet_when_joined) =
                            (s.clone(), joined.clone(), fleet_when_joined.clone());
                        crate::work::jobs::run_sliced(
                            range_runs,
                            crate::work::jobs::RANGE_SLICE_MS,
                            RwSignal::new(None::<f64>),
                            &stop,
                            move |r| {
                                if !ran.with_untracked(|s| s.as_ref() == Some(&of)) {
                                    return;
                                }
                                ranges.set(r.result().map(|r| (of.clone(), r)));
                                joined.borrow_mut().1 = Some(r);
                                fleet_when_joined();
                            },
                        );
                    }
                    crate::work::jobs::run(
                        crate::work::jobs::CostJobs::new(&s),
                        cost_progress,
                        &stop,
                        move |j| {
                            costs.set(j.capacity().map(|c| cost_curves(j.scenario(), c)));
                            load.set(j.capacity().and_then(|c| load_check(j.scenario(), c)));
                            load_for.set(Some(j.scenario().clone()));
                            joined.borrow_mut().0 = Some(j.capacity());
                            fleet_when_joined();
                            // Then the replicas that meet the targets, from
                            // the run on screen: still this scenario's, and
                            // its full run (a preview's verdict is of its
                            // first seconds; the full run's end starts this
                            // again).
                            let on_screen = report.get_untracked().filter(|_| {
                                ran.with_untracked(|r| r.as_ref() == Some(j.scenario()))
                                    && preview.with_untracked(|p| p.is_none())
                            });
                            let search = j
                                .capacity()
                                .zip(on_screen)
                                .and_then(|(c, r)| FleetSizeSearch::new(j.scenario(), &r, c));
                            if let Some(search) = search {
                                let progress = RwSignal::new(None::<f64>);
                                let of = j.scenario().clone();
                                crate::work::jobs::run(search, progress, &then, move |f| {
                                    // Never over the answer for the run on screen.
                                    if ran.with_untracked(|r| r.as_ref() == Some(&of)) {
                                        fleet.set(f.result().map(|n| (of, n)));
                                    }
                                });
                            }
                        },
                    );
                },
                SETTLE,
            );
        }
    });
    // Where the fleet measured tips over within the model's error, in its
    // output tokens/s, with the scenario measured (the curve chart shades it).
    let tipping = Signal::derive(move || {
        let of = load_for.get().filter(|s| s.uses_fleet())?;
        let band = sim_core::ranges::band_for(&of.serving);
        let t = sim_core::ranges::tipping_output_tokens_per_s(&load.get()?, &band);
        Some((of, t))
    });
    // What the charts show: the whole run, or the run up to the playhead.
    let shown = Memo::new(move |_| {
        report.with(|r| {
            r.as_ref().map(|r| match playhead.get() {
                Some(t) => r.until(t),
                None => r.clone(),
            })
        })
    });
    let pinned_report = Signal::derive(move || pinned.with(|p| p.as_ref().map(|(_, r)| r.clone())));

    view! {
        {header_view(scenario, origin, story, (input_problem, link_problem))}
        {banners_view(scenario, origin, story, link_problem, legacy_link)}
        <main class="layout">
            <section class="controls" id="controls" aria-label="Scenario controls">
                // A problem with no control of its own to show it under.
                <Show when=move || {
                    input_problem.with(|p| p.is_some()) && problem_at.with(|a| a.is_none())
                }>
                    <p class="banner error" role="alert" data-testid="input-error">
                        {move || input_problem.get().unwrap_or_default()}
                    </p>
                </Show>
                {groups().into_iter().map(|g| group_view(g, scenario, input_problem)).collect_view()}
                {crate::results::pool_cards::pool_cards(scenario, input_problem)}
                {crate::io::import::import_view(scenario, input_problem, measured, held)}
                {crate::results::cards::live_summary(report)}
            </section>
            <section
                class="results"
                id="results"
                tabindex="-1"
                aria-label="Results"
                class:stale=move || input_problem.with(|p| p.is_some())
                data-stale=move || input_problem.with(|p| p.is_some()).to_string()
            >
                <Show when=move || input_problem.with(|p| p.is_some())>
                    <p class="banner error" role="status" data-testid="results-stale">
                        "Your last change was not applied, so these results are still the last valid scenario's: "
                        {move || input_problem.get().unwrap_or_default()}
                        // The message is also under the control or panel that
                        // caused it: a link there.
                        <Show when=move || problem_at.with(|a| a.is_some())>
                            " "
                            <a
                                href="#controls"
                                data-testid="results-stale-go"
                                on:click=move |ev| {
                                    // Keep the #s=… fragment that holds the scenario.
                                    ev.prevent_default();
                                    if let Some(at) = problem_at.get_untracked() {
                                        crate::controls::views::go_to_problem(&at);
                                    }
                                }
                            >"Show me where"</a>
                        </Show>
                    </p>
                </Show>
                {crate::io::trace_ref_view::trace_ref_view(scenario, held, link_as, input_problem)}
                <a class="to-controls" href="#controls" data-testid="to-controls" on:click=move |ev| {
                    // Scroll without replacing the #s=… fragment that holds the scenario.
                    ev.prevent_default();
                    if let Some(el) = document().get_element_by_id("controls") {
                        el.scroll_into_view();
                    }
                }>"Change the scenario ↓"</a>
                {status_view(scenario, runner.clone(), load)}
                // The story above the cards; on a phone, below them, so the
                // first screen shows numbers.
                <div class="lead">
                    {crate::results::story_view::story_view(scenario, story, runner.clone(), (load, load_for))}
                    {toolbar_view(scenario, report, pinned)}
                    <div class="cards">
                        {cards_view(report, pinned)}
                        {capacity_cards(scenario, load, of_run_on_screen(fleet, ran))}
                    </div>
                    {crate::results::ranges_view::ranges_view(
                        of_run_on_screen(ranges, ran),
                        load,
                    )}
                </div>
                {crate::results::cards::per_class_view(report)}
                {crate::results::pool_view::per_pool_view(report)}
                {crate::results::tier_view::per_tier_view(report)}
                {crate::io::measured_view::measured_view(measured, report, scenario)}
                {playback_view(report, playhead, playing)}
                {charts_view(shown, pinned_report, trace, costs)}
                <crate::plan::panel::Planner scenario=scenario report=report ran=ran preview=preview pinned=pinned tipping=tipping />
            </section>
        </main>
    }
}

/// A background answer kept with the scenario it is of, shown only while
/// that scenario is the run on screen.
fn of_run_on_screen<T: Clone + Send + Sync + 'static>(
    answer: RwSignal<Option<(Scenario, T)>>,
    ran: RwSignal<Option<Scenario>>,
) -> Signal<Option<T>> {
    Signal::derive(move || {
        answer.with(|a| {
            a.as_ref()
                .filter(|(s, _)| ran.with(|r| r.as_ref() == Some(s)))
                .map(|(_, v)| v.clone())
        })
    })
}
