//! Finding messages and summaries: full-text (FTS5) and in-order scans, within a scope.

use rusqlite::{Row, params};

use super::messages::{MESSAGE_SELECT, message_from_row};
use super::summaries::{SUMMARY_SELECT, summary_from_row};
use super::{ContextStore, Result, StoredMessage, Summary};

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
        super::scope_json(&self.conversation_ids)
    }
}

impl ContextStore {
    /// Full-text search over messages; `query` must already be a safe FTS5 expression.
    pub fn search_messages_fts(&self, query: &str, filter: &SearchFilter) -> Result<Vec<StoredMessage>> {
        self.matching(
            "SELECT m.id, m.conversation_id, m.seq, m.role, m.content, m.raw, m.token_count, m.timestamp
             FROM messages_fts f JOIN messages m ON m.id = f.rowid
             WHERE messages_fts MATCH ?1
               AND m.conversation_id IN (SELECT value FROM json_each(?2))
               AND (?3 IS NULL OR m.timestamp >= ?3)
               AND (?4 IS NULL OR m.timestamp < ?4)
             ORDER BY f.rank LIMIT ?5",
            query,
            filter,
            message_from_row,
        )
    }

    /// Full-text search over summaries; `query` must already be a safe FTS5 expression.
    pub fn search_summaries_fts(&self, query: &str, filter: &SearchFilter) -> Result<Vec<Summary>> {
        self.matching(
            "SELECT s.id, s.conversation_id, s.kind, s.depth, s.content, s.token_count, s.earliest, s.latest, s.first_seq,
                    s.last_seq, s.descendant_messages, s.descendant_summaries, s.source_tokens, s.method, s.created_at
             FROM summaries_fts f JOIN summaries s ON s.rid = f.rowid
             WHERE summaries_fts MATCH ?1
               AND s.conversation_id IN (SELECT value FROM json_each(?2))
               AND (?3 IS NULL OR s.latest >= ?3)
               AND (?4 IS NULL OR s.earliest < ?4)
             ORDER BY f.rank LIMIT ?5",
            query,
            filter,
            summary_from_row,
        )
    }

    /// Run the full-text `sql` (query, scope, since, before, limit as ?1–?5), best first.
    fn matching<T>(
        &self,
        sql: &str,
        query: &str,
        filter: &SearchFilter,
        from_row: fn(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(sql)?;
        let params = params![query, filter.scope_json(), filter.since, filter.before, filter.limit as i64];
        let rows = stmt.query_map(params, from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Visit messages matching the filter in order, until `visit` returns `false`.
    pub fn scan_messages(&self, filter: &SearchFilter, visit: impl FnMut(StoredMessage) -> bool) -> Result<()> {
        let sql = format!(
            "{MESSAGE_SELECT} WHERE conversation_id IN (SELECT value FROM json_each(?1))
               AND (?2 IS NULL OR timestamp >= ?2) AND (?3 IS NULL OR timestamp < ?3) ORDER BY id"
        );
        self.scan(&sql, filter, message_from_row, visit)
    }

    /// Visit summaries matching the filter in order, until `visit` returns `false`.
    pub fn scan_summaries(&self, filter: &SearchFilter, visit: impl FnMut(Summary) -> bool) -> Result<()> {
        let sql = format!(
            "{SUMMARY_SELECT} WHERE conversation_id IN (SELECT value FROM json_each(?1))
               AND (?2 IS NULL OR latest >= ?2) AND (?3 IS NULL OR earliest < ?3) ORDER BY rid"
        );
        self.scan(&sql, filter, summary_from_row, visit)
    }

    /// Run `sql` (scope, since, before as ?1–?3) and visit its rows until `visit` returns `false`.
    fn scan<T>(
        &self,
        sql: &str,
        filter: &SearchFilter,
        from_row: fn(&Row<'_>) -> rusqlite::Result<T>,
        mut visit: impl FnMut(T) -> bool,
    ) -> Result<()> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(sql)?;
        let mut rows = stmt.query(params![filter.scope_json(), filter.since, filter.before])?;
        while let Some(row) = rows.next()? {
            if !visit(from_row(row)?) {
                break;
            }
        }
        Ok(())
    }
}
