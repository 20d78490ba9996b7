//! The shared backend: one PostgreSQL database with pgvector, which MemCC processes on several
//! machines (or several data directories) read and write at once.
//!
//! The same records, triples, supersession and agent scoping as `memory.db`; full text is a
//! `tsvector` column (English stemming, CJK as bigrams exactly as [`memcc_core::text`] segments
//! them for SQLite) under a GIN index; vectors are pgvector values searched where they are, by
//! an HNSW index per embedding model (so a new record of another process is found at once).
//!
//! A dropped connection is not an error a user sees: every operation runs on a pooled
//! connection, and when the connection fails (or the server ends the session) the whole
//! operation — a write is one transaction — runs again on a new one, a few times with back-off.
//! A retried insert is idempotent (records are unique per agent and text), so a write is either
//! stored once or, when the database stays away, reported as failed with nothing half-written.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pgvector::Vector;
use postgres::types::ToSql;
use postgres::{Client, GenericClient, Row, Transaction};
use sha2::{Digest, Sha256};

use super::postgres_pool::{CONNECTIONS, Pool, tls_connector, transient};
pub use super::postgres_schema::PG_SCHEMA_VERSION;
use super::postgres_schema::{TS_CONFIG, migrate};
use super::{FullText, Insert, Inserted, MemoryStats, MemoryStore, VectorVisitor, json, sql_int};
use crate::browse::{Facets, Page, RecordFilter};
use crate::error::{MemoryError, Result};
use crate::forget::{Forget, ForgetTx, Forgotten};
use crate::period::Period;
use crate::record::{MemoryRecord, RecordKind, Triple, content_hash};
use crate::vector::{VectorHit, VectorRow, VectorStore};
use memcc_core::text::{Term, fts_document, rendered_terms};
use memcc_core::time::now_ms;

/// Rows read per page when visiting a whole table.
const PAGE: i64 = 1000;
/// About how many records there are (an index lookup; an upper bound once records were purged).
const MAX_RECORD_ID: &str = "SELECT COALESCE(MAX(id), 0) FROM records";
/// Document frequencies are counted up to this many records.
const DF_CAP: i64 = 20_000;

pub struct PgStore {
    pool: Arc<Pool>,
}

/// BM25's yardstick for a record's length: the mean length in words of the newest records (a
/// sample is enough to say what a long record is; the whole table would be a scan per search).
/// A scalar subquery, evaluated once per search; as a joined row it changed the plan (~1.6×).
macro_rules! mean_words {
    () => {
        "(SELECT GREATEST(COALESCE(avg(fts_words), 1), 1)::float8
            FROM (SELECT fts_words FROM records ORDER BY id DESC LIMIT 500) AS newest)"
    };
}

/// `K` of BM25 (k1 = 1.2, b = 0.75) for record `r`.
macro_rules! bm25_k {
    () => {
        concat!("1.2 * (0.25 + 0.75 * r.fts_words::float8 / ", mean_words!(), ")")
    };
}

/// A record's full-text score: BM25 (k1 = 1.2, b = 0.75), as SQLite's FTS5 ranks, summed over
/// the query's terms (`$1` the text search configuration, `$2` / `$3` the terms and their IDFs).
/// Plain `ts_rank` normalises length by its logarithm, which let long records — summaries —
/// rise by holding many words (LoCoMo dev, full pipeline: turn R_all@10 0.729 on PostgreSQL
/// against SQLite's 0.758; 0.755 with this).
///
/// A term's count in the record is read back from `ts_rank` without normalisation, which for
/// one term is `u / 16.45` with `u = Σ_{j ≤ tf} 1/j²` (0 when absent): `(π²/6 − 1)·u/(π²/6 − u)`
/// is the count exactly at 1 and within 3 % above (`ts_rank_cd` counts exactly but costs four
/// times as much). Written so that the rank is computed once per record and term:
/// `tf·(k1 + 1)/(tf + K) = (k1 + 1) − (k1 + 1)·K/(tf + K)`.
const SCORE: &str = concat!(
    "SUM(w.idf * (2.2 - 2.2 * (",
    bm25_k!(),
    ") / (0.644934 * (1.644934 / GREATEST(1.644934 - 16.44934 * ts_rank(r.fts, to_tsquery($1::text::regconfig, w.q), 0)::float8, 0.001) - 1.0) + ",
    bm25_k!(),
    ")))::float8 AS score"
);

/// The full-text matches (`$4`, any term) among the current records of the agents `$5`, in wing
/// `$6` when it is not null, one row per record and term.
const MATCHING: &str = "FROM records r, unnest($2::text[], $3::float8[]) AS w(q, idf)
     WHERE r.fts @@ to_tsquery($1::text::regconfig, $4) AND r.agent_id = ANY($5)
       AND r.forgotten_at IS NULL AND ($6::text IS NULL OR r.wing = $6)";

