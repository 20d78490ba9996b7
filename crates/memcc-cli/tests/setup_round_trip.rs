//! `memcc setup` on a user's real configuration: other hooks, servers and settings stay as they
//! were, where they were (a settings file is no place for a tool to re-sort keys), a second
//! setup changes nothing, and `--uninstall` gives back the files the user had.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_memcc");

fn setup(home: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .arg("--home")
        .arg(home.join("data"))
        .arg("setup")
        .args(args)
        .output()
        .unwrap()
}

fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

const SETTINGS: &str = r#"{
  "permissions": {"allow": ["Bash(ls:*)"], "deny": []},
  "model": "opus",
  "env": {"ZED": "1", "ALPHA": "2"},
  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}
}
"#;

const CLAUDE_JSON: &str = r#"{
  "numStartups": 12,
  "mcpServers": {"github": {"type": "stdio", "command": "gh-mcp", "args": []}},
  "autoUpdates": false
}
"#;

const CODEX_TOML: &str = "# my Codex settings\nmodel = \"gpt-5\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n";

#[test]
fn setup_keeps_the_users_files_as_they_were_and_uninstall_gives_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    let settings = home.join(".claude/settings.json");
    let claude_json = home.join(".claude.json");
    let codex = home.join(".codex/config.toml");
    std::fs::write(&settings, SETTINGS).unwrap();
    std::fs::write(&claude_json, CLAUDE_JSON).unwrap();
    std::fs::write(&codex, CODEX_TOML).unwrap();
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    let json = |p: &Path| -> Value { serde_json::from_str(&read(p)).unwrap() };

    ok(setup(home, &["claude-code"]));
    ok(setup(home, &["codex"]));
    let installed = json(&settings);
    assert_eq!(keys(&installed), ["permissions", "model", "env", "hooks"], "the user's keys stay where they were");
    assert_eq!(keys(&installed["env"]), ["ZED", "ALPHA"]);
    let stop = installed["hooks"]["Stop"].as_array().unwrap();
    assert_eq!(stop[0]["hooks"][0]["command"], "notify-send done", "the user's own hook stays first");
    assert!(stop.iter().any(|g| g["hooks"][0]["command"].as_str().unwrap().ends_with("hook Stop")), "{stop:?}");
    let state = json(&claude_json);
    assert_eq!(keys(&state), ["numStartups", "mcpServers", "autoUpdates"]);
    assert_eq!(keys(&state["mcpServers"]), ["github", "memcc"]);
    let toml = read(&codex);
    assert!(toml.starts_with(CODEX_TOML), "Codex's config is added to, not rewritten:\n{toml}");
    assert!(toml.contains("[mcp_servers.memcc]"), "{toml}");
    // Codex runs a session end too (since 0.145), cut at 3 s: MemCC asks for no more.
    let codex_hooks = json(&home.join(".codex/hooks.json"));
    let end = &codex_hooks["hooks"]["SessionEnd"][0]["hooks"][0];
    assert!(end["command"].as_str().unwrap().ends_with("hook SessionEnd"), "{codex_hooks}");
    assert_eq!(end["timeout"], 3, "{codex_hooks}");

    // Again: nothing changes, not even a byte.
    let files = [&settings, &claude_json, &codex, &home.join(".codex/hooks.json")];
    let once: Vec<String> = files.iter().map(|p| read(p)).collect();
    ok(setup(home, &["claude-code"]));
    ok(setup(home, &["codex"]));
    let twice: Vec<String> = files.iter().map(|p| read(p)).collect();
    assert_eq!(once, twice, "a second setup is a no-op");

    ok(setup(home, &["claude-code", "--uninstall"]));
    ok(setup(home, &["codex", "--uninstall"]));
    // Byte for byte what the user had; what MemCC made (Codex's hooks.json, the backups) gone.
    assert_eq!(read(&settings), SETTINGS, "settings.json as the user had it");
    assert_eq!(read(&claude_json), CLAUDE_JSON, ".claude.json as it was");
    assert_eq!(read(&codex), CODEX_TOML, "config.toml as it was");
    assert!(!home.join(".codex/hooks.json").exists(), "Codex's hooks.json was MemCC's");
    assert_eq!(leftovers(home), Vec::<String>::new());

    // A settings file with no hooks and a state file with no servers: none after an uninstall.
    std::fs::write(&settings, "{\"model\": \"opus\"}\n").unwrap();
    std::fs::write(&claude_json, "{\"numStartups\": 1}\n").unwrap();
    ok(setup(home, &["claude-code"]));
    ok(setup(home, &["claude-code", "--uninstall"]));
    assert_eq!(json(&settings), serde_json::json!({"model": "opus"}));
    assert_eq!(json(&claude_json), serde_json::json!({"numStartups": 1}));
}

