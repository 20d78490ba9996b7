//! A 2,000-turn conversation ingested turn by turn with compaction at an 8k budget, and the
//! LoCoMo dev conversations replayed as messages where the shared data exists.

mod common;

use common::*;
use memcc_context::expand::ExpandRequest;
use memcc_context::message::AgentMessage;
use memcc_context::{GrepRequest, SessionRef};

const BUDGET: usize = 8_000;

#[test]
fn two_thousand_turns_fit_the_budget_and_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_at(&dir);
    let session = SessionRef::new("long");
    let mut rng = Lcg(7);
    let turns = 2_000;
    let mut max_assembled = 0;
    for i in 0..turns {
        engine.ingest_batch(&session, &turn(i, &mut rng, 1_700_000_000_000)).unwrap();
        let c = engine.compact("long", BUDGET, false).unwrap();
        assert!(c.tokens_after <= c.tokens_before);
        let a = engine.assemble("long", BUDGET, None).unwrap();
        assert!(a.estimated_tokens <= BUDGET, "turn {i}: {} > {BUDGET}", a.estimated_tokens);
        // Recount independently of the assembler's own bookkeeping.
        let recount: usize =
            a.messages.iter().map(|m| AgentMessage::from_value(m.clone()).token_count()).sum::<usize>()
                + a.system_prompt_addition.as_deref().map_or(0, memcc_core::estimate_tokens);
        assert!(recount <= BUDGET, "turn {i}: recount {recount} > {BUDGET}");
        assert_pairs_intact(&a);
        let last = AgentMessage::from_value(a.messages.last().unwrap().clone());
        assert!(last.text().starts_with("Booked"), "the newest message is always present");
        max_assembled = max_assembled.max(a.estimated_tokens);
    }
    assert_lossless(&engine, "long");

    let stats = engine.stats(Some("long".into())).unwrap();
    let leaves = stats.leaf_summaries as f64;
    let bound = leaves.log2().ceil() as i64 + 1;
    assert!(stats.max_depth <= bound, "depth {} for {} leaves (bound {bound})", stats.max_depth, leaves);
    assert!(stats.max_depth >= 3, "a long conversation builds a deep DAG: {:?}", depths(&engine, "long"));
    eprintln!("2000 turns: {stats:?}, max assembled {max_assembled}");

    // Every raw message is reachable again: grep its code word, expand what stands in for it.
    for i in [0usize, 1, 17, 999, 1500] {
        let code = format!("QX{i:05}");
        let hits = engine
            .grep(&GrepRequest { pattern: code.clone(), session_id: Some("long".into()), ..Default::default() })
            .unwrap();
        let hit = hits.iter().find(|h| h.kind == "message").unwrap_or_else(|| panic!("{code} not found"));
        let leaf = hit.summary_id.clone().expect("old turns are summarised");
        let expanded =
            engine.expand(&ExpandRequest { ids: vec![leaf], max_tokens: Some(50_000), ..Default::default() }).unwrap();
        assert!(expanded.items.iter().any(|it| it.text.contains(&code)), "{code} not recovered by expansion");
    }
}

#[test]
fn locomo_conversations_replay_within_budget() {
    let Some(path) = locomo_path() else {
        memcc_testkit::skip("../shared/data/locomo/locomo7-dev.json not found (set MEMCC_LOCOMO to run this check)");
        return;
    };
    let data: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_at(&dir);
    let mut total_messages = 0;
    for sample in data.as_array().unwrap() {
        let id = sample["sample_id"].as_str().unwrap();
        let conv = &sample["conversation"];
        let speaker_a = conv["speaker_a"].as_str().unwrap();
        let session = SessionRef::new(id);
        for n in 1.. {
            let Some(turns) = conv.get(format!("session_{n}")).and_then(|v| v.as_array()) else {
                if conv.get(format!("session_{n}_date_time")).is_some() {
                    continue;
                }
                break;
            };
            let date = conv[format!("session_{n}_date_time")].as_str().unwrap_or("");
            let t0 = chrono::NaiveDateTime::parse_from_str(date, "%l:%M %p on %e %B, %Y")
                .map(|d| d.and_utc().timestamp_millis())
                .unwrap_or(0);
            for (k, t) in turns.iter().enumerate() {
                let speaker = t["speaker"].as_str().unwrap();
                let text = format!("{speaker}: {}", t["text"].as_str().unwrap_or(""));
                let mut v = if speaker == speaker_a {
                    serde_json::json!({"role": "user", "content": text})
                } else {
                    serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": text}]})
                };
                v["timestamp"] = (t0 + k as i64 * 30_000).into();
                engine.ingest(&session, &AgentMessage::from_value(v)).unwrap();
                engine.compact(id, BUDGET, false).unwrap();
                total_messages += 1;
            }
            let a = engine.assemble(id, BUDGET, None).unwrap();
            assert!(a.estimated_tokens <= BUDGET);
        }
        assert_lossless(&engine, id);
    }
    assert!(total_messages > 1000);
}
