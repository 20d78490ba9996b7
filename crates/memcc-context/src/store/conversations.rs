//! Conversations: one per host session, created on first use.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use super::{ContextStore, Result};
use crate::error::StoreError;
use memcc_core::time::now_ms;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conversation {
    pub id: i64,
    pub session_id: String,
    pub session_key: Option<String>,
    pub agent_id: String,
}

impl ContextStore {
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

pub(crate) fn conversation_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Conversation> {
    Ok(Conversation { id: r.get(0)?, session_id: r.get(1)?, session_key: r.get(2)?, agent_id: r.get(3)? })
}
