//! Ranking whole sessions as a search engine ranks documents, then the records within them.
//!
//! An agent's past is a few hundred sessions, each about something; a question is usually
//! about one or two of them, and the words that find them are often not the question's own
//! ("let's continue with the plan"). So before its records compete, every session the agents
//! hold is scored as one document ([`crate::sessions`], counted by [`crate::terms`]):
//!
//! 1. the query is the question, plus the conversation's turns before it — an assistant turn
//!    weighed as much as the whole question, a user turn not at all (`tuning.contextTurns` …);
//! 2. BM25 over the sessions ranks them once; the words of the best few, weighed by their score,
//!    expand the query (RM3 feedback: `feedbackSessions`, `feedbackTerms`, `feedbackKeep`), and
//!    BM25 ranks them again;
//! 3. a logistic model ([`model`]) turns each session's evidence — both passes' scores raw,
//!    relative to the best and as ranks, how many sessions back it was, its length, how much of
//!    the question it says, the meaning and words of its best records among the candidates,
//!    and with a host that says projects, whether it is the asker's project and how recent
//!    there — into the probability that the session holds what is asked.
//!
//! [`crate::search`] then ranks a record by its session's probability and its own match. The
//! method and its figures on RealMem (non-neural, fit leave-one-persona-out) are
//! `../shared/research/ranking`; MemCC's own fit is `sessions.json`'s report.

pub(crate) mod bm25;
pub mod model;

use std::collections::HashMap;

use memcc_core::bridge::{ContextTurn, Role};

use crate::error::Result;
use crate::sessions::SessionInfo;
use crate::store::Sessions;
use crate::terms;
use crate::tuning::Tuning;
use bm25::{Collection, QueryTerms};

/// The features the models may read, by name, in the order [`Features::row`] gives them. The
/// last three need the host to say projects ([`PROJECT_FEATURES`]).
pub const FEATURES: &[&str] = &[
    "crm3",
    "crm3_norm",
    "crm3_rank",
    "ctx_norm",
    "ctx_rank",
    "bm25_norm",
    "rm3_norm",
    "rm3_rank",
    "turns_norm",
    "cov",
    "cov_idf",
    "back",
    "back_rank_top10",
    "days",
    "length",
    "messages",
    "candidates",
    "query_terms",
    "has_context",
    "meaning_max",
    "words_max",
    "has_record",
    "same_project",
    "project_recency",
    "project_sessions",
];

/// The features only a host that says projects gives (the rest every host has).
pub const PROJECT_FEATURES: &[&str] = &["same_project", "project_recency", "project_sessions"];

/// What a session's best records scored among a search's candidates (0 when none is among them).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Evidence {
    /// The best cosine of its records with the question.
    pub meaning: f64,
    /// The best full-text match of its records, relative to the best candidate's.
    pub words: f64,
}

/// What one ranking is asked.
pub struct RankInput<'a> {
    pub question: &'a str,
    /// The turns before the question, oldest first.
    pub context: &'a [ContextTurn],
    /// The project it is asked in, when the host says.
    pub project: Option<&'a str>,
    /// The session it is asked in: in the host's context already, not ranked.
    pub session: Option<&'a str>,
    /// Its "now" (how many days back a session is).
    pub as_of: i64,
    /// The search's candidates, by (agent, session).
    pub evidence: &'a HashMap<(String, String), Evidence>,
}

/// What a ranking found: the sessions, and what it ranked them with (to rank a session's records).
pub struct Ranking {
    pub sessions: Vec<RankedSession>,
    /// The expanded query (question, context, feedback).
    expanded: QueryTerms,
    collection: Collection,
}

impl Ranking {
    /// How well `text` (a record) matches the expanded query: its terms' counts saturated as
    /// BM25 saturates them (records are windows of a similar size: no length normalisation),
    /// weighed by the sessions' idf.
    pub fn match_of(&self, text: &str) -> f64 {
        let counts = terms::term_counts(text);
        self.expanded
            .iter()
            .filter_map(|(term, weight)| {
                let tf = f64::from(*counts.get(term)?);
                let df = self.collection.postings.get(term).map_or(0, Vec::len);
                Some(weight * self.collection.idf(df) * tf / (tf + bm25::K1))
            })
            .sum()
    }
}

/// A session ranked: its probability of holding what is asked, and the features it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedSession {
    pub info: SessionInfo,
    pub probability: f64,
    /// [`FEATURES`]' values, in their order.
    pub features: Vec<f64>,
}

