//! Keeps the promises ARCHITECTURE.md makes about the code itself: sim-core
//! reads no clock, keeps no unordered maps, draws no global randomness and does
//! no I/O; no source file grows past about 600 lines.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace")
        .to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The file's text without comments (so prose may name what code may not use).
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("readable source");
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn sim_core_uses_no_clock_no_unordered_map_no_global_rng_and_no_io() {
    let forbidden = [
        ("Instant", "a clock"),
        ("SystemTime", "a clock"),
        ("HashMap", "iteration order that varies by run"),
        ("HashSet", "iteration order that varies by run"),
        ("thread_rng", "a global RNG"),
        ("rand::random", "a global RNG"),
        ("from_entropy", "entropy"),
        ("getrandom", "entropy"),
        ("std::fs", "I/O"),
        ("std::io", "I/O"),
        ("std::net", "I/O"),
        ("std::env", "the environment"),
        ("println!", "I/O"),
        ("eprintln!", "I/O"),
        ("print!(", "I/O"),
    ];
    let mut files = Vec::new();
    rust_files(&root().join("sim-core/src"), &mut files);
    assert!(files.len() > 20, "sim-core sources found: {}", files.len());
    let mut problems = Vec::new();
    for f in &files {
        let c = code(f);
        for (word, why) in forbidden {
            if c.contains(word) {
                problems.push(format!("{}: uses {word} ({why})", f.display()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_source_file_is_over_600_lines() {
    let mut files = Vec::new();
    for dir in ["sim-core", "charts", "web", "cli", "xtask", "python"] {
        rust_files(&root().join(dir), &mut files);
    }
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).ok()?.lines().count();
            (n > 600).then(|| format!("{}: {n} lines", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "split these:\n{}", long.join("\n"));
}

/// Every `.rs` file under `dir` (relative to the workspace), with its code.
fn sources(dir: &str) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    rust_files(&root().join(dir), &mut files);
    files.into_iter().map(|f| (f.clone(), code(&f))).collect()
}

#[test]
fn the_page_and_the_charts_never_import_the_engine() {
    let mut problems = Vec::new();
    for dir in ["web/src", "charts/src"] {
        for (f, c) in sources(dir) {
            if c.contains("sim_core::engine") {
                problems.push(format!("{}: imports sim_core::engine", f.display()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn lower_modules_of_sim_core_never_import_upward() {
    // The ground floor imports nothing of the crate; distributions and the
    // scenario never reach up into the parameter catalogue, the planner or
    // the engine (they build on dist, physics, format).
    let rules: [(&str, &[&str]); 3] = [
        ("sim-core/src/format.rs", &["crate::"]),
        (
            "sim-core/src/dist",
            &[
                "crate::params",
                "crate::plan",
                "crate::engine",
                "crate::scenario",
            ],
        ),
        (
            "sim-core/src/scenario",
            &[
                "crate::params",
                "crate::plan",
                "crate::engine",
                "crate::traces",
            ],
        ),
    ];
    let mut problems = Vec::new();
    for (place, banned) in rules {
        let files = if place.ends_with(".rs") {
            let p = root().join(place);
            vec![(p.clone(), code(&p))]
        } else {
            sources(place)
        };
        assert!(!files.is_empty(), "{place}: no sources");
        for (f, c) in files {
            for b in banned {
                if c.contains(b) {
                    problems.push(format!("{}: uses {b}", f.display()));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn durations_and_money_are_formatted_in_one_place() {
    // Formatting a latency or dollars by hand next to the shared formatter is
    // how the page and the CLI came to disagree: only sim-core's `format`
    // module writes "ms"/"$" number formats.
    let mut problems = Vec::new();
    for dir in ["web/src", "cli/src", "sim-core/src", "charts/src"] {
        for (f, c) in sources(dir) {
            if f.ends_with("sim-core/src/format.rs") {
                continue;
            }
            if f.to_string_lossy().contains("tests") {
                continue;
            }
            for pat in ["${:.", "${v:.", ":.0} ms", ":.1} ms", ":.2} ms"] {
                if c.contains(pat) {
                    problems.push(format!("{}: formats with {pat:?}", f.display()));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_source_file_is_on_the_architecture_map() {
    // A file is named where a line of ARCHITECTURE.md holds its path, or the
    // path of a folder above it and, in backquotes, its path from there
    // (`sim-core/src/physics/tests.rs`, `tests_moe.rs`).
    let map = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut missing = Vec::new();
    for dir in [
        "sim-core/src",
        "charts/src",
        "web/src",
        "cli/src",
        "xtask/src",
        "python/src",
    ] {
        let mut files = Vec::new();
        rust_files(&root().join(dir), &mut files);
        for f in files {
            let rel = f
                .strip_prefix(root())
                .expect("in the workspace")
                .to_string_lossy()
                .replace('\\', "/");
            let named = map.lines().any(|line| {
                line.contains(&rel)
                    || rel.match_indices('/').any(|(i, _)| {
                        let (folder, rest) = rel.split_at(i + 1);
                        line.contains(folder) && line.contains(&format!("`{rest}`"))
                    })
            });
            if !named {
                missing.push(rel);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's codemap does not name:\n{}",
        missing.join("\n")
    );
}

/// The backquoted words of a markdown table cell.
fn quoted(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

#[test]
fn where_to_change_what_names_files_and_items_that_exist() {
    // ARCHITECTURE.md's "Where to change what": each row's files exist, and
    // each item it names (`Gpu`, `detect_first`, `REPORT_CHARTS`, …) is in
    // one of that row's files and defined in the crates.
    let map = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let section = map
        .split("## Where to change what")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("the section");
    let mut all = Vec::new();
    for dir in ["sim-core/src", "charts/src"] {
        rust_files(&root().join(dir), &mut all);
    }
    let everywhere: Vec<String> = all.iter().map(|f| code(f)).collect();
    let mut rows = 0;
    let mut problems = Vec::new();
    for line in section
        .lines()
        .filter(|l| l.starts_with("| ") && !l.contains("---"))
    {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let [_, what, open, change, ..] = cells.as_slice() else {
            continue;
        };
        if *what == "to add or change" {
            continue;
        }
        rows += 1;
        // Paths: from the repository's root, or under sim-core/src.
        let mut files = Vec::new();
        for p in quoted(open).into_iter().chain(quoted(change)) {
            if !p.contains('/') {
                continue;
            }
            let path = [root().join(p), root().join("sim-core/src").join(p)]
                .into_iter()
                .find(|c| c.exists());
            match path {
                Some(c) if c.is_dir() => rust_files(&c, &mut files),
                Some(c) => files.push(c),
                None => problems.push(format!("{what}: {p} does not exist")),
            }
        }
        let sources: Vec<String> = files.iter().map(|f| code(f)).collect();
        for item in quoted(change)
            .into_iter()
            .filter(|p| !p.contains(['/', '.']))
        {
            let defines = |c: &String| {
                ["enum ", "struct ", "fn ", "const ", "static ", "type "]
                    .iter()
                    .any(|kind| c.contains(&format!("{kind}{item}")))
            };
            if !sources.iter().any(|c| c.contains(item)) {
                problems.push(format!("{what}: `{item}` is in none of its files"));
            } else if !sources.iter().any(defines) && !everywhere.iter().any(defines) {
                problems.push(format!("{what}: `{item}` is defined nowhere"));
            }
        }
    }
    assert!(rows >= 7, "{rows} rows");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// sim-core's rooms by floor, as ARCHITECTURE.md lists them ("Rooms, from
/// the ground up"); the crate root's re-exports count as their rooms'.
const FLOORS: [(&str, u8); 22] = [
    ("format", 1),
    ("text", 1),
    ("rng", 1),
    ("event", 1),
    ("dist", 2),
    ("physics", 3),
    ("api", 4),
    ("scenario", 5),
    ("params", 6),
    ("engine", 7),
    ("metrics", 7),
    ("report", 7),
    ("trace", 7),
    ("traces", 8),
    ("plan", 9),
    ("compare", 9),
    ("sweep", 9),
    ("ranges", 9),
    ("presets", 10),
    ("link", 10),
    ("calibration", 10),
    ("anchors", 10),
];

/// The room of a crate-root name (`crate::Scenario` is `scenario`'s).
fn room_of(name: &str) -> &str {
    match name {
        "Simulation" | "TraceFeed" | "run" | "run_timed" | "run_with_feed" | "run_scenario" => {
            "engine"
        }
        "Report" | "Snapshot" => "report",
        "Scenario" | "ScenarioError" | "ValidScenario" => "scenario",
        other => other,
    }
}

#[test]
fn no_room_of_sim_core_reaches_a_floor_above_it() {
    let floor = |room: &str| FLOORS.iter().find(|(r, _)| *r == room).map(|&(_, f)| f);
    let src = root().join("sim-core/src");
    // Every room the crate declares has its floor here.
    let lib = code(&src.join("lib.rs"));
    for line in lib.lines().map(str::trim) {
        if let Some(m) = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("mod "))
        {
            let m = m.trim_end_matches(';');
            assert!(floor(m).is_some(), "room {m} has no floor in FLOORS");
        }
    }
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut problems = Vec::new();
    for f in files {
        let rel = f
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        let room = rel
            .split('/')
            .next()
            .expect("a path")
            .trim_end_matches(".rs");
        let name = rel.rsplit('/').next().expect("a file");
        // The crate root, and files of tests, may reach anywhere.
        let Some(own) = floor(room).filter(|_| !name.starts_with("tests")) else {
            continue;
        };
        let text = code(&f);
        let text = text.split("#[cfg(test)]\nmod ").next().expect("some code");
        for (i, _) in text.match_indices("crate::") {
            let rest = &text[i + "crate::".len()..];
            // `crate::a::…`, or each entry of `crate::{a::…, b, …}`.
            let names: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => group
                    .split('}')
                    .next()
                    .unwrap_or_default()
                    .split(',')
                    .map(str::trim)
                    .collect(),
                None => vec![rest],
            };
            for name in names {
                let end = name
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(name.len());
                let target = room_of(&name[..end]);
                if let Some(t) = floor(target).filter(|&t| t > own) {
                    problems.push(format!("{rel} (floor {own}) reaches {target} (floor {t})"));
                }
            }
        }
    }
    problems.sort();
    problems.dedup();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_page_computes_nothing_from_a_report_but_percentages() {
    // A figure the page shows is sim-core's (one definition per quantity):
    // a line of web/src that reads a report's section may scale it to a
    // percentage for display, and nothing else.
    let sections = [
        ".overall.",
        ".throughput.",
        ".cost.",
        ".utilisation.",
        ".requests.",
        ".energy.",
        ".physical_limit.",
    ];
    let mut problems = Vec::new();
    for (f, c) in sources("web/src") {
        let name = f
            .file_name()
            .expect("a file")
            .to_string_lossy()
            .into_owned();
        if name.contains("test") {
            continue;
        }
        for (n, line) in c.lines().enumerate() {
            if !sections.iter().any(|s| line.contains(s)) {
                continue;
            }
            let rest = line.replace("* 100.0", "").replace("100.0 *", "");
            if [" + ", " - ", " / ", " * "]
                .iter()
                .any(|op| rest.contains(op))
            {
                problems.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_table_on_the_page_is_built_by_data_table() {
    let mut problems = Vec::new();
    for (f, c) in sources("web/src") {
        if !f.ends_with("web/src/table.rs") && c.contains("<table") {
            problems.push(f.display().to_string());
        }
    }
    assert!(
        problems.is_empty(),
        "tables built outside web/src/table.rs's data_table:\n{}",
        problems.join("\n")
    );
}