impl PgStore {
    /// [`MemoryStore::fts`] (`beside` none) and [`MemoryStore::fts_also_during`] (`beside` the
    /// period) in one: every match is scored once, and the best of the period are ranked among
    /// themselves beside the best overall.
    fn full_text(&self, q: &FullText<'_>, beside: Option<Period>) -> Result<Vec<(i64, f64)>> {
        let FullText { terms, agents, wing, during, limit, frequencies } = *q;
        let parts = rendered_terms(terms, term_tsquery);
        if parts.is_empty() {
            return Ok(Vec::new());
        }
        let any = parts.join(" | ");
        let limit = limit as i64;
        let (from, until) = (during.map(|p| p.start), during.map(|p| p.end));
        self.pool.run(|c| {
            // BM25's shape, which `ts_rank` alone lacks: each term's match weighs by how rare the
            // term is among the agents' records (its IDF), so "Lisbon" outweighs "trip". Document
            // frequencies are counted up to DF_CAP (beyond it a term is common all the same), here
            // unless the caller counted them already.
            let n = count(c, MAX_RECORD_ID, &[])?.max(1) as f64;
            let counted: HashMap<String, usize> = match frequencies {
                Some(f) => terms.iter().map(term_tsquery).zip(f.iter().copied()).collect(),
                None => HashMap::new(),
            };
            let missing: Vec<String> = parts.iter().filter(|p| !counted.contains_key(*p)).cloned().collect();
            let mut df: HashMap<String, usize> = if missing.is_empty() {
                HashMap::new()
            } else {
                missing.iter().cloned().zip(document_frequencies(c, &missing, agents, DF_CAP)?).collect()
            };
            df.extend(counted);
            let idf: Vec<f64> = parts
                .iter()
                .map(|p| {
                    let df = df.get(p).copied().unwrap_or(0).min(DF_CAP as usize) as f64;
                    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
                })
                .collect();
            let rows = match beside {
                None => c.query(
                    &format!(
                        "SELECT r.id, {SCORE} {MATCHING}
                           AND ($8::int8 IS NULL OR COALESCE(r.event_time, r.created_at) >= $8)
                           AND ($9::int8 IS NULL OR COALESCE(r.event_time, r.created_at) < $9)
                         GROUP BY r.id ORDER BY score DESC, r.id DESC LIMIT $7"
                    ),
                    &[&TS_CONFIG, &parts, &idf, &any, &agents, &wing, &limit, &from, &until],
                )?,
                Some(period) => c.query(
                    &format!(
                        "SELECT id, score FROM (
                           SELECT id, score, within,
                                  row_number() OVER (ORDER BY score DESC, id DESC) AS overall,
                                  row_number() OVER (PARTITION BY within ORDER BY score DESC, id DESC) AS among_its_own
                           FROM (SELECT r.id, {SCORE},
                                        bool_and(COALESCE(r.event_time, r.created_at) >= $8
                                                 AND COALESCE(r.event_time, r.created_at) < $9) AS within
                                 {MATCHING} GROUP BY r.id) AS scored) AS ranked
                         WHERE overall <= $7 OR (within AND among_its_own <= $7)
                         ORDER BY score DESC, id DESC"
                    ),
                    &[&TS_CONFIG, &parts, &idf, &any, &agents, &wing, &limit, &period.start, &period.end],
                )?,
            };
            rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect()
        })
    }

    /// Connect to `url` (`postgres://user:password@host:port/database`, or key=value pairs;
    /// TLS as its `sslmode` says, certificates checked against the public roots and `ca_file`)
    /// and bring the schema up to date.
    pub fn open(url: &str, ca_file: Option<&std::path::Path>) -> Result<Self> {
        let mut config: postgres::Config =
            url.parse().map_err(|e| MemoryError::Config(format!("memory.postgresUrl: {e}")))?;
        if config.get_application_name().is_none() {
            config.application_name("memcc");
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        config.keepalives(true);
        let tls = match config.get_ssl_mode() {
            postgres::config::SslMode::Disable => None,
            _ => Some(tls_connector(ca_file)?),
        };
        let place = format!(
            "the PostgreSQL memory store ({}:{}/{})",
            config.get_hosts().first().map_or_else(String::new, |h| match h {
                postgres::config::Host::Tcp(host) => host.clone(),
                other => format!("{other:?}"),
            }),
            config.get_ports().first().copied().unwrap_or(5432),
            config.get_dbname().unwrap_or_default()
        );
        let pool = Arc::new(Pool {
            config,
            tls,
            slots: (0..CONNECTIONS).map(|_| Mutex::new(None)).collect(),
            breaker: Mutex::default(),
            place: place.clone(),
        });
        // One try: a store that cannot be reached at open is reported at once (the caller
        // decides whether to try again; `Memcc`'s memory slot does, in the background).
        // Unreachable (down, restarting) may pass; refused (authentication, a missing privilege)
        // needs someone to change something.
        pool.write_tries(1, migrate).map_err(|e| match e {
            MemoryError::Postgres(e) if transient(&e) => {
                MemoryError::Unavailable(format!("{place}: {}", crate::error::pg_message(&e)))
            }
            MemoryError::Postgres(e) => MemoryError::Config(format!("{place}: {}", crate::error::pg_message(&e))),
            other => other,
        })?;
        Ok(PgStore { pool })
    }
}

const RECORD_SELECT: &str = "SELECT id, agent_id, wing, room, kind, text, source_summary_ids::text,
    source_session_ids::text, source_message_ids::text, created_at, event_time, valid_from, valid_until,
    superseded_by, weight, pinned, forgotten_at, subject, predicate, embed_status FROM records";

fn record_from_row(r: &Row) -> Result<MemoryRecord> {
    Ok(super::rows::record_from(r)?)
}

fn records(rows: Vec<Row>) -> Result<Vec<MemoryRecord>> {
    rows.iter().map(record_from_row).collect()
}

const TRIPLE_SELECT: &str = "SELECT id, agent_id, subject, predicate, object, valid_from, valid_until, superseded_by, source_record FROM triples";

