//! `memcc demo`, the README's main job, shows what it claims: a long conversation compacted
//! losslessly, an exact detail recovered from the DAG, and in a new session the first
//! session's facts recalled into the prompt.

mod common;

#[test]
fn the_demo_compacts_recovers_and_recalls_in_a_new_session() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::ok(common::run(dir.path(), &["demo"]));
    assert!(out.contains("Lossless check: 600 of 600 raw messages reachable through the DAG (ok)"), "{out}");
    assert!(out.contains("expand: [user] Booked it: our flight is LH 1174 from Frankfurt"), "{out}");
    let (_, new_session) = out.split_once("4. A new session after a restart").expect("the demo's fourth part");
    let prompt: Vec<&str> = new_session.lines().filter(|l| l.trim_start().starts_with('│')).collect();
    assert!(
        prompt.iter().any(|l| l.contains("my daughter Lina is allergic to peanuts")),
        "the new session's prompt does not carry the allergy said in the first:\n{new_session}"
    );
    assert!(prompt.iter().any(|l| l.contains("<memcc-recall>")), "{new_session}");
    assert!(
        new_session.contains("memory_search \"which train do we take to Madrid\" → ")
            && new_session.contains("night train from Lisbon to Madrid"),
        "{new_session}"
    );
}
