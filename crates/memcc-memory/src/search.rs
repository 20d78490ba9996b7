//! L3 deep search, behind `memory_search` and the recall layer: vector and BM25 candidates →
//! hybrid score with a recency boost for near-ties → knowledge-graph merge → optional LLM
//! rerank. It reads the store, the vector index and the embedder it is given; it knows nothing
//! of the runtime that owns them.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

use crate::config::MemoryConfig;
use crate::embed::Embedder;
use crate::error::Result;
use crate::lang::Predicate;
use crate::lang::period::{Period, asks_about_now, asks_when, named_periods, states_a_date};
use crate::lang::question::{Question, without_exclusions};
use crate::rank::model::Models;
use crate::rank::{Evidence, RankInput, RankedSession, Ranking};
use crate::record::{MemoryRecord, RecordKind, Triple};
use crate::store::{FullText, SearchStore, Statements};
use crate::vector::VectorStore;
use memcc_core::bridge::ContextTurn;
use memcc_core::llm::{ChatModel, ChatRequest};
use memcc_core::text::{Term, terms};

/// The newest characters of the conversation's turns before a question that full-text search
/// matches (the question's context): about 100 words, the turn being answered and the end of
/// the one before it, as the assembler keeps of a recall query.
pub(crate) const CONTEXT_CHARS: usize = 600;

/// Which retrievers L3 uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// Vector + BM25 candidates, fused, time-aware (period, when, now), KG merge, optional LLM rerank.
    Hybrid,
    /// BM25 only.
    Lexical,
    /// Vector similarity only.
    Dense,
}

/// A scored L3 result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// `mem_<n>`, or `kg_<subject>` for a knowledge-graph result.
    pub id: String,
    pub score: f64,
    pub kind: RecordKind,
    pub wing: String,
    pub room: String,
    pub text: String,
    pub event_time: Option<i64>,
    /// Superseded or expired: kept for history, ranked lower.
    pub current: bool,
    /// The record that replaced this one (`mem_N`), when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    /// What the record states that has changed since ("user — lives in — Boston, now Lisbon"),
    /// or a choice it names that was replaced since ("Jest — replaced by — Vitest (mem_9)"): the
    /// record stays current for the rest it says, and ranks lower when the question asks about
    /// what changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outdated: Vec<String>,
    /// `text` is a cut of the record (`memory_search` caps each hit; `memory_get` has it whole).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// The conversation messages the hit rests on, those holding more of the query's words
    /// first (see [`evidence`]); empty for knowledge-graph results.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<i64>,
    #[serde(skip)]
    pub record: Option<MemoryRecord>,
    /// The parts of `score` (for inspection: the inspector's "why is this in my prompt").
    #[serde(skip)]
    pub parts: ScoreParts,
}

/// What a hit's score is made of, kept as numbers: every candidate of every search carries
/// them, and only the lines recall shows are put in words ([`ScoreParts::describe`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ScoreParts {
    pub words: f64,
    pub meaning: f64,
    pub context: f64,
    pub when: f64,
    pub recency: f64,
    /// Learnt in the project the question is asked in.
    pub project: f64,
    /// The factor a superseded or expired record's sum was multiplied by.
    pub not_current: Option<f64>,
    /// The factor a record was multiplied by because the question asks about what it states
    /// that has since changed.
    pub changed: Option<f64>,
    /// A knowledge-graph line: its score as a share of the best hit's.
    pub knowledge_graph: Option<f64>,
    /// Raised to the score of a hit it replaced, which the question asks about: what holds now
    /// ranks above what it replaced.
    pub replaces: Option<f64>,
    /// The record's meaning match as it is (its cosine with the query), and its full-text match
    /// as the index scored it (BM25), before either is weighed: what the relevance floor reads.
    pub similarity: f64,
    pub bm25: f64,
    /// The probability the session ranker gave the record's session ([`crate::rank`]), when
    /// the score mixes it in.
    pub session: Option<f64>,
    /// The record's own hybrid score, before its session's was mixed in (0 for a record only its
    /// session brought in): what recall's value floor judges a line by.
    pub own: f64,
}

impl ScoreParts {
    /// The parts in words ("words 0.41", "meaning 0.22", "not current ×0.60"), those that count.
    pub fn describe(&self) -> Vec<String> {
        let mut out: Vec<String> = [
            ("words", self.words),
            ("meaning", self.meaning),
            ("the conversation's subject", self.context),
            ("when it was said", self.when),
            ("recent", self.recency),
            ("this project", self.project),
        ]
        .into_iter()
        // What two decimals would show as 0.00 is not shown.
        .filter(|(_, v)| *v >= 0.005)
        .map(|(part, v)| format!("{part} {v:.2}"))
        .collect();
        if let Some(p) = self.session {
            out.push(format!("its session {p:.2}"));
        }
        if let Some(f) = self.not_current {
            out.push(format!("not current ×{f:.2}"));
        }
        if let Some(f) = self.changed {
            out.push(format!("asks about what changed since ×{f:.2}"));
        }
        if self.replaces.is_some() {
            out.push("replaces what the question asks about".into());
        }
        if let Some(f) = self.knowledge_graph {
            out.push(format!("facts about whom the question names, at ×{f:.2} of the best hit"));
        }
        out
    }
}

