//! RealMem (`*_dialogues_256k.json`, upstream format): per persona one user and one assistant
//! over months of interleaved projects. Each file is one haystack; PATH may be one file or a
//! directory of them (read in name order).
//!
//! MemCC sees what a host would see: speaker, content and the session's date. The gold and the
//! metadata — `session_identifier`, `extracted_memory`, `memory_used`, `topic`,
//! `category_name` — only build the questions' gold, never a turn.
//!
//! Upstream protocol: sessions in time order; a query (a user turn with `is_query`) is answered
//! with memory of the sessions before its own ([`AskedAt`]), then its session is added. Its gold
//! is in the next assistant turn: `memory_used[]` (memory points, each equal to an
//! `extracted_memory` item of an earlier session, whose `source_turn` names the turn) and
//! `memory_session_uuids[]`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::BenchError;
use crate::haystack::{AskedAt, HQuestion, HSession, HTurn, Haystack};

#[derive(Debug, Clone, Deserialize)]
pub struct Persona {
    #[serde(rename = "_metadata", default)]
    pub metadata: Metadata,
    pub dialogues: Vec<Dialogue>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Metadata {
    #[serde(default)]
    pub person_name: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Dialogue {
    pub session_uuid: String,
    /// "Travel_Planning_6:S4_01": the project before the colon (gold metadata: it only finds the
    /// older versions of a point, never reaches MemCC).
    #[serde(default)]
    pub session_identifier: String,
    /// "2025-12-17 (Wednesday)".
    pub current_time: String,
    #[serde(default)]
    pub extracted_memory: Vec<MemoryPoint>,
    pub dialogue_turns: Vec<Turn>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct MemoryPoint {
    /// Text; upstream writes a JSON object here in some persona files, read as its serialised form.
    #[serde(deserialize_with = "text_or_json")]
    pub content: String,
    /// 0-based index into the session's `dialogue_turns`; upstream writes -1 for a few points
    /// it could not place (those have session-level gold only).
    #[serde(default)]
    pub source_turn: Option<i64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Turn {
    pub speaker: String,
    pub content: String,
    #[serde(default)]
    pub is_query: bool,
    #[serde(default)]
    pub query_id: Option<String>,
    #[serde(default)]
    pub category_name: Option<String>,
    #[serde(default)]
    pub memory_used: Vec<UsedMemory>,
    #[serde(default)]
    pub memory_session_uuids: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct UsedMemory {
    pub session_uuid: String,
    /// As [`MemoryPoint::content`], so the two still compare equal.
    #[serde(deserialize_with = "text_or_json")]
    pub content: String,
}

/// A string as it is; any other JSON value (upstream's object-valued memory points) as its
/// serialised text, the same on both sides of a gold comparison.
fn text_or_json<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    })
}

/// The persona files under `path` (a file, or a directory's `*.json` but its licence and
/// README), in name order.
pub fn files(path: &Path) -> Result<Vec<PathBuf>, BenchError> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let entries =
        std::fs::read_dir(path).map_err(|e| BenchError::Input(format!("cannot read {}: {e}", path.display())))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(BenchError::Input(format!("{}: no RealMem persona files (*.json) found", path.display())));
    }
    Ok(files)
}

pub fn load(path: &Path) -> Result<Vec<(String, Persona)>, BenchError> {
    files(path)?
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f)
                .map_err(|e| BenchError::Input(format!("cannot read {}: {e}", f.display())))?;
            let id = f.file_stem().map(|s| s.to_string_lossy().replace("_dialogues_256k", "")).unwrap_or_default();
            Ok((id, parse(&text).map_err(|e| BenchError::Input(format!("{}: {e}", f.display())))?))
        })
        .collect()
}

pub fn parse(text: &str) -> Result<Persona, BenchError> {
    serde_json::from_str(text).map_err(|e| BenchError::Input(format!("not a RealMem file: {e}")))
}

/// "2025-12-17 (Wednesday)" → that day at 09:00 UTC, in ms since the epoch.
pub fn parse_day(s: &str) -> Option<i64> {
    let day = s.split_whitespace().next()?;
    let d = chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d").ok()?;
    Some(d.and_hms_opt(9, 0, 0)?.and_utc().timestamp_millis())
}

/// Sessions of one day are an hour apart in their order (upstream dates them by day only), so
/// turn times grow through the history.
const SAME_DAY_STEP_MS: i64 = 3_600_000;

/// One haystack per persona. `issues` collects gold that cannot be traced (a memory point that
/// matches no extracted memory of its session, a session id that is not earlier in the history).
pub fn to_haystacks(personas: &[(String, Persona)], issues: &mut Vec<String>) -> Vec<Haystack> {
    personas.iter().map(|(id, p)| to_haystack(id, p, issues)).collect()
}

