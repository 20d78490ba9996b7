//! The session index's statements ([`crate::sessions`]), written once for both backends
//! in SQLite's `?N` parameters ([`super::supersession::postgres`] numbers them PostgreSQL's
//! way). What a session counts is decided above the backends; these only store and find it.

/// What a session's row becomes when more of its messages arrive: its span widened to theirs,
/// its first project kept. One text for both statements below (`concat!` takes literals only).
macro_rules! widen_session {
    () => {
        " ON CONFLICT (agent_id, session_id) DO UPDATE SET
       first_at = CASE WHEN sessions.first_at IS NULL OR excluded.first_at < sessions.first_at
                       THEN excluded.first_at ELSE sessions.first_at END,
       last_at = CASE WHEN sessions.last_at IS NULL OR excluded.last_at > sessions.last_at
                      THEN excluded.last_at ELSE sessions.last_at END,
       project = COALESCE(sessions.project, excluded.project)"
    };
}

/// A session of `?1` (agent) named `?2`, created on its first message (dated `?3`, learnt in
/// project `?4`), its span widened by each later one; its key.
pub(crate) const UPSERT_SESSION: &str = concat!(
    "INSERT INTO sessions (agent_id, session_id, length, first_at, last_at, project)
     VALUES (?1, ?2, 0, ?3, ?3, ?4)",
    widen_session!(),
    " RETURNING id"
);

/// [`UPSERT_SESSION`] for many sessions at once, on PostgreSQL: agents `$1`, names `$2`, the
/// first and last dates of their messages `$3` and `$4`, projects `$5`; each session's key, agent
/// and name.
pub(crate) const UPSERT_SESSIONS_PG: &str = concat!(
    "INSERT INTO sessions (agent_id, session_id, length, first_at, last_at, project)
     SELECT a, s, 0, f, l, p FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::text[])
       AS u(a, s, f, l, p)",
    widen_session!(),
    " RETURNING id, agent_id, session_id"
);

/// Message `?2` counted in session `?1`: no row changes when it was counted already.
pub(crate) const CLAIM_MESSAGE: &str =
    "INSERT INTO session_messages (session, message) VALUES (?1, ?2) ON CONFLICT DO NOTHING";

/// Session `?1` grew by a message of `?2` terms.
pub(crate) const ADD_LENGTH: &str = "UPDATE sessions SET length = length + ?2, messages = messages + 1 WHERE id = ?1";

/// Term `?2` of agent `?1` said `?4` more times in session `?3`.
pub(crate) const ADD_TERM: &str = "INSERT INTO session_terms (agent_id, term, session, tf) VALUES (?1, ?2, ?3, ?4)
     ON CONFLICT (agent_id, term, session) DO UPDATE SET tf = session_terms.tf + excluded.tf";

/// The key of agent `?1`'s session `?2`.
pub(crate) const SESSION_KEY: &str = "SELECT id FROM sessions WHERE agent_id = ?1 AND session_id = ?2";

/// What the index counted of session `?1`, emptied before it is counted again (the session keeps
/// its key, and with it its place among the sessions memory learnt).
pub(crate) const CLEAR_SESSION: [&str; 3] = [
    "DELETE FROM session_terms WHERE session = ?1",
    "DELETE FROM session_messages WHERE session = ?1",
    "UPDATE sessions SET length = 0, messages = 0 WHERE id = ?1",
];

/// Session `?1` gone when nothing of it is counted (a purge, a forget of all it said).
pub(crate) const DROP_EMPTY_SESSION: &str = "DELETE FROM sessions WHERE id = ?1 AND messages = 0";

/// The whole index, emptied before a rebuild.
pub(crate) const CLEAR_ALL: [&str; 3] =
    ["DELETE FROM session_terms", "DELETE FROM session_messages", "DELETE FROM sessions"];

/// The meta key holding the version of the rules the index was built under.
pub(crate) const VERSION_KEY: &str = "session_index";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::supersession::postgres;

    #[test]
    fn every_statement_has_postgres_parameters_once_renumbered() {
        for sql in [UPSERT_SESSION, CLAIM_MESSAGE, ADD_LENGTH, ADD_TERM, SESSION_KEY, DROP_EMPTY_SESSION]
            .into_iter()
            .chain(CLEAR_SESSION)
        {
            assert!(!postgres(sql).contains('?'), "{sql}");
        }
    }
}
