//! Where memory records live: the [`MemoryStore`] trait, and its two backends.
//!
//! - [`sqlite::SqliteStore`] — `memory.db` beside the context DB (the default, embedded);
//! - [`postgres::PgStore`] — one PostgreSQL database with pgvector that several MemCC processes
//!   (several machines) share (`memory.backend: "postgres"`).
//!
//! Both keep the same contract (`tests/contract.rs` runs one suite on each): a record, its vector
//! (when embedding succeeded), its full-text row, its triples and the supersession of what it
//! replaces commit in one transaction; every read is scoped to the agents given; forgetting
//! follows [`crate::forget`]. Policy (what to store, how to rank) stays outside, in the runtime
//! and the search; a backend only stores and finds.

use std::sync::Arc;

use serde::Serialize;

use crate::browse::{Facets, Page, RecordFilter};
use crate::config::{MemoryConfig, StoreBackend};
use crate::error::{MemoryError, Result};
use crate::forget::{Forget, Forgotten};
use crate::lang::period::Period;
use crate::record::{MemoryRecord, RecordKind, Triple};
use crate::sessions::{MessageWords, SessionInfo};
use crate::vector::VectorStore;
use memcc_core::text::Term;

#[cfg(feature = "postgres")]
pub mod postgres;
pub(crate) mod rows;
pub(crate) mod sessions;
pub mod sqlite;
pub(crate) mod supersession;

pub use crate::insert::{Insert, Inserted};
pub use sqlite::SqliteStore;

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryStats {
    /// Where the records are: `sqlite` or `postgres`.
    pub backend: String,
    pub records: i64,
    pub current: i64,
    pub by_kind: Vec<(String, i64)>,
    pub by_wing: Vec<(String, i64)>,
    pub pending_embeddings: i64,
    pub vectors: i64,
    pub vector_models: Vec<(String, i64)>,
    pub triples: i64,
    pub agents: Vec<String>,
}

/// Receives each vector [`Vectors::for_each_vector_after`] reads: record id, agent, vector.
pub type VectorVisitor<'a> = &'a mut dyn FnMut(i64, &str, Vec<f32>);

/// A full-text search: any of `terms` among the current records of `agents` (stemmed
/// English, CJK as bigrams; see [`memcc_core::text`]), in `wing` and dated `during` when given
/// (a record's date: its event time, else when it was stored), the best `limit`.
#[derive(Debug, Clone, Copy)]
pub struct FullText<'a> {
    pub terms: &'a [Term],
    pub agents: &'a [String],
    pub wing: Option<&'a str>,
    pub during: Option<Period>,
    pub limit: usize,
    /// The terms' document frequencies, when the caller counted them already
    /// ([`Records::document_frequencies`], one per term): a backend that weighs terms by
    /// them itself (PostgreSQL) does not count again.
    pub frequencies: Option<&'a [usize]>,
}

