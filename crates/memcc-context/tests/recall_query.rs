//! What the assembler asks memory: a question that names what it is about is its own recall
//! query (the turns before it — in a long session, about something else — would outvote its
//! words), with those turns beside it as its weaker context; a short follow-up borrows the
//! words of the turns before it.

mod common;

use std::sync::{Arc, Mutex};

use memcc_context::SessionRef;
use memcc_context::message::{AgentMessage, ContentPart};
use memcc_core::bridge::{BridgeError, MemoryBridge, RecallQuery, RecallSection, Role, SummaryPayload};

#[derive(Default)]
struct Asked(Mutex<Vec<RecallQuery>>);

impl MemoryBridge for Asked {
    fn ingest_summary(&self, _: &SummaryPayload) -> Result<(), BridgeError> {
        Ok(())
    }
    fn retrieve(&self, q: &RecallQuery, _: usize) -> Result<Vec<RecallSection>, BridgeError> {
        self.0.lock().unwrap().push(q.clone());
        Ok(Vec::new())
    }
}

fn asked(pending: Option<&str>, last_user: Option<&str>) -> String {
    asked_query(pending, last_user).text
}

fn asked_query(pending: Option<&str>, last_user: Option<&str>) -> RecallQuery {
    let dir = tempfile::tempdir().unwrap();
    let bridge = Arc::new(Asked::default());
    let engine = common::engine_at(&dir).with_bridge(bridge.clone());
    let session = SessionRef::new("s");
    let mut turns = vec![
        AgentMessage::user("The kitchen renovation needs new cabinets and a plumber."),
        AgentMessage::assistant(vec![ContentPart::text("Book the plumber before the cabinets arrive.")]),
    ];
    if let Some(text) = last_user {
        turns.push(AgentMessage::user(text));
    }
    engine.ingest_batch(&session, &turns).unwrap();
    let pending: Vec<AgentMessage> = pending.map(AgentMessage::user).into_iter().collect();
    engine.assemble_for(&session, 8_000, None, &pending).unwrap();
    let asked = bridge.0.lock().unwrap();
    asked.last().cloned().expect("recall was asked")
}

#[test]
fn a_question_naming_its_subject_is_the_whole_recall_query() {
    let question = "When did Caroline go to the LGBTQ support group?";
    assert_eq!(asked(Some(question), None), question, "pending");
    assert_eq!(asked(None, Some(question)), question, "already stored as the newest user message");
    assert_eq!(asked(Some("上周我们在北京的会议讨论了什么？"), None), "上周我们在北京的会议讨论了什么？");
}

#[test]
fn the_turns_before_a_focused_question_go_along_as_its_context() {
    let q = asked_query(Some("When did Caroline go to the LGBTQ support group?"), None);
    // Each turn with who said it, oldest first (the ranker weighs the assistant's).
    let said: Vec<(Role, &str)> = q.context.iter().map(|t| (t.role.clone(), t.text.as_str())).collect();
    assert_eq!(
        said,
        [
            (Role::User, "The kitchen renovation needs new cabinets and a plumber."),
            (Role::Assistant, "Book the plumber before the cabinets arrive.")
        ],
        "{q:?}"
    );
    assert!(!q.text.contains("kitchen"), "{q:?}");
    // A follow-up's query holds those turns already: no context beside it.
    assert!(asked_query(Some("And the plumber?"), None).context.is_empty());
}

#[test]
fn a_short_follow_up_borrows_the_turns_before_it() {
    for follow_up in ["And the plumber?", "why?", "what about her?", "为什么？"] {
        let q = asked(Some(follow_up), None);
        assert!(q.ends_with(follow_up) && q.contains("kitchen renovation"), "{follow_up}: {q}");
    }
    // The newest message is the assistant's: the last turns, as before.
    let q = asked(None, None);
    assert!(q.contains("kitchen renovation") && q.contains("Book the plumber"), "{q}");
}

/// A follow-up after long messages asks with their newest words only, cut at a word: the cost of
/// embedding and searching a query grows with its length, and the newest words matter most.
#[test]
fn a_recall_query_after_long_messages_keeps_their_newest_words() {
    let filler = "We compared the quarterly shipping schedules for every warehouse in the northern region. ";
    let long = format!("{}The plumber arrives on Tuesday morning.", filler.repeat(30));
    let q = asked(Some("why?"), Some(&long));
    assert!(q.ends_with("The plumber arrives on Tuesday morning.\nwhy?"), "{q}");
    assert!(q.chars().count() <= 600, "{} characters", q.chars().count());
    assert!(q.chars().count() > 500, "about as much as allowed: {} characters", q.chars().count());
    let first = q.split_whitespace().next().unwrap();
    assert!(filler.split_whitespace().any(|w| w == first), "starts at a whole word: {first:?}");
    // Chinese has no spaces to cut at: the tail is kept as it is.
    let chinese = "我们讨论了北方仓库的季度运输计划。".repeat(60);
    let q = asked(Some("为什么？"), Some(&chinese));
    assert!(q.ends_with("计划。\n为什么？") && q.chars().count() > 500, "{q}");
}
