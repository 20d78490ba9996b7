//! `memcc bench prompt`: does the prompt MemCC assembles contain the answer? LLM-free.
//!
//! Per question, MemCC assembles the prompt a host would send, and [`crate::answer`] tests
//! whether it holds the gold answer. In the same run, plain baselines ([`crate::baseline`]) get
//! **the same number of characters** for the same question: the latest turns, BM25 over turns,
//! BM25 over sessions; plus BM25 sessions filling the whole memory size, and the whole
//! conversation (the ceiling of this measure). The question itself is never counted.
//!
//! Two scenarios, each swept over memory sizes (the tokens recalled memory may use,
//! `context.memoryMaxTokens`; the host budget is set so that the share `memoryBudgetFraction`
//! does not bind):
//! - **new session**: the conversation was replayed session by session (compacted, flushed);
//!   the question opens a new session, so everything comes through memory recall;
//! - **long session**: every session replayed into one conversation compacted under that
//!   budget, the question asked at its end: summaries + fresh tail + recall; and, beside it,
//!   the same prompt plus what one `lcm_expand_query` call with the question returns.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::answer::{Containment, contains, contains_point, contains_points, gold_tokens, point_tokens, text_tokens};
use crate::baseline::Corpus;
use crate::evidence::{Evidence, Precision};
use crate::haystack::HQuestion;
use crate::haystack::Haystack;
use crate::pipeline::{Provenance, open_with, replay, replay_as_one_session, session_id};
use crate::{BenchError, Options, RunInfo, load};
use memcc::lab::context::assemble::PromptSource;
use memcc::lab::context::message::AgentMessage;
use memcc::lab::context::{Assembled, ExpandRequest, SessionRef};
use memcc::lab::memory::embed::Embedder;
use memcc::{Memcc, MemccConfig};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    NewSession,
    LongSession,
    /// New session, as a Claude Code or Codex hook gets it: what `UserPromptSubmit` adds for the
    /// question (deep recall, within the memory size, under the relevance floor).
    Hook,
    /// The same without the relevance floor: what the floor costs.
    HookUnfloored,
}

impl Scenario {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "new-session" | "new" => Some(Scenario::NewSession),
            "long-session" | "long" => Some(Scenario::LongSession),
            "hook" => Some(Scenario::Hook),
            "hook-unfloored" => Some(Scenario::HookUnfloored),
            _ => None,
        }
    }

    /// Whether the scenario asks its questions of the sessions replayed one by one.
    fn after_sessions(self) -> bool {
        !matches!(self, Scenario::LongSession)
    }

    /// The settings of a hook scenario at memory size `memory`; `None` for the others.
    fn hook_settings(self, settings: &MemccConfig, memory: usize) -> Option<MemccConfig> {
        let mut s = with_memory_size(settings, memory);
        s.hooks.prompt_tokens = memory;
        match self {
            Scenario::Hook => Some(s),
            Scenario::HookUnfloored => {
                s.memory.tuning.relevant_meaning = 0.0;
                s.memory.tuning.relevant_words = 0.0;
                Some(s)
            }
            _ => None,
        }
    }
}

/// Prompts with nothing to recall — chit-chat, generic commands, questions about what no
/// conversation said — asked of every replayed store: a hook should add nothing to them.
pub const NOTHING_TO_RECALL: &[&str] = &[
    "thanks!",
    "ok",
    "great, go ahead",
    "sounds good to me",
    "hello there",
    "yes please",
    "no, that's fine",
    "perfect, thank you so much",
    "lol",
    "can you say that again?",
    "run the tests",
    "commit this with a good message",
    "fix the lint errors",
    "continue",
    "undo the last change",
    "make it shorter",
    "format the file",
    "explain this error",
    "open a pull request",
    "add a docstring here",
    "what is the capital of Australia?",
    "how do I reverse a linked list in C?",
    "which Kubernetes namespace runs the billing service?",
    "what is the wifi password on the third floor?",
    "what's the boiling point of tungsten?",
    "summarise the Treaty of Westphalia",
    "what version of OpenSSL does the build server use?",
    "convert 30 miles to kilometres",
    "who won the 1954 football world cup?",
    "write a haiku about databases",
];

/// What is measured: MemCC's prompt, or a baseline built for the same question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum System {
    Memcc,
    /// Long session: the prompt plus one `lcm_expand_query` with the question (memory size).
    MemccExpand,
    /// The latest turns, same characters as MemCC's prompt.
    Recency,
    /// BM25 over single turns, same characters.
    Bm25Turns,
    /// BM25 over whole sessions, same characters.
    Bm25Sessions,
    /// BM25 over whole sessions filling the memory size (tokens), whatever MemCC used.
    Bm25SessionsFill,
    /// The whole conversation.
    Ceiling,
}

impl System {
    pub fn label(self) -> &'static str {
        match self {
            System::Memcc => "MemCC",
            System::MemccExpand => "MemCC + lcm_expand_query",
            System::Recency => "recency, same chars",
            System::Bm25Turns => "BM25 turns, same chars",
            System::Bm25Sessions => "BM25 sessions, same chars",
            System::Bm25SessionsFill => "BM25 sessions, full memory size",
            System::Ceiling => "whole conversation (ceiling)",
        }
    }

    /// Baselines that get exactly MemCC's characters: the ones MemCC must beat.
    pub fn same_size(self) -> bool {
        matches!(self, System::Recency | System::Bm25Turns | System::Bm25Sessions)
    }
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Score {
    pub questions: usize,
    pub strict: f64,
    pub loose: f64,
    /// RealMem Dynamic Updating: of the questions whose gold has older versions, the share whose
    /// text holds an older version of a point and not the point itself (a superseded value
    /// shown as the current one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shown_superseded: Option<f64>,
}

