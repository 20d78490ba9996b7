//! Memory records and knowledge-graph triples.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordKind {
    /// A summary the context engine committed.
    Summary,
    /// A chunk of the raw exchange a summary covers, in the speakers' own words.
    Verbatim,
    /// A synthetic "User prefers …" document mined from what the user said.
    Preference,
    /// A fact (e.g. from a knowledge-graph triple) stated as a sentence.
    Fact,
    /// Added explicitly to be always recalled.
    Pinned,
}

impl RecordKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RecordKind::Summary => "summary",
            RecordKind::Verbatim => "verbatim",
            RecordKind::Preference => "preference",
            RecordKind::Fact => "fact",
            RecordKind::Pinned => "pinned",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "summary" => RecordKind::Summary,
            "verbatim" => RecordKind::Verbatim,
            "preference" => RecordKind::Preference,
            "fact" => RecordKind::Fact,
            "pinned" => RecordKind::Pinned,
            _ => return None,
        })
    }
}

/// The most characters one memory record holds. A record is recalled into prompts of a few
/// thousand tokens and returned by every search that finds it: a 2 MB "memory" would cost each
/// search megabytes and break clients with a message limit. Longer text is refused where a
/// person or a file supplies it (`add`, `import`) and cut where MemCC makes records from a
/// conversation (its raw messages stay whole in the context store).
pub const MAX_RECORD_CHARS: usize = 32_000;

/// Whether `text` fits in a record, as the error a caller shows.
pub fn check_record_size(text: &str) -> std::result::Result<(), String> {
    let n = text.chars().count();
    if n > MAX_RECORD_CHARS {
        return Err(format!(
            "a memory record holds at most {MAX_RECORD_CHARS} characters, this text has {n}: remember a summary \
             of it, or keep the document in a file and remember where it is"
        ));
    }
    Ok(())
}

/// A record as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryRecord {
    pub id: i64,
    pub agent_id: String,
    pub wing: String,
    pub room: String,
    pub kind: RecordKind,
    pub text: String,
    /// The summary this record came from, first; for a condensed summary's own record, then
    /// the summaries it condenses.
    pub source_summary_ids: Vec<String>,
    pub source_session_ids: Vec<String>,
    pub source_message_ids: Vec<i64>,
    pub created_at: i64,
    pub event_time: Option<i64>,
    pub valid_from: Option<i64>,
    pub valid_until: Option<i64>,
    pub superseded_by: Option<i64>,
    pub weight: f64,
    pub pinned: bool,
    pub forgotten: bool,
    pub subject: Option<String>,
    pub predicate: Option<String>,
    pub embedded: bool,
    /// The project it was learnt in ([`memcc_core::project`]), when the conversation had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

impl MemoryRecord {
    /// The public id, `mem_<n>`.
    pub fn ref_id(&self) -> String {
        format!("mem_{}", self.id)
    }

    /// Current: not forgotten, not superseded, not expired.
    pub fn is_current(&self) -> bool {
        !self.forgotten && self.superseded_by.is_none() && self.valid_until.is_none()
    }
}

/// How records are keyed for exact-duplicate detection (with their agent): the text with its
/// whitespace collapsed, lowercase — the same words said again are the same record.
pub fn content_hash(text: &str) -> String {
    let norm: String = text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    hex::encode(Sha256::digest(norm.as_bytes()))[..32].to_string()
}

pub fn parse_ref(id: &str) -> Option<i64> {
    id.strip_prefix("mem_").unwrap_or(id).parse().ok()
}

/// A record to store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NewRecord {
    pub agent_id: String,
    pub wing: String,
    pub room: String,
    pub kind: RecordKind,
    pub text: String,
    /// The summary this record came from, first; for a condensed summary's own record, then
    /// the summaries it condenses.
    pub source_summary_ids: Vec<String>,
    pub source_session_ids: Vec<String>,
    pub source_message_ids: Vec<i64>,
    pub event_time: Option<i64>,
    pub weight: f64,
    pub pinned: bool,
    pub subject: Option<String>,
    pub predicate: Option<String>,
    /// The project it was learnt in, when the conversation had one.
    pub project: Option<String>,
    /// The record this one corrects (an edit): it is superseded by this one.
    #[serde(skip)]
    pub supersedes: Option<i64>,
}

/// The one rule for text either backend stores: no U+0000. PostgreSQL refuses it in `text`
/// columns (SQLite would keep it), so a NUL in a message once held a summary in the outbox for
/// good and aborted a whole import on PostgreSQL alone; it is dropped before anything is
/// stored, on both backends alike. (The raw message keeps it in the context store.)
pub fn without_nul(text: &mut String) {
    if text.contains('\0') {
        text.retain(|c| c != '\0');
    }
}

impl NewRecord {
    /// Every string of the record and its triples as a store may keep it ([`without_nul`]).
    pub(crate) fn make_storable(&mut self, triples: &mut [NewTriple]) {
        for s in [&mut self.agent_id, &mut self.wing, &mut self.room, &mut self.text]
            .into_iter()
            .chain(self.source_summary_ids.iter_mut())
            .chain(self.source_session_ids.iter_mut())
            .chain(self.subject.iter_mut())
            .chain(self.predicate.iter_mut())
            .chain(self.project.iter_mut())
        {
            without_nul(s);
        }
        for t in triples {
            for s in [&mut t.subject, &mut t.predicate, &mut t.object] {
                without_nul(s);
            }
        }
    }
}

impl Default for NewRecord {
    fn default() -> Self {
        NewRecord {
            agent_id: "main".into(),
            wing: "general".into(),
            room: "misc".into(),
            kind: RecordKind::Fact,
            text: String::new(),
            source_summary_ids: Vec::new(),
            source_session_ids: Vec::new(),
            source_message_ids: Vec::new(),
            event_time: None,
            weight: 1.0,
            pinned: false,
            subject: None,
            predicate: None,
            project: None,
            supersedes: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Triple {
    pub id: i64,
    pub agent_id: String,
    pub subject: String,
    pub predicate: String,
    pub object: String,
    pub valid_from: Option<i64>,
    pub valid_until: Option<i64>,
    pub superseded_by: Option<i64>,
    pub source_record: Option<i64>,
}

impl Triple {
    /// Still holds: no later statement replaced it and it did not expire.
    pub fn is_current(&self) -> bool {
        self.superseded_by.is_none() && self.valid_until.is_none()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NewTriple {
    pub subject: String,
    pub predicate: String,
    pub object: String,
    pub valid_from: Option<i64>,
}

/// What a preference the user states about what they like, dislike or are weighs: the default
/// `essentialMinWeight`, so it stands in every session's essentials wherever it was said.
pub(crate) const STANDING_PREFERENCE_WEIGHT: f64 = 2.0;

/// What any other preference weighs: above a plain record (1.0), below the essentials.
pub(crate) const PREFERENCE_WEIGHT: f64 = 1.5;

/// The heaviest weight a record can carry (an import checks it; a pin orders first by itself).
pub(crate) const MAX_WEIGHT: f64 = 3.0;
