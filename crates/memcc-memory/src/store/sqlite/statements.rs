//! Statements: triples and what superseded what. (SQLite store)

use super::*;

impl Statements for SqliteStore {
    /// Current triples of `agents` whose subject or object is one of `entities` (case-insensitive).
    fn triples_about(&self, agents: &[String], entities: &[String], limit: usize) -> Result<Vec<Triple>> {
        if entities.is_empty() {
            return Ok(Vec::new());
        }
        let conn = self.reader();
        let agents_json = serde_json::to_string(agents).unwrap_or_else(|_| "[]".into());
        let lower: Vec<String> = entities.iter().map(|e| e.to_lowercase()).collect();
        let entities_json = serde_json::to_string(&lower).unwrap_or_else(|_| "[]".into());
        let mut stmt = conn.prepare_cached(&format!(
            "{TRIPLE_SELECT} WHERE agent_id IN (SELECT value FROM json_each(?1)) AND superseded_by IS NULL
               AND (lower(subject) IN (SELECT value FROM json_each(?2)) OR lower(object) IN (SELECT value FROM json_each(?2)))
               AND {TRIPLE_NOT_FORGOTTEN}
             ORDER BY COALESCE(valid_from, created_at) DESC LIMIT ?3"
        ))?;
        let rows = stmt.query_map(params![agents_json, entities_json, limit as i64], triple_from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn current_statements(&self, agents: &[String], predicate: &str, limit: usize) -> Result<Vec<Triple>> {
        let conn = self.reader();
        let agents_json = serde_json::to_string(agents).unwrap_or_else(|_| "[]".into());
        let mut stmt = conn.prepare_cached(&format!(
            "{TRIPLE_SELECT} WHERE agent_id IN (SELECT value FROM json_each(?1)) AND predicate = ?2
               AND superseded_by IS NULL
               AND {TRIPLE_NOT_FORGOTTEN}
             ORDER BY COALESCE(valid_from, created_at) DESC LIMIT ?3"
        ))?;
        let rows = stmt.query_map(params![agents_json, predicate, limit as i64], triple_from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// All triples of an agent about `subject`, current and superseded (history).
    fn triple_history(&self, agent: &str, subject: &str) -> Result<Vec<Triple>> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(&format!(
            "{TRIPLE_SELECT} WHERE agent_id = ?1 AND lower(subject) = lower(?2)
               AND {TRIPLE_NOT_FORGOTTEN}
             ORDER BY id"
        ))?;
        let rows = stmt.query_map(params![agent, subject], triple_from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn superseded_statements(&self, records: &[i64]) -> Result<Vec<(Triple, Triple)>> {
        let conn = self.reader();
        let ids_json = serde_json::to_string(records).unwrap_or_else(|_| "[]".into());
        let mut stmt = conn.prepare_cached(&format!(
            "{TRIPLE_SELECT} WHERE source_record IN (SELECT value FROM json_each(?1)) AND superseded_by IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM triples n JOIN records r ON r.id = n.source_record
                               WHERE n.id = triples.superseded_by AND r.forgotten_at IS NOT NULL)
             ORDER BY id"
        ))?;
        let old: Vec<Triple> = stmt.query_map([ids_json], triple_from_row)?.collect::<std::result::Result<_, _>>()?;
        with_newer(&conn, old)
    }

    fn replaced_statements(&self, record: i64) -> Result<Vec<(Triple, Triple)>> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(&format!(
            "{TRIPLE_SELECT} WHERE superseded_by IN (SELECT id FROM triples WHERE source_record = ?1) ORDER BY id"
        ))?;
        let old: Vec<Triple> = stmt.query_map([record], triple_from_row)?.collect::<std::result::Result<_, _>>()?;
        with_newer(&conn, old)
    }

    fn supersession(&self, agent: &str, id: i64) -> Result<Vec<MemoryRecord>> {
        let conn = self.reader();
        // The statements of its subject and predicate, and the chain of edits it is part of.
        let mut stmt = conn.prepare(&format!(
            "WITH RECURSIVE older(id) AS (SELECT ?2 UNION SELECT r.id FROM records r JOIN older o ON r.superseded_by = o.id),
                            newer(id) AS (SELECT ?2 UNION SELECT r.superseded_by FROM records r JOIN newer n ON r.id = n.id
                                          WHERE r.superseded_by IS NOT NULL)
             {RECORD_SELECT} WHERE agent_id = ?1 AND forgotten_at IS NULL AND (id IN (SELECT id FROM older) OR id IN (SELECT id FROM newer)
               OR (subject IS NOT NULL AND predicate IS NOT NULL
                   AND (lower(subject), predicate) = (SELECT lower(subject), predicate FROM records WHERE id = ?2)))
             ORDER BY COALESCE(event_time, created_at), id"
        ))?;
        let rows = stmt.query_map(params![agent, id], record_from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn list_triples(&self, agent: &str, offset: usize, limit: usize) -> Result<Page<Triple>> {
        let conn = self.reader();
        let clause = format!("WHERE agent_id = ?1 AND {TRIPLE_NOT_FORGOTTEN}");
        let total: i64 = conn.query_row(&format!("SELECT COUNT(*) FROM triples {clause}"), [agent], |r| r.get(0))?;
        let mut stmt = conn.prepare(&format!("{TRIPLE_SELECT} {clause} ORDER BY id DESC LIMIT ?2 OFFSET ?3"))?;
        let rows = stmt.query_map(params![agent, sql_int(limit), sql_int(offset)], triple_from_row)?;
        Ok(Page { items: rows.collect::<std::result::Result<_, _>>()?, total, offset })
    }
}

/// Each of `old` beside the triple that superseded it (those whose newer one is gone are left out).
fn with_newer(conn: &Connection, old: Vec<Triple>) -> Result<Vec<(Triple, Triple)>> {
    let mut newer = conn.prepare_cached(&format!("{TRIPLE_SELECT} WHERE id = ?1"))?;
    let mut out = Vec::with_capacity(old.len());
    for t in old {
        let Some(by) = t.superseded_by else { continue };
        if let Some(n) = newer.query_map([by], triple_from_row)?.next().transpose()? {
            out.push((t, n));
        }
    }
    Ok(out)
}
