//! What a process has read from the session index (postings and sessions), kept across
//! writes and mended by what they changed. (SQLite store)

use super::*;
use std::collections::{HashMap, HashSet};

/// The postings and the sessions a process has read from the session index, kept across
/// writes.
///
/// A search ranks every session of its agents, and reading the postings of its terms (the
/// question's, the conversation's, a hundred of feedback) was the largest part of a warm
/// search at 100k records; at a million, reading the sessions themselves (50,000 rows) was the
/// largest left. A long-lived process (the warm hook process, the MCP server, a host's
/// addon) asks for the same common terms again and again. `PRAGMA data_version`, read on a
/// connection of the cache's own that never writes, changes whenever any other connection —
/// this process's writer or another process — commits; then the sessions whose words changed
/// since (`session_changes`, numbered by triggers in the order of the writes) are read again
/// and their postings and rows replaced in every list held, so a search never sees the index
/// older than the file. Answers are not cached, only what the index holds.
pub(super) struct IndexCache {
    watcher: Mutex<Connection>,
    held: std::sync::RwLock<Held>,
}

/// One term's postings among one agent's sessions: (session key, count), by session.
pub(super) type TermPostings = Arc<[(i64, u32)]>;

/// Postings read from the file: (agent, term, postings).
pub(super) type Read<'a> = (&'a str, &'a str, TermPostings);

/// One agent's sessions, newest (highest key) first.
pub(super) type AgentSessions = Arc<Vec<Arc<SessionInfo>>>;

/// What the cache holds at one version of the file: postings by agent, then term; sessions by
/// agent.
#[derive(Default)]
struct Held {
    version: i64,
    /// The last session change it includes (`session_changes.n`; `i64::MAX` on a store that
    /// counts none, which is started over at every write).
    seen: i64,
    by_agent: HashMap<String, HashMap<String, TermPostings>>,
    postings: usize,
    sessions: HashMap<String, AgentSessions>,
    session_count: usize,
}

impl Held {
    fn is_empty(&self) -> bool {
        self.postings == 0 && self.session_count == 0
    }
}

/// How many postings a cache holds at most (16 bytes each: about 32 MB); past it, what is read
/// is not kept.
const HELD_POSTINGS: usize = 2_000_000;

/// How many sessions a cache holds at most (about 100 bytes each).
const HELD_SESSIONS: usize = 1_000_000;

/// Past this many sessions changed by the writes since, the cache starts over rather than mend
/// (a rebuild of the index, an import).
const MENDED_SESSIONS: usize = 500;

impl IndexCache {
    pub fn new(watcher: Connection) -> IndexCache {
        IndexCache { watcher: Mutex::new(watcher), held: std::sync::RwLock::new(Held::default()) }
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
        let mended = !held.is_empty() && mend(conn, &mut held).unwrap_or(false);
        if !mended {
            let seen =
                conn.query_row("SELECT COALESCE(MAX(n), 0) FROM session_changes", [], |r| r.get(0)).unwrap_or(i64::MAX);
            *held = Held { seen, ..Held::default() };
        }
        held.version = version;
        Ok(version)
    }

    /// The sessions of `agent` held for the file at `version`.
    pub fn sessions(&self, version: i64, agent: &str) -> Option<AgentSessions> {
        let held = self.held.read().unwrap_or_else(|p| p.into_inner());
        if held.version != version {
            return None;
        }
        held.sessions.get(agent).cloned()
    }

