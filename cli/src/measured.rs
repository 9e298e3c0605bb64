//! `tlab calibrate --measured PATH`: a measured run (a directory with
//! `requests.jsonl`, and `meta.json` and `timeseries.csv` when there; or the
//! request log itself) replayed strictly, and measured against simulated per
//! metric (`sim_core::traces::measured`).

use sim_core::format::duration_ms;
use sim_core::traces::measured::{self, Comparison};
use std::path::Path;

/// The measured run at `path` and its replay, as text.
pub fn command(path: &Path) -> Result<String, String> {
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    let (requests, dir) = if path.is_dir() {
        (read(&path.join("requests.jsonl"))?, path.to_path_buf())
    } else {
        (
            read(path)?,
            path.parent().map(Path::to_path_buf).unwrap_or_default(),
        )
    };
    let optional = |name: &str| {
        let p = dir.join(name);
        p.is_file().then(|| read(&p)).transpose()
    };
    let (meta, series) = (optional("meta.json")?, optional("timeseries.csv")?);
    let run = measured::parse(&requests, meta.as_deref(), series.as_deref())?;
    let (scenario, assumed) = run.scenario()?;
    let valid = scenario.clone().validate().map_err(|e| e.to_string())?;
    let report = sim_core::run(&valid);
    let kv_sim = valid
        .deployment()
        .kv_capacity_blocks()
        .map(|b| b * u64::from(sim_core::physics::KV_BLOCK_TOKENS))
        .ok();
    Ok(text(
        &run,
        &scenario,
        &assumed,
        &run.compare(&report),
        kv_sim,
    ))
}

fn text(
    run: &measured::Measured,
    scenario: &sim_core::Scenario,
    assumed: &[String],
    c: &Comparison,
    kv_sim: Option<u64>,
) -> String {
    let mut out = format!(
        "{}: {} requests over {:.1} s, replayed strictly (same arrivals, same lengths)\n",
        scenario.name,
        run.requests.len(),
        run.requests.last().map_or(0.0, |r| r.at_s),
    );
    for a in assumed {
        out += &format!("  assumed: {a}\n");
    }
    let kv = |t: Option<u64>| {
        t.map_or("—".to_owned(), |t| {
            format!("{} tokens", sim_core::format::thousands(t))
        })
    };
    out += &format!(
        "  KV cache: measured {}, simulated {}\n\n",
        kv(run.settings.kv_tokens),
        kv(kv_sim)
    );
    out += &format!(
        "{:<22} {:>9} {:>19} {:>19} {:>19} {:>19}\n",
        "metric", "", "mean", "p50", "p90", "p99"
    );
    for r in &c.rows {
        let cell = |i: usize| {
            let (m, s) = (r.measured[i], r.simulated[i]);
            let err = if m > 0.0 && s.is_finite() {
                format!("{:+.0} %", (s / m - 1.0) * 100.0)
            } else {
                "—".into()
            };
            (
                duration_ms(Some(m)),
                duration_ms(s.is_finite().then_some(s)),
                err,
            )
        };
        let cells: Vec<_> = (0..4).map(cell).collect();
        out += &format!("{:<22} {:>9}", r.metric, "measured");
        for (m, _, _) in &cells {
            out += &format!(" {m:>19}");
        }
        out += &format!("\n{:<22} {:>9}", "", "simulated");
        for (_, s, e) in &cells {
            out += &format!(" {:>19}", format!("{s} ({e})"));
        }
        out += "\n";
    }
    out += &format!(
        "\nDistance between the distributions (Kolmogorov–Smirnov, 0 = same, 1 = disjoint; ±0.02): TTFT {:.2}, end-to-end {:.2}\n",
        c.ks_ttft, c.ks_e2e
    );
    out += &format!(
        "Generated tokens/s over the run: measured {}, simulated {}; last request done at {:.1} s measured, {:.1} s simulated\n",
        sim_core::format::rounded(c.output_tokens_per_s[0]),
        sim_core::format::rounded(c.output_tokens_per_s[1]),
        c.finished_s[0],
        c.finished_s[1],
    );
    let n = |v: Option<f64>| v.map_or("—".to_owned(), |v| format!("{v:.0}"));
    out += &format!(
        "Most running at once: measured {} (per second), simulated {} (window means); most waiting: measured {}, simulated {}\n",
        n(c.peak_running[0]),
        n(c.peak_running[1]),
        n(c.peak_waiting[0]),
        n(c.peak_waiting[1]),
    );
    out
}
