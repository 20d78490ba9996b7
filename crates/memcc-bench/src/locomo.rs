//! The LoCoMo dataset (`locomo10.json` format): loading, validation, evidence ids.

use memcc::lab::core::text::static_regex;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use crate::BenchError;
use crate::haystack::{HQuestion, HSession, HTurn, Haystack};

#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub dia_id: DiaId,
    pub speaker: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub number: u32,
    /// Milliseconds since the epoch of the session's date, when it parses.
    pub time: Option<i64>,
    pub turns: Vec<Turn>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub index: usize,
    pub question: String,
    pub category: u8,
    /// Evidence as given.
    pub evidence: Vec<String>,
    /// Category 5 has none (only `adversarial_answer`).
    pub answer: Option<String>,
    pub adversarial_answer: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    pub sample_id: String,
    pub speaker_a: String,
    pub speaker_b: String,
    pub sessions: Vec<Session>,
    pub questions: Vec<Question>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DiaId {
    pub session: u32,
    pub turn: u32,
}

impl std::fmt::Display for DiaId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "D{}:{}", self.session, self.turn)
    }
}

/// What became of one evidence id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evidence {
    /// A turn that exists.
    Turn(DiaId),
    /// Normalised (`D30:05` → `D30:5`, `D:11:26` → `D11:26`) to a turn that exists.
    Normalised { given: String, turn: DiaId },
    /// Parses, but names no turn of the conversation; its session may still exist.
    Dangling { given: String, id: DiaId },
    /// Does not parse at all (e.g. `D`).
    Unparseable(String),
}

static STRICT: LazyLock<Regex> = LazyLock::new(|| static_regex(r"^D([1-9]\d*):([1-9]\d*)$"));
static LOOSE: LazyLock<Regex> = LazyLock::new(|| static_regex(r"^\s*D\s*:?\s*0*(\d+)\s*:\s*0*(\d+)\s*$"));

/// Classify an evidence id against the conversation's turns.
pub fn parse_evidence(given: &str, turns: &HashSet<DiaId>) -> Evidence {
    let cap = |re: &Regex| {
        re.captures(given).and_then(|c| Some(DiaId { session: c[1].parse().ok()?, turn: c[2].parse().ok()? }))
    };
    if let Some(id) = cap(&STRICT) {
        return if turns.contains(&id) { Evidence::Turn(id) } else { Evidence::Dangling { given: given.into(), id } };
    }
    match cap(&LOOSE) {
        Some(id) if turns.contains(&id) => Evidence::Normalised { given: given.into(), turn: id },
        Some(id) => Evidence::Dangling { given: given.into(), id },
        None => Evidence::Unparseable(given.into()),
    }
}

fn parse_date(s: &str) -> Option<i64> {
    // "1:56 pm on 8 May, 2023"
    chrono::NaiveDateTime::parse_from_str(
        &s.to_lowercase().replace("am", "AM").replace("pm", "PM"),
        "%l:%M %p on %e %B, %Y",
    )
    .ok()
    .map(|d| d.and_utc().timestamp_millis())
}

/// An answer as text: upstream answers are strings, sometimes numbers.
fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

pub fn load(path: &Path) -> Result<Vec<Conversation>, BenchError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| BenchError::Input(format!("cannot read {}: {e}", path.display())))?;
    parse(&text)
}

