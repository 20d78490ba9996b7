//! Summaries and the DAG edges to what each covers (messages for a leaf, summaries for a
//! condensed one), committed together with the context items they replace.

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use super::{ContextStore, ItemRef, Result};
use memcc_core::text::fts_document;

pub use memcc_core::bridge::SummaryKind;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub id: String,
    pub conversation_id: i64,
    pub kind: SummaryKind,
    pub depth: u32,
    pub content: String,
    pub token_count: usize,
    pub earliest: Option<i64>,
    pub latest: Option<i64>,
    pub first_seq: i64,
    pub last_seq: i64,
    pub descendant_messages: usize,
    pub descendant_summaries: usize,
    pub source_tokens: usize,
    pub method: String,
    pub created_at: i64,
}

/// A summary to commit, with the edges to what it covers.
#[derive(Debug, Clone, PartialEq)]
pub struct NewSummary {
    pub summary: Summary,
    /// Leaf: the covered messages, in order.
    pub message_ids: Vec<i64>,
    /// Condensed: the child summaries, in order.
    pub child_ids: Vec<String>,
}

impl ContextStore {
    pub fn summary(&self, id: &str) -> Result<Option<Summary>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!("{SUMMARY_SELECT} WHERE id = ?1"))?;
        Ok(stmt.query_row([id], summary_from_row).optional()?)
    }

    pub fn summaries(&self, conversation_id: i64) -> Result<Vec<Summary>> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare_cached(&format!("{SUMMARY_SELECT} WHERE conversation_id = ?1 ORDER BY first_seq, depth"))?;
        let rows = stmt.query_map([conversation_id], summary_from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Direct children of a summary: message ids (leaf) and child summary ids (condensed).
    pub fn summary_children(&self, id: &str) -> Result<(Vec<i64>, Vec<String>)> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare_cached("SELECT message_id FROM summary_messages WHERE summary_id = ?1 ORDER BY ord")?;
        let messages = stmt.query_map([id], |r| r.get(0))?.collect::<std::result::Result<_, _>>()?;
        let mut stmt =
            conn.prepare_cached("SELECT summary_id FROM summary_parents WHERE parent_id = ?1 ORDER BY ord")?;
        let children = stmt.query_map([id], |r| r.get(0))?.collect::<std::result::Result<_, _>>()?;
        Ok((messages, children))
    }

    /// Summaries that directly contain `id`.
    pub fn summary_parents(&self, id: &str) -> Result<Vec<String>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached("SELECT parent_id FROM summary_parents WHERE summary_id = ?1")?;
        let rows = stmt.query_map([id], |r| r.get(0))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// The leaf summary covering message `id`, if it has been compacted.
    pub fn leaf_of_message(&self, id: i64) -> Result<Option<String>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached("SELECT summary_id FROM summary_messages WHERE message_id = ?1 LIMIT 1")?;
        Ok(stmt.query_row([id], |r| r.get(0)).optional()?)
    }

    /// Replace the context items at `ordinals` (which must still be exactly `expected`) with the
    /// new summary, writing the summary, its edges, its FTS row and its memory hand-off
    /// (`outbox`, the bridge payload as JSON) in the same transaction. Returns `false` (and
    /// writes nothing) when the items changed underneath.
    pub fn commit_summary(
        &self,
        new: &NewSummary,
        ordinals: &[i64],
        expected: &[ItemRef],
        outbox: Option<&str>,
    ) -> Result<bool> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let s = &new.summary;
        {
            let mut check = tx.prepare_cached(
                "SELECT message_id, summary_id FROM context_items WHERE conversation_id = ?1 AND ordinal = ?2",
            )?;
            for (ordinal, want) in ordinals.iter().zip(expected) {
                let found: Option<(Option<i64>, Option<String>)> =
                    check.query_row(params![s.conversation_id, ordinal], |r| Ok((r.get(0)?, r.get(1)?))).optional()?;
                let same = match (found, want) {
                    (Some((Some(m), None)), ItemRef::Message { id, .. }) => m == *id,
                    (Some((None, Some(sid))), ItemRef::Summary { id, .. }) => sid == *id,
                    _ => false,
                };
                if !same {
                    return Ok(false);
                }
            }
        }
        tx.execute(
            "INSERT INTO summaries (id, conversation_id, kind, depth, content, token_count, earliest, latest, first_seq, last_seq,
                                    descendant_messages, descendant_summaries, source_tokens, method, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
            params![
                s.id, s.conversation_id, s.kind.as_str(), s.depth, s.content, s.token_count as i64, s.earliest, s.latest,
                s.first_seq, s.last_seq, s.descendant_messages as i64, s.descendant_summaries as i64,
                s.source_tokens as i64, s.method, s.created_at
            ],
        )?;
        let rowid = tx.last_insert_rowid();
        tx.execute(
            "INSERT INTO summaries_fts (rowid, body) VALUES (?1, ?2)",
            params![rowid, fts_document(&s.content)],
        )?;
        for (ord, mid) in new.message_ids.iter().enumerate() {
            tx.execute(
                "INSERT INTO summary_messages (summary_id, message_id, ord) VALUES (?1, ?2, ?3)",
                params![s.id, mid, ord as i64],
            )?;
        }
        for (ord, child) in new.child_ids.iter().enumerate() {
            tx.execute(
                "INSERT INTO summary_parents (parent_id, summary_id, ord) VALUES (?1, ?2, ?3)",
                params![s.id, child, ord as i64],
            )?;
        }
        let mut del = tx.prepare_cached("DELETE FROM context_items WHERE conversation_id = ?1 AND ordinal = ?2")?;
        for ordinal in ordinals {
            del.execute(params![s.conversation_id, ordinal])?;
        }
        drop(del);
        let first = ordinals.iter().min().copied().unwrap_or(0);
        tx.execute(
            "INSERT INTO context_items (conversation_id, ordinal, summary_id, token_count) VALUES (?1, ?2, ?3, ?4)",
            params![s.conversation_id, first, s.id, s.token_count as i64],
        )?;
        if let Some(payload) = outbox {
            super::outbox::enqueue(&tx, &s.id, s.conversation_id, payload)?;
        }
        tx.commit()?;
        Ok(true)
    }
}

