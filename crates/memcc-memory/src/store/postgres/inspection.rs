//! Inspection: integrity, stats, agents, facets, record pages. (PostgreSQL store)

use super::*;

impl Inspection for PgStore {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    fn integrity_check(&self) -> Result<String> {
        self.pool.run(|c| {
            let version = count(c, "SELECT COALESCE(MAX(version), 0) FROM memcc_schema", &[])?;
            let dangling = count(
                c,
                "SELECT COUNT(*) FROM records r WHERE r.superseded_by IS NOT NULL
                   AND NOT EXISTS (SELECT 1 FROM records s WHERE s.id = r.superseded_by)",
                &[],
            )?;
            Ok(if version != PG_SCHEMA_VERSION {
                format!("schema v{version}, expected v{PG_SCHEMA_VERSION}")
            } else if dangling > 0 {
                format!("{dangling} records superseded by a missing record")
            } else {
                "ok".into()
            })
        })
    }

    fn stats(&self, agent: Option<&str>) -> Result<MemoryStats> {
        // `$1` is the agent, or NULL for every agent (vectors carry their record's agent).
        const OF: &str = "($1::text IS NULL OR agent_id = $1)";
        self.pool.run(|c| {
            let agents = pairs(c.query(
                &format!("SELECT agent_id, COUNT(*) FROM records WHERE {OF} GROUP BY agent_id ORDER BY agent_id"),
                &[&agent],
            )?)?;
            let grouped = |c: &mut Client, sql: String| pairs(c.query(&sql, &[&agent])?);
            Ok(MemoryStats {
                backend: "postgres".into(),
                records: count(c, &format!("SELECT COUNT(*) FROM records WHERE {OF}"), &[&agent])?,
                current: count(c, &format!("SELECT COUNT(*) FROM records WHERE {OF} AND {CURRENT_RECORD}"), &[&agent])?,
                by_kind: grouped(
                    c,
                    format!("SELECT kind, COUNT(*) FROM records WHERE {OF} GROUP BY kind ORDER BY kind"),
                )?,
                by_wing: grouped(
                    c,
                    format!("SELECT wing, COUNT(*) FROM records WHERE {OF} GROUP BY wing ORDER BY COUNT(*) DESC"),
                )?,
                pending_embeddings: count(
                    c,
                    &format!(
                        "SELECT COUNT(*) FROM records WHERE {OF} AND embed_status = 'pending' AND forgotten_at IS NULL"
                    ),
                    &[&agent],
                )?,
                vectors: count(c, &format!("SELECT COUNT(*) FROM vectors WHERE {OF}"), &[&agent])?,
                vector_models: grouped(c, format!("SELECT model, COUNT(*) FROM vectors WHERE {OF} GROUP BY model"))?,
                triples: count(c, &format!("SELECT COUNT(*) FROM triples WHERE {OF}"), &[&agent])?,
                agents: agents.into_iter().map(|(a, _)| a).collect(),
            })
        })
    }

    fn agents(&self) -> Result<Vec<(String, i64)>> {
        self.pool.run(|c| {
            pairs(c.query(
                "SELECT agent_id, COUNT(*) FILTER (WHERE forgotten_at IS NULL) FROM records
                 GROUP BY agent_id ORDER BY agent_id",
                &[],
            )?)
        })
    }

    fn facets(&self, agent: &str) -> Result<Facets> {
        self.pool.run(|c| {
            let mut by = |column: &str| -> Result<Vec<(String, i64)>> {
                pairs(c.query(
                    &format!(
                        "SELECT {column}, COUNT(*) FROM records WHERE agent_id = $1 AND forgotten_at IS NULL
                         GROUP BY {column} ORDER BY COUNT(*) DESC, {column}"
                    ),
                    &[&agent],
                )?)
            };
            Ok(Facets { wings: by("wing")?, rooms: by("room")?, kinds: by("kind")? })
        })
    }

    fn list_records(&self, filter: &RecordFilter, offset: usize, limit: usize) -> Result<Page<MemoryRecord>> {
        let f = filter;
        let clause = "WHERE ($1::text IS NULL OR agent_id = $1) AND ($2::text IS NULL OR wing = $2)
               AND ($3::text IS NULL OR room = $3) AND ($4::text IS NULL OR kind = $4) AND ($5 OR forgotten_at IS NULL)";
        let (limit, offset_i) = (sql_int(limit), sql_int(offset));
        self.pool.run(|c| {
            let total = count(
                c,
                &format!("SELECT COUNT(*) FROM records {clause}"),
                &[&f.agent_id, &f.wing, &f.room, &f.kind, &f.include_forgotten],
            )?;
            let items = records(c.query(
                &format!("{RECORD_SELECT} {clause} ORDER BY id DESC LIMIT $6 OFFSET $7"),
                &[&f.agent_id, &f.wing, &f.room, &f.kind, &f.include_forgotten, &limit, &offset_i],
            )?)?;
            Ok(Page { items, total, offset })
        })
    }
}