pub fn parse(text: &str) -> Result<Vec<Conversation>, BenchError> {
    let bad = |m: String| BenchError::Input(format!("not a LoCoMo file: {m}"));
    let root: Value = serde_json::from_str(text).map_err(|e| bad(format!("invalid JSON: {e}")))?;
    let samples = root.as_array().ok_or_else(|| bad("the top level must be a list of conversations".into()))?;
    let mut out = Vec::new();
    for (i, sample) in samples.iter().enumerate() {
        let sample_id = sample["sample_id"].as_str().map_or_else(|| format!("#{i}"), String::from);
        let conv = sample
            .get("conversation")
            .and_then(Value::as_object)
            .ok_or_else(|| bad(format!("{sample_id}: no \"conversation\" object")))?;
        let str_of = |k: &str| {
            conv.get(k).and_then(Value::as_str).map(String::from).ok_or_else(|| bad(format!("{sample_id}: no {k}")))
        };
        let (speaker_a, speaker_b) = (str_of("speaker_a")?, str_of("speaker_b")?);
        let mut sessions: BTreeMap<u32, Session> = BTreeMap::new();
        for (key, value) in conv {
            let Some(n) = key.strip_prefix("session_").and_then(|r| r.parse::<u32>().ok()) else { continue };
            let turns = value.as_array().ok_or_else(|| bad(format!("{sample_id}: {key} is not a list")))?;
            let time = conv.get(&format!("session_{n}_date_time")).and_then(Value::as_str).and_then(parse_date);
            let mut parsed = Vec::with_capacity(turns.len());
            for t in turns {
                let dia = t["dia_id"].as_str().unwrap_or_default();
                let dia_id = STRICT
                    .captures(dia)
                    .and_then(|c| Some(DiaId { session: c[1].parse().ok()?, turn: c[2].parse().ok()? }))
                    .ok_or_else(|| bad(format!("{sample_id}: turn with dia_id {dia:?}")))?;
                let text = t["text"].as_str().unwrap_or_default().to_string();
                // Image turns carry a caption; it is what a text retriever can see.
                let text = match t.get("blip_caption").and_then(Value::as_str) {
                    Some(c) if !c.is_empty() => format!("{text} [shares an image: {c}]"),
                    _ => text,
                };
                parsed.push(Turn { dia_id, speaker: t["speaker"].as_str().unwrap_or_default().to_string(), text });
            }
            sessions.insert(n, Session { number: n, time, turns: parsed });
        }
        let qa =
            sample.get("qa").and_then(Value::as_array).ok_or_else(|| bad(format!("{sample_id}: no \"qa\" list")))?;
        let questions = qa
            .iter()
            .enumerate()
            .map(|(index, q)| {
                let category = q["category"]
                    .as_u64()
                    .filter(|c| (1..=5).contains(c))
                    .ok_or_else(|| bad(format!("{sample_id} qa {index}: category must be 1-5")))?
                    as u8;
                Ok(Question {
                    index,
                    question: q["question"]
                        .as_str()
                        .ok_or_else(|| bad(format!("{sample_id} qa {index}: no question")))?
                        .to_string(),
                    category,
                    evidence: q["evidence"]
                        .as_array()
                        .map(|a| a.iter().filter_map(|e| e.as_str().map(String::from)).collect())
                        .unwrap_or_default(),
                    answer: text_of(&q["answer"]),
                    adversarial_answer: text_of(&q["adversarial_answer"]),
                })
            })
            .collect::<Result<Vec<_>, BenchError>>()?;
        out.push(Conversation {
            sample_id,
            speaker_a,
            speaker_b,
            sessions: sessions.into_values().collect(),
            questions,
        });
    }
    Ok(out)
}

/// Gold units of a question, with the issues found in its evidence.
fn gold(
    conv: &Conversation,
    q: &Question,
    turns: &HashSet<DiaId>,
    issues: &mut Vec<String>,
) -> (HashSet<String>, HashSet<String>) {
    let sessions_present: HashSet<u32> = conv.sessions.iter().map(|s| s.number).collect();
    let (mut gs, mut gt) = (HashSet::new(), HashSet::new());
    for e in &q.evidence {
        match parse_evidence(e, turns) {
            Evidence::Turn(id) => {
                gs.insert(format!("S{}", id.session));
                gt.insert(id.to_string());
            }
            Evidence::Normalised { given, turn } => {
                issues.push(format!("{} q{}: {given} normalised to {turn}", conv.sample_id, q.index));
                gs.insert(format!("S{}", turn.session));
                gt.insert(turn.to_string());
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
                    gs.insert(format!("S{}", id.session));
                }
            }
            Evidence::Unparseable(given) => {
                issues.push(format!("{} q{}: {given:?} is not an evidence id; ignored", conv.sample_id, q.index))
            }
        }
    }
    (gs, gt)
}

