//! Turning a host message into a storable one: identity hash, flattened text, parts, and large
//! content blocks moved behind pointers before they can pollute the summary tree.

use memcc_core::bridge::Role;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::message::{AgentMessage, Content, ContentPart, KnownPart};
use crate::store::{LargeFile, NewMessage, NewPart};
use memcc_core::estimate_tokens;

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Characters of a large block shown in its pointer.
const PREVIEW_CHARS: usize = 400;

/// The id a large block is stored under: derived from its content, never from input names.
pub fn large_file_id(content: &str) -> String {
    format!("file_{}", &sha256_hex(content.as_bytes())[..16])
}

fn pointer_text(file: &LargeFile) -> String {
    let preview: String = file.content.chars().take(PREVIEW_CHARS).collect();
    format!(
        "[MemCC large file {id}: {name}, {bytes} bytes, ~{tokens} tokens, stored outside the context. \
         Expand with lcm_expand_query ids=[\"{id}\"]. Preview:]\n{preview}…",
        id = file.id,
        name = file.name,
        bytes = file.byte_size,
        tokens = file.token_count,
    )
}

/// Replace `text` with a pointer when it is over `threshold` tokens.
fn externalize(text: &mut String, name: &str, threshold: usize, files: &mut Vec<LargeFile>) -> Option<String> {
    let tokens = estimate_tokens(text);
    if tokens <= threshold {
        return None;
    }
    let content = std::mem::take(text);
    let file = LargeFile {
        id: large_file_id(&content),
        name: name.to_string(),
        byte_size: content.len(),
        token_count: tokens,
        content,
    };
    *text = pointer_text(&file);
    let id = file.id.clone();
    files.push(file);
    Some(id)
}