/// A count or place as SQL takes it: past `i64::MAX` (a page asked for at offset 2^64 − 1) it
/// is `i64::MAX`, an empty page, never a wrapped negative one (SQLite read that as the first
/// page, PostgreSQL refused it).
pub(crate) fn sql_int(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The statements that delete the triples `condition` selects, in their order: first a triple
/// they superseded is current again (as a record is when the record that superseded it is
/// purged), so no reference dangles; then they go. Both backends run these (only their
/// parameters' syntax differs).
pub(crate) fn delete_triples_sql(condition: &str) -> [String; 2] {
    [
        format!(
            "UPDATE triples SET superseded_by = NULL, valid_until = NULL
              WHERE superseded_by IN (SELECT id FROM triples WHERE {condition})"
        ),
        format!("DELETE FROM triples WHERE {condition}"),
    ]
}

/// What stores memory: one trait per part a reader needs — [`Records`], [`Vectors`],
/// [`Statements`], [`Sessions`], [`Forgetting`], [`Inspection`] — each backend implementing all
/// six (a file per part beside its `mod.rs`). Object-safe: the runtime holds an
/// `Arc<dyn MemoryStore>`; a caller takes the part it uses (`&dyn Sessions` for the session
/// ranker, `&dyn Records` for export), or the parts a search ([`SearchStore`]) or an ingest
/// ([`IngestStore`]) reads, and a `&dyn MemoryStore` is given where any of them is asked.
pub trait MemoryStore: SearchStore + IngestStore + Forgetting + Inspection + Send + Sync {}

impl<T: Records + Vectors + Statements + Sessions + Forgetting + Inspection + Send + Sync> MemoryStore for T {}

/// What a search and a recall read: records, the session index, statements.
pub trait SearchStore: Records + Sessions + Statements + Send + Sync {}

impl<T: Records + Sessions + Statements + Send + Sync + ?Sized> SearchStore for T {}

/// What an ingest writes and reads: records and their vectors.
pub trait IngestStore: Records + Vectors {}

impl<T: Records + Vectors + ?Sized> IngestStore for T {}

/// One term's count in one session: (the term's place in the list asked for, the session's key,
/// how often the session says it).
pub type Posting = (usize, i64, u32);

/// Each term's number of sessions, and its postings among a pool of them
/// ([`Sessions::session_postings_within`]).
pub type PostingsWithin = (Vec<usize>, Vec<Posting>);

/// The session index ([`crate::sessions`]): each session's words as one document, which
/// the ranker scores as a whole. Written with the records it is counted from (inserting and
/// forgetting keep it in step, in their transactions).
pub trait Sessions {
    /// The sessions of `agents` the index holds (shared: a store may keep them between reads).
    fn sessions(&self, agents: &[String]) -> Result<Vec<Arc<SessionInfo>>>;

    /// For each of `terms`, the sessions of `agents` that say it, and how often.
    fn session_postings(&self, agents: &[String], terms: &[String]) -> Result<Vec<Posting>>;

    /// For each of `terms`, how many sessions of `agents` say it (its document frequency), and
    /// its postings among the sessions `within` (keys, ascending) alone: the ranker's second
    /// pass over a large store scores only the sessions its first pass kept ([`crate::rank`]),
    /// yet weighs each term by all of them.
    fn session_postings_within(&self, agents: &[String], terms: &[String], within: &[i64]) -> Result<PostingsWithin> {
        let mut df = vec![0; terms.len()];
        let mut out = Vec::new();
        for posting in self.session_postings(agents, terms)? {
            if let Some(n) = df.get_mut(posting.0) {
                *n += 1;
            }
            if within.binary_search(&posting.1).is_ok() {
                out.push(posting);
            }
        }
        Ok((df, out))
    }

    /// Every term of these sessions (by key) with its count: (session, term, count).
    fn session_terms(&self, sessions: &[i64]) -> Result<Vec<(i64, String, u32)>>;

    /// The records (not forgotten) made from these sessions of these agents (agent, session id):
    /// the ranker brings in the best sessions' records that no retriever found.
    fn records_of_sessions(&self, sessions: &[(String, String)]) -> Result<Vec<MemoryRecord>>;

    /// The version of the rules the index was built under (`None`: never built).
    fn session_index_version(&self) -> Result<Option<u32>>;

    /// Rebuild the whole index in one transaction from every current record, as `words` counts
    /// each, and mark it built under `version`; the sessions indexed.
    fn reindex_sessions(&self, words: &dyn Fn(&MemoryRecord) -> Vec<MessageWords>, version: u32) -> Result<usize>;
}

/// Records: storing them (with what they say and where they came from), reading them back, and finding them by words.
pub trait Records {
    /// Insert records in one transaction (see [`Insert`]); a text the agent already has is
    /// not stored twice ([`Inserted::duplicate`]).
    fn insert_many(&self, items: &[Insert<'_>]) -> Result<Vec<Inserted>>;

    /// [`Records::insert_many`], marking summary `summary_id` of `agent` as ingested in the
    /// same transaction.
    fn insert_summary(&self, agent: &str, summary_id: &str, items: &[Insert<'_>]) -> Result<Vec<Inserted>>;

    /// Whether the bridge already delivered summary `summary_id` of `agent`.
    fn summary_ingested(&self, agent: &str, summary_id: &str) -> Result<bool>;

    fn get(&self, id: i64) -> Result<Option<MemoryRecord>>;

    /// The records of `ids` that exist, in `ids` order.
    fn get_many(&self, ids: &[i64]) -> Result<Vec<MemoryRecord>>;

    /// Full-text search (see [`FullText`]): (id, score), higher = better; scores compare within
    /// one result list only.
    fn fts(&self, q: &FullText<'_>) -> Result<Vec<(i64, f64)>>;

    /// [`Self::fts`]'s best `q.limit` and, beside them, the best `q.limit` dated within
    /// `period` — what was said then, however common its words are elsewhere — in one list (an
    /// id in both may be there twice, with the same score; `q.during` is not read). Scores
    /// compare across the two: both are the collection's. Both backends answer in one scored
    /// pass; this default makes two.
    fn fts_also_during(&self, q: &FullText<'_>, period: Period) -> Result<Vec<(i64, f64)>> {
        let mut found = self.fts(&FullText { during: None, ..*q })?;
        found.extend(self.fts(&FullText { during: Some(period), ..*q })?);
        Ok(found)
    }

    /// For each term, how many current records of `agents` match it, counted up to `cap + 1`
    /// (`cap + 1` reads "more than `cap`"). Where it is cheaper a backend may answer a count
    /// over every agent while that is within `cap` (SQLite): an upper bound, exact above `cap`.
    fn document_frequencies(&self, terms: &[Term], agents: &[String], cap: usize) -> Result<Vec<usize>>;

    /// About how many records exist (an upper bound once records were purged), cheaply.
    fn record_count(&self) -> Result<i64>;

    /// Pinned or high-weight current records of `agents`, heaviest and newest first.
    fn essentials(&self, agents: &[String], min_weight: f64, limit: usize) -> Result<Vec<MemoryRecord>>;

    /// The newest current records of one wing.
    fn recent_in_wing(
        &self,
        agents: &[String],
        wing: &str,
        kinds: &[RecordKind],
        limit: usize,
    ) -> Result<Vec<MemoryRecord>>;

    /// The sentences `agent` forgot ([`memcc_core::said::said_key`]s) in any of `sessions` or
    /// everywhere, which no later record made from those conversations may hold.
    fn tombstones(&self, agent: &str, sessions: &[String]) -> Result<std::collections::HashSet<String>>;

    /// Pin (always recall, at the most weight) or unpin `agent`'s current record `id` (unpinned,
    /// it keeps weight `weight`), and with `everywhere` take it out of the project it was
    /// learnt in (a pin holds in its record's project); whether there was such a record.
    fn set_pinned(&self, agent: &str, id: i64, pinned: bool, weight: f64, everywhere: bool) -> Result<bool>;

    /// Visit every record of `agent` (all agents when `None`), in id order.
    fn for_each_record(&self, agent: Option<&str>, visit: &mut dyn FnMut(MemoryRecord) -> Result<()>) -> Result<()>;

    /// One record (see [`Records::insert_many`]).
    fn insert(&self, item: Insert<'_>) -> Result<Inserted> {
        let mut out = self.insert_many(std::slice::from_ref(&item))?;
        out.pop().ok_or_else(|| crate::error::MemoryError::Input("nothing was inserted".into()))
    }
}

/// Records' vectors: the embedding queue, the model they follow, and the rows an in-memory index is built from.
pub trait Vectors {
    /// Attach a vector to a pending record (queue processing).
    fn set_vector(&self, id: i64, model: &str, vector: &[f32]) -> Result<()>;

    fn mark_embed_error(&self, ids: &[i64], error: &str) -> Result<()>;

    /// Records waiting for an embedding: (id, text), oldest first.
    fn pending(&self, limit: usize) -> Result<Vec<(i64, String)>>;

    fn pending_count(&self) -> Result<usize>;

    /// Make embedding statuses follow `model` (of `dim` dimensions): a record is embedded when
    /// it has a vector of `model`, pending otherwise. Vectors of other models are kept
    /// (switching back finds them). Returns how many records wait.
    fn use_model(&self, model: &str, dim: usize) -> Result<usize>;

    /// Models with vectors in this store, and how many each.
    fn vector_models(&self) -> Result<Vec<(String, i64)>>;

    /// Visit the current vectors of `model` with a record id above `after`, in id order.
    fn for_each_vector_after(&self, model: &str, after: i64, visit: VectorVisitor<'_>) -> Result<()>;

    /// The highest record id that has a vector (any model).
    fn last_vector_id(&self) -> Result<i64>;

    /// How many current vectors of `model` there are.
    fn vector_count(&self, model: &str) -> Result<usize>;

    /// Exact vectors of `ids` (those that have one of `model`).
    fn vectors(&self, ids: &[i64], model: &str) -> Result<Vec<(i64, Vec<f32>)>>;

    /// A vector index the backend keeps itself (pgvector), searched where the data is; `None`
    /// when the runtime should keep one in memory (SQLite).
    fn native_index(&self, model: &str, dim: usize) -> Result<Option<Arc<dyn VectorStore>>>;
}

/// The knowledge graph: the statements (triples) records make, and which replaced which.
pub trait Statements {
    /// Current triples of `agents` whose subject or object is one of `entities`
    /// (case-insensitive), those of forgotten records left out.
    fn triples_about(&self, agents: &[String], entities: &[String], limit: usize) -> Result<Vec<Triple>>;

    /// Current triples of `agents` with `predicate`, newest first, those of forgotten records
    /// left out: the choices replaced (`replaced_by`), which name no subject a search knows.
    fn current_statements(&self, agents: &[String], predicate: &str, limit: usize) -> Result<Vec<Triple>>;

    /// All triples of an agent about `subject`, current and superseded (history).
    fn triple_history(&self, agent: &str, subject: &str) -> Result<Vec<Triple>>;

    /// The superseded triples stated by `records` (their `source_record`), with the triple that
    /// superseded each: (old, new). What a hit that says something since changed is marked with.
    fn superseded_statements(&self, records: &[i64]) -> Result<Vec<(Triple, Triple)>>;

    /// The triples `record`'s statements superseded, with the one that did: (old, new). A
    /// record's history: what it replaced.
    fn replaced_statements(&self, record: i64) -> Result<Vec<(Triple, Triple)>>;

    /// Every statement of `agent` about the same subject and predicate as record `id`, oldest
    /// first, forgotten ones left out. Just the record when it states none.
    fn supersession(&self, agent: &str, id: i64) -> Result<Vec<MemoryRecord>>;

    /// Knowledge-graph triples of `agent`, newest first, those of forgotten records left out.
    fn list_triples(&self, agent: &str, offset: usize, limit: usize) -> Result<Page<Triple>>;
}

/// Forgetting: a record and what was made from the same words, or every record of a conversation.
pub trait Forgetting {
    /// Forget record `id` of `agent` and what was derived from the same words, in one
    /// transaction ([`crate::forget::forget`]).
    fn forget(&self, agent: &str, id: i64, how: Forget) -> Result<Option<Forgotten>>;

    /// Delete every record of `agent` made from `session_id` (with `summaries`, from those of
    /// its conversation: [`crate::forget::purge_session`]); the ids removed.
    fn purge_session(&self, agent: &str, session_id: &str, summaries: Option<&[String]>) -> Result<Vec<i64>>;
}

/// What the store is and holds, for people and checks: its backend, counts, agents, facets, pages.
pub trait Inspection {
    /// `sqlite` or `postgres`.
    fn backend(&self) -> &'static str;

    /// The backend's own consistency check: "ok", or what is wrong.
    fn integrity_check(&self) -> Result<String>;

    /// Counts of `agent`'s records, vectors and triples; of the whole store with `None`.
    fn stats(&self, agent: Option<&str>) -> Result<MemoryStats>;

    /// Every agent with records, and how many current records each has.
    fn agents(&self) -> Result<Vec<(String, i64)>>;

    /// The wings, rooms and kinds of `agent`'s current records.
    fn facets(&self, agent: &str) -> Result<Facets>;

    /// Records matching `filter`, newest first.
    fn list_records(&self, filter: &RecordFilter, offset: usize, limit: usize) -> Result<Page<MemoryRecord>>;
}

/// The store `config` selects: `memory.db` at `path`, or the PostgreSQL database it names.
pub fn open(path: &std::path::Path, config: &MemoryConfig) -> Result<Arc<dyn MemoryStore>> {
    match config.backend {
        StoreBackend::Sqlite => Ok(Arc::new(SqliteStore::open(path)?)),
        #[cfg(feature = "postgres")]
        StoreBackend::Postgres => {
            let url = config.postgres_url().ok_or_else(|| {
                MemoryError::Config(format!(
                    "memory.backend \"postgres\" needs memory.postgresUrl or ${}",
                    crate::config::PG_URL_ENV
                ))
            })?;
            Ok(Arc::new(postgres::PgStore::open(&url, config.postgres_ca_file.as_deref())?))
        }
        #[cfg(not(feature = "postgres"))]
        StoreBackend::Postgres => {
            Err(MemoryError::Config("memory.backend \"postgres\" needs MemCC built with the `postgres` feature".into()))
        }
    }
}

/// Serialising plain lists of strings or numbers cannot fail.
pub(crate) fn json<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "[]".into())
}
