//! A user keeps MemCC quiet where they choose: one session (its host started with
//! `MEMCC_QUIET=1`) or every session of a project (`hooks.quietProjects`) gets nothing injected
//! by the hooks, while the same prompt elsewhere gets its recall.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{BIN, ok, run};

/// `memcc hook UserPromptSubmit` as a host runs it, in `cwd`, with `env` set; its stdout.
fn prompt(home: &Path, config: &Path, cwd: &Path, env: &[(&str, &str)]) -> String {
    let mut child = Command::new(BIN)
        .arg("--home")
        .arg(home)
        .arg("--config")
        .arg(config)
        .args(["--embedding-model", "hashing", "hook", "UserPromptSubmit"])
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::json!({"session_id": "s-1", "cwd": cwd, "hook_event_name": "UserPromptSubmit",
                                   "prompt": "Which port does the dev server listen on?"});
    child.stdin.take().unwrap().write_all(input.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_quiet_session_or_project_gets_nothing_and_the_others_their_recall() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("data");
    let (shop, blog) = (dir.path().join("shop"), dir.path().join("blog"));
    for p in [&shop, &blog] {
        std::fs::create_dir_all(p.join(".git")).unwrap();
    }
    let config = dir.path().join("settings.json");
    // The hashing embedder's cosines mean nothing: every prompt clears the gate, so only quiet
    // keeps recall out.
    let settings = serde_json::json!({"hooks": {"warm": false, "quietProjects": [blog]},
                                      "memory": {"tuning": {"relevantMeaning": 0}}});
    std::fs::write(&config, settings.to_string()).unwrap();
    ok(run(&home, &["memory", "add", "The dev server listens on port 5173."]));

    let loud = prompt(&home, &config, &shop, &[]);
    assert!(loud.contains("5173"), "a session of another project gets its recall: {loud}");
    assert_eq!(prompt(&home, &config, &shop, &[("MEMCC_QUIET", "1")]), "", "a quiet session gets nothing");
    assert!(prompt(&home, &config, &shop, &[("MEMCC_QUIET", "0")]).contains("5173"), "0 is not quiet");
    assert_eq!(prompt(&home, &config, &blog, &[]), "", "a quiet project gets nothing");
}
