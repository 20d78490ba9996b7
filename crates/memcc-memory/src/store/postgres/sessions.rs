//! The session index: sessions, their postings and terms, the rebuild. (PostgreSQL store)

use super::*;

impl Sessions for PgStore {
    fn sessions(&self, agents: &[String]) -> Result<Vec<Arc<SessionInfo>>> {
        self.pool.run(|c| {
            let rows = c.query(
                "SELECT id, agent_id, session_id, length, messages, first_at, last_at, project FROM sessions
                  WHERE agent_id = ANY($1)",
                &[&agents],
            )?;
            rows.iter()
                .map(|r| {
                    Ok(Arc::new(SessionInfo {
                        key: r.try_get(0)?,
                        agent_id: r.try_get(1)?,
                        session_id: r.try_get(2)?,
                        length: u32::try_from(r.try_get::<_, i64>(3)?).unwrap_or(u32::MAX),
                        messages: u32::try_from(r.try_get::<_, i64>(4)?).unwrap_or(u32::MAX),
                        first_at: r.try_get(5)?,
                        last_at: r.try_get(6)?,
                        project: r.try_get(7)?,
                    }))
                })
                .collect()
        })
    }

    fn session_postings(&self, agents: &[String], terms: &[String]) -> Result<Vec<Posting>> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let place: HashMap<&str, usize> = terms.iter().enumerate().map(|(i, t)| (t.as_str(), i)).collect();
        self.pool.run(|c| {
            let rows = c.query(
                "SELECT term, session, tf FROM session_terms WHERE agent_id = ANY($1) AND term = ANY($2)",
                &[&agents, &terms],
            )?;
            let mut out = Vec::with_capacity(rows.len());
            for r in &rows {
                if let Some(&i) = place.get(r.try_get::<_, &str>(0)?) {
                    out.push((i, r.try_get(1)?, u32::try_from(r.try_get::<_, i64>(2)?).unwrap_or(u32::MAX)));
                }
            }
            Ok(out)
        })
    }

    fn session_postings_within(&self, agents: &[String], terms: &[String], within: &[i64]) -> Result<PostingsWithin> {
        if terms.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let place: HashMap<&str, usize> = terms.iter().enumerate().map(|(i, t)| (t.as_str(), i)).collect();
        self.pool.run(|c| {
            // The counts are the server's: only the pool's postings travel.
            let mut df = vec![0; terms.len()];
            for r in &c.query(
                "SELECT term, COUNT(*) FROM session_terms WHERE agent_id = ANY($1) AND term = ANY($2) GROUP BY term",
                &[&agents, &terms],
            )? {
                if let Some(&i) = place.get(r.try_get::<_, &str>(0)?) {
                    df[i] = usize::try_from(r.try_get::<_, i64>(1)?).unwrap_or(0);
                }
            }
            let rows = c.query(
                "SELECT term, session, tf FROM session_terms
                  WHERE agent_id = ANY($1) AND term = ANY($2) AND session = ANY($3)",
                &[&agents, &terms, &within],
            )?;
            let mut out = Vec::with_capacity(rows.len());
            for r in &rows {
                if let Some(&i) = place.get(r.try_get::<_, &str>(0)?) {
                    out.push((i, r.try_get(1)?, u32::try_from(r.try_get::<_, i64>(2)?).unwrap_or(u32::MAX)));
                }
            }
            Ok((df, out))
        })
    }

    fn session_terms(&self, sessions: &[i64]) -> Result<Vec<(i64, String, u32)>> {
        self.pool.run(|c| {
            let rows = c.query("SELECT session, term, tf FROM session_terms WHERE session = ANY($1)", &[&sessions])?;
            rows.iter()
                .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, u32::try_from(r.try_get::<_, i64>(2)?).unwrap_or(u32::MAX))))
                .collect()
        })
    }

    fn records_of_sessions(&self, sessions: &[(String, String)]) -> Result<Vec<MemoryRecord>> {
        let (agents, ids): (Vec<&str>, Vec<&str>) = sessions.iter().map(|(a, s)| (a.as_str(), s.as_str())).unzip();
        self.pool.run(|c| {
            records(c.query(
                &format!(
                    "{RECORD_SELECT} JOIN unnest($1::text[], $2::text[]) AS wanted(agent, session)
                       ON records.agent_id = wanted.agent AND records.source_session_ids->>0 = wanted.session
                     WHERE records.forgotten_at IS NULL"
                ),
                &[&agents, &ids],
            )?)
        })
    }

    fn session_index_version(&self) -> Result<Option<u32>> {
        self.pool.run(|c| {
            let v: Option<String> = c
                .query_opt("SELECT value FROM meta WHERE key = $1", &[&crate::store::sessions::VERSION_KEY])?
                .map(|r| r.try_get(0))
                .transpose()?;
            Ok(v.and_then(|v| v.parse().ok()))
        })
    }

    fn reindex_sessions(&self, words: &dyn Fn(&MemoryRecord) -> Vec<MessageWords>, version: u32) -> Result<usize> {
        self.pool.write(|tx| {
            // One rebuild at a time when several processes open an older database together.
            tx.execute("SELECT pg_advisory_xact_lock(hashtext('memcc.sessions'))", &[])?;
            for sql in crate::store::sessions::CLEAR_ALL {
                tx.execute(sql, &[])?;
            }
            let page = tx.prepare(&format!(
                "{RECORD_SELECT} WHERE kind = 'verbatim' AND forgotten_at IS NULL AND id > $1 ORDER BY id LIMIT 500"
            ))?;
            let mut after = 0_i64;
            loop {
                let rows = records(tx.query(&page, &[&after])?)?;
                let Some(last) = rows.last() else { break };
                after = last.id;
                let page_words: Vec<(String, MessageWords)> =
                    rows.iter().flat_map(|r| words(r).into_iter().map(|w| (r.agent_id.clone(), w))).collect();
                insert::add_words(tx, &page_words)?;
            }
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                &[&crate::store::sessions::VERSION_KEY, &version.to_string()],
            )?;
            Ok(count(tx, "SELECT COUNT(*) FROM sessions", &[])? as usize)
        })
    }
}
