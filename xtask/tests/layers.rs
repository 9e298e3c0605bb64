//! The engine's files import one another in layers, never in a circle
//! (ARCHITECTURE.md, "Invariants"): a file names another's items only if
//! that file is below it. `engine/mod.rs`, the event loop with `Simulation`,
//! sits on top and is left out: the files below reach the run's state
//! through their own `impl Simulation` blocks. Unit tests (`#[cfg(test)]`
//! onwards) are left out too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn engine_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace")
        .join("sim-core/src/engine")
}

/// A file's code without comments, up to its unit tests' module.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("readable source");
    let text = match text.find("#[cfg(test)]\nmod ") {
        Some(i) => &text[..i],
        None => &text,
    };
    text.lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The identifier starting at `s`'s start.
fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The sibling modules a file names: `super::m::…`, `crate::engine::m::…`,
/// and each `m::…` at the top of a `use super::{…}` group.
fn names(code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for prefix in ["super::", "crate::engine::"] {
        for (i, _) in code.match_indices(prefix) {
            let rest = &code[i + prefix.len()..];
            // `super::m::item`, or the module itself (`use super::m;`).
            let m = ident(rest);
            if modules.contains(m) {
                out.insert(m.to_owned());
            }
            if rest.starts_with('{') {
                // A group: its top-level entries, split at depth 1.
                let mut depth = 0;
                let mut start = 1;
                for (j, c) in rest.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' | ',' if depth == 1 => {
                            // `m::item`, `m::{…}`, or `m` itself.
                            let m = ident(rest[start..j].trim());
                            if modules.contains(m) {
                                out.insert(m.to_owned());
                            }
                            start = j + 1;
                            if c == '}' {
                                break;
                            }
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
            }
        }
    }
    out
}

/// A circle in `edges`, as the path that closes it, if there is one.
fn circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    // Depth-first, colouring: on the path (1) or finished (2).
    fn visit(
        v: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        colour: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        colour.insert(v.to_owned(), 1);
        path.push(v.to_owned());
        for w in edges.get(v).into_iter().flatten() {
            match colour.get(w.as_str()) {
                Some(1) => {
                    let from = path.iter().position(|p| p == w).expect("on the path");
                    let mut c = path[from..].to_vec();
                    c.push(w.clone());
                    return Some(c);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(w, edges, colour, path) {
                        return Some(c);
                    }
                }
            }
        }
        path.pop();
        colour.insert(v.to_owned(), 2);
        None
    }
    let mut colour = BTreeMap::new();
    for v in edges.keys() {
        if !colour.contains_key(v.as_str())
            && let Some(c) = visit(v, edges, &mut colour, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

fn engine_edges() -> BTreeMap<String, BTreeSet<String>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(engine_dir())
        .expect("sim-core/src/engine")
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    let stem = |p: &Path| {
        p.file_stem()
            .expect("a file")
            .to_string_lossy()
            .into_owned()
    };
    let modules: BTreeSet<String> = files.iter().map(|p| stem(p)).collect();
    files
        .iter()
        .filter(|p| stem(p) != "mod")
        .map(|p| {
            let mut to = names(&code(p), &modules);
            to.remove(&stem(p));
            (stem(p), to)
        })
        .collect()
}

#[test]
fn the_engine_files_import_in_layers_without_a_circle() {
    let edges = engine_edges();
    assert!(edges.len() >= 20, "{} engine files", edges.len());
    if let Some(c) = circle(&edges) {
        panic!(
            "the engine's files import in a circle: {} (move what they share below both)",
            c.join(" → ")
        );
    }
}

#[test]
fn the_circle_finder_finds_a_circle_and_reads_groups() {
    let modules: BTreeSet<String> = ["a", "b", "c", "d", "e"].map(str::to_owned).into();
    // Items, nested groups, a module named bare in a group or alone.
    let read = names(
        "use super::{a::X, b::{Y, Z}, d, NS};\nuse super::e;\nfn f() { super::c::g() }",
        &modules,
    );
    assert_eq!(read, modules);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges.entry("a".into()).or_default().insert("b".into());
    edges.entry("b".into()).or_default().insert("c".into());
    assert_eq!(circle(&edges), None);
    edges.entry("c".into()).or_default().insert("a".into());
    let c = circle(&edges).expect("a → b → c → a");
    assert_eq!(c.first(), c.last());
    assert_eq!(c.len(), 4);
}

#[test]
fn every_engine_file_asserts_the_invariants_of_what_it_changes() {
    // Debug builds (every test run) check each file's invariants where its
    // state changes; a file of tests only is exempt.
    let mut silent = Vec::new();
    for stem in engine_edges()
        .keys()
        .chain(std::iter::once(&"mod".to_owned()))
    {
        if stem.ends_with("_tests") {
            continue;
        }
        if !code(&engine_dir().join(format!("{stem}.rs"))).contains("debug_assert") {
            silent.push(stem.clone());
        }
    }
    assert!(
        silent.is_empty(),
        "engine files with no debug_assert: {}",
        silent.join(", ")
    );
}
