//! The records: insert, read, full-text search, essentials, pins. (PostgreSQL store)

use super::*;

impl Records for PgStore {
    fn insert_many(&self, items: &[Insert<'_>]) -> Result<Vec<Inserted>> {
        self.pool.write(|tx| insert_all(tx, items))
    }

    fn insert_summary(&self, agent: &str, summary_id: &str, items: &[Insert<'_>]) -> Result<Vec<Inserted>> {
        self.pool.write(|tx| {
            tx.execute(
                "INSERT INTO ingested_summaries (agent_id, summary_id, ingested_at) VALUES ($1, $2, $3)
                 ON CONFLICT DO NOTHING",
                &[&agent, &summary_id, &now_ms()],
            )?;
            insert_all(tx, items)
        })
    }

    fn summary_ingested(&self, agent: &str, summary_id: &str) -> Result<bool> {
        self.pool.run(|c| {
            Ok(c.query_opt(
                "SELECT 1 FROM ingested_summaries WHERE agent_id = $1 AND summary_id = $2",
                &[&agent, &summary_id],
            )?
            .is_some())
        })
    }

    fn get(&self, id: i64) -> Result<Option<MemoryRecord>> {
        self.pool.run(|c| {
            c.query_opt(&format!("{RECORD_SELECT} WHERE id = $1"), &[&id])?.as_ref().map(record_from_row).transpose()
        })
    }

    fn get_many(&self, ids: &[i64]) -> Result<Vec<MemoryRecord>> {
        let found = self.pool.run(|c| records(c.query(&format!("{RECORD_SELECT} WHERE id = ANY($1)"), &[&ids])?))?;
        let mut by_id: HashMap<i64, MemoryRecord> = found.into_iter().map(|r| (r.id, r)).collect();
        Ok(ids.iter().filter_map(|id| by_id.remove(id)).collect())
    }

    fn fts(&self, q: &FullText<'_>) -> Result<Vec<(i64, f64)>> {
        self.full_text(q, None)
    }

    fn fts_also_during(&self, q: &FullText<'_>, period: Period) -> Result<Vec<(i64, f64)>> {
        self.full_text(&FullText { during: None, ..*q }, Some(period))
    }

    fn document_frequencies(&self, terms: &[Term], agents: &[String], cap: usize) -> Result<Vec<usize>> {
        let parts: Vec<String> = terms.iter().map(term_tsquery).collect();
        let limit = cap as i64 + 1;
        self.pool.run(|c| document_frequencies(c, &parts, agents, limit))
    }

    fn record_count(&self) -> Result<i64> {
        self.pool.run(|c| count(c, MAX_RECORD_ID, &[]))
    }

    fn essentials(&self, agents: &[String], min_weight: f64, limit: usize) -> Result<Vec<MemoryRecord>> {
        let limit = limit as i64;
        self.pool.run(|c| {
            records(c.query(
                &format!(
                    "{RECORD_SELECT} WHERE agent_id = ANY($1) AND (pinned OR weight >= $2) AND {CURRENT_RECORD}
                     ORDER BY pinned DESC, weight DESC, COALESCE(event_time, created_at) DESC LIMIT $3"
                ),
                &[&agents, &min_weight, &limit],
            )?)
        })
    }

    fn recent_in_wing(
        &self,
        agents: &[String],
        wing: &str,
        kinds: &[RecordKind],
        limit: usize,
    ) -> Result<Vec<MemoryRecord>> {
        let kinds: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
        let limit = limit as i64;
        self.pool.run(|c| {
            records(c.query(
                &format!(
                    "{RECORD_SELECT} WHERE agent_id = ANY($1) AND wing = $2 AND kind = ANY($3) AND {CURRENT_RECORD}
                     ORDER BY event_time DESC NULLS LAST LIMIT $4"
                ),
                &[&agents, &wing, &kinds, &limit],
            )?)
        })
    }

    fn tombstones(&self, agent: &str, sessions: &[String]) -> Result<std::collections::HashSet<String>> {
        self.pool.run(|c| {
            let rows = c.query(
                "SELECT said FROM tombstones WHERE agent_id = $1 AND (session_id = '' OR session_id = ANY($2))",
                &[&agent, &sessions],
            )?;
            rows.iter().map(|r| Ok(r.try_get(0)?)).collect()
        })
    }

    fn set_pinned(&self, agent: &str, id: i64, pinned: bool, weight: f64, everywhere: bool) -> Result<bool> {
        self.pool.run(|c| {
            let n = c.execute(
                &format!(
                    "UPDATE records SET pinned = $3, weight = $4, project = CASE WHEN $5 THEN NULL ELSE project END
                     WHERE id = $1 AND agent_id = $2 AND {CURRENT_RECORD}"
                ),
                &[&id, &agent, &pinned, &weight, &everywhere],
            )?;
            Ok(n > 0)
        })
    }

    fn for_each_record(&self, agent: Option<&str>, visit: &mut dyn FnMut(MemoryRecord) -> Result<()>) -> Result<()> {
        let mut last = i64::MIN;
        loop {
            let page = self.pool.run(|c| {
                records(c.query(
                    &format!(
                        "{RECORD_SELECT} WHERE ($1::text IS NULL OR agent_id = $1) AND id > $2 ORDER BY id LIMIT $3"
                    ),
                    &[&agent, &last, &PAGE],
                )?)
            })?;
            let n = page.len() as i64;
            for r in page {
                last = r.id;
                visit(r)?;
            }
            if n < PAGE {
                return Ok(());
            }
        }
    }
}
