//! Retrieval recall: every mode runs in the same process on the same data, and is scored by the
//! same code. Retrieval recall is not QA accuracy: it says whether the evidence reached the
//! prompt, not whether a model answered correctly.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::baseline::Corpus;
use crate::haystack::HQuestion;
use crate::haystack::Haystack;
use crate::metrics::{dedup_in_order, ndcg, recall_all, recall_any};
use crate::pipeline::{Ask, Provenance, open, replay};
use crate::{BenchError, Dataset, Options, RunInfo, load, peak_rss_mib};
use memcc::Memcc;
use memcc::lab::context::SessionRef;
use memcc::lab::context::message::AgentMessage;
use memcc::lab::core::bridge::ContextTurn;
use memcc::lab::memory::SearchMode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// One record per turn, BM25 only.
    Bm25,
    /// One record per turn, vector similarity only.
    Dense,
    /// One record per turn, MemCC's hybrid L3 (no LLM).
    Hybrid,
    /// Sessions replayed through the context engine with compaction; summaries and raw
    /// exchanges bridged into memory; hits traced to turns by provenance.
    Full,
    /// `full` with LLM rerank (needs an endpoint).
    FullRerank,
    /// `full`'s records searched by BM25 alone: what the full-text retriever contributes.
    FullBm25,
    /// `full`'s records searched by vector similarity alone.
    FullDense,
    /// Whole sessions ranked by BM25 over the question alone (SQLite FTS5): RealMem's upstream
    /// reference baseline, and a plain one for any dataset.
    Bm25Sessions,
}

impl Mode {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "bm25" => Mode::Bm25,
            "dense" => Mode::Dense,
            "hybrid" => Mode::Hybrid,
            "full" => Mode::Full,
            "full-rerank" => Mode::FullRerank,
            "full-bm25" => Mode::FullBm25,
            "full-dense" => Mode::FullDense,
            "bm25-sessions" => Mode::Bm25Sessions,
            _ => return None,
        })
    }
}

pub const KS: [usize; 5] = [1, 3, 5, 10, 20];

/// Per-question result, for tracing a regression to questions.
#[derive(Debug, Clone, Serialize)]
pub struct QuestionResult {
    pub id: String,
    /// The haystack (LoCoMo conversation, RealMem persona) it is asked of.
    pub haystack: String,
    pub category: String,
    pub mode: Mode,
    /// What the question's words ask for (see [`QuestionForm`]).
    pub form: QuestionForm,
    pub gold_sessions: Vec<String>,
    pub gold_turns: Vec<String>,
    pub ranked_sessions: Vec<String>,
    pub ranked_turns: Vec<String>,
    /// Per gold session (in `gold_sessions` order), its place among the distinct sessions of all
    /// the hits (1 = first), or `None` when no hit reaches it: a miss that reordering the hits
    /// could mend, or one that needs other candidates.
    pub gold_session_ranks: Vec<Option<usize>>,
    /// Whether a gold session is of another project than the question's (RealMem).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gold_elsewhere: Option<bool>,
    /// (k, [session recall_all, session recall_any, session ndcg, turn recall_all, turn recall_any, turn ndcg])
    pub scores: Vec<(usize, [f64; 6])>,
}

/// One question's top hits in one mode (`--explain`).
#[derive(Debug, Clone, Serialize)]
pub struct Explained {
    pub id: String,
    pub mode: Mode,
    pub question: String,
    pub gold_turns: Vec<String>,
    pub hits: Vec<ExplainedHit>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ExplainedHit {
    pub id: String,
    pub kind: String,
    pub score: f64,
    /// The turns the hit is traced to, in its evidence order.
    pub turns: Vec<String>,
    /// Its text, the first 200 characters, one line.
    pub text: String,
}

/// Hits listed per explained question.
const EXPLAINED_HITS: usize = 12;

/// The forms of question time-aware search treats differently, so a run shows whether that
/// holds on conversations it was not developed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QuestionForm {
    /// Names a period ("in May 2023", "last month"): searched within it too.
    NamesAPeriod,
    /// Asks when, naming no period: records that state a date rank higher.
    AsksWhen,
    Other,
}

impl QuestionForm {
    pub const ALL: [QuestionForm; 3] = [QuestionForm::NamesAPeriod, QuestionForm::AsksWhen, QuestionForm::Other];