/// What a hook recalled for `q`, attributed: each recalled line ends with its record's
/// "(mem_N)"; the characters since the previous line's end are that record's, and it is from
/// gold when a message it was made from is of one of the question's gold sessions. Tags and
/// anything after the last line count as no line's.
fn injected_evidence(
    memcc: &Memcc,
    text: &str,
    ids: &Provenance,
    gold: &HashSet<String>,
) -> Result<Evidence, BenchError> {
    let spans = recalled_lines(text);
    let records = memcc.memory()?.store().get_many(&spans.iter().map(|s| s.0).collect::<Vec<_>>())?;
    let from_gold: HashSet<i64> = records
        .iter()
        .filter(|r| r.source_message_ids.iter().any(|m| ids.get(m).is_some_and(|(session, _)| gold.contains(session))))
        .map(|r| r.id)
        .collect();
    let mut e = Evidence::default();
    for (id, chars) in spans {
        e.add(chars, from_gold.contains(&id));
    }
    // What is no line's (the section's tags) is injected too.
    e.chars += text.chars().count().saturating_sub(e.chars);
    Ok(e)
}

/// The records a recall text shows, each with its characters: every "(mem_N)" closes a line,
/// which holds the characters since the previous one closed.
fn recalled_lines(text: &str) -> Vec<(i64, usize)> {
    let mut lines = Vec::new();
    let (mut start, mut from) = (0, 0);
    while let Some(at) = text[from..].find("(mem_").map(|i| from + i) {
        let digits = text[at + 5..].bytes().take_while(u8::is_ascii_digit).count();
        let end = at + 5 + digits;
        if let (Ok(id), true) = (text[at + 5..end].parse::<i64>(), text[end..].starts_with(')')) {
            lines.push((id, text[start..=end].chars().count()));
            start = end + 1;
        }
        from = end;
    }
    lines
}

#[derive(Debug, Clone, Default)]
struct Tally {
    n: usize,
    strict: usize,
    loose: usize,
    chars: usize,
    tokens: usize,
    cl100k: usize,
    /// Questions with older versions of their gold, and those whose text showed one as current.
    superseded: usize,
    stale: usize,
    /// Hook scenarios (MemCC, BM25 turns): what of the injected text is from gold.
    evidence: Evidence,
}

impl Tally {
    fn add(&mut self, c: Containment, m: &Measured, stale: Option<bool>) {
        self.superseded += usize::from(stale.is_some());
        self.stale += usize::from(stale == Some(true));
        self.n += 1;
        self.strict += usize::from(c.strict);
        self.loose += usize::from(c.loose);
        self.chars += m.chars;
        self.tokens += m.tokens;
        self.cl100k += m.cl100k;
    }

    fn merge(&mut self, o: &Tally) {
        self.n += o.n;
        self.strict += o.strict;
        self.loose += o.loose;
        self.chars += o.chars;
        self.tokens += o.tokens;
        self.cl100k += o.cl100k;
        self.superseded += o.superseded;
        self.stale += o.stale;
        self.evidence.merge(&o.evidence);
    }

    fn score(&self) -> Score {
        let per = |x: usize| if self.n == 0 { 0.0 } else { x as f64 / self.n as f64 };
        Score {
            questions: self.n,
            strict: per(self.strict),
            loose: per(self.loose),
            shown_superseded: (self.superseded > 0).then(|| self.stale as f64 / self.superseded as f64),
        }
    }

    fn mean(&self, x: usize) -> f64 {
        if self.n == 0 { 0.0 } else { x as f64 / self.n as f64 }
    }
}

/// One line of the report: a system in a scenario at a memory size.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    pub scenario: Scenario,
    pub memory_tokens: usize,
    pub system: System,
    /// Categories 1–4 (questions with a gold answer).
    pub cats_1_4: Score,
    /// Categories 1–5; category 5 is scored on its adversarial answer (the fact about the other
    /// speaker that the question is built to confuse).
    pub cats_1_5: Score,
    pub by_category: Vec<(String, Score)>,
    pub mean_chars: f64,
    /// MemCC's token estimate.
    pub mean_tokens: f64,
    /// Exact cl100k_base tokens (MemCC's prompts only; baselines have the same characters).
    pub mean_cl100k: Option<f64>,
    /// Hook scenarios, MemCC and BM25 turns: the share of the injected characters and lines
    /// from the question's gold sessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<Precision>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptReport {
    #[serde(flatten)]
    pub run: RunInfo,
    pub haystacks: usize,
    pub questions: usize,
    pub memory_sizes: Vec<usize>,
    pub scenarios: Vec<Scenario>,
    pub rows: Vec<Row>,
    /// The same per conversation: pooled rows hide how far a result holds from one to the next.
    pub per_haystack: Vec<HaystackRow>,
    /// Long session: what replaying each whole history cost, per memory size.
    pub long_runs: Vec<LongRun>,
    /// RealMem: how the memory-point rule reads the data (see [`crate::realmem::Calibration`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub point_calibration: Option<crate::realmem::Calibration>,
    pub wall_seconds: f64,
    #[serde(skip)]
    pub per_question: Vec<QuestionLine>,
    /// Hook scenarios: what [`NOTHING_TO_RECALL`]'s prompts got, per memory size.
    pub nothing_to_recall: Vec<NothingRow>,
}

/// What the prompts with nothing to recall got from a hook scenario at one memory size, over
/// every replayed store.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NothingRow {
    pub scenario: Scenario,
    pub memory_tokens: usize,
    pub prompts: usize,
    pub median_tokens: usize,
    pub p90_tokens: usize,
    pub max_tokens: usize,
    /// The share of prompts that got anything at all.
    pub share_answered: f64,
}