/// Backups and other files MemCC left under `home` (its data directory aside).
fn leftovers(home: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for dir in [home.to_path_buf(), home.join(".claude"), home.join(".codex")] {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.contains("memcc") && name != "data" {
                found.push(entry.path().display().to_string());
            }
        }
    }
    found
}

/// Uninstall gives back what was there, byte for byte — numbers a JSON library would rewrite
/// and a layout it would not keep included — and removes what MemCC made: on a clean home, setup
/// and uninstall leave no file behind. A file the user changed since keeps their change.
#[test]
fn uninstall_gives_back_the_bytes_and_removes_what_memcc_made() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    ok(setup(home, &["claude-code"]));
    ok(setup(home, &["codex"]));
    let made = [".claude/settings.json", ".claude.json", ".codex/hooks.json", ".codex/config.toml"];
    assert!(made.iter().all(|f| home.join(f).is_file()), "setup wrote its files");
    ok(setup(home, &["claude-code", "--uninstall"]));
    ok(setup(home, &["codex", "--uninstall"]));
    for f in made {
        assert!(!home.join(f).exists(), "{f} was MemCC's alone and is gone");
    }
    assert_eq!(leftovers(home), Vec::<String>::new());

    // Odd numbers and an odd layout: given back as they were.
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    let odd = "{ \"numStartups\" : 123456789012345678901234567890, \"ratio\": 1.50,\n\t\"x\": [1,2] }";
    std::fs::write(home.join(".claude.json"), odd).unwrap();
    ok(setup(home, &["claude-code"]));
    assert_ne!(read(&home.join(".claude.json")), odd);
    ok(setup(home, &["claude-code", "--uninstall"]));
    assert_eq!(read(&home.join(".claude.json")), odd);

    // Changed by the user after setup: their change stays, MemCC's part goes.
    ok(setup(home, &["claude-code"]));
    let path = home.join(".claude.json");
    let mut state: Value = serde_json::from_str(&read(&path)).unwrap();
    state["theme"] = json!("dark");
    std::fs::write(&path, state.to_string()).unwrap();
    ok(setup(home, &["claude-code", "--uninstall"]));
    let after: Value = serde_json::from_str(&read(&path)).unwrap();
    assert_eq!(after["theme"], "dark");
    assert!(after.get("mcpServers").and_then(|s| s.get("memcc")).is_none(), "{after}");
}

