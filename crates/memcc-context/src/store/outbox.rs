//! The durable hand-off from context to memory.
//!
//! A summary's bridge payload is written to `memory_outbox` in the transaction that commits the
//! summary, so a crash, a panic, a lock or a memory that cannot open never loses it: delivery
//! (`MemoryBridge::ingest_summary`) follows the commit, and a failed or interrupted one stays
//! in the outbox and is tried again, with a back-off that doubles per attempt (at most an hour),
//! at the next compaction of that conversation. Memory recognises a summary it already has
//! (by id), so a delivery repeated after a crash adds nothing.

use rusqlite::{Connection, Transaction, params};

use super::{CONVERSATION_COLUMNS, ContextStore, Conversation, conversation_from_row};
use crate::error::StoreError;
use memcc_core::time::now_ms;

/// Longest wait between two attempts.
const MAX_BACKOFF_MS: i64 = 3_600_000;

/// Failed attempts after which a hand-off is parked: kept (nothing is lost) and counted in the
/// stats, but no longer tried at every compaction — about five hours of tries at the back-off.
/// A longer outage parks good work too, so a process that finds memory answering again (its
/// start, the hooks' worker) tries the oldest parked one, and unparks them all when it goes
/// ([`crate::ContextEngine::hand_off_all`]).
pub const PARK_AFTER_ATTEMPTS: i64 = 16;

pub(crate) fn enqueue(
    tx: &Transaction<'_>,
    summary_id: &str,
    conversation_id: i64,
    payload: &str,
) -> Result<(), StoreError> {
    let now = memcc_core::time::now_ms();
    tx.execute(
        "INSERT OR REPLACE INTO memory_outbox (summary_id, conversation_id, payload, next_attempt_at, created_at)
         VALUES (?1, ?2, ?3, ?4, ?4)",
        params![summary_id, conversation_id, payload, now],
    )?;
    Ok(())
}

pub(crate) fn due(
    conn: &Connection,
    conversation_id: i64,
    now: i64,
    limit: usize,
) -> Result<Vec<(String, String, i64)>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT summary_id, payload, attempts FROM memory_outbox
         WHERE conversation_id = ?1 AND next_attempt_at <= ?2 AND attempts < ?4
         ORDER BY created_at, summary_id LIMIT ?3",
    )?;
    let rows = stmt.query_map(params![conversation_id, now, limit as i64, PARK_AFTER_ATTEMPTS], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub(crate) fn failed(conn: &Connection, summary_id: &str, error: &str, now: i64) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE memory_outbox SET attempts = attempts + 1, last_error = ?2,
             next_attempt_at = ?3 + MIN(?4, 1000 * (1 << MIN(attempts, 20)))
         WHERE summary_id = ?1",
        params![summary_id, error, now, MAX_BACKOFF_MS],
    )?;
    Ok(())
}

impl ContextStore {
    /// Hand-offs of `conversation_id` due now, oldest first: (summary id, payload JSON, attempts).
    pub fn outbox_due(&self, conversation_id: i64, limit: usize) -> Result<Vec<(String, String, i64)>, StoreError> {
        let conn = self.conn();
        due(&conn, conversation_id, now_ms(), limit)
    }

    /// Conversations with summaries waiting for memory (parked ones aside).
    pub fn conversations_with_handoffs(&self) -> Result<Vec<Conversation>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {CONVERSATION_COLUMNS} FROM conversations
             WHERE id IN (SELECT DISTINCT conversation_id FROM memory_outbox WHERE attempts < ?1) ORDER BY id"
        ))?;
        let rows = stmt.query_map([PARK_AFTER_ATTEMPTS], conversation_from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// A hand-off delivered: it leaves the outbox.
    pub fn outbox_done(&self, summary_id: &str) -> Result<(), StoreError> {
        self.conn().execute("DELETE FROM memory_outbox WHERE summary_id = ?1", [summary_id])?;
        Ok(())
    }

    /// A hand-off that failed: tried again after a back-off that doubles per attempt.
    pub fn outbox_failed(&self, summary_id: &str, error: &str) -> Result<(), StoreError> {
        let conn = self.conn();
        failed(&conn, summary_id, error, now_ms())
    }

    /// The parked hand-offs ([`PARK_AFTER_ATTEMPTS`]): (summary id, attempts, last error).
    pub fn outbox_parked(&self) -> Result<Vec<(String, i64, String)>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT summary_id, attempts, COALESCE(last_error, '') FROM memory_outbox
             WHERE attempts >= ?1 ORDER BY created_at, summary_id",
        )?;
        let rows = stmt.query_map([PARK_AFTER_ATTEMPTS], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The oldest parked hand-off, to try once more: (summary id, payload JSON).
    pub fn outbox_oldest_parked(&self) -> Result<Option<(String, String)>, StoreError> {
        use rusqlite::OptionalExtension;
        Ok(self
            .conn()
            .query_row(
                "SELECT summary_id, payload FROM memory_outbox WHERE attempts >= ?1 ORDER BY created_at, summary_id LIMIT 1",
                [PARK_AFTER_ATTEMPTS],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?)
    }

    /// Give every parked hand-off a fresh start (after the cause was mended); returns how many.
    pub fn outbox_unpark(&self) -> Result<usize, StoreError> {
        let n = self.conn().execute(
            "UPDATE memory_outbox SET attempts = 0, next_attempt_at = ?2 WHERE attempts >= ?1",
            params![PARK_AFTER_ATTEMPTS, now_ms()],
        )?;
        Ok(n)
    }

    /// How many hand-offs wait (all conversations, or one), parked ones included.
    pub fn outbox_pending(&self, conversation_id: Option<i64>) -> Result<usize, StoreError> {
        let n: i64 = self.conn().query_row(
            "SELECT COUNT(*) FROM memory_outbox WHERE ?1 IS NULL OR conversation_id = ?1",
            [conversation_id],
            |r| r.get(0),
        )?;
        Ok(n as usize)
    }
}
