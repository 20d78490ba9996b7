//! The session index: sessions, their postings and terms, the rebuild. (SQLite store)

use super::*;

impl Sessions for SqliteStore {
    fn sessions(&self, agents: &[String]) -> Result<Vec<SessionInfo>> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(
            "SELECT id, agent_id, session_id, length, messages, first_at, last_at, project FROM sessions
              WHERE agent_id IN (SELECT value FROM json_each(?1))",
        )?;
        let rows = stmt.query_map([json(&agents)], |r| {
            Ok(SessionInfo {
                key: r.get(0)?,
                agent_id: r.get(1)?,
                session_id: r.get(2)?,
                length: r.get(3)?,
                messages: r.get(4)?,
                first_at: r.get(5)?,
                last_at: r.get(6)?,
                project: r.get(7)?,
            })
        })?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn session_postings(&self, agents: &[String], terms: &[String]) -> Result<Vec<Posting>> {
        // One range of the (agent, term, session) key per agent and term: only integers come
        // back, where one query over all the terms returned each posting's term as text to be
        // looked up again (the search's largest cost at 100k records).
        let conn = self.reader();
        let mut stmt =
            conn.prepare_cached("SELECT session, tf FROM session_terms WHERE agent_id = ?1 AND term = ?2")?;
        let mut out = Vec::new();
        for agent in agents {
            for (i, term) in terms.iter().enumerate() {
                let mut rows = stmt.query(params![agent, term])?;
                while let Some(r) = rows.next()? {
                    out.push((i, r.get(0)?, r.get(1)?));
                }
            }
        }
        Ok(out)
    }

    fn session_terms(&self, sessions: &[i64]) -> Result<Vec<(i64, String, u32)>> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(
            "SELECT session, term, tf FROM session_terms WHERE session IN (SELECT value FROM json_each(?1))",
        )?;
        let rows = stmt.query_map([json(&sessions)], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn records_of_sessions(&self, sessions: &[(String, String)]) -> Result<Vec<MemoryRecord>> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(&format!(
            "{RECORD_SELECT} WHERE agent_id = ?1 AND json_extract(source_session_ids, '$[0]') = ?2
               AND forgotten_at IS NULL"
        ))?;
        let mut out = Vec::new();
        for (agent, session) in sessions {
            for r in stmt.query_map(params![agent, session], record_from_row)? {
                out.push(r?);
            }
        }
        Ok(out)
    }

    fn session_index_version(&self) -> Result<Option<u32>> {
        let conn = self.reader();
        let v: Option<String> = conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [crate::store::sessions::VERSION_KEY], |r| r.get(0))
            .optional()?;
        Ok(v.and_then(|v| v.parse().ok()))
    }

    fn reindex_sessions(&self, words: &dyn Fn(&MemoryRecord) -> Vec<MessageWords>, version: u32) -> Result<usize> {
        self.write(|tx| {
            for sql in crate::store::sessions::CLEAR_ALL {
                tx.execute(sql, [])?;
            }
            let mut stmt = tx.prepare(&format!(
                "{RECORD_SELECT} WHERE kind = 'verbatim' AND forgotten_at IS NULL AND id > ?1 ORDER BY id LIMIT 500"
            ))?;
            let mut after = 0_i64;
            loop {
                let page: Vec<MemoryRecord> =
                    stmt.query_map([after], record_from_row)?.collect::<std::result::Result<_, _>>()?;
                let Some(last) = page.last() else { break };
                after = last.id;
                for record in &page {
                    for w in words(record) {
                        insert::add_message_words(tx, &record.agent_id, &w)?;
                    }
                }
            }
            tx.execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![crate::store::sessions::VERSION_KEY, version.to_string()],
            )?;
            Ok(tx.query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get::<_, i64>(0))? as usize)
        })
    }
}
