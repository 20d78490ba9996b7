//! The speed suite: ingest throughput, assemble / grep / retrieve latency (p50, p99) at growing
//! sizes, and the exact vector scan beside brute-force f32, each figure next to a baseline
//! measured in the same run (so ratios carry across machines better than milliseconds).
//! Run with `memcc bench speed` (or `cargo bench -p memcc-bench`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use memcc::lab::context::message::{AgentMessage, ContentPart};
use memcc::lab::context::{ContextConfig, ContextEngine, ContextStore, GrepRequest, SessionRef};
use memcc::lab::core::bridge::{BridgeMessage, RecallQuery, SummaryKind, SummaryPayload};
use memcc::lab::memory::browse::RecordFilter;
use memcc::lab::memory::embed::Embedder;
use memcc::lab::memory::record::{NewRecord, RecordKind};
use memcc::lab::memory::store::{Insert, Records, SqliteStore};
use memcc::lab::memory::vector::{FlatScan, VectorStore};
use memcc::lab::memory::{MemoryConfig, MemoryRuntime};

use crate::BenchError;

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Latency {
    pub p50_ms: f64,
    pub p99_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ContextRow {
    pub messages: usize,
    pub assemble: Latency,
    /// Reading the context item list alone: the least an assembler must do.
    pub baseline: Latency,
    pub grep: Latency,
    /// Ingest one turn and run compaction bookkeeping; should not grow with history.
    pub compact_per_turn: Latency,
    /// The whole assemble a host gets, recall from the session's own memory included (sizes up
    /// to 10,000 messages: building the memory embeds every record).
    pub assemble_with_memory: Option<Latency>,
}

/// Compacting a long imported session in one call (context only, extractive summaries): should
/// grow linearly with the session.
#[derive(Debug, Clone, Serialize)]
pub struct BulkRow {
    pub messages: usize,
    pub compact_messages_per_s: f64,
    /// Ingesting the same messages, batched, in the same run: the baseline.
    pub ingest_messages_per_s: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct MemoryRow {
    pub records: usize,
    /// All four layers at the default memory cap (`context.memoryMaxTokens`), query embedding
    /// included.
    pub retrieve: Latency,
    /// The same, each question naming a month that holds many of the records (its best
    /// full-text matches taken beside the best overall).
    pub retrieve_dated: Latency,
    pub memory_search: Latency,
    pub query_embedding: Latency,
}

#[derive(Debug, Clone, Serialize)]
pub struct SpeedReport {
    pub machine: crate::Machine,
    pub embedder: String,
    pub ingest_messages_per_s: f64,
    pub bare_insert_per_s: f64,
    pub memory_ingest_records_per_s: f64,
    pub embedder_alone_per_s: f64,
    pub context: Vec<ContextRow>,
    pub bulk: Vec<BulkRow>,
    pub memory: Vec<MemoryRow>,
    pub scan_vectors: usize,
    pub scan: Latency,
    /// On random vectors, which have no neighbours, only near-ties: the shortlist's worst case.
    pub scan_recall_at_10: f64,
    /// On vectors with neighbours, as embeddings have (topics plus noise, queries near a vector).
    pub scan_recall_at_10_topical: f64,
    pub brute_force: Latency,
}

/// p50 and p99 of `d`, in milliseconds.
pub fn latency(mut d: Vec<Duration>) -> Latency {
    d.sort();
    let at =
        |q: f64| d.get(((d.len().max(1) as f64 - 1.0) * q).round() as usize).map_or(0.0, |x| x.as_secs_f64() * 1e3);
    Latency { p50_ms: at(0.5), p99_ms: at(0.99) }
}

pub(crate) fn timed(n: usize, mut f: impl FnMut(usize) -> Result<(), BenchError>) -> Result<Latency, BenchError> {
    let mut d = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        f(i)?;
        d.push(t.elapsed());
    }
    Ok(latency(d))
}

pub(crate) const WORDS: &[&str] = &[
    "meeting", "Lisbon", "flight", "budget", "doctor", "invoice", "garden", "guitar", "daughter", "project",
    "deadline", "coffee", "hiking", "museum", "train", "hotel", "allergy", "peanuts", "birthday", "painting", "server",
    "deploy", "salary", "vacation", "recipe", "library", "concert", "marathon", "camera", "office", "weekend",
    "report", "北京", "咖啡", "会议", "旅行", "医生", "生日",
];

/// A pseudo-word of a 4,000-word vocabulary drawn with a Zipf-like skew.
pub(crate) fn word(s: usize) -> String {
    const SYL: &[&str] =
        &["ka", "lo", "mi", "ren", "tas", "vo", "pel", "dra", "shu", "nit", "bor", "qui", "ze", "fan", "gol", "hu"];
    let u = (s % 10_000) as f64 / 10_000.0 + 1e-4;
    let rank = ((1.0 / u) as usize).min(4_000) + s % 3;
    if rank.is_multiple_of(11) {
        return WORDS[rank % WORDS.len()].to_string();
    }
    (0..3).map(|k| SYL[(rank >> (4 * k)) % SYL.len()]).collect()
}

fn text(i: usize) -> String {
    let mut s = i.wrapping_mul(2654435761) | 1;
    let mut out = format!("Note {i}: invoice {} for the Lisbon office;", i * 7);
    for _ in 0..14 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        out.push(' ');
        out.push_str(&word(s));
    }
    out
}

