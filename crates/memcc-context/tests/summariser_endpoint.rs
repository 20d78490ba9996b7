//! Compaction through an OpenAI-compatible summariser on 127.0.0.1 that works, errors, hangs or
//! answers garbage: the turn is never lost and a fallback summary is always written.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use memcc_context::store::SummaryKind;
use memcc_context::{ContextConfig, ContextEngine, ContextStore, LlmSummarizer, SessionRef};
use memcc_core::llm::{OpenAiChat, OpenAiConfig};
use memcc_testkit::{MockServer, Reply};

fn engine_with(server: &MockServer, dir: &tempfile::TempDir) -> ContextEngine {
    let mut cfg = OpenAiConfig::new(&server.base_url(), "mock-model");
    cfg.api_key = Some("sk-test".into());
    cfg.timeout = Duration::from_millis(400);
    cfg.max_retries = 1;
    cfg.backoff = Duration::from_millis(10);
    let chat = OpenAiChat::new(cfg).unwrap();
    let store = ContextStore::open(&dir.path().join("c.db")).unwrap();
    ContextEngine::new(store, ContextConfig::default())
        .unwrap()
        .with_summarizer(Arc::new(LlmSummarizer::new(Arc::new(chat))))
}

/// Ingest enough turns to force compaction; return the summaries' methods.
fn run(engine: &ContextEngine) -> Vec<String> {
    let session = SessionRef::new("s");
    let mut rng = Lcg(3);
    let mut count = 0;
    for i in 0..60 {
        let msgs = turn(i, &mut rng, 1_700_000_000_000);
        count += msgs.len();
        engine.ingest_batch(&session, &msgs).unwrap();
    }
    let out = engine.compact("s", 4_000, false).unwrap();
    assert!(out.compacted, "{out:?}");
    assert_eq!(engine.store().message_count(1).unwrap(), count, "no message lost");
    assert_lossless(engine, "s");
    let a = engine.assemble("s", 4_000, None).unwrap();
    assert!(a.estimated_tokens <= 4_000);
    let conv = engine.store().find_conversation("main", "s").unwrap().unwrap();
    engine.store().summaries(conv.id).unwrap().into_iter().map(|s| s.method).collect()
}

#[test]
fn working_endpoint_writes_the_summaries() {
    let server = MockServer::always(Reply::Chat("- [2023-11-14] Alice flies to Paris on day 3 (QX00002).".into()));
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_with(&server, &dir);
    let methods = run(&engine);
    assert!(methods.iter().all(|m| m == "llm:openai:mock-model:normal"), "{methods:?}");
    let requests = server.requests();
    assert!(!requests.is_empty());
    let first = &requests[0];
    assert_eq!(first.path, "/v1/chat/completions");
    assert_eq!(first.body["model"], "mock-model");
    assert!(first.body["messages"][1]["content"].as_str().unwrap().contains("QX00000"), "the source is sent");
    // The model's text is kept and the footer added.
    let conv = engine.store().find_conversation("main", "s").unwrap().unwrap();
    let leaf = engine.store().summaries(conv.id).unwrap().into_iter().find(|s| s.kind == SummaryKind::Leaf).unwrap();
    assert!(leaf.content.starts_with("- [2023-11-14] Alice flies"));
    assert!(leaf.content.contains("Expand for details about:"));
}

#[test]
fn erroring_endpoint_falls_back_and_retries() {
    let server = MockServer::always(Reply::Raw(500, "{\"error\":\"boom\"}".into()));
    let dir = tempfile::tempdir().unwrap();
    let methods = run(&engine_with(&server, &dir));
    assert!(methods.iter().all(|m| m.ends_with("extractive-fallback") || m.ends_with("truncated")), "{methods:?}");
    // One summary's call and its retry reach the dead endpoint; the breaker then holds it off
    // for the others (a dead endpoint used to cost every summary its full retries).
    assert!(methods.len() > 1, "{methods:?}");
    assert_eq!(server.requests().len(), 2, "{} requests for {} summaries", server.requests().len(), methods.len());
}

#[test]
fn hanging_endpoint_times_out_and_falls_back() {
    let server = MockServer::always(Reply::Hang(Duration::from_secs(3)));
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let methods = run(&engine_with(&server, &dir));
    assert!(methods.iter().all(|m| m.ends_with("extractive-fallback") || m.ends_with("truncated")), "{methods:?}");
    // Each summary costs at most (1 + retries) timeouts, not the server's 3 s.
    assert!(started.elapsed() < Duration::from_secs(3 * methods.len() as u64));
}

#[test]
fn garbage_answers_fall_back() {
    for body in ["this is not json", "{\"choices\": []}", "{\"choices\":[{\"message\":{\"content\":\"   \"}}]}"] {
        let server = MockServer::always(Reply::Raw(200, body.into()));
        let dir = tempfile::tempdir().unwrap();
        let methods = run(&engine_with(&server, &dir));
        assert!(
            methods.iter().all(|m| m.ends_with("extractive-fallback") || m.ends_with("truncated")),
            "{body}: {methods:?}"
        );
    }
}

#[test]
fn a_summary_longer_than_its_source_escalates() {
    // The model echoes far too much: aggressive next, then deterministic fallback.
    let server = MockServer::always(Reply::Chat("blah ".repeat(20_000)));
    let dir = tempfile::tempdir().unwrap();
    let methods = run(&engine_with(&server, &dir));
    assert!(methods.iter().all(|m| m.ends_with("truncated")), "{methods:?}");
    let bodies = server.requests();
    let prompts: Vec<&str> = bodies.iter().filter_map(|r| r.body["messages"][0]["content"].as_str()).collect();
    assert!(prompts.iter().any(|p| p.starts_with("Compress")), "the aggressive prompt was tried");
}
