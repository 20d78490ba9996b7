//! The inspector's view of the summary DAG: roots and children account for every message, and
//! another agent sees none of it.

mod common;

use memcc_context::SessionRef;
use memcc_context::dag::DagNode;
use memcc_context::error::ContextError;
use memcc_core::bridge::SummaryKind;

#[test]
fn the_dag_view_reaches_every_message_from_its_roots() {
    let dir = tempfile::tempdir().unwrap();
    let engine = common::engine_at(&dir);
    let session = SessionRef::new("s");
    let mut rng = common::Lcg(7);
    for i in 0..300 {
        engine.ingest_batch(&session, &common::turn(i, &mut rng, 1_700_000_000_000)).unwrap();
    }
    engine.compact("s", 2_000, true).unwrap();
    let view = engine.dag(&session).unwrap();
    assert!(view.summaries > view.roots.len() && view.max_depth >= 1, "{view:?}");
    let covered: usize = view.roots.iter().map(|r| r.descendant_messages).sum();
    assert_eq!(covered + view.uncovered_messages, view.messages);
    assert!(view.roots.windows(2).all(|w| w[0].last_seq < w[1].first_seq), "roots are disjoint, in order");

    // Walking down from the roots meets each covered message once, in order.
    let mut seqs = Vec::new();
    let mut stack: Vec<DagNode> = view.roots.iter().rev().cloned().collect();
    while let Some(node) = stack.pop() {
        let children = engine.dag_children(None, &node.id).unwrap();
        assert_eq!(children.node, node);
        match node.kind {
            SummaryKind::Leaf => {
                assert!(children.summaries.is_empty() && !children.messages.is_empty());
                seqs.extend(children.messages.iter().map(|m| m.seq));
            }
            SummaryKind::Condensed => {
                assert!(children.messages.is_empty() && !children.summaries.is_empty());
                assert!(children.summaries.iter().all(|c| c.depth < node.depth));
                stack.extend(children.summaries.into_iter().rev());
            }
        }
    }
    assert_eq!(seqs.len(), covered);
    assert!(seqs.windows(2).all(|w| w[0] < w[1]));

    let other = engine.dag_children(Some("someone-else"), &view.roots[0].id);
    assert!(matches!(other, Err(ContextError::NotFound(_))), "{other:?}");
    let unknown = SessionRef { agent_id: Some("someone-else".into()), ..SessionRef::new("s") };
    assert!(matches!(engine.dag(&unknown), Err(ContextError::UnknownSession(_))));
}

#[test]
fn a_summary_says_when_a_relative_date_was() {
    let dir = tempfile::tempdir().unwrap();
    let engine = common::engine_at(&dir);
    let session = SessionRef::new("s");
    let may_8 = 1_683_554_160_000; // Monday 8 May 2023
    let said = memcc_context::message::AgentMessage::user("I adopted a beagle puppy named Biscuit yesterday.");
    engine.ingest(&session, &said.with_timestamp(may_8)).unwrap();
    let mut rng = common::Lcg(3);
    for i in 1..200 {
        engine.ingest_batch(&session, &common::turn(i, &mut rng, may_8)).unwrap();
    }
    engine.compact("s", 2_000, true).unwrap();
    let view = engine.dag(&session).unwrap();
    // Down the first root to its first leaf: the one holding the first message.
    let mut node = view.roots[0].clone();
    while node.kind != SummaryKind::Leaf {
        node = engine.dag_children(None, &node.id).unwrap().summaries.remove(0);
    }
    let leaf = node;
    let text = engine.dag_children(None, &leaf.id).unwrap().node.preview;
    assert!(text.contains("yesterday (7 May 2023)"), "{text}");
}