impl NothingRow {
    fn of(scenario: Scenario, memory_tokens: usize, mut tokens: Vec<usize>) -> NothingRow {
        tokens.sort_unstable();
        let at = |p: f64| tokens.get(((tokens.len() as f64 * p) as usize).min(tokens.len().saturating_sub(1)));
        NothingRow {
            scenario,
            memory_tokens,
            prompts: tokens.len(),
            median_tokens: at(0.5).copied().unwrap_or(0),
            p90_tokens: at(0.9).copied().unwrap_or(0),
            max_tokens: tokens.last().copied().unwrap_or(0),
            share_answered: tokens.iter().filter(|t| **t > 0).count() as f64 / tokens.len().max(1) as f64,
        }
    }
}

/// One conversation (haystack) in a scenario at a memory size, categories 1–4, strict.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HaystackRow {
    pub scenario: Scenario,
    pub memory_tokens: usize,
    pub haystack: String,
    pub questions: usize,
    #[serde(flatten)]
    pub standing: Standing,
}

/// MemCC's strict 1–4 score beside the baselines it is measured against.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Standing {
    pub memcc: f64,
    /// The best of the baselines given MemCC's characters ([`System::same_size`]), and its score.
    pub best_same_size: (System, f64),
    pub bm25_sessions_fill: f64,
    pub ceiling: f64,
}

impl Standing {
    /// From each system's score; `None` without MemCC's or any same-size baseline's.
    fn of(scores: impl IntoIterator<Item = (System, f64)>) -> Option<Self> {
        let scores: BTreeMap<System, f64> = scores.into_iter().collect();
        let best_same_size =
            scores.iter().filter(|(s, _)| s.same_size()).map(|(&s, &x)| (s, x)).max_by(|a, b| a.1.total_cmp(&b.1))?;
        let score = |s: System| scores.get(&s).copied().unwrap_or(0.0);
        Some(Standing {
            memcc: *scores.get(&System::Memcc)?,
            best_same_size,
            bm25_sessions_fill: score(System::Bm25SessionsFill),
            ceiling: score(System::Ceiling),
        })
    }

    fn margin(&self) -> f64 {
        self.memcc - self.best_same_size.1
    }

    fn margin_over_fill(&self) -> f64 {
        self.memcc - self.bm25_sessions_fill
    }

    fn of_ceiling(&self) -> f64 {
        if self.ceiling > 0.0 { self.memcc / self.ceiling } else { 0.0 }
    }
}

/// Per question, scenario and size: what each system scored (for tracing a regression).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionLine {
    pub id: String,
    /// The conversation (haystack) the question is asked of.
    pub haystack: String,
    pub category: String,
    pub question: String,
    pub gold: String,
    pub scenario: Scenario,
    pub memory_tokens: usize,
    /// (system, strict, loose)
    pub results: Vec<(System, bool, bool)>,
    pub memcc_chars: usize,
    /// RealMem Dynamic Updating with older versions: the systems whose text showed an older
    /// version of a gold point without the point itself ([`Score::shown_superseded`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shown_superseded: Vec<System>,
    /// MemCC's prompt without the question (with `--prompts`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memcc_prompt: Option<String>,
}

#[derive(Debug, Clone, Default)]
struct Measured {
    chars: usize,
    tokens: usize,
    cl100k: usize,
}

fn measure(text: &str, exact: Option<&tiktoken_rs::CoreBPE>) -> Measured {
    Measured {
        chars: text.chars().count(),
        tokens: memcc::lab::core::estimate_tokens(text),
        cl100k: exact.map_or(0, |bpe| bpe.encode_ordinary(text).len()),
    }
}

/// What the host would send, minus the question: the system-prompt addition and the messages.
fn prompt_text(a: &Assembled) -> String {
    let mut parts: Vec<String> = a.system_prompt_addition.iter().cloned().collect();
    parts.extend(a.messages.iter().map(|m| AgentMessage::from_value(m.clone()).text()));
    parts.join("\n\n")
}

/// What a question is scored on: its answer (LoCoMo category 5: its adversarial answer), or
/// (RealMem) its memory points.
enum Gold {
    Answer(Vec<String>),
    Points(Vec<Vec<String>>),
}

impl Gold {
    fn of(q: &HQuestion) -> Option<(Gold, String)> {
        if !q.gold_points.is_empty() {
            let points = q.gold_points.iter().map(|p| point_tokens(p)).collect();
            return Some((Gold::Points(points), q.gold_points.join(" | ")));
        }
        let answer = q.answer.as_deref().or(q.adversarial_answer.as_deref())?;
        Some((Gold::Answer(gold_tokens(answer)), answer.to_string()))
    }

    fn in_text(&self, text: &str) -> Containment {
        let tokens = text_tokens(text);
        match self {
            Gold::Answer(gold) => contains(&tokens, gold),
            Gold::Points(points) => contains_points(&tokens, points),
        }
    }
}

/// A Dynamic Updating question's points by label, current and older ([`HQuestion::superseded_points`]).
struct Versions {
    current: Vec<(String, Vec<String>)>,
    older: Vec<(String, Vec<String>)>,
}

impl Versions {
    fn of(q: &HQuestion) -> Option<Versions> {
        if q.superseded_points.is_empty() {
            return None;
        }
        let labelled = |points: &[String]| -> Vec<(String, Vec<String>)> {
            points
                .iter()
                .filter_map(|p| Some((crate::realmem::point_label(p)?.to_string(), point_tokens(p))))
                .filter(|(_, t)| !t.is_empty())
                .collect()
        };
        let v = Versions { current: labelled(&q.gold_points), older: labelled(&q.superseded_points) };
        (!v.older.is_empty()).then_some(v)
    }

    /// Whether `text` holds an older version under some label and no current point of that label.
    fn shown_as_current(&self, text: &str) -> bool {
        let tokens = text_tokens(text);
        self.older.iter().any(|(label, old)| {
            contains_point(&tokens, old)
                && !self.current.iter().any(|(l, now)| l == label && contains_point(&tokens, now))
        })
    }
}

