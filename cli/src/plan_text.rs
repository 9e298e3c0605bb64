//! `tlab plan`'s readable answer.

use sim_core::Scenario;
use sim_core::format::{thousands, usd};
use sim_core::plan::{Plan, PlanSlo, budget::Question};
use tlab::summary::ms;

/// The plan `p` for scenario `s` as text: the software and targets, what the
/// question was, what ran, and the answers.
pub(crate) fn text(
    s: &Scenario,
    slo: PlanSlo,
    q: &Question,
    p: &Plan,
    seconds: f64,
    full: bool,
) -> String {
    let profile = s
        .serving
        .profile_statement(s.offered_tokens_per_s_per_replica());
    let mut o = format!(
        "self-hosted setups run on {} ({}); choose with --set software={}\n",
        profile.name,
        profile.source,
        sim_core::physics::ServingSoftware::ALL
            .map(|w| w.key())
            .join("|")
    );
    o += &format!(
        "targets: p99 TTFT {}, p99 TPOT {}, errors ≤ {} %, goodput ≥ {} %\n",
        ms(Some(slo.ttft_p99_ms)),
        ms(Some(slo.tpot_p99_ms)),
        slo.max_error_fraction * 100.0,
        slo.min_goodput * 100.0
    );
    for n in &q.notes {
        o += &format!("note: {n}\n");
    }
    o += &format!(
        "{} configurations ({} candidate setups), {} pruned without simulating, {} spared as identical to a smaller batch size, {} simulations in {:.1} s\n",
        thousands(p.configurations as u64),
        thousands(p.candidates as u64),
        thousands(p.pruned.len() as u64),
        thousands(p.identical as u64),
        thousands(p.simulations as u64),
        seconds
    );
    if !full {
        o += &format!(
            "work: {:.1}M of a {:.0}M-event budget\n",
            p.events as f64 / 1e6,
            p.budget_events as f64 / 1e6
        );
    }
    for a in &p.api_tiers {
        o += &match (a.multiplier, a.usd_per_month) {
            (Some(m), Some(v)) => format!(
                "API tier {} with {}: {m}× rate limits meet the targets ({}/month)\n",
                sim_core::api::backend_label(&a.tier),
                a.client,
                usd(v)
            ),
            _ => format!(
                "API tier {} with {}: no rate-limit multiple tried meets the targets ({})\n",
                sim_core::api::backend_label(&a.tier),
                a.client,
                a.why_not.as_deref().unwrap_or("no run")
            ),
        };
    }
    o += "cheapest setups meeting the targets:\n";
    for e in p.feasible.iter().take(10) {
        o += &format!(
            "  {:>9}/month  {}{}  (p99 TTFT {}, p99 TPOT {}, margin {:.0} %)\n",
            usd(e.usd_per_month),
            e.description,
            match (&e.config, e.changes_model) {
                (_, false) => String::new(),
                (sim_core::plan::Config::Api { tier, .. }, true) => {
                    format!(" [changes the model: tier {tier}'s instead of the scenario's]")
                }
                (_, true) => format!(
                    " [changes the model: self-hosts {} instead of the API's]",
                    s.serving.model.name()
                ),
            },
            ms(e.summary.ttft_p99_ms),
            ms(e.summary.tpot_p99_ms),
            e.verdict.as_ref().map_or(0.0, |m| m * 100.0)
        );
    }
    if p.feasible.is_empty() {
        o += "  none\n";
    }
    if !p.unsettled.is_empty() {
        o += &format!(
            "not settled within the work budget ({} configurations; --full settles them):\n",
            p.unsettled.len()
        );
        for (what, why) in p.unsettled.iter().take(10) {
            o += &format!("  {what}: {why}\n");
        }
    }
    if p.unsettled_dearer > 0 {
        o += &format!(
            "{} more configurations were not run to the end: even their smallest possible size costs more than the cheapest setup found\n",
            p.unsettled_dearer
        );
    }
    o += "cheaper setups that nearly made it:\n";
    for e in &p.near_misses {
        o += &format!(
            "  {:>9}/month  {}: {}\n",
            usd(e.usd_per_month),
            e.description,
            e.verdict.as_ref().err().map_or("", String::as_str)
        );
    }
    o
}

