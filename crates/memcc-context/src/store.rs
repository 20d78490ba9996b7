//! SQLite persistence of conversations, messages, summaries, the summary DAG and context items.
//!
//! Policy (what to compact, what to assemble) lives elsewhere; this module only reads and writes,
//! and every write that belongs together happens in one transaction.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde::Serialize;

use crate::error::StoreError;
use crate::schema;
use memcc_core::text::fts_document;
use memcc_core::time::now_ms;

type Result<T> = std::result::Result<T, StoreError>;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conversation {
    pub id: i64,
    pub session_id: String,
    pub session_key: Option<String>,
    pub agent_id: String,
}

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
    pub role: String,
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
    pub role: String,
    pub content: String,
    pub raw: String,
    pub token_count: usize,
    pub timestamp: Option<i64>,
}

pub use memcc_core::bridge::SummaryKind;

#[derive(Debug, Clone, PartialEq, Serialize)]
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

/// What a context item stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemRef {
    Message { id: i64, seq: i64, role: String, tool_call_ids: Vec<String>, tool_result_for: Option<String> },
    Summary { id: String, depth: u32 },
}

/// One entry of the ordered list that currently stands in for a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextItem {
    pub ordinal: i64,
    pub tokens: usize,
    pub item: ItemRef,
    /// When it was said: a message's timestamp, a summary's latest.
    pub time: Option<i64>,
}