/// The host budget at which recalled memory gets `memory` tokens.
fn host_budget(settings: &MemccConfig, memory: usize) -> usize {
    let fraction = settings.context.memory_budget_fraction.max(0.01);
    (memory as f64 / fraction).ceil() as usize + 256
}

fn with_memory_size(settings: &MemccConfig, memory: usize) -> MemccConfig {
    let mut s = settings.clone();
    s.context.memory_max_tokens = memory;
    s
}

type Key = (Scenario, usize, System, String);
/// A row before aggregation: (scenario, memory size, system) → per-category tallies.
type Group<'a> = BTreeMap<(Scenario, usize, System), Vec<(&'a String, &'a Tally)>>;

struct Run<'a> {
    options: &'a Options,
    embedder: Arc<dyn Embedder>,
    bpe: Option<tiktoken_rs::CoreBPE>,
    tallies: BTreeMap<Key, Tally>,
    lines: Vec<QuestionLine>,
    keep_prompts: bool,
    /// The haystack being scored.
    haystack: String,
    long_runs: Vec<LongRun>,
    /// Hook scenarios: the tokens each prompt with nothing to recall got.
    nothing: BTreeMap<(Scenario, usize), Vec<usize>>,
}

impl Run<'_> {
    /// Score MemCC's prompt (and optional extra text) for `q`, and the baselines at its size;
    /// with `injected`, a hook's injection attributed to gold and not, beside BM25 turns'.
    #[allow(clippy::too_many_arguments)]
    fn score(
        &mut self,
        corpus: &Corpus,
        q: &HQuestion,
        scenario: Scenario,
        memory: usize,
        prompt: &str,
        expanded: Option<&str>,
        injected: Option<Evidence>,
    ) -> Result<(), BenchError> {
        let Some((gold, answer)) = Gold::of(q) else { return Ok(()) };
        let memcc = measure(prompt, self.bpe.as_ref());
        let chars = memcc.chars;
        let mut texts: Vec<(System, String)> = vec![
            (System::Recency, corpus.recency(chars)),
            (System::Bm25Turns, corpus.bm25_turns(&q.text, chars)?),
            (System::Bm25Sessions, corpus.bm25_sessions(&q.text, chars)?),
            (System::Bm25SessionsFill, corpus.bm25_sessions_tokens(&q.text, memory)?),
            (System::Ceiling, corpus.whole()),
        ];
        if let Some(extra) = expanded {
            texts.push((System::MemccExpand, format!("{prompt}\n\n{extra}")));
        }
        let versions = Versions::of(q);
        let stale = |text: &str| versions.as_ref().map(|v| v.shown_as_current(text));
        let mut results = Vec::with_capacity(texts.len() + 1);
        let mut shown_superseded = Vec::new();
        let found = gold.in_text(prompt);
        results.push((System::Memcc, found.strict, found.loose));
        let memcc_stale = stale(prompt);
        if memcc_stale == Some(true) {
            shown_superseded.push(System::Memcc);
        }
        self.tally(scenario, memory, System::Memcc, &q.category, found, &memcc, memcc_stale);
        // A hook's injection, beside what BM25 over turns puts in the same characters.
        if let Some(e) = injected {
            let baseline = corpus.bm25_turns_evidence(&q.text, chars, &q.gold_sessions)?;
            for (system, e) in [(System::Memcc, e), (System::Bm25Turns, baseline)] {
                self.tallies.entry((scenario, memory, system, q.category.clone())).or_default().evidence.merge(&e);
            }
        }
        for (system, text) in &texts {
            let found = gold.in_text(text);
            let m = measure(text, None);
            results.push((*system, found.strict, found.loose));
            let shown = stale(text);
            if shown == Some(true) {
                shown_superseded.push(*system);
            }
            self.tally(scenario, memory, *system, &q.category, found, &m, shown);
        }
        self.lines.push(QuestionLine {
            id: q.id.clone(),
            haystack: self.haystack.clone(),
            category: q.category.clone(),
            question: q.text.clone(),
            gold: answer,
            scenario,
            memory_tokens: memory,
            results,
            memcc_chars: chars,
            shown_superseded,
            memcc_prompt: self.keep_prompts.then(|| prompt.to_string()),
        });
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn tally(
        &mut self,
        scenario: Scenario,
        memory: usize,
        system: System,
        cat: &str,
        c: Containment,
        m: &Measured,
        stale: Option<bool>,
    ) {
        self.tallies.entry((scenario, memory, system, cat.to_string())).or_default().add(c, m, stale);
    }

    /// Every session replayed as a host session of its own (compacted, flushed); each question
    /// is asked as a new session's first message — or, when the dataset asks it partway through
    /// a session (RealMem), as that session's pending message — with one MemCC per memory size
    /// reading the same store as the replay writes it.
    fn new_session(&mut self, h: &Haystack, sizes: &[usize], scenarios: &[Scenario]) -> Result<(), BenchError> {
        let (settings, replay_budget) = (&self.options.settings, self.options.budget);
        let dir = tempfile::tempdir()?;
        let memcc = open_with(settings, dir.path(), &self.embedder)?;
        crate::pipeline::held_out(self.options, &memcc, h)?;
        let sized: Vec<(usize, Memcc)> = if scenarios.contains(&Scenario::NewSession) {
            sizes
                .iter()
                .map(|&m| {
                    let memcc = open_with(&with_memory_size(settings, m), dir.path(), &self.embedder)?;
                    crate::pipeline::held_out(self.options, &memcc, h)?;
                    Ok((m, memcc))
                })
                .collect::<Result<_, BenchError>>()?
        } else {
            Vec::new()
        };
        let mut hooked: Vec<(Scenario, usize, Memcc)> = Vec::new();
        for &scenario in scenarios {
            for &m in sizes {
                if let Some(s) = scenario.hook_settings(settings, m) {
                    let memcc = open_with(&s, dir.path(), &self.embedder)?;
                    crate::pipeline::held_out(self.options, &memcc, h)?;
                    hooked.push((scenario, m, memcc));
                }
            }
        }
        let agent = settings.context.agent_id.clone();
        let question_session = SessionRef {
            session_id: format!("{}/question", h.id),
            agent_id: Some(settings.context.agent_id.clone()),
            ..Default::default()
        };
        let mut corpora = Corpora::new(h);
        let mut ask = |_: &Memcc, q: &HQuestion, ids: &Provenance| -> Result<(), BenchError> {
            let corpus = corpora.for_question(q)?;
            let own = own_session(h, q);
            let session = match q.asked_at {
                Some(at) => SessionRef {
                    project: h.sessions.get(at.session).and_then(|s| s.project.clone()),
                    ..SessionRef::new(&session_id(h, at.session))
                },
                None => question_session.clone(),
            };
            for (memory, memcc) in &sized {
                let pending = [AgentMessage::user(&q.text)];
                let assembled =
                    memcc.context.assemble_for(&session, host_budget(settings, *memory), q.as_of, &pending)?;
                self.score(corpus, q, Scenario::NewSession, *memory, &scored_text(&assembled, ids, own), None, None)?;
            }
            // A hook's host holds its own session; what the hook adds is the prompt's memory,
            // with the session's turns before the prompt as context (the hook reads them from
            // the host's transcript).
            for (scenario, memory, memcc) in &hooked {
                let context = match q.asked_at {
                    Some(_) => memcc.context.recall_query(&session, q.as_of, &[AgentMessage::user(&q.text)])?.context,
                    None => Vec::new(),
                };
                let added = memcc
                    .prompt_recall(&agent, session.project.as_deref(), &session.session_id, &q.text, context)?
                    .unwrap_or_default();
                let injected = injected_evidence(memcc, &added, ids, &q.gold_sessions)?;
                self.score(corpus, q, *scenario, *memory, &added, None, Some(injected))?;
            }
            Ok(())
        };
        replay(&memcc, h, replay_budget, &mut Provenance::new(), &mut ask)?;
        for (scenario, memory, memcc) in &hooked {
            let got = self.nothing.entry((*scenario, *memory)).or_default();
            for prompt in NOTHING_TO_RECALL {
                let added = memcc.prompt_recall(&agent, None, &question_session.session_id, prompt, Vec::new())?;
                got.push(added.as_deref().map_or(0, memcc::lab::core::estimate_tokens));
            }
        }
        Ok(())
    }

    /// Every session replayed into one conversation compacted under the host budget of each
    /// memory size; each question asked where the dataset asks it, with the prompt the host
    /// would send and, beside it, what one `lcm_expand_query` with the question adds.
    fn long_session(&mut self, h: &Haystack, sizes: &[usize]) -> Result<(), BenchError> {
        let settings = &self.options.settings;
        for &memory in sizes {
            let dir = tempfile::tempdir()?;
            let memcc: Memcc = open_with(&with_memory_size(settings, memory), dir.path(), &self.embedder)?;
            crate::pipeline::held_out(self.options, &memcc, h)?;
            let budget = host_budget(settings, memory);
            let session = format!("{}/long", h.id);
            let mut corpora = Corpora::new(h);
            let mut ask = |memcc: &Memcc, q: &HQuestion, ids: &Provenance| -> Result<(), BenchError> {
                let corpus = corpora.for_question(q)?;
                let pending = [AgentMessage::user(&q.text)];
                let assembled = memcc.context.assemble_for(&SessionRef::new(&session), budget, q.as_of, &pending)?;
                let expansion = memcc.context.expand(&ExpandRequest {
                    ids: Vec::new(),
                    query: Some(q.text.clone()),
                    session_id: Some(session.clone()),
                    max_tokens: Some(memory),
                    deep: true,
                    ..Default::default()
                })?;
                let expanded: Vec<&str> = expansion.items.iter().map(|i| i.text.as_str()).collect();
                let prompt = scored_text(&assembled, ids, own_session(h, q));
                self.score(corpus, q, Scenario::LongSession, memory, &prompt, Some(&expanded.join("\n")), None)
            };
            let appended = replay_as_one_session(&memcc, h, &session, budget, &mut Provenance::new(), &mut ask)?;
            self.long_runs.push(LongRun::measure(&memcc, h, &session, memory, budget, &appended, dir.path())?);
        }
        Ok(())
    }
}

