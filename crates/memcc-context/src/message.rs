//! The message model, mirroring OpenClaw's `AgentMessage`.
//!
//! Known kinds (`user`, `assistant`, `toolResult`) and content parts (`text`, `thinking`,
//! `image`, `toolCall`) are typed; every field the model does not name is kept in `extra`, and a
//! message or part that does not parse as a known kind is kept verbatim as [`AgentMessage::Unknown`]
//! / [`ContentPart::Unknown`]. So `from_value(v).to_value() == v` for every JSON object.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub type Extra = Map<String, Value>;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum KnownPart {
    #[serde(rename = "text")]
    Text {
        text: String,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename = "thinking")]
    Thinking {
        thinking: String,
        #[serde(flatten)]
        extra: Extra,
    },
    /// `data` (base64) and `mimeType` stay in `extra`.
    #[serde(rename = "image")]
    Image {
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename = "toolCall")]
    ToolCall {
        id: String,
        name: String,
        #[serde(default)]
        arguments: Value,
        #[serde(flatten)]
        extra: Extra,
    },
}

/// One block of message content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ContentPart {
    Known(KnownPart),
    Unknown(Value),
}

impl ContentPart {
    pub fn text(text: impl Into<String>) -> Self {
        ContentPart::Known(KnownPart::Text { text: text.into(), extra: Extra::new() })
    }

    pub fn tool_call(id: &str, name: &str, arguments: Value) -> Self {
        ContentPart::Known(KnownPart::ToolCall { id: id.into(), name: name.into(), arguments, extra: Extra::new() })
    }
}

/// `content` of a user or tool-result message: a plain string or a list of parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    Text(String),
    Parts(Vec<ContentPart>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    pub content: Content,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `model`, `usage`, `stopReason`, `timestamp`, `api`, `provider`… stay in `extra`, so that
/// whatever shape the host gives them (or `null`) survives a round trip; accessors read them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// A list of parts; a plain string (OpenAI-style transcripts) reads as one text part.
    #[serde(deserialize_with = "parts_or_text")]
    pub content: Vec<ContentPart>,
    #[serde(flatten)]
    pub extra: Extra,
}

fn parts_or_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<ContentPart>, D::Error> {
    Ok(match Content::deserialize(d)? {
        Content::Text(text) => vec![ContentPart::text(text)],
        Content::Parts(parts) => parts,
    })
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultMessage {
    #[serde(rename = "toolCallId")]
    pub tool_call_id: String,
    #[serde(rename = "toolName", default)]
    pub tool_name: String,
    pub content: Content,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "role")]
enum Known {
    #[serde(rename = "user")]
    User(UserMessage),
    #[serde(rename = "assistant")]
    Assistant(AssistantMessage),
    #[serde(rename = "toolResult")]
    ToolResult(ToolResultMessage),
}

/// A conversation message as the host sends it.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentMessage {
    User(UserMessage),
    Assistant(AssistantMessage),
    ToolResult(ToolResultMessage),
    /// Any other kind (or a known kind that did not parse), kept as it came.
    Unknown(Value),
}

/// How many tokens an image block is counted as: providers bill images by size, not by the
/// length of their base64, and a fixed figure keeps budgets predictable.
pub const IMAGE_TOKENS: usize = 1_000;

impl AgentMessage {
    /// Parse a JSON value; never fails: what is not a known kind becomes `Unknown`.
    pub fn from_value(value: Value) -> Self {
        match serde_json::from_value::<Known>(value.clone()) {
            Ok(Known::User(m)) => AgentMessage::User(m),
            Ok(Known::Assistant(m)) => AgentMessage::Assistant(m),
            Ok(Known::ToolResult(m)) => AgentMessage::ToolResult(m),
            Err(_) => AgentMessage::Unknown(value),
        }
    }

    pub fn to_value(&self) -> Value {
        let known = match self {
            AgentMessage::User(m) => Known::User(m.clone()),
            AgentMessage::Assistant(m) => Known::Assistant(m.clone()),
            AgentMessage::ToolResult(m) => Known::ToolResult(m.clone()),
            AgentMessage::Unknown(v) => return v.clone(),
        };
        // Serialising plain data with string keys cannot fail.
        serde_json::to_value(known).unwrap_or(Value::Null)
    }

    pub fn user(text: &str) -> Self {
        AgentMessage::User(UserMessage { content: Content::Text(text.into()), extra: Extra::new() })
    }

    pub fn assistant(parts: Vec<ContentPart>) -> Self {
        AgentMessage::Assistant(AssistantMessage { content: parts, extra: Extra::new() })
    }

    pub fn tool_result(tool_call_id: &str, tool_name: &str, text: &str) -> Self {
        AgentMessage::ToolResult(ToolResultMessage {
            tool_call_id: tool_call_id.into(),
            tool_name: tool_name.into(),
            content: Content::Parts(vec![ContentPart::text(text)]),
            extra: Extra::new(),
        })
    }

    /// Set `timestamp` (ms since epoch); returns self for chaining.
    pub fn with_timestamp(self, ms: i64) -> Self {
        self.with_field("timestamp", ms.into())
    }

