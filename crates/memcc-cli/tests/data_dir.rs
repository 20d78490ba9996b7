//! Where the data lives without `--home`: `$MEMCC_HOME`, else `memcc/` in `$OPENCLAW_STATE_DIR`,
//! else the platform's data directory (`~/.local/share/memcc` here) — unless only the former
//! default, `~/.openclaw/memcc`, holds a store, which is then used and said.

mod common;

use std::path::Path;
use std::process::Command;

use serde_json::json;

/// `memcc ingest` of one message with exactly the given MemCC/OpenClaw variables set; what it
/// said on stderr.
fn ingest(dir: &Path, vars: &[(&str, &Path)]) -> String {
    let file = dir.join("t.jsonl");
    std::fs::write(&file, "{\"role\": \"user\", \"content\": \"hello\"}\n").unwrap();
    let mut cmd = Command::new(common::BIN);
    cmd.env_remove("MEMCC_HOME")
        .env_remove("OPENCLAW_STATE_DIR")
        .env_remove("XDG_DATA_HOME")
        .env("HOME", dir.join("home"));
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.args(["--embedding-model", "hashing", "ingest", "--session", "s"]).arg(&file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    common::ok(out);
    stderr
}

#[test]
fn data_follows_memcc_home_then_the_openclaw_state_dir_then_home() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("profile-b");
    ingest(dir.path(), &[("OPENCLAW_STATE_DIR", &state)]);
    assert!(state.join("memcc/context.db").is_file(), "in the OpenClaw state dir");
    assert!(!dir.path().join("home/.openclaw").exists());

    let mine = dir.path().join("mine");
    ingest(dir.path(), &[("OPENCLAW_STATE_DIR", &state), ("MEMCC_HOME", &mine)]);
    assert!(mine.join("context.db").is_file(), "MEMCC_HOME wins");

    let said = ingest(dir.path(), &[]);
    assert!(dir.path().join("home/.local/share/memcc/context.db").is_file(), "the platform's data dir");
    assert!(!dir.path().join("home/.openclaw").exists() && !said.contains("using the store"), "{said}");

    // `memcc stats` says which store it read, and where the model is looked for.
    let out = Command::new(common::BIN)
        .env_remove("MEMCC_HOME")
        .env_remove("MEMCC_MODEL_DIR")
        .env("HOME", dir.path().join("home"))
        .env("OPENCLAW_STATE_DIR", &state)
        .args(["--embedding-model", "hashing", "stats"])
        .output()
        .unwrap();
    let text = common::ok(out);
    let first = text.lines().next().unwrap_or_default().to_string();
    assert!(first.contains(&format!("data in {}", state.join("memcc").display())), "{text}");
    assert!(first.contains(&format!("{} (missing", state.join("memcc/models/usem3").display())), "{text}");
}