fn message(i: usize) -> AgentMessage {
    let m = if i.is_multiple_of(2) {
        AgentMessage::user(&text(i))
    } else {
        AgentMessage::assistant(vec![ContentPart::text(text(i))])
    };
    m.with_timestamp(1_700_000_000_000 + i as i64 * 1000)
}

/// A deterministic pseudo-random unit vector (xorshift from `seed`): benchmark data.
pub fn unit(seed: u64, dim: usize) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E3779B97F4A7C15) | 1;
    let mut v: Vec<f32> = (0..dim)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % 20001) as f32 / 10000.0 - 1.0
        })
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v
}

/// Benchmark records per session: a store of `n` records holds `n / 20` sessions, which the
/// session ranker scores on every search.
pub(crate) const RECORDS_PER_SESSION: usize = 20;

/// `n` benchmark records (verbatim, a minute apart, twenty to a session) and a unit vector of
/// `dim` for each.
pub(crate) fn bench_records(n: usize, dim: usize) -> (Vec<NewRecord>, Vec<Vec<f32>>) {
    (bench_texts(n), (0..n).map(|i| unit(i as u64, dim)).collect())
}

/// [`bench_records`]' records alone, for a bench that draws its own vectors.
pub(crate) fn bench_texts(n: usize) -> Vec<NewRecord> {
    (0..n)
        .map(|i| NewRecord {
            text: text(i),
            kind: RecordKind::Verbatim,
            event_time: Some(1_700_000_000_000 + i as i64 * 60_000),
            source_session_ids: vec![format!("s{}", i / RECORDS_PER_SESSION)],
            source_message_ids: vec![i as i64],
            ..NewRecord::default()
        })
        .collect()
}

/// Assemble (8k budget, so recall gets its default share) on `size` messages compacted into the
/// session's own memory, as a host does mid-turn with a new question pending.
fn assemble_with_memory(embedder: &Arc<dyn Embedder>, size: usize, samples: usize) -> Result<Latency, BenchError> {
    let dir = tempfile::tempdir()?;
    let memcc = crate::pipeline::open_with(&memcc::MemccConfig::default(), dir.path(), embedder)?;
    let session = SessionRef::new("s");
    for chunk in (0..size).collect::<Vec<_>>().chunks(1000) {
        let batch: Vec<AgentMessage> = chunk.iter().map(|&i| message(i)).collect();
        memcc.context.ingest_batch(&session, &batch)?;
        memcc.context.compact("s", 8_000, false)?;
    }
    timed(samples, |i| {
        let pending = [AgentMessage::user(&format!("what was invoice {} about?", (i * 7919) % size * 7))];
        memcc.context.assemble_for(&session, 8_000, None, &pending).map(|_| ()).map_err(Into::into)
    })
}

