//! The summary DAG of one conversation as a person inspects it (`memcc ui`): its top nodes, and
//! any node's direct sources down to raw messages. Read-only; scoped like every other read.

use serde::Serialize;

use crate::error::{ContextError, Result};
use crate::expand::message_ref;
use crate::store::{ContextStore, SUMMARY_SELECT, Summary, SummaryKind, summary_from_row};

/// A summary as a node of the drawn DAG.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DagNode {
    pub id: String,
    pub kind: SummaryKind,
    pub depth: u32,
    pub tokens: usize,
    /// Sequence numbers of the first and last message it covers.
    pub first_seq: i64,
    pub last_seq: i64,
    pub earliest: Option<i64>,
    pub latest: Option<i64>,
    pub descendant_messages: usize,
    pub source_tokens: usize,
    /// The opening of its text.
    pub preview: String,
}

impl DagNode {
    fn of(s: &Summary) -> Self {
        DagNode {
            id: s.id.clone(),
            kind: s.kind,
            depth: s.depth,
            tokens: s.token_count,
            first_seq: s.first_seq,
            last_seq: s.last_seq,
            earliest: s.earliest,
            latest: s.latest,
            descendant_messages: s.descendant_messages,
            source_tokens: s.source_tokens,
            preview: memcc_core::text::excerpt(&s.content, &[], PREVIEW_CHARS),
        }
    }
}

const PREVIEW_CHARS: usize = 240;
/// Raw messages are shown whole up to this many characters (`lcm_expand_query` reads the rest).
const MESSAGE_CHARS: usize = 4_000;

/// A raw message under a leaf summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DagMessage {
    pub id: String,
    pub seq: i64,
    pub role: String,
    pub tokens: usize,
    pub timestamp: Option<i64>,
    pub text: String,
    pub cut: bool,
}

/// The top of a conversation's DAG: the summaries nothing condenses, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DagView {
    pub session_id: String,
    pub agent_id: String,
    pub messages: usize,
    pub summaries: usize,
    pub max_depth: u32,
    pub roots: Vec<DagNode>,
    /// Raw messages no summary covers yet (the fresh tail and what waits for compaction).
    pub uncovered_messages: usize,
}

/// The direct sources of one summary: child summaries (condensed) or raw messages (leaf).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DagChildren {
    pub node: DagNode,
    /// The summary's whole text (a node carries only a preview).
    pub content: String,
    pub summaries: Vec<DagNode>,
    pub messages: Vec<DagMessage>,
}

pub(crate) fn view(store: &ContextStore, conversation: &crate::store::Conversation) -> Result<DagView> {
    let conn = store.conn();
    let mut stmt = conn.prepare_cached(&format!(
        "{SUMMARY_SELECT} WHERE conversation_id = ?1
           AND NOT EXISTS (SELECT 1 FROM summary_parents p WHERE p.summary_id = summaries.id)
         ORDER BY first_seq, depth"
    ))?;
    let roots: Vec<Summary> =
        stmt.query_map([conversation.id], summary_from_row)?.collect::<std::result::Result<_, _>>()?;
    let (messages, uncovered): (i64, i64) = conn.query_row(
        "SELECT COUNT(*), COUNT(*) FILTER (WHERE NOT EXISTS
                  (SELECT 1 FROM summary_messages sm WHERE sm.message_id = messages.id))
           FROM messages WHERE conversation_id = ?1",
        [conversation.id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let (summaries, max_depth): (i64, i64) = conn.query_row(
        "SELECT COUNT(*), COALESCE(MAX(depth), 0) FROM summaries WHERE conversation_id = ?1",
        [conversation.id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(DagView {
        session_id: conversation.session_id.clone(),
        agent_id: conversation.agent_id.clone(),
        messages: messages as usize,
        summaries: summaries as usize,
        max_depth: max_depth as u32,
        roots: roots.iter().map(DagNode::of).collect(),
        uncovered_messages: uncovered as usize,
    })
}

pub(crate) fn children(store: &ContextStore, scope: &[i64], id: &str) -> Result<DagChildren> {
    let summary = store
        .summary(id)?
        .filter(|s| scope.contains(&s.conversation_id))
        .ok_or_else(|| ContextError::NotFound(format!("summary {id}")))?;
    let (message_ids, child_ids) = store.summary_children(id)?;
    let mut summaries = Vec::with_capacity(child_ids.len());
    for c in &child_ids {
        if let Some(s) = store.summary(c)? {
            summaries.push(DagNode::of(&s));
        }
    }
    let messages = store
        .messages(&message_ids)?
        .into_iter()
        .map(|m| {
            let cut = m.content.chars().count() > MESSAGE_CHARS;
            DagMessage {
                id: message_ref(m.id),
                seq: m.seq,
                role: m.role.to_string(),
                tokens: m.token_count,
                timestamp: m.timestamp,
                text: if cut { m.content.chars().take(MESSAGE_CHARS).collect() } else { m.content },
                cut,
            }
        })
        .collect();
    Ok(DagChildren { node: DagNode::of(&summary), content: summary.content.clone(), summaries, messages })
}