fn triple_from_row(r: &Row) -> Result<Triple> {
    Ok(super::rows::triple_from(r)?)
}

fn triples(rows: Vec<Row>) -> Result<Vec<Triple>> {
    rows.iter().map(triple_from_row).collect()
}

fn pairs(rows: Vec<Row>) -> Result<Vec<(String, i64)>> {
    rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect()
}

/// A `to_tsquery` text matching `term`, as [`memcc_core::text::term_expr`] does for FTS5: a word
/// as itself (stemmed by the configuration), a CJK run as the phrase of its bigrams, a single
/// CJK character as a prefix. Words hold only letters and digits, so a quote or an operator in
/// user text can never reach the query syntax.
fn term_tsquery(term: &Term) -> String {
    match term {
        Term::Word(w) => format!("'{w}'"),
        Term::Cjk(chars) if chars.len() == 1 => format!("'{}':*", chars[0]),
        Term::Cjk(chars) => {
            let bigrams: Vec<String> =
                chars.windows(2).map(|p| format!("'{}'", p.iter().collect::<String>())).collect();
            format!("({})", bigrams.join(" <-> "))
        }
    }
}

/// A SQL string literal (for the model name in a partial index and the queries it serves).
fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The HNSW index of `model`'s vectors: partial (one model, one dimension) on the cast that makes
/// the dimension fixed, as pgvector's index needs.
fn hnsw_index_sql(model: &str, dim: usize) -> String {
    let name = hex::encode(Sha256::digest(format!("{model}\0{dim}").as_bytes()));
    format!(
        "CREATE INDEX IF NOT EXISTS vectors_hnsw_{} ON vectors USING hnsw ((embedding::vector({dim})) vector_cosine_ops)
         WHERE model = {}",
        &name[..16],
        literal(model)
    )
}

/// The statements every insert runs, prepared once per transaction (a statement given as text is
/// prepared on each call: a second round trip).
struct InsertStatements {
    record: postgres::Statement,
    vector: postgres::Statement,
}

impl InsertStatements {
    fn prepare(tx: &mut Transaction<'_>) -> Result<Self> {
        Ok(InsertStatements {
            record: tx.prepare(INSERT_RECORD)?,
            vector: tx.prepare(
                "INSERT INTO vectors (record_id, model, dim, embedding, agent_id) VALUES ($1, $2, $3, $4, $5)",
            )?,
        })
    }
}

const INSERT_RECORD: &str = "INSERT INTO records (agent_id, wing, room, kind, text, content_hash, source_summary_ids,
        source_session_ids, source_message_ids, created_at, event_time, valid_from, weight, pinned, subject, predicate,
        embed_status, fts)
     VALUES ($1, $2, $3, $4, $5, $6, $7::text::jsonb, $8::text::jsonb, $9::text::jsonb, $10, $11, $11, $12, $13,
             $14, $15, $16, to_tsvector($17::text::regconfig, $18))
     ON CONFLICT (agent_id, content_hash) DO NOTHING RETURNING id";

fn insert_all(tx: &mut Transaction<'_>, items: &[Insert<'_>]) -> Result<Vec<Inserted>> {
    let statements = InsertStatements::prepare(tx)?;
    items.iter().map(|item| insert_in(tx, &statements, item)).collect()
}

fn insert_in(tx: &mut Transaction<'_>, statements: &InsertStatements, item: &Insert<'_>) -> Result<Inserted> {
    let r = item.record;
    if r.text.trim().is_empty() {
        return Err(MemoryError::Input("a memory record needs text".into()));
    }
    let hash = content_hash(&r.text);
    let now = now_ms();
    let status = if item.vector.is_some() { "embedded" } else { "pending" };
    let fresh = tx.query_opt(
        &statements.record,
        &[
            &r.agent_id,
            &r.wing,
            &r.room,
            &r.kind.as_str(),
            &r.text,
            &hash,
            &json(&r.source_summary_ids),
            &json(&r.source_session_ids),
            &json(&r.source_message_ids),
            &now,
            &r.event_time,
            &r.weight,
            &r.pinned,
            &r.subject,
            &r.predicate,
            &status,
            &TS_CONFIG,
            &fts_document(&r.text),
        ],
    )?;
    let Some(row) = fresh else {
        let id: i64 = tx
            .query_one("SELECT id FROM records WHERE agent_id = $1 AND content_hash = $2", &[&r.agent_id, &hash])?
            .try_get(0)?;
        return Ok(Inserted { id, duplicate: true });
    };
    let id: i64 = row.try_get(0)?;
    if let Some((model, v)) = item.vector {
        tx.execute(&statements.vector, &[&id, &model, &(v.len() as i32), &Vector::from(v.to_vec()), &r.agent_id])?;
    }
    if let (Some(subject), Some(predicate)) = (&r.subject, &r.predicate) {
        tx.execute(
            "UPDATE records SET superseded_by = $1, valid_until = COALESCE($2::bigint, $3::bigint)
             WHERE agent_id = $4 AND lower(subject) = lower($5) AND predicate = $6 AND id <> $1
               AND superseded_by IS NULL AND COALESCE(event_time, 0) <= COALESCE($2::bigint, $3::bigint)",
            &[&id, &r.event_time, &now, &r.agent_id, subject, predicate],
        )?;
    }
    for t in item.triples {
        let valid_from = t.valid_from.or(r.event_time);
        let tid: i64 = tx
            .query_one(
                "INSERT INTO triples (agent_id, subject, predicate, object, valid_from, source_record, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
                &[&r.agent_id, &t.subject, &t.predicate, &t.object, &valid_from, &id, &now],
            )?
            .try_get(0)?;
        tx.execute(
            "UPDATE triples SET superseded_by = $1, valid_until = COALESCE($2::bigint, $3::bigint)
             WHERE agent_id = $4 AND lower(subject) = lower($5) AND predicate = $6 AND lower(object) <> lower($7)
               AND id <> $1 AND superseded_by IS NULL",
            &[&tid, &valid_from, &now, &r.agent_id, &t.subject, &t.predicate, &t.object],
        )?;
    }
    Ok(Inserted { id, duplicate: false })
}

