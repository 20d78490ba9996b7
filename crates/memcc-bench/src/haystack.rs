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
}

#[derive(Debug, Clone, PartialEq)]
pub struct Haystack {
    pub id: String,
    pub sessions: Vec<HSession>,
    pub questions: Vec<HQuestion>,
}

impl HTurn {
    pub fn display_text(&self) -> String {
        match &self.speaker {
            Some(s) => format!("{s}: {}", self.text),
            None => self.text.clone(),
        }
    }
}
