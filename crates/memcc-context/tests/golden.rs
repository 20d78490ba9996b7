//! Golden file for the assembled prompt: what the model sees is reviewed as a diff whenever the
//! summariser, the renderer or the assembler changes. Regenerate with `UPDATE_GOLDEN=1`.

mod common;

use common::*;
use memcc_context::SessionRef;

#[test]
fn assembled_prompt_matches_golden() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_at(&dir);
    let mut rng = Lcg(42);
    for i in 0..40 {
        engine.ingest_batch(&SessionRef::new("g"), &turn(i, &mut rng, 1_700_000_000_000)).unwrap();
    }
    engine.compact("g", 3_000, false).unwrap();
    let assembled = engine.assemble("g", 3_000, Some(1_700_003_000_000)).unwrap();
    // A summary's id is unique to its store (its conversation's random uid is part of it): the
    // golden file names each by its place.
    let mut actual = serde_json::to_string_pretty(&assembled).unwrap() + "\n";
    let ids: Vec<String> = assembled
        .messages
        .iter()
        .filter_map(|m| {
            let text = m["content"].as_str()?;
            let start = text.find("id=\"sum_")? + 4;
            Some(text[start..start + 20].to_string())
        })
        .collect();
    for (i, id) in ids.iter().enumerate() {
        actual = actual.replace(id.as_str(), &format!("sum_{i:016}"));
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/assemble_3k.json");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path).expect("golden file missing: run with UPDATE_GOLDEN=1");
    assert_eq!(actual, expected, "assembled prompt changed; review and regenerate with UPDATE_GOLDEN=1");
}
