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
