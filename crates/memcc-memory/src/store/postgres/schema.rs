//! Schema migrations of the PostgreSQL memory store, tracked in `memcc_schema`, and the rebuild
//! of its full-text column when the rules that write it change.

use postgres::Transaction;

use crate::error::{MemoryError, Result};
use memcc_core::text::{FTS_DOCUMENT_VERSION, fts_document};

/// The text-search configuration: English stemming ("marathons" finds "marathon").
pub(super) const TS_CONFIG: &str = "english";

const MIGRATIONS: &[&str] = &[
    // v1
    r#"
    CREATE EXTENSION IF NOT EXISTS vector;
    CREATE TABLE records (
        id                 BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        agent_id           TEXT NOT NULL,
        wing               TEXT NOT NULL,
        room               TEXT NOT NULL,
        kind               TEXT NOT NULL CHECK (kind IN ('summary', 'verbatim', 'preference', 'fact', 'pinned')),
        text               TEXT NOT NULL,
        content_hash       TEXT NOT NULL,
        source_summary_ids JSONB NOT NULL DEFAULT '[]',
        source_session_ids JSONB NOT NULL DEFAULT '[]',
        source_message_ids JSONB NOT NULL DEFAULT '[]',
        created_at         BIGINT NOT NULL,
        event_time         BIGINT,
        valid_from         BIGINT,
        valid_until        BIGINT,
        superseded_by      BIGINT REFERENCES records(id) ON DELETE SET NULL,
        weight             DOUBLE PRECISION NOT NULL DEFAULT 1.0,
        pinned             BOOLEAN NOT NULL DEFAULT FALSE,
        forgotten_at       BIGINT,
        subject            TEXT,
        predicate          TEXT,
        embed_status       TEXT NOT NULL DEFAULT 'pending' CHECK (embed_status IN ('pending', 'embedded')),
        embed_error        TEXT,
        fts                TSVECTOR NOT NULL
    );
    CREATE UNIQUE INDEX records_content ON records (agent_id, content_hash);
    CREATE INDEX records_wing ON records (agent_id, wing, event_time);
    CREATE INDEX records_weight ON records (agent_id, pinned, weight);
    CREATE INDEX records_pending ON records (id) WHERE embed_status = 'pending';
    CREATE INDEX records_subject ON records (agent_id, lower(subject), predicate) WHERE subject IS NOT NULL;
    CREATE INDEX records_fts ON records USING gin (fts);
    -- agent_id repeats the record's, so a vector search filters inside the index scan.
    CREATE TABLE vectors (
        record_id BIGINT NOT NULL REFERENCES records(id) ON DELETE CASCADE,
        model     TEXT NOT NULL,
        dim       INTEGER NOT NULL,
        embedding vector NOT NULL,
        agent_id  TEXT NOT NULL,
        PRIMARY KEY (record_id, model)
    );
    CREATE TABLE triples (
        id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        agent_id      TEXT NOT NULL,
        subject       TEXT NOT NULL,
        predicate     TEXT NOT NULL,
        object        TEXT NOT NULL,
        valid_from    BIGINT,
        valid_until   BIGINT,
        superseded_by BIGINT REFERENCES triples(id) ON DELETE SET NULL,
        source_record BIGINT REFERENCES records(id) ON DELETE CASCADE,
        created_at    BIGINT NOT NULL
    );
    CREATE INDEX triples_subject ON triples (agent_id, lower(subject), predicate);
    CREATE INDEX triples_object ON triples (agent_id, lower(object));
    CREATE INDEX triples_source ON triples (source_record);
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE ingested_summaries (
        agent_id    TEXT NOT NULL,
        summary_id  TEXT NOT NULL,
        ingested_at BIGINT NOT NULL,
        PRIMARY KEY (agent_id, summary_id)
    );
    "#,
    // v2: a record's length in indexed words, for BM25's length normalisation; the database keeps
    // it whenever `fts` is written, and fills it for the rows already there.
    r#"
    CREATE FUNCTION memcc_fts_words(tsvector) RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE
        AS $$ SELECT COALESCE(sum(COALESCE(array_length(positions, 1), 1)), 0)::integer FROM unnest($1) $$;
    ALTER TABLE records ADD COLUMN fts_words INTEGER GENERATED ALWAYS AS (memcc_fts_words(fts)) STORED;
    "#,
    // v3: what was forgotten, sentence by sentence (`crate::said`), so a later delivery that
    // quotes it (a condensed summary, an import) does not bring it back.
    r#"
    CREATE TABLE tombstones (
        agent_id     TEXT NOT NULL,
        said         TEXT NOT NULL,
        forgotten_at BIGINT NOT NULL,
        PRIMARY KEY (agent_id, said)
    );
    "#,
    // v4: the project a record was learnt in (`memcc_core::project`): recall favours the
    // asker's project.
    r#"
    ALTER TABLE records ADD COLUMN IF NOT EXISTS project TEXT;
    "#,
    // v5: a tombstone holds in the conversations it was forgotten from, not for good: the same
    // words said in a later conversation are a new statement ('' — everywhere — for the older).
    r#"
    ALTER TABLE tombstones ADD COLUMN IF NOT EXISTS session_id TEXT NOT NULL DEFAULT '';
    ALTER TABLE tombstones DROP CONSTRAINT IF EXISTS tombstones_pkey;
    ALTER TABLE tombstones ADD PRIMARY KEY (agent_id, session_id, said);
    "#,
    // v6: the session index (`crate::sessions`): each session's words as one document, by
    // term for BM25 and by session for feedback; the messages already counted, each once.
    r#"
    CREATE INDEX records_session ON records (agent_id, (source_session_ids->>0));
    CREATE TABLE sessions (
        id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        agent_id   TEXT NOT NULL,
        session_id TEXT NOT NULL,
        length     BIGINT NOT NULL DEFAULT 0,
        messages   BIGINT NOT NULL DEFAULT 0,
        first_at   BIGINT,
        last_at    BIGINT,
        project    TEXT,
        UNIQUE (agent_id, session_id)
    );
    CREATE TABLE session_terms (
        agent_id TEXT NOT NULL,
        term     TEXT NOT NULL,
        session  BIGINT NOT NULL REFERENCES sessions(id),
        tf       BIGINT NOT NULL,
        PRIMARY KEY (agent_id, term, session)
    );
    CREATE INDEX session_terms_session ON session_terms (session);
    CREATE TABLE session_messages (
        session BIGINT NOT NULL REFERENCES sessions(id),
        message BIGINT NOT NULL,
        PRIMARY KEY (session, message)
    );
    "#,
];

