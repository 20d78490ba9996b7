//! Verbatim recall: the raw exchanges a summary covers, cut into small dated chunks so a later
//! question can be answered from the speakers' own words, each with its provenance.

use memcc_core::bridge::BridgeMessage;
use memcc_core::estimate_tokens;

#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub text: String,
    pub message_ids: Vec<i64>,
    pub event_time: Option<i64>,
}

pub fn format_date(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms).map(|d| d.format("%Y-%m-%d %H:%M").to_string()).unwrap_or_default()
}

/// `[Date: …]` header for a span.
pub fn date_header(from: Option<i64>, to: Option<i64>) -> String {
    match (from, to) {
        (Some(a), Some(b)) if format_date(a)[..10] != format_date(b)[..10] => {
            format!("[Date: {} – {}]", format_date(a), format_date(b))
        }
        (Some(a), _) | (None, Some(a)) => format!("[Date: {}]", format_date(a)),
        (None, None) => "[Date: unknown]".into(),
    }
}

/// Longest tool output kept in a chunk, in characters.
const TOOL_CHARS: usize = 300;

/// Group messages into exchanges (a user message and what answers it), cut at `max_tokens`.
pub fn chunks(messages: &[BridgeMessage], max_tokens: usize) -> Vec<Chunk> {
    let mut out: Vec<Chunk> = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    let mut ids: Vec<i64> = Vec::new();
    let mut times: Vec<i64> = Vec::new();
    let mut tokens = 0usize;
    let flush = |lines: &mut Vec<String>, ids: &mut Vec<i64>, times: &mut Vec<i64>, out: &mut Vec<Chunk>| {
        if lines.is_empty() {
            return;
        }
        let first = times.iter().min().copied();
        let last = times.iter().max().copied();
        out.push(Chunk {
            text: format!("{}\n{}", date_header(first, last), lines.join("\n")),
            message_ids: std::mem::take(ids),
            event_time: first,
        });
        lines.clear();
        times.clear();
    };
    for m in messages {
        let mut text = m.text.trim().to_string();
        if text.is_empty() {
            continue;
        }
        if m.role == "toolResult" && text.chars().count() > TOOL_CHARS {
            text = format!("{}…", text.chars().take(TOOL_CHARS).collect::<String>());
        }
        let line = format!("{}: {}", m.role, text);
        let t = estimate_tokens(&line);
        if (m.role == "user" || tokens + t > max_tokens) && !lines.is_empty() {
            flush(&mut lines, &mut ids, &mut times, &mut out);
            tokens = 0;
        }
        lines.push(line);
        ids.push(m.message_id);
        times.extend(m.timestamp);
        tokens += t;
    }
    flush(&mut lines, &mut ids, &mut times, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(id: i64, role: &str, text: &str) -> BridgeMessage {
        BridgeMessage {
            message_id: id,
            seq: id,
            role: role.into(),
            text: text.into(),
            timestamp: Some(1_700_000_000_000 + id * 60_000),
        }
    }

    #[test]
    fn exchanges_start_at_user_messages_and_carry_provenance() {
        let m = vec![
            msg(1, "user", "hi"),
            msg(2, "assistant", "hello"),
            msg(3, "user", "I live in Oslo"),
            msg(4, "assistant", "nice"),
        ];
        let c = chunks(&m, 300);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].message_ids, vec![1, 2]);
        assert!(c[1].text.starts_with("[Date: 2023-11-14 22:16]\nuser: I live in Oslo"), "{}", c[1].text);
    }

    #[test]
    fn long_exchanges_are_cut() {
        let long = "word ".repeat(400);
        let m = vec![msg(1, "user", "q"), msg(2, "assistant", &long), msg(3, "assistant", &long)];
        let c = chunks(&m, 300);
        assert_eq!(c.len(), 3);
    }
}
