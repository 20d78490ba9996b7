//! Reading memory page by page, for inspection (`memcc ui`): records by filter, a statement's
//! supersession history, the knowledge graph. Read-only; recall never uses it.

use rusqlite::params;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::record::{MemoryRecord, Triple};
use crate::store::{MemoryStore, RECORD_SELECT, TRIPLE_SELECT, record_from_row, triple_from_row};

/// Which records a page lists (all current records of the agent when empty).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RecordFilter {
    pub agent_id: Option<String>,
    pub wing: Option<String>,
    pub room: Option<String>,
    pub kind: Option<String>,
    pub include_forgotten: bool,
}

/// One page of a listing, and how many there are in all.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total: i64,
    pub offset: usize,
}

/// The values a record filter can take for one agent, with how many current records have each.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Facets {
    pub wings: Vec<(String, i64)>,
    pub rooms: Vec<(String, i64)>,
    pub kinds: Vec<(String, i64)>,
}

impl MemoryStore {
    /// Every agent with records, and how many current records each has.
    pub fn agents(&self) -> Result<Vec<(String, i64)>> {
        let conn = self.reader();
        let mut stmt = conn.prepare(
            "SELECT agent_id, COUNT(*) FILTER (WHERE forgotten_at IS NULL) FROM records GROUP BY agent_id ORDER BY agent_id",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// The wings, rooms and kinds of `agent`'s current records.
    pub fn facets(&self, agent: &str) -> Result<Facets> {
        let conn = self.reader();
        let count = |column: &str| -> Result<Vec<(String, i64)>> {
            let mut stmt = conn.prepare(&format!(
                "SELECT {column}, COUNT(*) FROM records WHERE agent_id = ?1 AND forgotten_at IS NULL
                 GROUP BY {column} ORDER BY COUNT(*) DESC, {column}"
            ))?;
            let rows = stmt.query_map([agent], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<std::result::Result<_, _>>()?)
        };
        Ok(Facets { wings: count("wing")?, rooms: count("room")?, kinds: count("kind")? })
    }

    /// Records matching `filter`, newest first.
    pub fn list_records(&self, filter: &RecordFilter, offset: usize, limit: usize) -> Result<Page<MemoryRecord>> {
        let conn = self.reader();
        let clause = "WHERE (?1 IS NULL OR agent_id = ?1) AND (?2 IS NULL OR wing = ?2) AND (?3 IS NULL OR room = ?3)
               AND (?4 IS NULL OR kind = ?4) AND (?5 OR forgotten_at IS NULL)";
        let f = filter;
        let total: i64 = conn.query_row(
            &format!("SELECT COUNT(*) FROM records {clause}"),
            params![f.agent_id, f.wing, f.room, f.kind, f.include_forgotten],
            |r| r.get(0),
        )?;
        let mut stmt = conn.prepare(&format!("{RECORD_SELECT} {clause} ORDER BY id DESC LIMIT ?6 OFFSET ?7"))?;
        let rows = stmt.query_map(
            params![f.agent_id, f.wing, f.room, f.kind, f.include_forgotten, limit as i64, offset as i64],
            record_from_row,
        )?;
        Ok(Page { items: rows.collect::<std::result::Result<_, _>>()?, total, offset })
    }

    /// Every statement of `agent` about the same subject and predicate as record `id`, oldest
    /// first: what it superseded and what superseded it. Just the record when it states none.
    pub fn supersession(&self, agent: &str, id: i64) -> Result<Vec<MemoryRecord>> {
        let conn = self.reader();
        let mut stmt = conn.prepare(&format!(
            "{RECORD_SELECT} WHERE agent_id = ?1 AND (id = ?2 OR (subject IS NOT NULL AND predicate IS NOT NULL
               AND (lower(subject), predicate) = (SELECT lower(subject), predicate FROM records WHERE id = ?2)))
             ORDER BY COALESCE(event_time, created_at), id"
        ))?;
        let rows = stmt.query_map(params![agent, id], record_from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Knowledge-graph triples of `agent`, newest first, those of forgotten records left out.
    pub fn list_triples(&self, agent: &str, offset: usize, limit: usize) -> Result<Page<Triple>> {
        let conn = self.reader();
        let clause = "WHERE agent_id = ?1
               AND NOT EXISTS (SELECT 1 FROM records r WHERE r.id = triples.source_record AND r.forgotten_at IS NOT NULL)";
        let total: i64 = conn.query_row(&format!("SELECT COUNT(*) FROM triples {clause}"), [agent], |r| r.get(0))?;
        let mut stmt = conn.prepare(&format!("{TRIPLE_SELECT} {clause} ORDER BY id DESC LIMIT ?2 OFFSET ?3"))?;
        let rows = stmt.query_map(params![agent, limit as i64, offset as i64], triple_from_row)?;
        Ok(Page { items: rows.collect::<std::result::Result<_, _>>()?, total, offset })
    }
}
