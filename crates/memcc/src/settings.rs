//! The settings' one definition, [`MemccConfig`], and what is generated from it: its JSON schema,
//! the OpenClaw plugin manifest's `configSchema` (less what OpenClaw does not take, plus what only
//! the plugin reads) and docs/settings.md. The files in the repository are checked against these
//! by `tests/settings_docs.rs`, which rewrites them under `UPDATE_GOLDEN=1`.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

use crate::MemccConfig;

/// MemccConfig keys OpenClaw does not take: the context database's own path (the data dir
/// decides) and the settings of Claude Code's and Codex's hooks.
pub const NOT_FOR_OPENCLAW: &[&str] = &["contextDb", "hooks"];

/// What only the OpenClaw plugin reads: host plumbing the engine never sees.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct OpenClawOnly {
    /// With `compactionModel` null: summarise with the host's model (`runtimeContext.llm`);
    /// false: offline extractive summaries. Extractive is always the fallback.
    pub host_model_summaries: bool,
    /// Flush a session the user deletes into long-term memory like one that ends (by default
    /// what is deleted is not remembered).
    pub flush_deleted_sessions: bool,
}

impl Default for OpenClawOnly {
    fn default() -> Self {
        OpenClawOnly { host_model_summaries: true, flush_deleted_sessions: false }
    }
}

/// The JSON schema of a settings type, every part inline (OpenClaw's validator and a reader
/// both want one self-contained object) and in the vocabulary every validator knows.
fn schema_of<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft07()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    tidy(&mut schema);
    schema
}

/// Leaves out what only Rust readers need: the type's title, Rust's integer and float formats
/// (`uint32`, `double`: no JSON Schema validator knows them, and some refuse what they do not
/// know), and rustdoc's link brackets in descriptions.
fn tidy(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.shift_remove("title");
            if map.get("format").and_then(Value::as_str).is_some_and(is_rust_number_format) {
                map.shift_remove("format");
            }
            if let Some(Value::String(text)) = map.get_mut("description") {
                *text = plain_description(text);
            }
            map.values_mut().for_each(tidy);
        }
        Value::Array(items) => items.iter_mut().for_each(tidy),
        _ => {}
    }
}

fn is_rust_number_format(format: &str) -> bool {
    matches!(format, "double" | "float")
        || ["int", "uint"].iter().any(|p| format.strip_prefix(p).is_some_and(|n| n.chars().all(|c| c.is_ascii_digit())))
}

/// "[`Tuning`]" → "`Tuning`", "[`x`](crate::y)" → "`x`", and one line.
fn plain_description(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("[`") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let Some(end) = after.find("`]") else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        out.push_str(&after[..end + 1]);
        rest = &after[end + 2..];
        // A link target, "(…)", goes with its brackets.
        if rest.starts_with('(')
            && let Some(close) = rest.find(')')
        {
            rest = &rest[close + 1..];
        }
    }
    out.push_str(rest);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The JSON schema of a settings file (`--config`, `settings.json`).
pub fn schema() -> Value {
    schema_of::<MemccConfig>()
}

/// The OpenClaw plugin manifest's `configSchema`.
pub fn openclaw_config_schema() -> Value {
    let mut schema = schema();
    let mut plugin_only = schema_of::<OpenClawOnly>();
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        for key in NOT_FOR_OPENCLAW {
            props.shift_remove(*key);
        }
        if let Some(Value::Object(data_dir)) = props.get_mut("dataDir") {
            data_dir.insert(
                "description".into(),
                "Where context.db, memory.db and models/ live (default: $MEMCC_HOME, else memcc/ in the OpenClaw \
                 state dir, e.g. ~/.openclaw/memcc)."
                    .into(),
            );
        }
        if let Some(Value::Object(extra)) = plugin_only.get_mut("properties").map(Value::take) {
            props.extend(extra);
        }
    }
    schema
}

/// docs/settings.md: every setting with its type, default and meaning, one table per object.
pub fn markdown() -> String {
    let mut out = String::from(
        "# Settings\n\n\
         <!-- Generated from MemccConfig (crates/memcc/src/settings.rs); `UPDATE_GOLDEN=1 cargo test -p memcc --test \
         settings_docs` rewrites it. -->\n\n\
         A settings file (`memcc --config settings.json`) is one JSON object with these camelCase keys; the \
         OpenClaw plugin takes the same keys in its config, less `contextDb` and \
         `hooks`, plus `hostModelSummaries` and `flushDeletedSessions`. A key MemCC does not know is refused, and so is \
         a value of the wrong type; a key left out keeps its default.\n",
    );
    table(&mut out, "Top level", "", &schema());
    let plugin = schema_of::<OpenClawOnly>();
    table(&mut out, "OpenClaw plugin only", "", &plugin);
    out
}