impl SearchHit {
    /// A record found, scored `score` (of `parts`); its evidence ordered by `needles` (and by
    /// the dates it states, for a `when` question).
    fn of_record(r: MemoryRecord, score: f64, parts: ScoreParts, needles: &[String], when: bool) -> Self {
        SearchHit {
            id: r.ref_id(),
            score,
            kind: r.kind,
            wing: r.wing.clone(),
            room: r.room.clone(),
            text: r.text.clone(),
            event_time: r.event_time,
            current: r.is_current(),
            superseded_by: r.superseded_by.map(|n| format!("mem_{n}")),
            truncated: false,
            outdated: Vec::new(),
            evidence: evidence(&r, needles, when),
            record: Some(r),
            parts,
        }
    }

    /// Mark the hit with `line`, something it says that has changed since. When the question
    /// asks about it (`asked`) and nothing marked the hit before, it ranks as a superseded record
    /// does (`not_current`), and its score from before is returned: what replaced it is lifted
    /// to that.
    fn mark_changed(&mut self, line: String, asked: bool, not_current: f64) -> Option<f64> {
        if self.outdated.contains(&line) {
            return None;
        }
        let ranked_down = (self.current && asked && self.outdated.is_empty()).then(|| {
            let before = self.score;
            self.score *= not_current;
            self.parts.changed = Some(not_current);
            before
        });
        self.outdated.push(line);
        ranked_down
    }

    /// Whether the hit says something about the query at all, as an absolute judgement (a
    /// search ranks whatever it finds, relevant or not): its meaning is close to the query's, or
    /// it shares enough of the query's rarer words, as `floor` sets them for the store. A
    /// knowledge-graph line is made only of facts about whom the query names, and counts as
    /// relevant.
    pub fn relevant(&self, floor: &RelevanceFloor) -> bool {
        self.record.is_none() || self.parts.similarity >= floor.meaning || self.parts.bm25 >= floor.words
    }

    /// What a reader should know of the hit's standing, as a suffix: " (superseded by mem_N)",
    /// or " (since changed: …)" with what it states that has changed and where the change was
    /// said; empty when it is current.
    pub fn standing_note(&self) -> String {
        if !self.current {
            match self.record.as_ref().and_then(|r| r.superseded_by) {
                Some(by) => format!(" (superseded by mem_{by})"),
                None => " (no longer holds)".to_string(),
            }
        } else if !self.outdated.is_empty() {
            format!(" (since changed: {})", self.outdated.join("; "))
        } else {
            String::new()
        }
    }
}

/// The least a hit must match to count as saying something about a query
/// ([`SearchHit::relevant`]), for a store of a given size: the same judgement at ten records and
/// at a hundred thousand. A search's best match of a prompt with nothing to recall gets closer
/// as the store grows (more records, more near misses): the meaning half rises by
/// `relevantMeaningRise` per e-fold above `relevantSize` records (never below
/// `relevantMeaning`). A word's BM25 weight grows with the store too (its idf): the words half
/// is `relevantWords` in proportion to the weight of a word said once, so a few exact words
/// reach it in a small store as they do in a large one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RelevanceFloor {
    pub meaning: f64,
    pub words: f64,
}

impl RelevanceFloor {
    /// The floor of a store of `records` records.
    pub fn at(tuning: &crate::tuning::Tuning, records: usize) -> RelevanceFloor {
        let (n, reference) = (records.max(2) as f64, tuning.relevant_size.max(2) as f64);
        // FTS5's idf of a word said once, which MemCC keeps twice (a summary's sentence and the
        // window it came from): ln((n − 2 + 0.5) / (2 + 0.5)).
        let rare = |n: f64| ((n - 1.5) / 2.5).ln().max(f64::EPSILON);
        RelevanceFloor {
            meaning: tuning.relevant_meaning + tuning.relevant_meaning_rise * (n / reference).ln().max(0.0),
            words: tuning.relevant_words * rare(n) / rare(reference),
        }
    }
}

/// The choices an agent said were replaced ("we switched from Jest to Vitest":
/// `replaced_by(Jest, Vitest)`, [`crate::lang::replacement`]), and which of them a record
/// names as still current: said before the replacement, naming the older choice and not the newer.
pub struct Replacements {
    /// (the statement, the older choice's words, the newer choice's words)
    replaced: Vec<(Triple, Vec<String>, Vec<String>)>,
}

impl Replacements {
    /// The newest replacements looked at (a person makes a handful, not thousands).
    const LIMIT: usize = 100;

    pub fn of(store: &dyn Statements, agents: &[String]) -> Result<Self> {
        let replaced = store
            .current_statements(agents, Predicate::ReplacedBy.key(), Self::LIMIT)?
            .into_iter()
            .map(|t| {
                let (old, new) = (Term::texts(&t.subject), Term::texts(&t.object));
                (t, old, new)
            })
            .collect();
        Ok(Replacements { replaced })
    }

    /// The replacements said after `record` of a choice it names (and not of what replaced it).
    pub fn since(&self, record: &MemoryRecord) -> Vec<&Triple> {
        if self.replaced.is_empty() {
            return Vec::new();
        }
        let (id, said_at) = (record.id, record.event_time.unwrap_or(record.created_at));
        let words = Term::texts(&record.text);
        self.replaced
            .iter()
            .filter(|(t, old, new)| {
                let before = match (t.valid_from, t.source_record) {
                    (Some(at), _) => said_at < at,
                    (None, Some(source)) => id < source,
                    (None, None) => false,
                };
                t.source_record != Some(id) && before && names(&words, old) && !names(&words, new)
            })
            .map(|(t, _, _)| t)
            .collect()
    }
}

