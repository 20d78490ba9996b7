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

use pgvector::Vector;
use postgres::types::ToSql;
use postgres::{Client, GenericClient, Row, Transaction};
use sha2::{Digest, Sha256};

mod forget;
mod fts;
mod insert;
mod pool;
mod schema;
mod vectors;

use crate::browse::{Facets, Page, RecordFilter};
use crate::error::{MemoryError, Result};
use crate::forget::{Forget, ForgetTx, Forgotten};
use crate::insert::InsertTx;
use crate::lang::period::Period;
use crate::record::{MemoryRecord, NewRecord, NewTriple, RecordKind, Triple, content_hash};
use crate::sessions::{MessageWords, SessionInfo};
use crate::store::{
    Forgetting, FullText, Insert, Inserted, Inspection, MemoryStats, Posting, Records, Sessions, Statements,
    VectorVisitor, Vectors, json, sql_int,
};
use crate::vector::{VectorHit, VectorRow, VectorStore};
use forget::PgTx;
use fts::{document_frequencies, term_tsquery};
use insert::insert_all;
use memcc_core::text::{Term, fts_document, rendered_terms};
use memcc_core::time::now_ms;
use pool::{CONNECTIONS, Pool, tls_connector, transient};
pub use schema::PG_SCHEMA_VERSION;
use schema::{TS_CONFIG, migrate};
use vectors::{PgVectors, hnsw_index_sql};

/// Rows read per page when visiting a whole table.
const PAGE: i64 = 1000;
/// About how many records there are (an index lookup; an upper bound once records were purged).
const MAX_RECORD_ID: &str = "SELECT COALESCE(MAX(id), 0) FROM records";
/// Document frequencies are counted up to this many records.
const DF_CAP: i64 = 20_000;

pub struct PgStore {
    pool: Arc<Pool>,
}

