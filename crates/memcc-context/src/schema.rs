//! Schema migrations, applied on open and tracked by `PRAGMA user_version`, and the rebuild of
//! the full-text indexes when the rules that write them change.

use rusqlite::Connection;

use crate::error::StoreError;
use memcc_core::sqlite::FullTextTable;

/// Each entry upgrades the schema by one version; never edit a released entry, append a new one.
const MIGRATIONS: &[&str] = &[
    // v1
    r#"
    CREATE TABLE conversations (
        id          INTEGER PRIMARY KEY,
        session_id  TEXT NOT NULL UNIQUE,
        session_key TEXT,
        agent_id    TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL
    );
    CREATE TABLE messages (
        id              INTEGER PRIMARY KEY,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id),
        seq             INTEGER NOT NULL,
        role            TEXT NOT NULL,
        content         TEXT NOT NULL,   -- flattened text, as searched and summarised
        raw             TEXT NOT NULL,   -- the message JSON as the host sent it (large blocks as pointers)
        token_count     INTEGER NOT NULL,
        identity_hash   TEXT NOT NULL,
        tool_call_ids   TEXT,            -- JSON array, assistant messages that call tools
        tool_result_for TEXT,            -- tool results: the call they answer
        timestamp       INTEGER,
        created_at      INTEGER NOT NULL,
        UNIQUE (conversation_id, seq)
    );
    CREATE INDEX messages_identity ON messages (conversation_id, identity_hash);
    CREATE INDEX messages_time ON messages (conversation_id, timestamp);
    CREATE TABLE message_parts (
        message_id    INTEGER NOT NULL REFERENCES messages(id),
        idx           INTEGER NOT NULL,
        kind          TEXT NOT NULL,
        text          TEXT,
        tool_call_id  TEXT,
        tool_name     TEXT,
        large_file_id TEXT REFERENCES large_files(id),
        PRIMARY KEY (message_id, idx)
    );
    CREATE TABLE summaries (
        rid                  INTEGER PRIMARY KEY, -- stable rowid for summaries_fts (VACUUM keeps aliases)
        id                   TEXT NOT NULL UNIQUE,
        conversation_id      INTEGER NOT NULL REFERENCES conversations(id),
        kind                 TEXT NOT NULL CHECK (kind IN ('leaf', 'condensed')),
        depth                INTEGER NOT NULL,
        content              TEXT NOT NULL,
        token_count          INTEGER NOT NULL,
        earliest             INTEGER,
        latest               INTEGER,
        first_seq            INTEGER NOT NULL,
        last_seq             INTEGER NOT NULL,
        descendant_messages  INTEGER NOT NULL,
        descendant_summaries INTEGER NOT NULL,
        source_tokens        INTEGER NOT NULL,
        method               TEXT NOT NULL,
        created_at           INTEGER NOT NULL
    );
    CREATE INDEX summaries_conversation ON summaries (conversation_id, depth);
    CREATE TABLE summary_messages (
        summary_id TEXT NOT NULL REFERENCES summaries(id),
        message_id INTEGER NOT NULL REFERENCES messages(id),
        ord        INTEGER NOT NULL,
        PRIMARY KEY (summary_id, message_id)
    );
    CREATE INDEX summary_messages_message ON summary_messages (message_id);
    CREATE TABLE summary_parents (
        parent_id  TEXT NOT NULL REFERENCES summaries(id),
        summary_id TEXT NOT NULL REFERENCES summaries(id),
        ord        INTEGER NOT NULL,
        PRIMARY KEY (parent_id, summary_id)
    );
    CREATE INDEX summary_parents_child ON summary_parents (summary_id);
    CREATE TABLE context_items (
        conversation_id INTEGER NOT NULL REFERENCES conversations(id),
        ordinal         INTEGER NOT NULL,
        message_id      INTEGER REFERENCES messages(id),
        summary_id      TEXT REFERENCES summaries(id),
        token_count     INTEGER NOT NULL,
        PRIMARY KEY (conversation_id, ordinal),
        CHECK ((message_id IS NULL) <> (summary_id IS NULL))
    );
    CREATE TABLE large_files (
        id              TEXT PRIMARY KEY,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id),
        name            TEXT NOT NULL,
        byte_size       INTEGER NOT NULL,
        token_count     INTEGER NOT NULL,
        content         TEXT NOT NULL,
        created_at      INTEGER NOT NULL
    );
    CREATE TABLE turn_advancements (
        conversation_id INTEGER NOT NULL REFERENCES conversations(id),
        key             TEXT NOT NULL,
        created_at      INTEGER NOT NULL,
        PRIMARY KEY (conversation_id, key)
    );
    -- Contentless: rowid is messages.id / summaries.rid; text is CJK-segmented (memcc_core::text).
    CREATE VIRTUAL TABLE messages_fts USING fts5 (body, content = '', tokenize = 'unicode61 remove_diacritics 2');
    CREATE VIRTUAL TABLE summaries_fts USING fts5 (body, content = '', tokenize = 'unicode61 remove_diacritics 2');
    "#,
    // v2: summaries on their way to long-term memory, written with the summary (see `outbox`).
    r#"
    CREATE TABLE memory_outbox (
        summary_id      TEXT PRIMARY KEY REFERENCES summaries(id),
        conversation_id INTEGER NOT NULL REFERENCES conversations(id),
        payload         TEXT NOT NULL,
        attempts        INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        last_error      TEXT,
        created_at      INTEGER NOT NULL
    );
    CREATE INDEX memory_outbox_due ON memory_outbox (conversation_id, next_attempt_at);
    "#,
    // v3: facts about the file itself; `fts_document` is the text version its indexes follow.
    r#"
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    "#,
    // v4: what a conversation is, for listings and recall by project: the project it belongs
    // to (a repository root, else a directory), its title, where it came from (claude-code,
    // codex, openclaw, mcp, import) and the git branch it was on; the transcripts waiting to
    // be imported for a host's hook, and the files imported whole (`transcripts`).
    r#"
    ALTER TABLE conversations ADD COLUMN project TEXT;
    ALTER TABLE conversations ADD COLUMN title TEXT;
    ALTER TABLE conversations ADD COLUMN source TEXT;
    ALTER TABLE conversations ADD COLUMN branch TEXT;
    -- Unique across stores and purges (a purged conversation's row id is given out again): what
    -- a summary's id is made from, so memory never takes a new summary for one it has.
    ALTER TABLE conversations ADD COLUMN uid TEXT;
    UPDATE conversations SET uid = lower(hex(randomblob(12)));
    CREATE INDEX conversations_recent ON conversations (agent_id, updated_at);
    CREATE TABLE transcript_queue (
        agent_id        TEXT NOT NULL,
        session_id      TEXT NOT NULL,
        path            TEXT NOT NULL,
        project         TEXT,
        flush           INTEGER NOT NULL,
        enqueued_at     INTEGER NOT NULL,
        claimed_at      INTEGER,
        claimed_by      INTEGER,          -- the process working on it
        attempts        INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        last_error      TEXT,
        PRIMARY KEY (agent_id, session_id)
    );
    -- Files an import read whole, as they were then: a backfill passes over those unchanged.
    CREATE TABLE imported_files (
        agent_id    TEXT NOT NULL,
        path        TEXT NOT NULL,
        size        INTEGER NOT NULL,
        modified_at INTEGER NOT NULL,
        session_id  TEXT NOT NULL,
        imported_at INTEGER NOT NULL,
        PRIMARY KEY (agent_id, path)
    );
    "#,
    // v5: a session id is the agent's own: two agents may each hold a session "s", and neither
    // learns of the other's (it was unique across agents, so one agent could squat another's
    // ids). SQLite changes a constraint by rebuilding the table; row ids are kept, so what
    // refers to a conversation still does.
    r#"
    CREATE TABLE conversations_v5 (
        id          INTEGER PRIMARY KEY,
        session_id  TEXT NOT NULL,
        session_key TEXT,
        agent_id    TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL,
        project     TEXT,
        title       TEXT,
        source      TEXT,
        branch      TEXT,
        uid         TEXT,
        UNIQUE (agent_id, session_id)
    );
    INSERT INTO conversations_v5
        (id, session_id, session_key, agent_id, created_at, updated_at, project, title, source, branch, uid)
        SELECT id, session_id, session_key, agent_id, created_at, updated_at, project, title, source, branch, uid
        FROM conversations;
    DROP TABLE conversations;
    ALTER TABLE conversations_v5 RENAME TO conversations;
    CREATE INDEX conversations_recent ON conversations (agent_id, updated_at);
    "#,
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

pub fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    Ok(memcc_core::sqlite::migrate(conn, MIGRATIONS)?)
}

