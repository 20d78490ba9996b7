//! Histories from the agents people run: a Claude Code transcript and a Codex CLI rollout
//! (fixtures written from their on-disk JSONL, tool calls and results included) are imported —
//! by file, and as Claude Code's SessionEnd hook would (`import --hook --flush`, its JSON on
//! stdin) — and what was said in them is recalled in a new session. A file with no message
//! fails, naming the formats MemCC reads.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{BIN, ok, run};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// The prompt a new session's first question gets.
fn asked(home: &std::path::Path, session: &str, question: &str) -> String {
    let mut ingest = Command::new(BIN)
        .arg("--home")
        .arg(home)
        .args(["--embedding-model", "hashing", "ingest", "--session", session])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let line = serde_json::json!({"role": "user", "content": question}).to_string();
    ingest.stdin.take().unwrap().write_all(line.as_bytes()).unwrap();
    assert!(ingest.wait().unwrap().success());
    ok(run(home, &["assemble", "--session", session, "--budget", "4000"]))
}

#[test]
fn claude_code_and_codex_histories_are_imported_and_recalled_in_a_new_session() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let claude = format!("{FIXTURES}/claude_code_session.jsonl");
    let codex = format!("{FIXTURES}/codex_rollout.jsonl");

    // Claude Code, as its SessionEnd hook runs MemCC: the hook's JSON on stdin.
    let mut hook = Command::new(BIN)
        .arg("--home")
        .arg(h)
        .args(["--embedding-model", "hashing", "import", "--hook", "--flush"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::json!({"session_id": "cc-1", "transcript_path": claude, "hook_event_name": "SessionEnd",
                                   "cwd": "/home/dev/shop", "reason": "exit"});
    hook.stdin.take().unwrap().write_all(input.to_string().as_bytes()).unwrap();
    let out = hook.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("session cc-1 (Claude Code): 4 added") && said.contains("flushed: 1 leaf"), "{said}");
    // Idempotent: the hook fires again (PreCompact, then SessionEnd) without doubling anything.
    let again = ok(run(h, &["import", &claude, "--session", "cc-1", "--format", "claude-code"]));
    assert!(again.contains("0 added, 4 already present"), "{again}");

    // Codex CLI: the session id comes from the rollout's session_meta.
    let out = ok(run(h, &["import", &codex, "--flush"]));
    assert!(out.contains("session 0199a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b (Codex CLI): 4 added"), "{out}");

    // Tool calls and results are kept as such: the deploy script's content is grep-able.
    let grep = ok(run(h, &["grep", "rsync", "--session", "cc-1"]));
    assert!(grep.contains("staging:/srv/shop"), "{grep}");

    // A new session recalls what each agent was told.
    let prompt = asked(h, "next-1", "When does the staging database password rotate?");
    assert!(prompt.contains("rotates every Monday at 09:00"), "{prompt}");
    let prompt = asked(h, "next-2", "Who is the on-call rotation lead this quarter?");
    assert!(prompt.contains("Priya Raman"), "{prompt}");

    // The wrong --format, and a file with no message, fail with what MemCC reads.
    let wrong = run(h, &["import", &codex, "--format", "claude-code"]);
    assert!(!wrong.status.success());
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("reads as a Codex CLI transcript"));
    let empty = h.join("empty.jsonl");
    std::fs::write(&empty, "{\"type\":\"summary\",\"summary\":\"nothing\"}\n").unwrap();
    let none = run(h, &["import", empty.to_str().unwrap(), "--session", "x"]);
    let stderr = String::from_utf8_lossy(&none.stderr);
    assert!(
        !none.status.success() && stderr.contains("no message found") && stderr.contains("Claude Code"),
        "{stderr}"
    );
}

