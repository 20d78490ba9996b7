//! The session index: sessions, their postings and terms, the rebuild. (SQLite store)

use super::*;
use std::collections::HashMap;

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
        // looked up again. What was read is kept, and mended after a write ([`PostingsCache`]).
        let mut out = Vec::new();
        let mut read: Vec<Read<'_>> = Vec::new();
        let version;
        {
            let conn = self.reader();
            version = self.postings.current(&conn)?;
            let mut stmt =
                conn.prepare_cached("SELECT session, tf FROM session_terms WHERE agent_id = ?1 AND term = ?2")?;
            for agent in agents {
                for (i, term) in terms.iter().enumerate() {
                    let list = match self.postings.get(version, agent, term) {
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
                    out.extend(list.iter().map(|&(session, tf)| (i, session, tf)));
                }
            }
        }
        self.postings.keep(version, read);
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

/// The postings a process has read from the session index, kept across writes.
///
/// A search ranks every session of its agents, and reading the postings of its terms (the
/// question's, the conversation's, a hundred of feedback) was the largest part of a warm
/// search at 100k records. A long-lived process (the warm hook process, the MCP server, a host's
/// addon) asks for the same common terms again and again. `PRAGMA data_version`, read on a
/// connection of the cache's own that never writes, changes whenever any other connection —
/// this process's writer or another process — commits; then the sessions whose words changed
/// since (`sessions.changed`, numbered by triggers in the order of the writes) are read again
/// and their postings replaced in every list held, so a search never sees postings older than
/// the file. Answers are not cached, only postings.
pub(super) struct PostingsCache {
    watcher: Mutex<Connection>,
    held: std::sync::RwLock<Held>,
}

/// One term's postings among one agent's sessions: (session key, count), by session.
pub(super) type TermPostings = Arc<[(i64, u32)]>;

/// Postings read from the file: (agent, term, postings).
pub(super) type Read<'a> = (&'a str, &'a str, TermPostings);

/// What the cache holds at one version of the file: postings by agent, then term.
#[derive(Default)]
struct Held {
    version: i64,
    /// The last session change its postings include (`session_changes.n`; `i64::MAX` on a store
    /// that counts none, which is started over at every write).
    seen: i64,
    by_agent: HashMap<String, HashMap<String, TermPostings>>,
    postings: usize,
}

/// How many postings a cache holds at most (16 bytes each: about 32 MB); past it, what is read
/// is not kept.
const HELD_POSTINGS: usize = 2_000_000;

/// Past this many sessions changed by the writes since, the cache starts over rather than mend
/// (a rebuild of the index, an import).
const MENDED_SESSIONS: usize = 500;

impl PostingsCache {
    pub fn new(watcher: Connection) -> PostingsCache {
        PostingsCache { watcher: Mutex::new(watcher), held: std::sync::RwLock::new(Held::default()) }
    }

    /// The file's version now; what changed since the postings held were read is read again on
    /// `conn` and mended into them (or, past [`MENDED_SESSIONS`], they are dropped).
    pub fn current(&self, conn: &Connection) -> Result<i64> {
        let version: i64 = {
            let w = self.watcher.lock().unwrap_or_else(|p| p.into_inner());
            w.query_row("PRAGMA data_version", [], |r| r.get(0))?
        };
        if self.held.read().unwrap_or_else(|p| p.into_inner()).version == version {
            return Ok(version);
        }
        let mut held = self.held.write().unwrap_or_else(|p| p.into_inner());
        if held.version == version {
            return Ok(version);
        }
        // A store its process may not migrate counts no changes: start over at every write.
        let mended = held.postings > 0 && mend(conn, &mut held).unwrap_or(false);
        if !mended {
            let seen =
                conn.query_row("SELECT COALESCE(MAX(n), 0) FROM session_changes", [], |r| r.get(0)).unwrap_or(i64::MAX);
            *held = Held { seen, ..Held::default() };
        }
        held.version = version;
        Ok(version)
    }

    /// The postings of `agent`'s `term` held for the file at `version`.
    pub fn get(&self, version: i64, agent: &str, term: &str) -> Option<TermPostings> {
        let held = self.held.read().unwrap_or_else(|p| p.into_inner());
        if held.version != version {
            return None;
        }
        held.by_agent.get(agent)?.get(term).cloned()
    }

    /// Keep postings read at `version`, unless the file was written since or the cache is full.
    pub fn keep(&self, version: i64, read: Vec<Read<'_>>) {
        if read.is_empty() {
            return;
        }
        let mut held = self.held.write().unwrap_or_else(|p| p.into_inner());
        if held.version != version {
            return;
        }
        for (agent, term, list) in read {
            if held.postings + list.len() > HELD_POSTINGS {
                break;
            }
            held.postings += list.len();
            held.by_agent.entry(agent.to_string()).or_default().insert(term.to_string(), list);
        }
    }
}

/// Mend `held` with the sessions changed since it was read: each one's postings in every list
/// replaced by what it holds now (none, when it is gone). `false`: too many to mend, or the
/// changes since were pruned.
fn mend(conn: &Connection, held: &mut Held) -> Result<bool> {
    let oldest: Option<i64> = conn.query_row("SELECT MIN(n) FROM session_changes", [], |r| r.get(0))?;
    if oldest.is_some_and(|o| o > held.seen.saturating_add(1)) {
        return Ok(false);
    }
    let mut stmt = conn.prepare_cached("SELECT n, session FROM session_changes WHERE n > ?1")?;
    let changes: Vec<(i64, i64)> =
        stmt.query_map([held.seen], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?;
    let keys: std::collections::HashSet<i64> = changes.iter().map(|c| c.1).collect();
    if keys.len() > MENDED_SESSIONS {
        return Ok(false);
    }
    let Some(last) = changes.iter().map(|c| c.0).max() else { return Ok(true) };
    let keys_json = json(&keys.iter().collect::<Vec<_>>());
    let mut stmt = conn.prepare_cached(
        "SELECT t.session, s.agent_id, t.term, t.tf FROM session_terms t JOIN sessions s ON s.id = t.session
          WHERE t.session IN (SELECT value FROM json_each(?1))",
    )?;
    let mut fresh: HashMap<String, HashMap<String, Vec<(i64, u32)>>> = HashMap::new();
    let rows = stmt.query_map([&keys_json], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, u32>(3)?))
    })?;
    for row in rows {
        let (session, agent, term, tf) = row?;
        fresh.entry(agent).or_default().entry(term).or_default().push((session, tf));
    }
    let mut postings = 0;
    for (agent, terms) in held.by_agent.iter_mut() {
        for (term, list) in terms.iter_mut() {
            let added = fresh.get_mut(agent.as_str()).and_then(|terms| terms.remove(term.as_str()));
            if added.is_some() || list.iter().any(|(s, _)| keys.contains(s)) {
                let mut mended: Vec<(i64, u32)> = list.iter().copied().filter(|(s, _)| !keys.contains(s)).collect();
                mended.extend(added.into_iter().flatten());
                mended.sort_unstable();
                *list = mended.into();
            }
            postings += list.len();
        }
    }
    held.postings = postings;
    held.seen = last;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held_terms(store: &SqliteStore) -> Vec<String> {
        let held = store.postings.held.read().unwrap();
        let mut terms: Vec<String> = held.by_agent.values().flat_map(|t| t.keys().cloned()).collect();
        terms.sort();
        terms
    }

    /// A write to one session mends what is held (the other terms stay), and what it changed
    /// is read as it is now; a session dropped leaves no posting behind.
    #[test]
    fn a_write_mends_the_postings_held_instead_of_dropping_them() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("memory.db")).unwrap();
        store
            .writer()
            .execute_batch(
                "INSERT INTO sessions (id, agent_id, session_id) VALUES (1, 'a', 's1'), (2, 'a', 's2');
                 INSERT INTO session_terms (agent_id, term, session, tf) VALUES ('a', 'peanut', 1, 2), ('a', 'tea', 2, 1);",
            )
            .unwrap();
        let agents = ["a".to_string()];
        let terms = ["peanut".to_string(), "tea".to_string()];
        assert_eq!(store.session_postings(&agents, &terms).unwrap(), [(0, 1, 2), (1, 2, 1)]);
        assert_eq!(held_terms(&store), ["peanut", "tea"]);
        store
            .writer()
            .execute_batch(
                "UPDATE session_terms SET tf = 3 WHERE session = 2;
                 INSERT INTO session_terms (agent_id, term, session, tf) VALUES ('a', 'peanut', 2, 1);
                 UPDATE sessions SET length = 4, messages = 1 WHERE id = 2;",
            )
            .unwrap();
        store.postings.current(&store.reader()).unwrap();
        assert_eq!(held_terms(&store), ["peanut", "tea"], "mended, not dropped");
        assert_eq!(store.session_postings(&agents, &terms).unwrap(), [(0, 1, 2), (0, 2, 1), (1, 2, 3)]);
        store
            .writer()
            .execute_batch("DELETE FROM session_terms WHERE session = 1; DELETE FROM sessions WHERE id = 1;")
            .unwrap();
        assert_eq!(store.session_postings(&agents, &terms).unwrap(), [(0, 2, 1), (1, 2, 3)], "s1 gone");
    }
}
