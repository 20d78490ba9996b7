//! The docs and the binary say the same thing: every `memcc …` the docs write names a subcommand
//! the binary has, with flags and values it takes, and every subcommand, flag and value it has
//! is written somewhere in the docs. (The definitions are clap's; the docs are read as a user
//! reads them: the `memcc` command lines in code.)

use std::collections::{BTreeSet, HashMap};

use clap::CommandFactory;

/// The docs a user reads about the CLI, from the repository root.
const DOCS: &[&str] = &[
    "README.md",
    "docs/cli.md",
    "docs/reference.md",
    "docs/agents.md",
    "docs/mcp.md",
    "docs/openclaw.md",
    "docs/postgres.md",
    "docs/benchmarks.md",
];

struct Binary {
    /// Every command by its path ("memory add"; "" is `memcc` itself).
    commands: HashMap<String, clap::Command>,
    /// The long flags every command takes (`--json`, `--agent`, …).
    global: BTreeSet<String>,
}

impl Binary {
    fn new() -> Self {
        fn walk(cmd: &clap::Command, path: &str, out: &mut HashMap<String, clap::Command>) {
            out.insert(path.to_string(), cmd.clone());
            for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
                let p = if path.is_empty() { sub.get_name().to_string() } else { format!("{path} {}", sub.get_name()) };
                walk(sub, &p, out);
            }
        }
        let root = super::Cli::command();
        let mut commands = HashMap::new();
        walk(&root, "", &mut commands);
        let mut global: BTreeSet<String> =
            root.get_arguments().filter_map(|a| a.get_long()).map(|l| format!("--{l}")).collect();
        global.extend(["--help".to_string(), "--version".to_string()]);
        Binary { commands, global }
    }

    fn flag<'a>(&'a self, path: &str, flag: &str) -> Option<&'a clap::Arg> {
        let name = flag.trim_start_matches('-');
        self.commands.get(path)?.get_arguments().find(|a| a.get_long() == Some(name))
    }

    fn child(&self, parent: &str, word: &str) -> Option<String> {
        let path = if parent.is_empty() { word.to_string() } else { format!("{parent} {word}") };
        self.commands.contains_key(&path).then_some(path)
    }
}

/// One `memcc …` command line as the docs write it, split at ` | ` into the alternatives it
/// shows (`memory add "t" | search "q"`), each resolved to the command it names.
struct Written {
    doc: String,
    line: String,
    /// (command path, its words after the path)
    segments: Vec<(String, Vec<String>)>,
}

fn written(binary: &Binary, doc: &str, text: &str) -> Vec<Written> {
    let mut out = Vec::new();
    for raw in text.lines() {
        // A command line in a code block, or one in an inline code span.
        let mut candidates: Vec<&str> = Vec::new();
        let trimmed = raw.trim_start();
        if trimmed.starts_with("memcc ") {
            candidates.push(trimmed);
        }
        for (i, part) in raw.split('`').enumerate() {
            if i % 2 == 1 && part.starts_with("memcc ") {
                candidates.push(part);
            }
        }
        for c in candidates {
            let command = c.split(" # ").next().unwrap_or(c).trim();
            let mut segments = Vec::new();
            let mut last_parent = String::new();
            for (i, alt) in command.split(" | ").enumerate() {
                let words: Vec<String> = alt.split_whitespace().map(String::from).collect();
                let first = words.first().map_or("", String::as_str);
                // An alternative is a sibling of the command before it (`memory export | import`),
                // else a command of its own (`setup claude-code | setup --check`).
                let (mut path, mut rest) = if i == 0 {
                    (String::new(), &words[1..])
                } else if binary.child(&last_parent, first).is_some() {
                    (last_parent.clone(), &words[..])
                } else {
                    (String::new(), &words[..])
                };
                // Flags every command takes may come first (`memcc --agent A hook …`).
                while let Some(flag) = rest.first().and_then(|w| flag_of(w)).filter(|f| binary.global.contains(f)) {
                    let takes_value = binary.flag("", &flag).is_some_and(|a| a.get_action().takes_values());
                    rest = &rest[if takes_value { 2 } else { 1 }.min(rest.len())..];
                }
                if i > 0 && binary.child(&path, rest.first().map_or("", String::as_str)).is_none() {
                    continue; // a value's alternatives, not another command
                }
                while let Some(next) = rest.first().and_then(|w| binary.child(&path, w)) {
                    last_parent = path;
                    path = next;
                    rest = &rest[1..];
                }
                segments.push((path, rest.to_vec()));
            }
            out.push(Written { doc: doc.to_string(), line: command.to_string(), segments });
        }
    }
    out
}