/// The baselines' corpus for each question: the sessions before it (rebuilt only when the
/// questions move on to a later session).
struct Corpora<'h> {
    h: &'h Haystack,
    before: usize,
    corpus: Option<Corpus>,
}

impl<'h> Corpora<'h> {
    fn new(h: &'h Haystack) -> Self {
        Corpora { h, before: 0, corpus: None }
    }

    fn for_question(&mut self, q: &HQuestion) -> Result<&Corpus, BenchError> {
        let before = q.session_asked(self.h.sessions.len());
        if self.corpus.is_none() || self.before != before {
            self.corpus = Some(Corpus::before(self.h, before)?);
            self.before = before;
        }
        self.corpus.as_ref().ok_or_else(|| BenchError::Input("no corpus".into()))
    }
}

/// The session a question is asked in, when the dataset asks it partway through one.
fn own_session<'a>(h: &'a Haystack, q: &HQuestion) -> Option<&'a str> {
    q.asked_at.and_then(|a| h.sessions.get(a.session)).map(|s| s.unit.as_str())
}

/// What of an assembled prompt is scored: all of it (see [`prompt_text`]) but the raw messages
/// of the question's own session, which the host has in any case; the question asks about
/// earlier ones, and baselines get only those.
fn scored_text(a: &Assembled, ids: &Provenance, own: Option<&str>) -> String {
    let Some(own) = own.filter(|_| a.parts.len() == a.messages.len()) else { return prompt_text(a) };
    let mut parts: Vec<String> = a.system_prompt_addition.iter().cloned().collect();
    for (m, part) in a.messages.iter().zip(&a.parts) {
        let own_message = match part.source {
            PromptSource::Message { id } | PromptSource::TruncatedLatest { id } => {
                ids.get(&id).is_some_and(|(session, _)| session == own)
            }
            _ => false,
        };
        if !own_message {
            parts.push(AgentMessage::from_value(m.clone()).text());
        }
    }
    parts.join("\n\n")
}

