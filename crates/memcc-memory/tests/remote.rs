//! Remote APIs against a real OpenAI-compatible server on 127.0.0.1: embeddings failing
//! mid-import (records queued, then retried, none lost), dimension checks, and LLM rerank.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use memcc_core::llm::{OpenAiChat, OpenAiConfig};
use memcc_memory::embed::{EmbedError, Embedder, HashingEmbedder, OpenAiEmbedder};
use memcc_memory::{MemoryConfig, MemoryRuntime, RecordKind};
use memcc_testkit::{MockServer, Reply};
use serde_json::{Value, json};

fn embeddings_reply(body: &Value, dim: usize) -> Reply {
    let inputs: Vec<String> = body["input"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect())
        .unwrap_or_default();
    let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    let vectors = HashingEmbedder { dim }.embed(&refs).unwrap();
    let data: Vec<Value> =
        vectors.iter().enumerate().map(|(i, v)| json!({"object": "embedding", "index": i, "embedding": v})).collect();
    Reply::Raw(200, json!({"object": "list", "data": data, "model": "mock-embed"}).to_string())
}

fn config(url: &str) -> OpenAiConfig {
    let mut c = OpenAiConfig::new(url, "text-embedding-3-small");
    c.timeout = Duration::from_secs(2);
    c.max_retries = 0;
    c.backoff = Duration::from_millis(1);
    c.cooldown = Duration::from_millis(1);
    c
}

