//! A `memcc compact` process killed with SIGKILL at arbitrary points: reopening passes
//! `PRAGMA integrity_check`, loses no ingested message, keeps the DAG lossless, and
//! compaction then continues to completion.

use memcc::lab::memory::store::{Inspection as _, Records as _};
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_memcc");

fn memcc(db: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN).arg("--home").arg(db).args(["--embedding-model", "hashing"]).args(args).output().unwrap()
}

fn verify(db: &std::path::Path) -> serde_json::Value {
    let out = memcc(db, &["--json", "verify", "--session", "k"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("verify output: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert!(out.status.success(), "verify failed: {report}");
    report
}

#[test]
fn killed_compaction_loses_nothing_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("home");
    let transcript = dir.path().join("t.jsonl");
    let mut f = std::fs::File::create(&transcript).unwrap();
    let n = 6_000;
    for i in 0..n {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        let text = format!("Message {i}: Ana met Bruno in Lisbon on day {} to discuss invoice {}. ", i % 30, i * 7)
            + &"More context about the project timeline and budget. ".repeat(i % 9 + 1);
        let content =
            if role == "user" { serde_json::json!(text) } else { serde_json::json!([{"type": "text", "text": text}]) };
        let line =
            serde_json::json!({"role": role, "content": content, "timestamp": 1_700_000_000_000i64 + i as i64 * 1000});
        writeln!(f, "{line}").unwrap();
    }
    drop(f);
    let out = memcc(&db, &["import", transcript.to_str().unwrap(), "--session", "k"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let mut interrupted = 0;
    for delay_ms in [40u64, 90, 160, 250, 400, 700] {
        let mut child = Command::new(BIN)
            .arg("--home")
            .arg(&db)
            .args(["--embedding-model", "hashing", "compact", "--session", "k", "--budget", "3000"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        if child.try_wait().unwrap().is_none() {
            interrupted += 1;
        }
        child.kill().ok(); // SIGKILL on Unix
        child.wait().unwrap();
        let report = verify(&db);
        assert_eq!(report["integrity"], "ok");
        assert_eq!(report["messages"], n, "no ingested message lost");
        assert_eq!(report["covered"], n);
    }
    assert!(interrupted >= 3, "the kills should land mid-compaction (only {interrupted} did)");

    let out = memcc(&db, &["--json", "compact", "--session", "k", "--budget", "3000"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let outcome: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(outcome["tokensAfter"].as_u64().unwrap() <= 2250, "{outcome}");
    verify(&db);
    // Every committed summary reached memory once the outbox drained (a kill between the
    // summary's commit and its hand-off used to lose it for memory).
    let context = memcc::lab::context::ContextStore::open(&db.join("context.db")).unwrap();
    let conv = context.find_conversation("main", "k").unwrap().unwrap();
    let memory = memcc::lab::memory::store::SqliteStore::open(&db.join("memory.db")).unwrap();
    let summaries = context.summaries(conv.id).unwrap();
    let missed: Vec<_> =
        summaries.iter().filter(|s| !memory.summary_ingested("main", &s.id).unwrap()).map(|s| s.id.clone()).collect();
    assert!(missed.is_empty(), "{} of {} summaries never reached memory: {missed:?}", missed.len(), summaries.len());
    assert_eq!(context.outbox_pending(Some(conv.id)).unwrap(), 0);
}

/// `memcc memory import` killed mid-way: the store opens clean, each record is either fully
/// there (with its vector when marked embedded) or absent, and a rerun completes the import.
#[test]
fn killed_memory_import_leaves_whole_records_only() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let file = dir.path().join("records.jsonl");
    let mut f = std::fs::File::create(&file).unwrap();
    let n = 20_000;
    for i in 0..n {
        let line = serde_json::json!({"agentId": "main", "kind": "fact", "text": format!("Record {i}: shelf {} holds box {} of the archive", i % 97, i * 3)});
        writeln!(f, "{line}").unwrap();
    }
    drop(f);
    let check = || {
        let store = memcc::lab::memory::store::SqliteStore::open(&home.join("memory.db")).unwrap();
        assert_eq!(store.integrity_check().unwrap(), "ok");
        let st = store.stats(None).unwrap();
        assert_eq!(st.records % 500, 0, "records land in whole batches: {}", st.records);
        assert_eq!(st.vectors, st.records - st.pending_embeddings, "embedded records have their vectors: {st:?}");
        st
    };
    let mut interrupted = 0;
    for delay_ms in [60u64, 150, 300, 600] {
        let mut child = Command::new(BIN)
            .arg("--home")
            .arg(&home)
            .args(["--embedding-model", "hashing", "memory", "import"])
            .arg(&file)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        if child.try_wait().unwrap().is_none() {
            interrupted += 1;
        }
        child.kill().ok();
        child.wait().unwrap();
        if home.join("memory.db").exists() {
            check();
        }
    }
    assert!(interrupted >= 2, "kills should land mid-import (only {interrupted} did)");
    let out = memcc(&home, &["memory", "import", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let st = check();
    assert_eq!(st.records, n as i64);
    assert_eq!(st.pending_embeddings, 0);
}