fn to_haystack(id: &str, p: &Persona, issues: &mut Vec<String>) -> Haystack {
    let unit = |uuid: &str, k: usize| format!("{uuid}#{k}");
    let mut sessions = Vec::with_capacity(p.dialogues.len());
    let mut questions = Vec::new();
    let mut seen: HashMap<&str, &Dialogue> = HashMap::new();
    let mut last_day: Option<(i64, i64)> = None;
    for (si, d) in p.dialogues.iter().enumerate() {
        let day = parse_day(&d.current_time);
        if day.is_none() {
            issues.push(format!("{id}: session {}: unreadable date {:?}", d.session_uuid, d.current_time));
        }
        let time = day.map(|day| {
            let k = match last_day {
                Some((prev, k)) if prev == day => k + 1,
                _ => 0,
            };
            last_day = Some((day, k));
            day + k * SAME_DAY_STEP_MS
        });
        let turns: Vec<HTurn> = d
            .dialogue_turns
            .iter()
            .enumerate()
            .map(|(k, t)| HTurn {
                unit: unit(&d.session_uuid, k),
                role: if t.speaker.eq_ignore_ascii_case("user") { "user" } else { "assistant" }.into(),
                speaker: None,
                text: t.content.clone(),
            })
            .collect();
        for (k, t) in d.dialogue_turns.iter().enumerate().filter(|(_, t)| t.is_query) {
            let qid = t.query_id.clone().unwrap_or_else(|| format!("{}#{k}", d.session_uuid));
            let Some(answer) = d.dialogue_turns.get(k + 1) else {
                issues.push(format!("{id}: {qid}: no answer turn after the query"));
                continue;
            };
            let mut gold_sessions = HashSet::new();
            let mut gold_turns = HashSet::new();
            for uuid in answer.memory_session_uuids.iter().chain(answer.memory_used.iter().map(|m| &m.session_uuid)) {
                if seen.contains_key(uuid.as_str()) {
                    gold_sessions.insert(uuid.clone());
                } else {
                    issues.push(format!("{id}: {qid}: gold session {uuid} is not earlier in the history"));
                }
            }
            for m in &answer.memory_used {
                let source = seen
                    .get(m.session_uuid.as_str())
                    .and_then(|s| s.extracted_memory.iter().find(|e| e.content == m.content))
                    .and_then(|e| e.source_turn)
                    .and_then(|k| usize::try_from(k).ok());
                match source {
                    Some(k) => {
                        gold_turns.insert(unit(&m.session_uuid, k));
                    }
                    None => issues.push(format!("{id}: {qid}: a memory point of {} names no turn", m.session_uuid)),
                }
            }
            questions.push(HQuestion {
                id: format!("{id}#{qid}"),
                text: t.content.clone(),
                category: t.category_name.clone().unwrap_or_else(|| "unknown".into()),
                gold_sessions,
                gold_turns,
                as_of: time.map(|s| crate::pipeline::turn_time(Some(s), k)),
                abstention: false,
                answer: None,
                adversarial_answer: None,
                asked_at: Some(AskedAt { session: si, turn: k }),
                gold_points: answer.memory_used.iter().map(|m| m.content.clone()).collect(),
                superseded_points: if t.category_name.as_deref() == Some(DYNAMIC_UPDATING) {
                    superseded(d, &seen, &answer.memory_used)
                } else {
                    Vec::new()
                },
                gold_elsewhere: None,
            });
        }
        seen.insert(&d.session_uuid, d);
        let project = d.session_identifier.split(':').next().filter(|p| !p.is_empty()).map(String::from);
        sessions.push(HSession { unit: d.session_uuid.clone(), time, turns, project });
    }
    Haystack { id: id.to_string(), sessions, questions }
}

/// The category whose queries ask for the newest version of something that changed.
pub const DYNAMIC_UPDATING: &str = "Dynamic Updating";

/// A memory point's `【label】` ("Travel Plan"), when it has one.
pub fn point_label(point: &str) -> Option<&str> {
    let rest = point.trim_start().strip_prefix('【')?;
    Some(rest[..rest.find('】')?].trim())
}