    pub fn of(question: &str, as_of: Option<i64>) -> Self {
        use memcc::lab::memory::lang::period::{asks_when, named_periods};
        if !named_periods(question, as_of).is_empty() {
            QuestionForm::NamesAPeriod
        } else if asks_when(question) {
            QuestionForm::AsksWhen
        } else {
            QuestionForm::Other
        }
    }

    fn label(self) -> &'static str {
        match self {
            QuestionForm::NamesAPeriod => "names a period",
            QuestionForm::AsksWhen => "asks when",
            QuestionForm::Other => "other",
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Aggregate {
    pub questions: usize,
    /// Questions that have turn-level gold (turn metrics average over these).
    pub with_turns: usize,
    pub means: Vec<(usize, [f64; 6])>,
}

impl Aggregate {
    pub fn at(&self, k: usize, metric: usize) -> f64 {
        self.means.iter().find(|(kk, _)| *kk == k).map_or(0.0, |(_, v)| v[metric])
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ModeReport {
    pub mode: Mode,
    pub overall: Aggregate,
    /// LoCoMo: without category 5 (adversarial).
    pub overall_secondary: Option<Aggregate>,
    pub by_category: Vec<(String, Aggregate)>,
    pub by_form: Vec<(QuestionForm, Aggregate)>,
    /// Per haystack (RealMem persona, LoCoMo conversation), in the order they ran.
    pub by_haystack: Vec<(String, Aggregate)>,
    /// RealMem: the questions whose gold is all in the asker's project, and those with gold in
    /// another project.
    pub by_project: Vec<(String, Aggregate)>,
    pub ingest_seconds: f64,
    pub query_seconds: f64,
    /// Peak resident memory of the process after this mode's ingest / queries, in MiB.
    pub peak_rss_mib_after_ingest: Option<f64>,
    pub peak_rss_mib_after_query: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub dataset: Dataset,
    /// The hits of the questions `--explain` names, per mode.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub explained: Vec<Explained>,
    #[serde(flatten)]
    pub run: RunInfo,
    pub haystacks: usize,
    pub questions: usize,
    /// Abstention questions (LongMemEval `_abs`): excluded from recall, counted here.
    pub abstentions: usize,
    /// Questions without any usable evidence (excluded from recall).
    pub without_evidence: usize,
    /// Evidence ids that were normalised, dangling or unparseable.
    pub evidence_issues: Vec<String>,
    /// Modes asked for but not run, and why.
    pub skipped_modes: Vec<String>,
    pub modes: Vec<ModeReport>,
    /// When `full`, `full-bm25` and `full-dense` all ran: per question the best of the three,
    /// what choosing the right retriever for each question would give over the same records
    /// (see [`best_of_retrievers`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_of_retrievers: Option<Aggregate>,
    /// Per mode, where the gold sessions of its session R_all@5 misses stand (see [`SessionMisses`]).
    pub session_misses: Vec<(Mode, SessionMisses)>,
    pub wall_seconds: f64,
    #[serde(skip)]
    pub per_question: Vec<QuestionResult>,
}

impl Report {
    /// Every category any mode reported.
    pub fn by_category_names(&self) -> Vec<String> {
        dedup_in_order(self.modes.iter().flat_map(|m| m.by_category.iter().map(|(c, _)| c.clone())))
    }
}

fn aggregate<'a>(results: impl Iterator<Item = &'a QuestionResult>) -> Aggregate {
    let mut sums = vec![[0.0f64; 6]; KS.len()];
    let (mut n, mut with_turns) = (0usize, 0usize);
    for r in results {
        n += 1;
        let has_turns = !r.gold_turns.is_empty();
        with_turns += usize::from(has_turns);
        for (i, (_, s)) in r.scores.iter().enumerate() {
            for m in 0..3 {
                sums[i][m] += s[m];
            }
            if has_turns {
                for m in 3..6 {
                    sums[i][m] += s[m];
                }
            }
        }
    }
    let mean = |x: f64, d: usize| if d == 0 { 0.0 } else { x / d as f64 };
    Aggregate {
        questions: n,
        with_turns,
        means: KS
            .iter()
            .zip(sums)
            .map(|(k, s)| {
                (
                    *k,
                    [
                        mean(s[0], n),
                        mean(s[1], n),
                        mean(s[2], n),
                        mean(s[3], with_turns),
                        mean(s[4], with_turns),
                        mean(s[5], with_turns),
                    ],
                )
            })
            .collect(),
    }
}

/// Index a haystack's turns as one record each (modes bm25 / dense / hybrid), a session at a
/// time; `ask` gets the questions asked before each session, and those asked at the end.
fn index_turns(memcc: &Memcc, h: &Haystack, ids: &mut Provenance, ask: Ask<'_>) -> Result<(), BenchError> {
    crate::pipeline::ensure_empty(memcc, h)?;
    let mut next = 1i64;
    for (si, s) in h.sessions.iter().enumerate() {
        for q in h.questions_before(si) {
            ask(memcc, q, ids)?;
        }
        let mut lines = String::new();
        for (k, t) in s.turns.iter().enumerate() {
            ids.insert(next, (s.unit.clone(), t.unit.clone()));
            let when = s.time.map(|_| crate::pipeline::turn_time(s.time, k));
            let header = memcc::lab::core::time::date_header(when, when);
            let record = serde_json::json!({
                "agentId": memcc.config.context.agent_id, "kind": "verbatim", "text": format!("{header}\n{}", t.display_text()),
                "sourceMessageIds": [next], "sourceSessionIds": [s.unit], "eventTime": when,
            });
            lines.push_str(&record.to_string());
            lines.push('\n');
            next += 1;
        }
        let report = memcc.memory()?.import_jsonl(lines.as_bytes(), None, &mut |_, _| {})?;
        if !report.errors.is_empty() {
            return Err(BenchError::Input(format!("indexing turns: {:?}", report.errors)));
        }
    }
    for q in h.questions_before(h.sessions.len()) {
        ask(memcc, q, ids)?;
    }
    Ok(())
}

/// The records a mode searches: one per turn, or what the full pipeline made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Records {
    Turns,
    Pipeline,
    /// Whole sessions in a plain full-text index (mode `bm25-sessions`).
    Sessions,
}

impl Records {
    fn of(mode: Mode) -> Records {
        match mode {
            Mode::Bm25 | Mode::Dense | Mode::Hybrid => Records::Turns,
            Mode::Full | Mode::FullRerank | Mode::FullBm25 | Mode::FullDense => Records::Pipeline,
            Mode::Bm25Sessions => Records::Sessions,
        }
    }
}

/// A mode's time and memory: ingest seconds count the ingest of the records it searched
/// (shared by the modes over the same records).
#[derive(Debug, Clone, Default)]
struct Timing {
    ingest: f64,
    query: f64,
    rss_ingest: Option<f64>,
    rss_query: Option<f64>,
}

/// What a question is searched with: the question itself, or — asked partway through a session
/// (RealMem) in the full pipeline — the recall query the assembler forms from that session's
/// turns and the question, as a host's prompt would (its text, and the turns before it as its
/// context).
fn query_text(
    memcc: &Memcc,
    h: &Haystack,
    q: &HQuestion,
    mode: Mode,
) -> Result<(String, Vec<ContextTurn>), BenchError> {
    let Some(at) = q.asked_at.filter(|_| Records::of(mode) == Records::Pipeline) else {
        return Ok((q.text.clone(), Vec::new()));
    };
    let sref = SessionRef::new(&crate::pipeline::session_id(h, at.session));
    let query = memcc.context.recall_query(&sref, q.as_of, &[AgentMessage::user(&q.text)])?;
    Ok((query.text, query.context))
}

/// The units a question may be credited with: not its own session's (the host has those in
/// its context; memory is asked for the past).
fn own_session<'a>(h: &'a Haystack, q: &HQuestion) -> Option<&'a str> {
    q.asked_at.and_then(|a| h.sessions.get(a.session)).map(|s| s.unit.as_str())
}