/// Dotfiles kept in a repository and linked into place stay links: setup writes through them.
/// The backup is the user's alone and stays the bytes they had before MemCC first touched the
/// file; a FIFO in a config file's place is refused, not waited on.
#[test]
fn setup_writes_through_a_linked_config_and_keeps_the_first_backup_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let dotfiles = home.join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    let real = dotfiles.join("claude.json");
    std::fs::write(&real, CLAUDE_JSON).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = home.join(".claude.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();

    ok(setup(home, &["claude-code"]));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "still a link");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    assert!(written["mcpServers"]["memcc"].is_object(), "written where the link points: {written}");
    let backup = dotfiles.join("claude.json.memcc-backup");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), CLAUDE_JSON);
    assert_eq!(std::fs::metadata(&backup).unwrap().permissions().mode() & 0o777, 0o600, "the backup is private");
    // Uninstall and set up again: the backup is still the user's first file.
    ok(setup(home, &["claude-code", "--uninstall"]));
    ok(setup(home, &["claude-code"]));
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), CLAUDE_JSON, "the first backup stays");

    let fifo_home = home.join("fifo");
    std::fs::create_dir_all(fifo_home.join(".claude")).unwrap();
    let made = Command::new("mkfifo").arg(fifo_home.join(".claude/settings.json")).status().is_ok_and(|s| s.success());
    if made {
        let out = setup(&fifo_home, &["claude-code"]);
        assert!(!out.status.success(), "refused");
        assert!(String::from_utf8_lossy(&out.stderr).contains("not a regular file"), "{out:?}");
    }
}

/// A `SessionStart` hook that never answers is given the time its host gives it, then ended with
/// what it started, and `setup --check` says so instead of waiting with it.
#[test]
fn setup_check_ends_a_hook_that_never_answers() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let pid_file = home.path().join("hook.pid");
    // A program named memcc (so the check takes the hook for MemCC's) that hangs.
    let hanging = bin.join("memcc");
    std::fs::write(&hanging, format!("#!/bin/sh\necho $$ > {}\nexec sleep 600\n", pid_file.display())).unwrap();
    std::fs::set_permissions(&hanging, std::fs::Permissions::from_mode(0o755)).unwrap();
    let claude = home.path().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let settings = json!({"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": format!("{} hook SessionStart", hanging.display()), "timeout": 2}
    ]}]}});
    std::fs::write(claude.join("settings.json"), settings.to_string()).unwrap();
    let mut child = Command::new(BIN)
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .arg("--home")
        .arg(home.path().join("data"))
        .args(["setup", "--check", "claude-code"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("setup --check waited on a hanging hook");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "a hook that does not answer fails the check: {stdout}");
    assert!(stdout.contains("FAIL SessionStart hook: no answer within 2 s"), "{stdout}");
    let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    // Ended: gone, or a zombie its parent (reparented, in a container perhaps to a PID 1 that
    // does not reap) has not collected.
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let running = !state.is_empty() && state.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z'));
    assert!(!running, "the hung hook (process {pid}) was ended: {state}");
}

/// A file setup cannot write (here a link to a directory that is not there; a read-only home
/// for a user) leaves every other file as it was: no host half set up.
#[test]
fn a_file_that_cannot_be_written_leaves_the_others_as_they_were() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(home.join(".claude/settings.json"), SETTINGS).unwrap();
    std::os::unix::fs::symlink(home.join("gone/dir/claude.json"), home.join(".claude.json")).unwrap();
    let out = setup(home, &["claude-code"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("nothing changed for Claude Code"), "{said}");
    assert_eq!(std::fs::read_to_string(home.join(".claude/settings.json")).unwrap(), SETTINGS);
    assert_eq!(leftovers(home), Vec::<String>::new(), "no backup of a change that did not happen");
    // Nor is a file made where there was none.
    std::fs::remove_file(home.join(".claude/settings.json")).unwrap();
    assert!(!setup(home, &["claude-code"]).status.success());
    assert!(!home.join(".claude/settings.json").exists());
}

/// Any JSON a user keeps in Claude Code's two files — keys in any order, nesting, numbers of
/// any size and form, other hooks (one named like MemCC's own but not its program) — comes back
/// byte for byte after setup and uninstall, and a second setup changes nothing.
mod any_user_file {
    use super::*;
    use proptest::prelude::*;

