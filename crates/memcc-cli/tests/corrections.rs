//! A person corrects a memory and pins one, from the CLI and over MCP: the correction replaces
//! the old text from then on, which stays as its history and says what replaced it.

mod common;

use serde_json::{Value, json};

use common::{McpClient, ok, run};

#[test]
fn a_memory_is_corrected_and_pinned_from_the_cli_and_over_mcp() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let added: Value =
        serde_json::from_str(&ok(run(h, &["--json", "memory", "add", "The staging database listens on port 5432."])))
            .unwrap();
    let old = format!("mem_{}", added["id"]);
    let edited = ok(run(h, &["memory", "edit", &old, "The staging database listens on port 6432."]));
    assert!(edited.contains("supersedes") && edited.contains(&old), "{edited}");
    let found = ok(run(h, &["memory", "search", "staging database port"]));
    let lines: Vec<&str> = found.lines().collect();
    assert!(lines[0].contains("6432"), "the correction first: {found}");
    assert!(found.contains("5432") && found.contains("superseded by mem_"), "the old text, marked: {found}");
    assert!(!run(h, &["memory", "edit", &old, "again"]).status.success(), "a superseded memory is not edited");

    let mut mcp = McpClient::start(h, &["mcp"]);
    let hits: Value =
        serde_json::from_str(&mcp.call("memory_search", json!({"query": "staging database port"})).unwrap()).unwrap();
    let new = hits[0]["id"].as_str().unwrap().to_string();
    let stale = hits.as_array().unwrap().iter().find(|h| h["id"] == old.as_str()).expect("the old text is found");
    assert_eq!((&stale["current"], stale["supersededBy"].as_str()), (&json!(false), Some(new.as_str())));
    let corrected: Value = serde_json::from_str(
        &mcp.call("memory_edit", json!({"id": new, "text": "The staging database listens on port 7432."})).unwrap(),
    )
    .unwrap();
    assert_eq!(corrected["supersedes"], new.as_str());
    let newest = corrected["id"].as_str().unwrap().to_string();
    let pinned: Value = serde_json::from_str(&mcp.call("memory_pin", json!({"id": newest})).unwrap()).unwrap();
    assert_eq!((&pinned["pinned"], &pinned["changed"]), (&json!(true), &json!(true)));
    let got: Value = serde_json::from_str(&mcp.call("memory_get", json!({"id": newest})).unwrap()).unwrap();
    assert_eq!(got["pinned"], true);
    assert!(mcp.call("memory_edit", json!({"id": "mem_999999", "text": "x"})).unwrap_err().contains("not_found"));
    drop(mcp);
    // Unpinned from the CLI.
    ok(run(h, &["memory", "pin", &newest, "--unpin"]));
    let got: Value = serde_json::from_str(&ok(run(h, &["--json", "memory", "get", &newest]))).unwrap();
    assert_eq!(got["pinned"], false);
}
