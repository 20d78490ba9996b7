//! Memory runtime speed: `cargo bench -p memcc-memory --bench memory [-- --quick]`.
//!
//! - retrieve (all four layers, query embedding included) p50/p99 at 10k and 100k records;
//! - ingest records/s including embedding, beside the embedder alone (same run);
//! - the int8 scan + f32 rerank against brute-force f32 search: recall@10 and latency.
//!
//! Uses the local USE model when installed (MEMCC_MODEL_DIR or the default directory), else the
//! hashing embedder, and says which.

use std::sync::Arc;
use std::time::{Duration, Instant};

use memcc_core::bridge::{BridgeMessage, RecallQuery, SummaryPayload};
use memcc_memory::embed::usem3::{Usem3, default_dir};
use memcc_memory::embed::{Embedder, HashingEmbedder};
use memcc_memory::record::{NewRecord, RecordKind};
use memcc_memory::store::{Insert, MemoryStore};
use memcc_memory::vector::{ExactScan, VectorStore};
use memcc_memory::{MemoryConfig, MemoryRuntime};

const WORDS: &[&str] = &[
    "meeting", "Lisbon", "flight", "budget", "doctor", "invoice", "garden", "guitar", "daughter", "project",
    "deadline", "coffee", "hiking", "museum", "train", "hotel", "allergy", "peanuts", "birthday", "painting", "server",
    "deploy", "salary", "vacation", "recipe", "library", "concert", "marathon", "camera", "office", "weekend",
    "report", "北京", "咖啡", "会议", "旅行", "医生", "生日",
];

/// A pseudo-word of a 4,000-word vocabulary, drawn Zipf-like (rank ~ 1/u).
fn word(s: usize) -> String {
    const SYL: &[&str] =
        &["ka", "lo", "mi", "ren", "tas", "vo", "pel", "dra", "shu", "nit", "bor", "qui", "ze", "fan", "gol", "hu"];
    let u = (s % 10_000) as f64 / 10_000.0 + 1e-4;
    let rank = ((1.0 / u) as usize).min(4_000) + s % 3;
    if rank % 11 == 0 {
        return WORDS[rank % WORDS.len()].to_string();
    }
    (0..3).map(|k| SYL[(rank >> (4 * k)) % SYL.len()]).collect()
}

fn text(i: usize) -> String {
    let mut s = i.wrapping_mul(2654435761) | 1;
    let mut out = format!("Note {i}:");
    for _ in 0..14 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        out.push(' ');
        out.push_str(&word(s));
    }
    out
}

