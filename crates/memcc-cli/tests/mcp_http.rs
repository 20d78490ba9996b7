//! Who may reach `memcc mcp --http`: a remote client with the right token is served whatever
//! `Host` it addresses on a server bound to every interface (unless the operator names the
//! hosts), the `Bearer` scheme is read in any letter case, a browser page of a foreign origin
//! is refused (403), and the token comes from `MEMCC_MCP_TOKEN`. Raw HTTP/1.1 over TCP, as any
//! client sends it.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

use common::BIN;

struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(home: &std::path::Path, extra: &[&str]) -> Server {
    let mut child = Command::new(BIN)
        .arg("--home")
        .arg(home)
        .args(["--embedding-model", "hashing", "mcp", "--http", "0", "--bind", "0.0.0.0"])
        .args(extra)
        .env("MEMCC_MCP_TOKEN", "s3cret-token")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let url = common::listening_url(&mut child);
    let port = url.trim_end_matches("/mcp").rsplit(':').next().unwrap().parse().unwrap();
    Server { child, port }
}

/// The status of an `initialize` POST to the server, with these headers.
fn status(server: &Server, headers: &[(&str, &str)]) -> u16 {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    let mut tcp = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    tcp.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    let _ = tcp.read_to_string(&mut response);
    response.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

#[test]
fn a_remote_client_with_the_token_is_served_and_a_foreign_page_is_not() {
    let home = tempfile::tempdir().unwrap();
    let server = start(home.path(), &[]);
    let remote = ("Host", "mem.example.com:8443");
    assert_eq!(status(&server, &[remote, ("Authorization", "Bearer s3cret-token")]), 200, "a remote client");
    assert_eq!(status(&server, &[remote, ("Authorization", "bearer s3cret-token")]), 200, "any letter case");
    assert_eq!(status(&server, &[remote, ("Authorization", "Bearer wrong")]), 401);
    assert_eq!(status(&server, &[remote]), 401, "no token");
    // No OAuth: its discovery documents are not found (a 401 there sends clients into an OAuth flow).
    for path in ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"] {
        let mut tcp = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        write!(tcp, "GET {path} HTTP/1.1\r\nHost: mem.example.com:8443\r\nConnection: close\r\n\r\n").unwrap();
        let mut response = String::new();
        let _ = tcp.read_to_string(&mut response);
        assert!(response.starts_with("HTTP/1.1 404"), "{path}: {response}");
    }
    let page = ("Origin", "http://evil.example");
    assert_eq!(status(&server, &[remote, page, ("Authorization", "Bearer s3cret-token")]), 403, "foreign origin");
    drop(server);
    // The operator names the hosts: others are refused, named ones served.
    let server =
        start(home.path(), &["--allowed-host", "mem.example.com:8443", "--allowed-origin", "https://app.example:443"]);
    let token = ("Authorization", "Bearer s3cret-token");
    assert_eq!(status(&server, &[remote, token]), 200);
    assert_eq!(status(&server, &[("Host", "other.example.com"), token]), 403);
    assert_eq!(status(&server, &[remote, token, ("Origin", "https://app.example")]), 200, "an allowed origin");
}

/// The raw response to `request` (a whole HTTP/1.1 request, `Connection: close`).
fn exchange(server: &Server, request: &str) -> String {
    let mut tcp = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    tcp.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    let _ = tcp.read_to_string(&mut response);
    response
}

/// A page of an origin the operator allowed can call from a browser: its preflight (no token,
/// as browsers send it) is answered with the headers MCP needs, and the call's answer names the
/// origin; another origin gets no CORS header and its call is refused.
#[test]
fn a_browser_page_of_an_allowed_origin_can_call_and_another_cannot() {
    let home = tempfile::tempdir().unwrap();
    let server = start(home.path(), &["--allowed-origin", "http://localhost:*"]);
    let preflight = |origin: &str| {
        exchange(
            &server,
            &format!(
                "OPTIONS /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: {origin}\r\nAccess-Control-Request-Method: POST\r\n\
                 Access-Control-Request-Headers: authorization, content-type, mcp-protocol-version\r\nConnection: close\r\n\r\n"
            ),
        )
        .to_lowercase()
    };
    let allowed = preflight("http://localhost:5173");
    assert!(allowed.starts_with("http/1.1 200"), "{allowed}");
    assert!(allowed.contains("access-control-allow-origin: http://localhost:5173"), "{allowed}");
    let allow_headers = allowed.lines().find(|l| l.starts_with("access-control-allow-headers")).unwrap_or_default();
    for h in ["authorization", "content-type", "mcp-protocol-version", "mcp-session-id"] {
        assert!(allow_headers.contains(h), "{h}: {allowed}");
    }
    let foreign = preflight("http://evil.example");
    assert!(!foreign.contains("access-control-allow-origin"), "{foreign}");

    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}"#;
    let call = |origin: &str| {
        exchange(
            &server,
            &format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: {origin}\r\nAuthorization: Bearer s3cret-token\r\n\
                 Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            ),
        )
        .to_lowercase()
    };
    let answered = call("http://localhost:5173");
    assert!(answered.starts_with("http/1.1 200"), "{answered}");
    assert!(answered.contains("access-control-allow-origin: http://localhost:5173"), "{answered}");
    assert!(
        answered.contains("access-control-expose-headers: mcp-session-id"),
        "the page may read its session: {answered}"
    );
    let refused = call("http://evil.example");
    assert!(refused.starts_with("http/1.1 403") && !refused.contains("access-control-allow-origin"), "{refused}");
}

/// Warnings and logs written to a pipe or a file carry no terminal colour codes: a server's
/// warning (here: no local model) is a plain line in its log.
#[test]
fn logs_to_a_pipe_are_plain_text() {
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .arg("--home")
        .arg(home.path())
        .args(["mcp"])
        .env_remove("MEMCC_MODEL_DIR")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("WARN memcc::warning: local embedding model unavailable"), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "ANSI codes in {stderr:?}");
}
