//! A forget reaches what a model writes later. The summaries are written by a model on
//! 127.0.0.1 that restates every number of its input in its own words ("- noted: 4417"), so no
//! sentence check of its answer can recognise a forgotten one. After the user forgets the locker
//! code, the conversation goes on and its summaries are condensed: the model is never shown the
//! code again, and memory does not learn it back.

use std::sync::{Arc, Mutex};

use memcc::{Memcc, MemccConfig};
use memcc_context::SessionRef;
use memcc_context::message::{AgentMessage, ContentPart};
use memcc_testkit::{MockServer, Reply};

/// A model that writes its summary in its own words: one bullet per four-digit number it is shown.
fn restating_model(shown: Arc<Mutex<Vec<String>>>) -> MockServer {
    MockServer::start(move |_, body, _| {
        let input = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string();
        let mut numbers: Vec<&str> =
            input.split(|c: char| !c.is_ascii_digit()).filter(|w| w.len() == 4 && !w.starts_with("20")).collect();
        numbers.dedup();
        shown.lock().unwrap().push(input.clone());
        let bullets: Vec<String> = numbers.iter().map(|n| format!("- noted for later: {n}")).collect();
        Reply::Chat(if bullets.is_empty() { "- nothing of note".into() } else { bullets.join("\n") })
    })
}

fn say(memcc: &Memcc, session: &SessionRef, at: i64, user: &str) {
    memcc.context.ingest(session, &AgentMessage::user(user).with_timestamp(at)).unwrap();
    let reply = AgentMessage::assistant(vec![ContentPart::text("Got it, I will keep that in mind for you.")]);
    memcc.context.ingest(session, &reply.with_timestamp(at + 1_000)).unwrap();
}

fn holds(memcc: &Memcc, words: &str) -> bool {
    let hits = memcc.memory().unwrap().memory_search("main", words, 50, 0.0, None).unwrap();
    hits.iter().any(|h| h.text.contains(words))
}

#[test]
fn a_forgotten_fact_is_not_shown_to_the_model_that_condenses_the_conversation() {
    let shown = Arc::new(Mutex::new(Vec::new()));
    let model = restating_model(shown.clone());
    let dir = tempfile::tempdir().unwrap();
    let config = MemccConfig {
        data_dir: Some(dir.path().to_path_buf()),
        embedding_model: "hashing".into(),
        compaction_model: Some("mock-model".into()),
        llm_base_url: Some(model.base_url()),
        ..Default::default()
    };
    let memcc = Memcc::open(config).unwrap();
    let session = SessionRef::new("s");
    let t0 = 1_767_261_600_000i64;
    say(&memcc, &session, t0, "My locker code at the gym is 4417.");
    say(&memcc, &session, t0 + 60_000, "The gym's sauna opens at 0630 on weekdays.");
    memcc.context.flush("s", 4_000).unwrap();
    assert!(holds(&memcc, "4417"), "remembered before the forget");

    let memory = memcc.memory().unwrap();
    let hits = memory.memory_search("main", "locker code 4417", 20, 0.0, None).unwrap();
    let window = hits
        .iter()
        .find(|h| h.kind == memcc_memory::RecordKind::Verbatim && h.text.contains("My locker code"))
        .expect("the message's window");
    assert!(memory.forget("main", &window.id).unwrap());
    let left = memory.memory_search("main", "4417", 50, 0.0, None).unwrap();
    assert!(!holds(&memcc, "4417"), "forgotten: {left:#?}");
    let before = shown.lock().unwrap().len();

    // The conversation goes on; its leaves are condensed with the one that held the code.
    for (i, fact) in
        ["The bike lock combination is 8802.", "The spare key is in box 3391.", "Parking spot 5120."].iter().enumerate()
    {
        say(&memcc, &session, t0 + (i as i64 + 2) * 60_000, fact);
        memcc.context.flush("s", 4_000).unwrap();
    }
    let conversation = memcc.context.store().find_conversation("main", "s").unwrap().unwrap();
    let summaries = memcc.context.store().summaries(conversation.id).unwrap();
    assert!(summaries.iter().any(|s| s.depth > 0), "a condensed summary was written: {summaries:?}");

    let after = shown.lock().unwrap()[before..].to_vec();
    assert!(!after.is_empty(), "the model wrote the later summaries");
    for input in &after {
        assert!(!input.contains("4417"), "the model was shown the forgotten code:\n{input}");
    }
    assert!(after.iter().any(|input| input.contains("8802")), "and shown the rest");
    assert!(!holds(&memcc, "4417"), "not learnt back from a later summary");
    assert!(holds(&memcc, "8802"), "what came after is remembered");
}
