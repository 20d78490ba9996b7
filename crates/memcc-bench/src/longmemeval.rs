//! LongMemEval, in its upstream format: a list of questions, each with its own haystack of
//! dated sessions (`haystack_sessions` of `{role, content, has_answer?}` turns), gold
//! `answer_session_ids`, and `_abs` question ids for abstention.

use std::collections::HashSet;
use std::path::Path;

use serde::Deserialize;

use crate::BenchError;
use crate::haystack::{HQuestion, HSession, HTurn, Haystack};

#[derive(Debug, Clone, Deserialize)]
pub struct Item {
    pub question_id: String,
    pub question_type: String,
    pub question: String,
    /// Usually a string; a few upstream answers are numbers.
    pub answer: serde_json::Value,
    pub question_date: String,
    pub haystack_session_ids: Vec<String>,
    pub haystack_dates: Vec<String>,
    pub haystack_sessions: Vec<Vec<LmeTurn>>,
    pub answer_session_ids: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct LmeTurn {
    pub role: String,
    pub content: String,
    #[serde(default)]
    pub has_answer: Option<bool>,
}

/// "2023/05/20 (Sat) 02:21" → ms since the epoch.
pub fn parse_date(s: &str) -> Option<i64> {
    let cleaned: String =
        s.split(['(', ')']).enumerate().filter(|(i, _)| i % 2 == 0).map(|(_, p)| p).collect::<Vec<_>>().join(" ");
    let cleaned = cleaned.split_whitespace().collect::<Vec<_>>().join(" ");
    chrono::NaiveDateTime::parse_from_str(&cleaned, "%Y/%m/%d %H:%M").ok().map(|d| d.and_utc().timestamp_millis())
}

pub fn load(path: &Path) -> Result<Vec<Item>, BenchError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| BenchError::Input(format!("cannot read {}: {e}", path.display())))?;
    parse(&text)
}

pub fn parse(text: &str) -> Result<Vec<Item>, BenchError> {
    let items: Vec<Item> =
        serde_json::from_str(text).map_err(|e| BenchError::Input(format!("not a LongMemEval file: {e}")))?;
    for it in &items {
        let n = it.haystack_sessions.len();
        if it.haystack_session_ids.len() != n || it.haystack_dates.len() != n {
            return Err(BenchError::Input(format!(
                "not a LongMemEval file: {}: {} sessions, {} session ids, {} dates",
                it.question_id,
                n,
                it.haystack_session_ids.len(),
                it.haystack_dates.len()
            )));
        }
        if parse_date(&it.question_date).is_none() {
            return Err(BenchError::Input(format!(
                "{}: unreadable question_date {:?}",
                it.question_id, it.question_date
            )));
        }
    }
    Ok(items)
}

/// One haystack per question.
pub fn to_haystacks(items: &[Item]) -> Vec<Haystack> {
    items
        .iter()
        .map(|it| {
            let mut gold_turns = HashSet::new();
            let sessions = it
                .haystack_sessions
                .iter()
                .zip(&it.haystack_session_ids)
                .zip(&it.haystack_dates)
                .map(|((turns, sid), date)| HSession {
                    project: None,
                    unit: sid.clone(),
                    time: parse_date(date),
                    turns: turns
                        .iter()
                        .enumerate()
                        .map(|(k, t)| {
                            let unit = format!("{sid}#{k}");
                            if t.has_answer == Some(true) {
                                gold_turns.insert(unit.clone());
                            }
                            HTurn { unit, role: t.role.clone(), speaker: None, text: t.content.clone() }
                        })
                        .collect(),
                })
                .collect();
            let present: HashSet<&String> = it.haystack_session_ids.iter().collect();
            Haystack {
                id: it.question_id.clone(),
                sessions,
                questions: vec![HQuestion {
                    id: it.question_id.clone(),
                    text: it.question.clone(),
                    category: it.question_type.clone(),
                    gold_sessions: it.answer_session_ids.iter().filter(|s| present.contains(s)).cloned().collect(),
                    gold_turns,
                    as_of: parse_date(&it.question_date),
                    abstention: it.question_id.ends_with("_abs"),
                    answer: Some(match &it.answer {
                        serde_json::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    }),
                    adversarial_answer: None,
                    asked_at: None,
                    gold_points: Vec::new(),
                    superseded_points: Vec::new(),
                    gold_elsewhere: None,
                }],
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_shape() {
        assert_eq!(parse_date("2023/05/20 (Sat) 02:21"), Some(1_684_549_260_000));
        assert!(parse("{}").is_err());
        let bad = r#"[{"question_id":"q","question_type":"t","question":"?","answer":"a","question_date":"2023/05/20 (Sat) 02:21",
            "haystack_session_ids":["a","b"],"haystack_dates":["2023/05/20 (Sat) 02:21"],"haystack_sessions":[[],[]],"answer_session_ids":[]}]"#;
        assert!(parse(bad).unwrap_err().to_string().contains("2 sessions, 2 session ids, 1 dates"));
    }
}