impl ContextItem {
    pub fn is_message(&self) -> bool {
        matches!(self.item, ItemRef::Message { .. })
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AppendOutcome {
    pub inserted: Vec<i64>,
    pub duplicates: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StoreStats {
    pub conversations: i64,
    pub messages: i64,
    pub message_tokens: i64,
    pub summaries: i64,
    pub leaf_summaries: i64,
    pub condensed_summaries: i64,
    pub max_depth: i64,
    pub context_items: i64,
    pub context_tokens: i64,
    pub large_files: i64,
    /// Summaries not yet handed to long-term memory (the outbox).
    pub pending_memory_handoffs: i64,
}

/// Filters shared by full-text and regex search.
#[derive(Debug, Clone, Default)]
pub struct SearchFilter {
    /// The conversations the search may read (its scope; never "all").
    pub conversation_ids: Vec<i64>,
    pub since: Option<i64>,
    pub before: Option<i64>,
    pub limit: usize,
}

impl SearchFilter {
    fn scope_json(&self) -> String {
        serde_json::to_string(&self.conversation_ids).unwrap_or_else(|_| "[]".into())
    }
}

/// The context store: one SQLite file in WAL mode.
pub struct ContextStore {
    conn: Mutex<Connection>,
    path: Option<PathBuf>,
}

impl ContextStore {
    /// Open (creating directories and the file as needed) and migrate.
    pub fn open(path: &Path) -> Result<Self> {
        let mut conn = memcc_core::sqlite::open_writer(path)?;
        schema::migrate(&mut conn)?;
        Ok(ContextStore { conn: Mutex::new(conn), path: Some(path.to_path_buf()) })
    }

    pub fn open_in_memory() -> Result<Self> {
        let mut conn = Connection::open_in_memory()?;
        memcc_core::sqlite::configure(&conn)?;
        schema::migrate(&mut conn)?;
        Ok(ContextStore { conn: Mutex::new(conn), path: None })
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite inconsistent (transactions roll
        // back on drop), so a poisoned lock is safe to reuse.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Run `f` in one write transaction, begun IMMEDIATE: a deferred one that reads first
    /// fails at once with SQLITE_BUSY when it upgrades to write beside another process's
    /// writer, where IMMEDIATE waits (busy timeout) for its turn.
    pub(crate) fn write<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let out = f(&tx)?;
        tx.commit()?;
        Ok(out)
    }

    /// `PRAGMA integrity_check` — "ok" when healthy.
    pub fn integrity_check(&self) -> Result<String> {
        Ok(self.conn().query_row("PRAGMA integrity_check", [], |r| r.get(0))?)
    }

    pub fn find_conversation(&self, session_id: &str) -> Result<Option<Conversation>> {
        let conn = self.conn();
        find_conversation(&conn, session_id)
    }

    /// The conversation of `session_id`, created on first use.
    pub fn conversation(&self, session_id: &str, session_key: Option<&str>, agent_id: &str) -> Result<Conversation> {
        let conn = self.conn();
        if let Some(c) = find_conversation(&conn, session_id)? {
            if session_key.is_some() && c.session_key.as_deref() != session_key {
                conn.execute(
                    "UPDATE conversations SET session_key = ?1, updated_at = ?2 WHERE id = ?3",
                    params![session_key, now_ms(), c.id],
                )?;
                return Ok(Conversation { session_key: session_key.map(String::from), ..c });
            }
            return Ok(c);
        }
        let now = now_ms();
        // Another process may create the same session at the same moment: the first wins, and
        // both then read the one row.
        conn.execute(
            "INSERT OR IGNORE INTO conversations (session_id, session_key, agent_id, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?4)",
            params![session_id, session_key, agent_id, now],
        )?;
        find_conversation(&conn, session_id)?
            .ok_or_else(|| StoreError::Corrupt(format!("conversation {session_id} vanished after its insert")))
    }

    /// Hand-offs of `conversation_id` due now, oldest first: (summary id, payload JSON, attempts).
    pub fn outbox_due(&self, conversation_id: i64, limit: usize) -> Result<Vec<(String, String, i64)>> {
        let conn = self.conn();
        crate::outbox::due(&conn, conversation_id, now_ms(), limit)
    }

    /// Conversations with summaries waiting for memory.
    pub fn conversations_with_handoffs(&self) -> Result<Vec<Conversation>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT id, session_id, session_key, agent_id FROM conversations
             WHERE id IN (SELECT DISTINCT conversation_id FROM memory_outbox) ORDER BY id",
        )?;
        let rows = stmt.query_map([], conversation_from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// A hand-off delivered: it leaves the outbox.
    pub fn outbox_done(&self, summary_id: &str) -> Result<()> {
        self.conn().execute("DELETE FROM memory_outbox WHERE summary_id = ?1", [summary_id])?;
        Ok(())
    }

    /// A hand-off that failed: tried again after a back-off that doubles per attempt.
    pub fn outbox_failed(&self, summary_id: &str, error: &str) -> Result<()> {
        let conn = self.conn();
        crate::outbox::failed(&conn, summary_id, error, now_ms())
    }

    /// How many hand-offs wait (all conversations, or one).
    pub fn outbox_pending(&self, conversation_id: Option<i64>) -> Result<usize> {
        let n: i64 = self.conn().query_row(
            "SELECT COUNT(*) FROM memory_outbox WHERE ?1 IS NULL OR conversation_id = ?1",
            [conversation_id],
            |r| r.get(0),
        )?;
        Ok(n as usize)
    }

    /// Delete a conversation and everything stored for it (see [`crate::purge`]); (messages,
    /// summaries) deleted.
    pub fn purge_conversation(&self, conversation_id: i64) -> Result<(usize, usize)> {
        self.write(|tx| crate::purge::purge(tx, conversation_id))
    }

    /// The ids of `agent`'s conversations.
    pub fn conversation_ids_of(&self, agent_id: &str) -> Result<Vec<i64>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached("SELECT id FROM conversations WHERE agent_id = ?1 ORDER BY id")?;
        let rows = stmt.query_map([agent_id], |r| r.get(0))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    pub fn conversations(&self) -> Result<Vec<Conversation>> {
        let conn = self.conn();
        let mut stmt = conn.prepare("SELECT id, session_id, session_key, agent_id FROM conversations ORDER BY id")?;
        let rows = stmt.query_map([], conversation_from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

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

    pub fn context_items(&self, conversation_id: i64) -> Result<Vec<ContextItem>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT ci.ordinal, ci.token_count, ci.message_id, ci.summary_id, m.seq, m.role, m.tool_call_ids, m.tool_result_for, s.depth,
                    COALESCE(m.timestamp, s.latest)
             FROM context_items ci
             LEFT JOIN messages m ON m.id = ci.message_id
             LEFT JOIN summaries s ON s.id = ci.summary_id
             WHERE ci.conversation_id = ?1 ORDER BY ci.ordinal",
        )?;
        let rows = stmt.query_map([conversation_id], |r| {
            let ordinal: i64 = r.get(0)?;
            let tokens: i64 = r.get(1)?;
            let message_id: Option<i64> = r.get(2)?;
            let item = match message_id {
                Some(id) => {
                    let calls: Option<String> = r.get(6)?;
                    ItemRef::Message {
                        id,
                        seq: r.get(4)?,
                        role: r.get(5)?,
                        tool_call_ids: calls.and_then(|c| serde_json::from_str(&c).ok()).unwrap_or_default(),
                        tool_result_for: r.get(7)?,
                    }
                }
                None => ItemRef::Summary { id: r.get(3)?, depth: r.get::<_, i64>(8)? as u32 },
            };
            Ok(ContextItem { ordinal, tokens: tokens as usize, item, time: r.get(9)? })
        })?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    pub fn context_item_count(&self, conversation_id: i64) -> Result<usize> {
        let conn = self.conn();
        let n: i64 =
            conn.query_row("SELECT COUNT(*) FROM context_items WHERE conversation_id = ?1", [conversation_id], |r| {
                r.get(0)
            })?;
        Ok(n as usize)
    }

    pub fn context_tokens(&self, conversation_id: i64) -> Result<usize> {
        let conn = self.conn();
        let n: i64 = conn.query_row(
            "SELECT COALESCE(SUM(token_count), 0) FROM context_items WHERE conversation_id = ?1",
            [conversation_id],
            |r| r.get(0),
        )?;
        Ok(n as usize)
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

    pub fn message_count(&self, conversation_id: i64) -> Result<usize> {
        let conn = self.conn();
        let n: i64 =
            conn.query_row("SELECT COUNT(*) FROM messages WHERE conversation_id = ?1", [conversation_id], |r| {
                r.get(0)
            })?;
        Ok(n as usize)
    }

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

    /// Whether a message of one of `conversation_ids` refers to large file `id` (a file is
    /// stored once, however many conversations hold it).
    pub fn large_file_in(&self, id: &str, conversation_ids: &[i64]) -> Result<bool> {
        let conn = self.conn();
        let scope = serde_json::to_string(conversation_ids).unwrap_or_else(|_| "[]".into());
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
            crate::outbox::enqueue(&tx, &s.id, s.conversation_id, payload)?;
        }
        tx.commit()?;
        Ok(true)
    }

    /// Full-text search over messages; `query` must already be a safe FTS5 expression.
    pub fn search_messages_fts(&self, query: &str, filter: &SearchFilter) -> Result<Vec<StoredMessage>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT m.id, m.conversation_id, m.seq, m.role, m.content, m.raw, m.token_count, m.timestamp
             FROM messages_fts f JOIN messages m ON m.id = f.rowid
             WHERE messages_fts MATCH ?1
               AND m.conversation_id IN (SELECT value FROM json_each(?2))
               AND (?3 IS NULL OR m.timestamp >= ?3)
               AND (?4 IS NULL OR m.timestamp < ?4)
             ORDER BY f.rank LIMIT ?5",
        )?;
        let rows = stmt.query_map(
            params![query, filter.scope_json(), filter.since, filter.before, filter.limit as i64],
            message_from_row,
        )?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Full-text search over summaries; `query` must already be a safe FTS5 expression.
    pub fn search_summaries_fts(&self, query: &str, filter: &SearchFilter) -> Result<Vec<Summary>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT s.id, s.conversation_id, s.kind, s.depth, s.content, s.token_count, s.earliest, s.latest, s.first_seq,
                    s.last_seq, s.descendant_messages, s.descendant_summaries, s.source_tokens, s.method, s.created_at
             FROM summaries_fts f JOIN summaries s ON s.rid = f.rowid
             WHERE summaries_fts MATCH ?1
               AND s.conversation_id IN (SELECT value FROM json_each(?2))
               AND (?3 IS NULL OR s.latest >= ?3)
               AND (?4 IS NULL OR s.earliest < ?4)
             ORDER BY f.rank LIMIT ?5",
        )?;
        let rows = stmt.query_map(
            params![query, filter.scope_json(), filter.since, filter.before, filter.limit as i64],
            summary_from_row,
        )?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Visit messages matching the filter in order, until `visit` returns `false`.
    pub fn scan_messages(&self, filter: &SearchFilter, mut visit: impl FnMut(StoredMessage) -> bool) -> Result<()> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "{MESSAGE_SELECT} WHERE conversation_id IN (SELECT value FROM json_each(?1))
               AND (?2 IS NULL OR timestamp >= ?2) AND (?3 IS NULL OR timestamp < ?3) ORDER BY id"
        ))?;
        let mut rows = stmt.query(params![filter.scope_json(), filter.since, filter.before])?;
        while let Some(row) = rows.next()? {
            if !visit(message_from_row(row)?) {
                break;
            }
        }
        Ok(())
    }