    fn leaf() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<i64>().prop_map(|n| n.to_string()),
            Just("123456789012345678901234567890".to_string()),
            Just("1.50".to_string()),
            Just("-0.0".to_string()),
            Just("2e3".to_string()),
            "[a-zA-Z \u{e9}\u{4e2d}]{0,8}".prop_map(|s| serde_json::to_string(&s).unwrap()),
            Just("true".to_string()),
            Just("null".to_string()),
        ]
    }

    /// A JSON text written as a person might: spacing, order and number forms their own.
    fn value() -> impl Strategy<Value = String> {
        leaf().prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(", "))),
                proptest::collection::vec(("[a-z]{1,6}", inner), 0..4).prop_map(|kv| {
                    let fields: Vec<String> = kv.iter().map(|(k, v)| format!("\"{k}\" :{v}")).collect();
                    format!("{{ {} }}", fields.join(",\n  "))
                }),
            ]
        })
    }

    fn object() -> impl Strategy<Value = String> {
        (proptest::collection::btree_map("[a-z]{1,6}", value(), 0..5), any::<bool>()).prop_map(|(m, own_hook)| {
            let mut fields: Vec<String> = m.iter().rev().map(|(k, v)| format!("\"{k}\":  {v}")).collect();
            if own_hook {
                fields.push(
                    r#""hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "memcc-notify start"}]}]}"#
                        .into(),
                );
            }
            format!("{{\n\t{}\n}}\n", fields.join(",\n\t"))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
        #[test]
        fn setup_then_uninstall_gives_back_the_bytes(settings in object(), state in object()) {
            let dir = tempfile::tempdir().unwrap();
            let home = dir.path();
            std::fs::create_dir_all(home.join(".claude")).unwrap();
            let (settings_path, state_path) = (home.join(".claude/settings.json"), home.join(".claude.json"));
            std::fs::write(&settings_path, &settings).unwrap();
            std::fs::write(&state_path, &state).unwrap();
            ok(setup(home, &["claude-code"]));
            let installed = std::fs::read_to_string(&settings_path).unwrap();
            prop_assert!(installed.contains("hook SessionStart"), "{installed}");
            if settings.contains("memcc-notify") {
                prop_assert!(installed.contains("memcc-notify start"), "another program's hook stays: {installed}");
            }
            ok(setup(home, &["claude-code"]));
            prop_assert_eq!(std::fs::read_to_string(&settings_path).unwrap(), installed, "a second setup is a no-op");
            ok(setup(home, &["claude-code", "--uninstall"]));
            prop_assert_eq!(std::fs::read_to_string(&settings_path).unwrap(), settings);
            prop_assert_eq!(std::fs::read_to_string(&state_path).unwrap(), state);
            prop_assert_eq!(leftovers(home), Vec::<String>::new());
        }
    }
}

/// What `setup --check` prints of text others wrote (a hook's logged error naming a session id
/// a transcript chose) reaches the terminal as text, never as its control sequences.
#[test]
fn setup_check_prints_hostile_text_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let run = home.join("data/run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(
        run.join("hooks.log"),
        "2026-12-07 10:00 memcc hook: session \u{1b}[2J\u{1b}]0;pwned\u{7}x failed\n",
    )
    .unwrap();
    let out = setup(home, &["--check", "claude-code"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("hook error logged"), "{stdout}");
    assert!(!stdout.contains('\u{1b}') && !stdout.contains('\u{7}'), "{stdout:?}");
    assert!(stdout.contains("\\u{1b}[2J"), "shown, not obeyed: {stdout}");
}

/// A settings file larger than any host writes is left alone with a clear error (not read whole
/// into memory), and nothing else is written.
#[test]
fn a_huge_settings_file_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    let huge = home.join(".claude/settings.json");
    // Sparse: 300 MB on paper, nothing on disk.
    std::fs::File::create(&huge).unwrap().set_len(300 << 20).unwrap();
    let out = setup(home, &["claude-code"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && said.contains("setup leaves it alone"), "{said}");
    assert_eq!(std::fs::metadata(&huge).unwrap().len(), 300 << 20);
    assert!(!home.join(".claude.json").exists(), "nothing else written");
    assert_eq!(leftovers(home), Vec::<String>::new());
}
