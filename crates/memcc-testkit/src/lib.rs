//! Test support shared by MemCC's crates: a real OpenAI-compatible HTTP server on 127.0.0.1
//! whose answers each test scripts, and which logs every request it receives.
//! Used only as a dev-dependency.

use std::io::copy;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

/// How the server answers one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A chat completion whose message content is this text.
    Chat(String),
    /// Any status and raw body.
    Raw(u16, String),
    /// Wait this long, then answer 200 with an empty completion (the client should give up first).
    Hang(Duration),
    /// Any status and a binary body (a file a package index serves).
    Bytes(u16, Arc<Vec<u8>>),
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Logged {
    pub path: String,
    pub body: Value,
}

type Handler = dyn Fn(&str, &Value, usize) -> Reply + Send + Sync;

pub struct MockServer {
    port: u16,
    log: Arc<Mutex<Vec<Logged>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl MockServer {
    /// Start a server; `handler(path, body, n)` decides the reply to the n-th request (0-based).
    pub fn start(handler: impl Fn(&str, &Value, usize) -> Reply + Send + Sync + 'static) -> Self {
        let server = tiny_http::Server::http("127.0.0.1:0").unwrap_or_else(|e| panic!("cannot bind 127.0.0.1: {e}"));
        let port = server.server_addr().to_ip().map(|a| a.port()).unwrap_or(0);
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let (log2, stop2) = (log.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut n = 0usize;
            while !stop2.load(Ordering::SeqCst) {
                let Ok(Some(mut request)) = server.recv_timeout(Duration::from_millis(50)) else {
                    continue;
                };
                let mut text = String::new();
                let _ = request.as_reader().read_to_string(&mut text);
                let body: Value = serde_json::from_str(&text).unwrap_or(Value::String(text));
                let path = request.url().to_string();
                log2.lock().unwrap_or_else(|p| p.into_inner()).push(Logged { path: path.clone(), body: body.clone() });
                let reply = handler(&path, &body, n);
                n += 1;
                // One thread per request, so a hanging reply does not block the next request.
                std::thread::spawn(move || respond(request, reply));
            }
        });
        MockServer { port, log, stop, thread: Some(thread) }
    }

    /// A server that always answers with the same reply.
    pub fn always(reply: Reply) -> Self {
        Self::start(move |_, _, _| reply.clone())
    }

    /// `http://127.0.0.1:<port>/v1`
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// `http://127.0.0.1:<port>`
    pub fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn requests(&self) -> Vec<Logged> {
        self.log.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The body of a chat completion whose content is `text`.
pub fn chat_completion(text: &str) -> String {
    json!({
        "id": "chatcmpl-mock", "object": "chat.completion", "created": 0, "model": "mock",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    })
    .to_string()
}

fn respond(request: tiny_http::Request, reply: Reply) {
    let json_header = tiny_http::Header::from_bytes(&b"Content-Type"[..], &b"application/json"[..]).ok();
    let (status, body) = match reply {
        Reply::Chat(text) => (200, chat_completion(&text)),
        Reply::Raw(status, body) => (status, body),
        Reply::Bytes(status, bytes) => {
            let _ = request.respond(tiny_http::Response::from_data(bytes.as_slice()).with_status_code(status));
            return;
        }
        Reply::Hang(d) => {
            std::thread::sleep(d);
            (200, chat_completion(""))
        }
    };
    let mut response = tiny_http::Response::from_string(body).with_status_code(status);
    if let Some(h) = json_header {
        response = response.with_header(h);
    }
    let _ = request.respond(response);
}

/// A test's missing prerequisite (dataset, model, server): prints `SKIP: …` on a user's
/// machine, and fails the test under `CI=true`, where nothing may skip.
pub fn skip(what: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI=true and {what}: checks may not skip in CI");
    }
    eprintln!("SKIP: {what}");
}

/// The local model's directory (`$MEMCC_MODEL_DIR`, holding `weights.npz`) for a test that `needs`
/// it; else [`skip`] (with what the test is) and `None`.
pub fn model_dir(needs: &str) -> Option<std::path::PathBuf> {
    let dir =
        std::env::var_os("MEMCC_MODEL_DIR").map(std::path::PathBuf::from).filter(|d| d.join("weights.npz").is_file());
    if dir.is_none() {
        skip(&format!("MEMCC_MODEL_DIR holds no model ({needs})"));
    }
    dir
}

/// `../shared/<relative>` beside the repository root, when it exists; else [`skip`] and `None`.
pub fn shared_data(relative: &str) -> Option<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let path = root.join("shared").join(relative);
    if path.exists() {
        return Some(path);
    }
    skip(&format!("{} not found (data-driven check)", path.display()));
    None
}