/// The older versions of `used` (the gold points of a Dynamic Updating query asked in `d`): the
/// points of earlier sessions of the same project that carry a gold point's label and are not
/// gold themselves.
fn superseded(d: &Dialogue, seen: &HashMap<&str, &Dialogue>, used: &[UsedMemory]) -> Vec<String> {
    let project = |d: &Dialogue| d.session_identifier.split(':').next().unwrap_or_default().to_string();
    let here = project(d);
    let labels: HashSet<&str> = used.iter().filter_map(|m| point_label(&m.content)).collect();
    let gold: HashSet<&str> = used.iter().map(|m| m.content.as_str()).collect();
    let mut older: Vec<String> = seen
        .values()
        .filter(|e| !here.is_empty() && project(e) == here)
        .flat_map(|e| e.extracted_memory.iter())
        .filter(|p| point_label(&p.content).is_some_and(|l| labels.contains(l)) && !gold.contains(p.content.as_str()))
        .map(|p| p.content.clone())
        .collect();
    older.sort();
    older.dedup();
    older
}

/// How the memory-point rule of `memcc bench prompt` ([`crate::answer::POINT_SHARE`]) reads
/// this data: the share of gold points it finds in their own source turn alone, in another turn
/// of the same session (the turn half a session away), and in the whole session. A rule that
/// found points as often in any turn as in their own would measure nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Calibration {
    pub points: usize,
    pub in_source_turn: f64,
    pub in_other_turn: f64,
    pub in_whole_session: f64,
}

