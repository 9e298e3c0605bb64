//! The planner's answer as the page shows it: what was asked, the API tier
//! answers, the cheapest setups (each with Apply) and the cheaper misses.

use crate::table::{Column, columns, data_table};
use leptos::prelude::*;
use sim_core::Scenario;
use sim_core::format::thousands;
use sim_core::plan::Plan;
use sim_core::plan::confidence::Confidence;

/// What the "Meets in" column counts.
const MEETS_IN: &str = "Of the setup's range runs (both ends of the model's measured error, three seeds each), those meeting the targets; only the cheapest setup of each kind is checked.";

fn usd(v: f64) -> String {
    crate::format::fmt_usd(v)
}

/// The answers to "which rate-limit tier do I need?": per API tier and
/// client, the smallest rate-limit multiple that meets the targets.
fn api_lines(p: &Plan) -> Vec<String> {
    p.api_tiers
        .iter()
        .map(|a| match (a.multiplier, a.usd_per_month) {
            (Some(m), Some(v)) => format!(
                "{} with {}: {m}× rate limits meet the targets ({}/month).",
                sim_core::api::backend_label(&a.tier),
                a.client,
                usd(v)
            ),
            _ => format!(
                "{} with {}: no multiple up to 8× meets the targets ({}).",
                sim_core::api::backend_label(&a.tier),
                a.client,
                a.why_not.as_deref().unwrap_or("no run")
            ),
        })
        .collect()
}

use crate::controls::views::show_results;

/// The check of the answer over the model's error: while it runs, how far;
/// then the confident setup beside the point answer, in words, with Apply
/// when it is another setup.
fn confidence_view(
    (confidence, progress): (RwSignal<Option<Confidence>>, RwSignal<Option<f64>>),
    scenario: RwSignal<Scenario>,
    error: RwSignal<Option<String>>,
    applied: RwSignal<Option<(usize, String)>>,
) -> impl IntoView {
    let words = move || {
        confidence.with(|c| match c {
            Some(c) => c.words(),
            None => progress.get().map_or(String::new(), |f| {
                format!(
                    "Checking the answer over the model's error (each setup at both ends of its measured band, three seeds each)… {:.0} %",
                    100.0 * f
                )
            }),
        })
    };
    // Apply the confident setup when it is not the point answer (the
    // applied marker's index past the table's rows).
    let other = move || {
        confidence.with(|c| {
            c.as_ref()
                .and_then(|c| c.confident.clone().filter(|k| c.point.as_ref() != Some(k)))
        })
    };
    // Its space is held from the start (`.plan-confidence-box`), so the
    // sentence and the button arriving never move the table and the charts
    // under a pointer.
    view! {
        <div class="plan-confidence-box" data-testid="plan-confidence-box">
        <p class="plan-confidence" data-testid="plan-confidence" data-done=move || confidence.with(|c| c.is_some()).to_string()>
            {words}
        </p>
        <Show when=move || other().is_some()>
            <button
                class="secondary"
                data-testid="plan-apply-confident"
                on:click=move |_| {
                    let Some(k) = other() else { return };
                    let mut s = scenario.get_untracked();
                    match sim_core::plan::apply_config(&mut s, &k.config, k.replicas) {
                        Ok(()) => {
                            scenario.set(s);
                            applied.set(Some((CONFIDENT_ROW, k.description.clone())));
                            show_results();
                        }
                        Err(e) => error.set(Some(e)),
                    }
                }
            >
                {move || other().map(|k| format!("Apply the confident setup ({})", k.description)).unwrap_or_default()}
            </button>
        </Show>
        </div>
    }
}

/// The applied marker of the confident setup (no row of the table).
const CONFIDENT_ROW: usize = usize::MAX;

