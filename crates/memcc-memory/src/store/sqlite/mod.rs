//! The embedded backend: `memory.db`, a SQLite file beside the context DB.
//!
//! Vectors are f32 BLOBs (the runtime keeps its own index over them), full text is a contentless
//! FTS5 table (porter-stemmed, CJK as bigrams), and reads go through a small pool of read
//! connections (WAL) so the retrieval layers can run in parallel.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::browse::{Facets, Page, RecordFilter};
use crate::error::Result;
use crate::forget::{Forget, ForgetTx, Forgotten};
use crate::insert::InsertTx;
use crate::lang::period::Period;
use crate::record::{MemoryRecord, NewRecord, NewTriple, RecordKind, Triple, content_hash};
use crate::sessions::{MessageWords, SessionInfo};
pub(crate) use crate::store::rows::TRIPLE_SELECT;
use crate::store::rows::{CURRENT_RECORD, TRIPLE_NOT_FORGOTTEN};
use crate::store::{
    Forgetting, FullText, Insert, Inserted, Inspection, MemoryStats, Posting, Records, Sessions, Statements,
    VectorVisitor, Vectors, json, sql_int,
};
use crate::vector::VectorStore;
use memcc_core::text::{Combine, Term, combine_terms, fts_document, term_expr};
use memcc_core::time::now_ms;

mod forget;
mod fts;
mod insert;
pub(crate) mod schema;

use fts::{Scope, best, first_in_scope, ranked_matches, reads_every_record};
pub(crate) use insert::insert_in;

pub fn vector_to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn blob_to_vector(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

const READERS: usize = 4;

pub struct SqliteStore {
    writer: Mutex<Connection>,
    readers: Vec<Mutex<Connection>>,
}

impl SqliteStore {
    pub fn open(path: &Path) -> Result<Self> {
        let mut writer = memcc_core::sqlite::open_writer(path)?;
        schema::migrate(&mut writer)?;
        schema::refresh_full_text(&mut writer)?;
        let mut readers = Vec::with_capacity(READERS);
        for _ in 0..READERS {
            readers.push(Mutex::new(memcc_core::sqlite::open_reader(path)?));
        }
        Ok(SqliteStore { writer: Mutex::new(writer), readers })
    }

    fn writer(&self) -> MutexGuard<'_, Connection> {
        self.writer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A free read connection, or the first one when all are busy.
    pub(crate) fn reader(&self) -> MutexGuard<'_, Connection> {
        for r in &self.readers {
            if let Ok(guard) = r.try_lock() {
                return guard;
            }
        }
        self.readers[0].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Run `f` in one write transaction, begun IMMEDIATE so that it waits (busy timeout) for
    /// another process's writer instead of failing when it upgrades from read to write.
    fn write<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        let mut conn = self.writer();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let out = f(&tx)?;
        tx.commit()?;
        Ok(out)
    }
}