/// Rebuild `messages_fts` and `summaries_fts` when they were written under another text version
/// (see [`memcc_core::sqlite::refresh_full_text`]): `lcm_grep` then finds old messages as it
/// finds new ones, and a purge, which deletes an entry by naming its words, removes them all.
pub fn refresh_full_text(conn: &mut Connection) -> Result<usize, StoreError> {
    let tables = [
        FullTextTable { table: "messages_fts", rows: "SELECT id, content FROM messages ORDER BY id" },
        FullTextTable { table: "summaries_fts", rows: "SELECT rid, content FROM summaries ORDER BY rid" },
    ];
    Ok(memcc_core::sqlite::refresh_full_text(conn, &tables)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::OptionalExtension;

    /// A v4 file, its conversation referred to by a message, a summary and the outbox, comes
    /// through the v5 rebuild whole: same row ids, nothing dangling, foreign keys still enforced,
    /// and a session id is now unique per agent only.
    #[test]
    fn the_v5_rebuild_keeps_every_row_and_reference() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = memcc_core::sqlite::open_writer(&dir.path().join("context.db")).unwrap();
        memcc_core::sqlite::migrate(&mut conn, &MIGRATIONS[..4]).unwrap();
        conn.execute_batch(
            "INSERT INTO conversations (id, session_id, agent_id, created_at, updated_at, project, uid)
                 VALUES (7, 's', 'alice', 1, 2, '/repo', 'u7');
             INSERT INTO messages (id, conversation_id, seq, role, content, raw, token_count, identity_hash, created_at)
                 VALUES (1, 7, 0, 'user', 'hello', '{}', 1, 'h', 1);
             INSERT INTO summaries (id, conversation_id, kind, depth, content, token_count, first_seq, last_seq,
                                    descendant_messages, descendant_summaries, source_tokens, method, created_at)
                 VALUES ('sum_1', 7, 'leaf', 0, 'said hello', 2, 0, 0, 1, 0, 1, 'test', 1);
             INSERT INTO memory_outbox (summary_id, conversation_id, payload, next_attempt_at, created_at)
                 VALUES ('sum_1', 7, '{}', 0, 1);",
        )
        .unwrap();
        migrate(&mut conn).unwrap();

        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let kept: (i64, String, String, String) = conn
            .query_row("SELECT id, agent_id, project, uid FROM conversations WHERE session_id = 's'", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .unwrap();
        assert_eq!(kept, (7, "alice".into(), "/repo".into(), "u7".into()));
        let dangling: Option<String> = conn.query_row("PRAGMA foreign_key_check", [], |r| r.get(0)).optional().unwrap();
        assert_eq!(dangling, None);
        let enforced: bool = conn.query_row("PRAGMA foreign_keys", [], |r| r.get(0)).unwrap();
        assert!(enforced, "foreign keys are on again after the migration");
        assert!(
            conn.execute("INSERT INTO messages (conversation_id, seq, role, content, raw, token_count, identity_hash, created_at)
                          VALUES (99, 0, 'user', 'x', '{}', 1, 'h', 1)", []).is_err(),
            "a message of no conversation is refused"
        );
        let insert = |agent: &str| {
            conn.execute(
                "INSERT INTO conversations (session_id, agent_id, created_at, updated_at, uid) VALUES ('s', ?1, 1, 1, ?1)",
                [agent],
            )
        };
        assert!(insert("bob").is_ok(), "another agent may hold session s");
        assert!(insert("alice").is_err(), "alice holds it once");
    }
}