/// The long-session scenario's cost over a whole history at one memory size.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LongRun {
    pub haystack: String,
    pub memory_tokens: usize,
    pub host_budget: usize,
    pub messages: i64,
    pub message_tokens: i64,
    pub leaf_summaries: i64,
    pub condensed_summaries: i64,
    pub dag_depth: i64,
    /// `memcc verify` of the conversation: every message reached once, in order, integrity ok.
    pub verify_ok: bool,
    /// context.db and memory.db (with their WAL files), in MiB.
    pub store_mib: f64,
    /// Time to append one turn: ingest, compaction when due, and the hand-off to memory.
    pub append_p50_ms: f64,
    pub append_p99_ms: f64,
    pub append_max_ms: f64,
}

impl LongRun {
    fn measure(
        memcc: &Memcc,
        h: &Haystack,
        session: &str,
        memory_tokens: usize,
        host_budget: usize,
        appended: &[f64],
        dir: &Path,
    ) -> Result<Self, BenchError> {
        let stats = memcc.context.stats(Some(SessionRef::new(session)))?;
        let verify = memcc.context.verify(session)?;
        let store_bytes: u64 = std::fs::read_dir(dir)?
            .filter_map(|e| e.ok()?.metadata().ok())
            .filter(|m| m.is_file())
            .map(|m| m.len())
            .sum();
        let mut ms: Vec<f64> = appended.iter().map(|s| s * 1000.0).collect();
        ms.sort_by(f64::total_cmp);
        let at =
            |p: f64| ms.get(((ms.len() as f64 * p) as usize).min(ms.len().saturating_sub(1))).copied().unwrap_or(0.0);
        Ok(LongRun {
            haystack: h.id.clone(),
            memory_tokens,
            host_budget,
            messages: stats.messages,
            message_tokens: stats.message_tokens,
            leaf_summaries: stats.leaf_summaries,
            condensed_summaries: stats.condensed_summaries,
            dag_depth: stats.max_depth,
            verify_ok: verify.ok(),
            store_mib: store_bytes as f64 / 1_048_576.0,
            append_p50_ms: at(0.5),
            append_p99_ms: at(0.99),
            append_max_ms: ms.last().copied().unwrap_or(0.0),
        })
    }
}

/// Run the answer-in-prompt benchmark. `progress(done, total, label)`.
pub fn run(
    path: &Path,
    options: &Options,
    sizes: &[usize],
    scenarios: &[Scenario],
    keep_prompts: bool,
    progress: &mut dyn FnMut(usize, usize, &str),
) -> Result<PromptReport, BenchError> {
    let started = Instant::now();
    let haystacks = load(options, path, &mut Vec::new())?;
    let embedder = Memcc::embedder(&options.settings, &mut Vec::new())?;
    let mut run = Run {
        options,
        embedder: embedder.clone(),
        bpe: tiktoken_rs::cl100k_base().ok(),
        tallies: BTreeMap::new(),
        lines: Vec::new(),
        keep_prompts,
        haystack: String::new(),
        long_runs: Vec::new(),
        nothing: BTreeMap::new(),
    };
    // The scenarios asked after the sessions share one replay.
    let after: Vec<Scenario> = scenarios.iter().copied().filter(|s| s.after_sessions()).collect();
    let long = scenarios.contains(&Scenario::LongSession);
    let per = usize::from(!after.is_empty()) + usize::from(long);
    let steps = haystacks.len() * per;
    for (hi, h) in haystacks.iter().enumerate() {
        run.haystack = h.id.clone();
        if !after.is_empty() {
            progress(hi * per, steps, &format!("{after:?} {}", h.id));
            run.new_session(h, sizes, &after)?;
        }
        if long {
            progress(hi * per + per - 1, steps, &format!("LongSession {}", h.id));
            run.long_session(h, sizes)?;
        }
    }
    progress(steps, steps, "done");
    let rows = rows(&run.tallies, run.bpe.is_some());
    Ok(PromptReport {
        run: RunInfo::new(path, options, embedder.model_id()),
        haystacks: haystacks.len(),
        questions: haystacks.iter().map(|h| h.questions.len()).sum(),
        memory_sizes: sizes.to_vec(),
        scenarios: scenarios.to_vec(),
        rows,
        per_haystack: per_haystack(&run.lines),
        long_runs: run.long_runs,
        point_calibration: (options.dataset == crate::Dataset::Realmem)
            .then(|| crate::realmem::load(path).map(|p| crate::realmem::calibration(&p)))
            .transpose()?,
        wall_seconds: started.elapsed().as_secs_f64(),
        per_question: run.lines,
        nothing_to_recall: run.nothing.into_iter().map(|((s, m), t)| NothingRow::of(s, m, t)).collect(),
    })
}

