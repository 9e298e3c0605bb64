//! The by-tier bill: what each hosted API tier billed, by line (prompt
//! tokens at the input price, read from the provider's cache, written to
//! it, output tokens, provisioned units by the hour), beside its errors
//! and flex refusals, which are not billed. A batch API is a tier of its
//! own. The units', the refusals' and the hedged-away columns show only
//! when some tier has them.

use crate::format::fmt_usd;
use crate::table::{Column, data_table};
use leptos::prelude::*;
use sim_core::Report;

/// One row per API tier that saw a request in the run on screen.
pub fn per_tier_view(report: RwSignal<Option<Report>>) -> impl IntoView {
    let rows = move || {
        report.with(|r| {
            r.as_ref()
                .and_then(|r| r.api.as_ref())
                .map(|a| {
                    a.tiers
                        .iter()
                        .filter(|t| t.requests > 0)
                        .cloned()
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
    };
    // Columns only some runs have.
    let units = move || rows().iter().any(|t| t.bill.provisioned_usd > 0.0);
    let refusals = move || rows().iter().any(|t| t.flex_refused > 0);
    let moved = move || rows().iter().any(|t| t.hedged_away > 0);
    let money = |testid: &'static str, v: f64| {
        view! { <td data-testid=testid data-value=v.to_string()>{fmt_usd(v)}</td> }
    };
    let count = |testid: &'static str, n: u64| {
        view! {
            <td data-testid=testid data-value=n.to_string()>
                {sim_core::format::thousands(n)}
            </td>
        }
    };
    view! {
        <Show when=move || !rows().is_empty()>
            {data_table(
                "per-class",
                Some("per-tier"),
                Some("By API tier: what each tier billed over the run, by line (errors are not billed)"),
                move || {
                    let mut c = vec![
                        Column::new("Tier"),
                        Column::new("Requests"),
                        Column::new("Errors"),
                        Column::new("Input"),
                        Column::new("Cached input"),
                        Column::new("Cache writes"),
                        Column::new("Output"),
                    ];
                    if units() {
                        c.push(Column::new("Provisioned units"));
                    }
                    if refusals() {
                        c.push(Column::new("Flex refused"));
                    }
                    if moved() {
                        c.push(Column::new("Hedged away").help(
                            "Requests sent here that their hedged copy at another tier answered: that tier counts and bills them from then on; this one bills their prompt.",
                        ));
                    }
                    c.extend([Column::new("Run total"), Column::new("$ per month")]);
                    c
                },
                move || {
                        rows()
                            .into_iter()
                            .map(|t| {
                                let b = t.bill;
                                view! {
                                    <tr data-testid=format!("per-tier-{}", t.name)>
                                        <th scope="row">{t.name.clone()}</th>
                                        {count("requests", t.requests)}
                                        {count("errors", t.errors)}
                                        {money("input", b.input_usd)}
                                        {money("cached-input", b.cached_input_usd)}
                                        {money("cache-writes", b.cache_write_usd)}
                                        {money("output", b.output_usd)}
                                        {units().then(|| money("provisioned", b.provisioned_usd))}
                                        {refusals().then(|| count("flex-refused", t.flex_refused))}
                                        {moved().then(|| count("hedged-away", t.hedged_away))}
                                        {money("usd", t.usd)}
                                        {money("usd-month", t.usd_per_month)}
                                    </tr>
                                }
                            })
                            .collect_view()
                    },
            )}
        </Show>
    }
}
