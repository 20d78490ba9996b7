//! Two stores on one PostgreSQL memory: two data directories (two machines), the same agent,
//! the same session ids, transcripts imported, purged and imported again on either. After every
//! step both see exactly the sessions imported and not purged on either — nothing one learns is
//! lost to the other (their summary ids repeated once, and memory took the second store's
//! summaries for ones it had), and a purge on one takes only its own conversation, not the
//! other's of the same session id (it took both). Against a real server
//! (`$MEMCC_TEST_PG_URL`; SKIP without one, a failure under `CI=true`).

use memcc::{Memcc, MemccConfig};
use memcc_context::SessionRef;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::json;

fn open(home: &std::path::Path, url: &str) -> Memcc {
    let mut config =
        MemccConfig { data_dir: Some(home.to_path_buf()), embedding_model: "hashing".into(), ..Default::default() };
    config.memory.backend = memcc_memory::StoreBackend::Postgres;
    config.memory.postgres_url = Some(url.to_string());
    Memcc::open(config).unwrap()
}

#[test]
fn two_stores_on_one_postgres_see_exactly_what_either_imported_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let Some(url) = memcc_testkit::postgres_database("two-stores-property") else { return };
    let stores = [open(&dir.path().join("laptop"), &url), open(&dir.path().join("server"), &url)];
    let rounds = std::sync::atomic::AtomicU32::new(0);
    // The database is kept between runs: this run's words and sessions are its own.
    let run = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() % 1_000_000_007;
    let mut runner = TestRunner::new(Config { cases: 16, ..Config::default() });
    let steps = prop::collection::vec((0usize..2, 0usize..3, any::<bool>()), 1..10);
    runner
        .run(&steps, |steps| {
            // Each case its own words and sessions: the database outlives the case.
            let round = rounds.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            let word = |st: usize, s: usize| format!("qv{run}r{round}z{st}w{s}j");
            let mut present = std::collections::BTreeSet::new();
            for (st, s, purge) in steps {
                let memcc = &stores[st];
                let session = SessionRef::new(&format!("{run}-r{round}-s{s}"));
                if purge {
                    let purged = memcc.purge_session(&session);
                    prop_assert_eq!(purged.is_ok(), present.remove(&(st, s)), "{:?}", purged);
                } else {
                    let w = word(st, s);
                    let transcript = format!(
                        "{}\n{}\n",
                        json!({"role": "user", "content": format!("The rack label is {w}, write it down.")}),
                        json!({"role": "assistant", "content": format!("Written down: rack label {w}.")})
                    );
                    memcc.context.import_transcript_as(&session, &Default::default(), transcript.as_bytes()).unwrap();
                    memcc.context.flush(&session, 4_000).unwrap();
                    present.insert((st, s));
                }
                for (reader, store) in stores.iter().enumerate() {
                    let rt = store.memory().unwrap();
                    for st in 0..2 {
                        for s in 0..3 {
                            let w = word(st, s);
                            let hits = rt.memory_search("main", &format!("rack label {w}"), 20, 0.0, None).unwrap();
                            let found = hits.iter().any(|h| h.text.contains(&w));
                            prop_assert_eq!(
                                found,
                                present.contains(&(st, s)),
                                "store {} reading {} of store {}: {:?}",
                                reader,
                                w,
                                st,
                                hits
                            );
                        }
                    }
                }
            }
            Ok(())
        })
        .unwrap();
}
