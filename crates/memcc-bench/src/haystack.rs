//! The shape every dataset is turned into: a haystack of dated sessions of turns, and the
//! questions asked of it with their gold units. Units are strings: a session id and a turn id.

use std::collections::HashSet;

#[derive(Debug, Clone, PartialEq)]
pub struct HTurn {
    /// The turn's unit id (LoCoMo `D3:12`, LongMemEval `<session>#<index>`).
    pub unit: String,
    /// `user` or `assistant`: how the turn is replayed through the context engine.
    pub role: String,
    /// Shown before the text when the dataset names speakers (LoCoMo).
    pub speaker: Option<String>,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HSession {
    pub unit: String,
    pub time: Option<i64>,
    pub turns: Vec<HTurn>,
    /// The project the session belongs to, where the dataset says (RealMem: its
    /// `session_identifier`'s project). Metadata: MemCC is told it only in a run that asks
    /// (`Options::projects`), as a host that knows its project would tell it.
    pub project: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HQuestion {
    pub id: String,
    pub text: String,
    /// LoCoMo category number ("1".."5") or LongMemEval question type.
    pub category: String,
    pub gold_sessions: HashSet<String>,
    pub gold_turns: HashSet<String>,
    /// The question's "now".
    pub as_of: Option<i64>,
    /// LongMemEval `_abs`: the answer is not in the haystack; excluded from recall.
    pub abstention: bool,
    pub answer: Option<String>,
    /// LoCoMo category 5: the answer about the *other* speaker that the question tries to elicit.
    pub adversarial_answer: Option<String>,
    /// Where in the history the question is asked; `None`: after all of it (LoCoMo, LongMemEval).
    pub asked_at: Option<AskedAt>,
    /// RealMem: the memory points the answer draws on (each paraphrases a turn of a gold
    /// session); a prompt holds the answer when it holds every point (strict) or half (loose).
    pub gold_points: Vec<String>,
    /// RealMem "Dynamic Updating": the older versions of the gold points — points of earlier
    /// sessions of the same project under the same `【label】` — that the answer must not take
    /// for current.
    pub superseded_points: Vec<String>,
    /// Whether one of its gold sessions is of another project than the session it is asked in
    /// (RealMem: gold metadata, never told to MemCC); `None` where the dataset has no projects.
    pub gold_elsewhere: Option<bool>,
}

/// A question asked partway through a haystack (RealMem's protocol): memory holds the sessions
/// before `session` only, and the question is turn `turn` of that session, after its earlier
/// turns. The sessions from `session` on are replayed after it is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AskedAt {
    pub session: usize,
    pub turn: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Haystack {
    pub id: String,
    pub sessions: Vec<HSession>,
    pub questions: Vec<HQuestion>,
}

impl HQuestion {
    /// The session before which the question is asked: `sessions` when it is asked at the end.
    pub fn session_asked(&self, sessions: usize) -> usize {
        self.asked_at.map_or(sessions, |a| a.session.min(sessions))
    }
}

impl Haystack {
    /// The questions asked before session `s` is replayed (`s == sessions.len()`: at the end),
    /// in the order they are asked.
    pub fn questions_before(&self, s: usize) -> impl Iterator<Item = &HQuestion> {
        let n = self.sessions.len();
        let mut qs: Vec<&HQuestion> = self.questions.iter().filter(|q| q.session_asked(n) == s).collect();
        qs.sort_by_key(|q| q.asked_at.map(|a| a.turn));
        qs.into_iter()
    }

    /// The turns of `q`'s own session before it (empty when it is asked after the history).
    pub fn turns_before(&self, q: &HQuestion) -> &[HTurn] {
        q.asked_at
            .and_then(|a| self.sessions.get(a.session).map(|s| &s.turns[..a.turn.min(s.turns.len())]))
            .unwrap_or_default()
    }
}

impl HTurn {
    pub fn display_text(&self) -> String {
        match &self.speaker {
            Some(s) => format!("{s}: {}", self.text),
            None => self.text.clone(),
        }
    }
}
