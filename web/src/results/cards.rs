//! The summary cards: the headline numbers of a run, each with its delta
//! against the pinned run A.

use crate::format::{fmt_ms, fmt_usd};
use crate::table::{Column, columns, data_table};
use leptos::prelude::*;
use sim_core::format::thousands;
use sim_core::{Report, Scenario};

pub use super::card_units::{Better, Unit, delta_text, difference_text, judged};

/// One summary card: label, test id, help, and the text and raw value to show.
#[derive(Clone, Copy)]
pub struct Card {
    /// Label.
    pub label: &'static str,
    /// Test id suffix (`card-…`).
    pub id: &'static str,
    /// One sentence defining the number.
    pub help: &'static str,
    /// Text and raw value, if the report has the number.
    pub value: fn(&Report) -> Option<(String, f64)>,
    /// A line under the value that explains it, when there is something to say.
    pub note: fn(&Report) -> Option<String>,
}

fn no_note(_: &Report) -> Option<String> {
    None
}

/// The GPUs' mean power, a month's energy and its cost where priced.
fn energy_note(r: &Report) -> Option<String> {
    let e = r.energy?;
    let cost = if r.cost.electricity_usd > 0.0 {
        format!(
            ", {} a month at the electricity price (in the costs)",
            fmt_usd(e.usd_per_month)
        )
    } else {
        String::new()
    };
    Some(format!(
        "{:.0} W per GPU on average; {} kWh a month{cost}",
        e.mean_watts_per_gpu,
        thousands(e.kwh_per_month.round() as u64)
    ))
}

/// Which targets a goodput below 100 % missed, and how often.
pub fn goodput_note(r: &Report) -> Option<String> {
    let o = &r.overall;
    let (ttft, tpot) = o.missed_shares();
    let mut missed = Vec::new();
    if o.ttft_target_missed > 0 {
        missed.push(format!(
            "first token > {} ({})",
            fmt_ms(Some(r.slo.ttft_ms)),
            sim_core::format::percent(ttft, 0)
        ));
    }
    if o.tpot_target_missed > 0 {
        missed.push(format!(
            "time per token > {} ({})",
            fmt_ms(Some(r.slo.tpot_ms)),
            sim_core::format::percent(tpot, 0)
        ));
    }
    let errors = r.requests.unanswered();
    if errors > 0 {
        let n = thousands(errors);
        missed.push(format!("{n} failed, refused or timed out"));
    }
    (!missed.is_empty()).then(|| format!("Missed: {}", missed.join("; ")))
}

/// Under a latency card when some requests got no answer: percentiles are
/// of the answered requests only, so a failing run can look fast.
pub fn answered_only_note(r: &Report) -> Option<String> {
    let f = r.requests.error_fraction();
    (f >= 0.01).then(|| {
        format!(
            "Of answered requests only: {:.0} % got no answer",
            f * 100.0
        )
    })
}