/// The (agent, session) a hit's record was made in, when it names one.
fn session_of(h: &SearchHit) -> Option<(String, String)> {
    h.record.as_ref().and_then(|r| r.source_session_ids.first().map(|s| (r.agent_id.clone(), s.clone())))
}

/// Whether `phrase`'s words stand together, in order, among `words` (both as [`Term::texts`]).
fn names(words: &[String], phrase: &[String]) -> bool {
    match phrase {
        [] => false,
        // Chinese runs on without spaces: "微信" stands inside the run "我们用微信聊天".
        [run] if run.chars().any(memcc_core::text::is_cjk_letter) => words.iter().any(|w| w.contains(run.as_str())),
        _ => words.windows(phrase.len()).any(|w| w == phrase),
    }
}

#[cfg(test)]
mod names_tests {
    use super::*;

    #[test]
    fn the_relevance_floor_rises_with_the_store_and_words_count_for_more_in_a_small_one() {
        let tuning = crate::tuning::Tuning::default();
        let at = |n| RelevanceFloor::at(&tuning, n);
        let reference = at(tuning.relevant_size);
        assert!((reference.meaning - tuning.relevant_meaning).abs() < 1e-12);
        assert!((reference.words - tuning.relevant_words).abs() < 1e-9);
        // Small stores: the meaning floor stays, a few rare words reach the words floor.
        assert_eq!(at(17).meaning, tuning.relevant_meaning);
        assert!(at(17).words < 7.0 && at(0).words > 0.0, "{:?} {:?}", at(17), at(0));
        // Large stores: both rise, the meaning half by relevantMeaningRise per e-fold.
        let big = at(tuning.relevant_size * 4);
        assert!((big.meaning - (tuning.relevant_meaning + tuning.relevant_meaning_rise * 4f64.ln())).abs() < 1e-12);
        assert!(big.words > tuning.relevant_words && at(100_000).words > big.words);
    }

    #[test]
    fn a_choice_is_named_by_its_words_in_order_or_inside_a_chinese_run() {
        let named = |text: &str, phrase: &str| names(&Term::texts(text), &Term::texts(phrase));
        assert!(named("We check the code with Jest, as always.", "Jest"));
        assert!(named("The old Redis cache is full.", "Redis cache"));
        assert!(!named("The cache in front of Redis is full.", "Redis cache"), "not in order");
        assert!(!named("We check the code with Jestful.", "Jest"), "a word, not part of one");
        assert!(named("我们平时用微信聊天", "微信"));
        assert!(!named("我们平时用电话聊天", "微信"));
        assert!(!named("anything", ""));
    }
}

/// The messages of a record the query points at, best first: for a window (one line per
/// message, after its date line) the lines holding more of the query's words ([`Question::needles`],
/// lowercase) come first — a line that states a date counting as one more when the query asks
/// `when` — ties in conversation order; any other record keeps its order. Tells a reader which
/// turn of a hit holds the match.
pub fn evidence(record: &MemoryRecord, needles: &[String], when: bool) -> Vec<i64> {
    let lines: Vec<&str> = record.text.lines().skip(1).collect();
    if record.kind != RecordKind::Verbatim || lines.len() != record.source_message_ids.len() {
        return record.source_message_ids.clone();
    }
    let mut scored: Vec<(usize, i64)> = lines
        .iter()
        .zip(&record.source_message_ids)
        .map(|(line, id)| {
            let dated = usize::from(when && states_a_date(line));
            let line = line.to_lowercase();
            (needles.iter().filter(|n| line.contains(n.as_str())).count() + dated, *id)
        })
        .collect();
    scored.sort_by_key(|(hits, _)| std::cmp::Reverse(*hits));
    scored.into_iter().map(|(_, id)| id).collect()
}

/// Where and when a search is asked, beside its words.
#[derive(Debug, Clone, Copy, Default)]
pub struct Asking<'a> {
    /// What the conversation said just before, oldest first ([`memcc_core::RecallQuery::context`]).
    pub context: &'a [ContextTurn],
    /// The session it is asked in: the host holds it, so it is not ranked among the past.
    pub session: Option<&'a str>,
    /// The "now" of the question (default: now).
    pub as_of: Option<i64>,
    /// Only this wing's records.
    pub wing: Option<&'a str>,
    /// The project it is asked in: its records are favoured, others still found.
    pub project: Option<&'a str>,
}

/// What a search reads.
pub(crate) struct Search<'a> {
    pub store: &'a dyn SearchStore,
    pub index: &'a dyn VectorStore,
    pub embedder: &'a dyn Embedder,
    pub config: &'a MemoryConfig,
    pub reranker: Option<&'a dyn ChatModel>,
    pub rerank_skip_logged: &'a AtomicBool,
    /// The session ranker's models ([`crate::rank::model`]); none: the second pass's score ranks.
    pub models: Option<Arc<Models>>,
}

