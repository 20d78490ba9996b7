//! The one place the context engine and the memory runtime meet.
//!
//! The compactor hands every committed summary to [`MemoryBridge::ingest_summary`]; the
//! assembler asks [`MemoryBridge::retrieve`] for recalled sections. The payloads are plain data
//! (no store handles), so the memory side never reaches into the context store.

use serde::{Deserialize, Serialize};

/// A raw message covered by a leaf summary, flattened to text, with its provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BridgeMessage {
    pub message_id: i64,
    pub seq: i64,
    pub role: Role,
    pub text: String,
    /// Milliseconds since the Unix epoch, when known.
    pub timestamp: Option<i64>,
    /// Who said it, when the host names the speaker (a message's `name`); else the role speaks.
    #[serde(default)]
    pub speaker: Option<String>,
}

/// Who a bridged message is from. On the wire it is the host's own role string, so a kind of
/// message MemCC does not know (a host's custom entry) passes through by its name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum Role {
    User,
    Assistant,
    /// A tool's output (`toolResult`).
    ToolResult,
    /// Any other kind of message, by its own name.
    Other(String),
}

impl Role {
    pub fn as_str(&self) -> &str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::ToolResult => "toolResult",
            Role::Other(name) => name,
        }
    }
}

impl From<&str> for Role {
    fn from(name: &str) -> Self {
        match name {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "toolResult" => Role::ToolResult,
            other => Role::Other(other.to_string()),
        }
    }
}

impl From<String> for Role {
    fn from(name: String) -> Self {
        Role::from(name.as_str())
    }
}

impl From<Role> for String {
    fn from(role: Role) -> Self {
        match role {
            Role::Other(name) => name,
            known => known.as_str().to_string(),
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a summary summarises: raw messages (a leaf) or other summaries (condensed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SummaryKind {
    Leaf,
    Condensed,
}

impl SummaryKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SummaryKind::Leaf => "leaf",
            SummaryKind::Condensed => "condensed",
        }
    }
}

/// The line every summary ends with: "Expand for details about: <keywords>." — a pointer for a
/// reader of the prompt to the `lcm_*` tools, part of the bridge's text contract: the context
/// side writes it, the memory side leaves it out of what it stores (it says nothing about the
/// past).
pub const EXPAND_FOOTER: &str = "Expand for details about:";

/// How the line that opens a summary starts: "- Subjects: <speaker>: <subjects>; …" — who is on
/// about what, a reading aid for the prompt like [`EXPAND_FOOTER`], and left out of memory like
/// it (a record's words are what was said; recall shows a line of them, not an index).
pub const SUBJECTS_LINE: &str = "- Subjects: ";

/// A summary that the compactor has just committed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryPayload {
    pub summary_id: String,
    pub session_id: String,
    pub session_key: Option<String>,
    pub agent_id: String,
    pub kind: SummaryKind,
    pub depth: u32,
    pub content: String,
    pub earliest: Option<i64>,
    pub latest: Option<i64>,
    /// The raw messages a leaf summary covers; empty for condensed summaries, whose leaves
    /// already delivered them.
    pub messages: Vec<BridgeMessage>,
    /// The message just before a leaf's first one (already delivered with the previous leaf),
    /// so that an exchange cut by the leaf boundary is still kept whole in one record.
    #[serde(default)]
    pub lead_in: Vec<BridgeMessage>,
    /// Child summary ids of a condensed summary.
    pub child_summary_ids: Vec<String>,
    /// The project the conversation is held in ([`crate::project`]), when its host said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

impl SummaryPayload {
    /// The summary's text without its [`EXPAND_FOOTER`] and [`SUBJECTS_LINE`] lines.
    pub fn content_without_footer(&self) -> String {
        without_reading_aids(&self.content)
    }
}

/// A summary's text without its reading aids (the [`EXPAND_FOOTER`] and [`SUBJECTS_LINE`]
/// lines): what it says, as memory stores it and a condensing summariser reads it (an index of
/// words is no statement, and would carry a forgotten word past the sentence check).
pub fn without_reading_aids(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with(EXPAND_FOOTER) && !l.starts_with(SUBJECTS_LINE))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What the assembler asks memory for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecallQuery {
    pub agent_id: String,
    pub session_id: String,
    /// Text of the last few messages (the newest user message alone when it says what it is
    /// about).
    pub text: String,
    /// The "now" of the query (ms since epoch), for recency scoring.
    pub as_of: Option<i64>,
    /// When `text` is the newest message alone: the conversation's turns just before it, oldest
    /// first, a weaker signal of the subject at hand that the ranker adds to the query (empty
    /// when there are none, or `text` holds them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<ContextTurn>,
    /// The project the conversation is held in: its memories are favoured, others still found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

/// A turn of the conversation before a question: who said it, and what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextTurn {
    pub role: Role,
    pub text: String,
}

impl ContextTurn {
    pub fn new(role: Role, text: impl Into<String>) -> Self {
        ContextTurn { role, text: text.into() }
    }