/// Each tsquery's matching current records of `agents`, counted up to `limit`, in one round trip.
fn document_frequencies(c: &mut Client, parts: &[String], agents: &[String], limit: i64) -> Result<Vec<usize>> {
    let rows = c.query(
        "SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM records
                   WHERE fts @@ to_tsquery($1::text::regconfig, q) AND agent_id = ANY($2)
                     AND forgotten_at IS NULL LIMIT $3) x)
         FROM unnest($4::text[]) WITH ORDINALITY AS t(q, i) ORDER BY i",
        &[&TS_CONFIG, &agents, &limit, &parts],
    )?;
    rows.iter().map(|r| Ok(r.try_get::<_, i64>(0)?.max(0) as usize)).collect()
}

fn count(client: &mut impl GenericClient, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<i64> {
    Ok(client.query_one(sql, params)?.try_get(0)?)
}

impl MemoryStore for PgStore {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    fn integrity_check(&self) -> Result<String> {
        self.pool.run(|c| {
            let version = count(c, "SELECT COALESCE(MAX(version), 0) FROM memcc_schema", &[])?;
            let dangling = count(
                c,
                "SELECT COUNT(*) FROM records r WHERE r.superseded_by IS NOT NULL
                   AND NOT EXISTS (SELECT 1 FROM records s WHERE s.id = r.superseded_by)",
                &[],
            )?;
            Ok(if version != PG_SCHEMA_VERSION {
                format!("schema v{version}, expected v{PG_SCHEMA_VERSION}")
            } else if dangling > 0 {
                format!("{dangling} records superseded by a missing record")
            } else {
                "ok".into()
            })
        })
    }

    fn insert_many(&self, items: &[Insert<'_>]) -> Result<Vec<Inserted>> {
        self.pool.write(|tx| insert_all(tx, items))
    }

    fn insert_summary(&self, agent: &str, summary_id: &str, items: &[Insert<'_>]) -> Result<Vec<Inserted>> {
        self.pool.write(|tx| {
            tx.execute(
                "INSERT INTO ingested_summaries (agent_id, summary_id, ingested_at) VALUES ($1, $2, $3)
                 ON CONFLICT DO NOTHING",
                &[&agent, &summary_id, &now_ms()],
            )?;
            insert_all(tx, items)
        })
    }

    fn summary_ingested(&self, agent: &str, summary_id: &str) -> Result<bool> {
        self.pool.run(|c| {
            Ok(c.query_opt(
                "SELECT 1 FROM ingested_summaries WHERE agent_id = $1 AND summary_id = $2",
                &[&agent, &summary_id],
            )?
            .is_some())
        })
    }

    fn set_vector(&self, id: i64, model: &str, vector: &[f32]) -> Result<()> {
        let v = Vector::from(vector.to_vec());
        self.pool.write(|tx| {
            tx.execute(
                "INSERT INTO vectors (record_id, model, dim, embedding, agent_id)
                 SELECT $1, $2, $3, $4, agent_id FROM records WHERE id = $1
                 ON CONFLICT (record_id, model) DO UPDATE SET dim = EXCLUDED.dim, embedding = EXCLUDED.embedding",
                &[&id, &model, &(vector.len() as i32), &v],
            )?;
            tx.execute("UPDATE records SET embed_status = 'embedded', embed_error = NULL WHERE id = $1", &[&id])?;
            Ok(())
        })
    }

    fn mark_embed_error(&self, ids: &[i64], error: &str) -> Result<()> {
        self.pool.run(|c| {
            c.execute("UPDATE records SET embed_error = $2 WHERE id = ANY($1)", &[&ids, &error])?;
            Ok(())
        })
    }

    fn pending(&self, limit: usize) -> Result<Vec<(i64, String)>> {
        let limit = limit.min(i64::MAX as usize) as i64;
        self.pool.run(|c| {
            let rows = c.query(
                "SELECT id, text FROM records WHERE embed_status = 'pending' AND forgotten_at IS NULL
                 ORDER BY id LIMIT $1",
                &[&limit],
            )?;
            rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect()
        })
    }

    fn pending_count(&self) -> Result<usize> {
        self.pool.run(|c| {
            let n =
                count(c, "SELECT COUNT(*) FROM records WHERE embed_status = 'pending' AND forgotten_at IS NULL", &[])?;
            Ok(n as usize)
        })
    }

    fn use_model(&self, model: &str, dim: usize) -> Result<usize> {
        let index = hnsw_index_sql(model, dim);
        self.pool.write(|tx| {
            // Processes sharing the database change statuses one at a time.
            tx.execute("SELECT pg_advisory_xact_lock(hashtext('memcc.use_model'))", &[])?;
            let last: Option<String> =
                tx.query_opt("SELECT value FROM meta WHERE key = 'model'", &[])?.map(|r| r.try_get(0)).transpose()?;
            let others = tx.query_opt("SELECT 1 FROM vectors WHERE model <> $1 LIMIT 1", &[&model])?.is_some();
            if last.as_deref() != Some(model) && (last.is_some() || others) {
                tx.execute(
                    "UPDATE records SET embed_status = CASE WHEN EXISTS
                       (SELECT 1 FROM vectors v WHERE v.record_id = records.id AND v.model = $1)
                       THEN 'embedded' ELSE 'pending' END",
                    &[&model],
                )?;
            }
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('model', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                &[&model],
            )?;
            tx.batch_execute(&index)?;
            let n = count(
                tx,
                "SELECT COUNT(*) FROM records WHERE embed_status = 'pending' AND forgotten_at IS NULL",
                &[],
            )?;
            Ok(n as usize)
        })
    }

    fn vector_models(&self) -> Result<Vec<(String, i64)>> {
        self.pool.run(|c| pairs(c.query("SELECT model, COUNT(*) FROM vectors GROUP BY model ORDER BY model", &[])?))
    }

    fn for_each_vector_after(&self, model: &str, after: i64, visit: VectorVisitor<'_>) -> Result<()> {
        let mut last = after;
        loop {
            let rows = self.pool.run(|c| {
                Ok(c.query(
                    "SELECT v.record_id, r.agent_id, v.embedding FROM vectors v JOIN records r ON r.id = v.record_id
                     WHERE v.model = $1 AND r.forgotten_at IS NULL AND v.record_id > $2 ORDER BY v.record_id LIMIT $3",
                    &[&model, &last, &PAGE],
                )?)
            })?;
            for row in &rows {
                let id: i64 = row.try_get(0)?;
                let agent: String = row.try_get(1)?;
                let v: Vector = row.try_get(2)?;
                visit(id, &agent, v.to_vec());
                last = id;
            }
            if (rows.len() as i64) < PAGE {
                return Ok(());
            }
        }
    }

    fn last_vector_id(&self) -> Result<i64> {
        self.pool.run(|c| count(c, "SELECT COALESCE(MAX(record_id), 0) FROM vectors", &[]))
    }

    fn vector_count(&self, model: &str) -> Result<usize> {
        self.pool.run(|c| {
            let n = count(
                c,
                "SELECT COUNT(*) FROM vectors v JOIN records r ON r.id = v.record_id
                 WHERE v.model = $1 AND r.forgotten_at IS NULL",
                &[&model],
            )?;
            Ok(usize::try_from(n).unwrap_or(0))
        })
    }

    fn vectors(&self, ids: &[i64], model: &str) -> Result<Vec<(i64, Vec<f32>)>> {
        self.pool.run(|c| {
            let rows = c.query(
                "SELECT record_id, embedding FROM vectors WHERE model = $2 AND record_id = ANY($1)",
                &[&ids, &model],
            )?;
            rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get::<_, Vector>(1)?.to_vec()))).collect()
        })
    }

    fn native_index(&self, model: &str, dim: usize) -> Result<Option<Arc<dyn VectorStore>>> {
        Ok(Some(Arc::new(PgVectors { pool: self.pool.clone(), model: model.to_string(), dim })))
    }

    fn get(&self, id: i64) -> Result<Option<MemoryRecord>> {
        self.pool.run(|c| {
            c.query_opt(&format!("{RECORD_SELECT} WHERE id = $1"), &[&id])?.as_ref().map(record_from_row).transpose()
        })
    }

    fn get_many(&self, ids: &[i64]) -> Result<Vec<MemoryRecord>> {
        let found = self.pool.run(|c| records(c.query(&format!("{RECORD_SELECT} WHERE id = ANY($1)"), &[&ids])?))?;
        let mut by_id: HashMap<i64, MemoryRecord> = found.into_iter().map(|r| (r.id, r)).collect();
        Ok(ids.iter().filter_map(|id| by_id.remove(id)).collect())
    }

    fn fts(&self, q: &FullText<'_>) -> Result<Vec<(i64, f64)>> {
        self.full_text(q, None)
    }

    fn fts_also_during(&self, q: &FullText<'_>, period: Period) -> Result<Vec<(i64, f64)>> {
        self.full_text(&FullText { during: None, ..*q }, Some(period))
    }

    fn document_frequencies(&self, terms: &[Term], agents: &[String], cap: usize) -> Result<Vec<usize>> {
        let parts: Vec<String> = terms.iter().map(term_tsquery).collect();
        let limit = cap as i64 + 1;
        self.pool.run(|c| document_frequencies(c, &parts, agents, limit))
    }

    fn record_count(&self) -> Result<i64> {
        self.pool.run(|c| count(c, MAX_RECORD_ID, &[]))
    }

    fn essentials(&self, agents: &[String], min_weight: f64, limit: usize) -> Result<Vec<MemoryRecord>> {
        let limit = limit as i64;
        self.pool.run(|c| {
            records(c.query(
                &format!(
                    "{RECORD_SELECT} WHERE agent_id = ANY($1) AND (pinned OR weight >= $2)
                       AND forgotten_at IS NULL AND superseded_by IS NULL AND valid_until IS NULL
                     ORDER BY pinned DESC, weight DESC, COALESCE(event_time, created_at) DESC LIMIT $3"
                ),
                &[&agents, &min_weight, &limit],
            )?)
        })
    }

    fn recent_in_wing(
        &self,
        agents: &[String],
        wing: &str,
        kinds: &[RecordKind],
        limit: usize,
    ) -> Result<Vec<MemoryRecord>> {
        let kinds: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
        let limit = limit as i64;
        self.pool.run(|c| {
            records(c.query(
                &format!(
                    "{RECORD_SELECT} WHERE agent_id = ANY($1) AND wing = $2 AND kind = ANY($3)
                       AND forgotten_at IS NULL AND superseded_by IS NULL
                     ORDER BY event_time DESC NULLS LAST LIMIT $4"
                ),
                &[&agents, &wing, &kinds, &limit],
            )?)
        })
    }

    fn triples_about(&self, agents: &[String], entities: &[String], limit: usize) -> Result<Vec<Triple>> {
        if entities.is_empty() {
            return Ok(Vec::new());
        }
        let lower: Vec<String> = entities.iter().map(|e| e.to_lowercase()).collect();
        let limit = limit as i64;
        self.pool.run(|c| {
            triples(c.query(
                &format!(
                    "{TRIPLE_SELECT} WHERE agent_id = ANY($1) AND superseded_by IS NULL
                       AND (lower(subject) = ANY($2) OR lower(object) = ANY($2))
                       AND NOT EXISTS (SELECT 1 FROM records r WHERE r.id = triples.source_record
                                       AND r.forgotten_at IS NOT NULL)
                     ORDER BY COALESCE(valid_from, created_at) DESC LIMIT $3"
                ),
                &[&agents, &lower, &limit],
            )?)
        })
    }

    fn triple_history(&self, agent: &str, subject: &str) -> Result<Vec<Triple>> {
        self.pool.run(|c| {
            triples(c.query(
                &format!("{TRIPLE_SELECT} WHERE agent_id = $1 AND lower(subject) = lower($2) ORDER BY id"),
                &[&agent, &subject],
            )?)
        })
    }

    fn tombstones(&self, agent: &str) -> Result<std::collections::HashSet<String>> {
        self.pool.run(|c| {
            let rows = c.query("SELECT said FROM tombstones WHERE agent_id = $1", &[&agent])?;
            rows.iter().map(|r| Ok(r.try_get(0)?)).collect()
        })
    }

    fn superseded_statements(&self, records: &[i64]) -> Result<Vec<(Triple, Triple)>> {
        self.pool.run(|c| {
            let old = triples(c.query(
                &format!("{TRIPLE_SELECT} WHERE source_record = ANY($1) AND superseded_by IS NOT NULL ORDER BY id"),
                &[&records],
            )?)?;
            let ids: Vec<i64> = old.iter().filter_map(|t| t.superseded_by).collect();
            let newer = triples(c.query(&format!("{TRIPLE_SELECT} WHERE id = ANY($1)"), &[&ids])?)?;
            Ok(old
                .into_iter()
                .filter_map(|t| {
                    let n = newer.iter().find(|n| Some(n.id) == t.superseded_by)?.clone();
                    Some((t, n))
                })
                .collect())
        })
    }

    fn for_each_record(&self, agent: Option<&str>, visit: &mut dyn FnMut(MemoryRecord) -> Result<()>) -> Result<()> {
        let mut last = i64::MIN;
        loop {
            let page = self.pool.run(|c| {
                records(c.query(
                    &format!(
                        "{RECORD_SELECT} WHERE ($1::text IS NULL OR agent_id = $1) AND id > $2 ORDER BY id LIMIT $3"
                    ),
                    &[&agent, &last, &PAGE],
                )?)
            })?;
            let n = page.len() as i64;
            for r in page {
                last = r.id;
                visit(r)?;
            }
            if n < PAGE {
                return Ok(());
            }
        }
    }

    fn stats(&self) -> Result<MemoryStats> {
        self.pool.run(|c| {
            let agents =
                pairs(c.query("SELECT agent_id, COUNT(*) FROM records GROUP BY agent_id ORDER BY agent_id", &[])?)?;
            Ok(MemoryStats {
                backend: "postgres".into(),
                records: count(c, "SELECT COUNT(*) FROM records", &[])?,
                current: count(
                    c,
                    "SELECT COUNT(*) FROM records
                     WHERE forgotten_at IS NULL AND superseded_by IS NULL AND valid_until IS NULL",
                    &[],
                )?,
                by_kind: pairs(c.query("SELECT kind, COUNT(*) FROM records GROUP BY kind ORDER BY kind", &[])?)?,
                by_wing: pairs(
                    c.query("SELECT wing, COUNT(*) FROM records GROUP BY wing ORDER BY COUNT(*) DESC", &[])?,
                )?,
                pending_embeddings: count(
                    c,
                    "SELECT COUNT(*) FROM records WHERE embed_status = 'pending' AND forgotten_at IS NULL",
                    &[],
                )?,
                vectors: count(c, "SELECT COUNT(*) FROM vectors", &[])?,
                vector_models: pairs(c.query("SELECT model, COUNT(*) FROM vectors GROUP BY model", &[])?)?,
                triples: count(c, "SELECT COUNT(*) FROM triples", &[])?,
                agents: agents.into_iter().map(|(a, _)| a).collect(),
            })
        })
    }

    fn forget(&self, agent: &str, id: i64, how: Forget) -> Result<Option<Forgotten>> {
        self.pool.write(|tx| crate::forget::forget(&mut PgTx(tx), agent, id, how))
    }

    fn purge_session(&self, agent: &str, session_id: &str) -> Result<Vec<i64>> {
        self.pool.write(|tx| crate::forget::purge_session(&mut PgTx(tx), agent, session_id))
    }

    fn agents(&self) -> Result<Vec<(String, i64)>> {
        self.pool.run(|c| {
            pairs(c.query(
                "SELECT agent_id, COUNT(*) FILTER (WHERE forgotten_at IS NULL) FROM records
                 GROUP BY agent_id ORDER BY agent_id",
                &[],
            )?)
        })
    }

    fn facets(&self, agent: &str) -> Result<Facets> {
        self.pool.run(|c| {
            let mut by = |column: &str| -> Result<Vec<(String, i64)>> {
                pairs(c.query(
                    &format!(
                        "SELECT {column}, COUNT(*) FROM records WHERE agent_id = $1 AND forgotten_at IS NULL
                         GROUP BY {column} ORDER BY COUNT(*) DESC, {column}"
                    ),
                    &[&agent],
                )?)
            };
            Ok(Facets { wings: by("wing")?, rooms: by("room")?, kinds: by("kind")? })
        })
    }

    fn list_records(&self, filter: &RecordFilter, offset: usize, limit: usize) -> Result<Page<MemoryRecord>> {
        let f = filter;
        let clause = "WHERE ($1::text IS NULL OR agent_id = $1) AND ($2::text IS NULL OR wing = $2)
               AND ($3::text IS NULL OR room = $3) AND ($4::text IS NULL OR kind = $4) AND ($5 OR forgotten_at IS NULL)";
        let (limit, offset_i) = (sql_int(limit), sql_int(offset));
        self.pool.run(|c| {
            let total = count(
                c,
                &format!("SELECT COUNT(*) FROM records {clause}"),
                &[&f.agent_id, &f.wing, &f.room, &f.kind, &f.include_forgotten],
            )?;
            let items = records(c.query(
                &format!("{RECORD_SELECT} {clause} ORDER BY id DESC LIMIT $6 OFFSET $7"),
                &[&f.agent_id, &f.wing, &f.room, &f.kind, &f.include_forgotten, &limit, &offset_i],
            )?)?;
            Ok(Page { items, total, offset })
        })
    }

    fn supersession(&self, agent: &str, id: i64) -> Result<Vec<MemoryRecord>> {
        self.pool.run(|c| {
            records(c.query(
                &format!(
                    "{RECORD_SELECT} WHERE agent_id = $1 AND (id = $2 OR (subject IS NOT NULL AND predicate IS NOT NULL
                       AND (lower(subject), predicate) = (SELECT lower(subject), predicate FROM records WHERE id = $2)))
                     ORDER BY COALESCE(event_time, created_at), id"
                ),
                &[&agent, &id],
            )?)
        })
    }

    fn list_triples(&self, agent: &str, offset: usize, limit: usize) -> Result<Page<Triple>> {
        let clause = "WHERE agent_id = $1 AND NOT EXISTS
               (SELECT 1 FROM records r WHERE r.id = triples.source_record AND r.forgotten_at IS NOT NULL)";
        let (limit, offset_i) = (sql_int(limit), sql_int(offset));
        self.pool.run(|c| {
            let total = count(c, &format!("SELECT COUNT(*) FROM triples {clause}"), &[&agent])?;
            let items = triples(c.query(
                &format!("{TRIPLE_SELECT} {clause} ORDER BY id DESC LIMIT $2 OFFSET $3"),
                &[&agent, &limit, &offset_i],
            )?)?;
            Ok(Page { items, total, offset })
        })
    }
}