/// One haystack per conversation; `issues` collects every evidence id that was normalised or
/// could not be used.
pub fn to_haystacks(conversations: &[Conversation], issues: &mut Vec<String>) -> Vec<Haystack> {
    conversations
        .iter()
        .map(|c| {
            let turns: HashSet<DiaId> = c.sessions.iter().flat_map(|s| s.turns.iter().map(|t| t.dia_id)).collect();
            let as_of = c.sessions.iter().filter_map(|s| s.time).max();
            Haystack {
                id: c.sample_id.clone(),
                sessions: c
                    .sessions
                    .iter()
                    .map(|s| HSession {
                        project: None,
                        unit: format!("S{}", s.number),
                        time: s.time,
                        turns: s
                            .turns
                            .iter()
                            .map(|t| HTurn {
                                unit: t.dia_id.to_string(),
                                role: if t.speaker == c.speaker_a { "user".into() } else { "assistant".into() },
                                speaker: Some(t.speaker.clone()),
                                text: t.text.clone(),
                            })
                            .collect(),
                    })
                    .collect(),
                questions: c
                    .questions
                    .iter()
                    .map(|q| {
                        let (gold_sessions, gold_turns) = gold(c, q, &turns, issues);
                        HQuestion {
                            id: format!("{}#{}", c.sample_id, q.index),
                            text: q.question.clone(),
                            category: q.category.to_string(),
                            gold_sessions,
                            gold_turns,
                            as_of,
                            abstention: false,
                            answer: q.answer.clone(),
                            adversarial_answer: q.adversarial_answer.clone(),
                            asked_at: None,
                            gold_points: Vec::new(),
                            superseded_points: Vec::new(),
                            gold_elsewhere: None,
                        }
                    })
                    .collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_ids_are_normalised_or_reported() {
        let turns: HashSet<DiaId> = [
            DiaId { session: 1, turn: 3 },
            DiaId { session: 30, turn: 5 },
            DiaId { session: 11, turn: 26 },
            DiaId { session: 10, turn: 18 },
        ]
        .into();
        assert_eq!(parse_evidence("D1:3", &turns), Evidence::Turn(DiaId { session: 1, turn: 3 }));
        assert_eq!(
            parse_evidence("D30:05", &turns),
            Evidence::Normalised { given: "D30:05".into(), turn: DiaId { session: 30, turn: 5 } }
        );
        assert_eq!(
            parse_evidence("D:11:26", &turns),
            Evidence::Normalised { given: "D:11:26".into(), turn: DiaId { session: 11, turn: 26 } }
        );
        assert_eq!(
            parse_evidence("D10:19", &turns),
            Evidence::Dangling { given: "D10:19".into(), id: DiaId { session: 10, turn: 19 } }
        );
        assert_eq!(
            parse_evidence("D4:36", &turns),
            Evidence::Dangling { given: "D4:36".into(), id: DiaId { session: 4, turn: 36 } }
        );
        assert_eq!(parse_evidence("D", &turns), Evidence::Unparseable("D".into()));
    }

    #[test]
    fn malformed_files_get_clear_errors() {
        for (text, needle) in [
            ("{", "invalid JSON"),
            ("{}", "list of conversations"),
            ("[{\"sample_id\": \"x\"}]", "no \"conversation\""),
            (
                "[{\"sample_id\": \"x\", \"conversation\": {\"speaker_a\": \"A\", \"speaker_b\": \"B\"}, \"qa\": [{\"question\": \"q\", \"category\": 9}]}]",
                "category must be 1-5",
            ),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }

    #[test]
    fn dates_parse() {
        assert_eq!(parse_date("1:56 pm on 8 May, 2023"), Some(1_683_554_160_000));
        assert!(parse_date("10:37 am on 27 June, 2023").is_some());
    }
}
