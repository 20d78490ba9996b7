//! Context engine and memory runtime wired through the real bridge: what a compacted session
//! said is recalled inside `<memcc-recall>` in a new session after a restart.

use memcc::{Memcc, MemccConfig};
use memcc_context::SessionRef;
use memcc_context::message::{AgentMessage, ContentPart};
use memcc_memory::store::{Records as _, Vectors as _};

fn config(dir: &tempfile::TempDir) -> MemccConfig {
    MemccConfig { data_dir: Some(dir.path().to_path_buf()), embedding_model: "hashing".into(), ..Default::default() }
}

#[test]
fn compacted_facts_are_recalled_in_a_new_session() {
    let dir = tempfile::tempdir().unwrap();
    {
        let memcc = Memcc::open(config(&dir)).unwrap();
        let s = SessionRef::new("first");
        let t0 = 1_767_261_600_000i64;
        for i in 0..120i64 {
            let user = if i == 5 {
                "Remember this: the storage unit code is 4417 and it is in Harbor Street.".to_string()
            } else {
                format!("Filler question number {i} about the museum opening hours and prices?")
            };
            memcc.context.ingest(&s, &AgentMessage::user(&user).with_timestamp(t0 + i * 60_000)).unwrap();
            let answer = format!("Answer {i}: the museum opens at nine and tickets cost twelve euros for adults.");
            memcc
                .context
                .ingest(
                    &s,
                    &AgentMessage::assistant(vec![ContentPart::text(answer)]).with_timestamp(t0 + i * 60_000 + 1),
                )
                .unwrap();
            memcc.context.compact("first", 3_000, false).unwrap();
        }
        let stats = memcc.memory().unwrap().stats().unwrap();
        assert!(stats.by_kind.iter().any(|(k, _)| k == "summary"), "summaries reached memory: {stats:?}");
        assert!(stats.by_kind.iter().any(|(k, _)| k == "verbatim"), "raw exchanges reached memory: {stats:?}");
    }
    // New process, new session.
    let memcc = Memcc::open(config(&dir)).unwrap();
    let s = SessionRef::new("second");
    memcc.context.ingest(&s, &AgentMessage::user("What was the storage unit code again?")).unwrap();
    let a = memcc.context.assemble("second", 8_000, None).unwrap();
    assert!(a.estimated_tokens <= 8_000);
    assert!(a.memory_sections.contains(&memcc_core::bridge::Layer::Recall), "{:?}", a.memory_sections);
    let memory_message = a
        .messages
        .iter()
        .map(|m| AgentMessage::from_value(m.clone()).text())
        .find(|t| t.contains("<memcc-recall>"))
        .expect("a memory message");
    assert!(memory_message.contains("4417"), "{memory_message}");
    // The memory message sits right before the newest user message.
    let texts: Vec<String> = a.messages.iter().map(|m| AgentMessage::from_value(m.clone()).text()).collect();
    assert!(texts[texts.len() - 2].contains("<memcc-recall>"));
    assert!(texts[texts.len() - 1].contains("storage unit code again"));
}

#[test]
fn memory_disabled_means_no_memory_and_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let memcc = Memcc::open(MemccConfig { memory_enabled: false, ..config(&dir) }).unwrap();
    assert!(memcc.memory().is_err());
    assert!(!dir.path().join("memory.db").exists());
}

#[test]
fn a_missing_local_model_falls_back_loudly() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = MemccConfig { embedding_model: "usem3".into(), model_dir: Some(dir.path().join("nope")), ..config(&dir) };
    let memcc = Memcc::open(cfg).unwrap();
    assert!(memcc.warnings().iter().any(|w| w.contains("hashing")), "{:?}", memcc.warnings());
    assert_eq!(memcc.memory().unwrap().embedder_model(), "hashing-256");
}

#[test]
fn a_missing_local_model_never_takes_over_a_store_it_filled() {
    let dir = tempfile::tempdir().unwrap();
    {
        // A store the local model filled (its vectors, as the model would have stored them).
        let store = memcc_memory::store::SqliteStore::open(&dir.path().join("memory.db")).unwrap();
        let record = memcc_memory::record::NewRecord { text: "the cabin code is 9184".into(), ..Default::default() };
        let v = vec![0.5f32; 512];
        store
            .insert(memcc_memory::store::Insert { record: &record, vector: Some(("usem3", &v)), triples: &[] })
            .unwrap();
    }
    let cfg = MemccConfig { embedding_model: "usem3".into(), model_dir: Some(dir.path().join("nope")), ..config(&dir) };
    let err = Memcc::open(cfg).err().expect("the hashing fallback must not open a usem3 store");
    assert_eq!(err.code(), memcc_core::ErrorCode::MemoryUnavailable);
    assert!(err.to_string().contains("usem3") && err.to_string().contains("nope"), "names the missing model: {err}");
    let store = memcc_memory::store::SqliteStore::open(&dir.path().join("memory.db")).unwrap();
    assert_eq!(store.vector_models().unwrap(), vec![("usem3".to_string(), 1)], "nothing was deleted");
    // Chosen on purpose, hashing opens it (and keeps the usem3 vectors).
    let cfg = MemccConfig { embedding_model: "hashing".into(), ..config(&dir) };
    let memcc = Memcc::open(cfg).unwrap();
    assert_eq!(memcc.memory().unwrap().stats().unwrap().vector_models, vec![("usem3".to_string(), 1)]);
}

