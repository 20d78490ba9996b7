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
        // looked up again. What was read is kept until the file is written ([`PostingsCache`]).
        let version = self.postings.current()?;
        let mut out = Vec::new();
        let mut read: Vec<Read<'_>> = Vec::new();
        {
            let conn = self.reader();
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

/// The postings a process has read from the session index, kept while the file is unchanged.
///
/// A search ranks every session of its agents, and reading the postings of its terms (the
/// question's, the conversation's, a hundred of feedback) was the largest part of a warm
/// search at 100k records. A long-lived process (the warm hook process, the MCP server, a host's
/// addon) asks for the same common terms again and again. `PRAGMA data_version`, read on a
/// connection of the cache's own that never writes, changes whenever any other connection —
/// this process's writer or another process — commits: then everything held is dropped, so a
/// search never sees postings older than the file. Answers are not cached, only postings.
pub(super) struct PostingsCache {
    watcher: Mutex<Connection>,
    held: std::sync::RwLock<Held>,
}

/// One term's postings among one agent's sessions: (session key, count).
pub(super) type TermPostings = Arc<[(i64, u32)]>;

/// Postings read from the file: (agent, term, postings).
pub(super) type Read<'a> = (&'a str, &'a str, TermPostings);

/// What the cache holds at one version of the file: postings by agent, then term.
#[derive(Default)]
struct Held {
    version: i64,
    by_agent: HashMap<String, HashMap<String, TermPostings>>,
    postings: usize,
}

/// How many postings a cache holds at most (16 bytes each: about 32 MB); past it, what is read
/// is not kept.
const HELD_POSTINGS: usize = 2_000_000;

impl PostingsCache {
    pub fn new(watcher: Connection) -> PostingsCache {
        PostingsCache { watcher: Mutex::new(watcher), held: std::sync::RwLock::new(Held::default()) }
    }

    /// The file's version now; what was held for an older one is dropped.
    pub fn current(&self) -> Result<i64> {
        let version: i64 = {
            let w = self.watcher.lock().unwrap_or_else(|p| p.into_inner());
            w.query_row("PRAGMA data_version", [], |r| r.get(0))?
        };
        let stale = self.held.read().unwrap_or_else(|p| p.into_inner()).version != version;
        if stale {
            let mut held = self.held.write().unwrap_or_else(|p| p.into_inner());
            if held.version != version {
                *held = Held { version, ..Held::default() };
            }
        }
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
