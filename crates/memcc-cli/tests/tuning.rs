//! The scoring model is set from a config file (`memory.tuning`), so a bench can sweep a weight
//! without a code edit; a value out of range is said, and the defaults used.

mod common;

use common::{ok, run};

#[test]
fn a_config_file_sets_the_tuning_search_reads() {
    let home = tempfile::tempdir().unwrap();
    let lines: String = (0..60)
        .map(|i| format!("{{\"text\": \"Harbour note {i}: the ferry timetable changes in spring.\"}}\n"))
        .collect();
    let file = home.path().join("notes.jsonl");
    std::fs::write(&file, lines).unwrap();
    ok(run(home.path(), &["memory", "import", file.to_str().unwrap()]));
    let search = |config: Option<&str>| -> (usize, String) {
        let mut args = Vec::new();
        let path = home.path().join("tuning.json");
        if let Some(c) = config {
            std::fs::write(&path, c).unwrap();
            args.extend(["--config", path.to_str().unwrap()]);
        }
        args.extend(["--json", "memory", "search", "ferry timetable", "--max", "100"]);
        let out = run(home.path(), &args);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let hits: serde_json::Value = serde_json::from_str(&ok(out)).unwrap();
        (hits.as_array().unwrap().len(), stderr)
    };
    assert_eq!(search(None).0, 60, "every match, up to the default wide pool of 100");
    assert_eq!(search(Some(r#"{"memory": {"tuning": {"widePool": 40}}}"#)).0, 40, "the config's pool");
    let (n, stderr) = search(Some(r#"{"memory": {"tuning": {"widePool": 10}}}"#));
    assert_eq!(n, 60, "a wide pool under the search pool is refused and the defaults used");
    assert!(stderr.contains("widePool") && stderr.contains("default tuning"), "{stderr}");
}

/// `minCandidates` anywhere in its documented range (1–10,000) is a pool recall draws, never a
/// crash: above recall's usual most it raises the most.
#[test]
fn a_minimum_pool_above_recalls_usual_most_is_drawn_not_a_crash() {
    let home = tempfile::tempdir().unwrap();
    ok(run(home.path(), &["memory", "add", "The ferry timetable changes in spring."]));
    let config = home.path().join("tuning.json");
    for min in [201, 5000, 10_000] {
        std::fs::write(&config, format!(r#"{{"memory": {{"tuning": {{"minCandidates": {min}}}}}}}"#)).unwrap();
        let out = ok(run(
            home.path(),
            &[
                "--config",
                config.to_str().unwrap(),
                "assemble",
                "--session",
                "new",
                "--budget",
                "4000",
                "--query",
                "ferry timetable",
            ],
        ));
        assert!(out.contains("ferry timetable changes"), "{min}: {out}");
    }
}
