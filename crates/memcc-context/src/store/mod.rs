//! SQLite persistence of conversations, messages, summaries, the summary DAG and context items:
//! one submodule per thing stored, each adding its reads and writes to [`ContextStore`] — the
//! memory hand-off's queue (`outbox`) among them. Purging, the one place raw messages are
//! deleted, lives in [`crate::purge`].
//!
//! Policy (what to compact, what to assemble) lives elsewhere; this module only reads and writes,
//! and every write that belongs together happens in one transaction.

mod conversations;
mod items;
mod messages;
pub mod outbox;
mod search;
mod summaries;
pub mod transcripts;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, Transaction, params};
use serde::Serialize;

use crate::error::StoreError;
use crate::schema;

pub(crate) use conversations::{CONVERSATION_COLUMNS, conversation_from_row};
pub use conversations::{Conversation, ConversationMeta, SessionListing, SessionSource};
pub use items::{ContextItem, ItemRef};
pub use messages::{AppendOutcome, LargeFile, NewMessage, NewPart, StoredMessage};
pub use search::SearchFilter;
pub use summaries::{NewSummary, Summary, SummaryKind};
pub(crate) use summaries::{SUMMARY_SELECT, summary_from_row};
pub use transcripts::TranscriptJob;

type Result<T> = std::result::Result<T, StoreError>;

/// Conversation ids as the JSON array `json_each(?)` reads: how every scoped query names its
/// scope in one bound parameter.
fn scope_json(conversation_ids: &[i64]) -> String {
    serde_json::to_string(conversation_ids).unwrap_or_else(|_| "[]".into())
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
    /// Summaries not yet handed to long-term memory (the outbox), parked ones included.
    pub pending_memory_handoffs: i64,
    /// Of those, the ones parked after failing again and again (kept, no longer tried).
    pub parked_memory_handoffs: i64,
    /// Transcripts a host's hooks queued that wait for import (the whole store's), and of those
    /// the ones that failed at least once.
    pub transcripts_waiting: i64,
    pub transcripts_failing: i64,
    /// When the first and the last message were said (their timestamp, else when they were
    /// stored), ms since the epoch; `None` without messages.
    pub first_message_at: Option<i64>,
    pub last_message_at: Option<i64>,
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
        schema::refresh_full_text(&mut conn)?;
        Ok(ContextStore { conn: Mutex::new(conn), path: Some(path.to_path_buf()) })
    }

    pub fn open_in_memory() -> Result<Self> {
        let mut conn = Connection::open_in_memory()?;
        memcc_core::sqlite::configure(&conn)?;
        schema::migrate(&mut conn)?;
        schema::refresh_full_text(&mut conn)?;
        Ok(ContextStore { conn: Mutex::new(conn), path: None })
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Whether the file was opened for reading only (this user may not write it): reads work,
    /// writes fail with a clear error.
    pub fn read_only(&self) -> bool {
        memcc_core::sqlite::is_read_only(&self.conn())
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

    /// Counts over `conversations` (every conversation with `None`).
    pub fn stats(&self, conversations: Option<&[i64]>) -> Result<StoreStats> {
        let scope = conversations.map(scope_json);
        let conn = self.conn();
        // `SELECT what FROM table WHERE <the table's conversation column> in scope [AND more]`.
        let one = |what: &str, table: &str, column: &str, more: &str| -> Result<i64> {
            let sql = format!(
                "SELECT {what} FROM {table} WHERE (?1 IS NULL OR {column} IN (SELECT value FROM json_each(?1))) {more}"
            );
            Ok(conn.query_row(&sql, params![scope], |r| r.get::<_, Option<i64>>(0))?.unwrap_or(0))
        };
        let count = |table: &str, more: &str| one("COUNT(*)", table, "conversation_id", more);
        // First and last message in one pass over the messages.
        let (first_message_at, last_message_at) = conn.query_row(
            "SELECT MIN(COALESCE(timestamp, created_at)), MAX(COALESCE(timestamp, created_at)) FROM messages
             WHERE ?1 IS NULL OR conversation_id IN (SELECT value FROM json_each(?1))",
            params![scope],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        // The queue is the store's, whatever conversations are asked about.
        let (transcripts_waiting, transcripts_failing) =
            conn.query_row("SELECT COUNT(*), COUNT(*) FILTER (WHERE attempts > 0) FROM transcript_queue", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        Ok(StoreStats {
            conversations: one("COUNT(*)", "conversations", "id", "")?,
            messages: count("messages", "")?,
            message_tokens: one("SUM(token_count)", "messages", "conversation_id", "")?,
            summaries: count("summaries", "")?,
            leaf_summaries: count("summaries", "AND kind = 'leaf'")?,
            condensed_summaries: count("summaries", "AND kind = 'condensed'")?,
            max_depth: one("MAX(depth)", "summaries", "conversation_id", "")?,
            context_items: count("context_items", "")?,
            context_tokens: one("SUM(token_count)", "context_items", "conversation_id", "")?,
            large_files: count("large_files", "")?,
            pending_memory_handoffs: count("memory_outbox", "")?,
            parked_memory_handoffs: count(
                "memory_outbox",
                &format!("AND attempts >= {}", outbox::PARK_AFTER_ATTEMPTS),
            )?,
            transcripts_waiting,
            transcripts_failing,
            first_message_at,
            last_message_at,
        })
    }
}
