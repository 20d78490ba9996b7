//! A forgotten sentence is never shown again to the summariser that condenses a conversation —
//! not in the child summaries' words, and not in their reading aids: a summary's "Expand for
//! details about: …" line lists its source's rarer words, the forgotten one's among them.

mod common;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use common::engine_at;
use memcc_context::SessionRef;
use memcc_context::message::{AgentMessage, ContentPart};
use memcc_context::{EXPAND_FOOTER, Summarizer, SummaryInput};
use memcc_core::SummaryKind;
use memcc_core::bridge::{BridgeError, MemoryBridge, RecallQuery, RecallSection, SummaryPayload};
use memcc_core::llm::LlmError;

/// Memory that has forgotten what `gone` holds (sentences as `said_key`s).
#[derive(Default)]
struct Forgetting {
    gone: Mutex<HashSet<String>>,
}

impl MemoryBridge for Forgetting {
    fn ingest_summary(&self, _: &SummaryPayload) -> Result<(), BridgeError> {
        Ok(())
    }
    fn retrieve(&self, _: &RecallQuery, _: usize) -> Result<Vec<RecallSection>, BridgeError> {
        Ok(Vec::new())
    }
    fn forgotten(&self, _: &str, _: &str) -> Result<HashSet<String>, BridgeError> {
        Ok(self.gone.lock().unwrap().clone())
    }
}

/// A model that writes its own words and a reading-aid line naming the capitalised words it was
/// shown, as an LLM's summary with MemCC's footer does; every input is kept.
#[derive(Default)]
struct Recording {
    shown: Mutex<Vec<(SummaryKind, String)>>,
}

impl Summarizer for Recording {
    fn summarize(&self, input: &SummaryInput<'_>) -> Result<String, LlmError> {
        self.shown.lock().unwrap().push((input.kind, input.text.to_string()));
        let names: Vec<&str> = input
            .text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() > 6 && w.chars().next().is_some_and(char::is_uppercase))
            .collect();
        Ok(format!("- The user said a few things about the gym.\n{EXPAND_FOOTER} {}.", names.join(", ")))
    }
    fn label(&self) -> String {
        "recording".into()
    }
}

#[test]
fn a_forgotten_word_does_not_reach_the_condensing_summariser_through_a_footer() {
    let dir = tempfile::tempdir().unwrap();
    let bridge = Arc::new(Forgetting::default());
    let summarizer = Arc::new(Recording::default());
    let engine = engine_at(&dir).with_bridge(bridge.clone()).with_summarizer(summarizer.clone());
    let s = SessionRef::new("s");
    let said = "My locker code at the Brightwater gym is 4417.";
    let t0 = 1_767_261_600_000i64;
    for i in 0..400i64 {
        let user = if i == 0 { said.to_string() } else { format!("Question {i}: what about the opening hours?") };
        engine.ingest(&s, &AgentMessage::user(&user).with_timestamp(t0 + i * 60_000)).unwrap();
        let reply = AgentMessage::assistant(vec![ContentPart::text(format!("Answer {i}: it opens at nine."))]);
        engine.ingest(&s, &reply.with_timestamp(t0 + i * 60_000 + 1)).unwrap();
        if i == 10 {
            engine.compact("s", 2_000, true).unwrap();
            let leaves = summarizer.shown.lock().unwrap().clone();
            assert!(leaves.iter().any(|(_, t)| t.contains("Brightwater")), "the first leaf was written from it");
            // The user forgets it.
            bridge.gone.lock().unwrap().insert(memcc_core::said::said_key(said).unwrap());
            summarizer.shown.lock().unwrap().clear();
        }
        if i > 10 {
            engine.compact("s", 1_000, false).unwrap();
        }
    }
    let shown = summarizer.shown.lock().unwrap().clone();
    assert!(shown.iter().any(|(k, _)| *k == SummaryKind::Condensed), "the conversation was condensed: {shown:?}");
    let first_leaf_condensed = shown.iter().any(|(k, t)| *k == SummaryKind::Condensed && t.contains("gym"));
    assert!(first_leaf_condensed, "the leaf written from the forgotten message was condensed: {shown:#?}");
    for (kind, text) in &shown {
        assert!(!text.contains("Brightwater") && !text.contains("4417"), "shown to the {kind:?} summariser:\n{text}");
    }
}
