//! The split planner on the page (`sim_core::plan::split`): the cheapest
//! prefill:decode ratio of the scenario's setup beside the fewest colocated
//! replicas, run in slices, with Apply for the split.

use crate::format::fmt_ms;
use crate::table::{Column, columns, data_table};
use crate::work::jobs;
use leptos::prelude::*;
use sim_core::Scenario;
use sim_core::plan::disaggregation::{DisaggregationPlan, DisaggregationSearch, Tried};

/// Start the search for `s` in slices, until `stop`. Err says why it
/// cannot be asked.
pub fn start(
    s: &Scenario,
    progress: RwSignal<Option<f64>>,
    stop: &jobs::Stop,
    result: RwSignal<Option<DisaggregationPlan>>,
) -> Result<(), String> {
    let search = DisaggregationSearch::new(
        s,
        crate::plan::panel::targets(s),
        None,
        sim_core::plan::budget::PLAN_EVENTS,
    )?;
    jobs::run(search, progress, stop, move |j| {
        result.set(Some(j.finish()))
    });
    Ok(())
}

fn counts(t: &Tried) -> String {
    if t.prefill == 0 {
        format!(
            "{} replica{}, each prefilling and decoding",
            t.decode,
            if t.decode == 1 { "" } else { "s" }
        )
    } else {
        format!(
            "{}P{}D: {} prefilling, {} decoding",
            t.prefill, t.decode, t.prefill, t.decode
        )
    }
}

fn row(what: &'static str, t: Option<&Tried>) -> impl IntoView + use<> {
    let t = t.cloned();
    let value = t
        .as_ref()
        .map(|t| t.usd_per_month.to_string())
        .unwrap_or_default();
    view! {
        <tr data-testid=format!("split-plan-{what}") data-value=value>
            <th scope="row">{what}</th>
            {match t {
                Some(t) => view! {
                    <td>{counts(&t)}</td>
                    <td>{crate::format::fmt_usd(t.usd_per_month)}</td>
                    <td>{fmt_ms(t.ttft_p99_ms)}</td>
                    <td>{fmt_ms(t.tpot_p99_ms)}</td>
                }.into_any(),
                None => view! {
                    <td colspan="4">"no count up to 64 replicas a side meets the targets"</td>
                }.into_any(),
            }}
        </tr>
    }
}

/// The answer, with Apply for the split.
pub fn disaggregation_plan_view(
    p: DisaggregationPlan,
    scenario: RwSignal<Scenario>,
    applied: RwSignal<Option<(usize, String)>>,
) -> impl IntoView {
    use sim_core::plan::disaggregation::DisaggregationVerdict;
    let verdict = match p.verdict() {
        DisaggregationVerdict::Cheaper(share) => format!(
            "Splitting costs {:.0} % less than the cheapest colocated fleet of this setup.",
            share * 100.0
        ),
        DisaggregationVerdict::Dearer(share) => format!(
            "Splitting costs {:.0} % more than the cheapest colocated fleet: keep prefill and decode together.",
            share * 100.0
        ),
        DisaggregationVerdict::Same => {
            "Splitting costs the same as the cheapest colocated fleet.".into()
        }
        DisaggregationVerdict::OnlySplit => "Only a split meets the targets on this setup.".into(),
        DisaggregationVerdict::OnlyColocated => {
            "No split meets the targets: keep prefill and decode together.".into()
        }
        DisaggregationVerdict::Neither => {
            "Neither meets the targets on this setup: try the planner's other setups.".into()
        }
    };
    let apply = {
        let p = p.clone();
        move |_| {
            let s = scenario.get_untracked();
            if let (Some(split), Some(t)) = (p.apply(&s), &p.split) {
                scenario.set(split);
                applied.set(Some((
                    usize::MAX - 2,
                    format!("{}P{}D over {}", t.prefill, t.decode, p.link.name()),
                )));
                crate::controls::views::show_results();
            }
        }
    };
    let has_split = p.split.is_some();
    view! {
        <section class="split-plan" data-testid="split-plan" aria-label="Split prefill and decode">
            <h3>{format!("Split prefill and decode (caches over {})", p.link.name())}</h3>
            {data_table(
                "plan",
                None,
                None,
                columns(&[
                    Column::new(""),
                    Column::new("Replicas"),
                    Column::new("$/month"),
                    Column::new("p99 TTFT"),
                    Column::new("p99 TPOT"),
                ]),
                view! {
                    {row("colocated", p.colocated.as_ref())}
                    {row("split", p.split.as_ref())}
                },
            )}
            <p data-testid="split-plan-verdict">{verdict}</p>
            {p.unsettled.map(|u| view! { <p class="hint">{format!("Not settled: {u}.")}</p> })}
            <p class="hint">{format!(
                "{} runs, {} simulated events; each keeps the scenario's GPU, GPUs per replica, model and batching (the cheapest setup above searches those).",
                p.tried.len(),
                sim_core::format::thousands(p.events)
            )}</p>
            <Show when=move || has_split>
                <button class="secondary" data-testid="split-plan-apply" on:click=apply.clone()>
                    "Apply the split"
                </button>
            </Show>
        </section>
    }
}