fn rows(tallies: &BTreeMap<Key, Tally>, exact: bool) -> Vec<Row> {
    let mut groups: Group<'_> = BTreeMap::new();
    for ((scenario, memory, system, cat), t) in tallies {
        groups.entry((*scenario, *memory, *system)).or_default().push((cat, t));
    }
    groups
        .into_iter()
        .map(|((scenario, memory_tokens, system), cats)| {
            let mut all = Tally::default();
            let mut main = Tally::default();
            for (c, t) in &cats {
                all.merge(t);
                if c.as_str() != "5" {
                    main.merge(t);
                }
            }
            Row {
                scenario,
                memory_tokens,
                system,
                cats_1_4: main.score(),
                cats_1_5: all.score(),
                by_category: cats.iter().map(|(c, t)| ((*c).clone(), t.score())).collect(),
                mean_chars: all.mean(all.chars),
                precision: main.evidence.precision(),
                mean_tokens: all.mean(all.tokens),
                mean_cl100k: (exact && system == System::Memcc).then(|| all.mean(all.cl100k)),
            }
        })
        .collect()
}

/// Categories 1–4 of each haystack, from the per-question lines.
fn per_haystack(lines: &[QuestionLine]) -> Vec<HaystackRow> {
    type Counts = (usize, BTreeMap<System, usize>);
    let mut counts: BTreeMap<(Scenario, usize, &str), Counts> = BTreeMap::new();
    for l in lines.iter().filter(|l| l.category != "5") {
        let (n, strict) = counts.entry((l.scenario, l.memory_tokens, l.haystack.as_str())).or_default();
        *n += 1;
        for &(system, found, _) in &l.results {
            *strict.entry(system).or_default() += usize::from(found);
        }
    }
    counts
        .into_iter()
        .filter_map(|((scenario, memory_tokens, haystack), (n, strict))| {
            let standing = Standing::of(strict.into_iter().map(|(s, k)| (s, k as f64 / n as f64)))?;
            Some(HaystackRow { scenario, memory_tokens, haystack: haystack.to_string(), questions: n, standing })
        })
        .collect()
}

/// The report as Markdown: one table per scenario, a block per memory size.
pub fn markdown(report: &PromptReport) -> String {
    let mut s = format!(
        "Answer in prompt (LLM-free) — {} conversations, {} questions, embedder {}, memory sizes {:?}\n\
         dataset sha256 {}; {} cores, {}; wall {:.0} s\n\
         strict: every normalised gold token is in the prompt (the question itself excluded); loose: half of them. \
         Same-chars baselines get exactly MemCC's characters per question.\n",
        report.haystacks,
        report.questions,
        report.run.embedder,
        report.memory_sizes,
        report.run.dataset_sha256,
        report.run.machine.cores,
        report.run.machine.cpu,
        report.wall_seconds
    );
    if report.run.settings.projects {
        s.push_str(crate::PROJECTS_TOLD);
    }
    let categories: Vec<String> = {
        let mut c: Vec<String> =
            report.rows.iter().flat_map(|r| r.by_category.iter().map(|(c, _)| c.clone())).collect();
        c.sort();
        c.dedup();
        c
    };
    for scenario in &report.scenarios {
        s.push_str(&format!("\n### {scenario:?}\n\n| memory | system | strict 1–4 | loose 1–4 | strict 1–5 |"));
        for c in &categories {
            s.push_str(&format!(" cat {c} |"));
        }
        s.push_str(" chars | tokens | cl100k |\n|---|---|---|---|---|");
        s.push_str(&"---|".repeat(categories.len() + 3));
        s.push('\n');
        for r in report.rows.iter().filter(|r| r.scenario == *scenario) {
            s.push_str(&format!(
                "| {} | {} | {:.3} | {:.3} | {:.3} |",
                r.memory_tokens,
                r.system.label(),
                r.cats_1_4.strict,
                r.cats_1_4.loose,
                r.cats_1_5.strict
            ));
            for c in &categories {
                match r.by_category.iter().find(|(x, _)| x == c) {
                    Some((_, sc)) => s.push_str(&format!(" {:.3} |", sc.strict)),
                    None => s.push_str(" – |"),
                }
            }
            s.push_str(&format!(
                " {:.0} | {:.0} | {} |\n",
                r.mean_chars,
                r.mean_tokens,
                r.mean_cl100k.map_or_else(|| "–".into(), |x| format!("{x:.0}"))
            ));
        }
        s.push_str(&margins(report, *scenario));
        s.push_str(&superseded_shown(report, *scenario));
        if *scenario == Scenario::LongSession && !report.long_runs.is_empty() {
            s.push_str(&long_runs(&report.long_runs));
        }
    }
    if !report.nothing_to_recall.is_empty() {
        s.push_str(&format!(
            "\nPrompts with nothing to recall ({} of them: chit-chat, generic commands, questions about what was \
             never said), asked of every replayed store — tokens a hook added:\n\n| scenario | memory | median | p90 | \
             max | share that got anything |\n|---|---|---|---|---|---|\n",
            NOTHING_TO_RECALL.len()
        ));
        for r in &report.nothing_to_recall {
            s.push_str(&format!(
                "| {:?} | {} | {} | {} | {} | {:.2} |\n",
                r.scenario, r.memory_tokens, r.median_tokens, r.p90_tokens, r.max_tokens, r.share_answered
            ));
        }
    }
    let precise: Vec<&Row> = report.rows.iter().filter(|r| r.precision.is_some()).collect();
    if !precise.is_empty() {
        s.push_str(
            "\nPrecision of what a hook injected (questions with a gold answer): the share of its characters, and \
             of its lines (a recalled record; a baseline's turn), from the question's gold sessions, pooled over the \
             questions — MemCC beside BM25 over turns given the same characters:\n\n| scenario | memory | system | \
             characters from gold | lines from gold |\n|---|---|---|---|---|\n",
        );
        for r in precise {
            let p = r.precision.unwrap_or(Precision { chars: 0.0, lines: 0.0 });
            s.push_str(&format!(
                "| {:?} | {} | {} | {:.3} | {:.3} |\n",
                r.scenario,
                r.memory_tokens,
                r.system.label(),
                p.chars,
                p.lines
            ));
        }
    }
    if let Some(c) = &report.point_calibration {
        s.push_str(&format!(
            "\nMemory points (RealMem): a point is in a text when {:.0} % of its normalised words are (label and \
             \"user\" aside); strict = every gold point of the question, loose = half. Calibration over {} points: \
             found in their own source turn {:.3}, in another turn of that session {:.3}, in the whole session {:.3}.\n",
            crate::answer::POINT_SHARE * 100.0,
            c.points,
            c.in_source_turn,
            c.in_other_turn,
            c.in_whole_session
        ));
    }
    s
}