fn bulk(n: usize) -> Result<BulkRow, BenchError> {
    let dir = tempfile::tempdir()?;
    let engine = ContextEngine::new(ContextStore::open(&dir.path().join("c.db"))?, ContextConfig::default())?;
    let session = SessionRef::new("bulk");
    let t = Instant::now();
    for chunk in (0..n).collect::<Vec<_>>().chunks(5000) {
        let batch: Vec<AgentMessage> = chunk.iter().map(|&i| message(i)).collect();
        engine.ingest_batch(&session, &batch)?;
    }
    let ingest_messages_per_s = n as f64 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    engine.compact("bulk", 8_000, false)?;
    Ok(BulkRow { messages: n, compact_messages_per_s: n as f64 / t.elapsed().as_secs_f64(), ingest_messages_per_s })
}

/// Run the suite at `sizes` (messages for the context engine, records for memory) and bulk
/// compaction at `bulk_sizes` (messages).
pub fn run(
    embedder: Arc<dyn Embedder>,
    sizes: &[usize],
    bulk_sizes: &[usize],
    samples: usize,
    progress: &mut dyn FnMut(&str),
) -> Result<SpeedReport, BenchError> {
    let model = embedder.model_id();
    let dim = embedder.dim();

    progress("context ingest");
    let n = 20_000;
    let dir = tempfile::tempdir()?;
    let engine = ContextEngine::new(ContextStore::open(&dir.path().join("c.db"))?, ContextConfig::default())?;
    let msgs: Vec<AgentMessage> = (0..n).map(message).collect();
    let t = Instant::now();
    for chunk in msgs.chunks(500) {
        engine.ingest_batch(&SessionRef::new("ingest"), chunk)?;
    }
    let ingest_messages_per_s = n as f64 / t.elapsed().as_secs_f64();
    let bare_insert_per_s = {
        let conn =
            rusqlite::Connection::open(dir.path().join("raw.db")).map_err(|e| BenchError::Input(e.to_string()))?;
        let rows: Vec<String> = msgs.iter().map(|m| m.to_value().to_string()).collect();
        let run = || -> rusqlite::Result<f64> {
            conn.pragma_update(None, "journal_mode", "WAL")?;
            conn.execute_batch("CREATE TABLE m (id INTEGER PRIMARY KEY, raw TEXT)")?;
            let t = Instant::now();
            let tx = conn.unchecked_transaction()?;
            {
                let mut stmt = tx.prepare("INSERT INTO m (raw) VALUES (?1)")?;
                for r in &rows {
                    stmt.execute([r])?;
                }
            }
            tx.commit()?;
            Ok(n as f64 / t.elapsed().as_secs_f64())
        };
        run().map_err(|e| BenchError::Input(e.to_string()))?
    };

    let mut context = Vec::new();
    for &size in sizes {
        progress(&format!("context {size} messages"));
        let dir = tempfile::tempdir()?;
        let engine = ContextEngine::new(ContextStore::open(&dir.path().join("c.db"))?, ContextConfig::default())?;
        let session = SessionRef::new("s");
        for chunk in (0..size).collect::<Vec<_>>().chunks(1000) {
            let batch: Vec<AgentMessage> = chunk.iter().map(|&i| message(i)).collect();
            engine.ingest_batch(&session, &batch)?;
            engine.compact("s", 8_000, false)?;
        }
        let conv = engine
            .store()
            .find_conversation("main", "s")?
            .ok_or_else(|| BenchError::Input("no conversation".into()))?;
        let assemble = timed(samples, |_| engine.assemble("s", 8_000, None).map(|_| ()).map_err(Into::into))?;
        let baseline = timed(samples, |_| engine.store().context_items(conv.id).map(|_| ()).map_err(Into::into))?;
        let grep = timed(samples, |i| {
            let req = GrepRequest {
                pattern: format!("invoice {}", (i * 7919) % size * 7),
                session_id: Some("s".into()),
                ..Default::default()
            };
            engine.grep(&req).map(|_| ()).map_err(Into::into)
        })?;
        let mut k = size;
        let compact_per_turn = timed(samples.min(100), |_| {
            engine.ingest_batch(&session, &[message(k), message(k + 1)])?;
            k += 2;
            engine.compact("s", 8_000, false).map(|_| ()).map_err(Into::into)
        })?;
        let assemble_with_memory =
            if size <= 10_000 { Some(assemble_with_memory(&embedder, size, samples)?) } else { None };
        context.push(ContextRow { messages: size, assemble, baseline, grep, compact_per_turn, assemble_with_memory });
    }

    let mut bulk_rows = Vec::new();
    for &n in bulk_sizes {
        progress(&format!("bulk compaction {n} messages"));
        bulk_rows.push(bulk(n)?);
    }

    progress("memory ingest");
    let dir = tempfile::tempdir()?;
    let rt = MemoryRuntime::open(&dir.path().join("m.db"), MemoryConfig::default(), embedder.clone())?;
    let t = Instant::now();
    let mut records = 0;
    for p in 0..40i64 {
        let messages: Vec<BridgeMessage> = (0..12)
            .map(|m| BridgeMessage {
                message_id: p * 100 + m,
                seq: m,
                role: if m % 2 == 0 { "user".into() } else { "assistant".into() },
                text: text((p * 100 + m) as usize),
                timestamp: Some(1_700_000_000_000 + m * 1000),
                speaker: None,
            })
            .collect();
        let payload = SummaryPayload {
            summary_id: format!("sum_{p}"),
            session_id: "s".into(),
            session_key: None,
            agent_id: "main".into(),
            kind: SummaryKind::Leaf,
            depth: 0,
            content: messages.iter().map(|m| m.text.clone()).collect::<Vec<_>>().join("\n"),
            earliest: Some(1_700_000_000_000),
            latest: Some(1_700_000_100_000),
            messages,
            lead_in: Vec::new(),
            child_summary_ids: Vec::new(),
            project: None,
        };
        records += rt.ingest_summary(&payload)?.records;
    }
    let memory_ingest_records_per_s = records as f64 / t.elapsed().as_secs_f64();
    // The baseline embeds exactly what ingestion embedded (the summary record is as long as its
    // leaf, the windows a few lines), one batch per leaf as ingestion does.
    let stored = rt.store().list_records(&RecordFilter::default(), 0, records + 1)?.items;
    let mut per_leaf: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for r in &stored {
        per_leaf.entry(r.source_summary_ids.first().cloned().unwrap_or_default()).or_default().push(&r.text);
    }
    let t = Instant::now();
    for texts in per_leaf.values() {
        embedder.embed(texts)?;
    }
    let embedder_alone_per_s = stored.len() as f64 / t.elapsed().as_secs_f64();

    let mut memory = Vec::new();
    for &n in sizes {
        progress(&format!("memory {n} records"));
        let dir = tempfile::tempdir()?;
        {
            let store = SqliteStore::open(&dir.path().join("m.db"))?;
            let (recs, vecs) = bench_records(n, dim);
            for chunk in (0..n).collect::<Vec<_>>().chunks(5000) {
                let inserts: Vec<Insert<'_>> = chunk
                    .iter()
                    .map(|&i| Insert {
                        record: &recs[i],
                        vector: Some((model.as_str(), vecs[i].as_slice())),
                        triples: &[],
                    })
                    .collect();
                store.insert_many(&inserts)?;
            }
        }
        let rt = MemoryRuntime::open(&dir.path().join("m.db"), MemoryConfig::default(), embedder.clone())?;
        let queries: Vec<String> = (0..samples)
            .map(|i| {
                format!("what did we decide about the {} and the {}?", word(i * 7919), WORDS[(i * 7) % WORDS.len()])
            })
            .collect();
        let retrieve = timed(samples, |i| {
            let q = RecallQuery {
                agent_id: "main".into(),
                session_id: "s".into(),
                text: queries[i].clone(),
                as_of: None,
                ..Default::default()
            };
            rt.retrieve(&q, ContextConfig::default().memory_max_tokens).map(|_| ()).map_err(Into::into)
        })?;
        // The records are dated from 14 November 2023, a minute apart: November holds all of
        // 10k, a quarter of 100k.
        let dated: Vec<String> =
            queries.iter().map(|q| format!("{} in November 2023?", q.trim_end_matches('?'))).collect();
        let retrieve_dated = timed(samples, |i| {
            let q = RecallQuery {
                agent_id: "main".into(),
                session_id: "s".into(),
                text: dated[i].clone(),
                as_of: None,
                ..Default::default()
            };
            rt.retrieve(&q, ContextConfig::default().memory_max_tokens).map(|_| ()).map_err(Into::into)
        })?;
        let memory_search =
            timed(samples, |i| rt.memory_search("main", &queries[i], 10, 0.0, None).map(|_| ()).map_err(Into::into))?;
        let query_embedding = timed(samples, |i| embedder.embed(&[&queries[i]]).map(|_| ()).map_err(Into::into))?;
        memory.push(MemoryRow { records: n, retrieve, retrieve_dated, memory_search, query_embedding });
    }

    progress("vector scan");
    let scan_vectors = sizes.iter().copied().max().unwrap_or(10_000).max(1);
    let random: Vec<Vec<f32>> = (0..scan_vectors).map(|i| unit(i as u64 + 7, dim)).collect();
    let random_queries: Vec<Vec<f32>> = (0..30u64).map(|qi| unit(1_000_000 + qi, dim)).collect();
    let (scan_recall_at_10, t_scan, t_brute) = vector_scan(random, &random_queries);
    let topical_vectors: Vec<Vec<f32>> = (0..scan_vectors).map(|i| topical(i as u64, dim)).collect();
    // Questions near a stored fact: a stored vector, moved a little.
    let topical_queries: Vec<Vec<f32>> = (0..30u64)
        .map(|qi| {
            let near = &topical_vectors[(qi as usize * 7919) % scan_vectors];
            near.iter().zip(unit(2_000_000 + qi, dim)).map(|(a, b)| a + 0.3 * b).collect()
        })
        .collect();
    let (scan_recall_at_10_topical, _, _) = vector_scan(topical_vectors, &topical_queries);
    Ok(SpeedReport {
        machine: crate::machine(),
        embedder: model,
        ingest_messages_per_s,
        bare_insert_per_s,
        memory_ingest_records_per_s,
        embedder_alone_per_s,
        context,
        bulk: bulk_rows,
        memory,
        scan_vectors,
        scan: latency(t_scan),
        scan_recall_at_10,
        scan_recall_at_10_topical,
        brute_force: latency(t_brute),
    })
}

