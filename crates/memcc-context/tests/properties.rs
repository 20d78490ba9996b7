//! Property tests: for any conversation and budget, assembly fits the budget and keeps tool
//! pairs together, and the DAG covers every message exactly once.

mod common;

use common::*;
use memcc_context::message::{AgentMessage, ContentPart};
use memcc_context::{ContextConfig, ContextEngine, ContextStore, SessionRef};
use proptest::prelude::*;
use serde_json::json;

#[derive(Debug, Clone)]
enum Step {
    User(usize),
    Assistant(usize),
    ToolPair(usize, usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (1usize..3000).prop_map(Step::User),
        (1usize..3000).prop_map(Step::Assistant),
        ((1usize..400), (1usize..6000)).prop_map(|(a, b)| Step::ToolPair(a, b)),
    ]
}

fn words(n: usize, seed: usize) -> String {
    let vocab = ["alpha", "北京", "meeting", "42", "Lisbon", "decided", "我们", "tomorrow", "x"];
    (0..n).map(|i| vocab[(i * 7 + seed) % vocab.len()]).collect::<Vec<_>>().join(" ")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn assembly_fits_and_dag_covers_everything(
        steps in prop::collection::vec(step(), 1..80),
        budget in 300usize..12_000,
        fresh_tail in 1usize..8,
        fanout in 2usize..5,
    ) {
        let config = ContextConfig { fresh_tail_count: fresh_tail, leaf_min_fanout: fanout, leaf_chunk_tokens: 1500,
            leaf_target_tokens: 300, condensed_target_tokens: 400, ..ContextConfig::default() };
        let engine = ContextEngine::new(ContextStore::open_in_memory().unwrap(), config).unwrap();
        let session = SessionRef::new("p");
        for (i, s) in steps.iter().enumerate() {
            let msgs = match s {
                Step::User(n) => vec![AgentMessage::user(&words(*n / 4, i))],
                Step::Assistant(n) => vec![AgentMessage::assistant(vec![ContentPart::text(words(*n / 4, i))])],
                Step::ToolPair(a, b) => {
                    let id = format!("c{i}");
                    vec![
                        AgentMessage::assistant(vec![ContentPart::tool_call(&id, "t", json!({"q": words(*a / 4, i)}))]),
                        AgentMessage::tool_result(&id, "t", &words(*b / 4, i)),
                    ]
                }
            };
            engine.ingest_batch(&session, &msgs).unwrap();
            engine.compact("p", budget, false).unwrap();
            let a = engine.assemble("p", budget, None).unwrap();
            prop_assert!(a.estimated_tokens <= budget, "{} > {}", a.estimated_tokens, budget);
            let recount: usize = a.messages.iter().map(|m| AgentMessage::from_value(m.clone()).token_count()).sum::<usize>()
                + a.system_prompt_addition.as_deref().map_or(0, memcc_core::estimate_tokens);
            prop_assert!(recount <= budget, "recount {} > {}", recount, budget);
            // Every message says where it came from, and the parts account for the estimate.
            prop_assert_eq!(a.parts.len(), a.messages.len());
            let parts: usize = a.parts.iter().map(|p| p.tokens).sum::<usize>()
                + a.system_prompt_addition.as_deref().map_or(0, memcc_core::estimate_tokens);
            prop_assert_eq!(parts, a.estimated_tokens);
            if !a.truncated_latest {
                assert_pairs_intact(&a);
            }
            // Assemble is side-effect free: twice gives the same.
            prop_assert_eq!(&engine.assemble("p", budget, None).unwrap(), &a);
        }
        engine.compact("p", budget, true).unwrap();
        assert_lossless(&engine, "p");
    }
}