    /// Visit summaries matching the filter in order, until `visit` returns `false`.
    pub fn scan_summaries(&self, filter: &SearchFilter, mut visit: impl FnMut(Summary) -> bool) -> Result<()> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "{SUMMARY_SELECT} WHERE conversation_id IN (SELECT value FROM json_each(?1))
               AND (?2 IS NULL OR latest >= ?2) AND (?3 IS NULL OR earliest < ?3) ORDER BY rid"
        ))?;
        let mut rows = stmt.query(params![filter.scope_json(), filter.since, filter.before])?;
        while let Some(row) = rows.next()? {
            if !visit(summary_from_row(row)?) {
                break;
            }
        }
        Ok(())
    }

    pub fn stats(&self, conversation_id: Option<i64>) -> Result<StoreStats> {
        let conn = self.conn();
        let one = |sql: &str| -> Result<i64> {
            Ok(conn.query_row(sql, params![conversation_id], |r| r.get::<_, Option<i64>>(0))?.unwrap_or(0))
        };
        Ok(StoreStats {
            conversations: one("SELECT COUNT(*) FROM conversations WHERE ?1 IS NULL OR id = ?1")?,
            messages: one("SELECT COUNT(*) FROM messages WHERE ?1 IS NULL OR conversation_id = ?1")?,
            message_tokens: one("SELECT SUM(token_count) FROM messages WHERE ?1 IS NULL OR conversation_id = ?1")?,
            summaries: one("SELECT COUNT(*) FROM summaries WHERE ?1 IS NULL OR conversation_id = ?1")?,
            leaf_summaries: one(
                "SELECT COUNT(*) FROM summaries WHERE kind = 'leaf' AND (?1 IS NULL OR conversation_id = ?1)",
            )?,
            condensed_summaries: one(
                "SELECT COUNT(*) FROM summaries WHERE kind = 'condensed' AND (?1 IS NULL OR conversation_id = ?1)",
            )?,
            max_depth: one("SELECT MAX(depth) FROM summaries WHERE ?1 IS NULL OR conversation_id = ?1")?,
            context_items: one("SELECT COUNT(*) FROM context_items WHERE ?1 IS NULL OR conversation_id = ?1")?,
            context_tokens: one("SELECT SUM(token_count) FROM context_items WHERE ?1 IS NULL OR conversation_id = ?1")?,
            large_files: one("SELECT COUNT(*) FROM large_files WHERE ?1 IS NULL OR conversation_id = ?1")?,
            pending_memory_handoffs: one(
                "SELECT COUNT(*) FROM memory_outbox WHERE ?1 IS NULL OR conversation_id = ?1",
            )?,
        })
    }
}

