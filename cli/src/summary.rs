//! The readable summary `tlab run` prints.

use sim_core::report::LatencyStats;
use sim_core::{Report, Scenario};

pub use sim_core::format::duration_ms as ms;
use sim_core::format::{plain, rounded, thousands, usd};

fn line(name: &str, l: &LatencyStats) -> String {
    format!(
        "  {name:<12} mean {:>9}  p50 {:>9}  p90 {:>9}  p99 {:>9}  max {:>9}\n",
        ms(l.mean_ms),
        ms(l.p50_ms),
        ms(l.p90_ms),
        ms(l.p99_ms),
        ms(l.max_ms)
    )
}

/// Text from a scenario made safe for a terminal: control characters (escape
/// sequences, carriage returns…) are shown escaped, never sent as they are.
pub fn printable(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// A readable summary of a report.
pub fn summary(s: &Scenario, r: &Report) -> String {
    let mut o = String::new();
    let name = if s.name.is_empty() {
        "scenario".to_owned()
    } else {
        printable(&s.name)
    };
    o += &format!(
        "{name} — seed {}, {:.1} s simulated, {} events\n",
        s.seed,
        r.sim_time_s,
        thousands(r.events)
    );
    for w in &r.warnings {
        o += &format!("warning: {w}\n");
    }
    if s.uses_fleet() {
        let p = s
            .serving
            .profile_statement(s.offered_tokens_per_s_per_replica());
        o += &format!("serving: {} profile, {}\n{}\n", p.name, p.source, p.trust);
    }
    let c = &r.requests;
    o += &format!(
        "requests: {} arrived, {} completed, {} rejected, {} failed, {} timed out, {} in flight; {} ({:.1} %) failed, refused or timed out\n",
        thousands(c.arrived),
        thousands(c.completed),
        thousands(c.rejected),
        thousands(c.failed),
        thousands(c.timed_out),
        thousands(c.in_flight),
        thousands(c.unanswered()),
        100.0 * c.error_fraction()
    );
    o += "latency:\n";
    o += &line("TTFT", &r.overall.ttft);
    if r.overall.thinking.count > 0 {
        o += &line("thinking", &r.overall.thinking);
        o += &line("first visible token", &r.overall.first_visible);
    }
    o += &line("TPOT", &r.overall.tpot);
    o += &line("end-to-end", &r.overall.e2e);
    o += &line("queue wait", &r.overall.queue_wait);
    if s.workload.classes.iter().any(|k| k.calls_per_task > 1) {
        o += &line("task", &r.overall.task_latency);
    }
    if r.per_class.len() > 1 {
        for k in &r.per_class {
            o += &format!("  class {}:\n", printable(&k.name));
            o += &line("  TTFT", &k.ttft);
            o += &line("  end-to-end", &k.e2e);
        }
    }
    for (i, st) in r.stages.iter().enumerate() {
        o += &format!(
            "  stage {i} ({:.0}–{:.0} s at {} req/s): TTFT mean {}, TPOT mean {}, end-to-end mean {} p99 {}, {} output tok/s\n",
            st.start_s,
            st.end_s,
            plain(st.rate_per_s),
            ms(st.ttft.mean_ms),
            ms(st.tpot.mean_ms),
            ms(st.e2e.mean_ms),
            ms(st.e2e.p99_ms),
            rounded(st.output_tokens_per_s)
        );
    }
    let t = &r.throughput;
    o += &format!(
        "throughput: {} output tok/s, {} input tok/s, {:.2} req/s; SLO met by {}\n",
        rounded(t.output_tokens_per_s),
        rounded(t.input_tokens_per_s),
        t.requests_per_s,
        t.goodput_fraction
            .map_or("–".into(), |g| format!("{:.1} % of requests", g * 100.0))
    );
    if r.cost.gpus > 0 {
        let u = &r.utilisation;
        o += &format!(
            "utilisation: GPU busy {:.0} %, mean batch {:.1}, KV mean {:.0} % / peak {:.0} %, {} preemptions, MFU {:.0} %, bandwidth {:.0} %\n",
            u.gpu_busy_fraction * 100.0,
            u.mean_batch_size,
            u.kv_use_mean * 100.0,
            u.kv_use_peak * 100.0,
            u.preemptions,
            u.mfu * 100.0,
            u.bandwidth_utilisation * 100.0
        );
        if u.prefix_cache_hit_rate > 0.0 {
            o += &format!(
                "prefix cache: {:.1} % of prompt tokens served from cache\n",
                u.prefix_cache_hit_rate * 100.0
            );
        }
        if let Some(sp) = &r.speculative {
            o += &format!(
                "speculative decoding: {} tokens a decode step per sequence (the acceptance rate promises {:.2})\n",
                sp.tokens_per_step
                    .map_or("–".to_owned(), |t| format!("{t:.2}")),
                sp.expected_tokens_per_step
            );
        }
        if let Some(l) = &r.physical_limit {
            o += &format!(
                "physical limit: {} output tok/s (decode at datasheet peak, batch {}, contexts of {} tokens); this run reached {:.0} % of it\n",
                rounded(l.output_tokens_per_s),
                l.batch,
                l.context_tokens,
                l.achieved_fraction * 100.0
            );
        }
    }
    for p in &r.pools {
        if let Some(d) = &p.prefills_for {
            o += &format!(
                "  pool {} ({}): prefills for {}, GPU busy {:.0} %, mean batch {:.1}, {:.0} prompt tok/s; {:.2} replica-hours; {} ({} a month)\n",
                printable(&p.name),
                p.hardware,
                printable(d),
                p.gpu_busy_fraction * 100.0,
                p.mean_batch_size,
                p.input_tokens_per_s,
                p.replica_hours,
                usd(p.usd),
                usd(p.usd_per_month)
            );
            continue;
        }
        o += &format!(
            "  pool {} ({}): {} completed, TTFT mean {} p99 {}, TPOT mean {}, {} output tok/s, GPU busy {:.0} %, mean batch {:.1}; replicas {:.1} on average, {} at most, {:.2} replica-hours; {} ({} a month)\n",
            printable(&p.name),
            p.hardware,
            p.completed,
            ms(p.ttft.mean_ms),
            ms(p.ttft.p99_ms),
            ms(p.tpot.mean_ms),
            rounded(p.output_tokens_per_s),
            p.gpu_busy_fraction * 100.0,
            p.mean_batch_size,
            p.replicas_mean,
            p.replicas_peak,
            p.replica_hours,
            usd(p.usd),
            usd(p.usd_per_month)
        );
    }
    if let Some(h) = &r.disaggregation {
        o += &format!("KV hand-off: {}\n", h.describe());
    }
    if let Some(a) = &r.api {
        o += &format!(
            "API: {} requests, {} attempts ({:.2} per request), {} × 429, {} failed, {} turned away by the client queue\n",
            thousands(a.requests),
            thousands(a.attempts),
            a.attempts_per_request,
            thousands(a.throttled_429),
            thousands(a.failed_429 + a.failed_too_large),
            thousands(a.rejected_by_client)
        );
        if a.errors > 0 {
            o += &format!(
                "  provider errors: {} answered with an error (not billed), {} requests failed after them\n",
                thousands(a.errors),
                thousands(a.failed_errors)
            );
        }
        for t in a.tiers.iter().filter(|t| t.breaker_opened > 0) {
            o += &format!(
                "  breaker: opened {} times for tier {}, {} s in all\n",
                thousands(t.breaker_opened),
                printable(&t.name),
                sim_core::format::plain(t.breaker_open_s)
            );
        }
        if a.hedges > 0 {
            let to = s
                .api
                .as_ref()
                .and_then(|x| x.hedge.as_ref())
                .and_then(|h| h.to.as_deref())
                .map_or(String::new(), |to| format!(" to tier {}", printable(to)));
            o += &format!(
                "  hedges: {} copies sent{to}, {} streamed first and answered; the cancelled attempts' prompts cost {}\n",
                thousands(a.hedges),
                thousands(a.hedges_won),
                usd(a.usd_hedges_cancelled)
            );
        }
        if a.fallbacks > 0 {
            let to = if a.fallbacks_by_step.is_empty() {
                s.api
                    .iter()
                    .flat_map(|x| &x.fallback)
                    .map(|name| printable(name))
                    .collect::<Vec<_>>()
                    .join(", ")
            } else {
                // A chain: how many reached each step.
                a.fallbacks_by_step
                    .iter()
                    .map(|f| format!("{} ({})", printable(&f.to), thousands(f.requests)))
                    .collect::<Vec<_>>()
                    .join(", then ")
            };
            o += &format!(
                "  fallback: {} times a tier gave up on a request and it was sent on: to {}\n",
                thousands(a.fallbacks),
                to
            );
        }
        for t in &a.tiers {
            o += &format!(
                "  tier {}: {} requests, {} × 429, {} timed out, {} for the run, {}/month\n",
                t.name,
                thousands(t.requests),
                thousands(t.throttled_429),
                thousands(t.timed_out),
                usd(t.usd),
                usd(t.usd_per_month)
            );
            if t.usd > 0.0 {
                let b = &t.bill;
                o += &format!(
                    "    billed: input {}, cached input {}, cache writes {}, output {}{}\n",
                    usd(b.input_usd),
                    usd(b.cached_input_usd),
                    usd(b.cache_write_usd),
                    usd(b.output_usd),
                    if t.errors > 0 {
                        format!("; {} errors, not billed", thousands(t.errors))
                    } else {
                        String::new()
                    }
                );
            }
            if t.bill.provisioned_usd > 0.0 || t.provisioned_requests > 0 {
                o += &format!(
                    "    provisioned units: {} for the run (by the hour, used or not); they admitted {} of its {} requests, the rest paid as they went\n",
                    usd(t.bill.provisioned_usd),
                    thousands(t.provisioned_requests),
                    thousands(t.requests)
                );
            }
            if t.flex_refused > 0 {
                o += &format!(
                    "    flex: {} attempts refused for want of capacity (429s, not billed)\n",
                    thousands(t.flex_refused)
                );
            }
            if t.batch_enqueued_peak_tokens > 0 {
                o += &format!(
                    "    batch queue: at most {} input tokens enqueued at once\n",
                    thousands(t.batch_enqueued_peak_tokens)
                );
            }
            if t.cache_used() {
                o += &format!(
                    "    prompt cache: {:.1} % of requests hit it, {} input tokens read from it, {} written; it saved {} on the run\n",
                    t.cache_hit_rate() * 100.0,
                    thousands(t.cached_input_tokens),
                    thousands(t.cache_write_tokens),
                    usd(t.usd_saved_by_cache)
                );
            }
        }
    }
    let k = &r.cost;
    let gpus = if r.series.replicas_up.is_empty() {
        format!("{} GPUs", k.gpus)
    } else {
        // Autoscaled: the GPU-hours actually up, and the most at once.
        let gpu_hours: f64 = r
            .pools
            .iter()
            .map(|p| p.replica_hours * f64::from(p.gpus) / f64::from(p.replicas_peak.max(1)))
            .sum();
        format!("{gpu_hours:.2} GPU-hours (at most {} GPUs at once)", k.gpus)
    };
    o += &format!(
        "cost: fleet {gpus} × {}/h = {}, API {}: {} for the run, {}/month; {} per million output tokens\n",
        usd(k.usd_per_gpu_hour),
        usd(k.fleet_usd),
        usd(k.api_usd),
        usd(k.total_usd),
        usd(k.usd_per_month),
        k.usd_per_mtok_output.map_or("–".into(), usd)
    );
    if let Some(e) = &r.energy {
        o += &format!(
            "energy: {:.0} W per GPU on average, {} per output token, {} kWh/month{}\n",
            e.mean_watts_per_gpu,
            e.joules_per_output_token
                .map_or("–".into(), |j| format!("{j:.2} J")),
            thousands(e.kwh_per_month.round() as u64),
            if k.electricity_usd > 0.0 {
                format!(
                    "; electricity {} for the run (in the cost above)",
                    usd(k.electricity_usd)
                )
            } else {
                String::new()
            }
        );
    }
    o
}

/// `tlab run --ranges`: the headline figures with their ranges, what the
/// runs were, how many met the targets, and the verdict.
pub fn ranges_text(r: &sim_core::ranges::Ranges) -> String {
    let mut o = format!("Ranges ({}):\n", r.method());
    for (label, text) in r.lines() {
        o += &format!("  {label:<29} {text}\n");
    }
    o += &format!(
        "  meets the targets in {} of {} runs\n  {}\n",
        r.meeting_targets,
        r.runs,
        r.verdict.words()
    );
    if let Some(p) = &r.provenance {
        let mut lines = p.lines().into_iter();
        if let Some(head) = lines.next() {
            o += &format!("  {head}\n");
        }
        for l in lines {
            o += &format!("    {l}\n");
        }
    }
    o
}

/// `tlab run --ranges --json`: the report's JSON, its fields in their
/// order, with `ranges` after them (each figure `{value, low, high}` by
/// the report's name, the verdict, the runs and the band they used).
pub fn ranges_json(report: &Report, ranges: &sim_core::ranges::Ranges) -> Result<String, String> {
    #[derive(serde::Serialize)]
    struct WithRanges<'a> {
        #[serde(flatten)]
        report: &'a Report,
        ranges: &'a sim_core::ranges::Ranges,
    }
    serde_json::to_string_pretty(&WithRanges { report, ranges })
        .map(|j| j + "\n")
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::summary;

    /// Launch-spike with the long threads on the frontier tier's flex
    /// service and 800 provisioned units in front of the tier.
    #[test]
    fn a_tier_s_flex_refusals_and_provisioned_units_have_lines_of_their_own() {
        let mut s = sim_core::presets::launch_spike();
        for (name, value) in [
            ("api.flex", "on"),
            ("backend[long thread]", "frontier+flex"),
            ("api.provisioned_units", "800"),
            ("api.hedge_after_s", "1.5"),
        ] {
            sim_core::params::apply(&mut s, name, value).expect("an edit the page makes");
        }
        let r = sim_core::run_scenario(s.clone()).expect("valid");
        let t = &r.api.as_ref().expect("api").tiers[0];
        assert!(t.flex_refused > 0 && t.provisioned_requests > 0);
        let text = summary(&s, &r);
        let units = format!(
            "    provisioned units: {} for the run (by the hour, used or not); they admitted {} of its {} requests",
            super::usd(t.bill.provisioned_usd),
            sim_core::format::thousands(t.provisioned_requests),
            sim_core::format::thousands(t.requests)
        );
        assert!(text.contains(&units), "{text}");
        let refused = format!(
            "    flex: {} attempts refused for want of capacity",
            sim_core::format::thousands(t.flex_refused)
        );
        assert!(text.contains(&refused), "{text}");
        let a = r.api.as_ref().expect("api");
        assert!(a.hedges > 0, "launch-spike's slow first tokens are hedged");
        let hedges = format!(
            "  hedges: {} copies sent, {} streamed first and answered; the cancelled attempts' prompts cost {}",
            sim_core::format::thousands(a.hedges),
            sim_core::format::thousands(a.hedges_won),
            super::usd(a.usd_hedges_cancelled)
        );
        assert!(text.contains(&hedges), "{text}");
        // Hedged to the small tier instead, the line names it.
        let mut to_small = s.clone();
        sim_core::params::apply(&mut to_small, "api.hedge_to", "small").expect("a tier");
        let r = sim_core::run_scenario(to_small.clone()).expect("valid");
        let a = r.api.as_ref().expect("api");
        assert!(a.tiers[0].hedged_away > 0, "the small tier wins some");
        let text = summary(&to_small, &r);
        assert!(
            text.contains(&format!(
                "  hedges: {} copies sent to tier small, {} streamed first",
                sim_core::format::thousands(a.hedges),
                sim_core::format::thousands(a.hedges_won)
            )),
            "{text}"
        );
        // A run without them says nothing of either.
        let plain = sim_core::presets::launch_spike();
        let text = summary(
            &plain,
            &sim_core::run_scenario(plain.clone()).expect("valid"),
        );
        assert!(
            !text.contains("provisioned units:")
                && !text.contains("flex:")
                && !text.contains("hedges:")
        );
    }
}