pub fn calibration(personas: &[(String, Persona)]) -> Calibration {
    use crate::answer::{contains_point, point_tokens, text_tokens};
    let (mut n, mut own, mut other, mut whole) = (0usize, 0usize, 0usize, 0usize);
    for (_, p) in personas {
        for d in &p.dialogues {
            let turns = &d.dialogue_turns;
            if turns.len() < 2 {
                continue;
            }
            let session = text_tokens(&turns.iter().map(|t| t.content.as_str()).collect::<Vec<_>>().join("\n"));
            for m in &d.extracted_memory {
                let Some(k) = m.source_turn.and_then(|k| usize::try_from(k).ok()).filter(|&k| k < turns.len()) else {
                    continue;
                };
                let point = point_tokens(&m.content);
                if point.is_empty() {
                    continue;
                }
                let away = (k + turns.len() / 2) % turns.len();
                n += 1;
                own += usize::from(contains_point(&text_tokens(&turns[k].content), &point));
                other += usize::from(contains_point(&text_tokens(&turns[away].content), &point));
                whole += usize::from(contains_point(&session, &point));
            }
        }
    }
    let share = |x: usize| if n == 0 { 0.0 } else { x as f64 / n as f64 };
    Calibration { points: n, in_source_turn: share(own), in_other_turn: share(other), in_whole_session: share(whole) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: &str = r#"{"_metadata": {"person_name": "P"}, "dialogues": [
      {"session_identifier": "Trip_1:S1_01", "session_uuid": "aa", "current_time": "2025-12-17 (Wednesday)",
       "extracted_memory": [{"content": "【Plan】 Fly to Kyoto on May 3", "source_turn": 1, "session_uuid": "aa"}],
       "dialogue_turns": [{"speaker": "User", "content": "Plan my trip", "is_query": false},
                          {"speaker": "Assistant", "content": "You fly to Kyoto on May 3."}]},
      {"session_identifier": "Trip_1:S2_01", "session_uuid": "bb", "current_time": "2025-12-17 (Wednesday)",
       "extracted_memory": [],
       "dialogue_turns": [{"speaker": "User", "content": "Hi again", "is_query": false},
                          {"speaker": "Assistant", "content": "Welcome back"},
                          {"speaker": "User", "content": "When do I fly?", "is_query": true, "query_id": "Q-1",
                           "topic": "Trip", "category_name": "Dynamic Updating"},
                          {"speaker": "Assistant", "content": "May 3",
                           "memory_used": [{"session_uuid": "aa", "content": "【Plan】 Fly to Kyoto on May 3"}],
                           "memory_session_uuids": ["aa"]}]}]}"#;

    #[test]
    fn a_query_is_asked_after_its_sessions_earlier_turns_with_gold_traced_to_turns() {
        let p = parse(TINY).unwrap();
        let mut issues = Vec::new();
        let h = to_haystack("P", &p, &mut issues);
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(h.sessions.len(), 2);
        assert_eq!(h.sessions[0].turns[1].role, "assistant");
        assert_eq!(h.sessions[0].turns[1].display_text(), "You fly to Kyoto on May 3.");
        // Same day: the second session an hour after the first.
        assert_eq!(h.sessions[1].time.unwrap() - h.sessions[0].time.unwrap(), SAME_DAY_STEP_MS);
        let q = &h.questions[0];
        assert_eq!(q.id, "P#Q-1");
        assert_eq!(q.category, "Dynamic Updating");
        assert_eq!(q.asked_at, Some(AskedAt { session: 1, turn: 2 }));
        assert_eq!(q.gold_sessions, HashSet::from(["aa".to_string()]));
        assert_eq!(q.gold_turns, HashSet::from(["aa#1".to_string()]));
        assert_eq!(q.gold_points, vec!["【Plan】 Fly to Kyoto on May 3".to_string()]);
        assert_eq!(h.turns_before(q).len(), 2);
        assert_eq!(h.questions_before(1).count(), 1);
        assert_eq!(h.questions_before(2).count(), 0);
        // Nothing of the gold or the metadata reaches a turn.
        let all: String = h.sessions.iter().flat_map(|s| s.turns.iter().map(|t| t.text.clone())).collect();
        assert!(!all.contains("Trip_1") && !all.contains("【Plan】"));
    }

    #[test]
    fn a_dynamic_updating_query_knows_the_older_versions_of_its_points() {
        // A first plan in another session of the same project, under the same label; a plan of
        // another project and a point under another label are not older versions.
        let older = r#"{"session_identifier": "Trip_1:S0_01", "session_uuid": "a0", "current_time": "2025-12-16 (Tuesday)",
           "extracted_memory": [{"content": "【Plan】 Fly to Osaka on May 1", "source_turn": 0},
                                {"content": "【Budget】 3,000 dollars", "source_turn": 0}],
           "dialogue_turns": [{"speaker": "User", "content": "Osaka on May 1", "is_query": false}]},
          {"session_identifier": "Work_2:S1_01", "session_uuid": "w1", "current_time": "2025-12-16 (Tuesday)",
           "extracted_memory": [{"content": "【Plan】 Ship v2 on June 1", "source_turn": 0}],
           "dialogue_turns": [{"speaker": "User", "content": "Ship v2 on June 1", "is_query": false}]},
          "#;
        let text = TINY.replacen(r#""dialogues": ["#, &format!(r#""dialogues": [{older}"#), 1);
        let h = to_haystack("P", &parse(&text).unwrap(), &mut Vec::new());
        assert_eq!(h.questions[0].superseded_points, vec!["【Plan】 Fly to Osaka on May 1".to_string()]);
        assert_eq!(point_label("【Plan】 Fly"), Some("Plan"));
        assert_eq!(point_label("no label"), None);
    }

    #[test]
    fn calibration_reads_each_point_against_its_own_turn_another_and_the_session() {
        let c = calibration(&[("P".into(), parse(TINY).unwrap())]);
        // "Fly to Kyoto on May 3": its source turn holds it, the user's turn does not.
        assert_eq!(c.points, 1);
        assert_eq!((c.in_source_turn, c.in_other_turn, c.in_whole_session), (1.0, 0.0, 1.0));
    }

    #[test]
    fn gold_that_cannot_be_traced_is_reported() {
        let text = TINY.replace(r#""memory_session_uuids": ["aa"]"#, r#""memory_session_uuids": ["zz"]"#);
        let text = text.replace(
            r#"{"session_uuid": "aa", "content": "【Plan】 Fly"#,
            r#"{"session_uuid": "aa", "content": "【Plan】 Walk"#,
        );
        // Upstream's "no turn" mark.
        let text = text.replace(r#""source_turn": 1"#, r#""source_turn": -1"#);
        let mut issues = Vec::new();
        let h = to_haystack("P", &parse(&text).unwrap(), &mut issues);
        assert_eq!(issues.len(), 2, "{issues:?}");
        assert!(issues[0].contains("zz is not earlier"));
        assert!(issues[1].contains("names no turn"));
        assert!(h.questions[0].gold_turns.is_empty());
        assert!(parse("{}").unwrap_err().to_string().contains("not a RealMem file"));
    }

    #[test]
    fn a_memory_point_whose_content_is_a_json_object_is_read_as_its_text_on_both_sides() {
        // Upstream writes an object in some persona files: the file is read, the gold still traced.
        let object = r#"{"plan": "Fly to Kyoto", "day": "May 3"}"#;
        let text = TINY.replace(r#""【Plan】 Fly to Kyoto on May 3""#, object);
        let mut issues = Vec::new();
        let h = to_haystack("P", &parse(&text).unwrap(), &mut issues);
        assert!(issues.is_empty(), "{issues:?}");
        let read = &h.questions[0].gold_points;
        assert_eq!(read.len(), 1);
        assert!(read[0].contains("Fly to Kyoto") && read[0].contains("May 3"), "{read:?}");
        assert_eq!(h.questions[0].gold_turns, HashSet::from(["aa#1".to_string()]));
    }
}
