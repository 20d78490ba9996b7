//! The CLI's `--budget` is a host's ask: it gets what every host gets (`MemccConfig::token_budget`)
//! — no more than the configured `tokenBudget`, and never less than the floor — for `assemble`,
//! `compact` and `flush` alike.

mod common;

use common::{ok, run};
use serde_json::Value;

/// A conversation of `turns` long turns in session `s`.
fn conversation(home: &std::path::Path, dir: &std::path::Path, turns: usize) {
    let file = dir.join("t.jsonl");
    let mut lines = String::new();
    for i in 0..turns {
        let filler = "and we went over the moving boxes, the tape and the van rental again ".repeat(6);
        lines.push_str(&format!(
            "{{\"role\": \"user\", \"content\": \"Turn {i}: {filler}\", \"timestamp\": {}}}\n",
            1_767_261_600_000i64 + i as i64 * 60_000
        ));
    }
    std::fs::write(&file, lines).unwrap();
    ok(run(home, &["ingest", "--session", "s", file.to_str().unwrap()]));
}

fn tokens(out: &str) -> u64 {
    let v: Value = serde_json::from_str(out).unwrap();
    v["estimatedTokens"].as_u64().unwrap_or_else(|| panic!("no estimatedTokens: {v}"))
}

#[test]
fn the_configured_cap_and_the_floor_hold_for_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    conversation(&home, dir.path(), 60);
    let uncapped = tokens(&ok(run(&home, &["--json", "assemble", "--session", "s", "--budget", "8000"])));
    assert!(uncapped > 2_000, "the conversation fills more than the cap: {uncapped}");

    let settings = dir.path().join("capped.json");
    std::fs::write(&settings, r#"{"tokenBudget": 1500}"#).unwrap();
    let config = settings.to_str().unwrap();
    let capped =
        tokens(&ok(run(&home, &["--config", config, "--json", "assemble", "--session", "s", "--budget", "8000"])));
    assert!(capped <= 1_500, "assemble keeps to tokenBudget: {capped}");
    // Compaction judges "over the threshold" against the capped budget too: 60 long turns are
    // over 75 % of 1,500 tokens, not of 8,000.
    let compacted: Value = serde_json::from_str(&ok(run(
        &home,
        &["--config", config, "--json", "compact", "--session", "s", "--budget", "8000"],
    )))
    .unwrap();
    assert_eq!(compacted["thresholdTokens"], 1_125, "{compacted}");

    // A budget below the floor is raised to it, not taken at its word (an empty prompt).
    let floored = tokens(&ok(run(&home, &["--json", "assemble", "--session", "s", "--budget", "10"])));
    assert!(floored > 10 && floored <= 256, "the floor is 256 tokens: {floored}");
}
