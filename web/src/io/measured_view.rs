//! A measured run the user imported, against the run on screen: per metric
//! (mean, p50, p90, p99) measured, simulated and the error; the
//! Kolmogorov–Smirnov distances; throughput; and the latency distribution
//! with the measured curves drawn over the simulated ones. Every number is
//! `sim_core::traces::measured`'s, the same the CLI's `tlab calibrate
//! --measured` prints.

use crate::charts::views::{ChartSpec, chart_canvas};
use crate::table::{Column, columns, data_table};
use leptos::prelude::*;
use sim_core::format::{duration_ms, rounded};
use sim_core::traces::measured::Measured;
use sim_core::{Report, Scenario};
use std::sync::Arc;

/// An imported measured run and the scenario that replays it strictly.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasuredImport {
    /// The file(s) it came from, in words.
    pub name: String,
    /// The run.
    pub run: Arc<Measured>,
    /// Its strict replay (same arrivals, same lengths, same server).
    pub replay: Scenario,
}

/// The comparison panel (hidden without a measured run).
pub fn measured_view(
    measured: RwSignal<Option<MeasuredImport>>,
    report: RwSignal<Option<Report>>,
    scenario: RwSignal<Scenario>,
) -> impl IntoView {
    let comparison = Memo::new(move |_| {
        measured
            .with(|m| report.with(|r| m.as_ref().zip(r.as_ref()).map(|(m, r)| m.run.compare(r))))
    });
    let edited =
        move || measured.with(|m| scenario.with(|s| m.as_ref().is_some_and(|m| m.replay != *s)));
    let rows = move || {
        comparison.with(|c| {
            c.as_ref().map_or_else(Vec::new, |c| {
                c.rows
                    .iter()
                    .map(|row| {
                        let errors = row.errors();
                        let cells: Vec<(String, String, String)> = (0..4)
                            .map(|i| {
                                let s = row.simulated[i];
                                (
                                    duration_ms(Some(row.measured[i])),
                                    duration_ms(s.is_finite().then_some(s)),
                                    if errors[i].is_finite() {
                                        format!("{:+.0} %", errors[i] * 100.0)
                                    } else {
                                        "—".into()
                                    },
                                )
                            })
                            .collect();
                        (row.metric, cells)
                    })
                    .collect()
            })
        })
    };
    // A chart of the measured run against the report on screen; hidden while
    // `model` has nothing to draw from (the series charts without a series).
    let measured_chart =
        |spec: ChartSpec,
         needs_series: bool,
         model: fn(&Report, &Measured) -> Option<lab_charts::model::Chart>| {
            chart_canvas(
                spec,
                move || {
                    measured.with(|m| {
                        m.as_ref()
                            .is_some_and(|m| !needs_series || !m.run.series.is_empty())
                    }) && report.with(|r| r.is_some())
                },
                move || {
                    measured.track();
                    report.track();
                },
                move || {
                    measured.with_untracked(|m| {
                        report.with_untracked(|r| {
                            m.as_ref()
                                .zip(r.as_ref())
                                .and_then(|(m, r)| model(r, &m.run))
                        })
                    })
                },
            )
        };
    let chart = measured_chart(
        ChartSpec {
            caption: Some("Dashed: as measured. Solid: this simulation."),
            ..ChartSpec::new("chart-measured")
        },
        false,
        |r, m| Some(lab_charts::distribution::with_measured(r, None, Some(m))),
    );
    // The engine's own series against the replay's, when the run has one.
    let series_chart = |id, model| measured_chart(ChartSpec::new(id), true, model);
    let queue_chart = series_chart("chart-measured-queue", lab_charts::measured::queue);
    let kv_chart = series_chart("chart-measured-kv", lab_charts::measured::kv);
    view! {
        <section
            class="measured"
            data-testid="measured"
            style:display=move || if measured.with(|m| m.is_some()) { "block" } else { "none" }
        >
            <h2>"Your measured run against this simulation"</h2>
            <p class="hint" data-testid="measured-source">
                {move || measured.with(|m| m.as_ref().map(|m| format!(
                    "{}: {} requests, replayed strictly (same arrivals, same lengths, same server). TTFT is from the request's queueing at the engine to its first token; time per output token is (end-to-end − TTFT) / (tokens − 1), as vLLM's per-request timestamps define them.",
                    m.name,
                    sim_core::format::thousands(m.run.requests.len() as u64)
                )).unwrap_or_default())}
            </p>
            <Show when=edited>
                <p class="banner warn" role="status" data-testid="measured-edited">
                    "The scenario has changed since the import: the simulated side is the edited scenario's, not the strict replay's."
                    <button data-testid="measured-replay" on:click=move |_| {
                        if let Some(m) = measured.get_untracked() {
                            scenario.set(m.replay);
                        }
                    }>"Back to the strict replay"</button>
                </p>
            </Show>
            {data_table(
                "measured-table",
                Some("measured-table"),
                None,
                columns(&[
                Column::new("Metric"),
                Column::new(""),
                Column::new("Mean"),
                Column::new("p50"),
                Column::new("p90"),
                Column::new("p99"),
            ]),
                move || rows().into_iter().map(|(metric, cells)| {
                        let measured_cells = cells.iter().map(|c| view! { <td>{c.0.clone()}</td> }).collect_view();
                        let simulated_cells = cells.iter().map(|c| view! {
                            <td>{c.1.clone()}" "<span class="error-pct">"("{c.2.clone()}")"</span></td>
                        }).collect_view();
                        view! {
                            <tr><th scope="row" rowspan="2">{metric}</th><td>"measured"</td>{measured_cells}</tr>
                            <tr><td>"simulated"</td>{simulated_cells}</tr>
                        }
                    }).collect_view(),
            )}
            <p class="hint" data-testid="measured-summary">
                {move || comparison.with(|c| c.as_ref().map(|c| format!(
                    "Kolmogorov–Smirnov distance (0 = the same distribution, 1 = disjoint; ±0.02): TTFT {:.2}, end-to-end {:.2}. Generated tokens/s: measured {}, simulated {}. Last request done at {:.1} s measured, {:.1} s simulated.",
                    c.ks_ttft,
                    c.ks_e2e,
                    rounded(c.output_tokens_per_s[0]),
                    rounded(c.output_tokens_per_s[1]),
                    c.finished_s[0],
                    c.finished_s[1],
                )).unwrap_or_default())}
            </p>
            {chart}
            {queue_chart}
            {kv_chart}
            <button data-testid="measured-forget" on:click=move |_| measured.set(None)>
                "Forget the measured run"
            </button>
        </section>
    }
}
