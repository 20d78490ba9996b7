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

#[test]
fn expand_raw_returns_a_messages_structured_parts_after_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let file = dir.path().join("t.jsonl");
    std::fs::write(
        &file,
        r#"{"role": "user", "content": "Check the weather in Oslo.", "timestamp": 1767261600000}
{"role": "assistant", "content": [{"type": "thinking", "thinking": "I should call the weather tool."}, {"type": "toolCall", "id": "c1", "name": "weather", "arguments": {"city": "Oslo"}}], "timestamp": 1767261601000}
{"role": "toolResult", "toolCallId": "c1", "toolName": "weather", "content": "-3 C, snow", "timestamp": 1767261602000}
"#,
    )
    .unwrap();
    memcc(&home, &["ingest", "--session", "w", file.to_str().unwrap()]);
    memcc(&home, &["flush", "--session", "w"]);
    let hits: serde_json::Value =
        serde_json::from_slice(&memcc(&home, &["--json", "grep", "weather", "--scope", "messages"]).stdout).unwrap();
    let call = hits.as_array().unwrap().iter().find(|h| h["role"] == "assistant").expect("the tool call message");
    let id = call["id"].as_str().unwrap();
    let out: serde_json::Value =
        serde_json::from_slice(&memcc(&home, &["--json", "expand", id, "--raw"]).stdout).unwrap();
    let raw = &out["items"][0]["raw"];
    assert_eq!(raw["content"][0]["thinking"], "I should call the weather tool.", "{out}");
    assert_eq!(raw["content"][1]["arguments"]["city"], "Oslo");
    let plain: serde_json::Value = serde_json::from_slice(&memcc(&home, &["--json", "expand", id]).stdout).unwrap();
    assert!(plain["items"][0].get("raw").is_none(), "only on request");
}

#[test]
fn a_message_repeated_inside_one_ingested_file_is_kept_each_time() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let file = dir.path().join("t.jsonl");
    std::fs::write(&file, "{\"role\": \"user\", \"content\": \"ok\"}\n{\"role\": \"user\", \"content\": \"ok\"}\n")
        .unwrap();
    let out: serde_json::Value =
        serde_json::from_slice(&memcc(&home, &["--json", "ingest", "--session", "r", file.to_str().unwrap()]).stdout)
            .unwrap();
    assert_eq!(out["added"], 2, "{out}");
    // The same file again is a retry: nothing new.
    let again: serde_json::Value =
        serde_json::from_slice(&memcc(&home, &["--json", "ingest", "--session", "r", file.to_str().unwrap()]).stdout)
            .unwrap();
    assert_eq!((again["added"].as_u64(), again["duplicates"].as_u64()), (Some(0), Some(2)), "{again}");
}

/// A long compaction is not silent: the result ends with how long it took, and `-v` logs each
/// summary as it is written.
#[test]
fn compact_and_flush_say_how_long_they_took_and_v_follows_each_summary() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("t.jsonl");
    let mut f = std::fs::File::create(&file).unwrap();
    for i in 0..60 {
        writeln!(f, r#"{{"role": "user", "content": "Note {i}: the pallets on dock {i} were counted and sealed."}}"#)
            .unwrap();
    }
    drop(f);
    memcc(home.path(), &["ingest", "--session", "s", file.to_str().unwrap()]);
    let out = memcc(home.path(), &["-v", "compact", "--session", "s", "--budget", "400", "--force"]);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(stdout.trim_end().ends_with(" s") && stdout.contains("compacted: true"), "{stdout}");
    assert!(stderr.contains("summary written"), "-v follows the compaction: {stderr}");
    let out = memcc(home.path(), &["flush", "--session", "s"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("flushed:") && stdout.trim_end().ends_with(" s"), "{stdout}");
}
