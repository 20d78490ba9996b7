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
mod inspection;
mod pool;
mod records;
mod schema;
mod sessions;
mod statements;
mod vectors;

use crate::browse::{Facets, Page, RecordFilter};
use crate::error::{MemoryError, Result};
use crate::forget::{Forget, ForgetTx, Forgotten};
use crate::insert::InsertTx;
use crate::lang::period::Period;
use crate::record::{MemoryRecord, NewRecord, NewTriple, RecordKind, Triple, content_hash};
use crate::sessions::{MessageWords, SessionInfo};
use crate::store::{
    Forgetting, FullText, Insert, Inserted, Inspection, MemoryStats, Posting, PostingsWithin, Records, Sessions,
    Statements, VectorVisitor, Vectors, json, sql_int,
};
use crate::vector::{VectorHit, VectorRow, VectorStore};
use fts::{document_frequencies, term_tsquery};
use insert::insert_all;
use memcc_core::text::{Term, fts_document, rendered_terms};
use memcc_core::time::now_ms;
use pool::{CONNECTIONS, Pool, tls_connector, transient};
pub use schema::PG_SCHEMA_VERSION;
use schema::{TS_CONFIG, migrate};

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