impl Records for SqliteStore {
    /// Insert records in one transaction (see [`Insert`]).
    fn insert_many(&self, items: &[Insert<'_>]) -> Result<Vec<Inserted>> {
        self.write(|tx| items.iter().map(|item| insert_in(tx, item)).collect())
    }

    /// [`Records::insert_many`], marking summary `summary_id` of `agent` as ingested in the
    /// same transaction.
    fn insert_summary(&self, agent: &str, summary_id: &str, items: &[Insert<'_>]) -> Result<Vec<Inserted>> {
        self.write(|tx| {
            tx.execute(
                "INSERT OR IGNORE INTO ingested_summaries (agent_id, summary_id, ingested_at) VALUES (?1, ?2, ?3)",
                params![agent, summary_id, now_ms()],
            )?;
            items.iter().map(|item| insert_in(tx, item)).collect()
        })
    }

    /// Whether the bridge already delivered summary `summary_id` of `agent`.
    fn summary_ingested(&self, agent: &str, summary_id: &str) -> Result<bool> {
        let conn = self.reader();
        Ok(conn
            .query_row(
                "SELECT 1 FROM ingested_summaries WHERE agent_id = ?1 AND summary_id = ?2",
                params![agent, summary_id],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    fn get(&self, id: i64) -> Result<Option<MemoryRecord>> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(&format!("{RECORD_SELECT} WHERE id = ?1"))?;
        Ok(stmt.query_row([id], record_from_row).optional()?)
    }

    fn get_many(&self, ids: &[i64]) -> Result<Vec<MemoryRecord>> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(&format!("{RECORD_SELECT} WHERE id = ?1"))?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(r) = stmt.query_row([id], record_from_row).optional()? {
                out.push(r);
            }
        }
        Ok(out)
    }

    /// BM25 full-text search (safe `MATCH` expression) among the current records of `agents`.
    /// Returns (id, bm25) with higher = better. Cost grows with the number of matching
    /// records, which is why queries are built without stop words.
    fn fts(&self, q: &FullText<'_>) -> Result<Vec<(i64, f64)>> {
        // FTS5 weighs terms itself (its bm25): counted frequencies are not needed.
        let FullText { terms, agents, wing, during, limit, frequencies: _ } = *q;
        let Some(match_expr) = combine_terms(terms, Combine::Any) else { return Ok(Vec::new()) };
        let conn = self.reader();
        let ranked = ranked_matches(&conn, &match_expr)?;
        if wing.is_none() && during.is_none() && reads_every_record(&conn, agents)? {
            return Ok(best(ranked, limit));
        }
        // All of them best first: how far down the scope's best are is not known before.
        first_in_scope(&conn, &best(ranked, usize::MAX), &Scope { agents, wing, during }, limit)
    }

    /// One ranking instead of two: every match is scored once, and both bests are taken from
    /// that list.
    fn fts_also_during(&self, q: &FullText<'_>, period: Period) -> Result<Vec<(i64, f64)>> {
        let FullText { terms, agents, wing, during: _, limit, frequencies: _ } = *q;
        let Some(match_expr) = combine_terms(terms, Combine::Any) else { return Ok(Vec::new()) };
        let conn = self.reader();
        let ranked = best(ranked_matches(&conn, &match_expr)?, usize::MAX);
        let mut found = if wing.is_none() && reads_every_record(&conn, agents)? {
            ranked.iter().take(limit).copied().collect()
        } else {
            first_in_scope(&conn, &ranked, &Scope { agents, wing, during: None }, limit)?
        };
        found.extend(first_in_scope(&conn, &ranked, &Scope { agents, wing, during: Some(period) }, limit)?);
        Ok(found)
    }

    /// How many records match each term's safe FTS expression (`term_expr`), up to `cap + 1`.
    /// FTS tokenises (and stems) the term itself, so this agrees with what a query will match.
    /// Counting every store's posting list is cheap; the agents' current records are counted (a
    /// join per match) only for a term common in the whole store, so a count within the cap is
    /// over every agent (an upper bound) — and not at all when every record is theirs and none
    /// is forgotten (one agent's store, the usual case): the two counts are then the same.
    fn document_frequencies(&self, terms: &[Term], agents: &[String], cap: usize) -> Result<Vec<usize>> {
        let conn = self.reader();
        let all_theirs = reads_every_record(&conn, agents)?;
        let limit = cap as i64 + 1;
        let mut all = conn
            .prepare_cached("SELECT COUNT(*) FROM (SELECT 1 FROM records_fts WHERE records_fts MATCH ?1 LIMIT ?2)")?;
        let mut scoped = conn.prepare_cached(
            "SELECT COUNT(*) FROM (SELECT 1 FROM records_fts JOIN records r ON r.id = records_fts.rowid
             WHERE records_fts MATCH ?1 AND r.agent_id IN (SELECT value FROM json_each(?2)) AND r.forgotten_at IS NULL
             LIMIT ?3)",
        )?;
        let agents_json = serde_json::to_string(agents).unwrap_or_else(|_| "[]".into());
        let mut out = Vec::with_capacity(terms.len());
        for term in terms {
            let term_expr = term_expr(term);
            // Every agent's records first: the index alone answers it, and a term rare there is
            // rare in any scope.
            let n: i64 = all.query_row(params![term_expr, limit], |r| r.get(0))?;
            let n = if n as usize <= cap || all_theirs {
                n
            } else {
                scoped.query_row(params![term_expr, agents_json, limit], |r| r.get(0))?
            };
            out.push(n.max(0) as usize);
        }
        Ok(out)
    }

    /// About how many records exist: the highest id (an index lookup, where `COUNT(*)` would
    /// scan the table on every query), an upper bound once records were purged.
    fn record_count(&self) -> Result<i64> {
        let conn = self.reader();
        Ok(conn.query_row("SELECT COALESCE(MAX(id), 0) FROM records", [], |r| r.get(0))?)
    }

    /// Pinned or high-weight current records of `agents`, heaviest and newest first.
    fn essentials(&self, agents: &[String], min_weight: f64, limit: usize) -> Result<Vec<MemoryRecord>> {
        let conn = self.reader();
        // Per agent, two range scans of `records_weight` (pinned; unpinned and heavy): an `IN`
        // over agents or an `OR` would read every record of the agent.
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT * FROM (
               {RECORD_SELECT} WHERE agent_id = ?1 AND pinned = 1
               UNION ALL
               {RECORD_SELECT} WHERE agent_id = ?1 AND pinned = 0 AND weight >= ?2)
             WHERE {CURRENT_RECORD}
             ORDER BY pinned DESC, weight DESC, COALESCE(event_time, created_at) DESC LIMIT ?3"
        ))?;
        let mut out = Vec::new();
        for agent in agents {
            let rows = stmt.query_map(params![agent, min_weight, limit as i64], record_from_row)?;
            out.extend(rows.collect::<std::result::Result<Vec<_>, _>>()?);
        }
        out.sort_by(|a, b| {
            (b.pinned, b.weight)
                .partial_cmp(&(a.pinned, a.weight))
                .unwrap_or(std::cmp::Ordering::Equal)
                .then_with(|| b.event_time.unwrap_or(b.created_at).cmp(&a.event_time.unwrap_or(a.created_at)))
        });
        out.truncate(limit);
        Ok(out)
    }

    /// The newest current records of one wing.
    fn recent_in_wing(
        &self,
        agents: &[String],
        wing: &str,
        kinds: &[RecordKind],
        limit: usize,
    ) -> Result<Vec<MemoryRecord>> {
        let conn = self.reader();
        let agents_json = serde_json::to_string(agents).unwrap_or_else(|_| "[]".into());
        let kinds_json =
            serde_json::to_string(&kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>()).unwrap_or_default();
        let mut stmt = conn.prepare_cached(&format!(
            "{RECORD_SELECT} WHERE agent_id IN (SELECT value FROM json_each(?1)) AND wing = ?2
               AND kind IN (SELECT value FROM json_each(?3)) AND {CURRENT_RECORD}
             ORDER BY event_time DESC LIMIT ?4"
        ))?;
        let rows = stmt.query_map(params![agents_json, wing, kinds_json, limit as i64], record_from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn tombstones(&self, agent: &str, sessions: &[String]) -> Result<std::collections::HashSet<String>> {
        let conn = self.reader();
        let sessions = serde_json::to_string(sessions).unwrap_or_else(|_| "[]".into());
        let mut stmt = conn.prepare_cached(
            "SELECT said FROM tombstones
              WHERE agent_id = ?1 AND (session_id = '' OR session_id IN (SELECT value FROM json_each(?2)))",
        )?;
        let rows = stmt.query_map(params![agent, sessions], |r| r.get(0))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn set_pinned(&self, agent: &str, id: i64, pinned: bool, weight: f64, everywhere: bool) -> Result<bool> {
        let conn = self.writer();
        let n = conn.execute(
            &format!(
                "UPDATE records SET pinned = ?3, weight = ?4, project = CASE WHEN ?5 THEN NULL ELSE project END
                 WHERE id = ?1 AND agent_id = ?2 AND {CURRENT_RECORD}"
            ),
            params![id, agent, pinned, weight, everywhere],
        )?;
        Ok(n > 0)
    }

    /// Visit every record of `agent` (all agents when `None`), in id order.
    fn for_each_record(&self, agent: Option<&str>, visit: &mut dyn FnMut(MemoryRecord) -> Result<()>) -> Result<()> {
        let conn = self.reader();
        let mut stmt = conn.prepare(&format!("{RECORD_SELECT} WHERE ?1 IS NULL OR agent_id = ?1 ORDER BY id"))?;
        let mut rows = stmt.query([agent])?;
        while let Some(row) = rows.next()? {
            visit(record_from_row(row)?)?;
        }
        Ok(())
    }
}

impl Vectors for SqliteStore {
    /// Attach a vector to a pending record (queue processing).
    fn set_vector(&self, id: i64, model: &str, vector: &[f32]) -> Result<()> {
        self.write(|tx| {
            tx.execute(
                "INSERT OR REPLACE INTO vectors (record_id, model, dim, data) VALUES (?1, ?2, ?3, ?4)",
                params![id, model, vector.len() as i64, vector_to_blob(vector)],
            )?;
            tx.execute("UPDATE records SET embed_status = 'embedded', embed_error = NULL WHERE id = ?1", [id])?;
            Ok(())
        })
    }

    fn mark_embed_error(&self, ids: &[i64], error: &str) -> Result<()> {
        let conn = self.writer();
        let mut stmt = conn.prepare_cached("UPDATE records SET embed_error = ?2 WHERE id = ?1")?;
        for id in ids {
            stmt.execute(params![id, error])?;
        }
        Ok(())
    }

    /// Records waiting for an embedding: (id, text).
    fn pending(&self, limit: usize) -> Result<Vec<(i64, String)>> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(
            "SELECT id, text FROM records WHERE embed_status = 'pending' AND forgotten_at IS NULL ORDER BY id LIMIT ?1",
        )?;
        let rows = stmt.query_map([limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn pending_count(&self) -> Result<usize> {
        let conn = self.reader();
        let n: i64 = conn.query_row(
            "SELECT COUNT(*) FROM records WHERE embed_status = 'pending' AND forgotten_at IS NULL",
            [],
            |r| r.get(0),
        )?;
        Ok(n as usize)
    }

    /// Make embedding statuses follow `model`: a record is embedded when it has a vector of
    /// `model`, pending otherwise. Vectors of other models are kept (switching back finds them).
    /// Only does work when the model changed since the last open; returns how many records wait.
    fn use_model(&self, model: &str, _dim: usize) -> Result<usize> {
        const PENDING: &str = "SELECT COUNT(*) FROM records WHERE embed_status = 'pending' AND forgotten_at IS NULL";
        // The common case, the model of last time, is a read: nothing to change, and a store
        // opened for reading only is served.
        {
            let conn = self.reader();
            let last: Option<String> =
                conn.query_row("SELECT value FROM meta WHERE key = 'model'", [], |r| r.get(0)).optional()?;
            if last.as_deref() == Some(model) {
                return Ok(conn.query_row(PENDING, [], |r| r.get::<_, i64>(0))? as usize);
            }
        }
        self.write(|tx| {
            let last: Option<String> =
                tx.query_row("SELECT value FROM meta WHERE key = 'model'", [], |r| r.get(0)).optional()?;
            let others: i64 =
                tx.query_row("SELECT COUNT(*) FROM (SELECT 1 FROM vectors WHERE model <> ?1 LIMIT 1)", [model], |r| {
                    r.get(0)
                })?;
            if last.as_deref() != Some(model) && (last.is_some() || others > 0) {
                tx.execute(
                    "UPDATE records SET embed_status = CASE WHEN EXISTS
                       (SELECT 1 FROM vectors v WHERE v.record_id = records.id AND v.model = ?1)
                       THEN 'embedded' ELSE 'pending' END",
                    [model],
                )?;
            }
            tx.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('model', ?1)", [model])?;
            let pending: i64 = tx.query_row(PENDING, [], |r| r.get(0))?;
            Ok(pending as usize)
        })
    }

    /// Models with vectors in this store, and how many each.
    fn vector_models(&self) -> Result<Vec<(String, i64)>> {
        let conn = self.reader();
        let mut stmt = conn.prepare("SELECT model, COUNT(*) FROM vectors GROUP BY model ORDER BY model")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Like [`Vectors::for_each_vector`], for records with an id above `after` only.
    fn for_each_vector_after(&self, model: &str, after: i64, visit: VectorVisitor<'_>) -> Result<()> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(
            "SELECT v.record_id, r.agent_id, v.data FROM vectors v JOIN records r ON r.id = v.record_id
             WHERE v.model = ?1 AND r.forgotten_at IS NULL AND v.record_id > ?2 ORDER BY v.record_id",
        )?;
        let mut rows = stmt.query(params![model, after])?;
        while let Some(row) = rows.next()? {
            let id: i64 = row.get(0)?;
            let agent: String = row.get(1)?;
            let blob: Vec<u8> = row.get(2)?;
            visit(id, &agent, blob_to_vector(&blob));
        }
        Ok(())
    }

    /// The highest record id that has a vector (any model): how far the index must have read.
    fn last_vector_id(&self) -> Result<i64> {
        Ok(self.reader().query_row("SELECT COALESCE(MAX(record_id), 0) FROM vectors", [], |r| r.get(0))?)
    }

    /// How many vectors `for_each_vector` visits for `model`.
    fn vector_count(&self, model: &str) -> Result<usize> {
        let n: i64 = self.reader().query_row(
            "SELECT COUNT(*) FROM vectors v JOIN records r ON r.id = v.record_id
             WHERE v.model = ?1 AND r.forgotten_at IS NULL",
            [model],
            |r| r.get(0),
        )?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// Exact vectors of `ids` (those that have one of `model`), in one query.
    fn vectors(&self, ids: &[i64], model: &str) -> Result<Vec<(i64, Vec<f32>)>> {
        let conn = self.reader();
        let ids_json = serde_json::to_string(ids).unwrap_or_else(|_| "[]".into());
        let mut stmt = conn.prepare_cached(
            "SELECT record_id, data FROM vectors WHERE model = ?2 AND record_id IN (SELECT value FROM json_each(?1))",
        )?;
        let rows =
            stmt.query_map(params![ids_json, model], |r| Ok((r.get(0)?, blob_to_vector(&r.get::<_, Vec<u8>>(1)?))))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }
    fn native_index(&self, _model: &str, _dim: usize) -> Result<Option<Arc<dyn VectorStore>>> {
        Ok(None)
    }
}

impl Statements for SqliteStore {
    /// Current triples of `agents` whose subject or object is one of `entities` (case-insensitive).
    fn triples_about(&self, agents: &[String], entities: &[String], limit: usize) -> Result<Vec<Triple>> {
        if entities.is_empty() {
            return Ok(Vec::new());
        }
        let conn = self.reader();
        let agents_json = serde_json::to_string(agents).unwrap_or_else(|_| "[]".into());
        let lower: Vec<String> = entities.iter().map(|e| e.to_lowercase()).collect();
        let entities_json = serde_json::to_string(&lower).unwrap_or_else(|_| "[]".into());
        let mut stmt = conn.prepare_cached(&format!(
            "{TRIPLE_SELECT} WHERE agent_id IN (SELECT value FROM json_each(?1)) AND superseded_by IS NULL
               AND (lower(subject) IN (SELECT value FROM json_each(?2)) OR lower(object) IN (SELECT value FROM json_each(?2)))
               AND {TRIPLE_NOT_FORGOTTEN}
             ORDER BY COALESCE(valid_from, created_at) DESC LIMIT ?3"
        ))?;
        let rows = stmt.query_map(params![agents_json, entities_json, limit as i64], triple_from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn current_statements(&self, agents: &[String], predicate: &str, limit: usize) -> Result<Vec<Triple>> {
        let conn = self.reader();
        let agents_json = serde_json::to_string(agents).unwrap_or_else(|_| "[]".into());
        let mut stmt = conn.prepare_cached(&format!(
            "{TRIPLE_SELECT} WHERE agent_id IN (SELECT value FROM json_each(?1)) AND predicate = ?2
               AND superseded_by IS NULL
               AND {TRIPLE_NOT_FORGOTTEN}
             ORDER BY COALESCE(valid_from, created_at) DESC LIMIT ?3"
        ))?;
        let rows = stmt.query_map(params![agents_json, predicate, limit as i64], triple_from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// All triples of an agent about `subject`, current and superseded (history).
    fn triple_history(&self, agent: &str, subject: &str) -> Result<Vec<Triple>> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(&format!(
            "{TRIPLE_SELECT} WHERE agent_id = ?1 AND lower(subject) = lower(?2)
               AND {TRIPLE_NOT_FORGOTTEN}
             ORDER BY id"
        ))?;
        let rows = stmt.query_map(params![agent, subject], triple_from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn superseded_statements(&self, records: &[i64]) -> Result<Vec<(Triple, Triple)>> {
        let conn = self.reader();
        let ids_json = serde_json::to_string(records).unwrap_or_else(|_| "[]".into());
        let mut stmt = conn.prepare_cached(&format!(
            "{TRIPLE_SELECT} WHERE source_record IN (SELECT value FROM json_each(?1)) AND superseded_by IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM triples n JOIN records r ON r.id = n.source_record
                               WHERE n.id = triples.superseded_by AND r.forgotten_at IS NOT NULL)
             ORDER BY id"
        ))?;
        let old: Vec<Triple> = stmt.query_map([ids_json], triple_from_row)?.collect::<std::result::Result<_, _>>()?;
        let mut newer = conn.prepare_cached(&format!("{TRIPLE_SELECT} WHERE id = ?1"))?;
        let mut out = Vec::with_capacity(old.len());
        for t in old {
            let Some(by) = t.superseded_by else { continue };
            if let Some(n) = newer.query_map([by], triple_from_row)?.next().transpose()? {
                out.push((t, n));
            }
        }
        Ok(out)
    }

    fn replaced_statements(&self, record: i64) -> Result<Vec<(Triple, Triple)>> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(&format!(
            "{TRIPLE_SELECT} WHERE superseded_by IN (SELECT id FROM triples WHERE source_record = ?1) ORDER BY id"
        ))?;
        let old: Vec<Triple> = stmt.query_map([record], triple_from_row)?.collect::<std::result::Result<_, _>>()?;
        let mut newer = conn.prepare_cached(&format!("{TRIPLE_SELECT} WHERE id = ?1"))?;
        let mut out = Vec::with_capacity(old.len());
        for t in old {
            let Some(by) = t.superseded_by else { continue };
            if let Some(n) = newer.query_map([by], triple_from_row)?.next().transpose()? {
                out.push((t, n));
            }
        }
        Ok(out)
    }

    fn supersession(&self, agent: &str, id: i64) -> Result<Vec<MemoryRecord>> {
        let conn = self.reader();
        // The statements of its subject and predicate, and the chain of edits it is part of.
        let mut stmt = conn.prepare(&format!(
            "WITH RECURSIVE older(id) AS (SELECT ?2 UNION SELECT r.id FROM records r JOIN older o ON r.superseded_by = o.id),
                            newer(id) AS (SELECT ?2 UNION SELECT r.superseded_by FROM records r JOIN newer n ON r.id = n.id
                                          WHERE r.superseded_by IS NOT NULL)
             {RECORD_SELECT} WHERE agent_id = ?1 AND forgotten_at IS NULL AND (id IN (SELECT id FROM older) OR id IN (SELECT id FROM newer)
               OR (subject IS NOT NULL AND predicate IS NOT NULL
                   AND (lower(subject), predicate) = (SELECT lower(subject), predicate FROM records WHERE id = ?2)))
             ORDER BY COALESCE(event_time, created_at), id"
        ))?;
        let rows = stmt.query_map(params![agent, id], record_from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn list_triples(&self, agent: &str, offset: usize, limit: usize) -> Result<Page<Triple>> {
        let conn = self.reader();
        let clause = format!("WHERE agent_id = ?1 AND {TRIPLE_NOT_FORGOTTEN}");
        let total: i64 = conn.query_row(&format!("SELECT COUNT(*) FROM triples {clause}"), [agent], |r| r.get(0))?;
        let mut stmt = conn.prepare(&format!("{TRIPLE_SELECT} {clause} ORDER BY id DESC LIMIT ?2 OFFSET ?3"))?;
        let rows = stmt.query_map(params![agent, sql_int(limit), sql_int(offset)], triple_from_row)?;
        Ok(Page { items: rows.collect::<std::result::Result<_, _>>()?, total, offset })
    }
}

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
        // looked up again (the search's largest cost at 100k records).
        let conn = self.reader();
        let mut stmt =
            conn.prepare_cached("SELECT session, tf FROM session_terms WHERE agent_id = ?1 AND term = ?2")?;
        let mut out = Vec::new();
        for agent in agents {
            for (i, term) in terms.iter().enumerate() {
                let mut rows = stmt.query(params![agent, term])?;
                while let Some(r) = rows.next()? {
                    out.push((i, r.get(0)?, r.get(1)?));
                }
            }
        }
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

impl Forgetting for SqliteStore {
    fn forget(&self, agent: &str, id: i64, how: Forget) -> Result<Option<Forgotten>> {
        self.write(|tx| crate::forget::forget(&mut SqliteTx(tx), agent, id, how))
    }

    fn purge_session(&self, agent: &str, session_id: &str, summaries: Option<&[String]>) -> Result<Vec<i64>> {
        self.write(|tx| crate::forget::purge_session(&mut SqliteTx(tx), agent, session_id, summaries))
    }
}

impl Inspection for SqliteStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    fn integrity_check(&self) -> Result<String> {
        Ok(self.writer().query_row("PRAGMA integrity_check", [], |r| r.get(0))?)
    }

    fn stats(&self, agent: Option<&str>) -> Result<MemoryStats> {
        let conn = self.reader();
        // `?1` is the agent, or NULL for every agent.
        const OF: &str = "(?1 IS NULL OR agent_id = ?1)";
        const VECTORS_OF: &str = "(?1 IS NULL OR record_id IN (SELECT id FROM records WHERE agent_id = ?1))";
        let one = |sql: &str| -> Result<i64> { Ok(conn.query_row(sql, [agent], |r| r.get(0))?) };
        let pairs = |sql: &str| -> Result<Vec<(String, i64)>> {
            let mut stmt = conn.prepare(sql)?;
            let rows = stmt.query_map([agent], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<std::result::Result<_, _>>()?)
        };
        let agents =
            pairs(&format!("SELECT agent_id, COUNT(*) FROM records WHERE {OF} GROUP BY agent_id ORDER BY agent_id"))?;
        Ok(MemoryStats {
            backend: "sqlite".into(),
            records: one(&format!("SELECT COUNT(*) FROM records WHERE {OF}"))?,
            current: one(&format!("SELECT COUNT(*) FROM records WHERE {OF} AND {CURRENT_RECORD}"))?,
            by_kind: pairs(&format!("SELECT kind, COUNT(*) FROM records WHERE {OF} GROUP BY kind ORDER BY kind"))?,
            by_wing: pairs(&format!(
                "SELECT wing, COUNT(*) FROM records WHERE {OF} GROUP BY wing ORDER BY COUNT(*) DESC"
            ))?,
            pending_embeddings: one(&format!(
                "SELECT COUNT(*) FROM records WHERE {OF} AND embed_status = 'pending' AND forgotten_at IS NULL"
            ))?,
            vectors: one(&format!("SELECT COUNT(*) FROM vectors WHERE {VECTORS_OF}"))?,
            vector_models: pairs(&format!("SELECT model, COUNT(*) FROM vectors WHERE {VECTORS_OF} GROUP BY model"))?,
            triples: one(&format!("SELECT COUNT(*) FROM triples WHERE {OF}"))?,
            agents: agents.into_iter().map(|(a, _)| a).collect(),
        })
    }

    fn agents(&self) -> Result<Vec<(String, i64)>> {
        let conn = self.reader();
        let mut stmt = conn.prepare(
            "SELECT agent_id, COUNT(*) FILTER (WHERE forgotten_at IS NULL) FROM records GROUP BY agent_id ORDER BY agent_id",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn facets(&self, agent: &str) -> Result<Facets> {
        let conn = self.reader();
        let count = |column: &str| -> Result<Vec<(String, i64)>> {
            let mut stmt = conn.prepare(&format!(
                "SELECT {column}, COUNT(*) FROM records WHERE agent_id = ?1 AND forgotten_at IS NULL
                 GROUP BY {column} ORDER BY COUNT(*) DESC, {column}"
            ))?;
            let rows = stmt.query_map([agent], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<std::result::Result<_, _>>()?)
        };
        Ok(Facets { wings: count("wing")?, rooms: count("room")?, kinds: count("kind")? })
    }

    fn list_records(&self, filter: &RecordFilter, offset: usize, limit: usize) -> Result<Page<MemoryRecord>> {
        let conn = self.reader();
        let clause = "WHERE (?1 IS NULL OR agent_id = ?1) AND (?2 IS NULL OR wing = ?2) AND (?3 IS NULL OR room = ?3)
               AND (?4 IS NULL OR kind = ?4) AND (?5 OR forgotten_at IS NULL)";
        let f = filter;
        let total: i64 = conn.query_row(
            &format!("SELECT COUNT(*) FROM records {clause}"),
            params![f.agent_id, f.wing, f.room, f.kind, f.include_forgotten],
            |r| r.get(0),
        )?;
        let mut stmt = conn.prepare(&format!("{RECORD_SELECT} {clause} ORDER BY id DESC LIMIT ?6 OFFSET ?7"))?;
        let rows = stmt.query_map(
            params![f.agent_id, f.wing, f.room, f.kind, f.include_forgotten, sql_int(limit), sql_int(offset)],
            record_from_row,
        )?;
        Ok(Page { items: rows.collect::<std::result::Result<_, _>>()?, total, offset })
    }
}

/// One SQLite transaction, on which forgetting's and inserting's steps run (`forget.rs`, `insert.rs`).
struct SqliteTx<'a>(&'a Transaction<'a>);

pub(crate) const RECORD_SELECT: &str = crate::store::rows::record_select!("");

pub(crate) fn record_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<MemoryRecord> {
    crate::store::rows::record_from(r)
}

pub(crate) fn triple_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Triple> {
    crate::store::rows::triple_from(r)
}