pub const PG_SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Migrations by version, under an advisory lock so processes opening a new database at once
/// apply each step once.
pub(super) fn migrate(tx: &mut Transaction<'_>) -> Result<()> {
    // A migration may build an index over every record, and a second process waits here for the
    // first one's: neither is held to the limits of an ordinary call.
    tx.batch_execute("SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0")?;
    tx.execute("SELECT pg_advisory_xact_lock(hashtext('memcc.migrate'))", &[])?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS memcc_schema (version BIGINT NOT NULL)")?;
    let found: i64 =
        tx.query_opt("SELECT version FROM memcc_schema", &[])?.map(|r| r.try_get(0)).transpose()?.unwrap_or(0);
    if found > PG_SCHEMA_VERSION {
        return Err(MemoryError::NewerSchema { found, supported: PG_SCHEMA_VERSION });
    }
    for step in &MIGRATIONS[found as usize..] {
        tx.batch_execute(step)?;
    }
    if found < PG_SCHEMA_VERSION {
        tx.execute("DELETE FROM memcc_schema", &[])?;
        tx.execute("INSERT INTO memcc_schema (version) VALUES ($1)", &[&PG_SCHEMA_VERSION])?;
    }
    refresh_full_text(tx)?;
    Ok(())
}

/// Rewrite every record's `fts` when it was written under another [`FTS_DOCUMENT_VERSION`] (a
/// database from before the version was kept counts as older), inside the migration's
/// transaction and lock, so concurrent openers do it once and readers see old or new.
fn refresh_full_text(tx: &mut Transaction<'_>) -> Result<usize> {
    let current = FTS_DOCUMENT_VERSION.to_string();
    let written: Option<String> =
        tx.query_opt("SELECT value FROM meta WHERE key = 'fts_document'", &[])?.map(|r| r.try_get(0)).transpose()?;
    if written.as_deref() == Some(current.as_str()) {
        return Ok(0);
    }
    // A page at a time, so a large store is never held in memory whole.
    let page = tx.prepare("SELECT id, text FROM records WHERE id > $1 ORDER BY id LIMIT 500")?;
    let update = tx.prepare(
        "UPDATE records r SET fts = to_tsvector($1::text::regconfig, u.doc)
           FROM unnest($2::bigint[], $3::text[]) AS u(id, doc) WHERE r.id = u.id",
    )?;
    let (mut after, mut indexed) = (0_i64, 0_usize);
    loop {
        let rows = tx.query(&page, &[&after])?;
        let Some(last) = rows.last() else { break };
        after = last.try_get(0)?;
        let mut ids = Vec::with_capacity(rows.len());
        let mut docs = Vec::with_capacity(rows.len());
        for row in &rows {
            ids.push(row.try_get::<_, i64>(0)?);
            docs.push(fts_document(row.try_get::<_, &str>(1)?));
        }
        tx.execute(&update, &[&TS_CONFIG, &ids, &docs])?;
        indexed += rows.len();
    }
    tx.execute(
        "INSERT INTO meta (key, value) VALUES ('fts_document', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        &[&current],
    )?;
    if indexed > 0 {
        tracing::info!(records = indexed, version = FTS_DOCUMENT_VERSION, "full-text index rebuilt");
    }
    Ok(indexed)
}
