//! The agent boundary over MCP: `memcc --agent alice mcp` acts for alice, whatever a call puts
//! in `agentId` — another agent's memory and conversations are out of reach (read, write,
//! forget alike) unless the operator names that agent with `--allow-agent`. Spoken as any MCP
//! client speaks it: JSON-RPC lines over the server's stdin and stdout.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use common::{BIN, ok, run};
use serde_json::{Value, json};

struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Client {
    fn start(home: &std::path::Path, extra: &[&str]) -> Client {
        let mut child = Command::new(BIN)
            .arg("--home")
            .arg(home)
            .args(["--embedding-model", "hashing", "--agent", "alice", "mcp", "--session", "alice-chat"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut c = Client { child, stdin, stdout, next: 1 };
        let init = c.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
        );
        assert!(init.get("result").is_some(), "{init}");
        c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        c
    }

    fn send(&mut self, v: &Value) {
        writeln!(self.stdin, "{v}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the server closed its output");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    /// A tool's text result, or the error's message.
    fn call(&mut self, tool: &str, arguments: Value) -> Result<String, String> {
        let v = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        if let Some(e) = v.get("error") {
            return Err(e["message"].as_str().unwrap_or_default().to_string());
        }
        let result = &v["result"];
        let text = result["content"][0]["text"].as_str().unwrap_or_default().to_string();
        if result["isError"] == json!(true) { Err(text) } else { Ok(text) }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn an_mcp_client_acts_for_the_servers_agent_and_only_the_agents_its_operator_allows() {
    let home = tempfile::tempdir().unwrap();
    ok(run(home.path(), &["--agent", "bob", "memory", "add", "Bob's locker code is 4242."]));
    let mut alice = Client::start(home.path(), &[]);
    let refused = |r: Result<String, String>| match r {
        Err(e) => assert!(e.contains("not allowed") && e.contains("alice"), "{e}"),
        Ok(out) => panic!("served another agent: {out}"),
    };
    // Every way in to bob is closed: read, write, forget, conversations.
    refused(alice.call("memory_search", json!({"query": "locker code", "agentId": "bob"})));
    refused(alice.call("memory_get", json!({"id": "mem_1", "agentId": "bob"})));
    refused(alice.call("memory_add", json!({"text": "planted", "pin": true, "agentId": "bob"})));
    refused(alice.call("memory_forget", json!({"id": "mem_1", "purge": true, "agentId": "bob"})));
    refused(alice.call("lcm_grep", json!({"pattern": "locker", "agentId": "bob"})));
    refused(alice.call(
        "conversation_append",
        json!({"sessionId": "bob-chat", "messages": [{"role": "user", "content": "hi"}], "agentId": "bob"}),
    ));
    refused(alice.call("conversation_assemble", json!({"sessionId": "bob-chat", "agentId": "bob"})));
    // Her own calls work, naming herself or not, and never see bob's memory.
    let found = alice.call("memory_search", json!({"query": "locker code"})).unwrap();
    assert!(!found.contains("4242"), "{found}");
    assert!(alice.call("memory_add", json!({"text": "Alice parks on level 3.", "agentId": "alice"})).is_ok());
    drop(alice);
    // Bob's memory is as it was: nothing planted, nothing forgotten.
    let bob = ok(run(home.path(), &["--agent", "bob", "--json", "memory", "search", "locker code planted"]));
    assert!(bob.contains("4242") && !bob.contains("planted"), "{bob}");
    // The operator allows bob: now a call may name him.
    let mut both = Client::start(home.path(), &["--allow-agent", "bob"]);
    let found = both.call("memory_search", json!({"query": "locker code", "agentId": "bob"})).unwrap();
    assert!(found.contains("4242"), "{found}");
    refused(both.call("memory_search", json!({"query": "locker code", "agentId": "carol"})));
}

/// What a model sees of the contract: a call it got wrong comes back as a tool result marked
/// isError with MemCC's code first (it can read and correct it), ids are "mem_N" in every
/// answer, and the tools say which only read and which destroys.
#[test]
fn a_models_mistakes_come_back_as_error_results_and_ids_have_one_shape() {
    let home = tempfile::tempdir().unwrap();
    let mut c = Client::start(home.path(), &[]);
    let tools = c.request("tools/list", json!({}));
    let tool =
        |name: &str| tools["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == name).unwrap().clone();
    for read_only in
        ["memory_search", "memory_get", "lcm_grep", "lcm_describe", "lcm_expand_query", "conversation_assemble"]
    {
        assert_eq!(tool(read_only)["annotations"]["readOnlyHint"], json!(true), "{read_only}");
    }
    assert_eq!(tool("memory_forget")["annotations"]["destructiveHint"], json!(true));
    assert_eq!(tool("memory_add")["annotations"]["readOnlyHint"], json!(false));
    assert!(tool("memory_search")["annotations"]["title"].is_string());

    let added: Value =
        serde_json::from_str(&c.call("memory_add", json!({"text": "The boat is moored at pier 9."})).unwrap()).unwrap();
    let id = added["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("mem_"), "{added}");
    c.call("conversation_append", json!({"messages": [{"role": "user", "content": "Check the mooring lines."}]}))
        .unwrap();
    let got: Value = serde_json::from_str(&c.call("memory_get", json!({"id": id})).unwrap()).unwrap();
    assert_eq!(got["id"], json!(id), "memory_get answers the id as memory_search gives it");
    for (tool, args, code) in [
        ("memory_get", json!({"id": "mem_999999"}), "[not_found]"),
        ("lcm_grep", json!({"pattern": "(unclosed", "mode": "regex"}), "[invalid_input]"),
        ("lcm_grep", json!({"pattern": "x", "mode": "bogus"}), "[invalid_input]"),
        ("memory_add", json!({"text": "   "}), "[invalid_input]"),
    ] {
        let v = c.request("tools/call", json!({"name": tool, "arguments": args}));
        assert!(v.get("error").is_none(), "{tool}: a tool result, not a JSON-RPC error: {v}");
        assert_eq!(v["result"]["isError"], json!(true), "{tool}: {v}");
        let text = v["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with(code), "{tool}: {text}");
    }
    let forgot: Value = serde_json::from_str(&c.call("memory_forget", json!({"id": id})).unwrap()).unwrap();
    assert_eq!(forgot["removed"], json!([id]), "{forgot}");
    // A query that matches nothing gets nothing, not the one record at 0.000.
    let none: Value = serde_json::from_str(&c.call("memory_search", json!({"query": "zzqx vrrk"})).unwrap()).unwrap();
    assert_eq!(none, json!([]), "{none}");
}
