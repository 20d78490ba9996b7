//! Helpers shared by the context engine's integration tests.
#![allow(dead_code)]

use std::collections::{HashMap, HashSet};

use std::path::PathBuf;

use memcc_context::message::AgentMessage;
use memcc_context::message::ContentPart;
use memcc_context::{Assembled, ContextConfig, ContextEngine, ContextStore};
use serde_json::json;

pub fn engine_at(dir: &tempfile::TempDir) -> ContextEngine {
    let store = ContextStore::open(&dir.path().join("context.db")).unwrap();
    ContextEngine::new(store, ContextConfig::default()).unwrap()
}

/// A deterministic pseudo-random generator (no extra dependency; reproducible across runs).
pub struct Lcg(pub u64);
impl Lcg {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

const NAMES: &[&str] = &["Alice", "Bob", "Carol", "Dmitri", "Eve", "Farah", "Gustavo"];
const PLACES: &[&str] = &["Paris", "Boston", "Tokyo", "Lisbon", "Nairobi", "Oslo"];

/// Messages of turn `i`: a user message, sometimes an assistant tool call with its result,
/// and an assistant answer. Each user message carries a unique code word for lossless checks.
pub fn turn(i: usize, rng: &mut Lcg, t0: i64) -> Vec<AgentMessage> {
    let t = t0 + i as i64 * 60_000;
    let name = NAMES[rng.below(NAMES.len() as u64) as usize];
    let place = PLACES[rng.below(PLACES.len() as u64) as usize];
    let filler = "and then we talked about the schedule for a while ".repeat(rng.below(12) as usize);
    let mut out = vec![
        AgentMessage::user(&format!(
            "Turn {i}: {name} will fly to {place} on day {} (code QX{i:05}). {filler}",
            i % 28 + 1
        ))
        .with_timestamp(t),
    ];
    if rng.below(4) == 0 {
        let id = format!("call_{i}");
        out.push(
            AgentMessage::assistant(vec![ContentPart::tool_call(
                &id,
                "search_flights",
                json!({"to": place, "turn": i}),
            )])
            .with_timestamp(t + 1000),
        );
        out.push(
            AgentMessage::tool_result(
                &id,
                "search_flights",
                &format!("3 flights to {place}: AF{i}, BA{i}, LH{i}. {filler}"),
            )
            .with_timestamp(t + 2000),
        );
    }
    out.push(
        AgentMessage::assistant(vec![ContentPart::text(format!("Booked {name} to {place} (ref R{i:05}). {filler}"))])
            .with_timestamp(t + 3000),
    );
    out
}

/// Every tool result in the assembled prompt has its call before it, and vice versa.
pub fn assert_pairs_intact(a: &Assembled) {
    let mut calls = HashSet::new();
    let mut results = HashSet::new();
    for m in &a.messages {
        let msg = AgentMessage::from_value(m.clone());
        for id in msg.tool_call_ids() {
            calls.insert(id);
        }
        if let Some(id) = msg.tool_result_for() {
            assert!(calls.contains(id), "tool result {id} without its call in the assembled prompt");
            results.insert(id.to_string());
        }
    }
    for c in calls {
        assert!(results.contains(&c), "tool call {c} without its result in the assembled prompt");
    }
}

/// The context items of a session, expanded down the DAG, cover every stored message exactly
/// once and in order: nothing is lost, nothing duplicated.
pub fn assert_lossless(engine: &ContextEngine, session: &str) {
    let report = engine.verify(session).unwrap();
    assert!(report.ok(), "lossless invariant broken: {report:?}");
    assert_eq!(report.covered, report.messages);
}

/// Path of the shared LoCoMo file, if this machine has it.
pub fn locomo_path() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("MEMCC_LOCOMO").map(PathBuf::from),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/locomo/locomo7-dev.json")),
    ];
    candidates.into_iter().flatten().find(|p| p.exists())
}

/// Depth histogram of a session's summaries.
pub fn depths(engine: &ContextEngine, session: &str) -> HashMap<u32, usize> {
    let conv = engine.store().find_conversation("main", session).unwrap().unwrap();
    let mut h = HashMap::new();
    for s in engine.store().summaries(conv.id).unwrap() {
        *h.entry(s.depth).or_default() += 1;
    }
    h
}
