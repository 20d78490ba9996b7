//! ARCHITECTURE.md's layering, checked on the sources: which crate may depend on which, and
//! that within each crate the modules do not import each other in a cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("crates/").to_path_buf()
}

/// Every crate of the workspace: its directory name and the `memcc*` crates it depends on
/// (normal, dev and build dependencies alike).
fn workspace_crates() -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(crates_dir()).expect("read crates/") {
        let dir = entry.expect("dir entry").path();
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else { continue };
        let mut deps = BTreeSet::new();
        let mut in_deps = false;
        for line in manifest.lines().map(str::trim) {
            if line.starts_with('[') {
                in_deps = line.trim_matches(['[', ']']).ends_with("dependencies");
                continue;
            }
            if in_deps && let Some(name) = line.split(['=', '.', ' ']).next().filter(|n| n.starts_with("memcc")) {
                deps.insert(name.to_string());
            }
        }
        out.insert(dir.file_name().expect("name").to_string_lossy().into_owned(), deps);
    }
    out
}

#[test]
fn crates_depend_only_down_the_layers() {
    let crates = workspace_crates();
    assert!(crates.len() >= 8, "found only {:?}", crates.keys());
    let deps = |c: &str| crates.get(c).unwrap_or_else(|| panic!("no crate {c}"));
    // The two halves meet only at the bridge in memcc-core, and the facade wires them.
    let halves = ["memcc-context", "memcc-memory"];
    for half in halves {
        let forbidden: Vec<_> = deps(half).iter().filter(|d| *d != "memcc-core" && *d != "memcc-testkit").collect();
        assert!(forbidden.is_empty(), "{half} depends on {forbidden:?}: it may use memcc-core only");
    }
    assert!(
        deps("memcc-core").iter().all(|d| d == "memcc-testkit"),
        "memcc-core depends on {:?}: it is the bottom layer",
        deps("memcc-core")
    );
    // Hosts and the harness reach the engine through the facade, never around it.
    let engine = ["memcc-core", "memcc-context", "memcc-memory"];
    for (name, ds) in &crates {
        if engine.contains(&name.as_str()) || name == "memcc" || name == "memcc-testkit" {
            continue;
        }
        let around: Vec<_> = ds.iter().filter(|d| engine.contains(&d.as_str())).collect();
        assert!(around.is_empty(), "{name} depends on {around:?} directly: hosts go through the `memcc` facade");
    }
}

/// The code of a source file without comments and without its `#[cfg(test)]` items (a test
/// module may reach anywhere), one entry per line (a skipped line stays, empty, so that line
/// numbers hold).
fn code_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    // Inside a `#[cfg(test)]` item: the braces it has opened, and whether it opened any.
    let mut skipping: Option<(i64, bool)> = None;
    for line in text.lines() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            skipping = Some((0, false));
            out.push(String::new());
            continue;
        }
        if let Some((depth, opened)) = skipping.as_mut() {
            *depth += line.matches('{').count() as i64 - line.matches('}').count() as i64;
            *opened |= line.contains('{');
            if (*opened && *depth <= 0) || (!*opened && line.trim_end().ends_with(';')) {
                skipping = None;
            }
            out.push(String::new());
            continue;
        }
        // The first `//` that is not a URL's `://` (inside a string) starts a comment.
        let comment = line.match_indices("//").map(|(i, _)| i).find(|&i| !line[..i].ends_with(':'));
        let code = comment.map_or(line, |i| &line[..i]);
        out.push(code.to_string());
    }
    out
}

/// The top-level modules a piece of code names through `prefix` (`crate::`, or `super::` in a
/// file directly below the crate root): `crate::a::X`, `crate::{a::X, b}`.
fn named_modules(code: &str, prefix: &str) -> Vec<String> {
    let ident = |s: &str| s.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        // `xcrate::` or `my_super::` are other paths.
        let before = rest[..i].chars().next_back();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let (mut depth, mut start) = (0usize, 0usize);
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        out.push(ident(&group[start..j]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.push(ident(&group[start..j]));
                        start = j + 1;
                    }
                    _ => {}
                }
            }
        } else {
            out.push(ident(rest));
        }
    }
    out.retain(|m| !m.is_empty() && m != "self");
    out
}

