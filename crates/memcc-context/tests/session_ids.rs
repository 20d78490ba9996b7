//! A session id is its agent's own: two agents may each hold a session "s", each sees only its
//! own, and neither learns that the other's exists (it was unique across agents, so importing a
//! transcript whose id another agent held failed, and told the caller the id was taken).

mod common;

use memcc_context::SessionRef;
use memcc_context::error::ContextError;
use memcc_context::message::AgentMessage;

fn of(agent: &str, session: &str) -> SessionRef {
    SessionRef { agent_id: Some(agent.into()), ..SessionRef::new(session) }
}

#[test]
fn two_agents_each_hold_their_own_session_of_one_id() {
    let dir = tempfile::tempdir().unwrap();
    let engine = common::engine_at(&dir);
    engine
        .ingest_batch(&of("alice", "s"), &[AgentMessage::user("Alice keeps the spare key under the blue pot.")])
        .unwrap();
    // Bob's session of the same id is his, made on first use, not a refusal.
    engine.ingest_batch(&of("bob", "s"), &[AgentMessage::user("Bob's train leaves from platform nine.")]).unwrap();

    let store = engine.store();
    let (a, b) = (
        store.find_conversation("alice", "s").unwrap().unwrap(),
        store.find_conversation("bob", "s").unwrap().unwrap(),
    );
    assert_ne!(a.id, b.id);
    assert_ne!(a.uid, b.uid, "their summaries must never share an id");
    assert!(store.find_conversation("carol", "s").unwrap().is_none());

    let alice = engine.assemble(of("alice", "s"), 4_000, None).unwrap();
    let bob = engine.assemble(of("bob", "s"), 4_000, None).unwrap();
    let text = |a: &memcc_context::Assembled| serde_json::to_string(&a.messages).unwrap();
    assert!(text(&alice).contains("blue pot") && !text(&alice).contains("platform"), "{}", text(&alice));
    assert!(text(&bob).contains("platform") && !text(&bob).contains("blue pot"), "{}", text(&bob));

    // Carol has no session "s": she is told it is unknown, exactly as for an id nobody holds.
    let carol = engine.assemble(of("carol", "s"), 4_000, None);
    assert!(matches!(carol, Err(ContextError::UnknownSession(_))), "{carol:?}");
    let nobody = engine.assemble(of("carol", "never-said"), 4_000, None);
    assert_eq!(format!("{carol:?}").replace("\"s\"", "\"never-said\""), format!("{nobody:?}"));
}

#[test]
fn a_transcript_imports_under_an_id_another_agent_holds() {
    let dir = tempfile::tempdir().unwrap();
    let engine = common::engine_at(&dir);
    engine.ingest_batch(&of("alice", "shared-id"), &[AgentMessage::user("Alice's first words.")]).unwrap();
    let transcript = concat!(
        r#"{"type":"message","message":{"role":"user","content":"Bob imports his own words."}}"#,
        "\n",
        r#"{"type":"message","message":{"role":"assistant","content":"Stored under Bob."}}"#,
        "\n"
    );
    let report =
        engine.import_transcript_as(&of("bob", "shared-id"), &Default::default(), transcript.as_bytes()).unwrap();
    assert_eq!(report.added, 2, "{report:?}");
    // Again: nothing new, and Alice's session is untouched.
    let again =
        engine.import_transcript_as(&of("bob", "shared-id"), &Default::default(), transcript.as_bytes()).unwrap();
    assert_eq!((again.added, again.duplicates), (0, 2), "{again:?}");
    let alice = engine.store().find_conversation("alice", "shared-id").unwrap().unwrap();
    assert_eq!(engine.store().message_count(alice.id).unwrap(), 1);
}