/// Hits searched per question: LoCoMo's 30 (the pool its figures were always measured with);
/// RealMem is scored at 20 sessions, which 30 records of long sessions may not reach.
fn hits_asked(options: &Options) -> usize {
    if options.dataset == Dataset::Realmem { 100 } else { 30 }
}

/// Search one question in one mode and score its hits; `explained` gets its hits when
/// `--explain` names it.
fn ask(
    memcc: &Memcc,
    h: &Haystack,
    q: &HQuestion,
    mode: Mode,
    ids: &Provenance,
    options: &Options,
    explained: &mut Vec<Explained>,
) -> Result<QuestionResult, BenchError> {
    let search_mode = match mode {
        Mode::Bm25 | Mode::FullBm25 | Mode::Bm25Sessions => SearchMode::Lexical,
        Mode::Dense | Mode::FullDense => SearchMode::Dense,
        Mode::Hybrid | Mode::Full | Mode::FullRerank => SearchMode::Hybrid,
    };
    let rt = memcc.memory()?;
    let (text, context) = query_text(memcc, h, q, mode)?;
    let agent = &options.settings.context.agent_id;
    // The project of the session the question is asked in, when the run tells MemCC projects.
    let project = q.asked_at.and_then(|a| h.sessions.get(a.session)).and_then(|s| s.project.as_deref());
    let session = q.asked_at.map(|a| crate::pipeline::session_id(h, a.session));
    let asking = memcc::lab::memory::Asking {
        context: &context,
        session: session.as_deref(),
        as_of: q.as_of,
        project,
        ..Default::default()
    };
    let hits = rt.search_in_context(agent, &text, &asking, hits_asked(options), search_mode)?;
    if options.explain.contains(&q.id) {
        explained.push(Explained {
            id: q.id.clone(),
            mode,
            question: text.clone(),
            gold_turns: {
                let mut gold: Vec<String> = q.gold_turns.iter().cloned().collect();
                gold.sort();
                gold
            },
            hits: hits
                .iter()
                .take(EXPLAINED_HITS)
                .map(|h| ExplainedHit {
                    id: h.id.clone(),
                    kind: format!("{:?}", h.kind).to_lowercase(),
                    score: h.score,
                    turns: h.evidence.iter().filter_map(|id| ids.get(id).map(|u| u.1.clone())).collect(),
                    text: h.text.chars().take(200).collect::<String>().replace('\n', " / "),
                })
                .collect(),
        });
    }
    // A hit's turns in the order it gives them: the lines holding the query's words first.
    let own = own_session(h, q);
    let units: Vec<(String, String)> = dedup_in_order(
        hits.iter().flat_map(|h| h.evidence.iter().filter_map(|id| ids.get(id).cloned()).collect::<Vec<_>>()),
    )
    .into_iter()
    .filter(|(s, _)| Some(s.as_str()) != own)
    .collect();
    let turns: Vec<String> = units.iter().map(|(_, t)| t.clone()).collect();
    let sessions: Vec<String> = dedup_in_order(units.iter().map(|(s, _)| s.clone()));
    Ok(result(h, q, mode, sessions, turns))
}

