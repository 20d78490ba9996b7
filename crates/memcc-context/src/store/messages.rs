//! Raw messages (never thrown away), their parts and the large files moved out of them.

use rusqlite::{OptionalExtension, Transaction, params};
use serde::Serialize;

use super::{ContextStore, Result};
use memcc_core::bridge::Role;
use memcc_core::text::fts_document;
use memcc_core::time::now_ms;

/// A content block moved out of a message because it was too large.
#[derive(Debug, Clone, PartialEq)]
pub struct LargeFile {
    pub id: String,
    pub name: String,
    pub byte_size: usize,
    pub token_count: usize,
    pub content: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewPart {
    pub kind: String,
    pub text: Option<String>,
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
    pub large_file_id: Option<String>,
}

/// A message ready to store (large blocks already replaced by pointers).
#[derive(Debug, Clone, PartialEq)]
pub struct NewMessage {
    pub role: Role,
    pub content: String,
    pub raw: String,
    pub token_count: usize,
    pub identity_hash: String,
    pub tool_call_ids: Vec<String>,
    pub tool_result_for: Option<String>,
    pub timestamp: Option<i64>,
    pub parts: Vec<NewPart>,
    pub large_files: Vec<LargeFile>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredMessage {
    pub id: i64,
    pub conversation_id: i64,
    pub seq: i64,
    pub role: Role,
    pub content: String,
    pub raw: String,
    pub token_count: usize,
    pub timestamp: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AppendOutcome {
    pub inserted: Vec<i64>,
    pub duplicates: usize,
}

impl ContextStore {
    /// Append messages in one transaction. A message whose identity hash already occurs in the
    /// conversation at least as often as it has occurred so far in this batch is a duplicate
    /// (a retried turn, a re-imported file) and is skipped.
    pub fn append_messages(&self, conversation_id: i64, messages: &[NewMessage]) -> Result<AppendOutcome> {
        self.write(|tx| append_in(tx, conversation_id, messages))
    }

    /// Append messages and record `key` as done, atomically; `None` if `key` was already done.
    pub fn append_turn(
        &self,
        conversation_id: i64,
        key: &str,
        messages: &[NewMessage],
    ) -> Result<Option<AppendOutcome>> {
        self.write(|tx| {
            let fresh = tx.execute(
                "INSERT OR IGNORE INTO turn_advancements (conversation_id, key, created_at) VALUES (?1, ?2, ?3)",
                params![conversation_id, key, now_ms()],
            )?;
            if fresh == 0 {
                return Ok(None);
            }
            Ok(Some(append_in(tx, conversation_id, messages)?))
        })
    }

    pub fn messages(&self, ids: &[i64]) -> Result<Vec<StoredMessage>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!("{MESSAGE_SELECT} WHERE id = ?1"))?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(m) = stmt.query_row([id], message_from_row).optional()? {
                out.push(m);
            }
        }
        Ok(out)
    }

