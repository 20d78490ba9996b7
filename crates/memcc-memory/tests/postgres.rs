//! What only a shared store must do: several runtimes on one PostgreSQL database see each other's
//! memories at once, and a connection dropped in the middle of a write loses nothing. Against a
//! real server (`$MEMCC_TEST_PG_URL`; SKIP without one, a failure under `CI=true`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use memcc_memory::embed::HashingEmbedder;
use memcc_memory::{MemoryConfig, MemoryRuntime, RecordKind, StoreBackend};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

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

/// A server that accepts the connection and never answers (a wedged proxy, a stopped process
/// behind a listening socket) is `memory_unavailable` within the connect timeout — the driver
/// bounded only the TCP connect, and `memory search` and even `ingest` hung for good.
#[test]
fn a_server_that_accepts_and_never_answers_is_unavailable_not_a_hang() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream); // kept open, never answered
        }
    });
    let (done, waiting) = std::sync::mpsc::channel();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    std::thread::spawn(move || {
        let url = format!("postgres://memcc@127.0.0.1:{port}/none?sslmode=disable&connect_timeout=1");
        let config = MemoryConfig { backend: StoreBackend::Postgres, postgres_url: Some(url), ..Default::default() };
        let _ = done.send(MemoryRuntime::open(&path, config, Arc::new(HashingEmbedder::default())).err());
    });
    // A liveness bound, far above the 1 s asked for: failing it means the open hung.
    let err = waiting.recv_timeout(Duration::from_secs(60)).expect("the open returned");
    assert!(matches!(err, Some(memcc_memory::MemoryError::Unavailable(_))), "{err:?}");
    assert!(err.unwrap().to_string().contains("no answer within 1 s"));
}

/// A lock another session holds fails a call at the lock timeout (`memory_unavailable`, the
/// breaker open for a moment) instead of stalling it; once the lock goes, memory is back.
#[test]
fn a_lock_held_elsewhere_fails_a_call_at_the_lock_timeout_and_memory_comes_back() {
    let key = tempfile::tempdir().unwrap();
    let Some(url) = memcc_testkit::postgres_database(&key.path().to_string_lossy()) else { return };
    let dir = tempfile::tempdir().unwrap();
    // The URL's own limit wins over MemCC's default (5 s), so the test waits 1 s.
    let rt = open(&format!("{url}?options=-c%20lock_timeout%3D1s"), &dir);
    rt.add("main", "The build cache lives on the NAS", RecordKind::Fact, false, None).unwrap();
    let mut locker = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let mut lock = locker.transaction().unwrap();
    lock.batch_execute("LOCK TABLE records IN ACCESS EXCLUSIVE MODE").unwrap();
    let err = rt.add("main", "The nightly job starts at 02:00", RecordKind::Fact, false, None).unwrap_err();
    assert!(matches!(err, memcc_memory::MemoryError::Unavailable(_)), "{err:?}");
    assert!(err.to_string().contains("lock timeout"), "{err}");
    lock.rollback().unwrap();
    std::thread::sleep(Duration::from_millis(1_200)); // the breaker's first wait
    rt.add("main", "The nightly job starts at 02:00", RecordKind::Fact, false, None).expect("memory is back");
    assert_eq!(rt.stats().unwrap().records, 2);
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
    // Unreachable may pass (retried by the facade); refused needs a person (final).
    let config = MemoryConfig {
        backend: StoreBackend::Postgres,
        postgres_url: Some("postgres://memcc@127.0.0.1:1/none?connect_timeout=2".into()),
        ..Default::default()
    };
    let err = MemoryRuntime::open(&dir.path().join("memory.db"), config, Arc::new(HashingEmbedder::default())).err();
    assert!(matches!(err, Some(memcc_memory::MemoryError::Unavailable(_))), "{err:?}");
    if let Some(url) = memcc_testkit::postgres_database(&dir.path().to_string_lossy()) {
        let (server, _) = url.rsplit_once('/').unwrap();
        let config = MemoryConfig {
            backend: StoreBackend::Postgres,
            postgres_url: Some(format!("{server}/memcc_no_such_database")),
            ..Default::default()
        };
        let err = MemoryRuntime::open(&dir.path().join("memory.db"), config, Arc::new(HashingEmbedder::default()))
            .err()
            .expect("no such database");
        assert!(matches!(err, memcc_memory::MemoryError::Config(_)), "{err:?}");
        assert!(err.to_string().contains("does not exist"), "{err}");
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

/// A PostgreSQL front that speaks TLS, as a server with `ssl=on` does: it answers the client's
/// SSLRequest with `S`, completes the handshake with a certificate for 127.0.0.1 that `ca`
/// signed, then relays the decrypted protocol to the real server at `target`. Returns its port.
fn tls_front(target: String) -> (u16, String, std::sync::mpsc::Receiver<()>) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap().signed_by(&key, &issuer).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls_pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap(),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (handshaken, seen) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            listener.set_nonblocking(true).unwrap();
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((mut client, _)) = listener.accept().await else { continue };
                let (acceptor, target, handshaken) = (acceptor.clone(), target.clone(), handshaken.clone());
                tokio::spawn(async move {
                    let mut request = [0u8; 8];
                    client.read_exact(&mut request).await.ok()?;
                    // Only TLS clients are served: length 8, code 80877103.
                    (request == [0, 0, 0, 8, 4, 210, 22, 47]).then_some(())?;
                    client.write_all(b"S").await.ok()?;
                    let mut tls = acceptor.accept(client).await.ok()?;
                    let _ = handshaken.send(());
                    let mut server = tokio::net::TcpStream::connect(target).await.ok()?;
                    tokio::io::copy_bidirectional(&mut tls, &mut server).await.ok()
                });
            }
        });
    });
    (port, ca.pem(), seen)
}