/// Score a question's ranked sessions and turns against its gold.
fn result(h: &Haystack, q: &HQuestion, mode: Mode, sessions: Vec<String>, turns: Vec<String>) -> QuestionResult {
    let (gs, gt) = (&q.gold_sessions, &q.gold_turns);
    let scores = KS
        .iter()
        .map(|&k| {
            (
                k,
                [
                    recall_all(&sessions, gs, k),
                    recall_any(&sessions, gs, k),
                    ndcg(&sessions, gs, k),
                    recall_all(&turns, gt, k),
                    recall_any(&turns, gt, k),
                    ndcg(&turns, gt, k),
                ],
            )
        })
        .collect();
    QuestionResult {
        id: q.id.clone(),
        haystack: h.id.clone(),
        category: q.category.clone(),
        mode,
        form: QuestionForm::of(&q.text, q.as_of),
        gold_sessions: gs.iter().cloned().collect(),
        gold_turns: gt.iter().cloned().collect(),
        gold_session_ranks: gs.iter().map(|g| sessions.iter().position(|s| s == g).map(|i| i + 1)).collect(),
        ranked_sessions: sessions.into_iter().take(10).collect(),
        ranked_turns: turns.into_iter().take(10).collect(),
        gold_elsewhere: q.gold_elsewhere,
        scores,
    }
}

/// Whether a question counts for recall (it has gold and is not an abstention).
fn scored(q: &HQuestion) -> bool {
    !q.abstention && !q.gold_sessions.is_empty()
}

/// Mode `bm25-sessions`: the haystack's sessions before the question (`corpus`) ranked by BM25
/// over the question alone (no turn-level ranking: a session is one document).
fn ask_sessions(corpus: &Corpus, h: &Haystack, q: &HQuestion) -> Result<QuestionResult, BenchError> {
    let order = corpus.rank_sessions(&q.text)?;
    let sessions: Vec<String> = order.into_iter().map(|i| h.sessions[i].unit.clone()).collect();
    Ok(result(h, q, Mode::Bm25Sessions, sessions, Vec::new()))
}

