//! Running the `memcc` binary in the CLI's tests.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};

use serde_json::{Value, json};

pub const BIN: &str = env!("CARGO_BIN_EXE_memcc");

/// `memcc --home HOME --embedding-model hashing ARGS…`, whatever its outcome.
pub fn run(home: &std::path::Path, args: &[&str]) -> Output {
    Command::new(BIN).arg("--home").arg(home).args(["--embedding-model", "hashing"]).args(args).output().unwrap()
}

/// The standard output of a run that must succeed.
pub fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Where a `memcc mcp --http` server listens, read from the line it writes on stderr; the rest
/// of its log is drained on a thread so it never blocks on a full pipe.
pub fn listening_url(server: &mut std::process::Child) -> String {
    use std::io::{BufRead, BufReader};
    let mut lines = BufReader::new(server.stderr.take().expect("stderr piped")).lines();
    let url = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| l.split_once("listening on ").map(|(_, u)| u.trim().to_string()))
        .expect("the server says where it listens");
    std::thread::spawn(move || lines.for_each(drop));
    url
}

/// A client speaking MCP as any does: JSON-RPC lines over a `memcc … mcp` server's stdin and
/// stdout.
pub struct McpClient {
    pub child: Child,
    pub stdin: ChildStdin,
    pub stdout: BufReader<ChildStdout>,
    next: u64,
    /// The server's answer to `initialize` (its info and instructions).
    pub initialized: Value,
}

impl McpClient {
    /// `memcc --home HOME --embedding-model hashing ARGS…` (ARGS ending in `mcp …`), initialised.
    pub fn start(home: &std::path::Path, args: &[&str]) -> McpClient {
        let mut cmd = Command::new(BIN);
        cmd.arg("--home").arg(home).args(["--embedding-model", "hashing"]).args(args);
        McpClient::spawn(cmd)
    }

    /// Run `cmd` (a `memcc … mcp` command) and initialise the session.
    pub fn spawn(mut cmd: Command) -> McpClient {
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut c = McpClient { child, stdin, stdout, next: 1, initialized: Value::Null };
        let init = c.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
        );
        assert!(init.get("result").is_some(), "{init}");
        c.initialized = init["result"].clone();
        c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        c
    }

    pub fn send(&mut self, v: &Value) {
        writeln!(self.stdin, "{v}").unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
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
    pub fn call(&mut self, tool: &str, arguments: Value) -> Result<String, String> {
        let v = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        if let Some(e) = v.get("error") {
            return Err(e["message"].as_str().unwrap_or_default().to_string());
        }
        let result = &v["result"];
        let text = result["content"][0]["text"].as_str().unwrap_or_default().to_string();
        if result["isError"] == json!(true) { Err(text) } else { Ok(text) }
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
