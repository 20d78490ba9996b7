//! `memcc flush` ends a session: what was still in the fresh tail reaches long-term memory.

use std::io::Write;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_memcc");

fn memcc(home: &std::path::Path, args: &[&str]) -> std::process::Output {
    let out =
        Command::new(BIN).arg("--home").arg(home).args(["--embedding-model", "hashing"]).args(args).output().unwrap();
    assert!(out.status.success(), "memcc {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

#[test]
fn flush_hands_the_fresh_tail_to_memory() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let file = dir.path().join("t.jsonl");
    let mut f = std::fs::File::create(&file).unwrap();
    writeln!(f, r#"{{"role": "user", "content": "My gym locker number is 5521.", "timestamp": 1767261600000}}"#)
        .unwrap();
    writeln!(f, r#"{{"role": "assistant", "content": "Noted: locker 5521.", "timestamp": 1767261601000}}"#).unwrap();
    drop(f);
    memcc(&home, &["ingest", "--session", "s", file.to_str().unwrap(), "--budget", "8000"]);
    let search =
        |home| String::from_utf8(memcc(home, &["--json", "memory", "search", "gym locker number"]).stdout).unwrap();
    assert!(!search(&home).contains("5521"), "two short messages stay in the fresh tail");
    let out = memcc(&home, &["--json", "flush", "--session", "s"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["leafSummaries"].as_u64().unwrap() >= 1, "{report}");
    assert!(search(&home).contains("5521"), "the flushed tail is recalled");
    let missing = Command::new(BIN).arg("--home").arg(&home).args(["flush", "--session", "nope"]).output().unwrap();
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no conversation"), "a clear error");
}
