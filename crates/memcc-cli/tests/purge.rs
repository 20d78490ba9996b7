//! `memcc purge --session S` deletes a conversation on request, raw messages and memories made
//! from it included; `memcc memory forget --purge` deletes one memory for good.

mod common;

use std::io::Write;

use common::{ok, run};

#[test]
fn a_purged_session_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let file = dir.path().join("t.jsonl");
    let mut f = std::fs::File::create(&file).unwrap();
    for (i, text) in
        ["My passport number is X1234567.", "Noted the passport number X1234567.", "Thanks!"].iter().enumerate()
    {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        writeln!(f, r#"{{"role": "{role}", "content": "{text}", "timestamp": {}}}"#, 1_767_261_600_000i64 + i as i64)
            .unwrap();
    }
    drop(f);
    ok(run(&home, &["ingest", "--session", "gone", file.to_str().unwrap()]));
    ok(run(&home, &["ingest", "--session", "kept", file.to_str().unwrap()]));
    ok(run(&home, &["flush", "--session", "gone"]));
    assert!(ok(run(&home, &["memory", "search", "passport number"])).contains("X1234567"));
    let report: serde_json::Value =
        serde_json::from_str(&ok(run(&home, &["--json", "purge", "--session", "gone"]))).unwrap();
    assert_eq!(report["messages"], 3, "{report}");
    assert!(report["memoryRecords"].as_u64().unwrap() >= 1, "{report}");
    assert!(!ok(run(&home, &["memory", "search", "passport number"])).contains("X1234567"), "no memory of it");
    let hits: serde_json::Value = serde_json::from_str(&ok(run(&home, &["--json", "grep", "X1234567"]))).unwrap();
    assert!(hits.as_array().unwrap().iter().all(|h| h["conversationId"] != report["conversationId"]));
    assert_eq!(hits.as_array().unwrap().len(), 2, "only the other session's two messages: {hits}");
    assert!(!run(&home, &["verify", "--session", "gone"]).status.success(), "the session is gone");
    ok(run(&home, &["verify", "--session", "kept"]));
    // One memory, for good.
    ok(run(&home, &["flush", "--session", "kept"]));
    let found: serde_json::Value =
        serde_json::from_str(&ok(run(&home, &["--json", "memory", "search", "passport number"]))).unwrap();
    let id = found[0]["id"].as_str().unwrap().to_string();
    ok(run(&home, &["memory", "forget", &id, "--purge"]));
    assert!(!run(&home, &["memory", "get", &id]).status.success());
    let exported = ok(run(&home, &["memory", "export"]));
    assert!(!exported.contains("X1234567"), "the record and what was made from its words are gone: {exported}");
}

/// A conversation's summaries keep an identity of their own after a purge: SQLite gives the
/// purged conversation's row ids out again, and summary ids made of them once told memory it had
/// the next conversation's summaries already — 100 of its 100 messages never reached memory.
/// Purging a session and importing its transcript again stores its memories again.
#[test]
fn what_follows_a_purge_reaches_memory_and_a_purged_transcript_imported_again_does_too() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let transcript = |name: &str, word: &str| {
        let file = dir.path().join(name);
        let mut f = std::fs::File::create(&file).unwrap();
        for i in 0..100i64 {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            writeln!(
                f,
                r#"{{"role": "{role}", "content": "Note {i}: the {word} code is {}.", "timestamp": {}}}"#,
                5000 + i,
                1_767_261_600_000i64 + i * 60_000
            )
            .unwrap();
        }
        file
    };
    let first = transcript("first.jsonl", "harbour");
    let second = transcript("second.jsonl", "lighthouse");
    let records = |home: &std::path::Path| -> i64 {
        let stats: serde_json::Value = serde_json::from_str(&ok(run(home, &["--json", "memory", "stats"]))).unwrap();
        stats["records"].as_i64().unwrap()
    };
    ok(run(&home, &["import", first.to_str().unwrap(), "--session", "first", "--flush"]));
    ok(run(&home, &["purge", "--session", "first"]));
    assert_eq!(records(&home), 0);
    // The next conversation takes the purged one's row ids.
    ok(run(&home, &["import", second.to_str().unwrap(), "--session", "second", "--flush"]));
    assert!(records(&home) > 0, "the conversation after a purge reached memory");
    assert!(ok(run(&home, &["memory", "search", "lighthouse code 5042"])).contains("lighthouse"));
    // The purged transcript again: its memories come back.
    let before = records(&home);
    ok(run(&home, &["import", first.to_str().unwrap(), "--session", "first", "--flush"]));
    assert!(records(&home) > before, "a purged transcript imported again is remembered again");
    assert!(ok(run(&home, &["memory", "search", "harbour code 5042"])).contains("harbour"));
}
