//! Schema migrations of `memory.db`, tracked by `PRAGMA user_version`, and the rebuild of its
//! full-text index when the rules that write it change.

use rusqlite::Connection;

use crate::error::MemoryError;
use memcc_core::sqlite::FullTextTable;

const MIGRATIONS: &[&str] = &[
    // v1
    r#"
    CREATE TABLE records (
        id                 INTEGER PRIMARY KEY,
        agent_id           TEXT NOT NULL,
        wing               TEXT NOT NULL,
        room               TEXT NOT NULL,
        kind               TEXT NOT NULL CHECK (kind IN ('summary', 'verbatim', 'preference', 'fact', 'pinned')),
        text               TEXT NOT NULL,
        content_hash       TEXT NOT NULL,
        source_summary_ids TEXT NOT NULL DEFAULT '[]',
        source_session_ids TEXT NOT NULL DEFAULT '[]',
        source_message_ids TEXT NOT NULL DEFAULT '[]',
        created_at         INTEGER NOT NULL,
        event_time         INTEGER,          -- when what the record says happened / was said
        valid_from         INTEGER,
        valid_until        INTEGER,
        superseded_by      INTEGER REFERENCES records(id),
        weight             REAL NOT NULL DEFAULT 1.0,
        pinned             INTEGER NOT NULL DEFAULT 0,
        forgotten_at       INTEGER,
        subject            TEXT,             -- with predicate: what a newer record supersedes
        predicate          TEXT,
        embed_status       TEXT NOT NULL DEFAULT 'pending' CHECK (embed_status IN ('pending', 'embedded')),
        embed_error        TEXT
    );
    CREATE UNIQUE INDEX records_content ON records (agent_id, content_hash);
    CREATE INDEX records_wing ON records (agent_id, wing, event_time);
    CREATE INDEX records_weight ON records (agent_id, pinned, weight);
    CREATE INDEX records_pending ON records (embed_status) WHERE embed_status = 'pending';
    CREATE INDEX records_subject ON records (agent_id, subject, predicate) WHERE subject IS NOT NULL;
    CREATE TABLE vectors (
        record_id INTEGER PRIMARY KEY REFERENCES records(id),
        model     TEXT NOT NULL,
        dim       INTEGER NOT NULL,
        data      BLOB NOT NULL           -- little-endian f32 × dim
    );
    CREATE TABLE triples (
        id            INTEGER PRIMARY KEY,
        agent_id      TEXT NOT NULL,
        subject       TEXT NOT NULL,
        predicate     TEXT NOT NULL,
        object        TEXT NOT NULL,
        valid_from    INTEGER,
        valid_until   INTEGER,
        superseded_by INTEGER REFERENCES triples(id),
        source_record INTEGER REFERENCES records(id),
        created_at    INTEGER NOT NULL
    );
    CREATE INDEX triples_subject ON triples (agent_id, subject, predicate);
    CREATE INDEX triples_object ON triples (agent_id, object);
    -- Contentless; rowid = records.id; text is CJK-segmented (memcc_core::text); English is
    -- stemmed (porter) so "marathons" finds "marathon" — recall matters more than exactness here.
    CREATE VIRTUAL TABLE records_fts USING fts5 (body, content = '', contentless_delete = 1,
                                                 tokenize = 'porter unicode61 remove_diacritics 2');
    "#,
    // v2: a record keeps one vector per embedding model (a model change re-embeds, it never
    // deletes what another model made); `meta` remembers which model the statuses follow.
    r#"
    CREATE TABLE vectors_by_model (
        record_id INTEGER NOT NULL REFERENCES records(id),
        model     TEXT NOT NULL,
        dim       INTEGER NOT NULL,
        data      BLOB NOT NULL,
        PRIMARY KEY (record_id, model)
    );
    INSERT INTO vectors_by_model (record_id, model, dim, data) SELECT record_id, model, dim, data FROM vectors;
    DROP TABLE vectors;
    ALTER TABLE vectors_by_model RENAME TO vectors;
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    "#,
    // v3: the summaries the bridge delivered, so a delivery repeated after a crash adds nothing.
    r#"
    CREATE TABLE ingested_summaries (
        agent_id    TEXT NOT NULL,
        summary_id  TEXT NOT NULL,
        ingested_at INTEGER NOT NULL,
        PRIMARY KEY (agent_id, summary_id)
    );
    "#,
    // v4: whether anything is forgotten, answered by an index (see `document_frequencies`).
    r#"
    CREATE INDEX records_forgotten ON records (id) WHERE forgotten_at IS NOT NULL;
    "#,
    // v5: what was forgotten, sentence by sentence (`crate::said`), so a later delivery that
    // quotes it (a condensed summary, an import) does not bring it back.
    r#"
    CREATE TABLE tombstones (
        agent_id     TEXT NOT NULL,
        said         TEXT NOT NULL,
        forgotten_at INTEGER NOT NULL,
        PRIMARY KEY (agent_id, said)
    );
    "#,
    // v6: the project a record was learnt in (`memcc_core::project`): recall favours the
    // asker's project.
    r#"
    ALTER TABLE records ADD COLUMN project TEXT;
    "#,
    // v7: a tombstone holds in the conversations it was forgotten from, not for good: the same
    // words said in a later conversation are a new statement ('' — everywhere — for the older).
    r#"
    ALTER TABLE tombstones RENAME TO tombstones_v5;
    CREATE TABLE tombstones (
        agent_id     TEXT NOT NULL,
        session_id   TEXT NOT NULL,
        said         TEXT NOT NULL,
        forgotten_at INTEGER NOT NULL,
        PRIMARY KEY (agent_id, session_id, said)
    );
    INSERT INTO tombstones (agent_id, session_id, said, forgotten_at)
        SELECT agent_id, '', said, forgotten_at FROM tombstones_v5;
    DROP TABLE tombstones_v5;
    "#,
    // v8: the session index (`crate::sessions`): each session's words as one document, by
    // term for BM25 and by session for feedback; the messages already counted, each once.
    r#"
    CREATE INDEX records_session ON records (agent_id, json_extract(source_session_ids, '$[0]'));
    CREATE TABLE sessions (
        id         INTEGER PRIMARY KEY,
        agent_id   TEXT NOT NULL,
        session_id TEXT NOT NULL,
        length     INTEGER NOT NULL DEFAULT 0,
        messages   INTEGER NOT NULL DEFAULT 0,
        first_at   INTEGER,
        last_at    INTEGER,
        project    TEXT,
        UNIQUE (agent_id, session_id)
    );
    CREATE TABLE session_terms (
        agent_id TEXT NOT NULL,
        term     TEXT NOT NULL,
        session  INTEGER NOT NULL REFERENCES sessions(id),
        tf       INTEGER NOT NULL,
        PRIMARY KEY (agent_id, term, session)
    ) WITHOUT ROWID;
    CREATE INDEX session_terms_session ON session_terms (session);
    CREATE TABLE session_messages (
        session INTEGER NOT NULL REFERENCES sessions(id),
        message INTEGER NOT NULL,
        PRIMARY KEY (session, message)
    ) WITHOUT ROWID;
    "#,
    // v9: which sessions' words changed, in the order of the writes: a process that keeps
    // postings read again only those sessions after a write (`IndexCache`). The newest
    // hundred thousand changes are kept; a process further behind starts over.
    r#"
    CREATE TABLE session_changes (n INTEGER PRIMARY KEY AUTOINCREMENT, session INTEGER NOT NULL);
    CREATE TRIGGER session_added AFTER INSERT ON sessions BEGIN
        INSERT INTO session_changes (session) VALUES (NEW.id);
        DELETE FROM session_changes WHERE n <= (SELECT MAX(n) FROM session_changes) - 100000;
    END;
    CREATE TRIGGER session_counted AFTER UPDATE OF length, messages ON sessions BEGIN
        INSERT INTO session_changes (session) VALUES (NEW.id);
        DELETE FROM session_changes WHERE n <= (SELECT MAX(n) FROM session_changes) - 100000;
    END;
    CREATE TRIGGER session_dropped AFTER DELETE ON sessions BEGIN
        INSERT INTO session_changes (session) VALUES (OLD.id);
    END;
    "#,
    // v10: a session's row is kept too (`IndexCache`), so any change to it is logged — its span
    // widened or its project told by a window whose messages were all counted already.
    r#"
    DROP TRIGGER session_counted;
    CREATE TRIGGER session_changed AFTER UPDATE ON sessions
      WHEN OLD.length IS NOT NEW.length OR OLD.messages IS NOT NEW.messages OR OLD.first_at IS NOT NEW.first_at
        OR OLD.last_at IS NOT NEW.last_at OR OLD.project IS NOT NEW.project BEGIN
        INSERT INTO session_changes (session) VALUES (NEW.id);
        DELETE FROM session_changes WHERE n <= (SELECT MAX(n) FROM session_changes) - 100000;
    END;
    "#,
];

pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

pub fn migrate(conn: &mut Connection) -> Result<(), MemoryError> {
    Ok(memcc_core::sqlite::migrate(conn, MIGRATIONS)?)
}

/// Rebuild `records_fts` when it was written under another text version (see
/// [`memcc_core::sqlite::refresh_full_text`]). Soft-forgotten records keep their entry (searches
/// filter them), so every record is indexed.
pub fn refresh_full_text(conn: &mut Connection) -> Result<usize, MemoryError> {
    let records = FullTextTable { table: "records_fts", rows: "SELECT id, text FROM records ORDER BY id" };
    Ok(memcc_core::sqlite::refresh_full_text(conn, &[records])?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tombstone written before tombstones named their conversations still holds everywhere.
    #[test]
    fn a_tombstone_from_before_v7_holds_in_every_conversation() {
        let mut conn = Connection::open_in_memory().unwrap();
        memcc_core::sqlite::migrate(&mut conn, &MIGRATIONS[..6]).unwrap();
        conn.execute("INSERT INTO tombstones (agent_id, said, forgotten_at) VALUES ('main', 'i live here', 1)", [])
            .unwrap();
        migrate(&mut conn).unwrap();
        let row: (String, String) =
            conn.query_row("SELECT session_id, said FROM tombstones", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        assert_eq!(row, (String::new(), "i live here".to_string()));
    }
}
