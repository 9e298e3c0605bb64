//! `cargo xtask bench`: the native benchmarks (divan: `sim-core`'s engine,
//! `tlab`'s planner), their medians written into `docs/benchmarks.md`
//! between its `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` markers,
//! with the machine they ran on. The prose around the tables stays as
//! written; only the figures move.

use crate::{Failure, Result};
use std::path::Path;
use std::process::Command;

/// The benchmark binaries, each with the marker its table goes between.
const BENCHES: [(&str, &str, &str); 2] =
    [("engine", "sim-core", "engine"), ("plan", "tlab", "plan")];

pub fn bench(root: &Path) -> Result<()> {
    let machine = machine();
    let mut doc = std::fs::read_to_string(root.join("docs/benchmarks.md"))?;
    for (marker, package, name) in BENCHES {
        println!("xtask: cargo bench -p {package} --bench {name}");
        let out = Command::new("cargo")
            .args(["bench", "-p", package, "--bench", name])
            .current_dir(root)
            .output()
            .map_err(|e| Failure(format!("cannot start cargo bench: {e}")))?;
        let text = String::from_utf8_lossy(&out.stdout);
        print!("{text}");
        if !out.status.success() {
            return Err(Failure(format!(
                "cargo bench -p {package} --bench {name} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        let table = format!("{}\n{machine}\n", medians(&text));
        doc = replace_between(&doc, marker, &table)?;
    }
    std::fs::write(root.join("docs/benchmarks.md"), doc)?;
    println!("xtask: docs/benchmarks.md updated ({machine})");
    Ok(())
}

/// "Machine: 2 cores (AMD EPYC), 24 GiB, 2026-12-04."
fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(String::new(), |kb| {
            format!(", {:.0} GiB", kb / 1024.0 / 1024.0)
        });
    let date = Command::new("date")
        .arg("+%Y-%m-%d")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    format!("Machine: {cores} cores ({cpu}){gib}, {date}.")
}

/// divan's tree as a table of medians: "| benchmark | median |", nested
/// arguments joined to their benchmark's name.
fn medians(divan: &str) -> String {
    let mut rows = vec!["| benchmark | median |".to_owned(), "|---|---|".to_owned()];
    let mut parents: Vec<String> = Vec::new();
    for line in divan.lines() {
        // "│  ├─ eagle   94.9 ms │ 114.7 ms │ 102.7 ms │ ..." : the depth is
        // where the branch starts, in characters.
        let Some(at) = line.find(['├', '╰']) else {
            continue;
        };
        let depth = line[..at].chars().count() / 3;
        let rest = line[at..].trim_start_matches(['├', '╰', '─', ' ']);
        let cells: Vec<&str> = rest.split('│').map(str::trim).collect();
        let Some(first) = cells.first() else { continue };
        let (name, fastest) = match first.rsplit_once("  ") {
            Some((n, f)) => (n.trim(), f.trim()),
            None => (*first, ""),
        };
        parents.truncate(depth);
        if fastest.is_empty() {
            parents.push(name.to_owned());
            continue;
        }
        let median = cells.get(2).copied().unwrap_or_default();
        let full = parents
            .iter()
            .map(String::as_str)
            .chain([name])
            .collect::<Vec<_>>()
            .join(" ");
        rows.push(format!("| {full} | {median} |"));
    }
    rows.join("\n")
}

/// `doc` with the text between its `bench:marker` comments replaced.
fn replace_between(doc: &str, marker: &str, table: &str) -> Result<String> {
    let (open, close) = (
        format!("<!-- bench:{marker} -->"),
        format!("<!-- /bench:{marker} -->"),
    );
    let (Some(a), Some(b)) = (doc.find(&open), doc.find(&close)) else {
        return Err(Failure(format!(
            "docs/benchmarks.md has no {open} … {close} section"
        )));
    };
    Ok(format!("{}{open}\n{table}{}", &doc[..a], &doc[b..]))
}

#[cfg(test)]
mod tests {
    #[test]
    fn divan_trees_become_rows_of_medians() {
        let out = "engine   fastest │ slowest │ median │ mean │ samples │ iters\n\
├─ default_scenario                6.98 ms       │ 7.641 ms      │ 7.061 ms      │ 7.112 ms      │ 20      │ 20\n\
├─ long_answers_under_kv_pressure                │               │               │               │         │\n\
│  ├─ eagle                        94.9 ms       │ 114.7 ms      │ 102.7 ms      │ 104.1 ms      │ 3       │ 3\n\
│  ╰─ off                          243.3 ms      │ 267.3 ms      │ 245.8 ms      │ 252.1 ms      │ 3       │ 3\n\
╰─ requests_1m                     613.9 ms      │ 616.7 ms      │ 614 ms        │ 614.9 ms      │ 3       │ 3";
        assert_eq!(
            super::medians(out),
            "| benchmark | median |\n|---|---|\n| default_scenario | 7.061 ms |\n| long_answers_under_kv_pressure eagle | 102.7 ms |\n| long_answers_under_kv_pressure off | 245.8 ms |\n| requests_1m | 614 ms |"
        );
        let doc = "a\n<!-- bench:x -->\nold\n<!-- /bench:x -->\nb";
        assert_eq!(
            super::replace_between(doc, "x", "new\n").expect("markers"),
            "a\n<!-- bench:x -->\nnew\n<!-- /bench:x -->\nb"
        );
    }
}
