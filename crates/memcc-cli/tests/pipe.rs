//! What goes in and out of the CLI's pipes: a reader that stops early (`memcc … | head`) ends the
//! command quietly, without a panic; messages of no kind MemCC reads are kept and named.

mod common;

use std::io::Read;
use std::process::{Command, Stdio};

#[test]
fn a_closed_stdout_ends_the_command_without_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(common::BIN)
        .arg("--home")
        .arg(dir.path())
        .args(["--embedding-model", "hashing", "demo"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The pipe's read end is closed here, while the demo still has pages to print.
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn ingest_and_import_keep_a_message_of_no_known_role_and_name_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.jsonl");
    std::fs::write(&file, "{\"role\": \"user\", \"content\": \"hello\"}\n{\"role\": \"usr\", \"content\": \"typo\"}\n")
        .unwrap();
    let home = dir.path().join("home");
    let file = file.to_str().unwrap();
    for args in [["ingest", "--session", "s", file], ["import", "--session", "t", file]] {
        let out = common::run(&home, &args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("memcc: warning: line 2: role \"usr\" is not user"), "{args:?}: {stderr}");
        assert!(!stderr.contains("line 1"), "{stderr}");
    }
    let stats = common::ok(common::run(&home, &["--json", "stats"]));
    let stats: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(stats["messages"], 4, "both lines of both sessions stored: {stats}");
}