/// Where the PostgreSQL tests' server is: `$MEMCC_TEST_PG_URL` (`postgres://user@host:port/db`,
/// as `scripts/pg-server.sh start` prints it).
pub const PG_URL_ENV: &str = "MEMCC_TEST_PG_URL";

/// A database of its own for the test that names it `key` (created on first use, kept for the
/// same key, so a test can reopen it), as a URL; else [`skip`] and `None`.
pub fn postgres_database(key: &str) -> Option<String> {
    let Some(url) = std::env::var(PG_URL_ENV).ok().filter(|u| !u.trim().is_empty()) else {
        skip(&format!("{PG_URL_ENV} is not set (PostgreSQL tests; `scripts/pg-server.sh start DIR` starts a server)"));
        return None;
    };
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let name = format!("memcc_test_{hash:016x}");
    let mut admin = postgres::Client::connect(&url, postgres::NoTls)
        .unwrap_or_else(|e| panic!("{PG_URL_ENV}={url}: cannot connect: {e}"));
    let exists =
        admin.query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name]).expect("pg_database").is_some();
    if !exists {
        admin.batch_execute(&format!("CREATE DATABASE {name}")).expect("CREATE DATABASE");
    }
    let base = url.split('?').next().unwrap_or(&url);
    let (server, _) = base.rsplit_once('/').filter(|(s, _)| s.contains("://")).unwrap_or((base, ""));
    Some(format!("{server}/{name}"))
}

/// The parts of a `postgres://user@host:port/db` URL (as [`postgres_database`] returns):
/// user, `host:port`, database.
pub fn postgres_url_parts(url: &str) -> Option<(String, String, String)> {
    let rest = url.split_once("://")?.1;
    let (userinfo_host, db) = rest.split_once('/')?;
    let (user, target) = userinfo_host.rsplit_once('@')?;
    Some((user.to_string(), target.to_string(), db.split('?').next().unwrap_or(db).to_string()))
}

/// A TCP relay that can be cut (every connection closed, new ones closed as they come: the server
/// looks gone) and restored.
pub struct TcpSwitch {
    down: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl TcpSwitch {
    /// Relay connections on a free port of 127.0.0.1 (returned) to `target` (host:port).
    pub fn start(target: String) -> (TcpSwitch, u16) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let switch = TcpSwitch { down: Arc::default(), open: Arc::default() };
        let (down, open) = (switch.down.clone(), switch.open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                if down.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(&target) else { continue };
                open.lock().unwrap().extend([client.try_clone().unwrap(), server.try_clone().unwrap()]);
                for (mut from, mut to) in [(client.try_clone().unwrap(), server.try_clone().unwrap()), (server, client)]
                {
                    std::thread::spawn(move || {
                        let _ = copy(&mut from, &mut to);
                        let _ = from.shutdown(Shutdown::Both);
                        let _ = to.shutdown(Shutdown::Both);
                    });
                }
            }
        });
        (switch, port)
    }

    /// The server looks gone: every open connection closed, new ones closed as they come.
    pub fn cut(&self) {
        self.down.store(true, Ordering::SeqCst);
        for s in self.open.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    /// Relay again.
    pub fn restore(&self) {
        self.down.store(false, Ordering::SeqCst);
    }
}