/// A finished plan, with its check over the model's error.
pub fn plan_view(
    p: Plan,
    scenario: RwSignal<Scenario>,
    error: RwSignal<Option<String>>,
    applied: RwSignal<Option<(usize, String)>>,
    confidence: (RwSignal<Option<Confidence>>, RwSignal<Option<f64>>),
) -> impl IntoView {
    let checked = confidence.0;
    view! {
        <p class="hint" data-testid="plan-summary">
            {format!(
                "{} configurations ({} candidate setups): {} pruned by physics, {} spared as identical to a smaller batch size, {} simulations{}.",
                thousands(p.configurations as u64),
                thousands(p.candidates as u64),
                thousands(p.pruned.len() as u64),
                thousands(p.identical as u64),
                thousands(p.simulations as u64),
                match (p.unsettled.len(), p.unsettled_dearer) {
                    (0, 0) => String::new(),
                    (0, d) => format!(
                        "; {d} not run to the end, as even their smallest possible size costs more than the cheapest setup found (work budget {:.0}M simulated events)",
                        p.budget_events as f64 / 1e6
                    ),
                    (n, d) => format!(
                        "; {n} not settled within the work budget ({:.0}M simulated events) that could still beat the cheapest setup found{}",
                        p.budget_events as f64 / 1e6,
                        if d > 0 { format!("; {d} more not run to the end, as even their smallest possible size costs more") } else { String::new() }
                    ),
                },
            )}
        </p>
        <Show when={
            let any = !p.api_tiers.is_empty();
            move || any
        }>
            <h3>"Which rate-limit tier do you need?"</h3>
        </Show>
        <ul class="api-answers" data-testid="plan-api">
            {api_lines(&p).into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}
        </ul>
        {confidence_view(confidence, scenario, error, applied)}
        {data_table(
            "plan",
            Some("plan-results"),
            None,
            columns(&[
                Column::new("Setup"),
                Column::new("$/month"),
                Column::new("p99 TTFT"),
                Column::new("p99 TPOT"),
                Column::new("Margin"),
                Column::new("Meets in").help(MEETS_IN),
                Column::hidden("Apply"),
            ]),
            p.feasible
                    .iter()
                    .take(8)
                    .enumerate()
                    .map(|(i, e)| {
                        let (config, replicas) = (e.config.clone(), e.replicas);
                        let change = match &e.config {
                            sim_core::plan::Config::Api { tier, .. } => {
                                format!(" — changes the model: tier {tier}'s instead of the scenario's")
                            }
                            _ => format!(
                                " — changes the model: self-hosts {} instead of the API's",
                                scenario.with_untracked(|s| s.serving.model.name())
                            ),
                        };
                        let description = e.description.clone();
                        let meets = {
                            let (d, n) = (e.description.clone(), e.replicas);
                            move || {
                                checked.with(|c| {
                                    c.as_ref()
                                        .and_then(|c| c.checked.iter().find(|k| k.description == d && k.replicas == n))
                                        .map_or(String::new(), |k| format!("{} of {}", k.meets, k.runs))
                                })
                            }
                        };
                        let is_applied = move || applied.with(|a| a.as_ref().is_some_and(|a| a.0 == i));
                        view! {
                            <tr class:applied=is_applied data-testid=format!("plan-row-{i}")>
                                <td>
                                    {e.description.clone()}
                                    {e.changes_model.then(|| view! {
                                        <span class="model-change" data-testid="plan-model-change">
                                            {change.clone()}
                                        </span>
                                    })}
                                </td>
                                <td>{usd(e.usd_per_month)}</td>
                                <td>{crate::format::fmt_ms(e.summary.ttft_p99_ms)}</td>
                                <td>{crate::format::fmt_ms(e.summary.tpot_p99_ms)}</td>
                                <td>{format!("{:.0} %", e.verdict.as_ref().map_or(0.0, |m| m * 100.0))}</td>
                                <td data-testid=format!("plan-meets-{i}")>{meets}</td>
                                <td>
                                    {if config == sim_core::plan::Config::AsIs {
                                        view! { <span class="hint" data-testid="plan-as-is">"on screen"</span> }.into_any()
                                    } else { view! {
                                    <button
                                        class="secondary"
                                        data-testid=format!("plan-apply-{i}")
                                        title="Make this setup the scenario (Pin as A first to compare)"
                                        on:click=move |_| {
                                            let mut s = scenario.get_untracked();
                                            match sim_core::plan::apply_config(&mut s, &config, replicas) {
                                                Ok(()) => {
                                                    scenario.set(s);
                                                    applied.set(Some((i, description.clone())));
                                                    show_results();
                                                }
                                                Err(e) => error.set(Some(e)),
                                            }
                                        }
                                    >
                                        {move || if is_applied() { "Applied ✓" } else { "Apply" }}
                                    </button>
                                    }.into_any() }}
                                </td>
                            </tr>
                        }
                    })
                    .collect_view(),
        )}
        <h3>"Cheaper, but missed"</h3>
        <ul class="misses" data-testid="plan-misses">
            {p.near_misses
                .iter()
                .take(5)
                .map(|e| {
                    view! {
                        <li>
                            {format!(
                                "{} ({}/month): {}",
                                e.description,
                                usd(e.usd_per_month),
                                e.verdict.as_ref().err().cloned().unwrap_or_default(),
                            )}
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
}