/// A backfill of the directories Claude Code and Codex keep their transcripts in: every file
/// imported once, the second run passing over what has not changed and taking what has; the
/// sessions listed newest first with their title, project and source.
#[test]
fn a_directory_of_transcripts_is_backfilled_once_and_then_only_what_changed() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let projects = h.join("claude/projects/-home-dev-shop");
    let sessions = h.join("codex/sessions/2026/12/05");
    std::fs::create_dir_all(&projects).unwrap();
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::copy(format!("{FIXTURES}/claude_code_session.jsonl"), projects.join("cc-1.jsonl")).unwrap();
    std::fs::copy(format!("{FIXTURES}/codex_rollout.jsonl"), sessions.join("rollout-1.jsonl")).unwrap();
    // An empty session and a subagent's sidechain: nothing to import, no error.
    std::fs::write(projects.join("empty.jsonl"), "").unwrap();
    let dir = h.join("claude");
    let records = || -> i64 {
        let stats: serde_json::Value = serde_json::from_str(&ok(run(h, &["--json", "memory", "stats"]))).unwrap();
        stats["records"].as_i64().unwrap()
    };
    // What applies to one transcript is refused for a directory, before anything is read.
    for flags in [&["--session", "s"][..], &["--strict"], &["--format", "codex"]] {
        let out = run(h, &[&["import", dir.parent().unwrap().to_str().unwrap()][..], flags].concat());
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && said.contains("not a directory"), "{flags:?}: {said}");
    }
    // Messages only, as a run that asked for no flush (or stopped before it) leaves them.
    let first = ok(run(h, &["import", dir.parent().unwrap().to_str().unwrap(), "--no-flush"]));
    assert!(
        first.contains("3 transcripts: 2 imported") && first.contains("1 with nothing to import, 0 failed"),
        "{first}"
    );
    assert_eq!(records(), 0, "--no-flush leaves memory as it was");
    // The plain backfill finishes that work: nothing is read again, both sessions reach memory.
    let again = ok(run(h, &["import", dir.parent().unwrap().to_str().unwrap()]));
    assert!(
        again
            .contains("0 imported (0 messages added), 2 unchanged since their import (2 of them now handed to memory)"),
        "{again}"
    );
    let filled = records();
    assert!(filled > 0, "a backfill fills memory");
    let settled = ok(run(h, &["import", dir.parent().unwrap().to_str().unwrap()]));
    assert!(settled.contains("0 imported (0 messages added), 2 unchanged since their import,"), "{settled}");
    assert_eq!(records(), filled, "a re-run adds nothing twice");
    // A session that went on: only it is read again, and only its new turn is added.
    let mut more = std::fs::OpenOptions::new().append(true).open(projects.join("cc-1.jsonl")).unwrap();
    writeln!(
        more,
        "{}",
        serde_json::json!({"type": "user", "sessionId": "cc-1", "cwd": "/home/dev/shop", "timestamp": "2026-12-06T09:00:00Z",
                           "message": {"role": "user", "content": "Also rotate the API keys on Friday."}})
    )
    .unwrap();
    drop(more);
    let third = ok(run(h, &["import", dir.parent().unwrap().to_str().unwrap()]));
    assert!(third.contains("1 imported (1 messages added), 1 unchanged"), "{third}");

    let listed: serde_json::Value = serde_json::from_str(&ok(run(h, &["--json", "sessions"]))).unwrap();
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert_eq!(listed[0]["sessionId"], "cc-1", "the session spoken in last comes first");
    assert_eq!((&listed[0]["source"], &listed[0]["project"]), (&"claude-code".into(), &"/home/dev/shop".into()));
    assert_eq!(listed[1]["source"], "codex");
    let human = ok(run(h, &["sessions"]));
    assert!(human.lines().next().unwrap().contains("Claude Code") && human.contains("Codex"), "{human}");

    // A hook for a session that ended before it wrote anything: no error for its host.
    let mut hook = Command::new(BIN)
        .arg("--home")
        .arg(h)
        .args(["--embedding-model", "hashing", "import", "--hook", "--flush"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::json!({"session_id": "gone", "transcript_path": h.join("never-written.jsonl"),
                                   "hook_event_name": "SessionEnd"});
    hook.stdin.take().unwrap().write_all(input.to_string().as_bytes()).unwrap();
    let out = hook.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));

    // A hook naming a directory as its transcript does not import the tree under it.
    let before: serde_json::Value = serde_json::from_str(&ok(run(h, &["--json", "sessions"]))).unwrap();
    let mut hook = Command::new(BIN)
        .arg("--home")
        .arg(h)
        .args(["--embedding-model", "hashing", "import", "--hook"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input =
        serde_json::json!({"session_id": "odd", "transcript_path": h.join("claude"), "hook_event_name": "Stop"});
    hook.stdin.take().unwrap().write_all(input.to_string().as_bytes()).unwrap();
    let out = hook.wait_with_output().unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("is a directory, not a transcript"));
    let after: serde_json::Value = serde_json::from_str(&ok(run(h, &["--json", "sessions"]))).unwrap();
    assert_eq!(before, after, "nothing imported");
}

