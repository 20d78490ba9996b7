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
    Forgetting, FullText, Insert, Inserted, Inspection, MemoryStats, Posting, PostingsWithin, Records, Sessions,
    Statements, VectorVisitor, Vectors, json, sql_int,
};
use crate::vector::VectorStore;
use memcc_core::text::{Combine, Term, combine_terms, fts_document, term_expr};
use memcc_core::time::now_ms;

mod forget;
mod fts;
mod index_cache;
mod insert;
mod inspection;
mod records;
pub(crate) mod schema;
mod sessions;
mod statements;
mod vectors;

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
    /// What was read of the session index, kept and mended across writes ([`index_cache`]).
    index_cache: index_cache::IndexCache,
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
        let index_cache = index_cache::IndexCache::new(memcc_core::sqlite::open_reader(path)?);
        Ok(SqliteStore { writer: Mutex::new(writer), readers, index_cache })
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

/// One SQLite transaction, on which forgetting's and inserting's steps run (`forget.rs`, `insert.rs`).
struct SqliteTx<'a>(&'a Transaction<'a>);

pub(crate) const RECORD_SELECT: &str = crate::store::rows::record_select!("");

pub(crate) fn record_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<MemoryRecord> {
    crate::store::rows::record_from(r)
}

pub(crate) fn triple_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Triple> {
    crate::store::rows::triple_from(r)
}
