//! How sure the numbers are: the range runs' verdict, each headline
//! figure's range and where the band behind them was measured
//! (`sim_core::ranges`), shown once the runs of the scenario on screen
//! finish.

use crate::table::{columns, data_table};
use leptos::prelude::*;
use sim_core::compare::LoadCheck;
use sim_core::ranges::{Ranges, Verdict};

/// The panel: the verdict in words (and, near the knee, the loads between
/// which the fleet tips over) and the runs that meet the targets; a click
/// opens each figure with its range and what the runs were.
pub fn ranges_view(
    ranges: Signal<Option<Ranges>>,
    load: RwSignal<Option<LoadCheck>>,
) -> impl IntoView {
    let verdict = move || {
        ranges.with(|r| {
            r.as_ref().map_or(String::new(), |r| {
                let mut words = r.verdict.words().to_owned();
                let tipping = r
                    .basis
                    .as_ref()
                    .zip(load.get())
                    .filter(|_| r.verdict != Verdict::Stable)
                    .map(|(b, l)| sim_core::ranges::tipping_words(&l, b));
                if let Some(t) = tipping {
                    words = format!("{words}. {t}");
                }
                crate::format::capitalised(&words)
            })
        })
    };
    let verdict_id = move || ranges.with(|r| r.as_ref().map_or("", |r| r.verdict.id()));
    let rows = move || {
        ranges.with(|r| {
            r.as_ref().map_or(Vec::new(), |r| {
                r.lines()
                    .into_iter()
                    .zip(&r.figures)
                    .map(|((label, text), (name, f))| {
                        view! {
                            <tr data-testid=format!("range-{name}") data-value=f.value.to_string() data-low=f.low.to_string() data-high=f.high.to_string()>
                                <th scope="row">{label}</th>
                                <td>{text}</td>
                            </tr>
                        }
                    })
                    .collect()
            })
        })
    };
    let met = move || {
        ranges.with(|r| {
            r.as_ref().map_or(String::new(), |r| {
                format!(
                    "Meets the scenario's targets in {} of {} runs.",
                    r.meeting_targets, r.runs
                )
            })
        })
    };
    let method = move || {
        ranges.with(|r| {
            r.as_ref()
                .map_or(String::new(), |r| format!("Ranges from {}.", r.method()))
        })
    };
    let provenance = move || ranges.with(|r| r.as_ref().and_then(|r| r.provenance.clone()));
    let short = move || {
        provenance().map_or(String::new(), |p| {
            format!(" {}.", crate::format::capitalised(&p.short()))
        })
    };
    let inside = move || provenance().map_or(String::new(), |p| p.inside().to_string());
    let beyond = move || provenance().map_or(String::new(), |p| p.beyond().to_string());
    let provenance_lines = move || {
        provenance().map_or(Vec::new(), |p| {
            let mut lines = p.lines().into_iter();
            let head = lines.next().unwrap_or_default();
            let axes: Vec<_> = lines
                .zip(p.axes.iter().map(|a| (a.name, a.inside())))
                .map(|(l, (name, inside))| {
                    view! { <li data-testid=format!("provenance-{name}") data-inside=inside.to_string()>{l}</li> }
                })
                .collect();
            vec![view! { <p>{head}</p><ul>{axes}</ul> }]
        })
    };
    view! {
        <Show when=move || ranges.with(|r| r.is_some())>
            <section class="ranges" data-testid="ranges" aria-label="How sure these numbers are">
                <h3>"How sure"</h3>
                <p class="ranges-verdict" data-testid="ranges-verdict" data-value=verdict_id>{verdict}</p>
                // Each figure's range a click away, so the story and the
                // controls stay within two screens on a phone.
                <details class="ranges-detail" data-testid="ranges-detail">
                    <summary>
                        <span data-testid="ranges-targets">{met}</span>
                        <span data-testid="ranges-where" data-inside=inside data-beyond=beyond>{short}</span>
                        <span class="hint">" Each number's range, and how the runs were made."</span>
                    </summary>
                    {data_table("ranges-table", None, None, columns(&[]), rows)}
                    <p class="hint" data-testid="ranges-method">{method}</p>
                    <div class="hint" data-testid="ranges-provenance">{provenance_lines}</div>
                </details>
            </section>
        </Show>
    }
}
