//! Purging a conversation on request: its raw messages, summaries, DAG edges, context items,
//! FTS rows, turn keys and large files go, in one transaction. The one place raw messages are
//! ever deleted — only because the user asked.

use rusqlite::{Transaction, params};
use serde::Serialize;

use crate::error::StoreError;
use crate::store::ContextStore;
use memcc_core::text::fts_document;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PurgeReport {
    pub session_id: String,
    pub messages: usize,
    pub summaries: usize,
    /// Memory records made from the conversation that were deleted with it.
    pub memory_records: usize,
}

/// Delete conversation `conversation_id` and everything stored for it.
pub(crate) fn purge(tx: &Transaction<'_>, conversation_id: i64) -> Result<(usize, usize), StoreError> {
    tx.execute("DELETE FROM context_items WHERE conversation_id = ?1", [conversation_id])?;
    tx.execute("DELETE FROM memory_outbox WHERE conversation_id = ?1", [conversation_id])?;
    // Summaries: edges first, then the FTS rows (contentless: deleted by their indexed text).
    let summaries: Vec<(i64, String, String)> = {
        let mut stmt = tx.prepare("SELECT rid, id, content FROM summaries WHERE conversation_id = ?1")?;
        let rows = stmt.query_map([conversation_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect::<Result<_, _>>()?
    };
    for (rid, id, content) in &summaries {
        tx.execute("DELETE FROM summary_parents WHERE parent_id = ?1 OR summary_id = ?1", [id])?;
        tx.execute("DELETE FROM summary_messages WHERE summary_id = ?1", [id])?;
        tx.execute(
            "INSERT INTO summaries_fts (summaries_fts, rowid, body) VALUES ('delete', ?1, ?2)",
            params![rid, fts_document(content)],
        )?;
    }
    tx.execute("DELETE FROM summaries WHERE conversation_id = ?1", [conversation_id])?;
    let messages: Vec<(i64, String)> = {
        let mut stmt = tx.prepare("SELECT id, content FROM messages WHERE conversation_id = ?1")?;
        let rows = stmt.query_map([conversation_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<Result<_, _>>()?
    };
    // Large files are stored once for every conversation that holds them: one another
    // conversation still refers to moves there, the others go.
    let files: Vec<String> = {
        let mut stmt = tx.prepare(
            "SELECT DISTINCT p.large_file_id FROM message_parts p JOIN messages m ON m.id = p.message_id
             WHERE m.conversation_id = ?1 AND p.large_file_id IS NOT NULL",
        )?;
        let rows = stmt.query_map([conversation_id], |r| r.get(0))?;
        rows.collect::<Result<_, _>>()?
    };
    for (id, content) in &messages {
        tx.execute("DELETE FROM message_parts WHERE message_id = ?1", [id])?;
        tx.execute(
            "INSERT INTO messages_fts (messages_fts, rowid, body) VALUES ('delete', ?1, ?2)",
            params![id, fts_document(content)],
        )?;
    }
    tx.execute("DELETE FROM messages WHERE conversation_id = ?1", [conversation_id])?;
    for f in &files {
        let other: Option<i64> = tx
            .query_row(
                "SELECT m.conversation_id FROM message_parts p JOIN messages m ON m.id = p.message_id
                 WHERE p.large_file_id = ?1 LIMIT 1",
                [f],
                |r| r.get(0),
            )
            .ok();
        match other {
            Some(c) => tx.execute("UPDATE large_files SET conversation_id = ?2 WHERE id = ?1", params![f, c])?,
            None => tx.execute("DELETE FROM large_files WHERE id = ?1", [f])?,
        };
    }
    tx.execute("DELETE FROM large_files WHERE conversation_id = ?1", [conversation_id])?;
    tx.execute("DELETE FROM turn_advancements WHERE conversation_id = ?1", [conversation_id])?;
    tx.execute("DELETE FROM conversations WHERE id = ?1", [conversation_id])?;
    Ok((messages.len(), summaries.len()))
}

impl ContextStore {
    /// Delete a conversation and everything stored for it (see [`crate::purge`]); (messages,
    /// summaries) deleted.
    pub fn purge_conversation(&self, conversation_id: i64) -> Result<(usize, usize), StoreError> {
        self.write(|tx| purge(tx, conversation_id))
    }
}
