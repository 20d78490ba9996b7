//! The benchmark harness on tiny LongMemEval- and RealMem-format fixtures (written for these tests, in the
//! upstream schema) and, where ../shared has it, on LoCoMo: modes run, abstention is excluded
//! and counted, reports carry what a reader needs; QA against a mock endpoint on 127.0.0.1.

use std::path::{Path, PathBuf};

use memcc_bench::retrieval::QuestionForm;
use memcc_bench::{Dataset, Mode, Options};
use memcc_testkit::{MockServer, Reply};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/longmemeval_tiny.json")
}

fn options(dataset: Dataset, modes: Vec<Mode>) -> Options {
    Options { modes, budget: 2_000, ..Options::new(dataset, "hashing") }
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
fn the_full_pipeline_records_are_searched_by_each_retriever_and_the_best_of_them_is_reported() {
    let opts = options(Dataset::Longmemeval, vec![Mode::Full, Mode::FullBm25, Mode::FullDense]);
    let report = memcc_bench::run(&fixture(), &opts, &mut |_, _, _| {}).unwrap();
    assert_eq!(report.modes.len(), 3);
    let best = report.best_of_retrievers.as_ref().expect("all three ran");
    assert_eq!(best.questions, 3);
    for m in &report.modes {
        assert_eq!(m.overall.questions, 3);
        for k in [1, 5, 10] {
            for metric in 0..6 {
                assert!(best.at(k, metric) >= m.overall.at(k, metric) - 1e-12, "{:?} k {k} metric {metric}", m.mode);
            }
        }
    }
    // Per question the best is the maximum over the three, not any one mode's.
    let score =
        |r: &memcc_bench::retrieval::QuestionResult, k: usize| r.scores.iter().find(|(kk, _)| *kk == k).unwrap().1;
    for (k, metric) in [(5, 0), (10, 3)] {
        let total: f64 = report
            .per_question
            .iter()
            .filter(|q| q.mode == Mode::Full)
            .map(|q| {
                report.per_question.iter().filter(|r| r.id == q.id).map(|r| score(r, k)[metric]).fold(0.0, f64::max)
            })
            .sum();
        assert!((best.at(k, metric) - total / 3.0).abs() < 1e-9, "k {k} metric {metric}");
    }
    assert!(memcc_bench::markdown(&report).contains("Best of full, full-bm25 and full-dense"));
    let partial = memcc_bench::run(
        &fixture(),
        &options(Dataset::Longmemeval, vec![Mode::Full, Mode::FullBm25]),
        &mut |_, _, _| {},
    )
    .unwrap();
    assert!(partial.best_of_retrievers.is_none(), "only when all three ran");
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
    opts.settings.llm_base_url = Some(server.base_url());
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
    let Some(path) = memcc_testkit::shared_data("data/locomo/locomo7-dev.json") else { return };
    let mut opts = options(Dataset::Locomo, vec![Mode::Bm25, Mode::Full]);
    opts.limit = Some(1);
    let report = memcc_bench::run(&path, &opts, &mut |_, _, _| {}).unwrap();
    assert_eq!(report.haystacks, 1);
    let full = &report.modes[1];
    assert!(full.overall_secondary.is_some(), "LoCoMo reports with and without category 5");
    assert!(full.by_category.iter().map(|(c, _)| c.as_str()).eq(["1", "2", "3", "4", "5"]));
    assert!(full.overall.at(10, 0) > 0.6, "{:?}", full.overall);
    // Each question counted under exactly one form, and conversation 1 has questions naming a period.
    let by_form: usize = full.by_form.iter().map(|(_, a)| a.questions).sum();
    assert_eq!(by_form, full.overall.questions);
    assert!(
        full.by_form.iter().any(|(f, a)| *f == QuestionForm::NamesAPeriod && a.questions > 0),
        "{:?}",
        full.by_form
    );
    assert!(memcc_bench::markdown(&report).contains("| Full | names a period |"));
}

#[test]
fn question_forms() {
    let form = |q: &str| QuestionForm::of(q, Some(1_683_554_160_000));
    assert_eq!(form("What did Nate do on 25 May, 2022?"), QuestionForm::NamesAPeriod);
    assert_eq!(form("What did we decide last month?"), QuestionForm::NamesAPeriod);
    assert_eq!(form("When did Calvin have a car incident?"), QuestionForm::AsksWhen);
    assert_eq!(form("What does Dave like?"), QuestionForm::Other);
}

#[test]
fn speed_suite_reports_every_figure_beside_its_baseline() {
    let embedder: std::sync::Arc<dyn memcc::lab::memory::embed::Embedder> =
        std::sync::Arc::new(memcc::lab::memory::embed::HashingEmbedder { dim: 64 });
    let report = memcc_bench::speed::run(embedder, &[300], &[500], 5, &mut |_| {}).unwrap();
    assert!(report.ingest_messages_per_s > 0.0 && report.bare_insert_per_s > 0.0);
    assert_eq!(report.context.len(), 1);
    assert_eq!(report.memory.len(), 1);
    assert!(report.context[0].assemble.p99_ms >= report.context[0].assemble.p50_ms);
    assert!(report.scan_recall_at_10 >= 0.9);
    assert!(report.bulk[0].compact_messages_per_s > 0.0 && report.bulk[0].ingest_messages_per_s > 0.0);
    let md = memcc_bench::speed::markdown(&report);
    assert!(md.contains("baseline") && md.contains("brute-force"));
    // Tiny sizes (fewer vectors than the recall@10 check asks for) used to panic.
    let tiny = memcc_bench::speed::run(
        std::sync::Arc::new(memcc::lab::memory::embed::HashingEmbedder { dim: 16 }),
        &[5],
        &[10],
        2,
        &mut |_| {},
    )
    .unwrap();
    assert!(tiny.scan_recall_at_10 > 0.99, "{}", tiny.scan_recall_at_10);
}

#[test]
fn prompt_bench_scores_memcc_beside_same_size_baselines() {
    use memcc_bench::prompt::{Scenario, System};
    let opts = options(Dataset::Longmemeval, Vec::new());
    let scenarios = [Scenario::NewSession, Scenario::LongSession];
    let report = memcc_bench::prompt::run(&fixture(), &opts, &[300, 600], &scenarios, true, &mut |_, _, _| {}).unwrap();
    for scenario in scenarios {
        for size in [300, 600] {
            let row = |system: System| {
                report.rows.iter().find(|r| r.scenario == scenario && r.memory_tokens == size && r.system == system)
            };
            let memcc = row(System::Memcc).expect("MemCC row");
            let ceiling = row(System::Ceiling).expect("ceiling row");
            assert!(ceiling.cats_1_4.strict >= memcc.cats_1_4.strict, "{scenario:?} {size}");
            for baseline in [System::Recency, System::Bm25Turns, System::Bm25Sessions] {
                let b = row(baseline).expect("baseline row");
                assert!(b.mean_chars <= memcc.mean_chars + 1.0, "{baseline:?} gets MemCC's characters, not more");
            }
            assert!(row(System::Bm25SessionsFill).is_some());
            assert_eq!(row(System::MemccExpand).is_some(), scenario == Scenario::LongSession);
            // Per conversation, the figures add up to the pooled row, weighted by questions.
            let per: Vec<_> =
                report.per_haystack.iter().filter(|r| r.scenario == scenario && r.memory_tokens == size).collect();
            assert!(per.len() > 1, "one row per haystack");
            let pooled = |f: &dyn Fn(&memcc_bench::prompt::HaystackRow) -> f64| {
                per.iter().map(|r| f(r) * r.questions as f64).sum::<f64>()
                    / per.iter().map(|r| r.questions).sum::<usize>() as f64
            };
            assert!((pooled(&|r| r.standing.memcc) - memcc.cats_1_4.strict).abs() < 1e-9);
            assert!((pooled(&|r| r.standing.ceiling) - ceiling.cats_1_4.strict).abs() < 1e-9);
            let fill = row(System::Bm25SessionsFill).expect("fill row").cats_1_4.strict;
            assert!((pooled(&|r| r.standing.bm25_sessions_fill) - fill).abs() < 1e-9);
            assert!(per.iter().all(|r| r.standing.best_same_size.0.same_size()));
        }
    }
    // An earlier session's answer reaches a new session's prompt through memory: the cello
    // question shares its words with the turn that answers it, and its date comes with it. (The
    // dog question shares none with "border collie"; under the hashing embedder these tests use,
    // finding it was luck — the recency prior used to rank that later turn above the first.)
    let cello = report
        .per_question
        .iter()
        .find(|q| q.question.contains("cello") && q.scenario == Scenario::NewSession && q.memory_tokens == 600)
        .expect("the cello question");
    assert!(cello.results.iter().any(|(s, strict, _)| *s == System::Memcc && *strict), "{cello:?}");
    assert!(
        cello.memcc_prompt.as_deref().is_some_and(|p| !p.contains("When did I start learning the cello?")),
        "question excluded"
    );
    let md = memcc_bench::prompt::markdown(&report);
    assert!(md.contains("best same-size baseline") && md.contains("ceiling"), "{md}");
    assert!(md.contains("Per conversation") && md.contains("margin over BM25 sessions, full"), "{md}");
}

#[test]
fn explain_lists_a_questions_hits_and_the_turns_they_are_traced_to() {
    let opts = Options {
        explain: vec!["q2".into(), "no-such-question".into()],
        ..options(Dataset::Longmemeval, vec![Mode::Bm25, Mode::Full])
    };
    let report = memcc_bench::run(&fixture(), &opts, &mut |_, _, _| {}).unwrap();
    assert_eq!(report.explained.len(), 2, "q2 once per mode; an unknown id is nothing");
    for e in &report.explained {
        assert_eq!(e.id, "q2");
        assert_eq!(e.gold_turns.len(), 2);
        assert!(!e.hits.is_empty() && e.hits.len() <= 12);
        assert!(e.hits.windows(2).all(|w| w[0].score >= w[1].score || w[1].kind == "fact"));
        assert!(e.hits.iter().any(|h| !h.turns.is_empty()), "hits are traced to turns: {:?}", e.hits);
    }
    let md = memcc_bench::markdown(&report);
    assert!(md.contains("#### q2 (Bm25)") && md.contains("#### q2 (Full)"), "{md}");
    let plain =
        memcc_bench::run(&fixture(), &options(Dataset::Longmemeval, vec![Mode::Bm25]), &mut |_, _, _| {}).unwrap();
    assert!(plain.explained.is_empty() && !memcc_bench::markdown(&plain).contains("####"));
}

#[test]
fn conversations_sharing_one_postgres_database_are_refused_not_mixed() {
    let key = tempfile::tempdir().unwrap();
    let Some(url) = memcc_testkit::postgres_database(&key.path().to_string_lossy()) else { return };
    let mut opts = options(Dataset::Longmemeval, vec![Mode::Full]);
    opts.settings.memory.backend = memcc::lab::memory::StoreBackend::Postgres;
    opts.settings.memory.postgres_url = Some(url);
    // The fixture's first haystack fills the database; the second must not search among its records.
    let err = memcc_bench::run(&fixture(), &opts, &mut |_, _, _| {}).unwrap_err().to_string();
    assert!(err.contains("already holds") && err.contains("fresh database"), "{err}");
    // One haystack to one fresh database runs.
    let key = tempfile::tempdir().unwrap();
    let url = memcc_testkit::postgres_database(&key.path().to_string_lossy()).unwrap();
    opts.settings.memory.postgres_url = Some(url);
    opts.limit = Some(1);
    let report = memcc_bench::run(&fixture(), &opts, &mut |_, _, _| {}).unwrap();
    assert_eq!(report.haystacks, 1);
}

fn realmem_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/realmem_tiny.json")
}

