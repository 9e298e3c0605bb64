//! The planner over pools on the page (`sim_core::plan::pools`): each
//! question's plan on the planner's workers (or in slices), one after
//! another, then the autoscaling searches and the split's run in slices;
//! and the answer, with Apply for one setup or the split.

use crate::table::{Column, columns, data_table};
use crate::work::jobs::{self, PlanJobs};
use leptos::prelude::*;
use sim_core::Scenario;
use sim_core::plan::pools::{Answer, PoolPlan, PoolPlanner};
use sim_core::plan::{Plan, PlanSlo, Space};
use std::cell::RefCell;
use std::rc::Rc;

/// Where a plan over pools reports to.
#[derive(Clone, Copy)]
pub struct Sinks {
    /// The progress bar's share of the current step.
    pub progress: RwSignal<Option<f64>>,
    /// What runs now, in words.
    pub what: RwSignal<String>,
    /// The finished plan.
    pub result: RwSignal<Option<PoolPlan>>,
    /// Why it stopped, if it failed.
    pub error: RwSignal<Option<String>>,
    /// Workers the plans ran on (0: on the page).
    pub workers: RwSignal<usize>,
}

/// Start the plan over pools of `s`; Err says why it cannot be asked.
pub fn start(
    s: &Scenario,
    slo: PlanSlo,
    space: &Space,
    sinks: Sinks,
    stop: jobs::Stop,
) -> Result<(), String> {
    let planner = PoolPlanner::new(s, slo, space)?;
    ask(Rc::new(RefCell::new(Some(planner))), 0, sinks, stop);
    Ok(())
}

/// Ask question `i` (or, past the last, run the rest).
fn ask(planner: Rc<RefCell<Option<PoolPlanner>>>, i: usize, sinks: Sinks, stop: jobs::Stop) {
    if stop.stopped() {
        return;
    }
    let Some(q) = planner
        .borrow()
        .as_ref()
        .and_then(|p| p.questions().get(i).cloned())
    else {
        let Some(p) = planner.borrow_mut().take() else {
            return;
        };
        sinks
            .what
            .set("Trying autoscaling, then running the classes' answers together…".into());
        jobs::run(p, sinks.progress, &stop, move |p| {
            sinks.result.set(p.result())
        });
        return;
    };
    let n = planner.borrow().as_ref().map_or(0, |p| p.questions().len());
    sinks.what.set(match &q.class {
        None => format!("Planning all the traffic on one setup (question 1 of {n})…"),
        Some(c) if q.classes.len() > 1 => {
            format!(
                "Planning classes {c} sharing a pool (question {} of {n})…",
                i + 1
            )
        }
        Some(c) => format!("Planning class {c} on its own (question {} of {n})…", i + 1),
    });
    let next = {
        let stop = stop.clone();
        move |plan: Plan| {
            if let Some(p) = planner.borrow_mut().as_mut() {
                p.give(i, plan);
            }
            ask(planner, i + 1, sinks, stop);
        }
    };
    let on_workers = {
        let next = next.clone();
        crate::plan::workers::start(
            &q.scenario,
            q.slo,
            q.space.clone(),
            sinks.progress,
            move |r: Result<Plan, String>| match r {
                Ok(p) => next(p),
                Err(e) => sinks
                    .error
                    .set(Some(format!("The planner's workers failed: {e}"))),
            },
        )
    };
    if on_workers {
        sinks.workers.set(crate::plan::workers::size());
    } else {
        sinks.workers.set(0);
        jobs::run(
            PlanJobs::new(&q.scenario, q.slo, q.space),
            sinks.progress,
            &stop,
            move |mut j| next(j.plan()),
        );
    }
}

fn usd(v: f64) -> String {
    crate::format::fmt_usd(v)
}