/// Forgetting's steps as SQL on one PostgreSQL transaction.
struct PgTx<'a, 'b>(&'a mut Transaction<'b>);

impl ForgetTx for PgTx<'_, '_> {
    fn target(&mut self, agent: &str, id: i64) -> Result<Option<MemoryRecord>> {
        self.0
            .query_opt(&format!("{RECORD_SELECT} WHERE id = $1 AND agent_id = $2"), &[&id, &agent])?
            .as_ref()
            .map(record_from_row)
            .transpose()
    }

    fn sharing(&mut self, agent: &str, except: i64, messages: &[i64]) -> Result<Vec<MemoryRecord>> {
        records(self.0.query(
            &format!(
                "{RECORD_SELECT} WHERE agent_id = $1 AND id <> $2 AND forgotten_at IS NULL
                   AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(records.source_message_ids) m
                               WHERE m::bigint = ANY($3))"
            ),
            &[&agent, &except, &messages],
        )?)
    }

    fn condensing(&mut self, agent: &str, summary_id: &str) -> Result<Vec<MemoryRecord>> {
        // Past the first element: the summaries a condensed summary condenses.
        records(self.0.query(
            &format!(
                "{RECORD_SELECT} WHERE agent_id = $1 AND kind = 'summary' AND forgotten_at IS NULL
                   AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(records.source_summary_ids)
                               WITH ORDINALITY s(value, n) WHERE s.n > 1 AND s.value = $2)"
            ),
            &[&agent, &summary_id],
        )?)
    }

    fn hash_taken(&mut self, agent: &str, hash: &str, except: i64) -> Result<bool> {
        Ok(self
            .0
            .query_opt(
                "SELECT 1 FROM records WHERE agent_id = $1 AND content_hash = $2 AND id <> $3",
                &[&agent, &hash, &except],
            )?
            .is_some())
    }

    fn rewrite(&mut self, id: i64, text: &str, ids: &[i64], dropped: &str) -> Result<()> {
        let tx = &mut *self.0;
        tx.execute(
            "UPDATE records SET text = $2, content_hash = $3, source_message_ids = $4::text::jsonb,
                    embed_status = 'pending', fts = to_tsvector($5::text::regconfig, $6)
             WHERE id = $1",
            &[&id, &text, &content_hash(text), &json(&ids), &TS_CONFIG, &fts_document(text)],
        )?;
        tx.execute("DELETE FROM vectors WHERE record_id = $1", &[&id])?;
        delete_triples(tx, "source_record = $1 AND strpos(lower($2::text), lower(object)) > 0", &[&id, &dropped])
    }

    fn remove(&mut self, id: i64, how: Forget) -> Result<()> {
        let tx = &mut *self.0;
        match how {
            Forget::Soft => {
                tx.execute(
                    "UPDATE records SET forgotten_at = COALESCE(forgotten_at, $2) WHERE id = $1",
                    &[&id, &now_ms()],
                )?;
            }
            Forget::Purge => {
                delete_triples(tx, "source_record = $1", &[&id])?;
                tx.execute("DELETE FROM vectors WHERE record_id = $1", &[&id])?;
                tx.execute(
                    "UPDATE records SET superseded_by = NULL, valid_until = NULL WHERE superseded_by = $1",
                    &[&id],
                )?;
                tx.execute("DELETE FROM records WHERE id = $1", &[&id])?;
            }
        }
        Ok(())
    }

    fn session_records(&mut self, agent: &str, session_id: &str) -> Result<Vec<i64>> {
        let rows = self.0.query(
            "SELECT id FROM records WHERE agent_id = $1 AND source_session_ids ? $2 ORDER BY id",
            &[&agent, &session_id],
        )?;
        rows.iter().map(|r| Ok(r.try_get(0)?)).collect()
    }

    fn tombstone(&mut self, agent: &str, said: &[String]) -> Result<()> {
        let now = memcc_core::time::now_ms();
        for s in said {
            self.0.execute(
                "INSERT INTO tombstones (agent_id, said, forgotten_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                &[&agent, s, &now],
            )?;
        }
        Ok(())
    }
}