    /// Messages of a conversation with `from <= seq <= to`, in order.
    pub fn messages_in_range(&self, conversation_id: i64, from: i64, to: i64) -> Result<Vec<StoredMessage>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "{MESSAGE_SELECT} WHERE conversation_id = ?1 AND seq BETWEEN ?2 AND ?3 ORDER BY seq"
        ))?;
        let rows = stmt.query_map(params![conversation_id, from, to], message_from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// The last `n` messages of a conversation whose text is words (not a tool call's marker),
    /// oldest first.
    pub fn last_messages(&self, conversation_id: i64, n: usize) -> Result<Vec<StoredMessage>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "{MESSAGE_SELECT} WHERE conversation_id = ?1 AND trim(content) <> '' AND content NOT LIKE '[tool call %'
             ORDER BY seq DESC LIMIT ?2"
        ))?;
        let rows = stmt.query_map(params![conversation_id, i64::try_from(n).unwrap_or(i64::MAX)], message_from_row)?;
        let mut out: Vec<StoredMessage> = rows.collect::<std::result::Result<_, _>>()?;
        out.reverse();
        Ok(out)
    }

    pub fn message_count(&self, conversation_id: i64) -> Result<usize> {
        let conn = self.conn();
        let n: i64 =
            conn.query_row("SELECT COUNT(*) FROM messages WHERE conversation_id = ?1", [conversation_id], |r| {
                r.get(0)
            })?;
        Ok(n as usize)
    }

    /// All message ids of a conversation, in order.
    pub fn message_ids(&self, conversation_id: i64) -> Result<Vec<i64>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached("SELECT id FROM messages WHERE conversation_id = ?1 ORDER BY seq")?;
        let rows = stmt.query_map([conversation_id], |r| r.get(0))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Whether a message of one of `conversation_ids` refers to large file `id` (a file is
    /// stored once, however many conversations hold it).
    pub fn large_file_in(&self, id: &str, conversation_ids: &[i64]) -> Result<bool> {
        let conn = self.conn();
        let scope = super::scope_json(conversation_ids);
        Ok(conn
            .query_row(
                "SELECT 1 FROM message_parts p JOIN messages m ON m.id = p.message_id
                 WHERE p.large_file_id = ?1 AND m.conversation_id IN (SELECT value FROM json_each(?2)) LIMIT 1",
                params![id, scope],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    pub fn large_file(&self, id: &str) -> Result<Option<LargeFile>> {
        let conn = self.conn();
        Ok(conn
            .query_row("SELECT id, name, byte_size, token_count, content FROM large_files WHERE id = ?1", [id], |r| {
                Ok(LargeFile {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    byte_size: r.get::<_, i64>(2)? as usize,
                    token_count: r.get::<_, i64>(3)? as usize,
                    content: r.get(4)?,
                })
            })
            .optional()?)
    }
}

fn append_in(tx: &Transaction<'_>, conversation_id: i64, messages: &[NewMessage]) -> Result<AppendOutcome> {
    let mut outcome = AppendOutcome::default();
    let mut seq: i64 = tx.query_row(
        "SELECT COALESCE(MAX(seq), 0) FROM messages WHERE conversation_id = ?1",
        [conversation_id],
        |r| r.get(0),
    )?;
    let mut ordinal: i64 = tx.query_row(
        "SELECT COALESCE(MAX(ordinal), 0) FROM context_items WHERE conversation_id = ?1",
        [conversation_id],
        |r| r.get(0),
    )?;
    let mut seen_in_batch: std::collections::HashMap<&str, i64> = std::collections::HashMap::new();
    let now = now_ms();
    let mut count_stmt =
        tx.prepare_cached("SELECT COUNT(*) FROM messages WHERE conversation_id = ?1 AND identity_hash = ?2")?;
    for m in messages {
        let occurrence = seen_in_batch.entry(m.identity_hash.as_str()).or_insert(0);
        *occurrence += 1;
        let stored: i64 = count_stmt.query_row(params![conversation_id, m.identity_hash], |r| r.get(0))?;
        if stored >= *occurrence {
            outcome.duplicates += 1;
            continue;
        }
        for f in &m.large_files {
            tx.execute(
                "INSERT OR IGNORE INTO large_files (id, conversation_id, name, byte_size, token_count, content, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![f.id, conversation_id, f.name, f.byte_size as i64, f.token_count as i64, f.content, now],
            )?;
        }
        seq += 1;
        let calls = (!m.tool_call_ids.is_empty())
            .then(|| serde_json::to_string(&m.tool_call_ids).unwrap_or_else(|_| "[]".into()));
        tx.execute(
            "INSERT INTO messages (conversation_id, seq, role, content, raw, token_count, identity_hash, tool_call_ids,
                                   tool_result_for, timestamp, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                conversation_id,
                seq,
                m.role.as_str(),
                m.content,
                m.raw,
                m.token_count as i64,
                m.identity_hash,
                calls,
                m.tool_result_for,
                m.timestamp,
                now
            ],
        )?;
        let id = tx.last_insert_rowid();
        let mut part_stmt = tx.prepare_cached(
            "INSERT INTO message_parts (message_id, idx, kind, text, tool_call_id, tool_name, large_file_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for (idx, p) in m.parts.iter().enumerate() {
            part_stmt.execute(params![id, idx as i64, p.kind, p.text, p.tool_call_id, p.tool_name, p.large_file_id])?;
        }
        tx.execute("INSERT INTO messages_fts (rowid, body) VALUES (?1, ?2)", params![id, fts_document(&m.content)])?;
        ordinal += 1;
        tx.execute(
            "INSERT INTO context_items (conversation_id, ordinal, message_id, token_count) VALUES (?1, ?2, ?3, ?4)",
            params![conversation_id, ordinal, id, m.token_count as i64],
        )?;
        outcome.inserted.push(id);
    }
    if !outcome.inserted.is_empty() {
        tx.execute("UPDATE conversations SET updated_at = ?1 WHERE id = ?2", params![now, conversation_id])?;
    }
    Ok(outcome)
}

pub(super) const MESSAGE_SELECT: &str =
    "SELECT id, conversation_id, seq, role, content, raw, token_count, timestamp FROM messages";

pub(super) fn message_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredMessage> {
    Ok(StoredMessage {
        id: r.get(0)?,
        conversation_id: r.get(1)?,
        seq: r.get(2)?,
        role: Role::from(r.get::<_, String>(3)?),
        content: r.get(4)?,
        raw: r.get(5)?,
        token_count: r.get::<_, i64>(6)? as usize,
        timestamp: r.get(7)?,
    })
}