    /// Set `name`, the speaker (see [`AgentMessage::speaker`]); returns self for chaining.
    pub fn with_speaker(self, name: &str) -> Self {
        self.with_field("name", name.into())
    }

    fn with_field(mut self, key: &str, value: Value) -> Self {
        if let Some(extra) = self.extra_mut() {
            extra.insert(key.into(), value);
        } else if let AgentMessage::Unknown(Value::Object(map)) = &mut self {
            map.insert(key.into(), value);
        }
        self
    }

    fn extra(&self) -> Option<&Extra> {
        match self {
            AgentMessage::User(m) => Some(&m.extra),
            AgentMessage::Assistant(m) => Some(&m.extra),
            AgentMessage::ToolResult(m) => Some(&m.extra),
            AgentMessage::Unknown(_) => None,
        }
    }

    fn extra_mut(&mut self) -> Option<&mut Extra> {
        match self {
            AgentMessage::User(m) => Some(&mut m.extra),
            AgentMessage::Assistant(m) => Some(&mut m.extra),
            AgentMessage::ToolResult(m) => Some(&mut m.extra),
            AgentMessage::Unknown(_) => None,
        }
    }

    fn field(&self, key: &str) -> Option<&Value> {
        match self {
            AgentMessage::Unknown(v) => v.get(key),
            _ => self.extra().and_then(|e| e.get(key)),
        }
    }

    /// `user`, `assistant`, `toolResult`, or the unknown kind's own `role`/`type` (else `unknown`).
    pub fn role(&self) -> String {
        match self {
            AgentMessage::User(_) => "user".into(),
            AgentMessage::Assistant(_) => "assistant".into(),
            AgentMessage::ToolResult(_) => "toolResult".into(),
            AgentMessage::Unknown(v) => {
                v.get("role").or_else(|| v.get("type")).and_then(Value::as_str).unwrap_or("unknown").to_string()
            }
        }
    }

    /// Milliseconds since the epoch: a number, or an RFC 3339 string; `None` when absent or
    /// outside what [`memcc_core::time::validate`] accepts (see [`AgentMessage::timestamp_error`]).
    pub fn timestamp(&self) -> Option<i64> {
        self.raw_timestamp().and_then(|ms| memcc_core::time::validate(ms).ok())
    }

    /// A timestamp the message carries but MemCC cannot use (a nanosecond clock, a year past
    /// 9999); the message is still stored, without it.
    pub fn timestamp_error(&self) -> Option<memcc_core::time::TimestampError> {
        self.raw_timestamp().and_then(|ms| memcc_core::time::validate(ms).err())
    }

    fn raw_timestamp(&self) -> Option<i64> {
        match self.field("timestamp")? {
            Value::Number(n) => n.as_i64().or_else(|| n.as_f64().filter(|f| f.is_finite()).map(|f| f as i64)),
            Value::String(s) => chrono::DateTime::parse_from_rfc3339(s).ok().map(|d| d.timestamp_millis()),
            _ => None,
        }
    }

    /// Who said it, when the host names the speaker (OpenAI-style `name`).
    pub fn speaker(&self) -> Option<String> {
        let name = self.field("name")?.as_str()?.trim();
        (!name.is_empty() && name.chars().count() <= 64).then(|| name.to_string())
    }

    pub fn model(&self) -> Option<&str> {
        self.field("model").and_then(Value::as_str)
    }

    pub fn stop_reason(&self) -> Option<&str> {
        self.field("stopReason").and_then(Value::as_str)
    }

    pub fn usage(&self) -> Option<&Value> {
        self.field("usage")
    }

    pub fn is_error(&self) -> bool {
        self.field("isError").and_then(Value::as_bool).unwrap_or(false)
    }

    /// All content parts (a string content is one text part).
    pub fn parts(&self) -> Vec<ContentPart> {
        match self {
            AgentMessage::User(m) => content_parts(&m.content),
            AgentMessage::ToolResult(m) => content_parts(&m.content),
            AgentMessage::Assistant(m) => m.content.clone(),
            AgentMessage::Unknown(_) => Vec::new(),
        }
    }