/// Delete the triples `condition` selects; a triple they superseded is current again.
fn delete_triples(tx: &mut Transaction<'_>, condition: &str, params: &[&(dyn ToSql + Sync)]) -> Result<()> {
    tx.execute(
        &format!(
            "UPDATE triples SET superseded_by = NULL, valid_until = NULL
              WHERE superseded_by IN (SELECT id FROM triples WHERE {condition})"
        ),
        params,
    )?;
    tx.execute(&format!("DELETE FROM triples WHERE {condition}"), params)?;
    Ok(())
}

/// pgvector as the runtime's [`VectorStore`]: searched in the database, so what another process
/// stored is found at once. Records and their vectors are written by the store in their
/// transactions; `upsert` and `remove` have nothing left to do.
struct PgVectors {
    pool: Arc<Pool>,
    model: String,
    dim: usize,
}

impl VectorStore for PgVectors {
    fn dim(&self) -> usize {
        self.dim
    }

    fn upsert(&self, _id: i64, _owner: &str, _vector: &[f32]) {}

    fn upsert_many(&self, _rows: &[VectorRow<'_>]) {}

    fn remove(&self, _id: i64) {}

    fn search(&self, query: &[f32], k: usize, owners: &[String]) -> Result<Vec<VectorHit>> {
        if query.len() != self.dim || k == 0 {
            return Ok(Vec::new());
        }
        let d = self.dim;
        // One table, ordered by the partial index's own expression under its predicate: the
        // form the planner serves from the HNSW index whatever its statistics say (a join
        // here let it choose an exact scan of every vector on a freshly filled table). The
        // agent filter runs inside the index scan (iterative, so k rows still come back);
        // soft-forgotten records, rare, are dropped after, from a few extra candidates.
        let sql = format!(
            "SELECT c.record_id, c.score FROM (
               SELECT v.record_id, (1 - (v.embedding::vector({d}) <=> $1::vector({d})))::float4 AS score
               FROM vectors v WHERE v.model = {} AND v.agent_id = ANY($2)
               ORDER BY v.embedding::vector({d}) <=> $1::vector({d}) LIMIT $3) c
             JOIN records r ON r.id = c.record_id WHERE r.forgotten_at IS NULL
             ORDER BY c.score DESC LIMIT $4",
            literal(&self.model)
        );
        let q = Vector::from(query.to_vec());
        let (k, candidates) = (k as i64, k as i64 + 8);
        self.pool.run(|c| {
            let rows = c.query(&sql, &[&q, &owners, &candidates, &k])?;
            rows.iter().map(|r| Ok(VectorHit { id: r.try_get(0)?, score: r.try_get(1)? })).collect::<Result<Vec<_>>>()
        })
    }

    fn len(&self) -> usize {
        let n = self.pool.run(|c| count(c, "SELECT COUNT(*) FROM vectors WHERE model = $1", &[&self.model]));
        n.ok().and_then(|n| usize::try_from(n).ok()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsquery_quotes_every_term_and_keeps_cjk_as_bigram_phrases() {
        let terms = memcc_core::text::terms("marathon \"x' OR 1 北京大学 京 marathon");
        assert_eq!(
            rendered_terms(&terms, term_tsquery).join(" | "),
            "'marathon' | 'x' | 'or' | '1' | ('北京' <-> '京大' <-> '大学') | '京':*"
        );
    }

    #[test]
    fn literals_double_quotes() {
        assert_eq!(literal("it's"), "'it''s'");
    }
}