/// JSON with every object's keys sorted, whatever map serde_json was built with (a dependency
/// turning on its `preserve_order` feature keeps keys as they came, and the same message sent
/// with its keys in another order must still be recognised as a retry).
fn canonical(value: &serde_json::Value) -> String {
    use serde_json::Value;
    fn write(v: &Value, out: &mut String) {
        match v {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push(':');
                    write(&map[k], out);
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(item, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(value, &mut out);
    out
}

/// Prepare `message` for storage.
pub fn prepare(message: &AgentMessage, threshold: usize) -> NewMessage {
    let identity_hash = sha256_hex(canonical(&message.to_value()).as_bytes());
    let mut msg = message.clone();
    let mut files = Vec::new();
    let mut replaced: Vec<(usize, String)> = Vec::new();
    let name = match &msg {
        AgentMessage::ToolResult(t) => format!("{} output", t.tool_name),
        AgentMessage::User(_) => "user content".into(),
        AgentMessage::Assistant(_) => "assistant content".into(),
        AgentMessage::Unknown(_) => format!("{} message", message.role()),
    };
    let mut externalize_parts = |parts: &mut Vec<ContentPart>, files: &mut Vec<LargeFile>| {
        for (i, part) in parts.iter_mut().enumerate() {
            if let ContentPart::Known(KnownPart::Text { text, .. }) = part
                && let Some(id) = externalize(text, &name, threshold, files)
            {
                replaced.push((i, id));
            }
        }
    };
    match &mut msg {
        AgentMessage::User(u) => match &mut u.content {
            Content::Text(t) => {
                if let Some(id) = externalize(t, &name, threshold, &mut files) {
                    replaced.push((0, id));
                }
            }
            Content::Parts(p) => externalize_parts(p, &mut files),
        },
        AgentMessage::ToolResult(t) => match &mut t.content {
            Content::Text(s) => {
                if let Some(id) = externalize(s, &name, threshold, &mut files) {
                    replaced.push((0, id));
                }
            }
            Content::Parts(p) => externalize_parts(p, &mut files),
        },
        AgentMessage::Assistant(a) => externalize_parts(&mut a.content, &mut files),
        AgentMessage::Unknown(v) => {
            let mut whole = v.to_string();
            if let Some(id) = externalize(&mut whole, &name, threshold, &mut files) {
                let role = message.role();
                *v = serde_json::json!({ "role": role, "memccLargeFile": id, "text": whole });
                replaced.push((0, id));
            }
        }
    }
    let parts = msg
        .parts()
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let large_file_id = replaced.iter().find(|(idx, _)| *idx == i).map(|(_, id)| id.clone());
            match p {
                ContentPart::Known(KnownPart::Text { text, .. }) => {
                    part("text", Some(text.clone()), None, None, large_file_id)
                }
                ContentPart::Known(KnownPart::Thinking { thinking, .. }) => {
                    part("thinking", Some(thinking.clone()), None, None, None)
                }
                ContentPart::Known(KnownPart::Image { .. }) => part("image", None, None, None, None),
                ContentPart::Known(KnownPart::ToolCall { id, name, arguments, .. }) => {
                    part("toolCall", Some(arguments.to_string()), Some(id.clone()), Some(name.clone()), None)
                }
                ContentPart::Unknown(v) => {
                    let kind = v.get("type").and_then(Value::as_str).unwrap_or("unknown").to_string();
                    part(&kind, Some(v.to_string()), None, None, None)
                }
            }
        })
        .collect();
    if let Some(e) = message.timestamp_error() {
        tracing::warn!(error = %e, "message stored without its timestamp");
    }
    NewMessage {
        role: Role::from(msg.role()),
        content: msg.text(),
        raw: msg.to_value().to_string(),
        token_count: msg.token_count(),
        identity_hash,
        tool_call_ids: msg.tool_call_ids(),
        tool_result_for: msg.tool_result_for().map(String::from),
        timestamp: message.timestamp(),
        parts,
        large_files: files,
    }
}

fn part(kind: &str, text: Option<String>, call: Option<String>, tool: Option<String>, file: Option<String>) -> NewPart {
    NewPart { kind: kind.to_string(), text, tool_call_id: call, tool_name: tool, large_file_id: file }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_of_a_message_does_not_depend_on_key_order() {
        let a: serde_json::Value =
            serde_json::from_str(r#"{"role":"user","content":"hi","timestamp":5,"x":{"b":1,"a":[{"d":2,"c":3}]}}"#)
                .unwrap();
        let b: serde_json::Value =
            serde_json::from_str(r#"{"x":{"a":[{"c":3,"d":2}],"b":1},"timestamp":5,"content":"hi","role":"user"}"#)
                .unwrap();
        assert_eq!(canonical(&a), canonical(&b));
        assert_eq!(canonical(&a), r#"{"content":"hi","role":"user","timestamp":5,"x":{"a":[{"c":3,"d":2}],"b":1}}"#);
        let (ma, mb) = (AgentMessage::from_value(a), AgentMessage::from_value(b));
        assert_eq!(prepare(&ma, 25_000).identity_hash, prepare(&mb, 25_000).identity_hash);
    }

    #[test]
    fn large_tool_output_becomes_a_pointer() {
        let big = "x".repeat(200_000);
        let msg = AgentMessage::tool_result("c1", "bash", &big);
        let prepared = prepare(&msg, 25_000);
        assert_eq!(prepared.large_files.len(), 1);
        let file = &prepared.large_files[0];
        assert_eq!(file.content.len(), 200_000);
        assert!(file.id.starts_with("file_") && file.id.len() == 21);
        assert_eq!(file.name, "bash output");
        assert!(prepared.raw.contains(&file.id));
        assert!(prepared.token_count < 500, "pointer stays small: {}", prepared.token_count);
        assert_eq!(prepared.parts[0].large_file_id.as_deref(), Some(file.id.as_str()));
        // Identity is of the original message, so re-sending the big one is recognised.
        assert_eq!(prepare(&msg, 25_000).identity_hash, prepared.identity_hash);
    }

    #[test]
    fn small_messages_are_untouched() {
        let msg = AgentMessage::user("hello");
        let prepared = prepare(&msg, 25_000);
        assert!(prepared.large_files.is_empty());
        assert_eq!(serde_json::from_str::<Value>(&prepared.raw).unwrap(), msg.to_value());
    }
}
