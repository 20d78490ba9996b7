//! Inspection: integrity, stats, agents, facets, record pages. (SQLite store)

use super::*;

impl Inspection for SqliteStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    fn integrity_check(&self) -> Result<String> {
        Ok(self.writer().query_row("PRAGMA integrity_check", [], |r| r.get(0))?)
    }

    fn stats(&self, agent: Option<&str>) -> Result<MemoryStats> {
        let conn = self.reader();
        // `?1` is the agent, or NULL for every agent.
        const OF: &str = "(?1 IS NULL OR agent_id = ?1)";
        const VECTORS_OF: &str = "(?1 IS NULL OR record_id IN (SELECT id FROM records WHERE agent_id = ?1))";
        let one = |sql: &str| -> Result<i64> { Ok(conn.query_row(sql, [agent], |r| r.get(0))?) };
        let pairs = |sql: &str| -> Result<Vec<(String, i64)>> {
            let mut stmt = conn.prepare(sql)?;
            let rows = stmt.query_map([agent], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<std::result::Result<_, _>>()?)
        };
        let agents =
            pairs(&format!("SELECT agent_id, COUNT(*) FROM records WHERE {OF} GROUP BY agent_id ORDER BY agent_id"))?;
        Ok(MemoryStats {
            backend: "sqlite".into(),
            records: one(&format!("SELECT COUNT(*) FROM records WHERE {OF}"))?,
            current: one(&format!("SELECT COUNT(*) FROM records WHERE {OF} AND {CURRENT_RECORD}"))?,
            by_kind: pairs(&format!("SELECT kind, COUNT(*) FROM records WHERE {OF} GROUP BY kind ORDER BY kind"))?,
            by_wing: pairs(&format!(
                "SELECT wing, COUNT(*) FROM records WHERE {OF} GROUP BY wing ORDER BY COUNT(*) DESC"
            ))?,
            pending_embeddings: one(&format!(
                "SELECT COUNT(*) FROM records WHERE {OF} AND embed_status = 'pending' AND forgotten_at IS NULL"
            ))?,
            vectors: one(&format!("SELECT COUNT(*) FROM vectors WHERE {VECTORS_OF}"))?,
            vector_models: pairs(&format!("SELECT model, COUNT(*) FROM vectors WHERE {VECTORS_OF} GROUP BY model"))?,
            triples: one(&format!("SELECT COUNT(*) FROM triples WHERE {OF}"))?,
            agents: agents.into_iter().map(|(a, _)| a).collect(),
        })
    }

    fn agents(&self) -> Result<Vec<(String, i64)>> {
        let conn = self.reader();
        let mut stmt = conn.prepare(
            "SELECT agent_id, COUNT(*) FILTER (WHERE forgotten_at IS NULL) FROM records GROUP BY agent_id ORDER BY agent_id",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn facets(&self, agent: &str) -> Result<Facets> {
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

    fn list_records(&self, filter: &RecordFilter, offset: usize, limit: usize) -> Result<Page<MemoryRecord>> {
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
            params![f.agent_id, f.wing, f.room, f.kind, f.include_forgotten, sql_int(limit), sql_int(offset)],
            record_from_row,
        )?;
        Ok(Page { items: rows.collect::<std::result::Result<_, _>>()?, total, offset })
    }
}