#[test]
fn embeddings_failing_mid_import_are_queued_and_retried() {
    let down = Arc::new(AtomicBool::new(false));
    let flag = down.clone();
    let server = MockServer::start(move |path, body, _| {
        assert_eq!(path, "/v1/embeddings");
        if flag.load(Ordering::SeqCst) {
            Reply::Raw(503, "{\"error\":\"overloaded\"}".into())
        } else {
            embeddings_reply(body, 64)
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let embedder = Arc::new(OpenAiEmbedder::new(config(&server.base_url()), 64));
    let rt = MemoryRuntime::open(&dir.path().join("memory.db"), MemoryConfig::default(), embedder).unwrap();
    let lines: String = (0..300).map(|i| json!({"agentId": "main", "kind": "fact", "text": format!("Fact number {i}: the locker code is {}", 1000 + i)}).to_string() + "\n").collect();
    // The endpoint goes down after the first batches of the import.
    let mut batches = 0;
    let report = rt
        .import_jsonl(lines.as_bytes(), None, &mut |_, _| {
            batches += 1;
            if batches == 2 {
                down.store(true, Ordering::SeqCst);
            }
        })
        .unwrap();
    assert_eq!(report.added, 300, "every record is stored");
    let stats = rt.stats().unwrap();
    assert_eq!(stats.records, 300);
    assert_eq!(stats.vectors + stats.pending_embeddings, 300);
    assert!(stats.pending_embeddings > 0, "some were left queued");
    // Lexical recall works for queued records meanwhile.
    assert!(!rt.memory_search("main", "locker code 1299", 3, 0.0, None).unwrap().is_empty());
    down.store(false, Ordering::SeqCst);
    // The embedder leaves a failing endpoint alone for a cool-down (here 1 ms, doubling).
    std::thread::sleep(Duration::from_millis(50));
    rt.process_pending(usize::MAX, &mut |_, _| {}).unwrap();
    let stats = rt.stats().unwrap();
    assert_eq!((stats.vectors, stats.pending_embeddings), (300, 0));
    drop(rt);
    // And after a restart the index holds them all.
    let embedder = Arc::new(OpenAiEmbedder::new(config(&server.base_url()), 64));
    let rt = MemoryRuntime::open(&dir.path().join("memory.db"), MemoryConfig::default(), embedder).unwrap();
    assert_eq!(rt.stats().unwrap().vectors, 300);
}

#[test]
fn wrong_dimensions_are_rejected() {
    let server = MockServer::start(|_, body, _| embeddings_reply(body, 32));
    let e = OpenAiEmbedder::new(config(&server.base_url()), 64);
    assert!(matches!(e.embed(&["hello"]), Err(EmbedError::Shape { dim: 32, .. })));
    let requests = server.requests();
    assert_eq!(requests[0].body["model"], "text-embedding-3-small");
}

#[test]
fn llm_rerank_reorders_and_failures_keep_the_hybrid_order() {
    // The model always says passage 2 is best.
    let server = MockServer::always(Reply::Chat("[2, 1]".into()));
    let dir = tempfile::tempdir().unwrap();
    let config = MemoryConfig { llm_rerank: true, ..Default::default() };
    let chat = OpenAiChat::new(OpenAiConfig::new(&server.base_url(), "gpt-4o-mini")).unwrap();
    let rt = MemoryRuntime::open(&dir.path().join("m.db"), config.clone(), Arc::new(HashingEmbedder::default()))
        .unwrap()
        .with_reranker(Arc::new(chat));
    rt.add("main", "Porto offsite on 12 June", RecordKind::Fact, false, None).unwrap();
    rt.add("main", "Lisbon offsite was cancelled", RecordKind::Fact, false, None).unwrap();
    let plain =
        MemoryRuntime::open(&dir.path().join("m.db"), MemoryConfig::default(), Arc::new(HashingEmbedder::default()))
            .unwrap();
    let base = plain.memory_search("main", "Porto offsite June", 2, 0.0, None).unwrap();
    let reranked = rt.memory_search("main", "Porto offsite June", 2, 0.0, None).unwrap();
    assert_eq!(reranked[0].id, base[1].id, "the model's order wins");
    let prompt = &server.requests()[0].body["messages"][1]["content"];
    assert!(prompt.as_str().unwrap().contains("Porto offsite June"));
    // Past the first 30, hits come from a wider search that is not reranked again: one call.
    let many = rt.memory_search("main", "Porto offsite June", 50, 0.0, None).unwrap();
    assert_eq!(many[0].id, base[1].id);
    assert_eq!(server.requests().len(), 2, "one model call per search");

    // A broken endpoint: same order as without rerank, no error.
    let broken = MockServer::always(Reply::Raw(500, "boom".into()));
    let mut cfg = OpenAiConfig::new(&broken.base_url(), "gpt-4o-mini");
    cfg.max_retries = 0;
    let rt = MemoryRuntime::open(&dir.path().join("m.db"), config.clone(), Arc::new(HashingEmbedder::default()))
        .unwrap()
        .with_reranker(Arc::new(OpenAiChat::new(cfg).unwrap()));
    let kept = rt.memory_search("main", "Porto offsite June", 2, 0.0, None).unwrap();
    assert_eq!(kept.iter().map(|h| &h.id).collect::<Vec<_>>(), base.iter().map(|h| &h.id).collect::<Vec<_>>());

    // No endpoint configured: skipped, not an error.
    let rt = MemoryRuntime::open(&dir.path().join("m.db"), config, Arc::new(HashingEmbedder::default())).unwrap();
    assert_eq!(rt.memory_search("main", "Porto offsite June", 2, 0.0, None).unwrap().len(), 2);
}

#[test]
fn llm_triples_join_the_knowledge_graph_and_bad_answers_are_ignored() {
    use memcc_core::bridge::{BridgeMessage, SummaryKind, SummaryPayload};
    let payload = |id: &str, text: &str| SummaryPayload {
        summary_id: id.into(),
        session_id: "s".into(),
        session_key: None,
        agent_id: "main".into(),
        kind: SummaryKind::Leaf,
        depth: 0,
        content: text.into(),
        earliest: Some(1_700_000_000_000),
        latest: Some(1_700_000_000_000),
        messages: vec![BridgeMessage {
            message_id: 1,
            seq: 1,
            role: "user".into(),
            text: text.into(),
            timestamp: Some(1_700_000_000_000),
            speaker: None,
        }],
        lead_in: Vec::new(),
        child_summary_ids: Vec::new(),
        project: None,
    };
    let server = MockServer::start(|_, body, _| {
        let said = body["messages"][1]["content"].as_str().unwrap_or_default().to_string();
        if said.contains("garbage") {
            Reply::Chat("I cannot do that".into())
        } else {
            Reply::Chat("Sure: [[\"Zoe\", \"plays\", \"cello\"]]".into())
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let chat = OpenAiChat::new(OpenAiConfig::new(&server.base_url(), "m")).unwrap();
    let rt =
        MemoryRuntime::open(&dir.path().join("m.db"), MemoryConfig::default(), Arc::new(HashingEmbedder::default()))
            .unwrap()
            .with_triple_model(Arc::new(chat));
    rt.ingest_summary(&payload("a", "My friend Zoe is a musician.")).unwrap();
    rt.ingest_summary(&payload("b", "garbage in")).unwrap();
    let history = rt.store().triple_history("main", "zoe").unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!((history[0].predicate.as_str(), history[0].object.as_str()), ("plays", "cello"));
    // Rule-based triples still come alongside.
    assert!(!rt.store().triple_history("main", "user").unwrap().is_empty());
}