/// `vectors` in a [`FlatScan`] (exact vectors served from memory) searched for each query, beside
/// brute-force f32 search: recall@10 against it and both latencies.
fn vector_scan(vectors: Vec<Vec<f32>>, queries: &[Vec<f32>]) -> (f64, Vec<Duration>, Vec<Duration>) {
    let dim = queries.first().map_or(0, Vec::len);
    let vectors = Arc::new(vectors);
    let source = vectors.clone();
    let scan = FlatScan::new(
        dim,
        Some(Box::new(move |ids: &[i64]| Ok(ids.iter().map(|&i| (i, source[i as usize].clone())).collect()))),
    );
    for (i, v) in vectors.iter().enumerate() {
        scan.upsert(i as i64, "a", v);
    }
    let owners = vec!["a".to_string()];
    let (mut found, mut wanted, mut t_scan, mut t_brute) = (0usize, 0usize, Vec::new(), Vec::new());
    for q in queries {
        let t = Instant::now();
        let mut truth: Vec<(usize, f32)> =
            vectors.iter().enumerate().map(|(i, v)| (i, v.iter().zip(q).map(|(a, b)| a * b).sum())).collect();
        let k = truth.len().min(10);
        if k < truth.len() {
            truth.select_nth_unstable_by(k, |a, b| b.1.total_cmp(&a.1));
        }
        t_brute.push(t.elapsed());
        let top: Vec<i64> = truth[..k].iter().map(|x| x.0 as i64).collect();
        let t = Instant::now();
        let got = scan.search(q, 10, &owners).unwrap_or_default();
        t_scan.push(t.elapsed());
        found += got.iter().filter(|h| top.contains(&h.id)).count();
        wanted += k;
    }
    (found as f64 / wanted.max(1) as f64, t_scan, t_brute)
}