fn row(a: &Answer) -> impl IntoView + use<> {
    let who = match &a.class {
        None => "All traffic, one setup".to_owned(),
        Some(c) if a.classes.len() > 1 => format!("Classes {c}, one pool"),
        Some(c) => format!("Class {c}"),
    };
    let id = a.class.as_ref().map_or_else(
        || "pool-plan-row-whole".to_owned(),
        |c| format!("pool-plan-row-{c}"),
    );
    let targets = format!(
        "{} / {}",
        crate::format::fmt_ms(Some(a.slo.ttft_p99_ms)),
        crate::format::fmt_ms(Some(a.slo.tpot_p99_ms))
    );
    let answer = a
        .describe()
        .unwrap_or_else(|| "no setup meets the targets".into());
    let cost = a.usd_per_month();
    let note = [
        a.scaling_note
            .as_ref()
            .map(|n| format!("Autoscaling: {n}.")),
        a.overflow_note
            .as_ref()
            .map(|n| format!("Overflow to the API: {n}.")),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" ");
    let unsettled = (!a.plan.unsettled.is_empty()).then(|| {
        format!(
            " {} cheaper configurations were not settled within the work budget.",
            a.plan.unsettled.len()
        )
    });
    view! {
        <tr data-testid=id data-autoscaled=a.autoscales().to_string()
            data-overflows=a.overflows_to().is_some().to_string()>
            <th scope="row">{who}</th>
            <td>{targets}</td>
            <td>{answer}<span class="hint">{unsettled}</span></td>
            <td data-testid="usd-month" data-value=cost.map_or(String::new(), |c| c.to_string())>
                {cost.map_or_else(|| "—".into(), usd)}
            </td>
            <td class="hint">{note}</td>
        </tr>
    }
}

/// A finished plan over pools.
pub fn pool_plan_view(
    p: PoolPlan,
    scenario: RwSignal<Scenario>,
    applied: RwSignal<Option<(usize, String)>>,
) -> impl IntoView {
    let cheapest = p.cheapest();
    let whole = p.whole.clone();
    let apply_whole = move |_| {
        let mut s = scenario.get_untracked();
        if whole.apply(&mut s).is_ok() {
            scenario.set(s);
            applied.set(Some((usize::MAX, whole.describe().unwrap_or_default())));
            crate::controls::views::show_results();
        }
    };
    let split = p.split.clone();
    view! {
        <section class="pool-plan" data-testid="pool-plan" aria-label="Pools, class by class">
            <h3>"Pools, class by class"</h3>
            {data_table(
                "plan",
                None,
                None,
                columns(&[
                    Column::new("Traffic"),
                    Column::new("p99 TTFT / TPOT targets"),
                    Column::new("Cheapest setup"),
                    Column::new("$/month"),
                    Column::new("Autoscaling, overflow"),
                ]),
                view! {
                    {row(&p.whole)}
                    {p.classes.iter().chain(&p.groups).map(row).collect_view()}
                },
            )}
            {split.map(|sp| {
                let verdicts = sp.verdicts.clone();
                let meets = sp.meets();
                let deployment = sp.scenario.clone();
                let how = sp.describe();
                let told = how.clone();
                view! {
                    <p data-testid="pool-plan-split" data-meets=meets.to_string()
                        data-value=sp.usd_per_month.to_string()>
                        {format!(
                            "{}, run together: {}/month.",
                            crate::format::capitalised(&how),
                            usd(sp.usd_per_month)
                        )}
                    </p>
                    <ul data-testid="pool-plan-verdicts">
                        {verdicts.into_iter().map(|(c, v)| view! {
                            <li data-ok=v.is_ok().to_string()>{match &v {
                                Ok(m) => format!("{c}: meets its targets ({:.0} % to spare)", m * 100.0),
                                Err(why) => format!("{c}: misses ({why})"),
                            }}</li>
                        }).collect_view()}
                    </ul>
                    <button class="secondary" data-testid="pool-plan-apply-split"
                        on:click=move |_| {
                            scenario.set(deployment.clone());
                            applied.set(Some((usize::MAX - 1, told.clone())));
                            crate::controls::views::show_results();
                        }
                    >"Apply the split"</button>
                }
            })}
            {p.no_split.map(|why| view! { <p class="hint" data-testid="pool-plan-no-split">{format!("No split: {why}.")}</p> })}
            <p data-testid="pool-plan-cheapest" data-split=cheapest.as_ref().is_some_and(|c| c.2).to_string()>
                {match &cheapest {
                    Some((d, c, _)) => format!("Cheapest: {d}, {}/month.", usd(*c)),
                    None => "No answer meets the targets.".into(),
                }}
            </p>
            <button class="secondary" data-testid="pool-plan-apply-whole" on:click=apply_whole>
                "Apply one setup for everything"
            </button>
        </section>
    }
}