/// Run retrieval on `path` in every requested mode. `progress(done, total, label)`.
pub fn run(path: &Path, options: &Options, progress: &mut dyn FnMut(usize, usize, &str)) -> Result<Report, BenchError> {
    let started = Instant::now();
    let mut issues = Vec::new();
    let haystacks = load(options, path, &mut issues)?;
    let base = &options.settings;
    let embedder: Arc<dyn memcc::lab::memory::embed::Embedder> = Memcc::embedder(base, &mut Vec::new())?;
    let questions: Vec<_> = haystacks.iter().flat_map(|h| h.questions.iter()).collect();
    let abstentions = questions.iter().filter(|q| q.abstention).count();
    let without_evidence = questions.iter().filter(|q| !q.abstention && q.gold_sessions.is_empty()).count();
    let mut skipped_modes = Vec::new();
    let modes: Vec<Mode> = options
        .modes
        .iter()
        .copied()
        .filter(|&mode| {
            let runs = mode != Mode::FullRerank || base.endpoint().is_some();
            if !runs {
                skipped_modes.push("full-rerank: no OpenAI-compatible endpoint configured".into());
            }
            runs
        })
        .collect();
    let mut per_question = Vec::new();
    let mut explained = Vec::new();
    let mut timings = vec![Timing::default(); modes.len()];
    // Haystack by haystack, each kind of records ingested once and searched by every mode over
    // it (one haystack's stores on disk at a time). Each question is asked where its dataset
    // asks it — after the whole history, or (RealMem) before its own session is replayed, so
    // memory then holds the earlier sessions only.
    for (hi, h) in haystacks.iter().enumerate() {
        for records in [Records::Sessions, Records::Turns, Records::Pipeline] {
            let users: Vec<usize> = (0..modes.len()).filter(|&i| Records::of(modes[i]) == records).collect();
            if users.is_empty() {
                continue;
            }
            progress(hi, haystacks.len(), &format!("{records:?} {}", h.id));
            let t = Instant::now();
            let mut query_seconds = vec![0.0f64; modes.len()];
            if records == Records::Sessions {
                for si in 0..=h.sessions.len() {
                    let asked: Vec<&HQuestion> = h.questions_before(si).filter(|q| scored(q)).collect();
                    if asked.is_empty() {
                        continue;
                    }
                    let corpus = Corpus::before(h, si)?;
                    for q in asked {
                        per_question.push(ask_sessions(&corpus, h, q)?);
                    }
                }
            } else {
                let dir = tempfile::tempdir()?;
                let mut ids: Provenance = HashMap::new();
                let memcc = open(options, dir.path(), &embedder, false)?;
                crate::pipeline::held_out(options, &memcc, h)?;
                // The rerank mode searches the same store through an instance of its own (it
                // reads what the replaying one writes as it goes).
                let reranking = users
                    .iter()
                    .any(|&i| modes[i] == Mode::FullRerank)
                    .then(|| open(options, dir.path(), &embedder, true))
                    .transpose()?;
                let mut asked = |m: &Memcc, q: &HQuestion, ids: &Provenance| -> Result<(), BenchError> {
                    if !scored(q) {
                        return Ok(());
                    }
                    for &i in &users {
                        let t = Instant::now();
                        let searcher = if modes[i] == Mode::FullRerank { reranking.as_ref().unwrap_or(m) } else { m };
                        per_question.push(ask(searcher, h, q, modes[i], ids, options, &mut explained)?);
                        query_seconds[i] += t.elapsed().as_secs_f64();
                    }
                    Ok(())
                };
                match records {
                    Records::Pipeline => replay(&memcc, h, options.budget, &mut ids, &mut asked)?,
                    _ => index_turns(&memcc, h, &mut ids, &mut asked)?,
                }
            }
            let total = t.elapsed().as_secs_f64();
            let asking: f64 = query_seconds.iter().sum();
            for &i in &users {
                let timing = &mut timings[i];
                timing.ingest += total - asking;
                timing.query += query_seconds[i];
                timing.rss_ingest = peak_rss_mib();
                timing.rss_query = peak_rss_mib();
            }
        }
    }
    let mode_reports: Vec<ModeReport> = modes
        .iter()
        .zip(&timings)
        .map(|(&mode, timing)| {
            let results: Vec<&QuestionResult> = per_question.iter().filter(|r| r.mode == mode).collect();
            let mut categories: Vec<String> = dedup_in_order(results.iter().map(|r| r.category.clone()));
            categories.sort();
            ModeReport {
                mode,
                overall: aggregate(results.iter().copied()),
                overall_secondary: (options.dataset == Dataset::Locomo)
                    .then(|| aggregate(results.iter().copied().filter(|r| r.category != "5"))),
                by_category: categories
                    .into_iter()
                    .map(|c| {
                        let a = aggregate(results.iter().copied().filter(|r| r.category == c));
                        (c, a)
                    })
                    .collect(),
                by_form: QuestionForm::ALL
                    .iter()
                    .map(|&f| (f, aggregate(results.iter().copied().filter(|r| r.form == f))))
                    .filter(|(_, a)| a.questions > 0)
                    .collect(),
                by_project: [("gold in the asker's project", false), ("gold in another project", true)]
                    .into_iter()
                    .map(|(label, elsewhere)| {
                        (
                            label.to_string(),
                            aggregate(results.iter().copied().filter(|r| r.gold_elsewhere == Some(elsewhere))),
                        )
                    })
                    .filter(|(_, a)| a.questions > 0)
                    .collect(),
                by_haystack: dedup_in_order(results.iter().map(|r| r.haystack.clone()))
                    .into_iter()
                    .map(|id| {
                        let a = aggregate(results.iter().copied().filter(|r| r.haystack == id));
                        (id, a)
                    })
                    .collect(),
                ingest_seconds: timing.ingest,
                query_seconds: timing.query,
                peak_rss_mib_after_ingest: timing.rss_ingest,
                peak_rss_mib_after_query: timing.rss_query,
            }
        })
        .collect();
    progress(haystacks.len(), haystacks.len(), "done");
    Ok(Report {
        dataset: options.dataset,
        explained,
        run: RunInfo::new(path, options, embedder.model_id()),
        haystacks: haystacks.len(),
        questions: questions.len(),
        abstentions,
        without_evidence,
        evidence_issues: issues,
        skipped_modes,
        modes: mode_reports,
        best_of_retrievers: best_of_retrievers(&per_question),
        session_misses: modes.iter().map(|&m| (m, SessionMisses::of(m, &per_question))).collect(),
        wall_seconds: started.elapsed().as_secs_f64(),
        per_question,
    })
}

