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
use crate::speed::{Latency, RECORDS_PER_SESSION, WORDS, bench_texts, timed, unit, word};
use memcc::lab::memory::embed::{dot, normalize};
use memcc::lab::memory::error::pg_message;

/// Records per insert transaction: about what one compacted summary hands to memory.
const BATCH: usize = 50;
/// Every this many records one belongs to another agent: the filter a shared database's
/// search applies, keeping 1 % of the rows.
const OTHER_EVERY: usize = 100;
/// Queries whose nearest ten the vector index is held to against an exact search.
const RECALL_QUERIES: usize = 50;

#[derive(Debug, Clone, Serialize)]
pub struct BackendRow {
    pub backend: String,
    pub records: usize,
    /// Records with their vectors, `BATCH` per transaction (embedding excluded: the same for both).
    pub ingest_records_per_s: f64,
    /// All four layers at the default memory cap, query embedding included.
    pub retrieve: Latency,
    pub memory_search: Latency,
    /// The vector index's nearest ten against an exact search, over the agent holding 99 % of
    /// the records, and over the one holding 1 % (a filter that keeps 1 % of the rows).
    pub recall_at_10: f64,
    pub filtered_recall_at_10: f64,
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
    let mut recs = bench_texts(n);
    for (i, r) in recs.iter_mut().enumerate() {
        if i % OTHER_EVERY == 0 {
            r.agent_id = "other".into();
        }
    }
    let vecs: Vec<Vec<f32>> = (0..n).map(|i| topical(i, dim)).collect();
    let mut ids = Vec::with_capacity(n);
    let t = Instant::now();
    for chunk in (0..n).collect::<Vec<_>>().chunks(BATCH) {
        let inserts: Vec<Insert<'_>> = chunk
            .iter()
            .map(|&i| Insert { record: &recs[i], vector: Some((model.as_str(), vecs[i].as_slice())), triples: &[] })
            .collect();
        ids.extend(rt.store().insert_many(&inserts)?.into_iter().map(|r| r.id));
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
    let recall_of = |agent: &str| -> Result<f64, BenchError> {
        let own: Vec<usize> = (0..n).filter(|&i| recs[i].agent_id == agent).collect();
        let mut found = 0;
        for q in 0..RECALL_QUERIES {
            let query = topical_query(q, dim);
            let exact = exact_nearest(&query, &own, &vecs, 10);
            let exact: std::collections::HashSet<i64> = exact.iter().map(|&i| ids[i]).collect();
            let hits = rt.nearest(&query, 10, &[agent.to_string()])?;
            found += hits.iter().filter(|h| exact.contains(&h.id)).count();
        }
        Ok(found as f64 / (RECALL_QUERIES * 10) as f64)
    };
    let recall_at_10 = recall_of("main")?;
    let filtered_recall_at_10 = recall_of("other")?;
    Ok(BackendRow {
        backend: backend.into(),
        records: n,
        ingest_records_per_s,
        retrieve,
        memory_search,
        recall_at_10,
        filtered_recall_at_10,
    })
}

/// Topics the benchmark's vectors are drawn around: records of a session share one, so a query
/// has near neighbours and many that are almost as near, as real embeddings do (uniform random
/// vectors, all about equally far apart, would make any index's recall meaningless).
const TOPICS: u64 = 1000;

/// A unit vector: a direction every record shares (embeddings are not centred), its topic's,
/// and its own noise.
fn topical(i: usize, dim: usize) -> Vec<f32> {
    let topic = (i / RECORDS_PER_SESSION) as u64 % TOPICS;
    blend(topic, 1_000_000 + i as u64, dim)
}

/// A query about one of the topics, worded its own way.
fn topical_query(q: usize, dim: usize) -> Vec<f32> {
    blend((q as u64 * 7919) % TOPICS, 9_000_000 + q as u64, dim)
}

fn blend(topic: u64, own: u64, dim: usize) -> Vec<f32> {
    let (common, topic, own) = (unit(u64::MAX / 3, dim), unit(topic + 1, dim), unit(own, dim));
    let mut v: Vec<f32> = (0..dim).map(|d| 0.5 * common[d] + topic[d] + 0.8 * own[d]).collect();
    normalize(&mut v);
    v
}

/// The `k` of `among` (indices into `vectors`, unit vectors) nearest to `query` by cosine.
fn exact_nearest(query: &[f32], among: &[usize], vectors: &[Vec<f32>], k: usize) -> Vec<usize> {
    let mut scored: Vec<(f32, usize)> = among.iter().map(|&i| (dot(&vectors[i], query), i)).collect();
    scored.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(k).map(|(_, i)| i).collect()
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
         | records | backend | ingest (records/s) | retrieve p50 / p99 ms | memory_search p50 / p99 ms | vector recall@10, all / 1 % filter |\n|---|---|---|---|---|---|\n",
        r.machine.cores, r.machine.cpu, r.embedder, r.postgres
    );
    for row in &r.rows {
        s.push_str(&format!(
            "| {} | {} | {:.0} | {:.2} / {:.2} | {:.2} / {:.2} | {:.3} / {:.3} |\n",
            row.records,
            row.backend,
            row.ingest_records_per_s,
            row.retrieve.p50_ms,
            row.retrieve.p99_ms,
            row.memory_search.p50_ms,
            row.memory_search.p99_ms,
            row.recall_at_10,
            row.filtered_recall_at_10
        ));
    }
    s.push_str(
        "\nSQLite is the baseline: the same records (with vectors, 50 per transaction), queries and embedder. \
         Recall: the vector index's nearest ten against an exact search, 50 queries, over the agent holding 99 % \
         of the records and over one holding 1 %.\n",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_topic_s_records_are_nearer_to_each_other_than_to_another_topic_s() {
        let (a, b, other) = (topical(0, 512), topical(1, 512), topical(RECORDS_PER_SESSION, 512));
        assert!((dot(&a, &a) - 1.0).abs() < 1e-4);
        let (same, apart) = (dot(&a, &b), dot(&a, &other));
        assert!(same > 0.5 && apart < same - 0.3, "same topic {same}, another {apart}");
        // A query about topic 0 finds topic 0's records first.
        let vectors: Vec<Vec<f32>> = (0..200).map(|i| topical(i, 512)).collect();
        let query = blend(0, 42, 512);
        let nearest = exact_nearest(&query, &(0..200).collect::<Vec<_>>(), &vectors, 10);
        assert!(nearest.iter().all(|&i| i < RECORDS_PER_SESSION), "{nearest:?}");
    }
}
