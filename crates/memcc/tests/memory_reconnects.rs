//! A PostgreSQL memory store that is down when MemCC starts is not down for good: memory is
//! unavailable at once (callers are not held up), and comes back by itself when the server is
//! reachable, without a restart. A store that goes away mid-run does not stall the turns either:
//! memory calls fail at once while it is away, turns are appended at full speed, and what was
//! compacted meanwhile reaches memory once it is back. Against a real server
//! (`$MEMCC_TEST_PG_URL`; SKIP without one, a failure under `CI=true`), reached through a TCP
//! relay that starts late, or is cut and restored.

use std::io::copy;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use memcc::{Memcc, MemccConfig, MemccError};
use memcc_memory::{MemoryConfig, StoreBackend};

/// Relay every connection to `port` on to `target` (host:port), from now on. When either side
/// closes, both are closed: a server that goes away must look gone to the client, not silent.
fn relay(port: u16, target: String) {
    let listener = TcpListener::bind(("127.0.0.1", port)).expect("the relay's port is free again");
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = TcpStream::connect(&target) else { continue };
            for (mut from, mut to) in
                [(client.try_clone(), server.try_clone()), (server.try_clone(), client.try_clone())]
                    .into_iter()
                    .filter_map(|(a, b)| Some((a.ok()?, b.ok()?)))
            {
                std::thread::spawn(move || {
                    let _ = copy(&mut from, &mut to);
                    let _ = from.shutdown(Shutdown::Both);
                    let _ = to.shutdown(Shutdown::Both);
                });
            }
        }
    });
}

#[test]
fn memory_comes_back_when_the_database_does() {
    let key = tempfile::tempdir().unwrap();
    let Some(url) = memcc_testkit::postgres_database(&key.path().to_string_lossy()) else { return };
    // postgres://user@host:port/db → the server's host:port, and a URL through a port nobody serves yet.
    let (user, target, db) = memcc_testkit::postgres_url_parts(&url).unwrap();
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let relayed = format!("postgres://{user}@127.0.0.1:{port}/{db}");

    let dir = tempfile::tempdir().unwrap();
    let config = MemccConfig {
        data_dir: Some(dir.path().to_path_buf()),
        embedding_model: "hashing".into(),
        memory: MemoryConfig { backend: StoreBackend::Postgres, postgres_url: Some(relayed), ..Default::default() },
        ..Default::default()
    };
    let memcc = Memcc::open_background(config, None).unwrap();
    let started = Instant::now();
    let err = memcc.memory().err().expect("nothing listens yet");
    assert!(matches!(err, MemccError::MemoryUnavailable(_)), "{err}");
    assert!(err.to_string().contains("retrying"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5), "callers are not held up: {:?}", started.elapsed());

    relay(port, target);
    let deadline = Instant::now() + Duration::from_secs(20);
    let memory = loop {
        match memcc.memory() {
            Ok(m) => break m,
            Err(e) => assert!(Instant::now() < deadline, "memory never came back: {e}"),
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    memory
        .add("main", "The backup tapes go offsite every Thursday", memcc_memory::RecordKind::Fact, false, None)
        .unwrap();
    let hits = memory.memory_search("main", "when do the backup tapes go offsite", 3, 0.0, None).unwrap();
    assert!(hits.iter().any(|h| h.text.contains("Thursday")), "{hits:?}");
}

#[test]
fn an_outage_mid_run_stalls_no_turn_and_loses_nothing() {
    use memcc_context::message::AgentMessage;
    let key = tempfile::tempdir().unwrap();
    let Some(url) = memcc_testkit::postgres_database(&key.path().to_string_lossy()) else { return };
    let (user, target, db) = memcc_testkit::postgres_url_parts(&url).unwrap();
    let (switch, port) = memcc_testkit::TcpSwitch::start(target);
    let dir = tempfile::tempdir().unwrap();
    let config = MemccConfig {
        data_dir: Some(dir.path().to_path_buf()),
        embedding_model: "hashing".into(),
        memory: MemoryConfig {
            backend: StoreBackend::Postgres,
            postgres_url: Some(format!("postgres://{user}@127.0.0.1:{port}/{db}")),
            ..Default::default()
        },
        ..Default::default()
    };
    let memcc = Memcc::open(config).unwrap();
    let session = memcc_context::SessionRef::new("ops");
    let turn = |i: usize| {
        let text = match i {
            7 => "The generator's fuel code is 4417, keep it safe.".to_string(),
            _ => format!("Shift note {i}: the loading dock inventory of pallets and crates was checked again."),
        };
        AgentMessage::user(&text).with_timestamp(1_767_261_600_000 + i as i64 * 60_000)
    };
    for i in 0..4 {
        memcc.context.ingest(&session, &turn(i)).unwrap();
    }
    memcc.memory().unwrap().memory_search("main", "loading dock", 3, 0.0, None).unwrap();

    switch.cut();
    // The first call finds the server gone; the next ones fail at once.
    let first = Instant::now();
    let err = memcc.memory().unwrap().memory_search("main", "loading dock", 3, 0.0, None).unwrap_err();
    assert_eq!(err.code(), memcc_core::ErrorCode::MemoryUnavailable, "{err}");
    assert!(first.elapsed() < Duration::from_secs(3), "no five tries over 8.5 s: {:?}", first.elapsed());
    // 40 turns, compacted as a host does, while memory is away: the context side goes on (before
    // the breaker each memory touch waited out its tries: 76.5 s for 40 turns).
    let appending = Instant::now();
    for i in 4..44 {
        memcc.context.ingest(&session, &turn(i)).unwrap();
        memcc.context.compact("ops", 600, false).unwrap();
    }
    assert!(appending.elapsed() < Duration::from_secs(20), "turns stalled: {:?}", appending.elapsed());
    let waiting = memcc.context.stats(None).unwrap().pending_memory_handoffs;
    assert!(waiting > 0, "what was compacted waits for memory");

    switch.restore();
    // Back: the waiting summaries reach memory (each at its own back-off), nothing lost.
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let _ = memcc.context.hand_off_all();
        if memcc.context.stats(None).unwrap().pending_memory_handoffs == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "the outbox never drained");
        std::thread::sleep(Duration::from_millis(250));
    }
    let hits = memcc.memory().unwrap().memory_search("main", "generator fuel code", 5, 0.0, None).unwrap();
    assert!(hits.iter().any(|h| h.text.contains("4417")), "{hits:?}");
}