/// A Claude Code session that delegated to a subagent: the subagent's transcript (beside the
/// session's, `<session>/subagents/agent-<id>.jsonl`) is read with the session, in its place and
/// under its name — not as a session of its own, and not as the user's words — so what the
/// subagent found is grep-able and recalled in a new session.
#[test]
fn a_subagents_work_is_read_with_its_session() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let project = h.join("claude/projects/-home-dev-shop");
    let subagents = project.join("cc-sub/subagents");
    std::fs::create_dir_all(&subagents).unwrap();
    let entry = |kind: &str, sidechain: bool, at: &str, content: serde_json::Value| {
        serde_json::json!({"type": kind, "isSidechain": sidechain, "sessionId": "cc-sub", "cwd": "/home/dev/shop",
                           "timestamp": at, "message": {"role": kind, "content": content}})
        .to_string()
    };
    let text = |t: &str| serde_json::json!([{"type": "text", "text": t}]);
    let parent = [
        entry("user", false, "2026-11-21T10:00:00Z", "Why is checkout slow?".into()),
        entry(
            "assistant",
            false,
            "2026-11-21T10:00:01Z",
            serde_json::json!([{"type": "tool_use", "id": "task1", "name": "Task", "input": {"prompt": "Profile checkout."}}]),
        ),
        entry(
            "user",
            false,
            "2026-11-21T10:05:00Z",
            serde_json::json!([{"type": "tool_result", "tool_use_id": "task1", "content": "N+1 queries in the cart."}]),
        ),
        entry("assistant", false, "2026-11-21T10:05:01Z", text("The cart makes N+1 queries; I will batch them.")),
    ];
    std::fs::write(project.join("cc-sub.jsonl"), parent.join("\n") + "\n").unwrap();
    let subagent = [
        entry("user", true, "2026-11-21T10:00:02Z", "Profile checkout.".into()),
        entry(
            "assistant",
            true,
            "2026-11-21T10:04:00Z",
            text(
                "Profiling shows the cart loader issues one query per line item against the inventory_snapshots table.",
            ),
        ),
    ];
    std::fs::write(subagents.join("agent-a1.jsonl"), subagent.join("\n") + "\n").unwrap();
    std::fs::write(subagents.join("agent-a1.meta.json"), r#"{"agentType":"Explore","description":"Profile"}"#).unwrap();

    let out = ok(run(h, &["import", h.join("claude").to_str().unwrap(), "--flush"]));
    assert!(out.contains("1 transcripts: 1 imported (5 messages added)"), "one session, its subagent within: {out}");
    let grep = ok(run(h, &["grep", "inventory_snapshots", "--session", "cc-sub"]));
    assert!(grep.contains("Explore subagent"), "said by the subagent, under its name: {grep}");
    let hits: serde_json::Value =
        serde_json::from_str(&ok(run(h, &["--json", "grep", "Profile checkout", "--session", "cc-sub"]))).unwrap();
    let roles: Vec<&str> = hits.as_array().unwrap().iter().filter_map(|hit| hit["role"].as_str()).collect();
    assert_eq!(roles, ["assistant"], "the task is the parent's call, not the user's words: {hits}");
    let prompt = asked(h, "next-sub", "Which table does the cart loader query per line item?");
    assert!(prompt.contains("inventory_snapshots"), "{prompt}");
}

/// A transcript's session id and words are shown, never run: an escape sequence in them reaches
/// the terminal through `import` and `sessions` as text.
#[test]
fn control_characters_in_a_transcript_reach_the_terminal_as_text() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let file = h.join("odd.jsonl");
    let line = serde_json::json!({"type": "session", "id": "s\u{1b}[2Jx", "cwd": "/tmp/\u{1b}]0;pwned\u{7}"});
    let said = serde_json::json!({"type": "message", "message": {"role": "user", "content": "Title \u{1b}[31mred\u{1b}[0m here"}});
    std::fs::write(&file, format!("{line}\n{said}\n")).unwrap();
    let imported = ok(run(h, &["import", file.to_str().unwrap()]));
    let listed = ok(run(h, &["sessions"]));
    for out in [&imported, &listed] {
        assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "raw control characters: {out:?}");
    }
    assert!(listed.contains("s\\u{1b}[2Jx"), "the id shown escaped: {listed}");
}