fn table(out: &mut String, heading: &str, prefix: &str, schema: &Value) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else { return };
    out.push_str(&format!("\n## {heading}\n\n| key | type | default | what it does |\n|---|---|---|---|\n"));
    let mut nested: Vec<(String, &Value)> = Vec::new();
    for (key, prop) in props {
        let name = format!("{prefix}{key}");
        if prop.get("properties").is_some() {
            nested.push((name.clone(), prop));
            out.push_str(&format!("| `{name}` | object | | {} (below) |\n", cell(prop)));
            continue;
        }
        let default = prop.get("default").map(default_text).unwrap_or_default();
        out.push_str(&format!("| `{name}` | {} | {default} | {} |\n", type_text(prop), cell(prop)));
    }
    for (name, prop) in nested {
        table(out, &format!("`{name}`"), &format!("{name}."), prop);
    }
}

fn cell(prop: &Value) -> String {
    prop.get("description").and_then(Value::as_str).unwrap_or("").replace('|', "\\|")
}

fn default_text(value: &Value) -> String {
    match value {
        Value::Null => "none".into(),
        Value::Array(items) if items.is_empty() => "[]".into(),
        other => format!("`{other}`"),
    }
}

fn type_text(prop: &Value) -> String {
    if let Some(choices) = prop.get("oneOf").or_else(|| prop.get("anyOf")).and_then(Value::as_array) {
        let names: Vec<String> = choices.iter().map(choice_text).collect();
        return names.join(" \\| ");
    }
    if let Some(values) = prop.get("enum").and_then(Value::as_array) {
        return values.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(" \\| ");
    }
    let base = match prop.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => {
            ts.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect::<Vec<_>>().join(" \\| ")
        }
        _ => String::new(),
    };
    let base = if base == "array" {
        let item = prop.get("items").map(type_text).unwrap_or_default();
        format!("array of {item}")
    } else {
        base
    };
    match (prop.get("minimum"), prop.get("maximum")) {
        (Some(min), Some(max)) => format!("{base} {min}–{max}"),
        (Some(min), None) if min.as_f64().is_some_and(|m| m > 0.0) => format!("{base} ≥ {min}"),
        _ => base,
    }
}

fn choice_text(choice: &Value) -> String {
    match choice.get("const").or_else(|| choice.get("enum").and_then(|e| e.get(0))) {
        Some(v) => format!("`{v}`"),
        None => type_text(choice),
    }
}

/// The manifest's text with the generated `configSchema`, everything else as it was: its own
/// keys first, in the order a reader looks for them, the schema last.
pub fn manifest_with_generated_config_schema(manifest: &Value) -> String {
    const FIRST: &[&str] = &["id", "name", "description", "kind", "activation", "contracts"];
    let empty = serde_json::Map::new();
    let map = manifest.as_object().unwrap_or(&empty);
    let mut keys: Vec<&str> = FIRST.iter().copied().filter(|k| map.contains_key(*k)).collect();
    keys.extend(map.keys().map(String::as_str).filter(|k| !FIRST.contains(k) && *k != "configSchema"));
    let schema = openclaw_config_schema();
    let entries = keys.iter().filter_map(|k| map.get(*k).map(|v| (*k, v))).chain([("configSchema", &schema)]);
    let lines: Vec<String> = entries
        .map(|(key, value)| {
            let text = serde_json::to_string_pretty(value).unwrap_or_default().replace('\n', "\n  ");
            format!("  {}: {text}", Value::from(key))
        })
        .collect();
    format!("{{\n{}\n}}\n", lines.join(",\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_lose_rustdoc_links_and_line_breaks() {
        assert_eq!(
            plain_description("See [`Tuning`] and\n[`the pool`](crate::x::Y) here."),
            "See `Tuning` and `the pool` here."
        );
        assert_eq!(plain_description("An open [`bracket"), "An open [`bracket");
        assert_eq!(plain_description("[x](y) stays"), "[x](y) stays");
    }

    #[test]
    fn only_rust_number_formats_are_left_out() {
        for format in ["uint", "uint32", "int64", "double", "float"] {
            assert!(is_rust_number_format(format), "{format}");
        }
        for format in ["uri", "date-time", "integer", "uintx"] {
            assert!(!is_rust_number_format(format), "{format}");
        }
    }
}
