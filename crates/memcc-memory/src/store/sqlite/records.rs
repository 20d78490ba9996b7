//! The records: insert, read, full-text search, essentials, pins. (SQLite store)

use super::*;

impl Records for SqliteStore {
    /// Insert records in one transaction (see [`Insert`]).
    fn insert_many(&self, items: &[Insert<'_>]) -> Result<Vec<Inserted>> {
        self.write(|tx| items.iter().map(|item| insert_in(tx, item)).collect())
    }

    /// [`Records::insert_many`], marking summary `summary_id` of `agent` as ingested in the
    /// same transaction.
    fn insert_summary(&self, agent: &str, summary_id: &str, items: &[Insert<'_>]) -> Result<Vec<Inserted>> {
        self.write(|tx| {
            tx.execute(
                "INSERT OR IGNORE INTO ingested_summaries (agent_id, summary_id, ingested_at) VALUES (?1, ?2, ?3)",
                params![agent, summary_id, now_ms()],
            )?;
            items.iter().map(|item| insert_in(tx, item)).collect()
        })
    }

    /// Whether the bridge already delivered summary `summary_id` of `agent`.
    fn summary_ingested(&self, agent: &str, summary_id: &str) -> Result<bool> {
        let conn = self.reader();
        Ok(conn
            .query_row(
                "SELECT 1 FROM ingested_summaries WHERE agent_id = ?1 AND summary_id = ?2",
                params![agent, summary_id],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    fn get(&self, id: i64) -> Result<Option<MemoryRecord>> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(&format!("{RECORD_SELECT} WHERE id = ?1"))?;
        Ok(stmt.query_row([id], record_from_row).optional()?)
    }

    fn get_many(&self, ids: &[i64]) -> Result<Vec<MemoryRecord>> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(&format!("{RECORD_SELECT} WHERE id = ?1"))?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(r) = stmt.query_row([id], record_from_row).optional()? {
                out.push(r);
            }
        }
        Ok(out)
    }

    /// BM25 full-text search (safe `MATCH` expression) among the current records of `agents`.
    /// Returns (id, bm25) with higher = better. Cost grows with the number of matching
    /// records, which is why queries are built without stop words.
    fn fts(&self, q: &FullText<'_>) -> Result<Vec<(i64, f64)>> {
        // FTS5 weighs terms itself (its bm25): counted frequencies are not needed.
        let FullText { terms, agents, wing, during, limit, frequencies: _ } = *q;
        let Some(match_expr) = combine_terms(terms, Combine::Any) else { return Ok(Vec::new()) };
        let conn = self.reader();
        let ranked = ranked_matches(&conn, &match_expr)?;
        if wing.is_none() && during.is_none() && reads_every_record(&conn, agents)? {
            return Ok(best(ranked, limit));
        }
        // All of them best first: how far down the scope's best are is not known before.
        first_in_scope(&conn, &best(ranked, usize::MAX), &Scope { agents, wing, during }, limit)
    }

    /// One ranking instead of two: every match is scored once, and both bests are taken from
    /// that list.
    fn fts_also_during(&self, q: &FullText<'_>, period: Period) -> Result<Vec<(i64, f64)>> {
        let FullText { terms, agents, wing, during: _, limit, frequencies: _ } = *q;
        let Some(match_expr) = combine_terms(terms, Combine::Any) else { return Ok(Vec::new()) };
        let conn = self.reader();
        let ranked = best(ranked_matches(&conn, &match_expr)?, usize::MAX);
        let mut found = if wing.is_none() && reads_every_record(&conn, agents)? {
            ranked.iter().take(limit).copied().collect()
        } else {
            first_in_scope(&conn, &ranked, &Scope { agents, wing, during: None }, limit)?
        };
        found.extend(first_in_scope(&conn, &ranked, &Scope { agents, wing, during: Some(period) }, limit)?);
        Ok(found)
    }

    /// How many records match each term's safe FTS expression (`term_expr`), up to `cap + 1`.
    /// FTS tokenises (and stems) the term itself, so this agrees with what a query will match.
    /// Counting every store's posting list is cheap; the agents' current records are counted (a
    /// join per match) only for a term common in the whole store, so a count within the cap is
    /// over every agent (an upper bound) — and not at all when every record is theirs and none
    /// is forgotten (one agent's store, the usual case): the two counts are then the same.
    fn document_frequencies(&self, terms: &[Term], agents: &[String], cap: usize) -> Result<Vec<usize>> {
        let conn = self.reader();
        let all_theirs = reads_every_record(&conn, agents)?;
        let limit = cap as i64 + 1;
        let mut all = conn
            .prepare_cached("SELECT COUNT(*) FROM (SELECT 1 FROM records_fts WHERE records_fts MATCH ?1 LIMIT ?2)")?;
        let mut scoped = conn.prepare_cached(
            "SELECT COUNT(*) FROM (SELECT 1 FROM records_fts JOIN records r ON r.id = records_fts.rowid
             WHERE records_fts MATCH ?1 AND r.agent_id IN (SELECT value FROM json_each(?2)) AND r.forgotten_at IS NULL
             LIMIT ?3)",
        )?;
        let agents_json = serde_json::to_string(agents).unwrap_or_else(|_| "[]".into());
        let mut out = Vec::with_capacity(terms.len());
        for term in terms {
            let term_expr = term_expr(term);
            // Every agent's records first: the index alone answers it, and a term rare there is
            // rare in any scope.
            let n: i64 = all.query_row(params![term_expr, limit], |r| r.get(0))?;
            let n = if n as usize <= cap || all_theirs {
                n
            } else {
                scoped.query_row(params![term_expr, agents_json, limit], |r| r.get(0))?
            };
            out.push(n.max(0) as usize);
        }
        Ok(out)
    }

    /// About how many records exist: the highest id (an index lookup, where `COUNT(*)` would
    /// scan the table on every query), an upper bound once records were purged.
    fn record_count(&self) -> Result<i64> {
        let conn = self.reader();
        Ok(conn.query_row("SELECT COALESCE(MAX(id), 0) FROM records", [], |r| r.get(0))?)
    }

    /// Pinned or high-weight current records of `agents`, heaviest and newest first.
    fn essentials(&self, agents: &[String], min_weight: f64, limit: usize) -> Result<Vec<MemoryRecord>> {
        let conn = self.reader();
        // Per agent, two range scans of `records_weight` (pinned; unpinned and heavy): an `IN`
        // over agents or an `OR` would read every record of the agent.
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT * FROM (
               {RECORD_SELECT} WHERE agent_id = ?1 AND pinned = 1
               UNION ALL
               {RECORD_SELECT} WHERE agent_id = ?1 AND pinned = 0 AND weight >= ?2)
             WHERE {CURRENT_RECORD}
             ORDER BY pinned DESC, weight DESC, COALESCE(event_time, created_at) DESC LIMIT ?3"
        ))?;
        let mut out = Vec::new();
        for agent in agents {
            let rows = stmt.query_map(params![agent, min_weight, limit as i64], record_from_row)?;
            out.extend(rows.collect::<std::result::Result<Vec<_>, _>>()?);
        }
        out.sort_by(|a, b| {
            (b.pinned, b.weight)
                .partial_cmp(&(a.pinned, a.weight))
                .unwrap_or(std::cmp::Ordering::Equal)
                .then_with(|| b.event_time.unwrap_or(b.created_at).cmp(&a.event_time.unwrap_or(a.created_at)))
        });
        out.truncate(limit);
        Ok(out)
    }

    /// The newest current records of one wing.
    fn recent_in_wing(
        &self,
        agents: &[String],
        wing: &str,
        kinds: &[RecordKind],
        limit: usize,
    ) -> Result<Vec<MemoryRecord>> {
        let conn = self.reader();
        let agents_json = serde_json::to_string(agents).unwrap_or_else(|_| "[]".into());
        let kinds_json =
            serde_json::to_string(&kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>()).unwrap_or_default();
        let mut stmt = conn.prepare_cached(&format!(
            "{RECORD_SELECT} WHERE agent_id IN (SELECT value FROM json_each(?1)) AND wing = ?2
               AND kind IN (SELECT value FROM json_each(?3)) AND {CURRENT_RECORD}
             ORDER BY event_time DESC LIMIT ?4"
        ))?;
        let rows = stmt.query_map(params![agents_json, wing, kinds_json, limit as i64], record_from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn tombstones(&self, agent: &str, sessions: &[String]) -> Result<std::collections::HashSet<String>> {
        let conn = self.reader();
        let sessions = serde_json::to_string(sessions).unwrap_or_else(|_| "[]".into());
        let mut stmt = conn.prepare_cached(
            "SELECT said FROM tombstones
              WHERE agent_id = ?1 AND (session_id = '' OR session_id IN (SELECT value FROM json_each(?2)))",
        )?;
        let rows = stmt.query_map(params![agent, sessions], |r| r.get(0))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn set_pinned(&self, agent: &str, id: i64, pinned: bool, weight: f64, everywhere: bool) -> Result<bool> {
        let conn = self.writer();
        let n = conn.execute(
            &format!(
                "UPDATE records SET pinned = ?3, weight = ?4, project = CASE WHEN ?5 THEN NULL ELSE project END
                 WHERE id = ?1 AND agent_id = ?2 AND {CURRENT_RECORD}"
            ),
            params![id, agent, pinned, weight, everywhere],
        )?;
        Ok(n > 0)
    }

    /// Visit every record of `agent` (all agents when `None`), in id order.
    fn for_each_record(&self, agent: Option<&str>, visit: &mut dyn FnMut(MemoryRecord) -> Result<()>) -> Result<()> {
        let conn = self.reader();
        let mut stmt = conn.prepare(&format!("{RECORD_SELECT} WHERE ?1 IS NULL OR agent_id = ?1 ORDER BY id"))?;
        let mut rows = stmt.query([agent])?;
        while let Some(row) = rows.next()? {
            visit(record_from_row(row)?)?;
        }
        Ok(())
    }
}