/// One search: whose records, for what, how many.
pub(crate) struct Query<'a> {
    pub agents: &'a [String],
    pub question: &'a Question<'a>,
    pub as_of: Option<i64>,
    pub wing: Option<&'a str>,
    pub top: usize,
    /// Candidates from each retriever (at least `tuning.minCandidates`).
    pub candidates: usize,
    pub mode: SearchMode,
    /// Beside the search, the best full-text matches of this wing, this many ([`Found::in_wing`]):
    /// recall's L2, found on the full-text side while the vector side is still scanning.
    pub also_in_wing: Option<(&'a str, usize)>,
    /// Whether the configured LLM rerank may reorder the hits (one model call): not for the
    /// wider search that only extends hits already reranked.
    pub rerank: bool,
    /// What the conversation said just before the question ([`memcc_core::RecallQuery::context`]):
    /// its words, weighed `tuning.inContext` against the question's own, favour the records of the
    /// subject being worked on.
    pub context: Option<&'a Question<'a>>,
    /// The project the question is asked in: its records score `tuning.sameProject` more.
    pub project: Option<&'a str>,
    /// The conversation's turns before the question, oldest first: the session ranker's query
    /// context ([`crate::rank`]).
    pub turns: &'a [ContextTurn],
    /// The session it is asked in (not ranked among the past).
    pub session: Option<&'a str>,
    /// The sessions as an earlier search of the same question ranked them: a wider search that
    /// extends its hits keeps their order of sessions.
    pub ranking: Option<&'a Arc<Ranking>>,
}

/// The full-text terms of a query, and how many records each matches when that was counted
/// ([`crate::store::Records::document_frequencies`]).
pub struct Lexical {
    pub terms: Vec<Term>,
    pub frequencies: Option<Vec<usize>>,
}

/// The full-text side of a search: the question's matches, recall's L2 matches in a wing, and
/// the matches of the conversation's recent turns (by record id, BM25).
type LexicalFound = (HashMap<i64, f64>, Vec<i64>, HashMap<i64, f64>);

impl Lexical {
    /// The full-text search for these terms among `agents`' records (in `wing`), `limit` best.
    pub(crate) fn full_text<'a>(&'a self, agents: &'a [String], wing: Option<&'a str>, limit: usize) -> FullText<'a> {
        FullText { terms: &self.terms, agents, wing, during: None, limit, frequencies: self.frequencies.as_deref() }
    }
}

/// A search's hits, and what it found beside them for recall's L2.
pub(crate) struct Found {
    pub hits: Vec<SearchHit>,
    /// The best full-text matches in [`Query::also_in_wing`]'s wing, best first.
    pub in_wing: Vec<i64>,
    /// The sessions ranked for it, with their features (none when the session ranker is off,
    /// or had nothing to rank).
    pub ranking: Option<Arc<Ranking>>,
}

