//! Context engine speed: `cargo bench -p memcc-context --bench context [-- --quick]`.
//!
//! Reports p50/p99 latencies and throughputs, each beside a baseline measured in the same run
//! on the same machine (plain SQLite doing the least possible work), so the ratios travel
//! between machines better than the absolute figures.

use std::time::{Duration, Instant};

use memcc_context::message::{AgentMessage, ContentPart};
use memcc_context::{ContextConfig, ContextEngine, ContextStore, GrepRequest, SessionRef};

fn message(i: usize) -> AgentMessage {
    let text = format!(
        "Message {i}: Ana asked Bruno about invoice {} for the Lisbon office on day {}. {}",
        i * 7,
        i % 30,
        "We went over the budget and the timeline again. ".repeat(i % 5 + 1)
    );
    let m = if i % 2 == 0 { AgentMessage::user(&text) } else { AgentMessage::assistant(vec![ContentPart::text(text)]) };
    m.with_timestamp(1_700_000_000_000 + i as i64 * 1000)
}

fn percentiles(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize].as_secs_f64() * 1e3;
    (at(0.5), at(0.99))
}

fn time_n(n: usize, mut f: impl FnMut(usize)) -> Vec<Duration> {
    (0..n)
        .map(|i| {
            let t = Instant::now();
            f(i);
            t.elapsed()
        })
        .collect()
}

/// Baseline: the same rows inserted into a bare table, one transaction.
fn raw_insert_rate(n: usize) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("raw.db")).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.execute_batch("CREATE TABLE m (id INTEGER PRIMARY KEY, raw TEXT)").unwrap();
    let rows: Vec<String> = (0..n).map(|i| message(i).to_value().to_string()).collect();
    let t = Instant::now();
    let tx = conn.unchecked_transaction().unwrap();
    {
        let mut stmt = tx.prepare("INSERT INTO m (raw) VALUES (?1)").unwrap();
        for r in &rows {
            stmt.execute([r]).unwrap();
        }
    }
    tx.commit().unwrap();
    n as f64 / t.elapsed().as_secs_f64()
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let sizes: &[usize] = if quick { &[1_000, 10_000] } else { &[1_000, 10_000, 100_000] };
    let samples = if quick { 50 } else { 200 };
    println!("MemCC context engine benchmark ({} cores)", std::thread::available_parallelism().map_or(1, |n| n.get()));

    // Ingest throughput, batched (500 messages per call) vs a bare insert.
    let n = 20_000;
    let dir = tempfile::tempdir().unwrap();
    let engine =
        ContextEngine::new(ContextStore::open(&dir.path().join("c.db")).unwrap(), ContextConfig::default()).unwrap();
    let msgs: Vec<AgentMessage> = (0..n).map(message).collect();
    let t = Instant::now();
    for chunk in msgs.chunks(500) {
        engine.ingest_batch(&SessionRef::new("ingest"), chunk).unwrap();
    }
    let ours = n as f64 / t.elapsed().as_secs_f64();
    let raw = raw_insert_rate(n);
    println!(
        "ingest (batched 500): {ours:>10.0} msg/s   bare SQLite insert: {raw:>10.0} msg/s   ratio {:.2}",
        ours / raw
    );

    println!(
        "\n{:>8} | {:>22} | {:>22} | {:>22} | {:>18}",
        "messages", "assemble p50/p99 ms", "baseline p50/p99 ms", "grep p50/p99 ms", "compact/turn p50 ms"
    );
    for &size in sizes {
        let dir = tempfile::tempdir().unwrap();
        let engine =
            ContextEngine::new(ContextStore::open(&dir.path().join("c.db")).unwrap(), ContextConfig::default())
                .unwrap();
        let session = SessionRef::new("s");
        for chunk in (0..size).collect::<Vec<_>>().chunks(1000) {
            let batch: Vec<AgentMessage> = chunk.iter().map(|&i| message(i)).collect();
            engine.ingest_batch(&session, &batch).unwrap();
            engine.compact("s", 8_000, false).unwrap();
        }
        let assemble = time_n(samples, |_| {
            engine.assemble("s", 8_000, None).unwrap();
        });
        // Baseline: only reading the context item list, the least an assembler must do.
        let conv = engine.store().find_conversation("s").unwrap().unwrap();
        let baseline = time_n(samples, |_| {
            engine.store().context_items(conv.id).unwrap();
        });
        let grep = time_n(samples, |i| {
            let req = GrepRequest {
                pattern: format!("invoice {}", (i * 7919) % size * 7),
                session_id: Some("s".into()),
                ..Default::default()
            };
            engine.grep(&req).unwrap();
        });
        // Compaction bookkeeping per new turn: must not grow with history.
        let mut k = size;
        let compact = time_n(samples.min(100), |_| {
            engine.ingest_batch(&session, &[message(k), message(k + 1)]).unwrap();
            k += 2;
            engine.compact("s", 8_000, false).unwrap();
        });
        let (a50, a99) = percentiles(assemble);
        let (b50, b99) = percentiles(baseline);
        let (g50, g99) = percentiles(grep);
        let (c50, _) = percentiles(compact);
        println!(
            "{size:>8} | {a50:>9.3} / {a99:>9.3} | {b50:>9.3} / {b99:>9.3} | {g50:>9.3} / {g99:>9.3} | {c50:>18.3}   (assemble/baseline p50 {:.1}x)",
            a50 / b50.max(1e-9)
        );
    }
}