pub(crate) const SUMMARY_SELECT: &str =
    "SELECT id, conversation_id, kind, depth, content, token_count, earliest, latest, first_seq,
    last_seq, descendant_messages, descendant_summaries, source_tokens, method, created_at FROM summaries";

pub(crate) fn summary_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Summary> {
    let kind: String = r.get(2)?;
    // A row this MemCC did not write (another version, a hand edit) is an error naming it, not a
    // condensed summary of a wrapped depth.
    let corrupt = |what: String| rusqlite::Error::FromSqlConversionFailure(2, rusqlite::types::Type::Text, what.into());
    let kind = match kind.as_str() {
        "leaf" => SummaryKind::Leaf,
        "condensed" => SummaryKind::Condensed,
        other => return Err(corrupt(format!("summary kind {other:?} is neither leaf nor condensed"))),
    };
    let depth: i64 = r.get(3)?;
    Ok(Summary {
        id: r.get(0)?,
        conversation_id: r.get(1)?,
        kind,
        depth: u32::try_from(depth).map_err(|_| corrupt(format!("summary depth {depth} is out of range")))?,
        content: r.get(4)?,
        token_count: r.get::<_, i64>(5)? as usize,
        earliest: r.get(6)?,
        latest: r.get(7)?,
        first_seq: r.get(8)?,
        last_seq: r.get(9)?,
        descendant_messages: r.get::<_, i64>(10)? as usize,
        descendant_summaries: r.get::<_, i64>(11)? as usize,
        source_tokens: r.get::<_, i64>(12)? as usize,
        method: r.get(13)?,
        created_at: r.get(14)?,
    })
}