/// RealMem's protocol: a query is answered from the sessions before its own. The fixture's
/// query (session 3) repeats words of a *later* session (4) and of its own session's opening
/// turns; neither may be credited, and the gold (session 1) is found.
#[test]
fn a_realmem_query_is_answered_from_earlier_sessions_only() {
    let modes = vec![Mode::Bm25Sessions, Mode::Bm25, Mode::Hybrid, Mode::Full];
    let report = memcc_bench::run(&realmem_fixture(), &options(Dataset::Realmem, modes), &mut |_, _, _| {}).unwrap();
    assert_eq!((report.haystacks, report.questions), (1, 1));
    assert!(report.evidence_issues.is_empty(), "{:?}", report.evidence_issues);
    assert_eq!(report.modes.len(), 4);
    for r in &report.per_question {
        assert_eq!(r.id, "realmem_tiny#Q-0001");
        assert_eq!(r.category, "Dynamic Updating");
        assert_eq!(r.gold_turns, vec!["s1-kyoto#1".to_string()]);
        assert!(
            r.ranked_sessions.iter().all(|s| s == "s1-kyoto" || s == "s2-running"),
            "{:?} credited a session that is not earlier: {:?}",
            r.mode,
            r.ranked_sessions
        );
        assert_eq!(r.ranked_sessions.first().map(String::as_str), Some("s1-kyoto"), "{:?}", r.mode);
    }
    let md = memcc_bench::markdown(&report);
    assert!(md.contains("| Bm25Sessions | 1 |") && md.contains("sess R_all@20"), "{md}");
}

