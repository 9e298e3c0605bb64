//! Exports: the summary and the time series as CSV, pure functions of a report
//! (the page adds the scenario JSON and each chart as PNG).

use sim_core::Report;
use sim_core::report::LatencyStats;

fn opt(v: Option<f64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

fn latency_rows(out: &mut String, scope: &str, metric: &str, l: &LatencyStats) {
    for (stat, v) in [
        ("mean", l.mean_ms),
        ("p50", l.p50_ms),
        ("p90", l.p90_ms),
        ("p95", l.p95_ms),
        ("p99", l.p99_ms),
        ("max", l.max_ms),
    ] {
        out.push_str(&format!("{scope},{metric}_{stat},{},ms\n", opt(v)));
    }
}

/// The summary as CSV: `scope,metric,value,unit`, one row per number.
pub fn summary_csv(r: &Report) -> String {
    let mut o = String::from("scope,metric,value,unit\n");
    let c = &r.requests;
    for (m, v) in [
        ("arrived", c.arrived),
        ("completed", c.completed),
        ("rejected", c.rejected),
        ("failed", c.failed),
        ("timed_out", c.timed_out),
        ("unanswered", c.unanswered()),
        ("in_flight", c.in_flight),
    ] {
        o.push_str(&format!("all,requests_{m},{v},requests\n"));
    }
    o.push_str(&format!(
        "all,error_fraction,{},fraction\n",
        c.error_fraction()
    ));
    o.push_str(&format!(
        "all,tasks_completed,{},tasks\n",
        c.tasks_completed
    ));
    for class in std::iter::once(&r.overall).chain(&r.per_class) {
        let scope = csv_field(&class.name);
        latency_rows(&mut o, &scope, "ttft", &class.ttft);
        latency_rows(&mut o, &scope, "tpot", &class.tpot);
        latency_rows(&mut o, &scope, "e2e", &class.e2e);
        latency_rows(&mut o, &scope, "queue_wait", &class.queue_wait);
        latency_rows(&mut o, &scope, "first_visible", &class.first_visible);
        if class.thinking.count > 0 {
            latency_rows(&mut o, &scope, "thinking", &class.thinking);
        }
        latency_rows(&mut o, &scope, "task", &class.task_latency);
        o.push_str(&format!(
            "{scope},slo_met_fraction,{},fraction\n",
            opt(class.slo_met_fraction)
        ));
        o.push_str(&format!("{scope},api_usd,{},usd\n", class.api_usd));
    }
    for p in &r.pools {
        let scope = csv_field(&format!("pool {}", p.name));
        o.push_str(&format!(
            "{scope},requests_completed,{},requests\n",
            p.completed
        ));
        latency_rows(&mut o, &scope, "ttft", &p.ttft);
        latency_rows(&mut o, &scope, "tpot", &p.tpot);
        latency_rows(&mut o, &scope, "e2e", &p.e2e);
        o.push_str(&format!(
            "{scope},output_tokens_per_s,{},tokens/s\n",
            p.output_tokens_per_s
        ));
        o.push_str(&format!(
            "{scope},gpu_busy_fraction,{},fraction\n",
            p.gpu_busy_fraction
        ));
        o.push_str(&format!("{scope},gpus,{},gpus\n", p.gpus));
        o.push_str(&format!("{scope},usd,{},usd\n", p.usd));
        o.push_str(&format!("{scope},usd_per_month,{},usd\n", p.usd_per_month));
    }
    let t = &r.throughput;
    o.push_str(&format!(
        "all,output_tokens_per_s,{},tokens/s\n",
        t.output_tokens_per_s
    ));
    o.push_str(&format!(
        "all,input_tokens_per_s,{},tokens/s\n",
        t.input_tokens_per_s
    ));
    o.push_str(&format!(
        "all,requests_per_s,{},requests/s\n",
        t.requests_per_s
    ));
    o.push_str(&format!(
        "all,goodput_fraction,{},fraction\n",
        opt(t.goodput_fraction)
    ));
    let u = &r.utilisation;
    o.push_str(&format!(
        "all,gpu_busy_fraction,{},fraction\n",
        u.gpu_busy_fraction
    ));
    o.push_str(&format!(
        "all,mean_batch_size,{},sequences\n",
        u.mean_batch_size
    ));
    o.push_str(&format!("all,kv_use_peak,{},fraction\n", u.kv_use_peak));
    o.push_str(&format!("all,preemptions,{},sequences\n", u.preemptions));
    let k = &r.cost;
    o.push_str(&format!("all,total_usd,{},usd\n", k.total_usd));
    o.push_str(&format!("all,usd_per_month,{},usd\n", k.usd_per_month));
    o.push_str(&format!(
        "all,usd_per_mtok_output,{},usd\n",
        opt(k.usd_per_mtok_output)
    ));
    o.push_str(&format!(
        "all,usd_per_request,{},usd\n",
        opt(k.usd_per_request)
    ));
    o.push_str(&format!("all,electricity_usd,{},usd\n", k.electricity_usd));
    if let Some(e) = &r.energy {
        o.push_str(&format!("all,energy_kwh,{},kWh\n", e.kwh));
        o.push_str(&format!(
            "all,mean_watts_per_gpu,{},W\n",
            e.mean_watts_per_gpu
        ));
        o.push_str(&format!(
            "all,joules_per_output_token,{},J\n",
            opt(e.joules_per_output_token)
        ));
        o.push_str(&format!("all,kwh_per_month,{},kWh\n", e.kwh_per_month));
    }
    if let Some(a) = &r.api {
        o.push_str(&format!(
            "api,throttled_429,{},responses\n",
            a.throttled_429
        ));
        o.push_str(&format!(
            "api,attempts_per_request,{},attempts\n",
            a.attempts_per_request
        ));
        if let Some(saved) = a.usd_saved_by_cache() {
            o.push_str(&format!("api,usd_saved_by_cache,{saved},usd\n"));
            o.push_str(&format!(
                "api,cache_hit_rate,{},fraction\n",
                a.cache_hit_rate()
            ));
        }
    }
    o
}

/// Why the time series differ from the summary, as the page says next to
/// the exports.
pub const SERIES_NOTE: &str = "The time series are per window of simulated time: their percentiles come from small per-window histograms (about 9 % resolution) and their token rates count prompt tokens as the GPUs prefill them (cached prefixes and API prompts not included), so they differ from the summary's whole-run numbers, which count every completed request's prompt.";

/// The time series as CSV, one row per window.
pub fn series_csv(r: &Report) -> String {
    let s = &r.series;
    let api = !s.throttled_per_s.is_empty();
    let mut o = String::from(
        "t_s,arrivals_per_s,queue_depth,in_flight,batch_size,kv_use,output_tokens_per_s,gpu_prefill_tokens_per_s,ttft_p50_ms,ttft_p99_ms,e2e_p50_ms,e2e_p99_ms",
    );
    if api {
        o.push_str(",throttled_per_s,retries_per_s,api_tokens_per_min,api_token_fill");
    }
    o.push('\n');
    for i in 0..s.t_s.len() {
        o.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{}",
            s.t_s[i],
            s.arrivals_per_s[i],
            s.queue_depth[i],
            s.in_flight[i],
            s.batch_size[i],
            s.kv_use[i],
            s.output_tokens_per_s[i],
            s.input_tokens_per_s[i],
            opt(s.ttft_p50_ms[i]),
            opt(s.ttft_p99_ms[i]),
            opt(s.e2e_p50_ms[i]),
            opt(s.e2e_p99_ms[i])
        ));
        if api {
            o.push_str(&format!(
                ",{},{},{},{}",
                s.throttled_per_s[i],
                s.retries_per_s[i],
                s.api_tokens_per_min[i],
                opt(s.api_token_fill[i])
            ));
        }
        o.push('\n');
    }
    o
}