/// `tlab plan --split [--link L] [--full] [--json]`.
pub(crate) fn disaggregation_command(
    s: &Scenario,
    slo: PlanSlo,
    link: Option<&str>,
    full: bool,
    json: bool,
) -> Result<String, String> {
    let link = tlab::plan_ask::kv_link(link, tlab::plan_ask::flag)?;
    let budget = if full {
        u64::MAX
    } else {
        sim_core::plan::budget::PLAN_EVENTS
    };
    let started = std::time::Instant::now();
    let p = sim_core::plan::disaggregation::plan_disaggregation(s, slo, link, budget)?;
    if json {
        return serde_json::to_string_pretty(&p)
            .map(|j| j + "\n")
            .map_err(|e| e.to_string());
    }
    Ok(disaggregation_text(s, &p, started.elapsed().as_secs_f64()))
}

/// `tlab plan --split`: the colocated answer, the cheapest split, and every
/// count tried.
pub(crate) fn disaggregation_text(
    s: &sim_core::Scenario,
    p: &sim_core::plan::disaggregation::DisaggregationPlan,
    secs: f64,
) -> String {
    let setup = s.serving.hardware_text();
    let mut o = format!(
        "prefill and decode of {setup}, split over {}: {} simulated events in {secs:.1} s\n",
        p.link.name(),
        sim_core::format::thousands(p.events)
    );
    let line = |t: &sim_core::plan::disaggregation::Tried| {
        format!(
            "{}, {}/month, TTFT p99 {}, TPOT p99 {}: {}",
            if t.prefill == 0 {
                format!("{} replicas", t.decode)
            } else {
                format!("{}P{}D", t.prefill, t.decode)
            },
            usd(t.usd_per_month),
            ms(t.ttft_p99_ms),
            ms(t.tpot_p99_ms),
            match &t.verdict {
                Ok(m) => format!("meets the targets ({:.0} % to spare)", m * 100.0),
                Err(why) => why.clone(),
            }
        )
    };
    match &p.colocated {
        Some(t) => o += &format!("colocated: {}\n", line(t)),
        None => o += "colocated: no count up to the limit meets the targets\n",
    }
    match &p.split {
        Some(t) => {
            o += &format!("split:     {}\n", line(t));
            o += &format!(
                "  as a scenario: --set decode_pool=decode --set kv_link={} --set replicas={} --set replicas@decode={}\n",
                p.link.name(),
                t.prefill,
                t.decode
            );
        }
        None => o += "split: no prefill:decode ratio up to the limit meets the targets\n",
    }
    use sim_core::plan::disaggregation::DisaggregationVerdict;
    let compared = match p.verdict() {
        DisaggregationVerdict::Cheaper(share) => Some(format!("{:.0} % less than", share * 100.0)),
        DisaggregationVerdict::Dearer(share) => Some(format!("{:.0} % more than", share * 100.0)),
        DisaggregationVerdict::Same => Some("the same as".to_owned()),
        _ => None,
    };
    if let Some(c) = compared {
        o += &format!("the split costs {c} what colocated does\n");
    }
    if let Some(u) = &p.unsettled {
        o += &format!("not settled: {u}\n");
    }
    o += "tried:\n";
    for t in &p.tried {
        o += &format!("  {}\n", line(t));
    }
    o
}

/// `tlab plan --json`: the plan (byte for byte without `--confidence`),
/// with `confidence` after its fields when asked for.
pub fn json(
    p: &sim_core::plan::Plan,
    sure: Option<&sim_core::plan::confidence::Confidence>,
) -> Result<String, String> {
    #[derive(serde::Serialize)]
    struct WithConfidence<'a> {
        #[serde(flatten)]
        plan: &'a sim_core::plan::Plan,
        confidence: &'a sim_core::plan::confidence::Confidence,
    }
    match sure {
        None => serde_json::to_string_pretty(p),
        Some(confidence) => serde_json::to_string_pretty(&WithConfidence {
            plan: p,
            confidence,
        }),
    }
    .map(|j| j + "\n")
    .map_err(|e| e.to_string())
}