/// The questions a mode missed at session R_all@5, by where the worst-placed gold session stands
/// among the distinct sessions of the hits: just past the cut (6–10: a better order of the same
/// hits would mend them), further down, or in no hit (other candidates are needed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SessionMisses {
    pub misses: usize,
    pub within_10: usize,
    pub beyond_10: usize,
    pub not_found: usize,
    /// Misses with more gold sessions than the cut holds: no ranking can mend them.
    pub more_than_5_gold: usize,
}

impl SessionMisses {
    pub fn of(mode: Mode, per_question: &[QuestionResult]) -> Self {
        let mut out = SessionMisses::default();
        for r in per_question.iter().filter(|r| r.mode == mode) {
            // The worst gold session's place decides session R_all@5 too: a miss is one past 5th.
            let worst = r.gold_session_ranks.iter().try_fold(0, |worst, rank| rank.map(|r| r.max(worst)));
            if worst.is_some_and(|w| w <= 5) {
                continue;
            }
            out.misses += 1;
            if r.gold_sessions.len() > 5 {
                out.more_than_5_gold += 1;
            }
            match worst {
                None => out.not_found += 1,
                Some(w) if w <= 10 => out.within_10 += 1,
                Some(_) => out.beyond_10 += 1,
            }
        }
        out
    }
}

/// Per question, each score the best that `full`, `full-bm25` or `full-dense` reached; `None`
/// unless all three ran. A diagnostic: what choosing the right retriever for each question
/// would give over these records. A fusion may exceed it (it mixes the hits of both), but when
/// every weighting tried stays below it, the next gain is in the records or the retriever.
pub fn best_of_retrievers(per_question: &[QuestionResult]) -> Option<Aggregate> {
    let [first, rest @ ..] = [Mode::Full, Mode::FullBm25, Mode::FullDense];
    let mut best: Vec<QuestionResult> = per_question.iter().filter(|r| r.mode == first).cloned().collect();
    for mode in rest {
        let scores: HashMap<&str, &[(usize, [f64; 6])]> =
            per_question.iter().filter(|r| r.mode == mode).map(|r| (r.id.as_str(), r.scores.as_slice())).collect();
        if best.is_empty() || scores.is_empty() {
            return None;
        }
        for b in &mut best {
            for ((_, bs), (_, rs)) in b.scores.iter_mut().zip(scores.get(b.id.as_str()).copied().unwrap_or_default()) {
                for (x, y) in bs.iter_mut().zip(rs) {
                    *x = x.max(*y);
                }
            }
        }
    }
    Some(aggregate(best.iter()))
}

