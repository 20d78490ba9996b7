//! The memory backends side by side (`memcc bench backends`): ingest throughput and retrieve /
//! `memory_search` latency on SQLite (`memory.db`) and PostgreSQL + pgvector, same records,
//! same queries, same embedder, same run. SQLite is the baseline each PostgreSQL figure is read
//! against (ratios carry across machines better than milliseconds).

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use memcc::lab::core::bridge::RecallQuery;
use memcc::lab::memory::embed::Embedder;
use memcc::lab::memory::store::Insert;
use memcc::lab::memory::{MemoryConfig, MemoryRuntime, StoreBackend};

use crate::BenchError;
use crate::speed::{Latency, WORDS, bench_records, timed, word};
use memcc::lab::memory::error::pg_message;

/// Records per insert transaction: about what one compacted summary hands to memory.
const BATCH: usize = 50;

#[derive(Debug, Clone, Serialize)]
pub struct BackendRow {
    pub backend: String,
    pub records: usize,
    /// Records with their vectors, `BATCH` per transaction (embedding excluded: the same for both).
    pub ingest_records_per_s: f64,
    /// All four layers at the default memory cap, query embedding included.
    pub retrieve: Latency,
    pub memory_search: Latency,
}

#[derive(Debug, Clone, Serialize)]
pub struct BackendsReport {
    pub machine: crate::Machine,
    pub embedder: String,
    pub postgres: String,
    pub rows: Vec<BackendRow>,
}

/// A scratch database on the server `url` names, dropped with it.
struct Scratch {
    admin: postgres::Client,
    name: String,
    url: String,
}

impl Scratch {
    fn create(url: &str, n: usize) -> Result<Self, BenchError> {
        let pg = |e: postgres::Error| BenchError::Input(format!("PostgreSQL at {url}: {}", pg_message(&e)));
        let mut admin = postgres::Client::connect(url, postgres::NoTls).map_err(pg)?;
        let name = format!("memcc_bench_{}_{n}", std::process::id());
        // Two statements: one multi-statement string would run as a transaction, which
        // CREATE DATABASE refuses.
        admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name}")).map_err(pg)?;
        admin.batch_execute(&format!("CREATE DATABASE {name}")).map_err(pg)?;
        let base = url.split('?').next().unwrap_or(url);
        let server = base.rsplit_once('/').filter(|(s, _)| s.contains("://")).map_or(base, |(s, _)| s);
        Ok(Scratch { admin, url: format!("{server}/{name}"), name })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = self.admin.batch_execute(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name));
    }
}

fn measure(
    rt: &MemoryRuntime,
    embedder: &Arc<dyn Embedder>,
    backend: &str,
    n: usize,
    samples: usize,
    analyze_url: Option<&str>,
) -> Result<BackendRow, BenchError> {
    let (model, dim) = (embedder.model_id(), embedder.dim());
    let (recs, vecs) = bench_records(n, dim);
    let t = Instant::now();
    for chunk in (0..n).collect::<Vec<_>>().chunks(BATCH) {
        let inserts: Vec<Insert<'_>> = chunk
            .iter()
            .map(|&i| Insert { record: &recs[i], vector: Some((model.as_str(), vecs[i].as_slice())), triples: &[] })
            .collect();
        rt.store().insert_many(&inserts)?;
    }
    let ingest_records_per_s = n as f64 / t.elapsed().as_secs_f64();
    if let Some(url) = analyze_url {
        // A store in use has statistics (autovacuum gathers them within a minute or so); without
        // them the planner's choices on a table filled seconds ago vary from run to run.
        let mut client = postgres::Client::connect(url, postgres::NoTls)
            .map_err(|e| BenchError::Input(format!("PostgreSQL: {}", pg_message(&e))))?;
        client.batch_execute("ANALYZE").map_err(|e| BenchError::Input(format!("ANALYZE: {}", pg_message(&e))))?;
    }
    let queries: Vec<String> = (0..samples)
        .map(|i| format!("what did we decide about the {} and the {}?", word(i * 7919), WORDS[(i * 7) % WORDS.len()]))
        .collect();
    let recall = |i: usize| {
        let q = RecallQuery {
            agent_id: "main".into(),
            session_id: "s".into(),
            text: queries[i].clone(),
            as_of: None,
            ..Default::default()
        };
        rt.retrieve(&q, memcc::lab::context::ContextConfig::default().memory_max_tokens).map(|_| ()).map_err(Into::into)
    };
    // Untimed: the SQLite runtime reads the new vectors into its in-memory index on first use.
    recall(0)?;
    let retrieve = timed(samples, recall)?;
    let memory_search =
        timed(samples, |i| rt.memory_search("main", &queries[i], 10, 0.0, None).map(|_| ()).map_err(Into::into))?;
    Ok(BackendRow { backend: backend.into(), records: n, ingest_records_per_s, retrieve, memory_search })
}

/// Both backends at each of `sizes` (records); `pg_url` names a server where a scratch database
/// may be created.
pub fn run(
    embedder: Arc<dyn Embedder>,
    sizes: &[usize],
    samples: usize,
    pg_url: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<BackendsReport, BenchError> {
    let mut rows = Vec::new();
    let mut version = String::new();
    for &n in sizes {
        progress(&format!("sqlite, {n} records"));
        let dir = tempfile::tempdir()?;
        let rt = MemoryRuntime::open(&dir.path().join("memory.db"), MemoryConfig::default(), embedder.clone())?;
        rows.push(measure(&rt, &embedder, "sqlite", n, samples, None)?);
        drop(rt);

        progress(&format!("postgres, {n} records"));
        let mut scratch = Scratch::create(pg_url, n)?;
        if version.is_empty() {
            let row =
                scratch.admin.query_one("SHOW server_version", &[]).map_err(|e| BenchError::Input(e.to_string()))?;
            version = row.get(0);
        }
        let config = MemoryConfig {
            backend: StoreBackend::Postgres,
            postgres_url: Some(scratch.url.clone()),
            ..Default::default()
        };
        let rt = MemoryRuntime::open(&dir.path().join("memory.db"), config, embedder.clone())?;
        rows.push(measure(&rt, &embedder, "postgres", n, samples, Some(&scratch.url))?);
    }
    Ok(BackendsReport { machine: crate::machine(), embedder: embedder.model_id(), postgres: version, rows })
}

pub fn markdown(r: &BackendsReport) -> String {
    let mut s = format!(
        "MemCC memory backends — {} cores ({}), embedder {}, PostgreSQL {} + pgvector (HNSW)\n\n\
         | records | backend | ingest (records/s) | retrieve p50 / p99 ms | memory_search p50 / p99 ms |\n|---|---|---|---|---|\n",
        r.machine.cores, r.machine.cpu, r.embedder, r.postgres
    );
    for row in &r.rows {
        s.push_str(&format!(
            "| {} | {} | {:.0} | {:.2} / {:.2} | {:.2} / {:.2} |\n",
            row.records,
            row.backend,
            row.ingest_records_per_s,
            row.retrieve.p50_ms,
            row.retrieve.p99_ms,
            row.memory_search.p50_ms,
            row.memory_search.p99_ms
        ));
    }
    s.push_str(
        "\nSQLite is the baseline: the same records (with vectors, 50 per transaction), queries and embedder.\n",
    );
    s
}
