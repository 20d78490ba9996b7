//! The durable hand-off from context to memory.
//!
//! A summary's bridge payload is written to `memory_outbox` in the transaction that commits the
//! summary, so a crash, a panic, a lock or a memory that cannot open never loses it: delivery
//! (`MemoryBridge::ingest_summary`) follows the commit, and a failed or interrupted one stays
//! in the outbox and is tried again, with a back-off that doubles per attempt (at most an hour),
//! at the next compaction of that conversation. Memory recognises a summary it already has
//! (by id), so a delivery repeated after a crash adds nothing.

use rusqlite::{Connection, Transaction, params};

use crate::error::StoreError;

/// Longest wait between two attempts.
const MAX_BACKOFF_MS: i64 = 3_600_000;

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
         WHERE conversation_id = ?1 AND next_attempt_at <= ?2 ORDER BY created_at, summary_id LIMIT ?3",
    )?;
    let rows =
        stmt.query_map(params![conversation_id, now, limit as i64], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
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