impl Search<'_> {
    pub fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        Ok(self.embedder.embed(&[text])?.pop().unwrap_or_default())
    }

    pub fn find(&self, q: &Query<'_>) -> Result<Found> {
        // Stored agent ids and wings never hold U+0000 (`record::without_nul`): one that does
        // matches nothing, on PostgreSQL (which refuses it as a parameter) as on SQLite.
        let nul = |s: &str| s.contains('\0');
        if q.agents.iter().any(|a| nul(a)) || q.also_in_wing.is_some_and(|(w, _)| nul(w)) {
            let agents: Vec<String> = q.agents.iter().filter(|a| !nul(a)).cloned().collect();
            let also_in_wing = q.also_in_wing.filter(|(w, _)| !nul(w));
            if agents.is_empty() {
                return Ok(Found { hits: Vec::new(), in_wing: Vec::new(), ranking: None });
            }
            return self.find(&Query { agents: &agents, also_in_wing, ..*q });
        }
        if q.wing.is_some_and(nul) {
            return Ok(Found { hits: Vec::new(), in_wing: Vec::new(), ranking: None });
        }
        let now = q.as_of.unwrap_or_else(memcc_core::time::now_ms);
        let periods = named_periods(q.question.text, Some(now));
        let when = asks_when(q.question.text);
        let tuning = &self.config.tuning;
        let candidates =
            q.candidates.max(tuning.min_candidates).max(if q.mode == SearchMode::Hybrid { 0 } else { q.top });
        // The two retrievers run side by side: the term statistics and BM25 on a new thread,
        // embedding and the vector scan — the longer of the two — on this one, which need not
        // wait for a thread to be scheduled (~1.5 ms on a 2-core VM).
        let (vector_scores, lexical) = std::thread::scope(|scope| {
            // Choosing the terms counts how common each is: done there, beside the vector side.
            let lexical = scope.spawn(|| -> Result<LexicalFound> {
                let mut scores = HashMap::new();
                let mut in_wing = Vec::new();
                if q.mode == SearchMode::Dense {
                    return Ok((scores, in_wing, HashMap::new()));
                }
                let query = self.lexical_query(&q.question.content, q.agents)?;
                if !query.terms.is_empty() {
                    let full_text = query.full_text(q.agents, q.wing, candidates);
                    // Beside the best matches, what was said in the period the question names,
                    // however common its words are elsewhere.
                    scores.extend(match Period::span(&periods) {
                        Some(span) => self.store.fts_also_during(&full_text, span)?,
                        None => self.store.fts(&full_text)?,
                    });
                }
                if let Some((wing, limit)) = q.also_in_wing {
                    in_wing = self.wing_matches(&query, q.agents, wing, limit)?;
                }
                // The context's words the question does not say, matched the same way.
                let mut in_context = HashMap::new();
                if let Some(context) = q.context {
                    let own: Vec<Term> =
                        context.content.iter().filter(|t| !q.question.content.contains(t)).cloned().collect();
                    let query = self.lexical_query(&own, q.agents)?;
                    if !query.terms.is_empty() {
                        in_context =
                            self.store.fts(&query.full_text(q.agents, q.wing, candidates))?.into_iter().collect();
                    }
                }
                Ok((scores, in_wing, in_context))
            });
            // A panic here is this search's error, as on the other thread, not the caller's crash.
            let vector = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| -> Result<HashMap<i64, f64>> {
                let mut scores: HashMap<i64, f64> = HashMap::new();
                if q.mode == SearchMode::Lexical {
                    return Ok(scores);
                }
                match self.embed_query(&without_exclusions(q.question.text)) {
                    Ok(v) if v.is_empty() => {}
                    Ok(v) => {
                        for hit in self.index.search(&v, candidates, q.agents)? {
                            scores.insert(hit.id, f64::from(hit.score));
                        }
                    }
                    // A remote embedder that fails: the words still find what they can.
                    Err(e) => tracing::warn!(error = %e, "query embedding failed; lexical search only"),
                }
                Ok(scores)
            }));
            (vector, lexical.join())
        });
        let vector_scores =
            vector_scores.map_err(|_| crate::error::MemoryError::Internal("the vector search panicked".into()))??;
        let (lexical, in_wing, in_context) =
            lexical.map_err(|_| crate::error::MemoryError::Internal("the full-text search panicked".into()))??;
        let ids: Vec<i64> = vector_scores
            .keys()
            .chain(lexical.keys())
            .chain(in_context.keys())
            .copied()
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        let records: Vec<MemoryRecord> = self
            .store
            .get_many(&ids)?
            .into_iter()
            .filter(|r| !r.forgotten && q.wing.is_none_or(|w| r.wing == w))
            .collect();
        let max_bm25 = lexical.values().copied().fold(0.0, f64::max);
        let max_context = in_context.values().copied().fold(0.0, f64::max);
        let in_period = |r: &MemoryRecord| periods.iter().any(|p| p.contains(r.event_time.unwrap_or(r.created_at)));
        // A period every candidate falls in (or none does) separates nothing; counted anyway it
        // would only lift weak matches past the relative cut-offs recall applies. The same holds
        // for a stated date when every candidate states one.
        let separates = |n: usize| n > 0 && n < records.len();
        let period_separates = separates(records.iter().filter(|r| in_period(r)).count());
        let dated: HashSet<i64> = if when {
            records.iter().filter(|r| states_a_date(&r.text)).map(|r| r.id).collect()
        } else {
            HashSet::new()
        };
        let when_separates = separates(dated.len());
        // Recency is a prior only for a question about now or the latest: asked of everything,
        // it pushed what was said early below later small talk (LoCoMo dev: 5 more questions
        // with all their sessions in the top 5 without it, the prompts unchanged).
        let half_life_ms = self.config.recency_half_life_days * 86_400_000.0;
        let now_asked = asks_about_now(q.question.text);
        let mut hits: Vec<SearchHit> = records
            .into_iter()
            .map(|r| {
                let cos = vector_scores.get(&r.id).copied().unwrap_or(0.0).max(0.0);
                let lex = if max_bm25 > 0.0 { lexical.get(&r.id).copied().unwrap_or(0.0) / max_bm25 } else { 0.0 };
                // Both signals count; when it was said (a named period), that it says when
                // (for a "when" question) or how recent it is (for a question about now) count
                // less than the words — recency only separates near-ties (≤ 0.05).
                let age = (now - r.event_time.unwrap_or(r.created_at)).max(0) as f64;
                let recency =
                    if now_asked { tuning.recency * (-age / half_life_ms * std::f64::consts::LN_2).exp() } else { 0.0 };
                let mut time = if period_separates && in_period(&r) { tuning.in_period } else { 0.0 };
                if when_separates && dated.contains(&r.id) {
                    time += tuning.states_when;
                }
                let context =
                    if max_context > 0.0 { in_context.get(&r.id).copied().unwrap_or(0.0) / max_context } else { 0.0 };
                // A factor, not a summand: added, it lifted every record of the project above
                // zero, so a question matching nothing still recalled something.
                let same_project = matches!((q.project, &r.project), (Some(asked), Some(learnt)) if asked == learnt);
                let mut score = match q.mode {
                    SearchMode::Hybrid => {
                        tuning.semantic * cos + tuning.lexical * lex + tuning.in_context * context + recency + time
                    }
                    SearchMode::Lexical => lex,
                    SearchMode::Dense => cos,
                };
                let mut parts = ScoreParts {
                    words: tuning.lexical * lex,
                    meaning: tuning.semantic * cos,
                    context: tuning.in_context * context,
                    when: time,
                    recency,
                    similarity: cos,
                    bm25: lexical.get(&r.id).copied().unwrap_or(0.0),
                    ..ScoreParts::default()
                };
                // (The project's share and a record's standing below are part of its own score.)
                if same_project && q.mode == SearchMode::Hybrid {
                    parts.project = score * tuning.same_project;
                    score += parts.project;
                }
                if !r.is_current() {
                    score *= tuning.not_current;
                    parts.not_current = Some(tuning.not_current);
                }
                parts.own = score;
                SearchHit::of_record(r, score, parts, &q.question.needles, when)
            })
            .collect();
        let ranking = if q.mode == SearchMode::Hybrid && tuning.rank_sessions {
            self.rank_by_session(q, now, when, &mut hits)?
        } else {
            None
        };
        if q.mode == SearchMode::Hybrid {
            self.mark_outdated(q.question, q.agents, &mut hits)?;
        }
        // Exact ties (same score, same time) go newest record first: the candidates come from a
        // hash set, and their order must not depend on it (or on how many were asked for).
        let number = |h: &SearchHit| h.record.as_ref().map_or(0, |r| r.id);
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| b.event_time.cmp(&a.event_time))
                .then_with(|| number(b).cmp(&number(a)))
        });
        if q.mode == SearchMode::Hybrid {
            self.merge_knowledge_graph(q.agents, q.question, &mut hits)?;
            if self.config.llm_rerank && q.rerank {
                self.llm_rerank(q.question.text, &mut hits);
            }
        }
        hits.truncate(q.top);
        Ok(Found { hits, in_wing, ranking })
    }

    /// Rank the sessions of the agents ([`crate::rank`]) and score each hit by its session's
    /// probability and its own match within the session: its hybrid score relative to the best
    /// of its session's hits (`tuning.recordShare` of the weight). The best sessions no
    /// retriever found a record of bring in their records that best match the expanded query
    /// (`tuning.fillSessions` sessions, `fillRecords` records each). A hit of no ranked session
    /// (a record added by hand, one of the asking session) keeps its hybrid score. The best session's best record scores what
    /// the best hit scored, and the rest in proportion.
    fn rank_by_session(
        &self,
        q: &Query<'_>,
        now: i64,
        when: bool,
        hits: &mut Vec<SearchHit>,
    ) -> Result<Option<Arc<Ranking>>> {
        let tuning = &self.config.tuning;
        let best_lex = hits.iter().map(|h| h.parts.words).fold(0.0, f64::max);
        let mut evidence: HashMap<(String, String), Evidence> = HashMap::new();
        for h in hits.iter() {
            if let Some(k) = session_of(h) {
                let e = evidence.entry(k).or_default();
                e.meaning = e.meaning.max(h.parts.similarity);
                e.words = e.words.max(if best_lex > 0.0 { h.parts.words / best_lex } else { 0.0 });
            }
        }
        let model = self.models.as_deref().map(|m| m.for_project(q.project.is_some()));
        // The question as said, and the other forms of its irregular verbs ("buy": "bought"),
        // which a stemmer does not join.
        let said = Term::texts(q.question.text);
        let forms: Vec<String> =
            q.question.content.iter().cloned().map(Term::into_text).filter(|w| !said.contains(w)).collect();
        let question = format!("{} {}", q.question.text, forms.join(" "));
        let input = RankInput {
            question: &question,
            context: q.turns,
            project: q.project,
            session: q.session,
            as_of: now,
            evidence: &evidence,
        };
        let ranking = match q.ranking {
            Some(r) => r.clone(),
            None => Arc::new(crate::rank::rank_sessions(self.store, q.agents, &input, tuning, model)?),
        };
        if ranking.sessions.is_empty() {
            return Ok(None);
        }
        // Among a few sessions the records' own match decides (`tuning.sessionWeightFrom`).
        let weight = tuning.session_weight_among(ranking.among);
        if weight <= 0.0 {
            return Ok(Some(ranking));
        }
        let mut ranked: Vec<&RankedSession> = ranking.sessions.iter().collect();
        ranked.sort_by(|a, b| b.probability.total_cmp(&a.probability));
        // Each hit's own match: its hybrid score; a record brought in, its match with the
        // expanded query (compared only with its own session's others).
        let mut own: Vec<f64> = hits.iter().map(|h| h.score).collect();
        let best_hit = own.iter().copied().fold(0.0, f64::max);
        let unfound: Vec<(String, String)> = ranked
            .iter()
            .take(tuning.fill_sessions)
            .map(|r| (r.info.agent_id.clone(), r.info.session_id.clone()))
            .filter(|k| !evidence.contains_key(k))
            .collect();
        if !unfound.is_empty() && tuning.fill_records > 0 {
            let mut by_session: HashMap<(String, String), Vec<(f64, MemoryRecord)>> = HashMap::new();
            for r in self.store.records_of_sessions(&unfound)? {
                if q.wing.is_some_and(|w| r.wing != w) {
                    continue;
                }
                let Some(k) = r.source_session_ids.first().map(|s| (r.agent_id.clone(), s.clone())) else { continue };
                by_session.entry(k).or_default().push((ranking.match_of(&r.text), r));
            }
            let mut keys: Vec<_> = by_session.keys().cloned().collect();
            keys.sort();
            for k in keys {
                let Some(mut records) = by_session.remove(&k) else { continue };
                records.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.id.cmp(&a.1.id)));
                for (m, r) in records.into_iter().filter(|(m, _)| *m > 0.0).take(tuning.fill_records) {
                    let mut parts = ScoreParts::default();
                    if !r.is_current() {
                        parts.not_current = Some(tuning.not_current);
                    }
                    let m = if r.is_current() { m } else { m * tuning.not_current };
                    own.push(m);
                    hits.push(SearchHit::of_record(r, m, parts, &q.question.needles, when));
                }
            }
        }
        let probability: HashMap<(&str, &str), f64> = ranking
            .sessions
            .iter()
            .map(|r| ((r.info.agent_id.as_str(), r.info.session_id.as_str()), r.probability))
            .collect();
        let best_probability = ranked.first().map_or(0.0, |r| r.probability);
        // Past a thousand sessions only a pool is ranked: a hit of a session outside it (one the
        // wider search found) is scored as the least likely ranked one.
        let unpooled = ranking.unpooled_probability();
        let mut best_in: HashMap<(String, String), f64> = HashMap::new();
        for (h, m) in hits.iter().zip(&own) {
            if let Some(k) = session_of(h) {
                let b = best_in.entry(k).or_insert(0.0);
                *b = b.max(*m);
            }
        }
        for (h, m) in hits.iter_mut().zip(own) {
            let k = session_of(h);
            let p = k.as_ref().and_then(|(a, s)| {
                probability
                    .get(&(a.as_str(), s.as_str()))
                    .copied()
                    .or_else(|| unpooled.filter(|_| Some(s.as_str()) != q.session))
            });
            // A record that matches nothing scores nothing, whatever its session. The score is
            // a log-linear mix of the session ranking's (its session's probability, moved by the
            // record's match within it) and the record's own hybrid score, both relative to the
            // best, on the hybrid scale: a caller's floor (`minScore`) reads it as before.
            let score = match (p, k.as_ref().and_then(|k| best_in.get(k))) {
                _ if m <= 0.0 || best_hit <= 0.0 => 0.0,
                (Some(p), Some(&best)) if best_probability > 0.0 => {
                    let by_session =
                        p / best_probability * (1.0 - tuning.record_share + tuning.record_share * m / best);
                    let own = (m / best_hit).min(1.0);
                    best_hit * by_session.powf(weight) * own.powf(1.0 - weight)
                }
                (Some(_), _) => 0.0,
                _ => m,
            };
            if p.is_some() {
                h.parts.session = p;
            }
            h.score = score;
        }
        Ok(Some(ranking))
    }

    /// Mark each hit with what it states that a later statement superseded (a record saying "I
    /// live in Boston and work at Fidelity" stays current for the job after "I live in Lisbon
    /// now"); a hit whose changed statement the question asks about ranks as a superseded record
    /// does (`tuning.notCurrent`), so the newest value comes first.
    fn mark_outdated(&self, question: &Question<'_>, agents: &[String], hits: &mut [SearchHit]) -> Result<()> {
        let ids: Vec<i64> = hits.iter().filter_map(|h| h.record.as_ref().map(|r| r.id)).collect();
        if ids.is_empty() {
            return Ok(());
        }
        let changed = self.store.superseded_statements(&ids)?;
        // (the record that replaced a hit the question asks about, that hit's score before)
        let mut lifts: Vec<(i64, f64)> = Vec::new();
        for (old, new) in &changed {
            let Some(hit) = hits.iter_mut().find(|h| h.record.as_ref().map(|r| r.id) == old.source_record) else {
                continue;
            };
            // Where the newer statement was said, so a reader can open it.
            let said = new.source_record.map(|r| format!(" (mem_{r})")).unwrap_or_default();
            let line = format!(
                "{} — {} — {}, now {}{said}",
                old.subject,
                old.predicate.replace('_', " "),
                old.object,
                new.object
            );
            if let Some(score) = hit.mark_changed(line, question.asks_about(old), self.config.tuning.not_current) {
                lifts.extend(new.source_record.map(|r| (r, score)));
            }
        }
        self.mark_replaced(question, agents, hits, &mut lifts)?;
        // What replaced a hit the question asks about ranks at least where that hit ranked
        // (when it is among the candidates): else "do we still use Jest?" finds the old words first.
        for (record, score) in lifts {
            let Some(hit) = hits.iter_mut().find(|h| h.record.as_ref().is_some_and(|r| r.id == record)) else {
                continue;
            };
            if hit.score < score {
                hit.parts.replaces = Some(score - hit.score);
                hit.score = score;
            }
        }
        Ok(())
    }

    /// Mark each hit that names a choice later replaced ("we switched from Jest to Vitest"),
    /// said before the replacement and without naming what replaced it, with the replacement;
    /// ranked down only when the question names either choice ("do we still use Jest?").
    fn mark_replaced(
        &self,
        question: &Question<'_>,
        agents: &[String],
        hits: &mut [SearchHit],
        lifts: &mut Vec<(i64, f64)>,
    ) -> Result<()> {
        let replacements = Replacements::of(self.store, agents)?;
        for hit in hits.iter_mut() {
            let Some(record) = hit.record.as_ref() else { continue };
            for t in replacements.since(record) {
                let said = t.source_record.map(|r| format!(" (mem_{r})")).unwrap_or_default();
                let line = format!("{} — replaced by — {}{said}", t.subject, t.object);
                let asked = question.names(&t.subject) || question.names(&t.object);
                if let Some(score) = hit.mark_changed(line, asked, self.config.tuning.not_current) {
                    lifts.extend(t.source_record.map(|r| (r, score)));
                }
            }
        }
        Ok(())
    }

    /// The best `limit` full-text matches of `lexical` among the records of `agents` in
    /// `wing`, best first: recall's L2.
    pub fn wing_matches(&self, lexical: &Lexical, agents: &[String], wing: &str, limit: usize) -> Result<Vec<i64>> {
        if lexical.terms.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self.store.fts(&lexical.full_text(agents, Some(wing), limit))?.into_iter().map(|(id, _)| id).collect())
    }

    /// The ranked-retrieval query for a question's `content` words ([`Question::content`]),
    /// minus those so common they match a large share of the agents' records (they barely move
    /// BM25, yet make its cost grow with the collection). When every word is that common, the
    /// first two are kept.
    pub fn lexical_query(&self, content: &[Term], agents: &[String]) -> Result<Lexical> {
        let uncounted = |terms| Ok(Lexical { terms, frequencies: None });
        if content.iter().all(|t| matches!(t, Term::Word(w) if memcc_core::text::is_stop_word(w))) {
            // Only function words: search them rather than nothing.
            return uncounted(content.to_vec());
        }
        let records = self.store.record_count()?;
        let tuning = &self.config.tuning;
        let cap = ((records as f64 * tuning.common_term_share) as usize).max(tuning.common_term_floor);
        // No term can be in more records than there are: nothing to count.
        if records as usize <= cap {
            return uncounted(content.to_vec());
        }
        let counts = self.store.document_frequencies(content, agents, cap)?;
        let (terms, frequencies): (Vec<Term>, Vec<usize>) =
            content.iter().cloned().zip(counts).filter(|(_, df)| *df <= cap).unzip();
        if terms.is_empty() {
            // Every word is that common: keep the first two (the query's own order), whose
            // counts stopped at the cap.
            return uncounted(content.iter().take(2).cloned().collect());
        }
        Ok(Lexical { terms, frequencies: Some(frequencies) })
    }

    /// Add one synthetic result listing the stored facts about the query's entities that it asks
    /// about ([`Question::asks_about`]), unless the top results already say them.
    fn merge_knowledge_graph(
        &self,
        agents: &[String],
        question: &Question<'_>,
        hits: &mut Vec<SearchHit>,
    ) -> Result<()> {
        let query = question.text;
        let mut entities: Vec<String> = Vec::new();
        for t in terms(query) {
            match t {
                Term::Word(w) if w.len() > 2 => entities.push(w),
                Term::Cjk(c) => entities.push(c.into_iter().collect()),
                _ => {}
            }
        }
        if query.contains(['I', '我']) || query.to_lowercase().contains(" my ") {
            entities.push("user".into());
        }
        let triples = self.store.triples_about(agents, &entities, 8)?;
        let top_text: String = hits.iter().take(5).map(|h| h.text.to_lowercase()).collect::<Vec<_>>().join("\n");
        let fresh: Vec<_> =
            triples.iter().filter(|t| question.asks_about(t) && !top_text.contains(&t.object.to_lowercase())).collect();
        if fresh.is_empty() {
            return Ok(());
        }
        let lines: Vec<String> = fresh
            .iter()
            .map(|t| {
                let since =
                    t.valid_from.and_then(memcc_core::time::day).map(|d| format!(" (since {d})")).unwrap_or_default();
                format!("{} — {} — {}{since}", t.subject, t.predicate.replace('_', " "), t.object)
            })
            .collect();
        let best = hits.first().map_or(self.config.tuning.knowledge_graph_alone, |h| h.score);
        let position = hits.len().min(self.config.tuning.knowledge_graph_slot);
        hits.insert(
            position,
            SearchHit {
                id: format!("kg_{}", fresh[0].subject.replace(' ', "_")),
                score: best * self.config.tuning.knowledge_graph,
                kind: RecordKind::Fact,
                wing: "knowledge".into(),
                room: "graph".into(),
                text: format!("Known facts: {}", lines.join("; ")),
                event_time: fresh.iter().filter_map(|t| t.valid_from).max(),
                current: true,
                superseded_by: None,
                truncated: false,
                outdated: Vec::new(),
                evidence: Vec::new(),
                record: None,
                parts: ScoreParts {
                    knowledge_graph: Some(self.config.tuning.knowledge_graph),
                    ..ScoreParts::default()
                },
            },
        );
        Ok(())
    }

    /// Reorder by a chat model's judgement; on any failure keep the hybrid order.
    fn llm_rerank(&self, query: &str, hits: &mut Vec<SearchHit>) {
        let Some(model) = self.reranker else {
            if !self.rerank_skip_logged.swap(true, Ordering::Relaxed) {
                tracing::info!("llmRerank is on but no chat endpoint is configured; skipping the rerank");
            }
            return;
        };
        if hits.len() < 2 {
            return;
        }
        // The model sees at most the first 30 (a longer list costs more than it moves).
        let shown = hits.len().min(30);
        let listing: String = hits[..shown]
            .iter()
            .enumerate()
            .map(|(i, h)| format!("[{}] {}", i + 1, h.text.chars().take(600).collect::<String>().replace('\n', " ")))
            .collect::<Vec<_>>()
            .join("\n");
        let request = ChatRequest::simple(
            "Rank the passages by how well they help answer the query. Reply with only a JSON array of passage \
             numbers, most relevant first, e.g. [3, 1, 2].",
            &format!("Query: {query}\n\nPassages:\n{listing}"),
            200,
        );
        let order: Option<Vec<usize>> = model.complete(&request).ok().and_then(|reply| {
            let start = reply.find('[')?;
            let end = reply[start..].find(']')? + start;
            serde_json::from_str::<Vec<usize>>(&reply[start..=end]).ok()
        });
        match order {
            Some(order) => {
                let mut taken = vec![false; hits.len()];
                let mut reordered = Vec::with_capacity(hits.len());
                for n in order {
                    if let Some(i) = n.checked_sub(1).filter(|&i| i < shown && !taken[i]) {
                        taken[i] = true;
                        reordered.push(hits[i].clone());
                    }
                }
                reordered.extend(hits.iter().enumerate().filter(|(i, _)| !taken[*i]).map(|(_, h)| h.clone()));
                *hits = reordered;
            }
            None => tracing::warn!("LLM rerank gave no usable order; keeping the hybrid ranking"),
        }
    }
}