/// The five RealMem personas in ../shared load as the upstream files are: every query becomes a
/// question asked in its own session with gold only in earlier ones, and the baseline that
/// reproduces the dataset README's BM25 reference runs on one persona.
#[test]
fn realmem_loads_and_its_baseline_runs_where_the_data_exists() {
    let Some(path) = memcc_testkit::shared_data("data/realmem") else { return };
    let mut issues = Vec::new();
    let upstream = Options::new(Dataset::Realmem, "hashing");
    let haystacks = memcc_bench::load(&upstream, &path, &mut issues).unwrap();
    assert_eq!(haystacks.len(), 5);
    // A run that does not ask for projects tells MemCC none; one that does, each session's.
    assert!(haystacks.iter().flat_map(|h| &h.sessions).all(|s| s.project.is_none()));
    let told = memcc_bench::load(&Options { projects: true, ..upstream }, &path, &mut Vec::new()).unwrap();
    let first = &told[0].sessions[0];
    assert!(first.project.as_deref().is_some_and(|p| !p.is_empty() && !p.contains(':')), "{:?}", first.project);
    assert_eq!(haystacks.iter().map(|h| h.questions.len()).sum::<usize>(), 728);
    // Upstream marks 126 memory points' turns as -1, and one query (Kenta_Tanaka Q-0149) names its
    // own session among its four gold sessions: reported, never silently dropped.
    assert!(issues.iter().all(|i| i.contains("names no turn") || i.contains("Q-0149")), "{issues:?}");
    assert!(issues.iter().any(|i| i.contains("Q-0149: gold session be6fb368 is not earlier")), "{issues:?}");
    for h in &haystacks {
        let place: std::collections::HashMap<&str, usize> =
            h.sessions.iter().enumerate().map(|(i, s)| (s.unit.as_str(), i)).collect();
        for q in &h.questions {
            let at = q.asked_at.expect("asked partway");
            assert!(!q.gold_points.is_empty() && !q.gold_sessions.is_empty(), "{}", q.id);
            assert!(q.gold_sessions.iter().all(|g| place[g.as_str()] < at.session), "{}: gold after the query", q.id);
        }
    }
    let q149 = haystacks.iter().flat_map(|h| &h.questions).find(|q| q.id == "Kenta_Tanaka#Q-0149").unwrap();
    assert_eq!(q149.gold_sessions.len(), 3);
    let mut opts = options(Dataset::Realmem, vec![Mode::Bm25Sessions]);
    opts.limit = Some(1);
    let report = memcc_bench::run(&path, &opts, &mut |_, _, _| {}).unwrap();
    let bm25 = &report.modes[0];
    assert_eq!(bm25.overall.questions, haystacks[0].questions.len());
    assert!(bm25.overall.at(10, 0) > 0.4, "{:?}", bm25.overall);
}

