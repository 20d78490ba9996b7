//! The expansion API behind the agent tools: `lcm_grep`, `lcm_describe`, `lcm_expand_query`.
//!
//! Ids are strings everywhere: `sum_…` summaries, `msg_<n>` raw messages, `file_…` large files.

use serde::{Deserialize, Serialize};

use crate::assemble::cut_to_tokens;
use crate::error::{ContextError, Result};
use crate::store::{ContextStore, SearchFilter, StoredMessage, Summary};
use memcc_core::estimate_tokens;
use memcc_core::text::{Combine, Term, match_query, phrase_query, snippet};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GrepMode {
    /// Full text (words; CJK substrings).
    #[default]
    Text,
    /// A regular expression over the raw text.
    Regex,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GrepScope {
    Messages,
    Summaries,
    #[default]
    Both,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GrepRequest {
    pub pattern: String,
    /// Whose conversations (default: the engine's agent). Only they are ever searched.
    pub agent_id: Option<String>,
    pub mode: GrepMode,
    pub scope: GrepScope,
    /// Restrict to one conversation (session id).
    pub session_id: Option<String>,
    /// Milliseconds since epoch, inclusive.
    pub since: Option<i64>,
    /// Milliseconds since epoch, exclusive.
    pub before: Option<i64>,
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GrepHit {
    pub id: String,
    /// `message` or `summary`.
    pub kind: String,
    pub conversation_id: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    pub timestamp: Option<i64>,
    pub snippet: String,
    /// For a message: the leaf summary that now stands in for it, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_id: Option<String>,
}

pub const DEFAULT_GREP_LIMIT: usize = 20;
pub const MAX_GREP_LIMIT: usize = 500;
const SNIPPET_CHARS: usize = 240;

pub fn message_ref(id: i64) -> String {
    format!("msg_{id}")
}

/// Parse `msg_<n>` into a message id.
pub fn parse_message_ref(id: &str) -> Option<i64> {
    id.strip_prefix("msg_")?.parse().ok()
}

/// `scope`: the conversations the caller may read; nothing outside them is searched.
pub(crate) fn grep(store: &ContextStore, scope: &[i64], req: &GrepRequest) -> Result<Vec<GrepHit>> {
    let limit = req.limit.unwrap_or(DEFAULT_GREP_LIMIT).clamp(1, MAX_GREP_LIMIT);
    let filter = SearchFilter { conversation_ids: scope.to_vec(), since: req.since, before: req.before, limit };
    let mut hits = Vec::new();
    let want_messages = req.scope != GrepScope::Summaries;
    let want_summaries = req.scope != GrepScope::Messages;
    match req.mode {
        GrepMode::Text => {
            let all_words = match_query(&req.pattern, Combine::All)
                .ok_or_else(|| ContextError::Input(format!("no searchable words in {:?}", req.pattern)))?;
            // The exact phrase ranks first; messages with all the words anywhere follow.
            let queries: Vec<String> = phrase_query(&req.pattern).into_iter().chain([all_words]).collect();
            let needles = Term::texts(&req.pattern);
            // Raw messages first (they hold the exact words), then the summaries standing in for them.
            let mut seen = std::collections::HashSet::new();
            if want_messages {
                for query in &queries {
                    for m in store.search_messages_fts(query, &filter)? {
                        if hits.len() < limit && seen.insert(message_ref(m.id)) {
                            hits.push(message_hit(store, &m, &needles)?);
                        }
                    }
                }
            }
            if want_summaries {
                for query in &queries {
                    for s in store.search_summaries_fts(query, &filter)? {
                        if hits.len() < limit && seen.insert(s.id.clone()) {
                            hits.push(summary_hit(&s, &needles));
                        }
                    }
                }
            }
        }
        GrepMode::Regex => {
            let re = regex::RegexBuilder::new(&req.pattern)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| ContextError::Input(format!("invalid regex: {e}")))?;
            let locate = |text: &str| re.find(text).map(|m| vec![m.as_str().to_string()]);
            if want_messages {
                let mut found = Vec::new();
                store.scan_messages(&filter, |m| {
                    if let Some(needles) = locate(&m.content) {
                        found.push((m, needles));
                    }
                    found.len() < limit
                })?;
                for (m, needles) in found {
                    hits.push(message_hit(store, &m, &needles)?);
                }
            }
            if want_summaries && hits.len() < limit {
                store.scan_summaries(&filter, |s| {
                    if let Some(needles) = locate(&s.content) {
                        hits.push(summary_hit(&s, &needles));
                    }
                    hits.len() < limit
                })?;
            }
        }
    }
    hits.truncate(limit);
    Ok(hits)
}

fn summary_hit(s: &Summary, needles: &[String]) -> GrepHit {
    GrepHit {
        id: s.id.clone(),
        kind: "summary".into(),
        conversation_id: s.conversation_id,
        role: None,
        seq: None,
        depth: Some(s.depth),
        timestamp: s.latest,
        snippet: snippet(&s.content, needles, SNIPPET_CHARS),
        summary_id: None,
    }
}

fn message_hit(store: &ContextStore, m: &StoredMessage, needles: &[String]) -> Result<GrepHit> {
    Ok(GrepHit {
        id: message_ref(m.id),
        kind: "message".into(),
        conversation_id: m.conversation_id,
        role: Some(m.role.to_string()),
        seq: Some(m.seq),
        depth: None,
        timestamp: m.timestamp,
        snippet: snippet(&m.content, needles, SNIPPET_CHARS),
        summary_id: store.leaf_of_message(m.id)?,
    })
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChildRef {
    pub id: String,
    pub kind: String,
    pub tokens: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Description {
    pub summary: Summary,
    pub children: Vec<ChildRef>,
    pub parents: Vec<String>,
}

pub(crate) fn describe(store: &ContextStore, scope: &[i64], id: &str) -> Result<Description> {
    let summary = store
        .summary(id)?
        .filter(|s| scope.contains(&s.conversation_id))
        .ok_or_else(|| ContextError::NotFound(format!("summary {id}")))?;
    let (messages, child_summaries) = store.summary_children(id)?;
    let mut children = Vec::new();
    for m in store.messages(&messages)? {
        children.push(ChildRef { id: message_ref(m.id), kind: format!("message:{}", m.role), tokens: m.token_count });
    }
    for c in child_summaries {
        if let Some(s) = store.summary(&c)? {
            children.push(ChildRef { id: s.id, kind: format!("summary:{}", s.kind.as_str()), tokens: s.token_count });
        }
    }
    let parents = store.summary_parents(id)?;
    Ok(Description { summary, children, parents })
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ExpandRequest {
    pub ids: Vec<String>,
    /// Whose conversations (default: the engine's agent); ids of any other answer "not found".
    pub agent_id: Option<String>,
    /// Used when `ids` is empty: expand the best-matching summaries (or messages).
    pub query: Option<String>,
    pub session_id: Option<String>,
    pub max_tokens: Option<usize>,
    /// Expand condensed summaries all the way down to raw messages.
    pub deep: bool,
    /// Give each message as the host stored it (thinking, images, tool calls and their details),
    /// beside its flattened text.
    pub raw: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExpandedItem {
    pub id: String,
    pub kind: String,
    /// The summary this item was expanded from, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    pub timestamp: Option<i64>,
    pub text: String,
    pub tokens: usize,
    /// A message as the host stored it (with `raw` requested).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Expansion {
    pub items: Vec<ExpandedItem>,
    pub tokens: usize,
    /// Items cut or left out to stay within `maxTokens`.
    pub truncated: bool,
    pub omitted: usize,
}

pub const DEFAULT_EXPAND_TOKENS: usize = 4000;

pub(crate) fn expand(store: &ContextStore, scope: &[i64], req: &ExpandRequest) -> Result<Expansion> {
    let max_tokens = req.max_tokens.unwrap_or(DEFAULT_EXPAND_TOKENS).max(1);
    let mut ids = req.ids.clone();
    if ids.is_empty() {
        let q = req.query.as_deref().unwrap_or("").trim();
        if q.is_empty() {
            return Err(ContextError::Input("lcm_expand_query needs ids or a query".into()));
        }
        let grep_req =
            GrepRequest { pattern: q.to_string(), limit: Some(3), scope: GrepScope::Summaries, ..Default::default() };
        ids = grep(store, scope, &grep_req)?.into_iter().map(|h| h.id).collect();
        if ids.is_empty() {
            let grep_req = GrepRequest { scope: GrepScope::Messages, limit: Some(10), ..grep_req };
            ids = grep(store, scope, &grep_req)?.into_iter().map(|h| h.id).collect();
        }
    }
    let mut items = Vec::new();
    for id in &ids {
        // An id of another conversation is as unknown as one that does not exist; what a summary
        // in scope reaches below it is in the same conversation.
        if !in_scope(store, scope, id)? {
            return Err(ContextError::NotFound(format!("no summary, message or file with id {id:?}")));
        }
        collect(store, id, None, req.deep, &mut items, 0)?;
    }
    if req.raw {
        for item in items.iter_mut().filter(|i| i.kind == "message") {
            if let Some(m) =
                parse_message_ref(&item.id).map(|id| store.messages(&[id])).transpose()?.and_then(|mut v| v.pop())
            {
                item.raw = serde_json::from_str(&m.raw).ok();
            }
        }
    }
    let mut out = Vec::new();
    let mut used = 0usize;
    let mut truncated = false;
    let total = items.len();
    for mut item in items {
        if used + item.tokens > max_tokens {
            let room = max_tokens - used;
            if room >= 32 {
                item.text = cut_to_tokens(&item.text, room - 8);
                item.text.push_str(" […]");
                item.tokens = estimate_tokens(&item.text);
                used += item.tokens;
                out.push(item);
            }
            truncated = true;
            break;
        }
        used += item.tokens;
        out.push(item);
    }
    let omitted = total - out.len();
    Ok(Expansion { items: out, tokens: used, truncated: truncated || omitted > 0, omitted })
}

fn in_scope(store: &ContextStore, scope: &[i64], id: &str) -> Result<bool> {
    if let Some(mid) = parse_message_ref(id) {
        return Ok(store.messages(&[mid])?.first().is_some_and(|m| scope.contains(&m.conversation_id)));
    }
    if id.starts_with("file_") {
        return Ok(store.large_file_in(id, scope)?);
    }
    Ok(store.summary(id)?.is_some_and(|s| scope.contains(&s.conversation_id)))
}

/// Depth guard: the DAG is acyclic by construction, but a corrupt file must not recurse forever.
const MAX_EXPAND_DEPTH: usize = 64;

fn collect(
    store: &ContextStore,
    id: &str,
    parent: Option<&str>,
    deep: bool,
    out: &mut Vec<ExpandedItem>,
    depth: usize,
) -> Result<()> {
    if depth > MAX_EXPAND_DEPTH {
        return Err(ContextError::Store(crate::error::StoreError::Corrupt(format!(
            "summary DAG deeper than {MAX_EXPAND_DEPTH} at {id}"
        ))));
    }
    if let Some(mid) = parse_message_ref(id) {
        let m = store.messages(&[mid])?.pop().ok_or_else(|| ContextError::NotFound(format!("message {id}")))?;
        out.push(message_item(&m, parent));
        return Ok(());
    }
    if id.starts_with("file_") {
        let f = store.large_file(id)?.ok_or_else(|| ContextError::NotFound(format!("large file {id}")))?;
        out.push(ExpandedItem {
            id: f.id.clone(),
            kind: "file".into(),
            parent: parent.map(String::from),
            role: None,
            timestamp: None,
            tokens: f.token_count,
            text: f.content,
            raw: None,
        });
        return Ok(());
    }
    if store.summary(id)?.is_none() {
        return Err(ContextError::NotFound(format!("no summary, message or file with id {id:?}")));
    }
    let (messages, children) = store.summary_children(id)?;
    for m in store.messages(&messages)? {
        out.push(message_item(&m, Some(id)));
    }
    for child in children {
        if deep {
            collect(store, &child, Some(id), deep, out, depth + 1)?;
        } else if let Some(s) = store.summary(&child)? {
            out.push(ExpandedItem {
                id: s.id.clone(),
                kind: format!("summary:{}", s.kind.as_str()),
                parent: Some(id.to_string()),
                role: None,
                timestamp: s.latest,
                tokens: s.token_count,
                text: s.content,
                raw: None,
            });
        }
    }
    Ok(())
}

fn message_item(m: &StoredMessage, parent: Option<&str>) -> ExpandedItem {
    ExpandedItem {
        id: message_ref(m.id),
        kind: "message".into(),
        parent: parent.map(String::from),
        role: Some(m.role.to_string()),
        timestamp: m.timestamp,
        text: m.content.clone(),
        tokens: m.token_count,
        raw: None,
    }
}
