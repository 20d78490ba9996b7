//! Context items: the ordered list of messages and summaries that currently stands in for a
//! conversation.

use super::{ContextStore, Result};
use memcc_core::bridge::Role;

/// What a context item stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemRef {
    Message { id: i64, seq: i64, role: Role, tool_call_ids: Vec<String>, tool_result_for: Option<String> },
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

impl ContextStore {
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
                        role: Role::from(r.get::<_, String>(5)?),
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
}
