//! `memcc memory verify`: SQLite's integrity check on memory.db, "ok" or a failure that says so.

mod common;

use std::io::{Seek, SeekFrom, Write};

#[test]
fn a_healthy_store_verifies_and_a_damaged_one_fails_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..300 {
        common::ok(common::run(
            dir.path(),
            &["memory", "add", &format!("Fact number {i}: the spare key is under pot {i}.")],
        ));
    }
    let out = common::ok(common::run(dir.path(), &["memory", "verify"]));
    assert!(out.contains("memory.db integrity: ok"), "{out}");

    // Overwrite pages in the middle of the file, as a double writer or a bad disk would.
    let db = dir.path().join("memory.db");
    // Everything into the main file first, so no newer copy of a page in the WAL hides the damage.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
    drop(conn);
    let len = std::fs::metadata(&db).unwrap().len();
    assert!(len > 64 * 1024, "the store spans many pages ({len} bytes)");
    let mut f = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
    f.seek(SeekFrom::Start(len / 2)).unwrap();
    f.write_all(&vec![0x5a; 8192]).unwrap();
    drop(f);
    let out = common::run(dir.path(), &["memory", "verify"]);
    assert!(!out.status.success(), "a damaged store fails verification");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("memcc: error:"), "a clear error: {stderr}");
}