fn find_conversation(conn: &Connection, session_id: &str) -> Result<Option<Conversation>> {
    Ok(conn
        .query_row(
            "SELECT id, session_id, session_key, agent_id FROM conversations WHERE session_id = ?1",
            [session_id],
            conversation_from_row,
        )
        .optional()?)
}

fn conversation_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Conversation> {
    Ok(Conversation { id: r.get(0)?, session_id: r.get(1)?, session_key: r.get(2)?, agent_id: r.get(3)? })
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
                m.role,
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

const MESSAGE_SELECT: &str =
    "SELECT id, conversation_id, seq, role, content, raw, token_count, timestamp FROM messages";

fn message_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredMessage> {
    Ok(StoredMessage {
        id: r.get(0)?,
        conversation_id: r.get(1)?,
        seq: r.get(2)?,
        role: r.get(3)?,
        content: r.get(4)?,
        raw: r.get(5)?,
        token_count: r.get::<_, i64>(6)? as usize,
        timestamp: r.get(7)?,
    })
}

pub(crate) const SUMMARY_SELECT: &str =
    "SELECT id, conversation_id, kind, depth, content, token_count, earliest, latest, first_seq,
    last_seq, descendant_messages, descendant_summaries, source_tokens, method, created_at FROM summaries";

pub(crate) fn summary_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Summary> {
    let kind: String = r.get(2)?;
    Ok(Summary {
        id: r.get(0)?,
        conversation_id: r.get(1)?,
        kind: if kind == "leaf" { SummaryKind::Leaf } else { SummaryKind::Condensed },
        depth: r.get::<_, i64>(3)? as u32,
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

impl ContextStore {
    /// The leaf summary covering message `id`, if it has been compacted.
    pub fn leaf_of_message(&self, id: i64) -> Result<Option<String>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached("SELECT summary_id FROM summary_messages WHERE message_id = ?1 LIMIT 1")?;
        Ok(stmt.query_row([id], |r| r.get(0)).optional()?)
    }
}

impl ContextStore {
    /// All message ids of a conversation, in order.
    pub fn message_ids(&self, conversation_id: i64) -> Result<Vec<i64>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached("SELECT id FROM messages WHERE conversation_id = ?1 ORDER BY seq")?;
        let rows = stmt.query_map([conversation_id], |r| r.get(0))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }
}
