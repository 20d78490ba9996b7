//! The session index: sessions, their postings and terms, the rebuild. (SQLite store)

use super::*;

use super::index_cache::{Read, TermPostings};

/// A session's row as [`session_from_row`] reads it.
pub(super) const SESSION_COLUMNS: &str = "id, agent_id, session_id, length, messages, first_at, last_at, project";

pub(super) fn session_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SessionInfo> {
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
}

impl Sessions for SqliteStore {
    fn sessions(&self, agents: &[String]) -> Result<Vec<Arc<SessionInfo>>> {
        let mut agents: Vec<&String> = agents.iter().collect();
        agents.sort_unstable();
        agents.dedup();
        let mut out = Vec::new();
        let conn = self.reader();
        let version = self.index_cache.current(&conn)?;
        let mut stmt = conn
            .prepare_cached(&format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE agent_id = ?1 ORDER BY id DESC"))?;
        for agent in agents {
            let list = match self.index_cache.sessions(version, agent) {
                Some(list) => list,
                None => {
                    let list: Vec<Arc<SessionInfo>> = stmt
                        .query_map([agent], |r| session_from_row(r).map(Arc::new))?
                        .collect::<std::result::Result<_, _>>()?;
                    let list = Arc::new(list);
                    self.index_cache.keep_sessions(version, agent, list.clone());
                    list
                }
            };
            out.extend(list.iter().cloned());
        }
        Ok(out)
    }

    fn session_postings(&self, agents: &[String], terms: &[String]) -> Result<Vec<Posting>> {
        let mut out = Vec::new();
        self.each_postings_list(agents, terms, |i, list| {
            out.extend(list.iter().map(|&(session, tf)| (i, session, tf)))
        })?;
        Ok(out)
    }

    fn session_postings_within(&self, agents: &[String], terms: &[String], within: &[i64]) -> Result<PostingsWithin> {
        let mut df = vec![0; terms.len()];
        let mut out = Vec::new();
        self.each_postings_list(agents, terms, |i, list| {
            if let Some(n) = df.get_mut(i) {
                *n += list.len();
            }
            // Both sorted by session: each of `within` looked up from where the last was found,
            // galloping (the next is usually near, and a binary search over the whole rest
            // missed the cache at every step).
            let mut rest = list;
            for &session in within {
                rest = &rest[gallop(rest, session)..];
                match rest.first() {
                    Some(&(s, tf)) if s == session => out.push((i, s, tf)),
                    Some(_) => {}
                    None => break,
                }
            }
        })?;
        Ok((df, out))
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

impl SqliteStore {
    /// Hand each of `terms`' postings lists among each of `agents`' sessions (sorted by session)
    /// to `each`, with the term's place in `terms`. One range of the (agent, term, session) key
    /// per agent and term: only integers come back, where one query over all the terms returned
    /// each posting's term as text to be looked up again. What was read is kept, and mended
    /// after a write ([`IndexCache`](super::index_cache::IndexCache)).
    fn each_postings_list(
        &self,
        agents: &[String],
        terms: &[String],
        mut each: impl FnMut(usize, &[(i64, u32)]),
    ) -> Result<()> {
        let mut read: Vec<Read<'_>> = Vec::new();
        let version;
        {
            let conn = self.reader();
            version = self.index_cache.current(&conn)?;
            let mut stmt = conn.prepare_cached(
                "SELECT session, tf FROM session_terms WHERE agent_id = ?1 AND term = ?2 ORDER BY session",
            )?;
            for agent in agents {
                for (i, term) in terms.iter().enumerate() {
                    let list = match self.index_cache.get(version, agent, term) {
                        Some(list) => list,
                        None => {
                            let list: Vec<(i64, u32)> = stmt
                                .query_map(params![agent, term], |r| Ok((r.get(0)?, r.get(1)?)))?
                                .collect::<std::result::Result<_, _>>()?;
                            let list: TermPostings = list.into();
                            read.push((agent, term, list.clone()));
                            list
                        }
                    };
                    each(i, &list);
                }
            }
        }
        self.index_cache.keep(version, read);
        Ok(())
    }
}

/// The first place in `list` (sorted by session) whose session is not below `session`: probed
/// at 1, 2, 4, … places, then searched within the last step.
fn gallop(list: &[(i64, u32)], session: i64) -> usize {
    let (mut low, mut step) = (0, 1);
    while low + step <= list.len() && list[low + step - 1].0 < session {
        low += step;
        step *= 2;
    }
    let high = (low + step).min(list.len());
    low + list[low..high].partition_point(|p| p.0 < session)
}

#[cfg(test)]
mod tests {
    use super::gallop;

    #[test]
    fn gallop_finds_where_a_binary_search_does() {
        let list: Vec<(i64, u32)> = [1, 3, 3, 4, 9, 10, 11, 12, 13, 40].iter().map(|&k| (k, 1)).collect();
        for session in -1..45 {
            for start in 0..=list.len() {
                let rest = &list[start..];
                assert_eq!(gallop(rest, session), rest.partition_point(|p| p.0 < session), "{session} from {start}");
            }
        }
    }
}
