//! Sharing one memory across machines: two `memcc` processes on two data directories, one
//! PostgreSQL database (`memory.backend: "postgres"`). What one learns, the other recalls at
//! once; each keeps its conversations (the context DAG) local. Against a real server
//! (`$MEMCC_TEST_PG_URL`; SKIP without one, a failure under `CI=true`).

mod common;

use std::io::Write;
use std::process::Output;

use common::ok;

#[test]
fn two_processes_on_two_data_dirs_share_one_memory() {
    let dir = tempfile::tempdir().unwrap();
    let Some(url) = memcc_testkit::postgres_database(&dir.path().to_string_lossy()) else { return };
    let config = dir.path().join("shared.json");
    std::fs::write(&config, serde_json::json!({ "memory": { "backend": "postgres", "postgresUrl": url } }).to_string())
        .unwrap();
    let (laptop, server) = (dir.path().join("laptop"), dir.path().join("server"));
    let run = |home: &std::path::Path, args: &[&str]| -> Output {
        let mut all = vec!["--config", config.to_str().unwrap()];
        all.extend_from_slice(args);
        common::run(home, &all)
    };

    let file = dir.path().join("talk.jsonl");
    let mut f = std::fs::File::create(&file).unwrap();
    writeln!(
        f,
        r#"{{"role": "user", "content": "Our release train leaves every second Tuesday.", "timestamp": 1767261600000}}"#
    )
    .unwrap();
    writeln!(f, r#"{{"role": "assistant", "content": "Noted: every second Tuesday.", "timestamp": 1767261601000}}"#)
        .unwrap();
    drop(f);
    ok(run(&laptop, &["ingest", "--session", "s1", file.to_str().unwrap()]));
    ok(run(&laptop, &["flush", "--session", "s1"]));

    // The server never saw the conversation, yet recalls what it taught.
    let found = ok(run(&server, &["memory", "search", "when does the release train leave"]));
    assert!(found.contains("second Tuesday"), "{found}");
    assert_eq!(ok(run(&server, &["--json", "grep", "release train"])).trim(), "[]", "the context DAG stays local");
    // And the other way, immediately.
    ok(run(&server, &["memory", "add", "The on-call phone number changed to 555-0199"]));
    assert!(ok(run(&laptop, &["memory", "search", "on-call phone number"])).contains("555-0199"));
    let stats = ok(run(&laptop, &["memory", "stats"]));
    assert!(stats.contains("in postgres"), "{stats}");
    assert!(ok(run(&server, &["memory", "verify"])).contains("PostgreSQL memory store integrity: ok"));
    assert!(!laptop.join("memory.db").exists() && !server.join("memory.db").exists(), "no local memory.db");
}
