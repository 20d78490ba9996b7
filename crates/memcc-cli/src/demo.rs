//! `memcc demo`: the main job end to end on the embedded defaults, narrated.
//! A long conversation is compacted within a small budget, then exact details are recovered
//! through `lcm_grep` → `lcm_expand_query`.

use std::path::PathBuf;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

use memcc::context::ExpandRequest;
use memcc::context::{AgentMessage, ContentPart};
use memcc::context::{GrepRequest, SessionRef};
use memcc::{Memcc, MemccConfig};

const BUDGET: usize = 4_000;
const TURNS: usize = 300;

/// Facts planted in the first session, and the turn they are said at.
pub const FACTS: &[(usize, &str)] = &[
    (3, "By the way, my daughter Lina is allergic to peanuts, so no satay at the hotel."),
    (57, "Booked it: our flight is LH 1174 from Frankfurt on 14 March at 07:25, seats 32A and 32B."),
    (121, "I decided we take the night train from Lisbon to Madrid instead of flying; I prefer trains."),
    (230, "Open question: do we need an international driving permit for the Algarve?"),
];

const FILLER_USER: &[&str] = &[
    "Can you compare the two hotels near the old town again?",
    "What's the weather usually like there in March?",
    "Let's look at restaurants for the second evening.",
    "How long is the walk from the station to the museum?",
    "Remind me which day the museum is closed.",
];

pub fn conversation() -> Vec<Vec<AgentMessage>> {
    let t0 = 1_767_261_600_000i64; // 2026-01-01 10:00 UTC
    (0..TURNS)
        .map(|i| {
            let t = t0 + i as i64 * 90_000;
            let user = FACTS
                .iter()
                .find(|(turn, _)| *turn == i)
                .map(|(_, f)| f.to_string())
                .unwrap_or_else(|| format!("{} (turn {i})", FILLER_USER[i % FILLER_USER.len()]));
            let answer = format!(
                "Here is what I found for turn {i}: three options, with prices between {} and {} euros, \
                 opening hours, distances and reviews. The second option looks best on balance because it is \
                 closer to the station and has better reviews for families.",
                60 + i % 40,
                120 + i % 70
            );
            vec![
                AgentMessage::user(&user).with_timestamp(t),
                AgentMessage::assistant(vec![ContentPart::text(answer)]).with_timestamp(t + 20_000),
            ]
        })
        .collect()
}

/// MemCC on the demo's data dir, with the caller's settings (`--config`, `--embedding-model`,
/// the model directory `--home` or `$MEMCC_MODEL_DIR` names: the data dir is fresh, the model is not).
fn open(home: &std::path::Path, settings: &MemccConfig) -> Result<Memcc> {
    let config = MemccConfig {
        data_dir: Some(home.to_path_buf()),
        model_dir: Some(settings.model_dir()),
        context_db: None,
        ..settings.clone()
    };
    let memcc = Memcc::open(config)?;
    for w in &memcc.warnings() {
        println!("   ⚠ {w}");
    }
    Ok(memcc)
}

