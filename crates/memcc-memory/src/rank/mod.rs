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
use std::sync::Arc;

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
    /// The sessions ranked: every one, or past a thousand the pool the first passes kept.
    pub sessions: Vec<RankedSession>,
    /// How many sessions it ranked among.
    pub among: usize,
    /// The expanded query (question, context, feedback).
    expanded: QueryTerms,
    collection: Collection,
}

impl Ranking {
    /// What a session the ranking left out of its pool counts as: the least likely it ranked
    /// (`None` when it ranked every session).
    pub fn unpooled_probability(&self) -> Option<f64> {
        (self.among > self.sessions.len())
            .then(|| self.sessions.iter().map(|r| r.probability).fold(f64::INFINITY, f64::min))
            .filter(|p| p.is_finite())
    }

    /// How well `text` (a record) matches the expanded query: its terms' counts saturated as
    /// BM25 saturates them (records are windows of a similar size: no length normalisation),
    /// weighed by the sessions' idf.
    pub fn match_of(&self, text: &str) -> f64 {
        let counts = terms::term_counts(text);
        self.expanded
            .iter()
            .filter_map(|(term, weight)| {
                let tf = f64::from(*counts.get(term)?);
                let df = self.collection.df(term);
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
    rank_in_pool(store, agents, input, tuning, model, Pool::SEARCH)
}

/// [`rank_sessions`], ranking every session up to `sizes.all` of them and a pool past it.
fn rank_in_pool(
    store: &dyn Sessions,
    agents: &[String],
    input: &RankInput<'_>,
    tuning: &Tuning,
    model: Option<&model::Logistic>,
    sizes: Pool,
) -> Result<Ranking> {
    let mut sessions: Vec<Arc<SessionInfo>> =
        store.sessions(agents)?.into_iter().filter(|s| Some(s.session_id.as_str()) != input.session).collect();
    let (own, with_context, turns) = query_terms(input.question, input.context, tuning);
    if sessions.is_empty() || with_context.is_empty() {
        return Ok(Ranking {
            sessions: Vec::new(),
            among: 0,
            expanded: Vec::new(),
            collection: Collection::new(Vec::new()),
        });
    }
    // The last learnt first: a session's place is how many sessions memory learnt since. (Not
    // by date: a backfill or a host's clock may date a session out of turn; the order the
    // sessions reached memory is the conversation's own.)
    sessions.sort_by_key(|s| std::cmp::Reverse(s.key));
    let place = Places::new(&sessions);
    let mut collection = Collection::new(sessions.iter().map(|s| f64::from(s.length)).collect());
    fetch(store, agents, &mut collection, &place, &bm25::merge(&[&with_context, &turns]), None)?;
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
            if let Some(i) = place.of(key) {
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
    let evidence = EvidenceOf::new(input.evidence);
    let asked = input.project;
    let same: Vec<bool> = sessions.iter().map(|s| asked.is_some() && s.project.as_deref() == asked).collect();
    let pool = sizes.of(&sessions, &[&first, &plain, &before], &same, &evidence);
    let within: Option<Vec<i64>> = (pool.len() < sessions.len()).then(|| {
        let mut keys: Vec<i64> = pool.iter().map(|&i| sessions[i].key).collect();
        keys.sort_unstable();
        keys
    });
    fetch(store, agents, &mut collection, &place, &bm25::merge(&[&expanded, &alone]), within.as_deref())?;
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
        same: &same,
        evidence: &evidence,
        input,
        query_terms: own.iter().map(|(_, w)| w).sum(),
    };
    let rows = features.rows(&pool);
    let among = sessions.len();
    let picked = model.map(|m| Picked::of(&m.features));
    let sessions = pool
        .iter()
        .zip(rows)
        .map(|(&i, features)| {
            let probability = match (model, &picked) {
                (Some(m), Some(p)) => m.probability(&p.values(&features)),
                // No model: the second pass alone, relative to the best.
                _ => features[1],
            };
            RankedSession { info: SessionInfo::clone(&sessions[i]), probability, features }
        })
        .collect();
    Ok(Ranking { sessions, among, expanded, collection })
}

/// `row`'s values of the features `names` (in their order).
pub fn pick(names: &[String], row: &[f64]) -> Vec<f64> {
    Picked::of(names).values(row)
}

/// A model's features found in [`FEATURES`] once, to read them from every row of a ranking.
struct Picked(Vec<Option<usize>>);

impl Picked {
    fn of(names: &[String]) -> Picked {
        Picked(names.iter().map(|n| FEATURES.iter().position(|f| f == n)).collect())
    }

    fn values(&self, row: &[f64]) -> Vec<f64> {
        self.0.iter().map(|i| i.and_then(|i| row.get(i).copied()).unwrap_or(0.0)).collect()
    }
}

/// The fewest terms a question counts as when its context is weighed against it: a short
/// follow-up ("what did we settle on?") leans on the conversation before it. RealMem dev, whose
/// questions are long: session R_all@10 0.708 with 8 and without.
const SHORT_QUESTION_TERMS: f64 = 8.0;

/// The question alone's feedback (a feature): its best three sessions, fifty terms (RealMem dev,
/// `../shared/research/ranking`'s features).
const QUESTION_FEEDBACK_SESSIONS: usize = 3;
const QUESTION_FEEDBACK_TERMS: usize = 50;

/// How many sessions are ranked by every pass. Up to [`Pool::all`] sessions (every haystack of
/// RealMem and LoCoMo holds fewer than 250), all of them. Past it, the second pass, the features
/// and the model see only a pool: each first pass's best [`Pool::each`], the newest as many, the
/// asker's project's newest as many, and every session a candidate record came from. The second
/// pass's hundred feedback terms are said by most sessions of a large store: scoring every
/// session was most of a search at a million records, and a session that none of the first
/// passes, recency or a record puts near the top is not one the model ranks there.
#[derive(Debug, Clone, Copy)]
struct Pool {
    all: usize,
    each: usize,
}

impl Pool {
    const SEARCH: Pool = Pool { all: 1_000, each: 250 };

    /// The sessions (places, ascending) to rank.
    fn of(
        self,
        sessions: &[Arc<SessionInfo>],
        passes: &[&[f64]],
        same: &[bool],
        evidence: &EvidenceOf<'_>,
    ) -> Vec<usize> {
        let n = sessions.len();
        if n <= self.all {
            return (0..n).collect();
        }
        let mut chosen = vec![false; n];
        for scores in passes {
            for (i, _) in best_of(scores, self.each) {
                chosen[i] = true;
            }
        }
        // Newest first: the sessions are in that order.
        chosen[..self.each.min(n)].iter_mut().for_each(|c| *c = true);
        for i in (0..n).filter(|&i| same[i]).take(self.each) {
            chosen[i] = true;
        }
        for (i, s) in sessions.iter().enumerate() {
            if evidence.get(s).is_some() {
                chosen[i] = true;
            }
        }
        (0..n).filter(|&i| chosen[i]).collect()
    }
}

/// The `n` best-scored sessions with a positive score (index, score), best first.
fn best_of(scores: &[f64], n: usize) -> Vec<(usize, f64)> {
    let mut best: Vec<(usize, f64)> = scores.iter().copied().enumerate().filter(|(_, s)| *s > 0.0).collect();
    let order = |a: &(usize, f64), b: &(usize, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if best.len() > n && n > 0 {
        best.select_nth_unstable_by(n - 1, order);
    }
    best.truncate(n);
    best.sort_by(order);
    best
}

/// Each session's place in the ranking (newest first) by its key: an array over the keys'
/// span when they are dense (a store numbers its sessions from 1), a map otherwise.
enum Places {
    Span { lowest: i64, place: Vec<u32> },
    Map(HashMap<i64, usize>),
}

impl Places {
    fn new(sessions: &[Arc<SessionInfo>]) -> Places {
        let (lowest, highest) = sessions.iter().fold((i64::MAX, i64::MIN), |(l, h), s| (l.min(s.key), h.max(s.key)));
        let span = highest.checked_sub(lowest).and_then(|d| usize::try_from(d).ok()).map(|d| d + 1);
        match span {
            Some(span) if span <= 4 * sessions.len() + 1_024 && sessions.len() < u32::MAX as usize => {
                let mut place = vec![u32::MAX; span];
                for (i, s) in sessions.iter().enumerate() {
                    place[(s.key - lowest) as usize] = i as u32;
                }
                Places::Span { lowest, place }
            }
            _ => Places::Map(sessions.iter().enumerate().map(|(i, s)| (s.key, i)).collect()),
        }
    }

    fn of(&self, key: i64) -> Option<usize> {
        match self {
            Places::Span { lowest, place } => {
                let at = usize::try_from(key.checked_sub(*lowest)?).ok()?;
                place.get(at).filter(|&&p| p != u32::MAX).map(|&p| p as usize)
            }
            Places::Map(map) => map.get(&key).copied(),
        }
    }
}

/// The search's evidence by agent, then session id: looked up for every session without
/// building a key.
struct EvidenceOf<'a>(HashMap<&'a str, HashMap<&'a str, Evidence>>);

impl<'a> EvidenceOf<'a> {
    fn new(evidence: &'a HashMap<(String, String), Evidence>) -> EvidenceOf<'a> {
        let mut by: HashMap<&str, HashMap<&str, Evidence>> = HashMap::new();
        for ((agent, session), e) in evidence {
            by.entry(agent.as_str()).or_default().insert(session.as_str(), *e);
        }
        EvidenceOf(by)
    }

    fn get(&self, s: &SessionInfo) -> Option<Evidence> {
        self.0.get(s.agent_id.as_str())?.get(s.session_id.as_str()).copied()
    }
}

/// Fetch the postings of `query`'s terms the collection does not hold yet: every session's,
/// or with `within` (session keys, ascending) the pool's alone, each term still weighed by every
/// session that says it.
fn fetch(
    store: &dyn Sessions,
    agents: &[String],
    collection: &mut Collection,
    place: &Places,
    query: &[(String, f64)],
    within: Option<&[i64]>,
) -> Result<()> {
    let missing = collection.missing(query);
    if missing.is_empty() {
        return Ok(());
    }
    let postings = match within {
        None => store.session_postings(agents, &missing)?,
        Some(keys) => {
            let (df, postings) = store.session_postings_within(agents, &missing, keys)?;
            for (t, df) in missing.iter().zip(df) {
                collection.pooled_df.insert(t.clone(), df);
            }
            postings
        }
    };
    for t in &missing {
        collection.postings.insert(t.clone(), Vec::new());
    }
    for (term, key, tf) in postings {
        if let (Some(s), Some(list)) = (place.of(key), missing.get(term).and_then(|t| collection.postings.get_mut(t))) {
            list.push((s, tf));
        }
    }
    Ok(())
}

/// What the features are computed from, per session (newest first).
struct Features<'a> {
    sessions: &'a [Arc<SessionInfo>],
    first: &'a [f64],
    second: &'a [f64],
    plain: &'a [f64],
    feedback_alone: &'a [f64],
    before: &'a [f64],
    cov: &'a [f64],
    cov_idf: &'a [f64],
    /// Whether each session is of the asker's project.
    same: &'a [bool],
    evidence: &'a EvidenceOf<'a>,
    input: &'a RankInput<'a>,
    query_terms: f64,
}

impl Features<'_> {
    /// One row of [`FEATURES`] per session of `pool` (places, ascending). Ranks and relative
    /// scores are among every session (a pass scored only within the pool scores nothing
    /// outside it).
    fn rows(&self, pool: &[usize]) -> Vec<Vec<f64>> {
        let n = self.sessions.len();
        let (second_norm, second_rank) = (relative(self.second), ranks(self.second, pool));
        let (first_norm, first_rank) = (relative(self.first), ranks(self.first, pool));
        let plain_norm = relative(self.plain);
        let (alone_norm, alone_rank) = (relative(self.feedback_alone), ranks(self.feedback_alone, pool));
        let before_norm = relative(self.before);
        // Among the ten best by the second pass, 1 for the most recent; 11 for the rest.
        let mut top: Vec<usize> = best_of(self.second, 10).into_iter().map(|(i, _)| i).collect();
        if top.len() < 10 {
            // Sessions the second pass did not score at all, newest first, as a full sort put them.
            top.extend((0..n).filter(|&i| self.second[i] <= 0.0).take(10 - top.len()));
        }
        top.sort_unstable();
        let mut back_rank: HashMap<usize, f64> = HashMap::new();
        for (r, &s) in top.iter().enumerate() {
            back_rank.insert(s, (r + 1) as f64);
        }
        // The project's own sessions, newest first: 1, 2, …; 999 for the others.
        let project_sessions = self.same.iter().filter(|x| **x).count() as f64;
        let mut project_recency = vec![999.0; n];
        let mut k = 0.0;
        for (i, is_same) in self.same.iter().enumerate() {
            if *is_same {
                k += 1.0;
                project_recency[i] = k;
            }
        }
        let has_context = f64::from(u8::from(!self.input.context.is_empty()));
        pool.iter()
            .enumerate()
            .map(|(at, &i)| {
                let s = &self.sessions[i];
                let found = self.evidence.get(s);
                let evidence = found.unwrap_or_default();
                let days = s.last_at.map_or(0.0, |t| ((self.input.as_of - t).max(0) as f64) / 86_400_000.0);
                vec![
                    self.second[i],
                    second_norm[i],
                    second_rank[at],
                    first_norm[i],
                    first_rank[at],
                    plain_norm[i],
                    alone_norm[i],
                    alone_rank[at],
                    before_norm[i],
                    self.cov[i],
                    self.cov_idf[i],
                    (i + 1) as f64,
                    back_rank.get(&i).copied().unwrap_or(11.0),
                    days,
                    f64::from(s.length),
                    f64::from(s.messages),
                    n as f64,
                    self.query_terms,
                    has_context,
                    evidence.meaning,
                    evidence.words,
                    f64::from(u8::from(found.is_some())),
                    f64::from(u8::from(self.same[i])),
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

/// The place of each of `pool`'s values (places, ascending) among all of `v`'s: 1 for the
/// largest, ties in order.
fn ranks(v: &[f64], pool: &[usize]) -> Vec<f64> {
    // The pool's values in order, largest first (ties: the earlier place first), each with its
    // place in `pool`.
    let mut order: Vec<(f64, usize, usize)> = pool.iter().enumerate().map(|(at, &i)| (v[i], i, at)).collect();
    order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out = vec![0.0; pool.len()];
    if pool.len() == v.len() {
        // Every value is the pool's: its place in the order is its rank.
        for (r, &(_, _, at)) in order.iter().enumerate() {
            out[at] = (r + 1) as f64;
        }
        return out;
    }
    // Each value counted at the first of the pool's (in order) it comes before: a pool value's
    // rank is one more than the values counted at or above its place. (A value does not come
    // before itself: it is counted at the next place.)
    let mut ahead = vec![0usize; pool.len() + 1];
    for (j, &x) in v.iter().enumerate() {
        ahead[order.partition_point(|&(y, i, _)| y > x || (y == x && i <= j))] += 1;
    }
    let mut sum = 0;
    for (r, &(_, _, at)) in order.iter().enumerate() {
        sum += ahead[r];
        out[at] = (sum + 1) as f64;
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

    /// Past the size where only a pool is ranked, the sessions the model puts first, their
    /// probabilities and the features counted over every session are those of ranking all.
    #[test]
    fn a_pool_ranks_the_likeliest_sessions_as_ranking_every_session_does() {
        use crate::record::{NewRecord, RecordKind};
        use crate::store::{Insert, Records, SqliteStore};
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("m.db")).unwrap();
        let topic = |s: usize| if s.is_multiple_of(15) { 0 } else { 1 + s % 5 };
        const TOPICS: &[&str] = &[
            "the postgres migration and its rollback plan",
            "peanut allergy and the birthday party menu",
            "guitar lessons on tuesday evenings",
            "the lisbon flight, hotel and museum tickets",
            "quarterly budget review with the finance team",
            "garden beds, tomatoes and the watering schedule",
        ];
        let records: Vec<NewRecord> = (0..600)
            .map(|i| NewRecord {
                agent_id: "main".into(),
                // Every fifteenth session is about the migration; the rest about one of five others.
                text: format!("Turn {i}: about {} (note {}).", TOPICS[topic(i / 5)], i % 13),
                kind: RecordKind::Verbatim,
                event_time: Some(1_700_000_000_000 + i as i64 * 60_000),
                source_session_ids: vec![format!("s{}", i / 5)],
                source_message_ids: vec![i as i64],
                ..NewRecord::default()
            })
            .collect();
        let inserts: Vec<Insert<'_>> =
            records.iter().map(|r| Insert { record: r, vector: None, triples: &[] }).collect();
        store.insert_many(&inserts).unwrap();
        let evidence: HashMap<(String, String), Evidence> =
            [(("main".to_string(), "s3".to_string()), Evidence { meaning: 0.5, words: 1.0 })].into_iter().collect();
        let context = [ContextTurn::new(Role::Assistant, "We were sorting out the rollback of the database move.")];
        let input = RankInput {
            question: "what did we settle on for the postgres migration?",
            context: &context,
            project: None,
            session: None,
            as_of: 1_800_000_000_000,
            evidence: &evidence,
        };
        let model = model::SHIPPED.as_ref().map(|m| m.plain.clone()).unwrap();
        let agents = ["main".to_string()];
        let tuning = Tuning::default();
        let all =
            rank_in_pool(&store, &agents, &input, &tuning, Some(&model), Pool { all: usize::MAX, each: 0 }).unwrap();
        let pooled = rank_in_pool(&store, &agents, &input, &tuning, Some(&model), Pool { all: 20, each: 25 }).unwrap();
        assert_eq!((all.sessions.len(), all.among, pooled.among), (120, 120, 120));
        assert!(pooled.sessions.len() < 90, "a pool, not every session: {}", pooled.sessions.len());
        assert!(pooled.sessions.iter().any(|r| r.info.session_id == "s3"), "a candidate's session is ranked");
        let best = |r: &Ranking| {
            let mut v: Vec<(String, f64)> =
                r.sessions.iter().map(|s| (s.info.session_id.clone(), s.probability)).collect();
            v.sort_by(|a, b| b.1.total_cmp(&a.1));
            v.truncate(5);
            v
        };
        let (a, p) = (best(&all), best(&pooled));
        assert_eq!(
            a.iter().map(|x| &x.0).collect::<Vec<_>>(),
            p.iter().map(|x| &x.0).collect::<Vec<_>>(),
            "{a:?} / {p:?}"
        );
        // Every feature of a pooled session counted over all sessions is the same as ranking all
        // (the second passes' ranks, and which of their ten best is newest, are the pool's).
        let exact = [
            "crm3",
            "crm3_norm",
            "ctx_norm",
            "ctx_rank",
            "bm25_norm",
            "rm3_norm",
            "turns_norm",
            "cov",
            "cov_idf",
            "back",
            "days",
            "length",
            "candidates",
            "meaning_max",
            "has_record",
            "project_recency",
        ];
        for r in &pooled.sessions {
            let full = all.sessions.iter().find(|s| s.info.key == r.info.key).unwrap();
            for name in exact {
                let i = FEATURES.iter().position(|f| *f == name).unwrap();
                assert_eq!(r.features[i], full.features[i], "{name} of {}", r.info.session_id);
            }
        }
    }

    #[test]
    fn ranks_and_relative_values() {
        assert_eq!(ranks(&[0.1, 0.5, 0.1], &[0, 1, 2]), vec![2.0, 1.0, 3.0]);
        // Among all, the pool's alone asked: the same places.
        assert_eq!(ranks(&[0.1, 0.5, 0.1, 0.7], &[0, 2]), vec![3.0, 4.0]);
        assert_eq!(ranks(&[0.1, 0.5, 0.1, 0.7], &[1]), vec![2.0]);
        assert_eq!(relative(&[1.0, 2.0]), vec![0.5, 1.0]);
        assert_eq!(relative(&[0.0, 0.0]), vec![0.0, 0.0]);
    }
}