/// TLS as the URL's `sslmode` says, the server's certificate checked: a private CA's certificate
/// is trusted through `memory.postgresCaFile`; without it `sslmode=require` is refused with a
/// clear error; a CA file without certificates is a configuration error.
#[test]
fn tls_is_used_and_the_servers_certificate_is_checked() {
    let key = tempfile::tempdir().unwrap();
    let Some(url) = memcc_testkit::postgres_database(&key.path().to_string_lossy()) else { return };
    let (user, target, db) = memcc_testkit::postgres_url_parts(&url).unwrap();
    let (port, ca_pem, handshakes) = tls_front(target);
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, ca_pem).unwrap();
    let open = |url: &str, ca: Option<&std::path::Path>| {
        let config = MemoryConfig {
            backend: StoreBackend::Postgres,
            postgres_url: Some(url.into()),
            postgres_ca_file: ca.map(Into::into),
            ..Default::default()
        };
        MemoryRuntime::open(&dir.path().join("memory.db"), config, Arc::new(HashingEmbedder::default()))
    };
    let required = format!("postgres://{user}@127.0.0.1:{port}/{db}?sslmode=require");
    let err = open(&required, None).err().expect("a certificate of an unknown CA is refused");
    assert!(err.to_string().to_lowercase().contains("certificate"), "{err}");

    let rt = open(&required, Some(&ca)).unwrap();
    assert!(handshakes.try_recv().is_ok(), "the connection went through the TLS handshake");
    rt.add("main", "The VPN config lives in the ops vault", RecordKind::Fact, false, None).unwrap();
    let hits = rt.memory_search("main", "where is the VPN config", 3, 0.0, None).unwrap();
    assert!(hits.iter().any(|h| h.text.contains("ops vault")), "{hits:?}");

    let bad = dir.path().join("not-a-ca.pem");
    std::fs::write(&bad, "not a certificate").unwrap();
    let err = open(&required, Some(&bad)).err().expect("a CA file without certificates");
    assert!(err.to_string().contains("postgresCaFile"), "{err}");
}

#[test]
fn a_database_of_the_first_schema_is_upgraded_and_its_records_lengths_filled() {
    let key = tempfile::tempdir().unwrap();
    let Some(url) = memcc_testkit::postgres_database(&key.path().to_string_lossy()) else { return };
    let dir = tempfile::tempdir().unwrap();
    {
        let rt = open(&url, &dir);
        rt.add("main", "Lisbon, Lisbon, Lisbon: the trip is booked", RecordKind::Fact, false, None).unwrap();
        rt.add("main", "The train to Madrid leaves at nine", RecordKind::Fact, false, None).unwrap();
    }
    // Back to schema v1, as a database written by an earlier MemCC is.
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .batch_execute(
            "ALTER TABLE records DROP COLUMN fts_words; DROP FUNCTION memcc_fts_words(tsvector);
             DROP TABLE tombstones; ALTER TABLE records DROP COLUMN project;
             DROP TABLE session_messages, session_terms, sessions; DROP INDEX records_session;
             UPDATE memcc_schema SET version = 1",
        )
        .unwrap();
    let rt = open(&url, &dir);
    let rows = admin.query("SELECT text, fts_words FROM records ORDER BY id", &[]).unwrap();
    let words: Vec<(String, i32)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(words.len(), 2, "{words:?}");
    // English stop words are not indexed; a word said three times counts three times.
    assert_eq!(words[0].1, 5, "lisbon ×3, trip, booked: {words:?}");
    assert_eq!(words[1].1, 4, "train, madrid, leaves, nine: {words:?}");
    let hits = rt.memory_search("main", "which trip is booked to Lisbon", 5, 0.0, None).unwrap();
    assert!(hits.first().is_some_and(|h| h.text.contains("Lisbon")), "{hits:?}");
    let version: i64 = admin.query_one("SELECT version FROM memcc_schema", &[]).unwrap().get(0);
    assert_eq!(version, memcc_memory::store::postgres::PG_SCHEMA_VERSION);
}

