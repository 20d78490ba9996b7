//! Statements: triples and what superseded what. (PostgreSQL store)

use super::*;

impl Statements for PgStore {
    fn triples_about(&self, agents: &[String], entities: &[String], limit: usize) -> Result<Vec<Triple>> {
        if entities.is_empty() {
            return Ok(Vec::new());
        }
        let lower: Vec<String> = entities.iter().map(|e| e.to_lowercase()).collect();
        let limit = limit as i64;
        self.pool.run(|c| {
            triples(c.query(
                &format!(
                    "{TRIPLE_SELECT} WHERE agent_id = ANY($1) AND superseded_by IS NULL
                       AND (lower(subject) = ANY($2) OR lower(object) = ANY($2))
                       AND {TRIPLE_NOT_FORGOTTEN}
                     ORDER BY COALESCE(valid_from, created_at) DESC LIMIT $3"
                ),
                &[&agents, &lower, &limit],
            )?)
        })
    }

    fn current_statements(&self, agents: &[String], predicate: &str, limit: usize) -> Result<Vec<Triple>> {
        let limit = limit as i64;
        self.pool.run(|c| {
            triples(c.query(
                &format!(
                    "{TRIPLE_SELECT} WHERE agent_id = ANY($1) AND predicate = $2 AND superseded_by IS NULL
                       AND {TRIPLE_NOT_FORGOTTEN}
                     ORDER BY COALESCE(valid_from, created_at) DESC LIMIT $3"
                ),
                &[&agents, &predicate, &limit],
            )?)
        })
    }

    fn triple_history(&self, agent: &str, subject: &str) -> Result<Vec<Triple>> {
        self.pool.run(|c| {
            triples(c.query(
                &format!(
                    "{TRIPLE_SELECT} WHERE agent_id = $1 AND lower(subject) = lower($2)
                       AND {TRIPLE_NOT_FORGOTTEN}
                     ORDER BY id"
                ),
                &[&agent, &subject],
            )?)
        })
    }

    fn superseded_statements(&self, records: &[i64]) -> Result<Vec<(Triple, Triple)>> {
        self.pool.run(|c| {
            let old = triples(c.query(
                &format!(
                    "{TRIPLE_SELECT} WHERE source_record = ANY($1) AND superseded_by IS NOT NULL
                       AND NOT EXISTS (SELECT 1 FROM triples n JOIN records r ON r.id = n.source_record
                                       WHERE n.id = triples.superseded_by AND r.forgotten_at IS NOT NULL)
                     ORDER BY id"
                ),
                &[&records],
            )?)?;
            with_newer(c, old)
        })
    }

    fn replaced_statements(&self, record: i64) -> Result<Vec<(Triple, Triple)>> {
        self.pool.run(|c| {
            let old = triples(c.query(
                &format!(
                    "{TRIPLE_SELECT} WHERE superseded_by IN (SELECT id FROM triples WHERE source_record = $1) ORDER BY id"
                ),
                &[&record],
            )?)?;
            with_newer(c, old)
        })
    }

    fn supersession(&self, agent: &str, id: i64) -> Result<Vec<MemoryRecord>> {
        self.pool.run(|c| {
            records(c.query(
                &format!(
                    "WITH RECURSIVE older(id) AS (SELECT $2::bigint UNION SELECT r.id FROM records r JOIN older o ON r.superseded_by = o.id),
                                    newer(id) AS (SELECT $2::bigint UNION SELECT r.superseded_by FROM records r JOIN newer n ON r.id = n.id
                                                  WHERE r.superseded_by IS NOT NULL)
                     {RECORD_SELECT} WHERE agent_id = $1 AND forgotten_at IS NULL AND (id IN (SELECT id FROM older) OR id IN (SELECT id FROM newer)
                       OR (subject IS NOT NULL AND predicate IS NOT NULL
                           AND (lower(subject), predicate) = (SELECT lower(subject), predicate FROM records WHERE id = $2)))
                     ORDER BY COALESCE(event_time, created_at), id"
                ),
                &[&agent, &id],
            )?)
        })
    }

    fn list_triples(&self, agent: &str, offset: usize, limit: usize) -> Result<Page<Triple>> {
        let clause = format!("WHERE agent_id = $1 AND {TRIPLE_NOT_FORGOTTEN}");
        let (limit, offset_i) = (sql_int(limit), sql_int(offset));
        self.pool.run(|c| {
            let total = count(c, &format!("SELECT COUNT(*) FROM triples {clause}"), &[&agent])?;
            let items = triples(c.query(
                &format!("{TRIPLE_SELECT} {clause} ORDER BY id DESC LIMIT $2 OFFSET $3"),
                &[&agent, &limit, &offset_i],
            )?)?;
            Ok(Page { items, total, offset })
        })
    }
}

/// Each of `old` beside the triple that superseded it (those whose newer one is gone are left out).
fn with_newer(c: &mut postgres::Client, old: Vec<Triple>) -> Result<Vec<(Triple, Triple)>> {
    let ids: Vec<i64> = old.iter().filter_map(|t| t.superseded_by).collect();
    let newer = triples(c.query(&format!("{TRIPLE_SELECT} WHERE id = ANY($1)"), &[&ids])?)?;
    Ok(old
        .into_iter()
        .filter_map(|t| {
            let n = newer.iter().find(|n| Some(n.id) == t.superseded_by)?.clone();
            Some((t, n))
        })
        .collect())
}