/// The query the ranker counts: the question's terms (one each time said) and the context's.
/// With it, the context's terms alone (every turn as said).
fn query_terms(question: &str, context: &[ContextTurn], tuning: &Tuning) -> (QueryTerms, QueryTerms, QueryTerms) {
    let own: QueryTerms = terms::term_counts(question).into_iter().map(|(t, n)| (t, f64::from(n))).collect();
    let own = sorted(own);
    let said: f64 = own.iter().map(|(_, w)| w).sum();
    let mut parts: Vec<QueryTerms> = Vec::new();
    let mut turns: Vec<QueryTerms> = Vec::new();
    for turn in context.iter().rev().take(tuning.context_turns) {
        turns.push(terms::term_counts(&turn.text).into_iter().map(|(t, n)| (t, f64::from(n))).collect());
        let weight = match turn.role {
            Role::Assistant => tuning.assistant_turn,
            Role::User => tuning.user_turn,
            _ => 0.0,
        };
        if weight <= 0.0 {
            continue;
        }
        let counts: QueryTerms = terms::term_counts(&turn.text).into_iter().map(|(t, n)| (t, f64::from(n))).collect();
        // A turn weighs `weight` times the question, however long it is (as a question of
        // `SHORT_QUESTION_TERMS` at least).
        parts.push(bm25::scaled(&counts, weight * said.max(SHORT_QUESTION_TERMS)));
    }
    let refs: Vec<&[(String, f64)]> = std::iter::once(own.as_slice()).chain(parts.iter().map(Vec::as_slice)).collect();
    let with_context = sorted(bm25::merge(&refs));
    let turns: Vec<&[(String, f64)]> = turns.iter().map(Vec::as_slice).collect();
    (own, with_context, sorted(bm25::merge(&turns)))
}

fn sorted(mut q: QueryTerms) -> QueryTerms {
    q.sort_by(|a, b| a.0.cmp(&b.0));
    q
}

/// Rank the sessions of `agents` for `input` (none when the index holds none, or the question
/// has no word to count). `model` scores them; without one, the second pass's score is the order.
pub(crate) fn rank_sessions(
    store: &dyn Sessions,
    agents: &[String],
    input: &RankInput<'_>,
    tuning: &Tuning,
    model: Option<&model::Logistic>,
) -> Result<Ranking> {
    let mut sessions: Vec<SessionInfo> =
        store.sessions(agents)?.into_iter().filter(|s| Some(s.session_id.as_str()) != input.session).collect();
    let (own, with_context, turns) = query_terms(input.question, input.context, tuning);
    if sessions.is_empty() || with_context.is_empty() {
        return Ok(Ranking { sessions: Vec::new(), expanded: Vec::new(), collection: Collection::new(Vec::new()) });
    }
    // The last learnt first: a session's place is how many sessions memory learnt since. (Not
    // by date: a backfill or a host's clock may date a session out of turn; the order the
    // sessions reached memory is the conversation's own.)
    sessions.sort_by_key(|s| std::cmp::Reverse(s.key));
    let place: HashMap<i64, usize> = sessions.iter().enumerate().map(|(i, s)| (s.key, i)).collect();
    let mut collection = Collection::new(sessions.iter().map(|s| f64::from(s.length)).collect());
    fetch(store, agents, &mut collection, &place, &bm25::merge(&[&with_context, &turns]))?;
    let first = collection.score(&with_context);
    let before = collection.score(&turns);
    let plain = collection.score(&own);
    // Feedback from each first pass's best sessions: the question with its context (what ranks),
    // and the question alone (a feature beside it).
    let best_with_context = best_of(&first, tuning.feedback_sessions);
    let best_alone = best_of(&plain, QUESTION_FEEDBACK_SESSIONS);
    let mut keys: Vec<i64> = best_with_context.iter().chain(&best_alone).map(|(i, _)| sessions[*i].key).collect();
    keys.sort_unstable();
    keys.dedup();
    let mut terms_of: HashMap<usize, Vec<(String, u32)>> = HashMap::new();
    if !keys.is_empty() {
        for (key, term, tf) in store.session_terms(&keys)? {
            if let Some(&i) = place.get(&key) {
                terms_of.entry(i).or_default().push((term, tf));
            }
        }
    }
    for list in terms_of.values_mut() {
        list.sort();
    }
    let lengths = collection.lengths.clone();
    let expanded =
        bm25::rm3(&with_context, &best_with_context, &terms_of, &lengths, tuning.feedback_terms, tuning.feedback_keep);
    let alone = bm25::rm3(&own, &best_alone, &terms_of, &lengths, QUESTION_FEEDBACK_TERMS, tuning.feedback_keep);
    fetch(store, agents, &mut collection, &place, &bm25::merge(&[&expanded, &alone]))?;
    let second = collection.score(&expanded);
    let feedback_alone = collection.score(&alone);
    let (cov, cov_idf) = collection.coverage(&own);
    let features = Features {
        sessions: &sessions,
        first: &first,
        second: &second,
        plain: &plain,
        feedback_alone: &feedback_alone,
        before: &before,
        cov: &cov,
        cov_idf: &cov_idf,
        input,
        query_terms: own.iter().map(|(_, w)| w).sum(),
    };
    let rows = features.rows();
    let sessions = sessions
        .into_iter()
        .zip(rows)
        .map(|(info, features)| {
            let probability = match model {
                Some(m) => m.probability(&pick(&m.features, &features)),
                // No model: the second pass alone, relative to the best.
                None => features[1],
            };
            RankedSession { info, probability, features }
        })
        .collect();
    Ok(Ranking { sessions, expanded, collection })
}

