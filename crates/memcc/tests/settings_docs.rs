//! One definition of the settings, `MemccConfig`, and the places that repeat it agree with it:
//! the OpenClaw plugin manifest's `configSchema` and docs/settings.md are generated from it
//! (`UPDATE_GOLDEN=1` rewrites them), the keys the plugin's `index.js` hands to the engine are
//! its keys, and docs/cli.md's settings paragraph names no key that is not one.

use std::collections::BTreeSet;
use std::path::Path;

use memcc::settings;
use serde_json::Value;

/// camelCase words the settings paragraph may use that are not keys.
const NOT_KEYS: &[&str] = &["camelCase", "configSchema"];

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn top_level() -> BTreeSet<String> {
    match serde_json::to_value(memcc::MemccConfig::default()).unwrap() {
        Value::Object(map) => map.keys().cloned().collect(),
        other => panic!("settings are an object, not {other}"),
    }
}

/// Every key of the settings, at any depth.
fn all_keys() -> BTreeSet<String> {
    fn walk(v: &Value, out: &mut BTreeSet<String>) {
        if let Value::Object(map) = v {
            for (k, v) in map {
                out.insert(k.clone());
                walk(v, out);
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(&serde_json::to_value(memcc::MemccConfig::default()).unwrap(), &mut out);
    out
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

/// `generated` is what `path` must hold; under `UPDATE_GOLDEN=1` it is written there.
fn generated_file(path: &str, generated: &str) {
    let path = root().join(path);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, generated).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "{} is not what MemccConfig generates; run `UPDATE_GOLDEN=1 cargo test -p memcc --test settings_docs` and \
         review the diff",
        path.display()
    );
}

#[test]
fn the_plugin_manifest_schema_is_generated_from_memcc_config() {
    let path = root().join("plugin/openclaw.plugin.json");
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let text = settings::manifest_with_generated_config_schema(&manifest);
    let reread: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(reread["configSchema"], settings::openclaw_config_schema());
    for key in ["id", "name", "kind", "contracts"] {
        assert_eq!(reread[key], manifest[key], "the manifest's own `{key}` is kept");
    }
    generated_file("plugin/openclaw.plugin.json", &text);
}

#[test]
fn docs_settings_md_is_generated_from_memcc_config() {
    generated_file("docs/settings.md", &settings::markdown());
}

#[test]
fn every_setting_says_what_it_does() {
    fn walk(schema: &Value, path: &str, missing: &mut Vec<String>) {
        let Some(props) = schema.get("properties").and_then(Value::as_object) else { return };
        for (key, prop) in props {
            let name = format!("{path}{key}");
            match prop.get("description").and_then(Value::as_str) {
                None | Some("") => missing.push(name.clone()),
                // A reader of the docs or OpenClaw's settings is no reader of Rust paths.
                Some(text) if text.contains("::") => missing.push(format!("{name} (says a Rust path: {text})")),
                Some(_) => {}
            }
            walk(prop, &format!("{name}."), missing);
        }
    }
    let mut missing = Vec::new();
    walk(&settings::openclaw_config_schema(), "", &mut missing);
    walk(&settings::schema(), "", &mut missing);
    assert!(missing.is_empty(), "settings without a doc comment (the schema's description): {missing:?}");
}

/// OpenClaw fills in a schema's defaults before the plugin sees its config: what it fills in must
/// be the settings MemCC would have had without them.
#[test]
fn the_schema_defaults_a_host_fills_in_are_the_defaults() {
    let schema = settings::schema();
    let props = schema["properties"].as_object().unwrap();
    let filled: serde_json::Map<String, Value> =
        props.iter().filter_map(|(k, p)| p.get("default").map(|d| (k.clone(), d.clone()))).collect();
    assert_eq!(filled.len(), props.len(), "every setting has a default");
    let config: memcc::MemccConfig = serde_json::from_value(Value::Object(filled)).unwrap();
    assert_eq!(config, memcc::MemccConfig::default());
    let plugin = settings::openclaw_config_schema();
    let types: Vec<&str> =
        ["context", "memory"].iter().map(|k| plugin["properties"][k]["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["object", "object"], "nested settings are described, key by key, not as any object");
    assert_eq!(plugin["properties"]["memory"]["properties"]["tuning"]["additionalProperties"], Value::Bool(false));
}

#[test]
fn the_settings_paragraph_names_only_settings() {
    let keys = all_keys();
    let paragraph = settings_paragraph();
    assert!(paragraph.contains("settings.md"), "docs/cli.md's settings paragraph points at docs/settings.md");
    let wrong: Vec<&str> = paragraph
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| is_camel_key(w) && !keys.contains(*w) && !NOT_KEYS.contains(w))
        .collect();
    assert!(wrong.is_empty(), "docs/cli.md's settings name what is no setting: {wrong:?}");
}

#[test]
fn the_plugin_takes_the_settings_memcc_config_has() {
    let expected: BTreeSet<String> =
        top_level().into_iter().filter(|k| !settings::NOT_FOR_OPENCLAW.contains(&k.as_str())).collect();

    // index.js hands the engine these keys: `for (const key of ["dataDir", …])`.
    let index = std::fs::read_to_string(root().join("plugin/index.js")).unwrap();
    let list = index.split("for (const key of [").nth(1).and_then(|rest| rest.split(']').next()).unwrap();
    let handed: BTreeSet<String> = list.split(',').map(|k| k.trim().trim_matches('"').to_string()).collect();
    assert_eq!(handed, expected, "plugin/index.js's engineConfig keys against MemccConfig");
}
