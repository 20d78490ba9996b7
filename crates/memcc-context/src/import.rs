//! Reading transcripts: OpenClaw session JSONL (`{"type":"message","message":{…}}` entries among
//! header and bookkeeping entries) and plain `{role, content}` JSONL.
//!
//! Bad lines (invalid UTF-8, malformed JSON, non-objects) are reported by line number and
//! skipped; they never stop the good lines from being read.

use std::io::BufRead;

use serde::Serialize;
use serde_json::Value;

use crate::message::AgentMessage;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LineError {
    pub line: usize,
    pub error: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ParsedTranscript {
    pub messages: Vec<AgentMessage>,
    /// Non-message entries (session headers, model changes…), skipped on purpose.
    pub other_entries: usize,
    pub errors: Vec<LineError>,
    /// Messages of no kind MemCC reads (a role other than user / assistant / toolResult, or one
    /// of those that did not parse): kept and assembled as given, which a host's own entries
    /// need, but a typo ("usr") or another format's role ("system") is worth a word.
    pub unread: Vec<LineError>,
    /// The session id from an OpenClaw session header, if the file has one.
    pub header_session_id: Option<String>,
}

/// [`read_entry`], noting a message of no kind MemCC reads by its line.
fn entry(value: Value, line: usize, parsed: &mut ParsedTranscript) -> Result<(), String> {
    let before = parsed.messages.len();
    let result = read_entry(value, parsed);
    if let Some(m @ AgentMessage::Unknown(_)) = parsed.messages.get(before) {
        let role = m.role();
        let note = if matches!(role.as_str(), "user" | "assistant" | "toolResult") {
            format!("a {role} message that does not parse as one (kept as given)")
        } else {
            format!("role {role:?} is not user, assistant or toolResult (kept as given)")
        };
        parsed.unread.push(LineError { line, error: note });
    }
    result
}

/// Interpret one JSON value of a transcript.
fn read_entry(value: Value, parsed: &mut ParsedTranscript) -> Result<(), String> {
    let Value::Object(map) = &value else {
        return Err("expected a JSON object".into());
    };
    if map.contains_key("role") {
        parsed.messages.push(AgentMessage::from_value(value));
        return Ok(());
    }
    match map.get("type").and_then(Value::as_str) {
        Some("message") => match map.get("message") {
            Some(Value::Object(_)) => {
                let mut message = map.get("message").cloned().unwrap_or(Value::Null);
                // Entry-level timestamps (ISO strings) stand in when the message has none.
                if message.get("timestamp").is_none()
                    && let (Some(ts), Value::Object(m)) = (map.get("timestamp"), &mut message)
                {
                    m.insert("timestamp".into(), ts.clone());
                }
                parsed.messages.push(AgentMessage::from_value(message));
                Ok(())
            }
            _ => Err("message entry without a \"message\" object".into()),
        },
        Some("session") => {
            parsed.header_session_id = map.get("id").and_then(Value::as_str).map(String::from);
            parsed.other_entries += 1;
            Ok(())
        }
        Some(_) => {
            parsed.other_entries += 1;
            Ok(())
        }
        None => Err("neither a message (no \"role\") nor a typed transcript entry (no \"type\")".into()),
    }
}

/// Parse a JSONL transcript. I/O errors abort; bad lines are collected in `errors`.
pub fn parse_jsonl(mut reader: impl BufRead) -> std::io::Result<ParsedTranscript> {
    let mut parsed = ParsedTranscript::default();
    let mut buf = Vec::new();
    let mut line_no = 0usize;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        line_no += 1;
        let text = match std::str::from_utf8(&buf) {
            Ok(t) => t.trim(),
            Err(e) => {
                parsed
                    .errors
                    .push(LineError { line: line_no, error: format!("invalid UTF-8 at byte {}", e.valid_up_to()) });
                continue;
            }
        };
        if text.is_empty() {
            continue;
        }
        let result = serde_json::from_str::<Value>(text)
            .map_err(|e| format!("malformed JSON: {e}"))
            .and_then(|v| entry(v, line_no, &mut parsed));
        if let Err(error) = result {
            parsed.errors.push(LineError { line: line_no, error });
        }
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_formats_and_reports_bad_lines() {
        let mut data = Vec::new();
        data.extend_from_slice(b"{\"type\":\"session\",\"id\":\"s-1\",\"timestamp\":\"2026-01-01T00:00:00Z\"}\n");
        data.extend_from_slice(b"{\"type\":\"message\",\"timestamp\":\"2026-01-01T00:00:01Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n");
        data.extend_from_slice(b"{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"hello\"}]}\n");
        data.extend_from_slice(b"{\"role\": \"user\", \"content\": \"unterminated\n");
        data.extend_from_slice(b"\xff\xfe not utf8\n");
        data.extend_from_slice(b"\n[1,2]\n");
        data.extend_from_slice(b"{\"type\":\"model_change\",\"model\":\"x\"}\n");
        data.extend_from_slice(b"{\"foo\":1}\n");
        let parsed = parse_jsonl(&data[..]).unwrap();
        assert_eq!(parsed.messages.len(), 2);
        assert_eq!(parsed.header_session_id.as_deref(), Some("s-1"));
        assert_eq!(parsed.other_entries, 2);
        assert_eq!(parsed.messages[0].timestamp(), Some(1_767_225_601_000));
        let lines: Vec<usize> = parsed.errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![4, 5, 7, 9]);
        assert!(parsed.errors[1].error.contains("UTF-8"));
        assert!(parsed.unread.is_empty(), "{:?}", parsed.unread);
    }

    #[test]
    fn messages_of_no_kind_memcc_reads_are_kept_and_named_by_line() {
        let data = b"{\"role\":\"user\",\"content\":\"hi\"}\n\
                     {\"role\":\"usr\",\"content\":\"typo\"}\n\
                     {\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":123}}\n";
        let parsed = parse_jsonl(&data[..]).unwrap();
        assert_eq!(parsed.messages.len(), 3, "kept, as a host's own entries must be");
        let lines: Vec<usize> = parsed.unread.iter().map(|n| n.line).collect();
        assert_eq!(lines, vec![2, 3]);
        assert!(parsed.unread[0].error.contains("\"usr\""), "{:?}", parsed.unread);
        assert!(parsed.unread[1].error.contains("does not parse"), "{:?}", parsed.unread);
    }
}
