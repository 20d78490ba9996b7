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

    // A conversation of the same name and length on each machine, as the same agent: each
    // data dir's row ids are the same, and summary ids made of them once passed the second
    // machine's summaries for the first's — all of its messages never reached memory.
    let words = |word: &str| {
        let file = dir.path().join(format!("{word}.jsonl"));
        let mut f = std::fs::File::create(&file).unwrap();
        for i in 0..40i64 {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            writeln!(
                f,
                r#"{{"role": "{role}", "content": "Step {i}: the {word} rota is {}.", "timestamp": {}}}"#,
                300 + i,
                1_767_261_600_000 + i * 60_000
            )
            .unwrap();
        }
        file
    };
    ok(run(&laptop, &["import", words("kitchen").to_str().unwrap(), "--session", "rota", "--flush"]));
    ok(run(&server, &["import", words("garden").to_str().unwrap(), "--session", "rota", "--flush"]));
    assert!(
        ok(run(&laptop, &["memory", "search", "garden rota 321"])).contains("garden"),
        "the second machine's conversation reached memory"
    );
    assert!(ok(run(&server, &["memory", "search", "kitchen rota 321"])).contains("kitchen"));
}

/// PostgreSQL goes away under a running `memcc mcp`: memory calls answer `memory_unavailable`
/// at once, turns are appended (and compacted) at full speed meanwhile, and once the server is
/// back what was compacted during the outage reaches memory — nothing lost.
#[test]
fn an_outage_under_a_running_mcp_server_stalls_no_turn_and_loses_nothing() {
    use std::time::{Duration, Instant};

    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let Some(url) = memcc_testkit::postgres_database(&dir.path().to_string_lossy()) else { return };
    let (user, target, db) = memcc_testkit::postgres_url_parts(&url).unwrap();
    let (switch, port) = memcc_testkit::TcpSwitch::start(target);
    let config = dir.path().join("relayed.json");
    let relayed = format!("postgres://{user}@127.0.0.1:{port}/{db}");
    std::fs::write(&config, json!({ "memory": { "backend": "postgres", "postgresUrl": relayed } }).to_string())
        .unwrap();
    let home = dir.path().join("home");
    let mut mcp = common::McpClient::start(
        &home,
        &["--config", config.to_str().unwrap(), "mcp", "--session", "ops", "--budget", "600"],
    );
    let turn = |i: usize| {
        let text = match i {
            7 => "The generator's fuel code is 4417, keep it safe.".to_string(),
            _ => format!("Shift note {i}: the loading dock inventory of pallets and crates was checked again."),
        };
        json!({"messages": [{"role": "user", "content": text, "timestamp": 1_767_261_600_000i64 + i as i64 * 60_000}]})
    };
    for i in 0..4 {
        mcp.call("conversation_append", turn(i)).unwrap();
    }
    mcp.call("memory_search", json!({"query": "loading dock"})).unwrap();

    switch.cut();
    let first = Instant::now();
    let err = mcp.call("memory_search", json!({"query": "loading dock"})).unwrap_err();
    assert!(err.contains("[memory_unavailable]"), "{err}");
    assert!(first.elapsed() < Duration::from_secs(3), "no five tries over 8.5 s: {:?}", first.elapsed());
    let appending = Instant::now();
    for i in 4..44 {
        let appended = mcp.call("conversation_append", turn(i)).unwrap();
        assert!(appended.contains("\"added\":1") || appended.contains("\"added\": 1"), "{appended}");
    }
    assert!(appending.elapsed() < Duration::from_secs(20), "turns stalled: {:?}", appending.elapsed());
    let assembled = mcp.call("conversation_assemble", json!({})).unwrap();
    assert!(assembled.contains("Shift note 43"), "the prompt goes on without memory");

    switch.restore();
    // Back: what waits in the outbox goes with the next turns (each at its own back-off).
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut i = 44;
    loop {
        mcp.call("conversation_append", turn(i)).unwrap();
        i += 1;
        let found = mcp.call("memory_search", json!({"query": "generator fuel code"}));
        if found.is_ok_and(|f| f.contains("4417")) {
            break;
        }
        assert!(Instant::now() < deadline, "what was compacted in the outage never reached memory");
        std::thread::sleep(Duration::from_millis(500));
    }
    drop(mcp);
    let stats =
        common::ok(common::run(&home, &["--config", config.to_str().unwrap(), "--json", "stats", "--session", "ops"]));
    let stats: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(stats["messages"], i, "every turn stored: {stats}");
}