fn random_unit(seed: u64, dim: usize) -> Vec<f32> {
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

fn pct(mut d: Vec<Duration>) -> (f64, f64) {
    d.sort();
    let at = |q: f64| d[((d.len() as f64 - 1.0) * q).round() as usize].as_secs_f64() * 1e3;
    (at(0.5), at(0.99))
}

fn embedder() -> Arc<dyn Embedder> {
    let dir = std::env::var_os("MEMCC_MODEL_DIR").map(std::path::PathBuf::from).unwrap_or_else(default_dir);
    match Usem3::load(&dir) {
        Ok(m) => Arc::new(m),
        Err(e) => {
            println!("(USE model unavailable: {e}; using the hashing embedder)");
            Arc::new(HashingEmbedder { dim: 512 })
        }
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let embedder = embedder();
    let model = embedder.model_id();
    let dim = embedder.dim();
    println!("MemCC memory benchmark — embedder {model} ({dim}-d)\n");

    // Ingest including embedding, beside embedding alone.
    let dir = tempfile::tempdir().unwrap();
    let rt = MemoryRuntime::open(&dir.path().join("m.db"), MemoryConfig::default(), embedder.clone()).unwrap();
    let payloads: Vec<SummaryPayload> = (0..40)
        .map(|p| {
            let messages: Vec<BridgeMessage> = (0..12)
                .map(|m| BridgeMessage {
                    message_id: p * 100 + m,
                    seq: m,
                    role: if m % 2 == 0 { "user".into() } else { "assistant".into() },
                    text: text((p * 100 + m) as usize),
                    timestamp: Some(1_700_000_000_000 + m * 1000),
                })
                .collect();
            SummaryPayload {
                summary_id: format!("sum_{p}"),
                session_id: "s".into(),
                session_key: None,
                agent_id: "main".into(),
                kind: "leaf".into(),
                depth: 0,
                content: messages.iter().map(|m| m.text.clone()).collect::<Vec<_>>().join("\n"),
                earliest: Some(1_700_000_000_000),
                latest: Some(1_700_000_100_000),
                messages,
                child_summary_ids: Vec::new(),
            }
        })
        .collect();
    let t = Instant::now();
    let mut records = 0;
    for p in &payloads {
        records += rt.ingest_summary(p).unwrap().records;
    }
    let ingest_rate = records as f64 / t.elapsed().as_secs_f64();
    let texts: Vec<String> = (0..records)
        .map(|i| format!("[Date: 2023-11-14 22:13]\nuser: {}\nassistant: {}", text(i), text(i + 1)))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let t = Instant::now();
    embedder.embed(&refs).unwrap();
    let embed_rate = records as f64 / t.elapsed().as_secs_f64();
    println!(
        "ingest (bridge → records, embedding included): {ingest_rate:>8.0} records/s   embedder alone: {embed_rate:>8.0} texts/s   ratio {:.2}\n",
        ingest_rate / embed_rate
    );

    // Retrieve latency at 10k / 100k records.
    let sizes: &[usize] = if quick { &[10_000] } else { &[10_000, 100_000] };
    println!(
        "{:>8} | {:>24} | {:>24} | {:>26}",
        "records", "retrieve p50/p99 ms", "memory_search p50/p99 ms", "query embedding p50 ms"
    );
    for &n in sizes {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = MemoryStore::open(&dir.path().join("m.db")).unwrap();
            let recs: Vec<NewRecord> = (0..n)
                .map(|i| NewRecord {
                    text: text(i),
                    kind: RecordKind::Verbatim,
                    event_time: Some(1_700_000_000_000 + i as i64 * 60_000),
                    ..NewRecord::default()
                })
                .collect();
            let vecs: Vec<Vec<f32>> = (0..n).map(|i| random_unit(i as u64, dim)).collect();
            for chunk in (0..n).collect::<Vec<_>>().chunks(5000) {
                let inserts: Vec<Insert<'_>> = chunk
                    .iter()
                    .map(|&i| Insert {
                        record: &recs[i],
                        vector: Some((model.as_str(), vecs[i].as_slice())),
                        triples: &[],
                    })
                    .collect();
                store.insert_many(&inserts).unwrap();
            }
        }
        let rt = MemoryRuntime::open(&dir.path().join("m.db"), MemoryConfig::default(), embedder.clone()).unwrap();
        let samples = if quick { 30 } else { 100 };
        let queries: Vec<String> = (0..samples)
            .map(|i| {
                format!("what did we decide about the {} and the {}?", word(i * 7919), WORDS[(i * 7) % WORDS.len()])
            })
            .collect();
        let retrieve: Vec<Duration> = queries
            .iter()
            .map(|q| {
                let t = Instant::now();
                rt.retrieve(
                    &RecallQuery { agent_id: "main".into(), session_id: "s".into(), text: q.clone(), as_of: None },
                    2_000,
                )
                .unwrap();
                t.elapsed()
            })
            .collect();
        let search: Vec<Duration> = queries
            .iter()
            .map(|q| {
                let t = Instant::now();
                rt.memory_search("main", q, 10, 0.0, None).unwrap();
                t.elapsed()
            })
            .collect();
        let embed: Vec<Duration> = queries
            .iter()
            .map(|q| {
                let t = Instant::now();
                embedder.embed(&[q]).unwrap();
                t.elapsed()
            })
            .collect();
        let ((r50, r99), (s50, s99), (e50, _)) = (pct(retrieve), pct(search), pct(embed));
        println!("{n:>8} | {r50:>10.2} / {r99:>10.2} | {s50:>10.2} / {s99:>10.2} | {e50:>26.2}");
    }

    // Scan vs brute-force f32 (the exact baseline, same run).
    let n = if quick { 20_000 } else { 100_000 };
    let vectors: Arc<Vec<Vec<f32>>> = Arc::new((0..n).map(|i| random_unit(i as u64 + 7, dim)).collect());
    let source = vectors.clone();
    let scan = ExactScan::new(
        dim,
        Some(Box::new(move |ids: &[i64]| ids.iter().map(|&i| (i, source[i as usize].clone())).collect())),
    );
    for (i, v) in vectors.iter().enumerate() {
        scan.upsert(i as i64, "a", v);
    }
    let owners = vec!["a".to_string()];
    let (mut found, mut total) = (0usize, 0usize);
    let (mut t_scan, mut t_brute) = (Vec::new(), Vec::new());
    for qi in 0..30u64 {
        let q = random_unit(1_000_000 + qi, dim);
        let t = Instant::now();
        let mut truth: Vec<(usize, f32)> =
            vectors.iter().enumerate().map(|(i, v)| (i, v.iter().zip(&q).map(|(a, b)| a * b).sum())).collect();
        truth.select_nth_unstable_by(10, |a, b| b.1.total_cmp(&a.1));
        t_brute.push(t.elapsed());
        let top: Vec<i64> = truth[..10].iter().map(|x| x.0 as i64).collect();
        let t = Instant::now();
        let got = scan.search(&q, 10, &owners);
        t_scan.push(t.elapsed());
        found += got.iter().filter(|h| top.contains(&h.id)).count();
        total += 10;
    }
    let ((s50, s99), (b50, b99)) = (pct(t_scan), pct(t_brute));
    println!(
        "\nvector search over {n} × {dim}: int8 scan + 4× f32 rerank p50/p99 {s50:.2}/{s99:.2} ms, recall@10 {:.3}; \
         brute-force f32 p50/p99 {b50:.2}/{b99:.2} ms (scan/brute p50 {:.2}x). No ANN index is implemented yet.",
        found as f64 / total as f64,
        s50 / b50
    );
}
