//! Several processes on one data directory: writers wait for each other instead of failing
//! with "database is locked", a new session created by four processes at once is one session,
//! and a running process's vector index picks up what another process remembered.

use std::io::Write;
use std::process::{Child, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_memcc");

fn spawn(home: &std::path::Path, args: &[&str]) -> Child {
    Command::new(BIN)
        .arg("--home")
        .arg(home)
        .args(["--embedding-model", "hashing"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn transcript(dir: &std::path::Path, name: &str, n: usize) -> std::path::PathBuf {
    let path = dir.join(name);
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for i in 0..n {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        let text = format!("{name} message {i}: the plan for item {i} is settled, with a note about code {i:05}.");
        writeln!(f, r#"{{"role": "{role}", "content": "{text}", "timestamp": {}}}"#, 1_767_261_600_000i64 + i as i64)
            .unwrap();
    }
    path
}

fn stats(home: &std::path::Path, session: &str) -> serde_json::Value {
    let out = Command::new(BIN)
        .arg("--home")
        .arg(home)
        .args(["--embedding-model", "hashing", "--json", "stats", "--session", session])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn two_and_four_writers_on_one_store_all_succeed() {
    for writers in [2usize, 4] {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let files: Vec<_> = (0..writers).map(|w| transcript(dir.path(), &format!("w{w}"), 300)).collect();
        // Each writer stores its file and compacts it (memory writes included) at once.
        let children: Vec<Child> = files
            .iter()
            .enumerate()
            .map(|(w, f)| {
                spawn(&home, &["ingest", "--session", &format!("s{w}"), f.to_str().unwrap(), "--budget", "2000"])
            })
            .collect();
        for (w, c) in children.into_iter().enumerate() {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success(), "{writers} writers, writer {w}: {}", String::from_utf8_lossy(&out.stderr));
        }
        for w in 0..writers {
            let s = stats(&home, &format!("s{w}"));
            assert_eq!(s["messages"], 300, "{s}");
            assert!(s["summaries"].as_u64().unwrap() > 0, "{s}");
            let verify = Command::new(BIN)
                .arg("--home")
                .arg(&home)
                .args(["--embedding-model", "hashing", "verify", "--session", &format!("s{w}")])
                .output()
                .unwrap();
            assert!(verify.status.success(), "{}", String::from_utf8_lossy(&verify.stderr));
        }
    }
}

#[test]
fn four_processes_creating_one_new_session_make_one_session() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let files: Vec<_> = (0..4).map(|w| transcript(dir.path(), &format!("p{w}"), 20)).collect();
    let children: Vec<Child> =
        files.iter().map(|f| spawn(&home, &["ingest", "--session", "shared", f.to_str().unwrap()])).collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let s = stats(&home, "shared");
    assert_eq!(s["conversations"], 1, "{s}");
    assert_eq!(s["messages"], 80, "{s}");
}

#[test]
fn a_running_process_recalls_what_another_process_remembered() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let config =
        memcc::MemccConfig { data_dir: Some(home.clone()), embedding_model: "hashing".into(), ..Default::default() };
    let running = memcc::Memcc::open(config).unwrap();
    let rt = running.memory().unwrap();
    assert!(rt.memory_search("main", "canoe rental code", 5, 0.0, None).unwrap().is_empty());
    let out = spawn(&home, &["memory", "add", "The canoe rental code is 7781."]).wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Dense-only search sees only what the vector index holds.
    let hits =
        rt.search_with("main", "canoe rental code", None, None, 5, memcc::lab::memory::SearchMode::Dense).unwrap();
    assert!(hits.iter().any(|h| h.text.contains("7781")), "the index read the other process's vector: {hits:?}");
}