/// A flag as written: `--budget`, `[--budget`, `--scope=both]` → `--budget`, `--scope`.
fn flag_of(word: &str) -> Option<String> {
    let w = word.trim_start_matches(['[', '(']);
    if !w.starts_with("--") || w.len() < 3 {
        return None;
    }
    let name: String = w[2..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
    (!name.is_empty()).then(|| format!("--{name}"))
}

fn possible_values(arg: &clap::Arg) -> Vec<String> {
    arg.get_possible_values().into_iter().filter(|v| !v.is_hide_set()).map(|v| v.get_name().to_string()).collect()
}

#[test]
fn the_docs_and_the_binary_name_the_same_commands_flags_and_values() {
    let binary = Binary::new();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut all_text = String::new();
    let mut lines = Vec::new();
    for doc in DOCS {
        let text = std::fs::read_to_string(root.join(doc)).unwrap_or_else(|e| panic!("{doc}: {e}"));
        lines.extend(written(&binary, doc, &text));
        all_text.push_str(&text);
        all_text.push('\n');
    }
    let mut wrong = Vec::new();
    let mut named: BTreeSet<String> = BTreeSet::new();
    for w in &lines {
        for (path, words) in &w.segments {
            let top = if path.is_empty() {
                words.first().map_or("", String::as_str)
            } else {
                path.split(' ').next().unwrap_or("")
            };
            if top == "bench" && !binary.commands.contains_key("bench") {
                continue; // documented for a `--features bench` build, which this is not
            }
            if path.is_empty() {
                if let Some(word) = words.first().filter(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '-')) {
                    wrong.push(format!("{}: `memcc {word}` is no subcommand: {}", w.doc, w.line));
                }
                continue;
            }
            named.insert(path.clone());
            for (i, word) in words.iter().enumerate() {
                let Some(flag) = flag_of(word) else { continue };
                if binary.global.contains(&flag) {
                    continue;
                }
                let Some(arg) = binary.flag(path, &flag) else {
                    wrong.push(format!("{}: `memcc {path}` has no {flag}: {}", w.doc, w.line));
                    continue;
                };
                // `--dataset locomo|realmem`: each value is one it takes, and all of them are named.
                let values = possible_values(arg);
                if let Some(next) = words.get(i + 1).filter(|n| n.contains('|') && !values.is_empty()) {
                    let given: BTreeSet<String> =
                        next.trim_end_matches([']', ')']).split('|').map(String::from).collect();
                    let known: BTreeSet<String> = values.iter().cloned().collect();
                    if given != known {
                        wrong.push(format!(
                            "{}: `memcc {path} {flag}` takes {known:?}, the docs say {given:?}: {}",
                            w.doc, w.line
                        ));
                    }
                }
            }
        }
    }
    // Every command is written as a command line somewhere, and every flag of it named.
    let mut paths: Vec<&String> = binary.commands.keys().filter(|p| !p.is_empty()).collect();
    paths.sort();
    for path in paths {
        let cmd = &binary.commands[path];
        if cmd.is_hide_set() {
            continue;
        }
        if !named.contains(path.as_str()) && cmd.get_subcommands().next().is_none() {
            wrong.push(format!("`memcc {path}` is in no doc's command lines"));
        }
        for arg in cmd.get_arguments().filter(|a| !a.is_hide_set() && !a.is_global_set()) {
            let Some(long) = arg.get_long() else { continue };
            if long == "help" || long == "version" {
                continue;
            }
            if !all_text.contains(&format!("--{long}")) {
                wrong.push(format!("`memcc {path} --{long}` is in no doc"));
            }
        }
    }
    assert!(wrong.is_empty(), "docs and binary disagree:\n{}", wrong.join("\n"));
}
