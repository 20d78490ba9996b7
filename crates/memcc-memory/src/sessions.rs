//! The session index: every session memory holds, as one document of the words its messages
//! said, counted by [`super::terms`]. The ranker scores whole sessions with it (BM25 over the
//! expanded query), as a search engine ranks documents; the records of the best sessions then
//! compete on their own words.
//!
//! A session's words come from its verbatim windows, each message once: windows overlap (a
//! message is in two), so a message is claimed by the first window that brings it. The index
//! is derived from the records and follows them: a forget rebuilds the sessions it touched from
//! what is left, a purge drops them, and a store from before the index is indexed once on open.

use std::collections::HashMap;

use serde::Serialize;

use crate::record::{MemoryRecord, NewRecord, RecordKind};

/// Bump when what [`message_words`] counts changes: stores indexed under another version are
/// reindexed from their records when opened.
pub const SESSION_INDEX_VERSION: u32 = 1;

/// One message's words, as the index adds them to its session.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageWords {
    pub session: String,
    /// The message's id in the conversation store (the window's line stands for it); a line that
    /// cannot be traced to a message gets the negative of its line's hash, so it counts once.
    pub message: i64,
    pub at: Option<i64>,
    pub project: Option<String>,
    /// How often each term occurs in the message.
    pub counts: Vec<(String, u32)>,
}

impl MessageWords {
    /// The message's length in terms (what BM25 normalises by).
    pub fn length(&self) -> u32 {
        self.counts.iter().map(|(_, n)| n).sum()
    }
}

/// A session the index holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// The index's number for it (stable while the session is indexed).
    pub key: i64,
    pub agent_id: String,
    pub session_id: String,
    /// Its length in terms.
    pub length: u32,
    /// How many messages it counts.
    pub messages: u32,
    pub first_at: Option<i64>,
    pub last_at: Option<i64>,
    pub project: Option<String>,
}

/// The messages of a verbatim record as the index counts them: one per line after its date
/// line, traced to the record's message ids when they align (they do for every window MemCC
/// makes). Nothing for other kinds: summaries, preferences and facts restate what the messages
/// said.
pub fn message_words(record: &NewRecord) -> Vec<MessageWords> {
    if record.kind != RecordKind::Verbatim {
        return Vec::new();
    }
    let Some(session) = record.source_session_ids.first() else { return Vec::new() };
    lines_with_ids(&record.text, &record.source_message_ids)
        .into_iter()
        .filter_map(|(line, message)| {
            let counts = crate::terms::term_counts(line);
            (!counts.is_empty()).then(|| MessageWords {
                session: session.clone(),
                message,
                at: record.event_time,
                project: record.project.clone(),
                counts: sorted(counts),
            })
        })
        .collect()
}

/// [`message_words`] of a stored record (a rebuild reads them back from the store).
pub fn stored_message_words(record: &MemoryRecord) -> Vec<MessageWords> {
    if record.forgotten || record.kind != RecordKind::Verbatim {
        return Vec::new();
    }
    message_words(&NewRecord {
        agent_id: record.agent_id.clone(),
        kind: record.kind,
        text: record.text.clone(),
        source_session_ids: record.source_session_ids.clone(),
        source_message_ids: record.source_message_ids.clone(),
        event_time: record.event_time.or(Some(record.created_at)),
        project: record.project.clone(),
        ..NewRecord::default()
    })
}

fn sorted(counts: HashMap<String, u32>) -> Vec<(String, u32)> {
    let mut v: Vec<(String, u32)> = counts.into_iter().collect();
    v.sort();
    v
}

/// A window's message lines with their message ids: the lines after a `[Date: …]` line, one per
/// message. A text whose lines do not align with its ids (a record imported or added by hand)
/// counts as one message, keyed by its hash.
fn lines_with_ids<'a>(text: &'a str, ids: &[i64]) -> Vec<(&'a str, i64)> {
    let mut lines = text.lines();
    let dated = lines.next().is_some_and(|h| h.starts_with("[Date:"));
    let body: Vec<&str> = lines.collect();
    if dated && body.len() == ids.len() && !ids.is_empty() {
        return body.into_iter().zip(ids.iter().copied()).collect();
    }
    vec![(text, -text_key(text))]
}

/// A positive number that stands for `text` (the first 62 bits of its content hash).
fn text_key(text: &str) -> i64 {
    let hash = crate::record::content_hash(text);
    i64::from_str_radix(&hash[..15], 16).unwrap_or(1).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(text: &str, ids: &[i64]) -> NewRecord {
        NewRecord {
            agent_id: "a".into(),
            kind: RecordKind::Verbatim,
            text: text.into(),
            source_session_ids: vec!["s1".into()],
            source_message_ids: ids.to_vec(),
            event_time: Some(5),
            ..NewRecord::default()
        }
    }

    #[test]
    fn each_line_of_a_window_is_its_message() {
        let words =
            message_words(&window("[Date: 1 May 2024]\nUser: the dev server port\nAssistant: port 8080", &[7, 8]));
        assert_eq!(words.len(), 2);
        assert_eq!((words[0].message, words[1].message), (7, 8));
        assert_eq!(words[1].counts, vec![("8080".to_string(), 1), ("assist".to_string(), 1), ("port".to_string(), 1)]);
        assert_eq!(words[0].session, "s1");
        assert_eq!(words[0].length(), 4, "user, dev, server, port");
    }

    #[test]
    fn a_text_that_does_not_align_with_its_ids_is_one_message_keyed_by_its_words() {
        let words = message_words(&window("We moved the API to port 9090.", &[1, 2]));
        assert_eq!(words.len(), 1);
        assert!(words[0].message < 0);
        assert_eq!(words[0].message, message_words(&window("We moved the API to port 9090.", &[])).remove(0).message);
    }

    #[test]
    fn only_verbatim_records_of_a_session_are_counted() {
        let mut summary = window("[Date: 1 May 2024]\nUser: hello there", &[1]);
        summary.kind = RecordKind::Summary;
        assert!(message_words(&summary).is_empty());
        let mut sessionless = window("[Date: 1 May 2024]\nUser: hello there", &[1]);
        sessionless.source_session_ids.clear();
        assert!(message_words(&sessionless).is_empty());
    }
}