pub fn run(cli: &crate::globals::Globals, home: Option<PathBuf>) -> Result<()> {
    let settings = cli.settings()?;
    let (home, _tmp) = match home {
        Some(h) => (h, None),
        None => {
            let t = tempfile::tempdir().context("creating a temporary data directory")?;
            (t.path().to_path_buf(), Some(t))
        }
    };
    println!("MemCC demo — data in {}\n", home.display());
    let memcc = open(&home, &settings)?;
    println!("   embedder: {}\n", memcc.memory().map_or("none".to_string(), |m| m.embedder_model()));
    let engine = &memcc.context;
    let session = SessionRef::new("demo-trip-1");

    println!("1. A {TURNS}-turn conversation, ingested turn by turn, compacted to a {BUDGET}-token budget");
    let bar = ProgressBar::new(TURNS as u64).with_style(
        ProgressStyle::with_template("   {bar:40} {pos}/{len} turns {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut compactions = 0;
    for turn in conversation() {
        engine.ingest_batch(&session, &turn)?;
        if memcc.compact(&session, memcc.budget(Some(BUDGET as f64)), false)?.compacted {
            compactions += 1;
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let stats = engine.stats(Some(session.clone()))?;
    println!(
        "   {} messages ({} tokens) now stand in the context as {} items ({} tokens): {} leaf + {} condensed \
         summaries, DAG depth {}, after {compactions} compactions.",
        stats.messages,
        stats.message_tokens,
        stats.context_items,
        stats.context_tokens,
        stats.leaf_summaries,
        stats.condensed_summaries,
        stats.max_depth
    );
    let report = engine.verify(&session.session_id)?;
    println!(
        "   Lossless check: {} of {} raw messages reachable through the DAG ({}).\n",
        report.covered,
        report.messages,
        if report.ok() { "ok" } else { "BROKEN" }
    );

    println!("2. The prompt for the next model call");
    let assembled = memcc.assemble(&session, memcc.budget(Some(BUDGET as f64)), None)?;
    println!(
        "   {} messages, ~{} tokens of {BUDGET}: {} summaries + {} raw messages; system prompt addition: {}",
        assembled.messages.len(),
        assembled.estimated_tokens,
        assembled.summaries_included,
        assembled.raw_messages_included,
        if assembled.system_prompt_addition.is_some() { "lcm_grep / lcm_expand_query hint" } else { "none" }
    );
    if let Some(first) = assembled.messages.first() {
        let text = AgentMessage::from_value(first.clone()).text();
        for line in text.lines().take(5) {
            println!("   │ {line}");
        }
        println!("   │ …\n");
    }

    println!("3. An exact detail from turn 57, long since summarised: lcm_grep \"LH 1174\" → lcm_expand_query");
    let hits = engine.grep(&GrepRequest {
        pattern: "LH 1174".into(),
        session_id: Some(session.session_id.clone()),
        limit: Some(3),
        ..Default::default()
    })?;
    if let Some(hit) = hits.iter().find(|h| h.kind == "message") {
        println!("   grep: {} (covered by {})", hit.id, hit.summary_id.as_deref().unwrap_or("nothing"));
        let ids = vec![hit.summary_id.clone().unwrap_or_else(|| hit.id.clone())];
        let expanded = engine.expand(&ExpandRequest { ids, max_tokens: Some(2_000), ..Default::default() })?;
        if let Some(item) = expanded.items.iter().find(|i| i.text.contains("LH 1174")) {
            println!("   expand: [{}] {}\n", item.role.as_deref().unwrap_or("?"), item.text);
        }
    }
    drop(memcc);

    println!("4. A new session after a restart: the summaries were handed to long-term memory on the way");
    let memcc = open(&home, &settings)?;
    let memory = memcc.memory()?;
    let stats = memory.stats()?;
    println!("   memory.db: {} records ({} vectors, {} triples)", stats.records, stats.vectors, stats.triples);
    let next = SessionRef::new("demo-trip-2");
    let question = "We're booking dinner for the family tonight. Anything I should keep in mind for Lina?";
    memcc.context.ingest(&next, &AgentMessage::user(question).with_timestamp(1_767_348_000_000))?;
    let assembled = memcc.assemble(&next, memcc.budget(Some(BUDGET as f64)), None)?;
    println!("   user: {question}");
    println!(
        "   the prompt now carries {} ({} tokens of memory):",
        assembled.memory_sections.iter().map(|l| l.as_str()).collect::<Vec<_>>().join(", "),
        assembled.memory_tokens
    );
    let memory_text: String = assembled
        .messages
        .iter()
        .map(|m| AgentMessage::from_value(m.clone()).text())
        .filter(|t| t.starts_with(memcc::core::RECALL_IS_DATA))
        .collect();
    // Each section's opening, its first lines, and any line about Lina.
    let mut in_section = 0;
    for line in memory_text.lines() {
        in_section = if line.starts_with("<memcc-") { 0 } else { in_section + 1 };
        if line.starts_with("</memcc-") {
            continue;
        }
        if in_section <= 2 || line.contains("Lina") {
            println!("   │ {line}");
        }
    }
    let hits = memory.memory_search("main", "which train do we take to Madrid", 3, 0.0, None)?;
    if let Some(h) = hits.first() {
        println!("\n   memory_search \"which train do we take to Madrid\" → {} {}", h.id, h.text.replace('\n', " / "));
    }
    Ok(())
}