/// `row`'s values of the features `names` (in their order).
pub fn pick(names: &[String], row: &[f64]) -> Vec<f64> {
    names.iter().map(|n| FEATURES.iter().position(|f| f == n).map_or(0.0, |i| row[i])).collect()
}

/// The fewest terms a question counts as when its context is weighed against it: a short
/// follow-up ("what did we settle on?") leans on the conversation before it. RealMem dev, whose
/// questions are long: session R_all@10 0.708 with 8 and without.
const SHORT_QUESTION_TERMS: f64 = 8.0;

/// The question alone's feedback (a feature): its best three sessions, fifty terms (RealMem dev,
/// `../shared/research/ranking`'s features).
const QUESTION_FEEDBACK_SESSIONS: usize = 3;
const QUESTION_FEEDBACK_TERMS: usize = 50;

/// The `n` best-scored sessions with a positive score (index, score), best first.
fn best_of(scores: &[f64], n: usize) -> Vec<(usize, f64)> {
    let mut best: Vec<(usize, f64)> = scores.iter().copied().enumerate().filter(|(_, s)| *s > 0.0).collect();
    best.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    best.truncate(n);
    best
}

/// Fetch the postings of `query`'s terms the collection does not hold yet.
fn fetch(
    store: &dyn Sessions,
    agents: &[String],
    collection: &mut Collection,
    place: &HashMap<i64, usize>,
    query: &[(String, f64)],
) -> Result<()> {
    let missing: Vec<String> =
        query.iter().map(|(t, _)| t.clone()).filter(|t| !collection.postings.contains_key(t)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    for t in &missing {
        collection.postings.insert(t.clone(), Vec::new());
    }
    for (term, key, tf) in store.session_postings(agents, &missing)? {
        if let (Some(&s), Some(list)) = (place.get(&key), collection.postings.get_mut(&missing[term])) {
            list.push((s, tf));
        }
    }
    Ok(())
}

/// What the features are computed from, per session (newest first).
struct Features<'a> {
    sessions: &'a [SessionInfo],
    first: &'a [f64],
    second: &'a [f64],
    plain: &'a [f64],
    feedback_alone: &'a [f64],
    before: &'a [f64],
    cov: &'a [f64],
    cov_idf: &'a [f64],
    input: &'a RankInput<'a>,
    query_terms: f64,
}