/// `module → (module it imports → where)`, over a crate's top-level modules.
type ModuleGraph = BTreeMap<String, BTreeMap<String, String>>;

fn module_graph(src: &Path) -> ModuleGraph {
    let mut files = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    let module_of = |path: &Path| -> Option<String> {
        let rel = path.strip_prefix(src).ok()?;
        let first = rel.components().next()?.as_os_str().to_string_lossy().into_owned();
        let name = first.strip_suffix(".rs").unwrap_or(&first).to_string();
        (name != "lib" && name != "main").then_some(name)
    };
    let modules: BTreeSet<String> = files.iter().filter_map(|f| module_of(f)).collect();
    let mut graph = ModuleGraph::new();
    for file in &files {
        let Some(from) = module_of(file) else { continue };
        let rel = file.strip_prefix(src).expect("under src");
        // In `src/a.rs` and `src/a/mod.rs`, `super::` is the crate root.
        let top = rel.components().count() == 1 || rel.ends_with("mod.rs") && rel.components().count() == 2;
        let text = std::fs::read_to_string(file).expect("read source");
        let lines = code_lines(&text);
        let joined = lines.join("\n");
        let mut names = named_modules(&joined, "crate::");
        if top {
            names.extend(named_modules(&joined, "super::"));
        }
        for to in names.into_iter().filter(|m| *m != from && modules.contains(m)) {
            graph.entry(from.clone()).or_default().entry(to.clone()).or_insert_with(|| {
                // The first line naming it as a path, else (in a `use crate::{…}` group) by name.
                let line = lines
                    .iter()
                    .position(|l| l.contains(&format!("crate::{to}")) || l.contains(&format!("{to}::")))
                    .or_else(|| lines.iter().position(|l| l.contains(to.as_str())))
                    .map_or(0, |i| i + 1);
                format!("{}:{line}", rel.display())
            });
        }
    }
    graph
}

/// One cycle of the graph, as the edges that make it, if there is one.
fn find_cycle(graph: &ModuleGraph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &ModuleGraph,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_string(), 1);
        path.push(node.to_string());
        for (next, at) in graph.get(node).into_iter().flatten() {
            match state.get(next.as_str()).copied().unwrap_or(0) {
                1 => {
                    let start = path.iter().position(|n| n == next).unwrap_or(0);
                    let mut cycle: Vec<String> = path[start..].to_vec();
                    cycle.push(format!("{next} (imported at {at})"));
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(next, graph, state, path) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if state.get(node).copied().unwrap_or(0) == 0
            && let Some(c) = visit(node, graph, &mut state, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

#[test]
fn no_crate_has_a_module_cycle() {
    let mut checked = 0;
    for name in workspace_crates().keys() {
        let src = crates_dir().join(name).join("src");
        if !src.is_dir() {
            continue;
        }
        let graph = module_graph(&src);
        if let Some(cycle) = find_cycle(&graph) {
            panic!("{name}: modules import each other in a cycle: {}", cycle.join(" → "));
        }
        checked += 1;
    }
    assert!(checked >= 8, "checked only {checked} crates");
}

#[test]
fn the_checker_sees_imports_and_cycles() {
    let code = code_lines(
        "use crate::{a::X, b::{Y, Z}, self};\nlet u = \"http://x\"; // crate::c in a comment\nuse crate::d;\n\
         xcrate::e();\n#[cfg(test)]\nuse crate::f;\n#[cfg(test)]\nmod tests {\n    fn t() { crate::g(); }\n}\n\
         fn after() { crate::h::x(); }",
    )
    .join("\n");
    assert_eq!(named_modules(&code, "crate::"), ["a", "b", "d", "h"]);
    let mut graph = ModuleGraph::new();
    graph.entry("a".into()).or_default().insert("b".into(), "a.rs:1".into());
    assert_eq!(find_cycle(&graph), None);
    graph.entry("b".into()).or_default().insert("a".into(), "b.rs:3".into());
    let cycle = find_cycle(&graph).expect("a → b → a");
    assert_eq!(cycle.len(), 3, "{cycle:?}");
    assert!(cycle[2].contains("b.rs:3"), "{cycle:?}");
}