    /// The newest `max_chars` characters of `turns`' words, oldest first, one turn a line: what
    /// full-text search matches the conversation's subject with.
    pub fn newest_text(turns: &[ContextTurn], max_chars: usize) -> String {
        let joined = turns.iter().map(|t| t.text.trim()).filter(|t| !t.is_empty()).collect::<Vec<_>>().join("\n");
        crate::text::newest_words(&joined, max_chars)
    }
}

/// The recall layer a section comes from; its name (`identity`, …) is the section's tag
/// (`<memcc-identity>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    /// L0: who the agent is.
    Identity,
    /// L1: pinned and weighty records, every turn.
    Essential,
    /// L2: the wing the conversation is about.
    Context,
    /// L3: deep search for the query.
    Recall,
}

impl Layer {
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Identity => "identity",
            Layer::Essential => "essential",
            Layer::Context => "context",
            Layer::Recall => "recall",
        }
    }
}

impl std::fmt::Display for Layer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One rendered block of recalled memory, e.g. `<memcc-recall>…</memcc-recall>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecallSection {
    /// The layer it comes from, serialised as its name.
    pub name: Layer,
    /// The full rendered text, tags included, already escaped.
    pub body: String,
    pub tokens: usize,
    /// Where each line of the body came from, in order (empty for identity, which is one block).
    #[serde(default)]
    pub items: Vec<RecalledItem>,
}

/// The record behind one recalled line: for inspection, never sent to a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecalledItem {
    /// `mem_<n>`, or `kg_<subject>` for knowledge-graph facts.
    pub id: String,
    /// The L3 score that ranked it (L1 and L2 lines are not ranked).
    pub score: Option<f64>,
    /// Why it is there: for an L3 line, the parts its score is the sum of ("words 0.41",
    /// "meaning 0.22", …, and a factor such as "not current ×0.60"); for L1 and L2, the rule
    /// that chose it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub why: Vec<String>,
    /// The query's words the line holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matched: Vec<String>,
}

impl RecalledItem {
    /// A line that was chosen by a rule rather than ranked.
    pub fn chosen(id: String, why: impl Into<String>) -> Self {
        RecalledItem { id, score: None, why: vec![why.into()], matched: Vec::new() }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    #[error("memory runtime unavailable: {0}")]
    Unavailable(String),
    #[error("memory runtime failed: {0}")]
    Failed(String),
}

/// Implemented by the memory runtime; called by the context engine.
///
/// Errors never fail a compaction or an assemble: the context engine logs them and goes on.
pub trait MemoryBridge: Send + Sync {
    /// Called once per summary, after the summary's transaction has committed.
    fn ingest_summary(&self, summary: &SummaryPayload) -> Result<(), BridgeError>;

    /// Recalled sections for `query`, together using at most `budget` tokens. Must be read-only:
    /// the host assembles several times per turn.
    fn retrieve(&self, query: &RecallQuery, budget: usize) -> Result<Vec<RecallSection>, BridgeError>;

    /// What `agent` forgot of conversation `session_id` ([`crate::said`] keys): the compactor
    /// keeps those sentences out of what it summarises, so a model cannot say them again in
    /// other words. None by default (a memory that forgets nothing).
    fn forgotten(&self, agent: &str, session_id: &str) -> Result<std::collections::HashSet<String>, BridgeError> {
        let _ = (agent, session_id);
        Ok(std::collections::HashSet::new())
    }
}

/// The bridge to no memory at all.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoopBridge;

impl MemoryBridge for NoopBridge {
    fn ingest_summary(&self, _summary: &SummaryPayload) -> Result<(), BridgeError> {
        Ok(())
    }

    fn retrieve(&self, _query: &RecallQuery, _budget: usize) -> Result<Vec<RecallSection>, BridgeError> {
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expand_footer_and_the_subjects_line_are_left_out_of_a_summarys_content_and_only_they() {
        let payload = SummaryPayload {
            summary_id: "sum_1".into(),
            session_id: "s".into(),
            session_key: None,
            agent_id: "main".into(),
            kind: SummaryKind::Leaf,
            depth: 0,
            content: format!(
                "{SUBJECTS_LINE}Ada: launch.\n- Ada: the launch moved to Friday.\n- Bo: Expand the tests first.\n\
                 {EXPAND_FOOTER} launch, Friday."
            ),
            earliest: None,
            latest: None,
            messages: Vec::new(),
            lead_in: Vec::new(),
            child_summary_ids: Vec::new(),
            project: None,
        };
        assert_eq!(
            payload.content_without_footer(),
            "- Ada: the launch moved to Friday.\n- Bo: Expand the tests first."
        );
    }

    #[test]
    fn a_role_is_its_hosts_name_on_the_wire_known_or_not() {
        for (name, role) in [
            ("user", Role::User),
            ("assistant", Role::Assistant),
            ("toolResult", Role::ToolResult),
            ("bashExecution", Role::Other("bashExecution".into())),
        ] {
            assert_eq!(Role::from(name), role);
            assert_eq!(serde_json::to_value(&role).unwrap(), serde_json::json!(name));
            assert_eq!(serde_json::from_value::<Role>(serde_json::json!(name)).unwrap(), role);
        }
    }

    #[test]
    fn a_section_is_named_by_its_layer() {
        let section = RecallSection { name: Layer::Essential, body: String::new(), tokens: 0, items: Vec::new() };
        assert_eq!(serde_json::to_value(&section).unwrap()["name"], "essential");
        let layers = [Layer::Identity, Layer::Essential, Layer::Context, Layer::Recall];
        for layer in layers {
            assert_eq!(serde_json::to_value(layer).unwrap(), serde_json::json!(layer.as_str()));
        }
    }
}