impl Features<'_> {
    /// One row of [`FEATURES`] per session.
    fn rows(&self) -> Vec<Vec<f64>> {
        let n = self.sessions.len();
        let (second_norm, second_rank) = (relative(self.second), ranks(self.second));
        let (first_norm, first_rank) = (relative(self.first), ranks(self.first));
        let plain_norm = relative(self.plain);
        let (alone_norm, alone_rank) = (relative(self.feedback_alone), ranks(self.feedback_alone));
        let before_norm = relative(self.before);
        // Among the ten best by the second pass, 1 for the most recent; 11 for the rest.
        let mut top: Vec<usize> = (0..n).collect();
        top.sort_by(|&a, &b| self.second[b].total_cmp(&self.second[a]).then(a.cmp(&b)));
        top.truncate(10);
        top.sort_unstable();
        let mut back_rank = vec![11.0; n];
        for (r, &s) in top.iter().enumerate() {
            back_rank[s] = (r + 1) as f64;
        }
        // The project's own sessions, newest first: 1, 2, …; 999 for the others.
        let asked = self.input.project;
        let same: Vec<bool> = self.sessions.iter().map(|s| asked.is_some() && s.project.as_deref() == asked).collect();
        let project_sessions = same.iter().filter(|x| **x).count() as f64;
        let mut project_recency = vec![999.0; n];
        let mut k = 0.0;
        for (i, is_same) in same.iter().enumerate() {
            if *is_same {
                k += 1.0;
                project_recency[i] = k;
            }
        }
        let has_context = f64::from(u8::from(!self.input.context.is_empty()));
        (0..n)
            .map(|i| {
                let s = &self.sessions[i];
                let evidence =
                    self.input.evidence.get(&(s.agent_id.clone(), s.session_id.clone())).copied().unwrap_or_default();
                let has_record = self.input.evidence.contains_key(&(s.agent_id.clone(), s.session_id.clone()));
                let days = s.last_at.map_or(0.0, |t| ((self.input.as_of - t).max(0) as f64) / 86_400_000.0);
                vec![
                    self.second[i],
                    second_norm[i],
                    second_rank[i],
                    first_norm[i],
                    first_rank[i],
                    plain_norm[i],
                    alone_norm[i],
                    alone_rank[i],
                    before_norm[i],
                    self.cov[i],
                    self.cov_idf[i],
                    (i + 1) as f64,
                    back_rank[i],
                    days,
                    f64::from(s.length),
                    f64::from(s.messages),
                    n as f64,
                    self.query_terms,
                    has_context,
                    evidence.meaning,
                    evidence.words,
                    f64::from(u8::from(has_record)),
                    f64::from(u8::from(same[i])),
                    project_recency[i],
                    project_sessions,
                ]
            })
            .collect()
    }
}

/// Each value over the largest (all 0 when none is positive).
fn relative(v: &[f64]) -> Vec<f64> {
    let max = v.iter().copied().fold(0.0, f64::max);
    v.iter().map(|x| if max > 0.0 { x / max } else { 0.0 }).collect()
}

/// Each value's place, 1 for the largest; ties in order.
fn ranks(v: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&a, &b| v[b].total_cmp(&v[a]).then(a.cmp(&b)));
    let mut out = vec![0.0; v.len()];
    for (r, i) in order.into_iter().enumerate() {
        out[i] = (r + 1) as f64;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_assistant_turn_weighs_as_much_as_the_question_and_a_user_turn_nothing() {
        let tuning = Tuning::default();
        let context = [
            ContextTurn::new(Role::User, "unrelated words entirely"),
            ContextTurn::new(Role::Assistant, "the postgres migration plan"),
        ];
        let (own, with, turns) = query_terms("which database index?", &context, &tuning);
        assert!(turns.iter().any(|(t, _)| t == "unrel"), "the turns alone, every one: {turns:?}");
        let total = |q: &QueryTerms| q.iter().map(|(_, w)| w).sum::<f64>();
        assert_eq!(total(&own), 2.0, "{own:?}");
        // A short question's context weighs as a question of eight terms.
        assert!((total(&with) - (2.0 + SHORT_QUESTION_TERMS * tuning.assistant_turn)).abs() < 1e-9, "{with:?}");
        let long = "which database index serves the orders table lookups for the nightly billing export job";
        let (own, with, _) = query_terms(long, &context, &tuning);
        assert!(total(&own) > SHORT_QUESTION_TERMS);
        assert!((total(&with) - total(&own) * (1.0 + tuning.assistant_turn)).abs() < 1e-9, "{with:?}");
        assert!(with.iter().any(|(t, _)| t == "postgr"), "{with:?}");
        assert!(!with.iter().any(|(t, _)| t == "unrel"), "user turns weigh nothing: {with:?}");
    }

    #[test]
    fn ranks_and_relative_values() {
        assert_eq!(ranks(&[0.1, 0.5, 0.1]), vec![2.0, 1.0, 3.0]);
        assert_eq!(relative(&[1.0, 2.0]), vec![0.5, 1.0]);
        assert_eq!(relative(&[0.0, 0.0]), vec![0.0, 0.0]);
    }
}