/// A unit vector near one of 20 topics (the topic plus noise 1.5 times its length): benchmark data
/// with neighbours, as embeddings have.
pub fn topical(seed: u64, dim: usize) -> Vec<f32> {
    let topic = unit(seed % 20 + 3_000_000, dim);
    let mut v: Vec<f32> = topic.iter().zip(unit(seed, dim)).map(|(t, n)| t + 1.5 * n).collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

pub fn markdown(r: &SpeedReport) -> String {
    let mut s = format!(
        "MemCC speed — {} cores ({}), embedder {}\n\n\
         | throughput | MemCC | baseline (same run) | ratio |\n|---|---|---|---|\n\
         | context ingest, batched 500 (msg/s) | {:.0} | bare SQLite insert {:.0} | {:.2} |\n\
         | memory ingest from the bridge, embedding included (records/s) | {:.0} | embedder alone {:.0} | {:.2} |\n\n\
         | messages | assemble p50 / p99 ms | baseline p50 / p99 ms | grep p50 / p99 ms | compact per turn p50 / p99 ms | assemble with memory p50 / p99 ms |\n|---|---|---|---|---|---|\n",
        r.machine.cores,
        r.machine.cpu,
        r.embedder,
        r.ingest_messages_per_s,
        r.bare_insert_per_s,
        r.ingest_messages_per_s / r.bare_insert_per_s,
        r.memory_ingest_records_per_s,
        r.embedder_alone_per_s,
        r.memory_ingest_records_per_s / r.embedder_alone_per_s
    );
    for c in &r.context {
        s.push_str(&format!(
            "| {} | {:.3} / {:.3} | {:.3} / {:.3} | {:.3} / {:.3} | {:.3} / {:.3} | {} |\n",
            c.messages,
            c.assemble.p50_ms,
            c.assemble.p99_ms,
            c.baseline.p50_ms,
            c.baseline.p99_ms,
            c.grep.p50_ms,
            c.grep.p99_ms,
            c.compact_per_turn.p50_ms,
            c.compact_per_turn.p99_ms,
            c.assemble_with_memory.map_or_else(|| "–".into(), |l| format!("{:.2} / {:.2}", l.p50_ms, l.p99_ms))
        ));
    }
    if !r.bulk.is_empty() {
        s.push_str("\n| imported session (messages) | compacted in one call (msg/s, context only) | ingested, batched (msg/s, baseline) |\n|---|---|---|\n");
        for b in &r.bulk {
            s.push_str(&format!(
                "| {} | {:.0} | {:.0} |\n",
                b.messages, b.compact_messages_per_s, b.ingest_messages_per_s
            ));
        }
    }
    s.push_str("\n| records | retrieve (4 layers, default cap) p50 / p99 ms | the same, naming a month p50 / p99 ms | memory_search p50 / p99 ms | query embedding p50 ms |\n|---|---|---|---|---|\n");
    for m in &r.memory {
        s.push_str(&format!(
            "| {} | {:.2} / {:.2} | {:.2} / {:.2} | {:.2} / {:.2} | {:.2} |\n",
            m.records,
            m.retrieve.p50_ms,
            m.retrieve.p99_ms,
            m.retrieve_dated.p50_ms,
            m.retrieve_dated.p99_ms,
            m.memory_search.p50_ms,
            m.memory_search.p99_ms,
            m.query_embedding.p50_ms
        ));
    }
    s.push_str(&format!(
        "\nvector search over {} vectors: flat scan (sign-bit shortlist from 20k, int8, f32 rerank) p50/p99 {:.2}/{:.2} ms, \
         recall@10 {:.3} on vectors with neighbours, {:.3} on random ones (near-ties only: the worst case); \
         brute-force f32 (baseline) {:.2}/{:.2} ms. An HNSW comparison: `cargo bench -p memcc-bench --features ann --bench vectors`.\n",
        r.scan_vectors,
        r.scan.p50_ms,
        r.scan.p99_ms,
        r.scan_recall_at_10_topical,
        r.scan_recall_at_10,
        r.brute_force.p50_ms,
        r.brute_force.p99_ms
    ));
    s
}
