//! One definition of the settings, `MemccConfig`, and the places that repeat it agree with it:
//! docs/cli.md's settings paragraph names every key, no key that is not one, and the default
//! it gives each is the default; the OpenClaw plugin's manifest (`configSchema`) and the keys
//! its `index.js` hands to the engine are MemccConfig's, less what a host cannot set and plus
//! what only the plugin reads.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

/// MemccConfig keys OpenClaw does not take: the context database's own path (the data dir
/// decides) and the settings of Claude Code's and Codex's hooks.
const NOT_FOR_OPENCLAW: &[&str] = &["contextDb", "hooks"];
/// What only the plugin reads (host plumbing: which model summarises, whether a deleted session
/// is remembered).
const PLUGIN_ONLY: &[&str] = &["hostModelSummaries", "flushDeletedSessions"];
/// camelCase words the settings paragraph may use that are not keys.
const NOT_KEYS: &[&str] = &["camelCase"];

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Every key of the default settings, by name: the defaults it has wherever it appears.
fn keys() -> BTreeMap<String, Vec<Value>> {
    fn walk(v: &Value, out: &mut BTreeMap<String, Vec<Value>>) {
        if let Value::Object(map) = v {
            for (k, v) in map {
                out.entry(k.clone()).or_default().push(v.clone());
                walk(v, out);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&serde_json::to_value(memcc::MemccConfig::default()).unwrap(), &mut out);
    out
}

fn top_level() -> BTreeSet<String> {
    match serde_json::to_value(memcc::MemccConfig::default()).unwrap() {
        Value::Object(map) => map.keys().cloned().collect(),
        other => panic!("settings are an object, not {other}"),
    }
}

/// docs/cli.md's paragraph that begins "Settings:".
fn settings_paragraph() -> String {
    let text = std::fs::read_to_string(root().join("docs/cli.md")).unwrap();
    let start = text.find("Settings:").expect("docs/cli.md has a Settings: paragraph");
    let rest = &text[start..];
    rest[..rest.find("\n\n").unwrap_or(rest.len())].to_string()
}

fn is_camel_key(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && word.chars().all(|c| c.is_ascii_alphanumeric())
        && word.chars().any(|c| c.is_ascii_uppercase())
}

fn words(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_ascii_alphanumeric() && c != '.').filter(|w| !w.is_empty()).collect()
}

#[test]
fn the_settings_paragraph_names_every_key_and_its_default() {
    let keys = keys();
    let paragraph = settings_paragraph();
    let said: BTreeSet<&str> = words(&paragraph).into_iter().collect();
    let mut wrong = Vec::new();
    for name in keys.keys() {
        if !said.contains(name.as_str()) {
            wrong.push(format!("docs/cli.md's settings do not name `{name}`"));
        }
    }
    for word in &said {
        if is_camel_key(word) && !keys.contains_key(*word) && !NOT_KEYS.contains(word) {
            wrong.push(format!("docs/cli.md's settings name `{word}`, which is no setting"));
        }
    }
    // "`lexical` 0.65", "freshTailCount 4", "warm true": the default as written.
    let ws = words(&paragraph);
    for pair in ws.windows(2) {
        let (name, value) = (pair[0], pair[1].trim_end_matches('.'));
        let Some(defaults) = keys.get(name) else { continue };
        let written: Option<Value> = match value {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            v => v.parse::<f64>().ok().map(Value::from),
        };
        let Some(written) = written else { continue };
        let same = |d: &Value| match (d.as_f64(), written.as_f64()) {
            (Some(a), Some(b)) => (a - b).abs() < 1e-9,
            _ => d == &written,
        };
        if !defaults.iter().any(same) {
            wrong.push(format!("docs/cli.md says `{name}` {value}; its default is {defaults:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_plugin_takes_the_settings_memcc_config_has() {
    let expected: BTreeSet<String> =
        top_level().into_iter().filter(|k| !NOT_FOR_OPENCLAW.contains(&k.as_str())).collect();

    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("plugin/openclaw.plugin.json")).unwrap()).unwrap();
    let schema: BTreeSet<String> = manifest["configSchema"]["properties"]
        .as_object()
        .expect("the manifest's configSchema has properties")
        .keys()
        .filter(|k| !PLUGIN_ONLY.contains(&k.as_str()))
        .cloned()
        .collect();
    assert_eq!(schema, expected, "plugin/openclaw.plugin.json's configSchema against MemccConfig");

    // index.js hands the engine these keys: `for (const key of ["dataDir", …])`.
    let index = std::fs::read_to_string(root().join("plugin/index.js")).unwrap();
    let list = index.split("for (const key of [").nth(1).and_then(|rest| rest.split(']').next()).unwrap();
    let handed: BTreeSet<String> = list.split(',').map(|k| k.trim().trim_matches('"').to_string()).collect();
    assert_eq!(handed, expected, "plugin/index.js's engineConfig keys against MemccConfig");
}