#[test]
fn remote_models_need_an_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = MemccConfig {
        embedding_model: "some-unknown-model".into(),
        llm_base_url: Some("http://127.0.0.1:9/v1".into()),
        ..config(&dir)
    };
    let err = Memcc::open(cfg).err().unwrap();
    assert!(err.to_string().contains("embeddingDim"), "{err}");
    let bad: Result<MemccConfig, _> = serde_json::from_str(r#"{"vectorDedupThreshhold": 0.9}"#);
    assert!(bad.unwrap_err().to_string().contains("unknown field"));
}

#[test]
fn a_new_sessions_first_assemble_recalls_from_the_pending_turn() {
    let dir = tempfile::tempdir().unwrap();
    {
        let memcc = Memcc::open(config(&dir)).unwrap();
        let s = SessionRef::new("old");
        memcc.context.ingest(&s, &AgentMessage::user("Note: the boat is moored at pier 19 in Hafnarfjordur.")).unwrap();
        memcc.context.ingest(&s, &AgentMessage::assistant(vec![ContentPart::text("Pier 19, noted.")])).unwrap();
        memcc.context.flush("old", 4_000).unwrap();
    }
    let memcc = Memcc::open(config(&dir)).unwrap();
    let pending = [AgentMessage::user("Which pier is the boat moored at?")];
    let a = memcc.context.assemble_for(&SessionRef::new("brand-new"), 8_000, None, &pending).unwrap();
    assert!(
        memcc.context.store().find_conversation("main", "brand-new").unwrap().is_none(),
        "assemble stays read-only"
    );
    let text: String = a.messages.iter().map(|m| AgentMessage::from_value(m.clone()).text()).collect();
    assert!(text.contains("<memcc-recall>") && text.contains("pier 19"), "{text}");
}

#[test]
fn background_open_never_holds_up_the_context_side() {
    // Memory that cannot open (memory.db is a directory): turns, compaction and assembly go on
    // without it, and asking for memory is a clear error.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("memory.db")).unwrap();
    let memcc = Memcc::open_background(config(&dir), None).unwrap();
    let s = SessionRef::new("s");
    for i in 0..40i64 {
        let text = format!("Message {i}: the van is booked for Saturday at nine, and the boxes are in the hall.");
        memcc.context.ingest(&s, &AgentMessage::user(&text).with_timestamp(1_767_261_600_000 + i)).unwrap();
    }
    assert!(memcc.context.compact("s", 600, false).unwrap().compacted);
    assert!(memcc.context.assemble("s", 600, None).unwrap().estimated_tokens <= 600);
    let err = memcc.memory().err().expect("memory cannot open here").to_string();
    assert!(err.contains("unavailable"), "{err}");

    // Healthy: the same calls wait for memory to open and then use it.
    let dir = tempfile::tempdir().unwrap();
    let cfg = MemccConfig { embedding_model: "usem3".into(), model_dir: Some(dir.path().join("nope")), ..config(&dir) };
    let memcc = Memcc::open_background(cfg, None).unwrap();
    assert_eq!(memcc.memory().unwrap().embedder_model(), "hashing-256");
    assert!(memcc.warnings().iter().any(|w| w.contains("hashing")), "the late warning is kept: {:?}", memcc.warnings());
}

#[test]
fn a_flushed_short_exchange_keeps_its_words_in_the_summary_and_in_memory() {
    // Two short messages are fewer tokens than a summary's frame: the truncation that would fit
    // under them kept no word ("[…]"), shown by grep and describe and stored as a memory record.
    let dir = tempfile::tempdir().unwrap();
    let memcc = Memcc::open(config(&dir)).unwrap();
    let s = SessionRef::new("short");
    memcc.context.ingest(&s, &AgentMessage::user("ok").with_timestamp(1_767_261_600_000)).unwrap();
    let reply = AgentMessage::assistant(vec![ContentPart::text("Sure, parcel code 7731.")]);
    memcc.context.ingest(&s, &reply.with_timestamp(1_767_261_660_000)).unwrap();
    assert!(memcc.context.flush("short", 4_000).unwrap().compacted);
    let conv = memcc.context.store().find_conversation("main", "short").unwrap().unwrap();
    let summaries = memcc.context.store().summaries(conv.id).unwrap();
    assert_eq!(summaries.len(), 1, "{summaries:?}");
    assert!(summaries[0].content.contains("Sure, parcel code 7731."), "{:?}", summaries[0].content);
    assert!(summaries[0].method.ends_with(":whole"), "{}", summaries[0].method);
    let memory = memcc.memory().unwrap();
    let hits = memory.memory_search("main", "parcel code", 5, 0.0, None).unwrap();
    assert!(hits.first().is_some_and(|h| h.text.contains("7731")), "{hits:?}");
    assert!(hits.iter().all(|h| !h.text.contains('…')), "{hits:?}");
    // The summary quotes both messages whole: the window holding them is the one record.
    assert_eq!(hits.iter().filter(|h| h.text.contains("7731")).count(), 1, "{hits:?}");
}