    /// Ids of the tool calls this (assistant) message makes.
    pub fn tool_call_ids(&self) -> Vec<String> {
        match self {
            AgentMessage::Assistant(m) => m
                .content
                .iter()
                .filter_map(|p| match p {
                    ContentPart::Known(KnownPart::ToolCall { id, .. }) => Some(id.clone()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The tool call this (tool result) message answers.
    pub fn tool_result_for(&self) -> Option<&str> {
        match self {
            AgentMessage::ToolResult(m) => Some(&m.tool_call_id),
            _ => None,
        }
    }

    /// The message as searchable, summarisable text. Thinking is left out (it is kept in the raw
    /// message); tool calls and images are rendered as short markers.
    pub fn text(&self) -> String {
        let mut out = String::new();
        if let AgentMessage::ToolResult(m) = self {
            let status = if self.is_error() { " error" } else { "" };
            out.push_str(&format!("[tool result {}{status}] ", m.tool_name));
        }
        if let AgentMessage::Unknown(v) = self {
            return v.to_string();
        }
        for part in self.parts() {
            let piece = match &part {
                ContentPart::Known(KnownPart::Text { text, .. }) => text.clone(),
                ContentPart::Known(KnownPart::Thinking { .. }) => continue,
                ContentPart::Known(KnownPart::Image { .. }) => "[image]".into(),
                ContentPart::Known(KnownPart::ToolCall { name, arguments, .. }) => {
                    format!("[tool call {name} {arguments}]")
                }
                ContentPart::Unknown(v) => v.to_string(),
            };
            if !out.is_empty() && !out.ends_with(' ') {
                out.push('\n');
            }
            out.push_str(&piece);
        }
        out
    }

    /// Estimated tokens of the message as the model will see it.
    pub fn token_count(&self) -> usize {
        let images = self.parts().iter().filter(|p| matches!(p, ContentPart::Known(KnownPart::Image { .. }))).count();
        let thinking: usize = self
            .parts()
            .iter()
            .map(|p| match p {
                ContentPart::Known(KnownPart::Thinking { thinking, .. }) => memcc_core::estimate_tokens(thinking),
                _ => 0,
            })
            .sum();
        // 4 tokens of per-message framing (role, separators), as chat formats add.
        4 + memcc_core::estimate_tokens(&self.text()) + thinking + images * IMAGE_TOKENS
    }
}

fn content_parts(content: &Content) -> Vec<ContentPart> {
    match content {
        Content::Text(t) => vec![ContentPart::text(t.clone())],
        Content::Parts(p) => p.clone(),
    }
}

impl Serialize for AgentMessage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

impl<'de> Deserialize<'de> for AgentMessage {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(AgentMessage::from_value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(v: Value) -> AgentMessage {
        let m = AgentMessage::from_value(v.clone());
        assert_eq!(m.to_value(), v, "round trip changed the message");
        let text = serde_json::to_string(&m).unwrap();
        let back: AgentMessage = serde_json::from_str(&text).unwrap();
        assert_eq!(back, m);
        m
    }

    #[test]
    fn an_assistant_message_with_plain_text_content_is_an_assistant_message() {
        // OpenAI-style transcripts ({role, content} JSONL) give assistant content as a string;
        // it once fell through to Unknown and its JSON reached summaries.
        let m = AgentMessage::from_value(json!({"role": "assistant", "content": "Melanie: hi", "timestamp": 5}));
        assert!(matches!(m, AgentMessage::Assistant(_)), "{m:?}");
        assert_eq!((m.text().as_str(), m.timestamp()), ("Melanie: hi", Some(5)));
    }

    #[test]
    fn openclaw_shapes_round_trip() {
        let u = round_trip(json!({"role": "user", "content": "hi", "timestamp": 1700000000000i64}));
        assert!(matches!(u, AgentMessage::User(_)));
        assert_eq!(u.timestamp(), Some(1_700_000_000_000));

        let parts = round_trip(json!({"role": "user", "content": [
            {"type": "text", "text": "look"},
            {"type": "image", "data": "aGk=", "mimeType": "image/png"}
        ]}));
        assert_eq!(parts.text(), "look\n[image]");

        let a = round_trip(json!({
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"},
                {"type": "text", "text": "calling"},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.txt"}}
            ],
            "api": "openai-completions", "provider": "mock", "model": "m1",
            "usage": {"input": 10, "output": 5, "cost": {"total": 0.01}},
            "stopReason": "toolUse", "timestamp": 1700000000001i64, "errorMessage": null
        }));
        assert!(matches!(a, AgentMessage::Assistant(_)));
        assert_eq!(a.tool_call_ids(), vec!["c1".to_string()]);
        assert_eq!(a.model(), Some("m1"));
        assert_eq!(a.stop_reason(), Some("toolUse"));
        assert!(a.usage().is_some());

        let t = round_trip(json!({
            "role": "toolResult", "toolCallId": "c1", "toolName": "read",
            "content": [{"type": "text", "text": "file body"}], "isError": false,
            "details": {"bytes": 9}, "timestamp": 1700000000002i64
        }));
        assert_eq!(t.tool_result_for(), Some("c1"));
        assert!(t.text().contains("file body"));
    }

    #[test]
    fn unknown_kinds_and_parts_are_kept() {
        let custom = round_trip(json!({"role": "bashExecution", "command": "ls", "output": "a b"}));
        assert!(matches!(custom, AgentMessage::Unknown(_)));
        assert_eq!(custom.role(), "bashExecution");

        let odd_part = round_trip(json!({"role": "assistant", "content": [{"type": "audio", "data": "x"}]}));
        assert!(matches!(odd_part, AgentMessage::Assistant(_)));

        // A known role with a broken shape is kept, not rejected.
        let broken = round_trip(json!({"role": "toolResult", "content": 42}));
        assert!(matches!(broken, AgentMessage::Unknown(_)));
    }
}
