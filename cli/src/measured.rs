//! `tlab calibrate --measured PATH`: a measured run (a directory with
//! `requests.jsonl`, and `meta.json` and `timeseries.csv` when there; or the
//! request log itself) replayed strictly, and measured against simulated per
//! metric (`sim_core::traces::measured`).

use sim_core::format::duration_ms;
use sim_core::traces::measured::{self, Comparison};
use std::path::Path;

/// What `tlab calibrate --measured` was asked for besides the comparison.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Fit vLLM's profile to the run.
    pub fit: bool,
    /// Also fit on half of the requests and score the other half (every
    /// other request, and the first half in time against the second).
    pub holdout: bool,
    /// Rounds of the coordinate search.
    pub rounds: u32,
    /// Write the fitted profile here (JSON, for a scenario's `serving.profile`).
    pub profile_out: Option<std::path::PathBuf>,
}

/// The measured run at `path` and its replay, as text.
pub fn command(path: &Path, opt: &Options) -> Result<String, String> {
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
    let (scenario, assumed) = run.scenario(&sim_core::presets::chatbot_h100())?;
    let valid = scenario.clone().validate().map_err(|e| e.to_string())?;
    let report = sim_core::run(&valid);
    let kv_sim = valid
        .deployment()
        .kv_capacity_blocks()
        .map(|b| b * u64::from(sim_core::physics::KV_BLOCK_TOKENS))
        .ok();
    let mut out = text(&run, &scenario, &assumed, &run.compare(&report), kv_sim);
    if opt.fit {
        out += &fit_text(&run, path, opt)?;
    }
    Ok(out)
}

/// `--fit`: the fitted constants, the error table before and after, the
/// held-out scores, and the profile file written.
fn fit_text(run: &measured::Measured, path: &Path, opt: &Options) -> Result<String, String> {
    use crate::measured_fit::{error_table, fit, score};
    let label = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let source = format!(
        "{} requests measured on {} ({label})",
        run.requests.len(),
        run.settings.gpu.as_deref().unwrap_or("an unnamed GPU")
    );
    let f = fit(run, opt.rounds, &label, &source, None)?;
    let mut o = format!(
        "\nFitted vLLM's profile to this run (every constant within its documented range):\n  {}\n{}\n",
        f.memory,
        crate::calibrate::as_rust(&f.profile.costs)
    );
    o += &error_table(&[("vLLM profile", &f.before), ("fitted", &f.after)]);
    let c = run.compare(&f.report);
    o += &format!(
        "Fitted replay: Kolmogorov–Smirnov TTFT {:.2}, end-to-end {:.2}; generated tokens/s {} (measured {}); last request done at {:.1} s (measured {:.1} s)\n",
        c.ks_ttft,
        c.ks_e2e,
        sim_core::format::rounded(c.output_tokens_per_s[1]),
        sim_core::format::rounded(c.output_tokens_per_s[0]),
        c.finished_s[1],
        c.finished_s[0]
    );
    if opt.holdout {
        let n = run.requests.len();
        let alternate = |i: usize| i % 2 == 1;
        let later = move |i: usize| i >= n / 2;
        let splits: [(&str, &dyn Fn(usize) -> bool); 2] = [
            ("every other request", &alternate),
            ("first half in time → second", &later),
        ];
        for (what, scored) in splits {
            let half = fit(run, opt.rounds, "half", &source, Some(scored))?;
            let held = score(run, &half.profile, scored)?;
            o += &format!("\nHeld out ({what}): fitted on one half, scored on the other\n");
            o += &error_table(&[("fitted half", &half.after), ("scored half", &held)]);
        }
    }
    if let Some(out) = &opt.profile_out {
        let json = serde_json::to_string_pretty(&f.profile).map_err(|e| e.to_string())?;
        std::fs::write(out, json + "\n").map_err(|e| format!("{}: {e}", out.display()))?;
        o += &format!(
            "\nProfile written to {}: name it in a scenario as \"serving\": {{ \"software\": \"vllm\", \"profile\": \"{}\", … }}\n",
            out.display(),
            out.display()
        );
    }
    Ok(o)
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