/// Text that PostgreSQL and SQLite might each take differently: NUL and other control
/// characters, full-text query syntax, scripts of every kind, sizes around the record cap.
fn stored_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,120}",
        any::<String>(),
        "[a-z]{1,12}\u{0}[a-z \u{0}]{0,12}",
        Just("\u{0}".to_string()),
        Just(" \u{0} \t".to_string()),
        prop::sample::select(vec![
            "\" AND ( OR NEAR(",
            "*)(:^ & | ! <->",
            "'); DROP TABLE records; --",
            "E'\\\\x00' $$ $1 ::text",
            "北京大学 我们昨天去了",
            "👩‍👩‍👧‍👦 ﷽ \u{202e}",
        ])
        .prop_map(String::from),
        (31_990usize..32_010).prop_map(|n| "é".repeat(n)),
    ]
}

/// One rule for text on both backends: whatever an agent id, wing and text hold, PostgreSQL
/// stores what SQLite stores (or refuses it with the same code), and a search with that text
/// as the query is answered by both.
#[test]
fn any_text_is_kept_alike_by_both_backends_or_refused_alike() {
    let key = tempfile::tempdir().unwrap();
    let Some(url) = memcc_testkit::postgres_database(&key.path().to_string_lossy()) else { return };
    let (pg_dir, lite_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let pg = open(&url, &pg_dir);
    let lite = MemoryRuntime::open(
        &lite_dir.path().join("memory.db"),
        MemoryConfig::default(),
        Arc::new(HashingEmbedder::default()),
    )
    .unwrap();
    let agent = prop_oneof![Just("main".to_string()), "\\PC{0,12}", "[a-z]{0,4}\u{0}[a-z]{0,4}"];
    let wing = prop::option::of(prop_oneof!["[a-z_]{1,10}", "\\PC{0,12}"]);
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(64);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    runner
        .run(&(stored_text(), agent, wing), |(text, agent, wing)| {
            let kept = |rt: &MemoryRuntime| {
                rt.add(&agent, &text, RecordKind::Fact, false, wing.as_deref()).map(|stored| {
                    let record = rt.store().get_many(&[stored.id]).unwrap().pop().map(|r| (r.text, r.agent_id));
                    (stored.duplicate, record)
                })
            };
            match (kept(&lite), kept(&pg)) {
                (Ok(a), Ok(b)) => {
                    prop_assert_eq!(&a, &b, "the backends stored {:?} differently", text);
                    let (_, record) = a;
                    prop_assert!(record.is_some_and(|(t, a)| !t.contains('\0') && !a.contains('\0')));
                }
                (Err(a), Err(b)) => prop_assert_eq!(a.code(), b.code(), "{} / {}", a, b),
                (a, b) => prop_assert!(false, "the backends disagree on {:?}: {:?} / {:?}", text, a, b),
            }
            let searched = [&lite, &pg].map(|rt| rt.memory_search(&agent, &text, 5, 0.0, wing.as_deref()).map(|_| ()));
            for found in &searched {
                // An empty query is the caller's mistake; anything else must be answered.
                if let Err(e) = found {
                    prop_assert_eq!(e.code(), memcc_core::ErrorCode::InvalidInput, "a search for {:?}: {}", text, e);
                }
            }
            prop_assert_eq!(searched[0].is_ok(), searched[1].is_ok());
            Ok(())
        })
        .unwrap();
}

/// A pgvector search that fails is the search's error, not an empty vector side that makes the
/// answer look like "nothing similar" (it used to be logged and dropped).
#[test]
fn a_failed_vector_search_is_an_error_not_an_empty_result() {
    let key = tempfile::tempdir().unwrap();
    let Some(url) = memcc_testkit::postgres_database(&key.path().to_string_lossy()) else { return };
    let dir = tempfile::tempdir().unwrap();
    let rt = open(&url, &dir);
    rt.add("main", "The spare key is under the blue flowerpot", RecordKind::Fact, false, None).unwrap();
    assert!(!rt.memory_search("main", "spare key", 3, 0.0, None).unwrap().is_empty());
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin.batch_execute("ALTER TABLE vectors RENAME TO vectors_away").unwrap();
    let searched = rt.memory_search("main", "spare key", 3, 0.0, None);
    admin.batch_execute("ALTER TABLE vectors_away RENAME TO vectors").unwrap();
    let err = searched.expect_err("the vector side failed");
    assert!(err.to_string().contains("vectors"), "{err}");
    assert!(!rt.memory_search("main", "spare key", 3, 0.0, None).unwrap().is_empty(), "and works again");
}
