//! The context side goes on when memory cannot open (issue: context commands used to exit 1 and
//! store nothing): with `memory.db` corrupt, `import`, `compact`, `flush` and `assemble` store
//! and read the conversation and say memory is unavailable; memory commands and `purge` (which
//! must delete what memory made) fail clearly; once memory opens again, what waited in the
//! outbox reaches it.

mod common;

use common::{ok, run};

#[test]
fn conversation_commands_go_on_when_memory_cannot_open_and_memory_catches_up() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    ok(run(h, &["memory", "stats"]));
    let turns = h.join("t.jsonl");
    std::fs::write(
        &turns,
        "{\"role\":\"user\",\"content\":\"My locker code is 5150.\"}\n{\"role\":\"assistant\",\"content\":\"Noted: 5150.\"}\n",
    )
    .unwrap();
    // memory.db is not a database any more.
    for f in ["memory.db-wal", "memory.db-shm"] {
        let _ = std::fs::remove_file(h.join(f));
    }
    std::fs::write(h.join("memory.db"), vec![0x5a; 8192]).unwrap();
    for args in [
        vec!["import", turns.to_str().unwrap(), "--session", "s1"],
        vec!["compact", "--session", "s1", "--budget", "8000"],
        vec!["flush", "--session", "s1"],
        vec!["assemble", "--session", "s1", "--budget", "2000"],
    ] {
        let out = run(h, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {stderr}");
        assert!(stderr.contains("long-term memory is unavailable"), "{args:?} says so: {stderr}");
    }
    let stats = ok(run(h, &["--json", "stats"]));
    let stats: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(stats["messages"], 2, "{stats}");
    assert!(stats["pending_memory_handoffs"].as_i64().unwrap() >= 1, "the summary waits for memory: {stats}");
    for args in [vec!["memory", "search", "locker"], vec!["purge", "--session", "s1"]] {
        let out = run(h, &args);
        assert!(!out.status.success(), "{args:?} needs memory");
        assert!(String::from_utf8_lossy(&out.stderr).contains("not a database"), "{args:?}: a clear error");
    }
    // Memory is mended (a fresh store): the next run hands the waiting summary to it, once the
    // one failed try's back-off (1 s) has passed.
    std::fs::remove_file(h.join("memory.db")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    let found = ok(run(h, &["memory", "search", "locker code"]));
    assert!(found.contains("5150"), "{found}");
}

/// A disk that fills while summaries wait for memory: the hand-off every command starts with
/// cannot record its try, yet `assemble` still builds the prompt (it used to exit 1, "handing
/// waiting summaries to memory"), and the summaries still wait, for the next run.
#[test]
fn a_full_disk_at_the_hand_off_still_builds_the_prompt() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let turns = h.join("t.jsonl");
    let lines: String = (0..40)
        .map(|i| {
            format!(
                "{{\"role\":\"user\",\"content\":\"Turn {i}: my locker code is 5150 and the boxes go in the van. {}\"}}\n",
                "We went over the moving plan again. ".repeat(8)
            )
        })
        .collect();
    std::fs::write(&turns, lines).unwrap();
    ok(run(h, &["import", turns.to_str().unwrap(), "--session", "s1"]));
    // SQLite's own "database or disk is full", from triggers on real files: memory refuses each
    // summary, then the context store cannot note a try.
    let full = |db: &str, sql: &str| rusqlite::Connection::open(h.join(db)).unwrap().execute_batch(sql).unwrap();
    full(
        "memory.db",
        "CREATE TRIGGER full BEFORE INSERT ON records BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END;",
    );
    ok(run(h, &["compact", "--session", "s1", "--budget", "1500"]));
    full(
        "context.db",
        "UPDATE memory_outbox SET next_attempt_at = 0;
         CREATE TRIGGER full BEFORE UPDATE ON memory_outbox BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END;",
    );
    let waiting = |h: &std::path::Path| -> i64 {
        rusqlite::Connection::open(h.join("context.db"))
            .unwrap()
            .query_row("SELECT COUNT(*) FROM memory_outbox", [], |r| r.get(0))
            .unwrap()
    };
    let before = waiting(h);
    assert!(before > 0, "summaries wait for memory");

    let out = run(h, &["--json", "assemble", "--session", "s1", "--budget", "2000"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "assemble builds the prompt on a full disk: {stderr}");
    let prompt: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(prompt["estimatedTokens"].as_u64().unwrap() > 0, "{prompt}");
    assert!(stderr.contains("stay waiting"), "the failed hand-off is said: {stderr}");
    assert_eq!(waiting(h), before, "nothing waiting was lost");
}