#[test]
fn a_missing_local_model_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(common::BIN)
        .env_remove("MEMCC_MODEL_DIR")
        .arg("--home")
        .arg(dir.path())
        .args(["memory", "search", "pottery"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    common::ok(out);
    assert_eq!(stderr.matches("local embedding model unavailable").count(), 1, "{stderr}");
    assert!(stderr.starts_with("memcc: warning: "), "{stderr}");
    // `stats` says what that means, and the way out.
    let out = Command::new(common::BIN)
        .env_remove("MEMCC_MODEL_DIR")
        .arg("--home")
        .arg(dir.path())
        .arg("stats")
        .output()
        .unwrap();
    let text = common::ok(out);
    assert!(text.contains("recall runs on the hashing fallback") && text.contains("memcc model fetch"), "{text}");
    // An MCP client hears it too: in the server's instructions and beside search results.
    let mut cmd = Command::new(common::BIN);
    cmd.env_remove("MEMCC_MODEL_DIR").arg("--home").arg(dir.path()).arg("mcp");
    let mut mcp = common::McpClient::spawn(cmd);
    let instructions = mcp.initialized["instructions"].as_str().unwrap_or_default().to_string();
    assert!(instructions.contains("matches shared words only"), "{instructions}");
    let v = mcp.request("tools/call", json!({"name": "memory_search", "arguments": {"query": "pottery"}}));
    let blocks = v["result"]["content"].as_array().unwrap();
    assert!(blocks.iter().any(|b| b["text"].as_str().is_some_and(|t| t.starts_with("[notice]"))), "{v}");
    // Chosen on purpose (`--embedding-model hashing`), it is nothing to warn about.
    let mut quiet = common::McpClient::start(dir.path(), &["mcp"]);
    assert!(!quiet.initialized["instructions"].as_str().unwrap_or_default().contains("shared words only"));
    let v = quiet.request("tools/call", json!({"name": "memory_search", "arguments": {"query": "pottery"}}));
    assert_eq!(v["result"]["content"].as_array().unwrap().len(), 1, "{v}");
}

/// A data directory holds every conversation and memory: MemCC makes it, and its databases, this
/// user's alone; one made open to others (by hand, or by an older MemCC) is named on every
/// command with how to close it.
#[cfg(unix)]
#[test]
fn a_new_data_dir_is_private_and_an_open_one_is_named() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("fresh/memcc");
    let out = common::run(&home, &["ingest", "--session", "s", "/dev/null"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&home), 0o700, "the data dir");
    for db in ["context.db", "memory.db"] {
        assert_eq!(mode(&home.join(db)), 0o600, "{db}");
    }
    assert!(!String::from_utf8_lossy(&out.stderr).contains("open to other users"));

    let open = dir.path().join("open");
    std::fs::create_dir_all(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = common::run(&open, &["stats"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("open to other users") && said.contains(&format!("chmod 700 {}", open.display())), "{said}");
}

/// A store at the former default, `~/.openclaw/memcc` (OpenClaw's), is used while the new place
/// holds none — with a word saying so — and never split into two memories; once the new place
/// holds a store, that one is used.
#[test]
fn a_store_at_the_former_default_is_used_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let former = dir.path().join("home/.openclaw/memcc");
    let said = ingest(dir.path(), &[("OPENCLAW_STATE_DIR", &dir.path().join("home/.openclaw"))]);
    assert!(former.join("context.db").is_file(), "{said}");
    let said = ingest(dir.path(), &[]);
    assert!(said.contains(&format!("using the store in {}", former.display())), "{said}");
    assert!(!dir.path().join("home/.local/share/memcc").exists(), "not split in two");
    let out = Command::new(common::BIN)
        .env_remove("MEMCC_HOME")
        .env_remove("OPENCLAW_STATE_DIR")
        .env_remove("XDG_DATA_HOME")
        .env("HOME", dir.path().join("home"))
        .args(["--embedding-model", "hashing", "stats"])
        .output()
        .unwrap();
    let stats = common::ok(out);
    assert!(stats.lines().next().unwrap_or_default().contains(&format!("data in {}", former.display())), "{stats}");
}

/// A new `--home` finds the model already fetched into the default data dir instead of asking
/// for another 32 MB copy.
#[test]
fn a_new_home_finds_the_model_already_fetched() {
    let dir = tempfile::tempdir().unwrap();
    let fetched = dir.path().join("home/.local/share/memcc/models/usem3");
    std::fs::create_dir_all(&fetched).unwrap();
    for file in ["weights.npz", "sp.model"] {
        std::fs::write(fetched.join(file), b"stand-in").unwrap();
    }
    let out = Command::new(common::BIN)
        .env_remove("MEMCC_HOME")
        .env_remove("MEMCC_MODEL_DIR")
        .env_remove("OPENCLAW_STATE_DIR")
        .env_remove("XDG_DATA_HOME")
        .env("HOME", dir.path().join("home"))
        .arg("--home")
        .arg(dir.path().join("project-store"))
        .args(["--embedding-model", "hashing", "stats"])
        .output()
        .unwrap();
    let stats = common::ok(out);
    let first = stats.lines().next().unwrap_or_default();
    assert!(first.contains(&format!("local model in {}", fetched.display())), "{stats}");
}