/// A turn-level figure as a table shows it: none for whole sessions, which rank no turns.
fn turn_cell(mode: Mode, a: &Aggregate, k: usize, metric: usize) -> String {
    if mode == Mode::Bm25Sessions { "–".to_string() } else { format!("{:.3}", a.at(k, metric)) }
}

/// The report as Markdown (also what the terminal shows).
pub fn markdown(report: &Report) -> String {
    let mut s = format!(
        "{:?} retrieval — {} haystacks, {} questions ({} abstention, {} without usable evidence: excluded), embedder {}, budget {}\n\
         dataset sha256 {}; {} cores, {}; wall {:.0} s\n\
         R_all@k: every gold unit in the top k (LongMemEval's metric); R_any@k: at least one. Retrieval recall is not QA accuracy.\n\n",
        report.dataset,
        report.haystacks,
        report.questions,
        report.abstentions,
        report.without_evidence,
        report.run.embedder,
        report.run.settings.budget,
        report.run.dataset_sha256,
        report.run.machine.cores,
        report.run.machine.cpu,
        report.wall_seconds
    );
    if report.run.settings.projects {
        s.push_str(crate::PROJECTS_TOLD);
    }
    let header = "| mode | n | sess R_all@5 | sess R_any@5 | sess R_all@10 | sess R_any@10 | sess R_all@20 | sess NDCG@10 | turn R_all@5 | turn R_all@10 | turn R_any@10 | turn NDCG@10 | ingest s | query s | peak MiB |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    let row = |m: &ModeReport, a: &Aggregate| {
        let turn = |k: usize, metric: usize| turn_cell(m.mode, a, k, metric);
        format!(
            "| {:?} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {} | {} | {} | {} | {:.1} | {:.1} | {:.0} |\n",
            m.mode,
            a.questions,
            a.at(5, 0),
            a.at(5, 1),
            a.at(10, 0),
            a.at(10, 1),
            a.at(20, 0),
            a.at(10, 2),
            turn(5, 3),
            turn(10, 3),
            turn(10, 4),
            turn(10, 5),
            m.ingest_seconds,
            m.query_seconds,
            m.peak_rss_mib_after_query.unwrap_or(0.0)
        )
    };
    let title = if report.dataset == Dataset::Locomo {
        "All categories (1–5)"
    } else {
        "All question types (abstention excluded)"
    };
    s.push_str(&format!("{title}\n\n{header}"));
    for m in &report.modes {
        s.push_str(&row(m, &m.overall));
    }
    if report.modes.iter().any(|m| m.overall_secondary.is_some()) {
        s.push_str(&format!("\nCategories 1–4 (without adversarial 5)\n\n{header}"));
        for m in &report.modes {
            if let Some(a) = &m.overall_secondary {
                s.push_str(&row(m, a));
            }
        }
    }
    s.push_str("\nBy category\n\n| mode | category | n | sess R_all@10 | sess R_any@10 | turn R_all@10 | turn R_any@10 |\n|---|---|---|---|---|---|---|\n");
    for m in &report.modes {
        for (c, a) in &m.by_category {
            s.push_str(&format!(
                "| {:?} | {c} | {} | {:.3} | {:.3} | {} | {} |\n",
                m.mode,
                a.questions,
                a.at(10, 0),
                a.at(10, 1),
                turn_cell(m.mode, a, 10, 3),
                turn_cell(m.mode, a, 10, 4)
            ));
        }
    }
    if report.modes.iter().any(|m| !m.by_project.is_empty()) {
        s.push_str("\nBy where the gold is\n\n| mode | gold | n | sess R_all@5 | sess R_all@10 | sess R_all@20 |\n|---|---|---|---|---|---|\n");
        for m in &report.modes {
            for (label, a) in &m.by_project {
                s.push_str(&format!(
                    "| {:?} | {label} | {} | {:.3} | {:.3} | {:.3} |\n",
                    m.mode,
                    a.questions,
                    a.at(5, 0),
                    a.at(10, 0),
                    a.at(20, 0)
                ));
            }
        }
    }
    s.push_str("\nBy question form (time-aware search)\n\n| mode | form | n | sess R_all@5 | sess R_all@10 | turn R_all@10 | turn R_any@10 |\n|---|---|---|---|---|---|---|\n");
    for m in &report.modes {
        for (f, a) in &m.by_form {
            s.push_str(&format!(
                "| {:?} | {} | {} | {:.3} | {:.3} | {} | {} |\n",
                m.mode,
                f.label(),
                a.questions,
                a.at(5, 0),
                a.at(10, 0),
                turn_cell(m.mode, a, 10, 3),
                turn_cell(m.mode, a, 10, 4)
            ));
        }
    }
    if report.haystacks > 1 {
        s.push_str("\nBy haystack\n\n| mode | haystack | n | sess R_all@5 | sess R_all@10 | sess R_all@20 | turn R_all@10 |\n|---|---|---|---|---|---|---|\n");
        for m in &report.modes {
            for (id, a) in &m.by_haystack {
                s.push_str(&format!(
                    "| {:?} | {id} | {} | {:.3} | {:.3} | {:.3} | {} |\n",
                    m.mode,
                    a.questions,
                    a.at(5, 0),
                    a.at(10, 0),
                    a.at(20, 0),
                    turn_cell(m.mode, a, 10, 3)
                ));
            }
        }
    }
    if let Some(a) = &report.best_of_retrievers {
        s.push_str(&format!(
            "\nBest of full, full-bm25 and full-dense per question (choosing the right retriever each time; \
             when no weighting reaches it, look to the records or the retriever): {} questions, session R_all@5 {:.3}, \
             R_all@10 {:.3}, turn R_all@10 {:.3}, R_any@10 {:.3}\n",
            a.questions,
            a.at(5, 0),
            a.at(10, 0),
            a.at(10, 3),
            a.at(10, 4)
        ));
    }
    s.push_str(
        "\nSession R_all@5 misses by where the worst-placed gold session stands among the hits' sessions \
         (6–10: the same hits in a better order would mend them; none: no hit reaches it)\n\n\
         | mode | misses | at 6–10 | beyond 10 | in no hit | more than 5 gold sessions |\n|---|---|---|---|---|---|\n",
    );
    for (mode, m) in &report.session_misses {
        s.push_str(&format!(
            "| {mode:?} | {} | {} | {} | {} | {} |\n",
            m.misses, m.within_10, m.beyond_10, m.not_found, m.more_than_5_gold
        ));
    }
    for skipped in &report.skipped_modes {
        s.push_str(&format!("\nskipped: {skipped}"));
    }
    s.push_str(&format!(
        "\n{} evidence ids were normalised or reported (listed in the JSON report).\n",
        report.evidence_issues.len()
    ));
    for e in &report.explained {
        s.push_str(&format!(
            "\n#### {} ({:?}): {}\ngold turns: {}\n\n| # | hit | kind | score | turns | text |\n|---|---|---|---|---|---|\n",
            e.id,
            e.mode,
            e.question,
            e.gold_turns.join(" ")
        ));
        for (i, h) in e.hits.iter().enumerate() {
            s.push_str(&format!(
                "| {} | {} | {} | {:.3} | {} | {} |\n",
                i + 1,
                h.id,
                h.kind,
                h.score,
                h.turns.join(" "),
                h.text.replace('|', "\\|")
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(id: &str, mode: Mode, gold: &[&str], ranks: &[Option<usize>]) -> QuestionResult {
        QuestionResult {
            id: id.into(),
            haystack: "h".into(),
            category: "1".into(),
            mode,
            form: QuestionForm::Other,
            gold_sessions: gold.iter().map(|s| s.to_string()).collect(),
            gold_turns: Vec::new(),
            ranked_sessions: Vec::new(),
            ranked_turns: Vec::new(),
            gold_session_ranks: ranks.to_vec(),
            gold_elsewhere: None,
            scores: Vec::new(),
        }
    }

    #[test]
    fn session_misses_are_split_by_where_the_worst_gold_session_stands() {
        let rows = [
            result("hit", Mode::Full, &["S1", "S2"], &[Some(1), Some(5)]),
            result("near", Mode::Full, &["S1", "S2"], &[Some(2), Some(7)]),
            result("far", Mode::Full, &["S1", "S2"], &[Some(12), Some(1)]),
            result("lost", Mode::Full, &["S1", "S2"], &[Some(1), None]),
            result("wide", Mode::Full, &["S1", "S2", "S3", "S4", "S5", "S6"], &[1, 2, 3, 4, 5, 6].map(Some)),
            result("other mode", Mode::FullBm25, &["S1"], &[None]),
        ];
        let m = SessionMisses::of(Mode::Full, &rows);
        assert_eq!(m, SessionMisses { misses: 4, within_10: 2, beyond_10: 1, not_found: 1, more_than_5_gold: 1 });
        assert_eq!(SessionMisses::of(Mode::FullBm25, &rows).not_found, 1);
        assert_eq!(SessionMisses::of(Mode::Dense, &rows), SessionMisses::default());
    }
}
