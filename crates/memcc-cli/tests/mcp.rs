//! `memcc mcp` driven by the official Python MCP client (PyPI `mcp`, see tests/mcp_client.py)
//! over stdio and streamable HTTP: one client process adds a memory and feeds a conversation,
//! greps and expands it, reads the resources, and gets an MCP error for every bad call; a second
//! client process finds the memory and forgets it. The client lives in the Python environment
//! `MEMCC_MCP_PYTHON` names (scripts/test.sh makes one); without it this test says SKIP (and
//! fails under CI=true).

mod common;

use std::process::{Command, Stdio};

use common::BIN;
use serde_json::Value;

const CLIENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_client.py");

fn python() -> Option<String> {
    let python = std::env::var("MEMCC_MCP_PYTHON").ok().filter(|p| !p.is_empty())?;
    let has_mcp = Command::new(&python).args(["-c", "import mcp"]).output().is_ok_and(|o| o.status.success());
    has_mcp.then_some(python)
}

fn client(python: &str, args: &[&str]) -> Value {
    let out = Command::new(python).arg(CLIENT).args(args).output().unwrap();
    assert!(out.status.success(), "client {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn check_write(w: &Value) {
    let tools: Vec<&str> = w["tools"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    for t in [
        "memory_search",
        "memory_get",
        "memory_add",
        "memory_forget",
        "lcm_grep",
        "lcm_describe",
        "lcm_expand_query",
        "conversation_append",
        "conversation_assemble",
    ] {
        assert!(tools.contains(&t), "{t} missing: {tools:?}");
    }
    assert!(w["schemas"]["memory_search"].as_array().unwrap().contains(&Value::from("query")), "{w}");
    assert_eq!(w["appended"], 40);
    assert_eq!(w["compacted"], true, "appending compacts under the budget");
    assert!(w["expanded"].as_str().unwrap().contains("blue-otter-3"), "grep -> expand recovers the exact phrase");
    assert!(w["described"].as_str().unwrap().starts_with("sum_"));
    // A client without sampling: the offline summariser writes.
    assert_eq!(w["method"], "llm:mcp-client:extractive-fallback", "{w}");
    assert!(w["assembled_tokens"].as_u64().unwrap() <= 1500);
    assert!(w["resources"].as_array().unwrap().contains(&Value::from("memcc://memory-prompt")));
    assert!(w["prompt"].as_str().unwrap().contains("memory_search"));
    for (case, outcome) in w["errors"].as_object().unwrap() {
        assert!(outcome.get("error").is_some(), "{case} should be an MCP error: {outcome}");
    }
    assert!(w["errors"]["get_missing"]["error"].as_str().unwrap().contains("not found"));
    assert!(w["errors"]["search_no_query"]["error"].as_str().unwrap().contains("query"));
}

fn check_read(r: &Value) {
    // The server names itself, not the MCP library it is built on.
    assert_eq!(r["server"], serde_json::json!(["memcc", env!("CARGO_PKG_VERSION")]), "{r}");
    // The model hears what it has: every memory tool, and how an exact detail comes back.
    let said = r["instructions"].as_str().unwrap();
    for tool in ["memory_search", "memory_get", "memory_facts", "memory_add", "lcm_grep", "lcm_expand_query"] {
        assert!(said.contains(tool), "{tool} in the server's instructions: {said}");
    }
    assert_eq!(r["found"], true, "a second client process finds the memory: {r}");
    assert_eq!(r["got"], "The canoe rental code is 7781.");
    assert_eq!(r["found_after_forget"], false, "forgotten through MCP");
}

/// A client that offers sampling writes the summaries of what it appends; one that does not gets
/// the offline summariser's (`check_write`'s run).
fn check_sampling(s: &Value) {
    assert_eq!(s["compacted"], true, "{s}");
    let asked = s["asked"].as_array().unwrap();
    assert!(!asked.is_empty(), "the client's model was asked: {s}");
    // Each with MemCC's system prompt and words to summarise: a leaf's messages (thousands of
    // characters here), or a condensation's child summaries without their reading aids (a
    // couple of hundred).
    assert!(asked.iter().all(|a| a["system"] == true && a["chars"].as_u64().unwrap() > 100), "{s}");
    assert!(asked.iter().any(|a| a["chars"].as_u64().unwrap() > 2_000), "{s}");
    assert!(s["summaries_by_client"].as_u64().unwrap() >= 1, "its summaries are stored: {s}");
    assert_eq!(s["method"], "llm:mcp-client:normal", "written by the client's model, not a fallback: {s}");
}

#[test]
fn an_mcp_client_adds_searches_forgets_greps_and_expands_over_stdio_and_http() {
    let Some(python) = python() else {
        memcc_testkit::skip("no Python with the `mcp` package (set MEMCC_MCP_PYTHON; scripts/test.sh makes one)");
        return;
    };
    // stdio: each client process starts its own server on the shared data directory.
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("stdio");
    let home = home.to_str().unwrap();
    check_write(&client(&python, &["write", "stdio", BIN, home]));
    check_read(&client(&python, &["read", "stdio", BIN, home]));
    check_sampling(&client(&python, &["sampling", "stdio", BIN, home]));
    // A model that takes 8 s a summary: the append returns in seconds, tells the client's
    // progress token how it goes, and the summaries follow.
    let slow = client(&python, &["slow", "stdio", BIN, home]);
    assert_eq!(slow["added"], 40, "{slow}");
    assert!(slow["took"].as_f64().unwrap() < 8.0, "the append waited for the model: {slow}");
    assert_eq!(slow["compaction"]["inBackground"], true, "{slow}");
    assert!(slow["progress"].as_array().unwrap().len() >= 3, "progress while it waited: {slow}");
    assert!(slow["summaries_by_client"].as_u64().unwrap() >= 1, "the client's summaries followed: {slow}");

    // Streamable HTTP on loopback with a bearer token; two client processes, one server.
    let home = dir.path().join("http");
    let mut server = Command::new(BIN)
        .arg("--home")
        .arg(&home)
        .args(["--embedding-model", "hashing", "mcp", "--http", "0", "--token", "e2e-secret"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let url = common::listening_url(&mut server);
    check_write(&client(&python, &["write", "http", &url, "e2e-secret"]));
    check_read(&client(&python, &["read", "http", &url, "e2e-secret"]));
    check_sampling(&client(&python, &["sampling", "http", &url, "e2e-secret"]));
    let refused = Command::new(&python).arg(CLIENT).args(["read", "http", &url, "wrong-token"]).output().unwrap();
    assert!(!refused.status.success(), "a wrong token is refused");
    server.kill().ok();
    server.wait().ok();

    // Anywhere but loopback needs a token.
    let out = Command::new(BIN)
        .arg("--home")
        .arg(dir.path().join("open"))
        .args(["--embedding-model", "hashing", "mcp", "--http", "0", "--bind", "0.0.0.0"])
        .env_remove("MEMCC_MCP_TOKEN")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("bearer token"), "{}", String::from_utf8_lossy(&out.stderr));
}
