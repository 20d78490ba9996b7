//! Verbatim recall records: the raw messages a summary covers, as small overlapping windows of
//! consecutive messages, each dated and with its provenance, so that a later question can be
//! answered from the speakers' own words.
//!
//! Why windows and not one record per user turn: a fact is often split across two speakers (a
//! question, then its answer). Consecutive windows share their boundary messages (the stride is
//! half a window), and the first window of a leaf starts with the message before the leaf (its
//! *lead-in*), so every pair of adjacent messages is whole in at least one record.

use memcc_core::bridge::{BridgeMessage, Role};
use memcc_core::estimate_tokens;
use memcc_core::time::{date_header, ground_relative_dates};

#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub text: String,
    pub message_ids: Vec<i64>,
    pub event_time: Option<i64>,
}

/// Longest tool output kept in a window, in characters.
const TOOL_CHARS: usize = 300;

/// Longest message kept in a window, in characters: two of them fit in a record
/// ([`crate::record::MAX_RECORD_CHARS`]). The message itself stays whole in the context store.
const MESSAGE_CHARS: usize = crate::record::MAX_RECORD_CHARS / 2;

/// One message as a record line: `Speaker: words` (the role when the speaker is unknown), with
/// relative dates grounded against the message's time. `None` for a message without words.
pub fn line(m: &BridgeMessage) -> Option<String> {
    let mut text = m.text.trim().to_string();
    if text.is_empty() {
        return None;
    }
    let cap = if m.role == Role::ToolResult { TOOL_CHARS } else { MESSAGE_CHARS };
    if text.chars().count() > cap {
        text = format!("{}…", text.chars().take(cap).collect::<String>());
    }
    let text = ground_relative_dates(&text.replace('\n', " "), m.timestamp);
    let label = m.speaker.as_deref().unwrap_or(m.role.as_str());
    // A host that already writes "Name: …" into the text is not repeated.
    Some(if text.strip_prefix(label).is_some_and(|rest| rest.starts_with(':')) {
        text
    } else {
        format!("{label}: {text}")
    })
}

struct Line {
    text: String,
    id: i64,
    time: Option<i64>,
    tokens: usize,
    own: bool,
}

/// Overlapping windows over `messages` (preceded by the last message of `lead_in`), each of at
/// most `max_tokens` — but at least two messages when two fit in twice that, so a question is
/// never alone. Windows holding only the lead-in are not made (it was delivered before).
pub fn windows(lead_in: &[BridgeMessage], messages: &[BridgeMessage], max_tokens: usize) -> Vec<Chunk> {
    let lines: Vec<Line> = lead_in
        .iter()
        .rev()
        .take(1)
        .map(|m| (m, false))
        .chain(messages.iter().map(|m| (m, true)))
        .filter_map(|(m, own)| {
            let text = line(m)?;
            Some(Line { tokens: estimate_tokens(&text), text, id: m.message_id, time: m.timestamp, own })
        })
        .collect();
    let mut out = Vec::new();
    let mut start = 0;
    while start < lines.len() {
        let mut end = start;
        let mut tokens = 0;
        while end < lines.len() {
            let t = tokens + lines[end].tokens;
            let fits = t <= max_tokens || (end - start < 2 && t <= 2 * max_tokens);
            if end > start && !fits {
                break;
            }
            tokens = t;
            end += 1;
        }
        // A window never ends on a question whose answer follows: the answer joins it.
        if end < lines.len() && ends_with_question(&lines[end - 1].text) && tokens + lines[end].tokens <= 2 * max_tokens
        {
            end += 1;
        }
        let window = &lines[start..end];
        if window.iter().any(|l| l.own) {
            let first = window.iter().filter_map(|l| l.time).min();
            let last = window.iter().filter_map(|l| l.time).max();
            let body: Vec<&str> = window.iter().map(|l| l.text.as_str()).collect();
            out.push(Chunk {
                text: format!("{}\n{}", date_header(first, last), body.join("\n")),
                message_ids: window.iter().map(|l| l.id).collect(),
                event_time: first,
            });
        }
        if end == lines.len() {
            break;
        }
        start += (end - start).div_ceil(2);
    }
    out
}

fn ends_with_question(text: &str) -> bool {
    text.trim_end().ends_with(['?', '？'])
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
            timestamp: Some(1_683_554_160_000 + id * 60_000),
            speaker: None,
        }
    }

    #[test]
    fn every_adjacent_pair_shares_a_window() {
        let m: Vec<_> =
            (1..=9).map(|i| msg(i, if i % 2 == 1 { "user" } else { "assistant" }, "a short line")).collect();
        let w = windows(&[], &m, 12);
        for pair in m.windows(2) {
            let (a, b) = (pair[0].message_id, pair[1].message_id);
            assert!(
                w.iter().any(|c| c.message_ids.contains(&a) && c.message_ids.contains(&b)),
                "{a} and {b} never together: {w:?}"
            );
        }
        assert!(w.iter().all(|c| c.message_ids.len() >= 2));
        assert!(w.len() < m.len(), "windows overlap by about half, not more: {}", w.len());
    }

    #[test]
    fn a_window_does_not_end_on_a_question() {
        let m = [
            msg(1, "user", "We are planning a team trip next month."),
            msg(2, "assistant", "Where are you headed, do you know yet?"),
            msg(3, "user", "Edinburgh, Scotland, on Tim's advice."),
            msg(4, "assistant", "Lovely."),
        ];
        let w = windows(&[], &m, 24);
        let asked = w.iter().find(|c| c.message_ids.contains(&2)).unwrap();
        assert!(asked.message_ids.contains(&3), "{w:?}");
    }

    #[test]
    fn the_lead_in_joins_the_first_window_only() {
        let before = [msg(1, "assistant", "What did you buy?")];
        let m = [msg(2, "user", "A red bike"), msg(3, "assistant", "Nice")];
        let w = windows(&before, &m, 300);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].message_ids, vec![1, 2, 3]);
        assert!(
            w[0].text.starts_with("[Date: 2023-05-08]\nassistant: What did you buy?\nuser: A red bike"),
            "{}",
            w[0].text
        );
        assert!(windows(&before, &[], 300).is_empty(), "a lead-in alone makes no record");
    }

    #[test]
    fn lines_name_the_speaker_and_ground_dates() {
        let mut m = msg(1, "user", "I went to the support group yesterday");
        m.speaker = Some("Caroline".into());
        assert_eq!(line(&m).unwrap(), "Caroline: I went to the support group yesterday (7 May 2023)");
        m.text = "Caroline: hi".into();
        assert_eq!(line(&m).unwrap(), "Caroline: hi", "not named twice");
        m.text = "  ".into();
        assert_eq!(line(&m), None);
    }

    #[test]
    fn long_messages_stand_alone() {
        let long = "word ".repeat(400);
        let m = vec![msg(1, "user", "q"), msg(2, "assistant", &long), msg(3, "assistant", &long)];
        let w = windows(&[], &m, 300);
        assert!(w.iter().all(|c| c.message_ids.len() <= 2), "{w:?}");
        assert!(m.iter().all(|x| w.iter().any(|c| c.message_ids.contains(&x.message_id))));
    }
}