/// The prompt bench on RealMem: the question is asked in its own session, whose turns are not
/// scored; memory points are the gold; the long session reports what appending cost.
#[test]
fn the_realmem_prompt_bench_scores_memory_points_from_earlier_sessions() {
    use memcc_bench::prompt::{Scenario, System};
    let opts = options(Dataset::Realmem, Vec::new());
    let scenarios = [Scenario::NewSession, Scenario::LongSession];
    let report =
        memcc_bench::prompt::run(&realmem_fixture(), &opts, &[300], &scenarios, true, &mut |_, _, _| {}).unwrap();
    let calibration = report.point_calibration.expect("RealMem reports the point rule's calibration");
    assert_eq!(calibration.points, 2);
    for scenario in scenarios {
        let line = report.per_question.iter().find(|l| l.scenario == scenario).expect("one question");
        let prompt = line.memcc_prompt.as_deref().unwrap_or_default();
        // The question's own session ("I'm back to plan the trip") is the host's, not memory's.
        assert!(!prompt.contains("I'm back to plan the trip"), "{scenario:?}: {prompt}");
        // The later session (4) was not replayed yet when the question was asked.
        assert!(!prompt.contains("four nights booked"), "{scenario:?}: {prompt}");
        let memcc = line.results.iter().find(|r| r.0 == System::Memcc).unwrap();
        assert!(memcc.1, "{scenario:?}: the hotel booking of session 1 is recalled: {prompt}");
    }
    assert_eq!(report.long_runs.len(), 1);
    let run = &report.long_runs[0];
    assert!(run.verify_ok && run.messages == 10 && run.append_p99_ms > 0.0, "{run:?}");
    let md = memcc_bench::prompt::markdown(&report);
    assert!(md.contains("Calibration over 2 points") && md.contains("append p50 ms"), "{md}");
}