/// What the unanswered requests were, when more than one kind.
fn unanswered_note(r: &Report) -> Option<String> {
    let c = &r.requests;
    let parts: Vec<String> = [
        (c.failed, "failed"),
        (c.rejected, "refused"),
        (c.timed_out, "timed out"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{} {what}", sim_core::format::thousands(n)))
    .collect();
    (parts.len() > 1).then(|| parts.join(", "))
}

/// Every card, in page order.
pub fn cards() -> Vec<Card> {
    vec![
        Card {
            label: "Time to first token, p50",
            id: "ttft-p50",
            help: "TTFT: from sending a request to the first token of the answer; half of the requests are faster.",
            value: |r| r.overall.ttft.p50_ms.map(|v| (fmt_ms(Some(v)), v)),
            note: answered_only_note,
        },
        Card {
            label: "Time to first token, p99",
            id: "ttft-p99",
            help: "The TTFT that 99 % of requests beat: what your unluckiest users see.",
            value: |r| r.overall.ttft.p99_ms.map(|v| (fmt_ms(Some(v)), v)),
            note: answered_only_note,
        },
        Card {
            label: "First visible token, p50",
            id: "visible-p50",
            help: "A reasoning model thinks before it answers: the wait until the first word the user sees, the thinking included; half of the requests are faster.",
            value: |r| {
                (r.overall.thinking.count > 0)
                    .then_some(r.overall.first_visible.p50_ms)
                    .flatten()
                    .map(|v| (fmt_ms(Some(v)), v))
            },
            note: answered_only_note,
        },
        Card {
            label: "Thinking, p50",
            id: "thinking-p50",
            help: "From a reasoning model's first hidden token to its first visible one: its reasoning tokens at its output speed.",
            value: |r| r.overall.thinking.p50_ms.map(|v| (fmt_ms(Some(v)), v)),
            note: no_note,
        },
        Card {
            label: "Time per output token, p50",
            id: "tpot-p50",
            help: "TPOT: the average gap between tokens after the first; it sets how fast the answer streams.",
            value: |r| r.overall.tpot.p50_ms.map(|v| (fmt_ms(Some(v)), v)),
            note: no_note,
        },
        Card {
            label: "Per-user speed, p50",
            id: "user-speed",
            help: "How fast one user's answer streams: 1 ÷ the median time per output token.",
            value: |r| {
                r.overall
                    .tpot
                    .p50_ms
                    .filter(|t| *t > 0.0)
                    .map(|t| (format!("{:.0} tok/s", 1000.0 / t), 1000.0 / t))
            },
            note: no_note,
        },
        Card {
            label: "Tokens per decode step",
            id: "spec-tokens",
            help: "Under speculative decoding: the tokens each decode step gave a sequence on average — its accepted drafts and one of its own (1 without speculation).",
            value: |r| {
                r.speculative
                    .as_ref()
                    .and_then(|s| s.tokens_per_step)
                    .map(|t| (format!("{t:.2}"), t))
            },
            note: |r| {
                r.speculative.as_ref().map(|s| {
                    format!(
                        "the acceptance rate promises {:.2}",
                        s.expected_tokens_per_step
                    )
                })
            },
        },
        Card {
            label: "Time per output token, p99",
            id: "tpot-p99",
            help: "The TPOT that 99 % of requests beat: the slowest streams your users see.",
            value: |r| r.overall.tpot.p99_ms.map(|v| (fmt_ms(Some(v)), v)),
            note: no_note,
        },
        Card {
            label: "End-to-end, p50",
            id: "e2e-p50",
            help: "From sending a request to its last token, including any queueing and retries; half of the requests are faster.",
            value: |r| r.overall.e2e.p50_ms.map(|v| (fmt_ms(Some(v)), v)),
            note: answered_only_note,
        },
        Card {
            label: "End-to-end, p99",
            id: "e2e-p99",
            help: "From sending a request to its last token, including any queueing and retries.",
            value: |r| r.overall.e2e.p99_ms.map(|v| (fmt_ms(Some(v)), v)),
            note: answered_only_note,
        },
        Card {
            label: "Task latency, p50",
            id: "task-p50",
            help: "A task is everything one user request sets off (an agent's chain of calls, a conversation's turns): from its first call to its last answer; half of the tasks are faster.",
            value: |r| {
                // Only where a task is more than one call.
                (r.requests.tasks_completed < r.requests.completed)
                    .then_some(r.overall.task_latency.p50_ms)
                    .flatten()
                    .map(|v| (fmt_ms(Some(v)), v))
            },
            note: answered_only_note,
        },
        Card {
            label: "Task latency, p99",
            id: "task-p99",
            help: "The task latency that 99 % of tasks beat.",
            value: |r| {
                (r.requests.tasks_completed < r.requests.completed)
                    .then_some(r.overall.task_latency.p99_ms)
                    .flatten()
                    .map(|v| (fmt_ms(Some(v)), v))
            },
            note: answered_only_note,
        },
        Card {
            label: "Output throughput",
            id: "throughput",
            help: "Tokens generated per second across all requests: what the system as a whole delivers.",
            value: |r| {
                Some((
                    sim_core::format::tokens_per_s(r.throughput.output_tokens_per_s),
                    r.throughput.output_tokens_per_s,
                ))
            },
            note: no_note,
        },
        Card {
            label: "Goodput",
            id: "goodput",
            help: "The share of requests that completed within both targets (time to the first visible token, and time per output token); errors count as misses.",
            value: |r| {
                r.throughput
                    .goodput_fraction
                    .map(|g| (sim_core::format::percent(g, 1), g * 100.0))
            },
            note: goodput_note,
        },
        Card {
            label: "Cost per million output tokens",
            id: "usd-per-mtok",
            help: "What the run cost (servers by the hour plus API spend) divided by the tokens it generated.",
            value: |r| r.cost.usd_per_mtok_output.map(|v| (fmt_usd(v), v)),
            note: no_note,
        },
        Card {
            label: "Cost per month",
            id: "usd-per-month",
            help: "Servers for 730 hours at this size, plus API spend at this load for a month.",
            value: |r| Some((fmt_usd(r.cost.usd_per_month), r.cost.usd_per_month)),
            note: no_note,
        },
        Card {
            label: "Cost per request",
            id: "usd-per-request",
            help: "What the run cost (servers by the hour plus API spend) divided by the requests completed.",
            value: |r| r.cost.usd_per_request.map(|v| (fmt_usd(v), v)),
            note: no_note,
        },
        Card {
            label: "Cost per year",
            id: "usd-per-year",
            help: "Twelve months of the monthly cost: servers for 8,760 hours plus API spend at this load.",
            value: |r| {
                let year = r.cost.usd_per_year();
                Some((fmt_usd(year), year))
            },
            note: no_note,
        },
        Card {
            label: "Energy per output token",
            id: "energy",
            help: "What the GPUs drew, idle while up and more while running passes, divided by the tokens generated; from each GPU's idle and board power and its passes' work (docs/calibration-public.md, Energy).",
            value: |r| {
                let j = r.energy?.joules_per_output_token?;
                Some((format!("{j:.2} J"), j))
            },
            note: energy_note,
        },
        Card {
            label: "429 responses",
            id: "throttled",
            help: "429: the provider refusing a request because the account is over its rate limit.",
            value: |r| {
                r.api
                    .as_ref()
                    .map(|a| (thousands(a.throttled_429), a.throttled_429 as f64))
            },
            note: no_note,
        },
        Card {
            label: "Saved by prompt caching",
            id: "cache-saving",
            help: "What the provider's prompt cache took off the API bill over the run: prompt tokens read from it at the cached price, less any premium for writing it.",
            value: |r| {
                let saved = r.api.as_ref()?.usd_saved_by_cache()?;
                Some((fmt_usd(saved), saved))
            },
            note: no_note,
        },
        Card {
            label: "Requests hitting the prompt cache",
            id: "cache-hits",
            help: "The share of the API's billed requests that read part of their prompt from the provider's prompt cache.",
            value: |r| {
                let a = r.api.as_ref().filter(|a| a.cache_used())?;
                let pct = 100.0 * a.cache_hit_rate();
                Some((format!("{pct:.1} %"), pct))
            },
            note: no_note,
        },
        Card {
            label: "Failed, refused or timed out",
            id: "failed",
            help: "Requests with no answer: an error reached the user, a queue turned them away, or their client gave up waiting (its timeout).",
            value: |r| {
                let n = r.requests.unanswered();
                let pct = 100.0 * r.requests.error_fraction();
                Some((format!("{} ({pct:.1} %)", thousands(n)), pct))
            },
            note: unanswered_note,
        },
    ]
}

/// The cards for the current report, with deltas against the pinned one.
pub fn cards_view(
    report: RwSignal<Option<Report>>,
    pinned: RwSignal<Option<(Scenario, Report)>>,
) -> impl IntoView {
    cards()
        .into_iter()
        .map(|c| {
            let value = c.value;
            let unit = c.unit();
            let way = c.better();
            let note = c.note;
            let id = c.id;
            let target_of = move |r: &Report| {
                let (_, v) = value(r)?;
                let t = c.target(r)?;
                Some(if v <= t { "met" } else { "missed" })
            };
            let against_target = move || report.with(|r| r.as_ref().and_then(target_of));
            let note_text = move || report.with(|r| r.as_ref().and_then(note));
            let shown = move || report.with(|r| r.as_ref().and_then(value));
            let compared = move || {
                let b = shown()?.1;
                let a = pinned.with(|p| p.as_ref().and_then(|(_, r)| value(r)))?.1;
                Some((a, b))
            };
            let delta = move || {
                let (a, b) = compared()?;
                let text = delta_text(unit, a, b);
                Some(match judged(way, unit, a, b) {
                    Some(j) => format!("{text} — {j}"),
                    None => text,
                })
            };
            let judgement = move || {
                compared()
                    .and_then(|(a, b)| judged(way, unit, a, b))
                    .unwrap_or("same")
            };
            view! {
                <Show when=move || shown().is_some()>
                    <div
                        class="card"
                        title=c.help
                        data-target=move || against_target().unwrap_or("none")
                        class:target-met=move || against_target() == Some("met")
                        class:target-missed=move || against_target() == Some("missed")
                    >
                        <span class="card-label">{c.label}</span>
                        <span
                            class="card-value"
                            data-testid=format!("card-{}", c.id)
                            data-value=move || shown().map(|(_, v)| v.to_string()).unwrap_or_default()
                        >
                            {move || shown().map(|(t, _)| t).unwrap_or_default()}
                        </span>
                        <Show when=move || delta().is_some()>
                            <span
                                class="delta"
                                data-testid=format!("card-{id}-delta")
                                data-judged=judgement
                                class:better=move || judgement() == "better"
                                class:worse=move || judgement() == "worse"
                            >
                                {move || delta().unwrap_or_default()}
                            </span>
                        </Show>
                        <Show when=move || note_text().is_some()>
                            <span class="card-note" data-testid=format!("card-{id}-note")>
                                {move || note_text().unwrap_or_default()}
                            </span>
                        </Show>
                    </div>
                </Show>
            }
        })
        .collect_view()
}

/// Where classes differ (two models, a chat and a batch job): each class's
/// own numbers, so a mix is never read as one population.
pub fn per_class_view(report: RwSignal<Option<Report>>) -> impl IntoView {
    let rows = move || {
        report.with(|r| {
            r.as_ref()
                .filter(|r| r.per_class.len() > 1)
                .map(|r| r.per_class.clone())
                .unwrap_or_default()
        })
    };
    view! {
        <Show when=move || !rows().is_empty()>
            {data_table(
                "per-class",
                Some("per-class"),
                Some("By class: each class's own numbers (the cards above mix them)"),
                columns(&[
                    Column::new("Class"),
                    Column::new("Completed"),
                    Column::new("First token, p50"),
                    Column::new("First token, p99"),
                    Column::new("First visible token, p50"),
                    Column::new("Thinking, p50"),
                    Column::new("End-to-end, p50"),
                    Column::new("End-to-end, p99"),
                    Column::new("Task, p50"),
                ]),
                    move || {
                        rows()
                            .into_iter()
                            .map(|k| {
                                let name = k.name.clone();
                                view! {
                                    <tr data-testid=format!("per-class-{name}")>
                                        <th scope="row">{k.name.clone()}</th>
                                        <td>{thousands(k.completed)}</td>
                                        <td data-testid="ttft-p50" data-value=k.ttft.p50_ms.map(|v| v.to_string()).unwrap_or_default()>
                                            {fmt_ms(k.ttft.p50_ms)}
                                        </td>
                                        <td data-testid="ttft-p99" data-value=k.ttft.p99_ms.map(|v| v.to_string()).unwrap_or_default()>
                                            {fmt_ms(k.ttft.p99_ms)}
                                        </td>
                                        <td data-testid="visible-p50" data-value=k.first_visible.p50_ms.map(|v| v.to_string()).unwrap_or_default()>
                                            {fmt_ms(k.first_visible.p50_ms)}
                                        </td>
                                        <td>{fmt_ms(k.thinking.p50_ms)}</td>
                                        <td>{fmt_ms(k.e2e.p50_ms)}</td>
                                        <td>{fmt_ms(k.e2e.p99_ms)}</td>
                                        <td data-testid="task-p50" data-value=k.task_latency.p50_ms.map(|v| v.to_string()).unwrap_or_default()>
                                            {fmt_ms(k.task_latency.p50_ms)}
                                        </td>
                                    </tr>
                                }
                            })
                            .collect_view()
                    },
            )}
        </Show>
    }
}

/// The run's headline numbers in one line that stays on screen while a
/// control moves on a phone (CSS shows it only on narrow screens).
pub fn live_summary(report: RwSignal<Option<Report>>) -> impl IntoView {
    let line = move || {
        report.with(|r| {
            r.as_ref().map(|r| {
                let goodput = r
                    .throughput
                    .goodput_fraction
                    .map_or("—".to_owned(), |g| sim_core::format::percent(g, 0));
                view! {
                    <span>"TTFT p99 "<strong>{fmt_ms(r.overall.ttft.p99_ms)}</strong></span>
                    <span>"per token "<strong>{fmt_ms(r.overall.tpot.p50_ms)}</strong></span>
                    <span><strong>{sim_core::format::rounded(r.throughput.output_tokens_per_s)}</strong>" tok/s"</span>
                    <span>"goodput "<strong>{goodput}</strong></span>
                    <span><strong>{fmt_usd(r.cost.usd_per_month)}</strong>"/month"</span>
                }
            })
        })
    };
    view! {
        <div class="live-summary" data-testid="live-summary" aria-label="The run's headline numbers">
            {line}
        </div>
    }
}

#[cfg(test)]
#[path = "cards_tests.rs"]
mod tests;
