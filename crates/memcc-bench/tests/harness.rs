//! The benchmark harness on a tiny LongMemEval-format fixture (written for these tests, in the
//! upstream schema) and, where ../shared has it, on LoCoMo: modes run, abstention is excluded
//! and counted, reports carry what a reader needs; QA against a mock endpoint on 127.0.0.1.

use std::path::{Path, PathBuf};

use memcc_bench::{Dataset, Mode, Options};
use memcc_testkit::{MockServer, Reply};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/longmemeval_tiny.json")
}

fn options(dataset: Dataset, modes: Vec<Mode>) -> Options {
    Options {
        dataset,
        modes,
        embedding_model: "hashing".into(),
        model_dir: None,
        llm_base_url: None,
        rerank_model: "gpt-4o-mini".into(),
        budget: 2_000,
        limit: None,
    }
}

#[test]
fn longmemeval_fixture_runs_in_every_mode() {
    let opts = options(Dataset::Longmemeval, vec![Mode::Bm25, Mode::Dense, Mode::Hybrid, Mode::Full, Mode::FullRerank]);
    let report = memcc_bench::run(&fixture(), &opts, &mut |_, _, _| {}).unwrap();
    assert_eq!((report.haystacks, report.questions, report.abstentions), (4, 4, 1));
    assert_eq!(report.skipped_modes.len(), 1, "full-rerank needs an endpoint: {:?}", report.skipped_modes);
    assert_eq!(report.modes.len(), 4);
    for m in &report.modes {
        assert_eq!(m.overall.questions, 3, "{:?}: the abstention question is excluded from recall", m.mode);
        assert!(m.peak_rss_mib_after_query.is_some());
    }
    let bm25 = &report.modes[0];
    // "dog breed": lexical overlap on "breed"/"dog" is weak, but marathons and cello are strong.
    assert!(bm25.overall.at(10, 0) >= 2.0 / 3.0, "{:?}", bm25.overall);
    let full = report.modes.iter().find(|m| m.mode == Mode::Full).unwrap();
    assert!(full.overall.at(10, 1) >= 2.0 / 3.0, "{:?}", full.overall);
    // The multi-session question needs both sessions for recall_all.
    let q2: Vec<_> = report.per_question.iter().filter(|q| q.id == "q2").collect();
    assert_eq!(q2[0].gold_sessions.len(), 2);
    assert_eq!(q2[0].gold_turns.len(), 2);
    let md = memcc_bench::markdown(&report);
    assert!(md.contains("abstention") && md.contains("Retrieval recall is not QA accuracy") && md.contains("sha256"));
    assert!(report.by_category_names().contains(&"multi-session".to_string()));
}

#[test]
fn malformed_input_gets_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "[{\"question_id\": 1}]").unwrap();
    let err = memcc_bench::run(&bad, &options(Dataset::Longmemeval, vec![Mode::Bm25]), &mut |_, _, _| {}).unwrap_err();
    assert!(err.to_string().contains("not a LongMemEval file"), "{err}");
    let err = memcc_bench::run(&bad, &options(Dataset::Locomo, vec![Mode::Bm25]), &mut |_, _, _| {}).unwrap_err();
    assert!(err.to_string().contains("not a LoCoMo file"), "{err}");
}

#[test]
fn qa_mode_answers_and_judges_through_an_endpoint() {
    let server = MockServer::start(|_, body, _| {
        let system = body["messages"][0]["content"].as_str().unwrap_or_default();
        if system.contains("grader") {
            let prompt = body["messages"][1]["content"].as_str().unwrap_or_default();
            // The judge says yes when the response carries the gold answer.
            let yes = prompt.contains("Model Response: a border collie") || prompt.contains("unanswerable");
            Reply::Chat(if yes { "yes".into() } else { "no".into() })
        } else {
            let asked: String = body["messages"]
                .as_array()
                .map(|m| m.iter().map(|x| x["content"].as_str().unwrap_or("")).collect::<Vec<_>>().join(" "))
                .unwrap_or_default();
            Reply::Chat(if asked.contains("What breed is my dog?") {
                "a border collie".into()
            } else {
                "I don't know".into()
            })
        }
    });
    let mut opts = options(Dataset::Longmemeval, vec![Mode::Full]);
    opts.llm_base_url = Some(server.base_url());
    let report = memcc_bench::qa::run_qa(&fixture(), &opts, "answer-model", "judge-model", &mut |_, _, _| {}).unwrap();
    assert_eq!(report.overall.questions, 4);
    assert_eq!(report.overall.correct, 2, "{report:?}"); // the dog, and the abstention
    let first = server.requests().into_iter().find(|r| r.body["model"] == "answer-model").unwrap();
    let prompt = first.body.to_string();
    assert!(
        prompt.contains("<memcc-recall>") || prompt.contains("<summary"),
        "the answer is asked with MemCC's context"
    );
    // Without an endpoint, QA refuses clearly.
    let err = memcc_bench::qa::run_qa(
        &fixture(),
        &options(Dataset::Longmemeval, vec![Mode::Full]),
        "a",
        "b",
        &mut |_, _, _| {},
    );
    if std::env::var_os("OPENAI_API_KEY").is_none()
        && std::env::var_os("MEMCC_LLM_BASE_URL").is_none()
        && std::env::var_os("OPENAI_BASE_URL").is_none()
    {
        assert!(err.unwrap_err().to_string().contains("endpoint"));
    }
}

#[test]
fn locomo_runs_end_to_end_where_the_data_exists() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/locomo/locomo7-dev.json");
    if !path.exists() {
        eprintln!("SKIP: ../shared/data/locomo/locomo7-dev.json not found");
        return;
    }
    let mut opts = options(Dataset::Locomo, vec![Mode::Bm25, Mode::Full]);
    opts.limit = Some(1);
    let report = memcc_bench::run(&path, &opts, &mut |_, _, _| {}).unwrap();
    assert_eq!(report.haystacks, 1);
    let full = &report.modes[1];
    assert!(full.overall_secondary.is_some(), "LoCoMo reports with and without category 5");
    assert!(full.by_category.iter().map(|(c, _)| c.as_str()).eq(["1", "2", "3", "4", "5"]));
    assert!(full.overall.at(10, 0) > 0.6, "{:?}", full.overall);
}

#[test]
fn speed_suite_reports_every_figure_beside_its_baseline() {
    let embedder: std::sync::Arc<dyn memcc::memory::embed::Embedder> =
        std::sync::Arc::new(memcc::memory::embed::HashingEmbedder { dim: 64 });
    let report = memcc_bench::speed::run(embedder, &[300], 5, &mut |_| {}).unwrap();
    assert!(report.ingest_messages_per_s > 0.0 && report.bare_insert_per_s > 0.0);
    assert_eq!(report.context.len(), 1);
    assert_eq!(report.memory.len(), 1);
    assert!(report.context[0].assemble.p99_ms >= report.context[0].assemble.p50_ms);
    assert!(report.scan_recall_at_10 >= 0.9);
    let md = memcc_bench::speed::markdown(&report);
    assert!(md.contains("baseline") && md.contains("brute-force"));
}
