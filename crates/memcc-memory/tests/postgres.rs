//! What only a shared store must do: several runtimes on one PostgreSQL database see each other's
//! memories at once, and a connection dropped in the middle of a write loses nothing. Against a
//! real server (`$MEMCC_TEST_PG_URL`; SKIP without one, a failure under `CI=true`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use memcc_memory::embed::HashingEmbedder;
use memcc_memory::{MemoryConfig, MemoryRuntime, RecordKind, StoreBackend};

fn open(url: &str, dir: &tempfile::TempDir) -> MemoryRuntime {
    let config = MemoryConfig { backend: StoreBackend::Postgres, postgres_url: Some(url.into()), ..Default::default() };
    MemoryRuntime::open(&dir.path().join("memory.db"), config, Arc::new(HashingEmbedder::default())).unwrap()
}

#[test]
fn two_runtimes_on_one_database_see_each_others_memories_at_once() {
    let key = tempfile::tempdir().unwrap();
    let Some(url) = memcc_testkit::postgres_database(&key.path().to_string_lossy()) else { return };
    let (laptop_dir, server_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let laptop = open(&url, &laptop_dir);
    let server = open(&url, &server_dir);
    laptop.add("main", "The staging database password rotates every Friday", RecordKind::Fact, false, None).unwrap();
    let hits = server.memory_search("main", "when does the staging password rotate", 5, 0.0, None).unwrap();
    assert!(hits.iter().any(|h| h.text.contains("every Friday")), "{hits:?}");
    let id = &hits[0].id;
    assert!(server.forget("main", id).unwrap());
    let after = laptop.memory_search("main", "staging password rotate", 5, 0.0, None).unwrap();
    assert!(after.iter().all(|h| !h.text.contains("every Friday")), "a forget is seen at once too: {after:?}");
    assert!(!laptop_dir.path().join("memory.db").exists(), "no local memory.db with the postgres backend");
}

#[test]
fn a_connection_dropped_mid_write_loses_nothing() {
    let key = tempfile::tempdir().unwrap();
    let Some(url) = memcc_testkit::postgres_database(&key.path().to_string_lossy()) else { return };
    let dir = tempfile::tempdir().unwrap();
    let rt = Arc::new(open(&url, &dir));
    rt.add("main", "An earlier memory that must survive", RecordKind::Fact, false, None).unwrap();

    // Hold a lock the insert needs, so the write is caught inside its transaction.
    let mut locker = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let mut lock = locker.transaction().unwrap();
    lock.batch_execute("LOCK TABLE records IN EXCLUSIVE MODE").unwrap();
    let writer = {
        let rt = rt.clone();
        std::thread::spawn(move || {
            rt.add("main", "The spare key is under the blue flowerpot", RecordKind::Fact, false, None)
        })
    };
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let pid: i32 = loop {
        let waiting = admin
            .query_opt(
                "SELECT pid FROM pg_stat_activity WHERE application_name = 'memcc' AND wait_event_type = 'Lock'
                   AND datname = current_database()",
                &[],
            )
            .unwrap();
        if let Some(row) = waiting {
            break row.get(0);
        }
        assert!(Instant::now() < deadline, "the write never waited on the lock");
        std::thread::sleep(Duration::from_millis(20));
    };
    // The server ends the writer's session mid-transaction, then the lock goes.
    let ended: bool = admin.query_one("SELECT pg_terminate_backend($1)", &[&pid]).unwrap().get(0);
    assert!(ended);
    lock.rollback().unwrap();

    let stored = writer.join().unwrap().expect("the write is retried on a new connection");
    assert!(!stored.duplicate);
    let texts: Vec<String> = rt.store().get_many(&[stored.id]).unwrap().into_iter().map(|r| r.text).collect();
    assert_eq!(texts, vec!["The spare key is under the blue flowerpot".to_string()]);
    let stats = rt.stats().unwrap();
    assert_eq!(stats.records, 2, "stored once, and the earlier memory kept: {stats:?}");
    assert_eq!(stats.pending_embeddings, 0, "with its vector");
    let hits = rt.memory_search("main", "where is the spare key", 3, 0.0, None).unwrap();
    assert!(hits.iter().any(|h| h.text.contains("flowerpot")), "{hits:?}");
}

#[test]
fn a_bad_url_or_an_absent_server_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    for (url, expect) in [
        ("not a url ::", "postgresUrl"),
        ("postgres://memcc@127.0.0.1:1/none?connect_timeout=2", "PostgreSQL memory store (127.0.0.1:1/none)"),
    ] {
        let config =
            MemoryConfig { backend: StoreBackend::Postgres, postgres_url: Some(url.into()), ..Default::default() };
        let err = MemoryRuntime::open(&dir.path().join("memory.db"), config, Arc::new(HashingEmbedder::default()))
            .err()
            .expect("no store");
        assert!(err.to_string().contains(expect), "{url}: {err}");
    }
    // No URL at all (and none in the environment of this test process is assumed away).
    let config = MemoryConfig { backend: StoreBackend::Postgres, ..Default::default() };
    if std::env::var(memcc_memory::config::PG_URL_ENV).is_err() {
        let err = MemoryRuntime::open(&dir.path().join("memory.db"), config, Arc::new(HashingEmbedder::default()))
            .err()
            .expect("no URL");
        assert!(err.to_string().contains("MEMCC_PG_URL"), "{err}");
    }
}