impl PgStore {
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
            config.connect_timeout(pool::CONNECT_TIMEOUT);
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

const RECORD_SELECT: &str = crate::store::rows::record_select!("::text");

fn record_from_row(r: &Row) -> Result<MemoryRecord> {
    Ok(crate::store::rows::record_from(r)?)
}

fn records(rows: Vec<Row>) -> Result<Vec<MemoryRecord>> {
    rows.iter().map(record_from_row).collect()
}

use crate::store::rows::{CURRENT_RECORD, TRIPLE_NOT_FORGOTTEN, TRIPLE_SELECT};

fn triple_from_row(r: &Row) -> Result<Triple> {
    Ok(crate::store::rows::triple_from(r)?)
}

fn triples(rows: Vec<Row>) -> Result<Vec<Triple>> {
    rows.iter().map(triple_from_row).collect()
}

fn pairs(rows: Vec<Row>) -> Result<Vec<(String, i64)>> {
    rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect()
}

fn count(client: &mut impl GenericClient, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<i64> {
    Ok(client.query_one(sql, params)?.try_get(0)?)
}

impl Records for PgStore {
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
                    "{RECORD_SELECT} WHERE agent_id = ANY($1) AND (pinned OR weight >= $2) AND {CURRENT_RECORD}
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
                    "{RECORD_SELECT} WHERE agent_id = ANY($1) AND wing = $2 AND kind = ANY($3) AND {CURRENT_RECORD}
                     ORDER BY event_time DESC NULLS LAST LIMIT $4"
                ),
                &[&agents, &wing, &kinds, &limit],
            )?)
        })
    }

    fn tombstones(&self, agent: &str, sessions: &[String]) -> Result<std::collections::HashSet<String>> {
        self.pool.run(|c| {
            let rows = c.query(
                "SELECT said FROM tombstones WHERE agent_id = $1 AND (session_id = '' OR session_id = ANY($2))",
                &[&agent, &sessions],
            )?;
            rows.iter().map(|r| Ok(r.try_get(0)?)).collect()
        })
    }

    fn set_pinned(&self, agent: &str, id: i64, pinned: bool, weight: f64, everywhere: bool) -> Result<bool> {
        self.pool.run(|c| {
            let n = c.execute(
                &format!(
                    "UPDATE records SET pinned = $3, weight = $4, project = CASE WHEN $5 THEN NULL ELSE project END
                     WHERE id = $1 AND agent_id = $2 AND {CURRENT_RECORD}"
                ),
                &[&id, &agent, &pinned, &weight, &everywhere],
            )?;
            Ok(n > 0)
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
}

impl Vectors for PgStore {
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
}

impl Statements for PgStore {
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
                       AND {TRIPLE_NOT_FORGOTTEN}
                     ORDER BY COALESCE(valid_from, created_at) DESC LIMIT $3"
                ),
                &[&agents, &lower, &limit],
            )?)
        })
    }

    fn current_statements(&self, agents: &[String], predicate: &str, limit: usize) -> Result<Vec<Triple>> {
        let limit = limit as i64;
        self.pool.run(|c| {
            triples(c.query(
                &format!(
                    "{TRIPLE_SELECT} WHERE agent_id = ANY($1) AND predicate = $2 AND superseded_by IS NULL
                       AND {TRIPLE_NOT_FORGOTTEN}
                     ORDER BY COALESCE(valid_from, created_at) DESC LIMIT $3"
                ),
                &[&agents, &predicate, &limit],
            )?)
        })
    }

    fn triple_history(&self, agent: &str, subject: &str) -> Result<Vec<Triple>> {
        self.pool.run(|c| {
            triples(c.query(
                &format!(
                    "{TRIPLE_SELECT} WHERE agent_id = $1 AND lower(subject) = lower($2)
                       AND {TRIPLE_NOT_FORGOTTEN}
                     ORDER BY id"
                ),
                &[&agent, &subject],
            )?)
        })
    }

    fn superseded_statements(&self, records: &[i64]) -> Result<Vec<(Triple, Triple)>> {
        self.pool.run(|c| {
            let old = triples(c.query(
                &format!(
                    "{TRIPLE_SELECT} WHERE source_record = ANY($1) AND superseded_by IS NOT NULL
                       AND NOT EXISTS (SELECT 1 FROM triples n JOIN records r ON r.id = n.source_record
                                       WHERE n.id = triples.superseded_by AND r.forgotten_at IS NOT NULL)
                     ORDER BY id"
                ),
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

    fn replaced_statements(&self, record: i64) -> Result<Vec<(Triple, Triple)>> {
        self.pool.run(|c| {
            let old = triples(c.query(
                &format!(
                    "{TRIPLE_SELECT} WHERE superseded_by IN (SELECT id FROM triples WHERE source_record = $1) ORDER BY id"
                ),
                &[&record],
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

    fn supersession(&self, agent: &str, id: i64) -> Result<Vec<MemoryRecord>> {
        self.pool.run(|c| {
            records(c.query(
                &format!(
                    "WITH RECURSIVE older(id) AS (SELECT $2::bigint UNION SELECT r.id FROM records r JOIN older o ON r.superseded_by = o.id),
                                    newer(id) AS (SELECT $2::bigint UNION SELECT r.superseded_by FROM records r JOIN newer n ON r.id = n.id
                                                  WHERE r.superseded_by IS NOT NULL)
                     {RECORD_SELECT} WHERE agent_id = $1 AND forgotten_at IS NULL AND (id IN (SELECT id FROM older) OR id IN (SELECT id FROM newer)
                       OR (subject IS NOT NULL AND predicate IS NOT NULL
                           AND (lower(subject), predicate) = (SELECT lower(subject), predicate FROM records WHERE id = $2)))
                     ORDER BY COALESCE(event_time, created_at), id"
                ),
                &[&agent, &id],
            )?)
        })
    }

    fn list_triples(&self, agent: &str, offset: usize, limit: usize) -> Result<Page<Triple>> {
        let clause = format!("WHERE agent_id = $1 AND {TRIPLE_NOT_FORGOTTEN}");
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

impl Sessions for PgStore {
    fn sessions(&self, agents: &[String]) -> Result<Vec<SessionInfo>> {
        self.pool.run(|c| {
            let rows = c.query(
                "SELECT id, agent_id, session_id, length, messages, first_at, last_at, project FROM sessions
                  WHERE agent_id = ANY($1)",
                &[&agents],
            )?;
            rows.iter()
                .map(|r| {
                    Ok(SessionInfo {
                        key: r.try_get(0)?,
                        agent_id: r.try_get(1)?,
                        session_id: r.try_get(2)?,
                        length: u32::try_from(r.try_get::<_, i64>(3)?).unwrap_or(u32::MAX),
                        messages: u32::try_from(r.try_get::<_, i64>(4)?).unwrap_or(u32::MAX),
                        first_at: r.try_get(5)?,
                        last_at: r.try_get(6)?,
                        project: r.try_get(7)?,
                    })
                })
                .collect()
        })
    }

    fn session_postings(&self, agents: &[String], terms: &[String]) -> Result<Vec<Posting>> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let place: HashMap<&str, usize> = terms.iter().enumerate().map(|(i, t)| (t.as_str(), i)).collect();
        self.pool.run(|c| {
            let rows = c.query(
                "SELECT term, session, tf FROM session_terms WHERE agent_id = ANY($1) AND term = ANY($2)",
                &[&agents, &terms],
            )?;
            let mut out = Vec::with_capacity(rows.len());
            for r in &rows {
                if let Some(&i) = place.get(r.try_get::<_, &str>(0)?) {
                    out.push((i, r.try_get(1)?, u32::try_from(r.try_get::<_, i64>(2)?).unwrap_or(u32::MAX)));
                }
            }
            Ok(out)
        })
    }

    fn session_terms(&self, sessions: &[i64]) -> Result<Vec<(i64, String, u32)>> {
        self.pool.run(|c| {
            let rows = c.query("SELECT session, term, tf FROM session_terms WHERE session = ANY($1)", &[&sessions])?;
            rows.iter()
                .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, u32::try_from(r.try_get::<_, i64>(2)?).unwrap_or(u32::MAX))))
                .collect()
        })
    }

    fn records_of_sessions(&self, sessions: &[(String, String)]) -> Result<Vec<MemoryRecord>> {
        let (agents, ids): (Vec<&str>, Vec<&str>) = sessions.iter().map(|(a, s)| (a.as_str(), s.as_str())).unzip();
        self.pool.run(|c| {
            records(c.query(
                &format!(
                    "{RECORD_SELECT} JOIN unnest($1::text[], $2::text[]) AS wanted(agent, session)
                       ON records.agent_id = wanted.agent AND records.source_session_ids->>0 = wanted.session
                     WHERE records.forgotten_at IS NULL"
                ),
                &[&agents, &ids],
            )?)
        })
    }

    fn session_index_version(&self) -> Result<Option<u32>> {
        self.pool.run(|c| {
            let v: Option<String> = c
                .query_opt("SELECT value FROM meta WHERE key = $1", &[&crate::store::sessions::VERSION_KEY])?
                .map(|r| r.try_get(0))
                .transpose()?;
            Ok(v.and_then(|v| v.parse().ok()))
        })
    }

    fn reindex_sessions(&self, words: &dyn Fn(&MemoryRecord) -> Vec<MessageWords>, version: u32) -> Result<usize> {
        self.pool.write(|tx| {
            // One rebuild at a time when several processes open an older database together.
            tx.execute("SELECT pg_advisory_xact_lock(hashtext('memcc.sessions'))", &[])?;
            for sql in crate::store::sessions::CLEAR_ALL {
                tx.execute(sql, &[])?;
            }
            let page = tx.prepare(&format!(
                "{RECORD_SELECT} WHERE kind = 'verbatim' AND forgotten_at IS NULL AND id > $1 ORDER BY id LIMIT 500"
            ))?;
            let mut after = 0_i64;
            loop {
                let rows = records(tx.query(&page, &[&after])?)?;
                let Some(last) = rows.last() else { break };
                after = last.id;
                let page_words: Vec<(String, MessageWords)> =
                    rows.iter().flat_map(|r| words(r).into_iter().map(|w| (r.agent_id.clone(), w))).collect();
                insert::add_words(tx, &page_words)?;
            }
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                &[&crate::store::sessions::VERSION_KEY, &version.to_string()],
            )?;
            Ok(count(tx, "SELECT COUNT(*) FROM sessions", &[])? as usize)
        })
    }
}

impl Forgetting for PgStore {
    fn forget(&self, agent: &str, id: i64, how: Forget) -> Result<Option<Forgotten>> {
        self.pool.write(|tx| crate::forget::forget(&mut PgTx(tx), agent, id, how))
    }

    fn purge_session(&self, agent: &str, session_id: &str, summaries: Option<&[String]>) -> Result<Vec<i64>> {
        self.pool.write(|tx| crate::forget::purge_session(&mut PgTx(tx), agent, session_id, summaries))
    }
}

impl Inspection for PgStore {
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

    fn stats(&self, agent: Option<&str>) -> Result<MemoryStats> {
        // `$1` is the agent, or NULL for every agent (vectors carry their record's agent).
        const OF: &str = "($1::text IS NULL OR agent_id = $1)";
        self.pool.run(|c| {
            let agents = pairs(c.query(
                &format!("SELECT agent_id, COUNT(*) FROM records WHERE {OF} GROUP BY agent_id ORDER BY agent_id"),
                &[&agent],
            )?)?;
            let grouped = |c: &mut Client, sql: String| pairs(c.query(&sql, &[&agent])?);
            Ok(MemoryStats {
                backend: "postgres".into(),
                records: count(c, &format!("SELECT COUNT(*) FROM records WHERE {OF}"), &[&agent])?,
                current: count(c, &format!("SELECT COUNT(*) FROM records WHERE {OF} AND {CURRENT_RECORD}"), &[&agent])?,
                by_kind: grouped(
                    c,
                    format!("SELECT kind, COUNT(*) FROM records WHERE {OF} GROUP BY kind ORDER BY kind"),
                )?,
                by_wing: grouped(
                    c,
                    format!("SELECT wing, COUNT(*) FROM records WHERE {OF} GROUP BY wing ORDER BY COUNT(*) DESC"),
                )?,
                pending_embeddings: count(
                    c,
                    &format!(
                        "SELECT COUNT(*) FROM records WHERE {OF} AND embed_status = 'pending' AND forgotten_at IS NULL"
                    ),
                    &[&agent],
                )?,
                vectors: count(c, &format!("SELECT COUNT(*) FROM vectors WHERE {OF}"), &[&agent])?,
                vector_models: grouped(c, format!("SELECT model, COUNT(*) FROM vectors WHERE {OF} GROUP BY model"))?,
                triples: count(c, &format!("SELECT COUNT(*) FROM triples WHERE {OF}"), &[&agent])?,
                agents: agents.into_iter().map(|(a, _)| a).collect(),
            })
        })
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
}
