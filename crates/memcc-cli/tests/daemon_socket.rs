//! The warm process's socket takes whatever is written to it — bytes that are no JSON, JSON of
//! another shape, a request for an event or agent of any name, a line past the size it reads, a
//! client that connects and says nothing — and answers each with an answer or an error (or
//! closes the connection), never by going down or stalling the next hook.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_memcc");

fn socket(data: &Path) -> Option<PathBuf> {
    std::fs::read_dir(data.join("run"))
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "sock") && UnixStream::connect(p).is_ok())
}

/// Write `payload`, then read what comes back within a few seconds: `None` when the daemon
/// closed the connection without a word.
fn exchange(sock: &Path, payload: &[u8]) -> Result<Option<Value>, String> {
    let mut stream = UnixStream::connect(sock).map_err(|e| format!("connect: {e}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(20))).map_err(|e| e.to_string())?;
    // A daemon that stops reading (the size it reads is reached) may close on a large write.
    let _ = stream.write_all(payload);
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let mut answer = Vec::new();
    match stream.read_to_end(&mut answer) {
        Ok(_) => {}
        // It stopped reading a request past the size it reads and closed with bytes unread.
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return Ok(None),
        Err(e) => return Err(format!("no answer: {e}")),
    }
    if answer.is_empty() {
        return Ok(None);
    }
    let text = String::from_utf8(answer).map_err(|e| format!("an answer that is not UTF-8: {e}"))?;
    let v: Value = serde_json::from_str(text.trim()).map_err(|e| format!("an answer that is not JSON: {e}: {text}"))?;
    if v.get("output").is_none() && v.get("error").is_none() {
        return Err(format!("an answer of another shape: {v}"));
    }
    Ok(Some(v))
}

fn payloads() -> impl Strategy<Value = Vec<u8>> {
    let event = prop_oneof![
        Just("SessionStart".to_string()),
        Just("UserPromptSubmit".to_string()),
        Just("Stop".to_string()),
        "[A-Za-z\u{1b}]{0,12}",
    ];
    let input = prop_oneof![
        Just(json!({})),
        "\\PC{0,40}".prop_map(|p| json!({"session_id": p, "prompt": p, "cwd": p})),
        Just(json!({"session_id": 7, "prompt": ["not", "text"], "transcript_path": "/dev/zero"})),
        Just(json!(null)),
    ];
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..600),
        "\\PC{0,200}".prop_map(|s| format!("{s}\n").into_bytes()),
        (event, "[a-z\u{1b}/.]{0,10}", input).prop_map(|(e, agent, input)| format!(
            "{}\n",
            json!({"agent": agent, "event": e, "input": input})
        )
        .into_bytes()),
        Just(format!("{{\"agent\": \"main\", \"event\": \"{}\"", "x".repeat((16 << 20) + 1024)).into_bytes()),
    ]
}

#[test]
fn whatever_is_written_to_the_socket_the_warm_process_answers_and_stays_up() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let config = tmp.path().join("memcc.json");
    std::fs::write(&config, r#"{"embeddingModel": "hashing", "hooks": {"idleSecs": 120}}"#).unwrap();
    let memcc = |args: &[&str]| {
        let mut c = Command::new(BIN);
        c.arg("--home").arg(&data).arg("--config").arg(&config).args(args);
        c
    };
    let mut daemon =
        memcc(&["daemon"]).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let started = Instant::now();
    let sock = loop {
        if let Some(s) = socket(&data) {
            break s;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "the daemon did not listen");
        std::thread::sleep(Duration::from_millis(50));
    };
    // A client that connects and says nothing holds no one else up.
    let _silent = UnixStream::connect(&sock).unwrap();

    let mut runner = TestRunner::new(Config { cases: 48, ..Config::default() });
    let result = runner.run(&payloads(), |payload| {
        exchange(&sock, &payload).map_err(TestCaseError::fail)?;
        Ok(())
    });
    let alive = daemon.try_wait().unwrap().is_none();
    let valid = json!({"agent": "main", "event": "SessionStart", "input": {"session_id": "after", "cwd": "/"}});
    let answered = exchange(&sock, format!("{valid}\n").as_bytes());
    let _ = memcc(&["daemon", "--stop"]).stdout(Stdio::null()).status();
    let _ = daemon.kill();
    let _ = daemon.wait();
    result.unwrap();
    assert!(alive, "the daemon went down");
    let answered = answered.unwrap().expect("a valid request is answered");
    assert!(answered["error"].is_null(), "{answered}");
}
