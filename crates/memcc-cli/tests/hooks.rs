//! MemCC in Claude Code and Codex as they run it: `memcc setup` writes each host's
//! configuration, and a fake host runs the configured commands exactly as the real one does — a
//! shell, the event's JSON on stdin, the session's directory as the working directory, the
//! host's time limit (Claude Code gives `SessionEnd` 1.5 s), its process group killed when the
//! session ends — over sessions in two projects. Memory arrives by itself: no tool is called.

mod common;

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use common::BIN;

/// The local model, which the relevance floor is measured on (the hashing stand-in scores
/// differently).
fn model_dir() -> Option<PathBuf> {
    memcc_testkit::model_dir("the hooks' end-to-end test runs on the local model")
}

/// A machine with a home directory, MemCC's data and two repositories.
struct Machine {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    data: PathBuf,
    config: PathBuf,
    model: PathBuf,
}

impl Machine {
    fn new(model: PathBuf) -> Machine {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let data = tmp.path().join("memcc");
        for repo in ["shop", "blog"] {
            std::fs::create_dir_all(home.join("src").join(repo).join(".git")).unwrap();
            std::fs::create_dir_all(home.join("src").join(repo).join("lib")).unwrap();
        }
        let config = tmp.path().join("memcc.json");
        // The warm process ends soon after the test's last hook.
        std::fs::write(&config, r#"{"hooks": {"idleSecs": 60}}"#).unwrap();
        Machine { home, data, config, model, _tmp: tmp }
    }

    fn repo(&self, name: &str) -> PathBuf {
        self.home.join("src").join(name)
    }

    /// `memcc` as the user runs it in a terminal of this machine.
    fn memcc(&self, args: &[&str]) -> std::process::Output {
        self.env(Command::new(BIN))
            .arg("--home")
            .arg(&self.data)
            .arg("--config")
            .arg(&self.config)
            .args(args)
            .output()
            .unwrap()
    }

    fn env(&self, mut cmd: Command) -> Command {
        cmd.env_clear()
            .env("HOME", &self.home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("MEMCC_MODEL_DIR", &self.model);
        cmd
    }

    /// Wait until the hooks' worker has imported every queued transcript.
    fn settled(&self) {
        let deadline = Instant::now() + Duration::from_secs(240);
        loop {
            let out = self.memcc(&["--json", "stats"]);
            let stats: Value = serde_json::from_slice(&common::ok(out).into_bytes()).unwrap();
            if stats["transcripts_waiting"] == 0 && stats["pending_memory_handoffs"] == 0 {
                return;
            }
            if Instant::now() >= deadline {
                let run = self.data.join("run");
                let read = |name: &str| std::fs::read_to_string(run.join(name)).unwrap_or_default();
                panic!(
                    "the queued transcripts were never imported: {stats}\nthe warm process's log:\n{}\nthe hooks' \
                     errors:\n{}",
                    read("daemon.log"),
                    read("hooks.log")
                );
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

impl Drop for Machine {
    fn drop(&mut self) {
        let _ = self.memcc(&["daemon", "--stop"]);
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Host {
    ClaudeCode,
    Codex,
}

/// A host as MemCC meets it: its configuration as `memcc setup` wrote it, its hooks run as it
/// runs them, its transcripts written in its own format.
struct FakeHost<'m> {
    host: Host,
    machine: &'m Machine,
    /// Event → (command, timeout in seconds) as configured.
    hooks: Vec<(String, String, u64)>,
}

/// One session of a host: its id, directory, transcript.
struct Session {
    id: String,
    cwd: PathBuf,
    transcript: PathBuf,
    turn: usize,
}

impl<'m> FakeHost<'m> {
    fn read(host: Host, machine: &'m Machine) -> FakeHost<'m> {
        let path = match host {
            Host::ClaudeCode => machine.home.join(".claude/settings.json"),
            Host::Codex => machine.home.join(".codex/hooks.json"),
        };
        let config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let mut hooks = Vec::new();
        for (event, groups) in config["hooks"].as_object().unwrap() {
            for group in groups.as_array().unwrap() {
                for h in group["hooks"].as_array().unwrap() {
                    assert_eq!(h["type"], "command");
                    let timeout = h["timeout"].as_u64().unwrap_or(600);
                    hooks.push((event.clone(), h["command"].as_str().unwrap().to_string(), timeout));
                }
            }
        }
        FakeHost { host, machine, hooks }
    }

    /// The seconds the host gives `event`'s hooks: their own, except the session end: Claude
    /// Code's cut at 1.5 s (its default; a configured timeout may raise it, which this host does
    /// not honour, to be sure the work survives the cut), Codex's at 3 s (its cap).
    fn budget(&self, event: &str, configured: u64) -> Duration {
        match (self.host, event) {
            (Host::ClaudeCode, "SessionEnd") => Duration::from_millis(1500),
            (Host::Codex, "SessionEnd") => Duration::from_secs(configured.min(3)),
            _ => Duration::from_secs(configured),
        }
    }

    /// Run every hook of `event` as the host does; the context they add (stdout's JSON
    /// `additionalContext`, or plain text).
    fn fire(&self, event: &str, session: &Session, extra: Value) -> String {
        let mut payload = json!({
            "session_id": session.id,
            "transcript_path": session.transcript,
            "cwd": session.cwd,
            "hook_event_name": event,
        });
        if self.host == Host::Codex {
            payload["model"] = json!("gpt-5");
            payload["turn_id"] = json!(format!("turn-{}", session.turn));
        }
        for (k, v) in extra.as_object().unwrap() {
            payload[k] = v.clone();
        }
        let mut added = Vec::new();
        for (e, command, timeout) in self.hooks.iter().filter(|(e, _, _)| e == event) {
            let budget = self.budget(e, *timeout);
            let mut child = self
                .machine
                .env(Command::new("sh"))
                .arg("-c")
                .arg(command)
                .current_dir(&session.cwd)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0)
                .spawn()
                .unwrap();
            let started = Instant::now();
            let mut stdin = child.stdin.take().unwrap();
            writeln!(stdin, "{payload}").unwrap();
            drop(stdin);
            let status = loop {
                if let Some(s) = child.try_wait().unwrap() {
                    break Some(s);
                }
                if started.elapsed() > budget {
                    break None;
                }
                std::thread::sleep(Duration::from_millis(10));
            };
            // The host is done with the hook: what it started in the hook's group goes too.
            // SAFETY: signalling the group this test created.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let out = child.wait_with_output().unwrap();
            let status = status.unwrap_or_else(|| panic!("{event} hook ran past the host's {budget:?}: {command}"));
            assert!(status.success(), "{event} hook failed: {}", String::from_utf8_lossy(&out.stderr));
            let stdout = String::from_utf8(out.stdout).unwrap();
            if stdout.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|_| json!({"text": stdout}));
            assert_eq!(v["hookSpecificOutput"]["hookEventName"], event, "{v}");
            added.push(v["hookSpecificOutput"]["additionalContext"].as_str().unwrap().to_string());
        }
        added.join("\n")
    }

    fn start(&self, id: &str, repo: &str) -> (Session, String) {
        let cwd = self.machine.repo(repo).join("lib");
        let transcript = match self.host {
            Host::ClaudeCode => self.machine.home.join(".claude/projects").join(repo).join(format!("{id}.jsonl")),
            Host::Codex => self.machine.home.join(".codex/sessions/2026/12/05").join(format!("rollout-{id}.jsonl")),
        };
        std::fs::create_dir_all(transcript.parent().unwrap()).unwrap();
        let session = Session { id: id.into(), cwd, transcript, turn: 0 };
        if self.host == Host::Codex {
            let meta = json!({"timestamp": "2026-12-05T10:00:00Z", "type": "session_meta",
                              "payload": {"id": id, "cwd": session.cwd, "git": {"branch": "main"}}});
            append(&session.transcript, &meta);
        }
        let said = self.fire("SessionStart", &session, json!({"source": "startup"}));
        (session, said)
    }

    /// A turn: the prompt (and what its hook adds), the answer, the turn's end. The model here
    /// calls no tool: what reaches it is what the hooks added.
    fn turn(&self, s: &mut Session, prompt: &str, answer: &str) -> String {
        s.turn += 1;
        let added = self.fire("UserPromptSubmit", s, json!({"prompt": prompt}));
        let ts = format!("2026-12-05T10:{:02}:00Z", s.turn.min(59));
        let (user, assistant) = match self.host {
            Host::ClaudeCode => (
                json!({"type": "user", "sessionId": s.id, "cwd": s.cwd, "gitBranch": "main", "timestamp": ts,
                       "message": {"role": "user", "content": prompt}}),
                json!({"type": "assistant", "sessionId": s.id, "cwd": s.cwd, "timestamp": ts,
                       "message": {"role": "assistant", "content": [{"type": "text", "text": answer}]}}),
            ),
            Host::Codex => (
                json!({"timestamp": ts, "type": "response_item", "payload": {"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": prompt}]}}),
                json!({"timestamp": ts, "type": "response_item", "payload": {"type": "message", "role": "assistant",
                       "content": [{"type": "output_text", "text": answer}]}}),
            ),
        };
        append(&s.transcript, &user);
        append(&s.transcript, &assistant);
        self.fire("Stop", s, json!({"stop_hook_active": false}));
        added
    }

    fn end(&self, s: &Session) {
        self.fire("SessionEnd", s, json!({"reason": "exit"}));
    }
}

fn append(path: &Path, line: &Value) {
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap();
    writeln!(f, "{line}").unwrap();
}

/// Two sessions in the shop repository and one in the blog, then a new session in the shop: its
/// first prompt about the shop gets the shop's fact, chit-chat gets nothing, and the session
/// start names where the shop's last session left off.
fn two_sessions_in_two_projects(host: Host) {
    let Some(model) = model_dir() else { return };
    let machine = Machine::new(model);
    let setup = machine.memcc(&["setup", if host == Host::ClaudeCode { "claude-code" } else { "codex" }]);
    common::ok(setup);
    let fake = FakeHost::read(host, &machine);
    assert!(fake.hooks.iter().any(|(e, _, _)| e == "UserPromptSubmit"), "the prompt's hook is installed");

    let (mut s1, said) = fake.start("s1-shop", "shop");
    assert!(said.is_empty(), "a first session has nothing to be told: {said}");
    fake.turn(
        &mut s1,
        "The staging database for the shop is db-staging-7.internal on port 6432; the checkout tests need it.",
        "Noted: the checkout tests run against db-staging-7.internal:6432.",
    );
    fake.turn(&mut s1, "I prefer pytest fixtures over unittest classes in new tests.", "Understood: pytest fixtures.");
    fake.end(&s1);

    let (mut b1, _) = fake.start("b1-blog", "blog");
    fake.turn(
        &mut b1,
        "The blog's staging database is db-blog-2.internal on port 5433.",
        "Noted for the blog: db-blog-2.internal:5433.",
    );
    fake.end(&b1);
    machine.settled();

    let (mut s2, brief) = fake.start("s2-shop", "shop");
    assert!(brief.contains("<memcc-sessions>") && brief.contains("(shop)"), "{brief}");
    assert!(brief.contains("pytest"), "the last shop session is where this one starts: {brief}");
    assert!(!brief.contains("db-blog-2"), "the blog's sessions are not the shop's: {brief}");

    let recalled = fake.turn(&mut s2, "Which staging database host and port do the checkout tests use?", "…");
    assert!(recalled.contains("db-staging-7.internal") && recalled.contains("6432"), "{recalled}");
    let shop = recalled.find("db-staging-7").unwrap();
    assert!(recalled.find("db-blog-2").is_none_or(|blog| blog > shop), "the shop's own fact comes first: {recalled}");

    for chatter in ["thanks!", "ok, sounds good", "what's the capital of Peru?"] {
        let added = fake.turn(&mut s2, chatter, "…");
        assert!(added.is_empty(), "{chatter:?} got memory it has no use for: {added}");
    }
    fake.end(&s2);
}

#[test]
fn claude_code_gets_its_projects_memory_by_itself() {
    two_sessions_in_two_projects(Host::ClaudeCode);
}

#[test]
fn codex_gets_its_projects_memory_by_itself() {
    two_sessions_in_two_projects(Host::Codex);
}

/// The worker's process id, from its lock file.
fn worker_pid(machine: &Machine) -> Option<i32> {
    let run = machine.data.join("run");
    std::fs::read_dir(&run).ok()?.filter_map(Result::ok).find_map(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        (name.starts_with("daemon-") && name.ends_with(".lock"))
            .then(|| std::fs::read_to_string(e.path()).ok()?.trim().parse().ok())
            .flatten()
    })
}

/// Claude Code gives a session's end 1.5 s: a long session's end returns in time, the import
/// and flush go on after the host killed the hook's group, and a worker killed in the middle of
/// them leaves the work to the next one. An empty session is no error.
#[test]
fn a_long_sessions_end_outlives_the_hosts_cut_and_a_killed_worker() {
    let Some(model) = model_dir() else { return };
    let machine = Machine::new(model);
    common::ok(machine.memcc(&["setup", "claude-code"]));
    let fake = FakeHost::read(Host::ClaudeCode, &machine);
    let (empty, _) = fake.start("empty", "blog");
    fake.end(&empty);

    let (long, _) = fake.start("long", "shop");
    let turns = 300;
    for i in 0..turns {
        let ts = format!("2026-12-05T{:02}:{:02}:00Z", 8 + i / 60, i % 60);
        append(
            &long.transcript,
            &json!({"type": "user", "sessionId": "long", "cwd": long.cwd, "timestamp": ts,
                    "message": {"role": "user", "content": format!("Ticket T-{i} is about the {} page.", ["cart", "login", "search"][i % 3])}}),
        );
        append(
            &long.transcript,
            &json!({"type": "assistant", "sessionId": "long", "cwd": long.cwd, "timestamp": ts,
                    "message": {"role": "assistant", "content": [{"type": "text", "text": format!("Filed T-{i}.")}]}}),
        );
    }
    let started = Instant::now();
    fake.end(&long);
    assert!(started.elapsed() < Duration::from_millis(1500), "the end returned within Claude Code's limit");
    // The worker is at it: kill it as an out-of-memory killer or a reboot would.
    std::thread::sleep(Duration::from_millis(300));
    let pid = (0..200)
        .find_map(|_| {
            let pid = worker_pid(&machine);
            if pid.is_none() {
                std::thread::sleep(Duration::from_millis(10));
            }
            pid
        })
        .expect("the session's end started a worker");
    // SAFETY: the daemon this test's hooks started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0, "the worker {pid} was there to kill");
    // The next session's first hook starts a worker, which takes the work up again.
    fake.start("next", "blog");
    machine.settled();

    let sessions: Value = serde_json::from_str(&common::ok(machine.memcc(&["--json", "sessions"]))).unwrap();
    let ids: Vec<&str> = sessions.as_array().unwrap().iter().map(|s| s["sessionId"].as_str().unwrap()).collect();
    assert!(!ids.contains(&"empty"), "an empty session makes no conversation: {ids:?}");
    let long_listed = sessions.as_array().unwrap().iter().find(|s| s["sessionId"] == "long").unwrap();
    assert_eq!(long_listed["messages"], 2 * turns, "{long_listed}");
    assert_eq!(long_listed["project"], machine.repo("shop").to_string_lossy().as_ref());
    let found = common::ok(machine.memcc(&["--json", "memory", "search", "ticket T-299 page"]));
    assert!(found.contains("T-299"), "the session's last turn reached memory: {found}");
}