    /// Keep `agent`'s sessions read at `version`, unless the file was written since or the
    /// cache is full.
    pub fn keep_sessions(&self, version: i64, agent: &str, sessions: AgentSessions) {
        let mut held = self.held.write().unwrap_or_else(|p| p.into_inner());
        if held.version != version || held.session_count + sessions.len() > HELD_SESSIONS {
            return;
        }
        held.session_count += sessions.len();
        if let Some(old) = held.sessions.insert(agent.to_string(), sessions) {
            held.session_count -= old.len();
        }
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

/// Mend `held` with the sessions changed since it was read: each one's postings in every list,
/// and its row in its agent's sessions, replaced by what it holds now (none, when it is gone).
/// `false`: too many to mend, or the changes since were pruned.
fn mend(conn: &Connection, held: &mut Held) -> Result<bool> {
    let oldest: Option<i64> = conn.query_row("SELECT MIN(n) FROM session_changes", [], |r| r.get(0))?;
    if oldest.is_some_and(|o| o > held.seen.saturating_add(1)) {
        return Ok(false);
    }
    let mut stmt = conn.prepare_cached("SELECT n, session FROM session_changes WHERE n > ?1")?;
    let changes: Vec<(i64, i64)> =
        stmt.query_map([held.seen], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?;
    let keys: HashSet<i64> = changes.iter().map(|c| c.1).collect();
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
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {} FROM sessions WHERE id IN (SELECT value FROM json_each(?1))",
        super::sessions::SESSION_COLUMNS
    ))?;
    let mut rows: HashMap<String, Vec<Arc<SessionInfo>>> = HashMap::new();
    for row in stmt.query_map([&keys_json], super::sessions::session_from_row)? {
        let row = row?;
        rows.entry(row.agent_id.clone()).or_default().push(Arc::new(row));
    }
    let mut count = 0;
    for (agent, list) in held.sessions.iter_mut() {
        let added = rows.remove(agent.as_str());
        if added.is_some() || list.iter().any(|s| keys.contains(&s.key)) {
            let mut mended: Vec<Arc<SessionInfo>> = list.iter().filter(|s| !keys.contains(&s.key)).cloned().collect();
            mended.extend(added.into_iter().flatten());
            mended.sort_by_key(|s| std::cmp::Reverse(s.key));
            *list = Arc::new(mended);
        }
        count += list.len();
    }
    held.session_count = count;
    held.seen = last;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held_terms(store: &SqliteStore) -> Vec<String> {
        let held = store.index_cache.held.read().unwrap();
        let mut terms: Vec<String> = held.by_agent.values().flat_map(|t| t.keys().cloned()).collect();
        terms.sort();
        terms
    }

    /// A write to one session mends what is held (the other terms stay), and what it changed
    /// is read as it is now; a session dropped leaves no posting and no row behind.
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
        let rows = |store: &SqliteStore| {
            store
                .sessions(&agents)
                .unwrap()
                .into_iter()
                .map(|s| (s.key, s.length, s.project.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(rows(&store), [(2, 0, None), (1, 0, None)], "newest first");
        assert_eq!(store.index_cache.held.read().unwrap().session_count, 2, "kept");
        store
            .writer()
            .execute_batch(
                "UPDATE session_terms SET tf = 3 WHERE session = 2;
                 INSERT INTO session_terms (agent_id, term, session, tf) VALUES ('a', 'peanut', 2, 1);
                 UPDATE sessions SET length = 4, messages = 1 WHERE id = 2;",
            )
            .unwrap();
        store.index_cache.current(&store.reader()).unwrap();
        assert_eq!(held_terms(&store), ["peanut", "tea"], "mended, not dropped");
        assert_eq!(store.session_postings(&agents, &terms).unwrap(), [(0, 1, 2), (0, 2, 1), (1, 2, 3)]);
        assert_eq!(rows(&store), [(2, 4, None), (1, 0, None)], "the row mended");
        // A project told later, nothing counted anew: the row still read as it is now.
        store.writer().execute_batch("UPDATE sessions SET project = 'p' WHERE id = 1;").unwrap();
        assert_eq!(rows(&store), [(2, 4, None), (1, 0, Some("p".to_string()))]);
        assert_eq!(held_terms(&store), ["peanut", "tea"], "still mended, not dropped");
        store
            .writer()
            .execute_batch("DELETE FROM session_terms WHERE session = 1; DELETE FROM sessions WHERE id = 1;")
            .unwrap();
        assert_eq!(store.session_postings(&agents, &terms).unwrap(), [(0, 2, 1), (1, 2, 3)], "s1 gone");
        assert_eq!(rows(&store), [(2, 4, None)], "its row too");
    }
}