/// RealMem Dynamic Updating: how often each system's text showed an older version of a point
/// and not the point itself, per memory size.
fn superseded_shown(report: &PromptReport, scenario: Scenario) -> String {
    let mut s = String::new();
    for memory in &report.memory_sizes {
        let rates: Vec<String> = report
            .rows
            .iter()
            .filter(|r| r.scenario == scenario && r.memory_tokens == *memory)
            .filter_map(|r| {
                let (_, score) = r.by_category.iter().find(|(c, _)| c == crate::realmem::DYNAMIC_UPDATING)?;
                Some(format!("{} {:.3}", r.system.label(), score.shown_superseded?))
            })
            .collect();
        if !rates.is_empty() {
            if s.is_empty() {
                s.push_str(
                    "\nDynamic Updating, a superseded version shown as current (an older version of a gold point in \
                     the text, the point itself not):\n",
                );
            }
            s.push_str(&format!("- {memory}: {}\n", rates.join(", ")));
        }
    }
    s
}

/// The long session's cost per history and memory size.
fn long_runs(runs: &[LongRun]) -> String {
    let mut s = String::from(
        "\nWhole histories appended turn by turn (ingest, compaction when due, hand-off to memory):\n\n\
         | memory | history | host budget | messages | tokens | leaf / condensed | DAG depth | verify | store MiB | \
         append p50 ms | p99 ms | max ms |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in runs {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} / {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.0} |\n",
            r.memory_tokens,
            r.haystack,
            r.host_budget,
            r.messages,
            r.message_tokens,
            r.leaf_summaries,
            r.condensed_summaries,
            r.dag_depth,
            if r.verify_ok { "ok" } else { "FAILED" },
            r.store_mib,
            r.append_p50_ms,
            r.append_p99_ms,
            r.append_max_ms
        ));
    }
    s
}

/// MemCC beside the best same-size baseline, BM25 sessions filling the size and the ceiling, per
/// memory size; then the same per conversation.
fn margins(report: &PromptReport, scenario: Scenario) -> String {
    let mut s = String::from(
        "\n| memory | MemCC strict 1–4 | best same-size baseline | margin | margin over BM25 sessions, full | MemCC / ceiling |\n|---|---|---|---|---|---|\n",
    );
    for &m in &report.memory_sizes {
        let here = report.rows.iter().filter(|r| r.scenario == scenario && r.memory_tokens == m);
        if let Some(st) = Standing::of(here.map(|r| (r.system, r.cats_1_4.strict))) {
            s.push_str(&format!(
                "| {m} | {:.3} | {:.3} ({}) | {:+.3} | {:+.3} | {:.2} |\n",
                st.memcc,
                st.best_same_size.1,
                st.best_same_size.0.label(),
                st.margin(),
                st.margin_over_fill(),
                st.of_ceiling()
            ));
        }
    }
    let rows: Vec<&HaystackRow> = report.per_haystack.iter().filter(|r| r.scenario == scenario).collect();
    if report.haystacks > 1 && !rows.is_empty() {
        s.push_str(
            "\nPer conversation (strict 1–4):\n\n| memory | conversation | questions | MemCC | margin over best same-size | \
             margin over BM25 sessions, full | MemCC / ceiling |\n|---|---|---|---|---|---|---|\n",
        );
        for r in rows {
            let st = &r.standing;
            s.push_str(&format!(
                "| {} | {} | {} | {:.3} | {:+.3} ({}) | {:+.3} | {:.2} |\n",
                r.memory_tokens,
                r.haystack,
                r.questions,
                st.memcc,
                st.margin(),
                st.best_same_size.0.label(),
                st.margin_over_fill(),
                st.of_ceiling()
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recall_text_is_cut_into_the_records_its_lines_show() {
        let text = "<memcc-recall>\n- [Date: 2026-01-02] The port is 8080 (mem_12)\n- a window\nof two lines (mem_7) (since changed: x (mem_9))\n</memcc-recall>";
        let lines = recalled_lines(text);
        let ids: Vec<i64> = lines.iter().map(|l| l.0).collect();
        assert_eq!(ids, [12, 7, 9]);
        assert_eq!(lines[0].1, "<memcc-recall>\n- [Date: 2026-01-02] The port is 8080 (mem_12)".chars().count());
        assert_eq!(lines[1].1, "\n- a window\nof two lines (mem_7)".chars().count());
        assert!(recalled_lines("no refs (mem_) (mem_x1) here").is_empty());
    }

    #[test]
    fn an_older_version_is_shown_as_current_only_where_the_current_point_is_missing() {
        let point = |p: &str| (crate::realmem::point_label(p).unwrap().to_string(), point_tokens(p));
        let v = Versions {
            current: vec![point("【Plan】 Take the night train to Vienna on Friday")],
            older: vec![point("【Plan】 Fly to Osaka on May 1"), point("【Budget】 Spend 3,000 dollars in total")],
        };
        assert!(v.shown_as_current("The user will fly to Osaka on May 1."));
        assert!(!v.shown_as_current("First Osaka on May 1, now the night train to Vienna on Friday."));
        assert!(!v.shown_as_current("Nothing about the trip."));
        // The budget has no current point among the gold: an older budget shows as current.
        assert!(v.shown_as_current("Spend 3,000 dollars in total; the night train to Vienna on Friday."));
    }
}
