//! The by-pool table: each self-hosted pool's own numbers, when a scenario
//! has several or one autoscales (the cards above add them up).

use crate::format::{fmt_ms, fmt_usd};
use crate::table::{Column, columns, data_table};
use leptos::prelude::*;
use sim_core::Report;

/// One row per pool of the run on screen, from its report only.
pub fn per_pool_view(report: RwSignal<Option<Report>>) -> impl IntoView {
    let rows = move || report.with(|r| r.as_ref().map(|r| r.pools.clone()).unwrap_or_default());
    let handoff = move || report.with(|r| r.as_ref().and_then(|r| r.disaggregation.clone()));
    view! {
        <Show when=move || !rows().is_empty()>
            {data_table(
                "per-class",
                Some("per-pool"),
                Some("By pool: each pool's own numbers (the cards above add them up)"),
                columns(&[
                    Column::new("Pool"),
                    Column::new("Replicas × GPUs, model"),
                    Column::new("Replicas up: mean, most"),
                    Column::new("Completed"),
                    Column::new("First token, p50"),
                    Column::new("First token, p99"),
                    Column::new("Per token, p50"),
                    Column::new("Output tok/s"),
                    Column::new("GPU busy"),
                    Column::new("$ per month"),
                ]),
                move || {
                        rows()
                            .into_iter()
                            .map(|p| {
                                view! {
                                    <tr data-testid=format!("per-pool-{}", p.name)>
                                        <th scope="row">{p.name.clone()}</th>
                                        <td>{p.hardware.clone()}</td>
                                        <td data-testid="replicas" data-peak=p.replicas_peak.to_string() data-hours=p.replica_hours.to_string()>
                                            {format!("{:.1}, {}", p.replicas_mean, p.replicas_peak)}
                                        </td>
                                        <td data-testid="completed" data-value=p.completed.to_string()>
                                            {match &p.prefills_for {
                                                Some(d) => format!("prefills for {d}"),
                                                None => sim_core::format::thousands(p.completed),
                                            }}
                                        </td>
                                        <td data-testid="ttft-p50" data-value=p.ttft.p50_ms.map(|v| v.to_string()).unwrap_or_default()>
                                            {fmt_ms(p.ttft.p50_ms)}
                                        </td>
                                        <td>{fmt_ms(p.ttft.p99_ms)}</td>
                                        <td>{fmt_ms(p.tpot.p50_ms)}</td>
                                        <td>{sim_core::format::rounded(p.output_tokens_per_s)}</td>
                                        <td>{format!("{:.0} %", p.gpu_busy_fraction * 100.0)}</td>
                                        <td data-testid="usd-month" data-value=p.usd_per_month.to_string()>
                                            {fmt_usd(p.usd_per_month)}
                                        </td>
                                    </tr>
                                }
                            })
                            .collect_view()
                    },
            )}
            {move || {
                handoff()
                    .map(|h| {
                        view! {
                            <p class="note" data-testid="handoff" data-transfers=h.transfers.to_string()
                                data-transfer-mean-ms=h.transfer.mean_ms.map(|v| v.to_string()).unwrap_or_default()>
                                {format!("KV-cache hand-off, prefill to decode: {}.", h.describe())}
                            </p>
                        }
                    })
            }}
        </Show>
    }
}
