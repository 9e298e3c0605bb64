//! A card for each pool beside the first: its own GPU, model, weights, GPUs
//! per replica, software, replicas, batching and autoscaling first, and
//! every other setting of a pool's own under "More settings" — each the
//! catalogue's parameter written `NAME@POOL` (what `tlab run --set` takes,
//! [`Param::per_pool`]),
//! and a button that removes the pool (the catalogue's `pools` edit, which
//! drops the rules naming it). The first pool is edited by the controls above.

use leptos::prelude::*;
use sim_core::Scenario;
use sim_core::params::{self, Kind, Param};

/// The settings a pool's card shows first, in order.
const FIRST: [&str; 9] = [
    "gpu",
    "model",
    "weights",
    "gpus_per_replica",
    "software",
    "replicas",
    "batching.policy",
    "batching.max_seqs",
    "autoscale",
];

/// Every setting a pool's card shows: [`FIRST`], then the rest of the
/// catalogue's per-pool parameters in its order.
fn settings() -> Vec<&'static Param> {
    let first = FIRST.iter().filter_map(|path| params::find(path));
    let rest = params::all().filter(|p| p.per_pool() && !FIRST.contains(&p.path));
    first.chain(rest).collect()
}

/// A setting as pool `pool` has it: its value as the catalogue writes it
/// (None where it does not apply to that pool) and, for a choice, its options.
type Shown = (Option<String>, Vec<(String, String)>);

/// Every setting of [`settings`] on pool `pool`, read from one copy of the
/// scenario with that pool in the first's place.
fn settings_on(s: &Scenario, pool: usize) -> Vec<Shown> {
    let mut s = s.clone();
    params::on_pool(&mut s, pool, |s| {
        settings()
            .into_iter()
            .map(|p| match p.kind {
                Kind::Number(n) => ((n.get)(s, 0).map(params::show), Vec::new()),
                Kind::Choice(c) => ((c.get)(s, 0), (c.options)(s, 0)),
                Kind::Text(t) => ((t.get)(s, 0), Vec::new()),
            })
            .collect()
    })
}

/// Set `path@name` to `value`, validated as every edit is; Err says why not.
fn set(scenario: RwSignal<Scenario>, name: &str, path: &str, value: &str) -> Result<(), String> {
    let mut s = scenario.get_untracked();
    params::apply(&mut s, &format!("{path}@{name}"), value)?;
    s.check().map_err(|e| e.problems.join("; "))?;
    scenario.set(s);
    Ok(())
}

fn setting(
    scenario: RwSignal<Scenario>,
    shown: Memo<Vec<Shown>>,
    (k, p): (usize, &'static Param),
    name: String,
    problem: RwSignal<Option<String>>,
) -> impl IntoView + use<> {
    let id = format!("pool-{}-{}", name.replace(' ', "-"), p.id);
    let value = Memo::new(move |_| shown.with(|v| v.get(k).and_then(|s| s.0.clone())));
    let on_change = {
        let name = name.clone();
        move |v: String| {
            problem.set(
                set(scenario, &name, p.path, &v)
                    .err()
                    .map(|e| format!("Pool {name}: {e}")),
            );
        }
    };
    let input = match p.kind {
        Kind::Choice(_) => {
            let options = move || shown.with(|v| v.get(k).map(|s| s.1.clone()).unwrap_or_default());
            view! {
                <select
                    id=id.clone()
                    data-testid=id.clone()
                    on:change=move |ev| on_change(event_target_value(&ev))
                >
                    {move || {
                        let current = value.get();
                        options()
                            .into_iter()
                            .map(|(k, label)| {
                                let selected = current.as_deref() == Some(k.as_str());
                                view! { <option value=k selected=selected>{label}</option> }
                            })
                            .collect_view()
                    }}
                </select>
            }
            .into_any()
        }
        _ => view! {
            <input
                id=id.clone()
                data-testid=id.clone()
                type="text"
                inputmode="decimal"
                prop:value=move || value.get().unwrap_or_default()
                on:change=move |ev| on_change(event_target_value(&ev))
            />
        }
        .into_any(),
    };
    view! {
        <div class="control" hidden=move || value.with(Option::is_none)>
            <label for=id title=p.help>{p.label}</label>
            {input}
        </div>
    }
}

/// The cards of the pools beside the first.
pub fn pool_cards(
    scenario: RwSignal<Scenario>,
    problem: RwSignal<Option<String>>,
) -> impl IntoView {
    // Rebuilt when the pools' names change, never on a value's edit.
    let names = Memo::new(move |_| {
        scenario.with(|s| {
            s.pools
                .iter()
                .map(|p| p.pool_name().to_owned())
                .collect::<Vec<_>>()
        })
    });
    move || {
        names
            .get()
            .into_iter()
            .enumerate()
            .map(|(k, name)| {
                let pool = k + 1;
                let slug = name.replace(' ', "-");
                let remove = {
                    let name = name.clone();
                    move |_| {
                        let mut s = scenario.get_untracked();
                        let rest: Vec<String> = s
                            .pools
                            .iter()
                            .map(|p| p.pool_name().to_owned())
                            .filter(|n| *n != name)
                            .collect();
                        match params::apply(&mut s, "pools", &rest.join(", ")) {
                            Ok(()) => scenario.set(s),
                            Err(e) => problem.set(Some(e)),
                        }
                    }
                };
                let shown = Memo::new(move |_| scenario.with(|s| settings_on(s, pool)));
                let all = settings();
                let (first, more): (Vec<_>, Vec<_>) =
                    all.into_iter().enumerate().partition(|(k, _)| *k < FIRST.len());
                let first = first
                    .into_iter()
                    .map(|kp| setting(scenario, shown, kp, name.clone(), problem))
                    .collect_view();
                let more = more
                    .into_iter()
                    .map(|kp| setting(scenario, shown, kp, name.clone(), problem))
                    .collect_view();
                view! {
                    <details class="group pool-card" open=true data-testid=format!("pool-card-{slug}")>
                        <summary>{format!("Pool {name}")}</summary>
                        <p class="hint">
                            {format!(
                                "Its own settings (on the command line: NAME@{name}); route to it under Routing rules."
                            )}
                        </p>
                        {first}
                        <details data-testid=format!("pool-card-{slug}-more")>
                            <summary>"More settings"</summary>
                            {more}
                        </details>
                        <button class="secondary" data-testid=format!("pool-card-{slug}-remove") on:click=remove>
                            {format!("Remove pool {name}")}
                        </button>
                    </details>
                }
            })
            .collect_view()
    }
}