/// A and B side by side: every headline number (the page's cards), B − A
/// and the change relative to A, in each number's unit.
pub fn compare_csv(a: &Report, b: &Report) -> String {
    use crate::results::cards::{Unit, cards};
    let mut o = String::from("metric,unit,A,B,difference,relative_change\n");
    for c in cards() {
        let (Some((_, va)), Some((_, vb))) = ((c.value)(a), (c.value)(b)) else {
            continue;
        };
        let unit = match c.unit() {
            Unit::Ms => "ms",
            Unit::TokS => "tokens/s",
            Unit::Percent => "percent",
            Unit::Usd => "usd",
            Unit::Count => "count",
            Unit::Joules => "joules",
        };
        let relative = if c.unit() == Unit::Percent || va.abs() <= 1e-12 {
            String::new()
        } else {
            ((vb - va) / va.abs()).to_string()
        };
        o.push_str(&format!(
            "{},{unit},{va},{vb},{},{relative}\n",
            csv_field(c.label),
            vb - va
        ));
    }
    o
}

/// A CSV field, quoted when it holds a comma, quote or line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_rows_have_the_header_s_width_and_names_are_quoted() {
        let mut s = sim_core::presets::launch_spike();
        s.workload.classes[0].name = "short, \"urgent\" email".into();
        if let Some(api) = s.api.as_mut() {
            api.routes.clear();
        }
        let r = sim_core::run_scenario(s.clone()).expect("valid");
        let series = series_csv(&r);
        let width = series
            .lines()
            .next()
            .map(|h| h.split(',').count())
            .unwrap_or(0);
        assert_eq!(width, 16);
        assert!(
            series
                .lines()
                .skip(1)
                .all(|l| l.split(',').count() == width)
        );
        assert_eq!(series.lines().count(), r.series.t_s.len() + 1);
        let summary = summary_csv(&r);
        assert!(summary.contains("\"short, \"\"urgent\"\" email\",ttft_p99,"));
        assert!(summary.contains("api,throttled_429,"));
    }
}
