//! Compaction: folding the oldest raw messages into leaf summaries and runs of summaries into
//! condensed ones, until the context is back under its threshold.
//!
//! Each step summarises outside any lock or transaction (a model call may be slow), then commits
//! summary + edges + context-item replacement in one transaction that first checks the items are
//! still the ones it read. Bounded by an iteration cap, and every step must shrink the context.

use std::collections::HashSet;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::assemble::render_summary;
use crate::config::ContextConfig;
use crate::error::{Result, StoreError};
use crate::store::{ContextItem, ContextStore, Conversation, ItemRef, NewSummary, StoredMessage, Summary, SummaryKind};
use crate::summarize::{Escalation, Produced, Summarizer, summarize_escalating};
use memcc_core::bridge::{BridgeMessage, MemoryBridge, Role, SummaryPayload};
use memcc_core::estimate_tokens;

/// The `tracing` target of the event each committed summary logs (fields `summary`, `depth`,
/// `items`, `tokens`, `done`): what `-v` prints and a host's progress display counts.
pub const SUMMARY_WRITTEN: &str = "memcc_context::compact";
use memcc_core::time::now_ms;

/// What a `compact` call did, honestly.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionOutcome {
    pub compacted: bool,
    pub tokens_before: usize,
    pub tokens_after: usize,
    pub threshold_tokens: usize,
    pub leaf_summaries: usize,
    pub condensed_summaries: usize,
    pub iterations: usize,
    pub summary_ids: Vec<String>,
    /// Why it stopped.
    pub reason: String,
}

/// How hard a `compact` call works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Only when over the threshold.
    Normal,
    /// Everything outside the fresh tail, whatever the threshold.
    Force,
    /// Everything, fresh tail included: a session's end, so that every message reaches memory.
    Flush,
}

pub(crate) struct Compactor<'a> {
    pub store: &'a ContextStore,
    pub config: &'a ContextConfig,
    pub summarizer: &'a dyn Summarizer,
    pub bridge: &'a dyn MemoryBridge,
    pub mode: Mode,
    /// Hand each summary to memory as it commits (and what waits first). Without it the
    /// summaries only enter the outbox, for [`Compactor::drain_outbox`] to deliver later: the
    /// embedding and knowledge-graph work then stays off the compaction.
    pub hand_off: bool,
}

/// Is there a tool call in `items[..boundary]` whose result lies in `items[boundary..]`?
pub fn splits_tool_pair(items: &[ContextItem], boundary: usize) -> bool {
    let boundary = boundary.min(items.len());
    let calls: HashSet<&str> = items[..boundary]
        .iter()
        .flat_map(|i| match &i.item {
            ItemRef::Message { tool_call_ids, .. } => tool_call_ids.iter().map(String::as_str).collect(),
            _ => Vec::new(),
        })
        .collect();
    if calls.is_empty() {
        return false;
    }
    items[boundary..].iter().any(|i| match &i.item {
        ItemRef::Message { tool_result_for: Some(id), .. } => calls.contains(id.as_str()),
        _ => false,
    })
}

/// Index of the first item of the fresh tail: the last `fresh_tail_count` raw messages, widened
/// to include the newest user message and never to split a tool call from its result.
pub fn fresh_tail_start(items: &[ContextItem], fresh_tail_count: usize) -> usize {
    let message_positions: Vec<usize> =
        items.iter().enumerate().filter(|(_, i)| i.is_message()).map(|(p, _)| p).collect();
    let mut start = match message_positions.len().checked_sub(fresh_tail_count) {
        // A fresh tail of 0 keeps only the newest user message (below).
        _ if fresh_tail_count == 0 => items.len(),
        Some(first) => message_positions[first],
        None => message_positions.first().copied().unwrap_or(items.len()),
    };
    let last_user = items.iter().rposition(|i| matches!(&i.item, ItemRef::Message { role: Role::User, .. }));
    if let Some(u) = last_user {
        start = start.min(u);
    }
    while start > 0 && splits_tool_pair(items, start) {
        start -= 1;
    }
    start
}

impl Compactor<'_> {
    pub fn run(&self, conversation: &Conversation, budget: usize) -> Result<CompactionOutcome> {
        // What an earlier compaction could not hand to memory goes first.
        if self.hand_off {
            self.drain_outbox(conversation)?;
        }
        let mode = self.mode;
        let force = mode != Mode::Normal;
        let threshold = (budget as f64 * self.config.context_threshold).floor() as usize;
        let mut outcome = CompactionOutcome {
            tokens_before: self.store.context_tokens(conversation.id)?,
            threshold_tokens: threshold,
            ..Default::default()
        };
        outcome.reason = "iteration cap reached".into();
        // Every committed step either folds at least one raw message into a leaf or merges at
        // least two items into one, so 2 × items bounds the useful steps of a call; the
        // configured cap is headroom on top. Each step must also shrink the context (see commit).
        // The item list is read once and kept in step with each commit (which checks that the
        // items it replaces are still there): re-reading it every step made bulk compaction of a
        // long imported session quadratic.
        let mut items = self.store.context_items(conversation.id)?;
        let cap = self.config.max_compaction_iterations + 2 * items.len();
        for _ in 0..cap {
            let total: usize = items.iter().map(|i| i.tokens).sum();
            let tail_start =
                if mode == Mode::Flush { items.len() } else { fresh_tail_start(&items, self.config.fresh_tail_count) };
            let over = total > threshold;
            let step = if let Some(run) = fanout_run(&items[..tail_start], self.config.leaf_min_fanout) {
                Step::Condense(run)
            } else if !over && !force {
                outcome.reason = "under threshold".into();
                break;
            } else if let Some(chunk) = self.leaf_chunk(&items, tail_start, budget) {
                Step::Leaf(chunk)
            } else if over {
                match pressure_run(&items[..tail_start]) {
                    Some(run) => Step::Condense(run),
                    None => {
                        outcome.reason = "over threshold, but only summaries of different depths are left: the \
                                          oldest stay out of the prompt"
                            .into();
                        break;
                    }
                }
            } else {
                outcome.reason = "nothing left to compact outside the fresh tail".into();
                break;
            };
            outcome.iterations += 1;
            let range = match &step {
                Step::Leaf(r) | Step::Condense(r) => r.clone(),
            };
            let committed = match step {
                Step::Leaf(range) => self.leaf(conversation, &items[range], budget)?,
                Step::Condense(range) => self.condense(conversation, &items[range], budget)?,
            };
            match committed {
                Some((kind, item)) => {
                    match kind {
                        SummaryKind::Leaf => outcome.leaf_summaries += 1,
                        SummaryKind::Condensed => outcome.condensed_summaries += 1,
                    }
                    if let ItemRef::Summary { id, depth } = &item.item {
                        // `-v` follows a long compaction summary by summary (and a CLI spinner counts them).
                        tracing::info!(
                            target: SUMMARY_WRITTEN,
                            summary = %id,
                            depth,
                            items = range.len(),
                            tokens = item.tokens,
                            done = outcome.leaf_summaries + outcome.condensed_summaries,
                            "summary written"
                        );
                        outcome.summary_ids.push(id.clone());
                    }
                    items.splice(range, [item]);
                }
                None => {
                    outcome.reason = "no progress: the context changed underneath or a summary was not smaller".into();
                    break;
                }
            }
        }
        outcome.tokens_after = self.store.context_tokens(conversation.id)?;
        outcome.compacted = !outcome.summary_ids.is_empty();
        Ok(outcome)
    }

    /// The oldest contiguous raw messages before the tail, up to `leaf_chunk_tokens`, but at
    /// least [`MIN_LEAF_SOURCE_TOKENS`] when there are that many: a lone short message (an
    /// "ok" between a summary and a long message) can never shrink, and retrying it every turn
    /// would stall compaction and spend model calls for nothing. `None` when what is there is
    /// too small to be worth a summary (a flush folds it anyway).
    fn leaf_chunk(&self, items: &[ContextItem], tail_start: usize, budget: usize) -> Option<std::ops::Range<usize>> {
        let start = items[..tail_start].iter().position(ContextItem::is_message)?;
        let mut end = start;
        let mut tokens = 0usize;
        while end < tail_start && items[end].is_message() {
            let full = tokens + items[end].tokens > self.config.leaf_chunk(budget);
            if end > start && full && tokens >= MIN_LEAF_SOURCE_TOKENS {
                break;
            }
            tokens += items[end].tokens;
            end += 1;
        }
        // Never leave a tool result behind its call: take the results along.
        while end < tail_start && items[end].is_message() && splits_tool_pair(items, end) {
            tokens += items[end].tokens;
            end += 1;
        }
        if tokens < MIN_LEAF_SOURCE_TOKENS && self.mode != Mode::Flush {
            return None;
        }
        Some(start..end)
    }

    fn leaf(
        &self,
        conversation: &Conversation,
        chunk: &[ContextItem],
        budget: usize,
    ) -> Result<Option<(SummaryKind, ContextItem)>> {
        let ids: Vec<i64> = chunk
            .iter()
            .filter_map(|i| match &i.item {
                ItemRef::Message { id, .. } => Some(*id),
                _ => None,
            })
            .collect();
        let messages = self.store.messages(&ids)?;
        let source = self.without_forgotten(conversation, render_messages(&messages));
        let source_tokens: usize = chunk.iter().map(|i| i.tokens).sum();
        let produced = if self.mode == Mode::Flush && source_tokens <= SUMMARY_FRAME_TOKENS {
            // A span its summary's frame outweighs cannot shrink, and the truncation that fits
            // under it keeps no word ("[…]"): kept whole, what was said still reaches grep,
            // describe and memory, for the frame's few tokens either way.
            Produced { text: source, method: Escalation::Whole }
        } else {
            summarize_escalating(
                self.summarizer,
                SummaryKind::Leaf,
                &source,
                source_tokens.saturating_sub(SUMMARY_FRAME_TOKENS),
                self.config.leaf_target(budget),
            )
        };
        let summary = Summary {
            id: summary_id(conversation, "leaf", ids.iter().map(|i| i.to_string()), &produced.text),
            conversation_id: conversation.id,
            kind: SummaryKind::Leaf,
            depth: 0,
            content: produced.text,
            token_count: 0,
            earliest: messages.iter().filter_map(|m| m.timestamp).min(),
            latest: messages.iter().filter_map(|m| m.timestamp).max(),
            first_seq: messages.first().map_or(0, |m| m.seq),
            last_seq: messages.last().map_or(0, |m| m.seq),
            descendant_messages: messages.len(),
            descendant_summaries: 0,
            source_tokens,
            method: format!("{}:{}", self.summarizer.label(), produced.method),
            created_at: now_ms(),
        };
        let first_seq = messages.first().map_or(0, |m| m.seq);
        let lead_in = self.store.messages_in_range(conversation.id, first_seq - 1, first_seq - 1)?;
        let bridged = Bridged {
            messages: messages.iter().map(bridge_message).collect(),
            lead_in: lead_in.iter().map(bridge_message).collect(),
        };
        self.commit(conversation, summary, ids, Vec::new(), chunk, bridged)
    }

    /// `source` without the sentences memory says were forgotten in this conversation: what a
    /// summariser is not shown it cannot say again — not even in other words, which no check of
    /// its answer would catch. When memory cannot say (it is away), the source goes whole; what
    /// comes back is still checked sentence by sentence where memory stores it.
    fn without_forgotten(&self, conversation: &Conversation, source: String) -> String {
        let gone = match self.bridge.forgotten(&conversation.agent_id, &conversation.session_id) {
            Ok(gone) => gone,
            Err(e) => {
                tracing::debug!(error = %e, "memory could not say what was forgotten; summarising the source whole");
                return source;
            }
        };
        match memcc_core::said::without_said(&source, &gone) {
            Some((kept, _)) => kept,
            None => source,
        }
    }

    fn condense(
        &self,
        conversation: &Conversation,
        run: &[ContextItem],
        budget: usize,
    ) -> Result<Option<(SummaryKind, ContextItem)>> {
        let mut children = Vec::new();
        for item in run {
            if let ItemRef::Summary { id, .. } = &item.item
                && let Some(s) = self.store.summary(id)?
            {
                children.push(s);
            }
        }
        if children.len() != run.len() {
            return Ok(None);
        }
        // The children's reading aids stay out: this summary writes its own, and a word list
        // would carry a forgotten word past the sentence check below.
        let source = children
            .iter()
            .map(|c| memcc_core::bridge::without_reading_aids(&c.content))
            .collect::<Vec<_>>()
            .join("\n\n");
        let source = self.without_forgotten(conversation, source);
        let source_tokens: usize = run.iter().map(|i| i.tokens).sum();
        let produced = summarize_escalating(
            self.summarizer,
            SummaryKind::Condensed,
            &source,
            source_tokens.saturating_sub(SUMMARY_FRAME_TOKENS),
            self.config.condensed_target(budget),
        );
        let child_ids: Vec<String> = children.iter().map(|c| c.id.clone()).collect();
        let summary = Summary {
            id: summary_id(conversation, "condensed", child_ids.iter().cloned(), &produced.text),
            conversation_id: conversation.id,
            kind: SummaryKind::Condensed,
            depth: children.iter().map(|c| c.depth).max().unwrap_or(0) + 1,
            content: produced.text,
            token_count: 0,
            earliest: children.iter().filter_map(|c| c.earliest).min(),
            latest: children.iter().filter_map(|c| c.latest).max(),
            first_seq: children.iter().map(|c| c.first_seq).min().unwrap_or(0),
            last_seq: children.iter().map(|c| c.last_seq).max().unwrap_or(0),
            descendant_messages: children.iter().map(|c| c.descendant_messages).sum(),
            descendant_summaries: children.iter().map(|c| c.descendant_summaries + 1).sum(),
            source_tokens,
            method: format!("{}:{}", self.summarizer.label(), produced.method),
            created_at: now_ms(),
        };
        self.commit(conversation, summary, Vec::new(), child_ids, run, Bridged::default())
    }

    fn commit(
        &self,
        conversation: &Conversation,
        mut summary: Summary,
        message_ids: Vec<i64>,
        child_ids: Vec<String>,
        replaced: &[ContextItem],
        bridged: Bridged,
    ) -> Result<Option<(SummaryKind, ContextItem)>> {
        summary.token_count = 4 + estimate_tokens(&render_summary(&summary));
        let source_tokens: usize = replaced.iter().map(|i| i.tokens).sum();
        // A flush folds every raw message even when a tiny one does not shrink: each step still
        // consumes raw messages, so it terminates.
        let flushing_leaf = self.mode == Mode::Flush && !message_ids.is_empty();
        if summary.token_count >= source_tokens && !flushing_leaf {
            tracing::debug!(id = %summary.id, "summary not smaller than its source; not committed");
            return Ok(None);
        }
        let ordinals: Vec<i64> = replaced.iter().map(|i| i.ordinal).collect();
        let expected: Vec<ItemRef> = replaced.iter().map(|i| i.item.clone()).collect();
        let s = &summary;
        let payload = SummaryPayload {
            summary_id: s.id.clone(),
            session_id: conversation.session_id.clone(),
            session_key: conversation.session_key.clone(),
            agent_id: conversation.agent_id.clone(),
            kind: s.kind,
            depth: s.depth,
            content: s.content.clone(),
            earliest: s.earliest,
            latest: s.latest,
            messages: bridged.messages,
            lead_in: bridged.lead_in,
            child_summary_ids: child_ids.clone(),
            project: conversation.project.clone(),
        };
        let outbox =
            serde_json::to_string(&payload).map_err(|e| StoreError::Corrupt(format!("summary payload: {e}")))?;
        let new = NewSummary { summary, message_ids, child_ids };
        if !self.store.commit_summary(&new, &ordinals, &expected, Some(&outbox))? {
            return Ok(None);
        }
        // The summary and its hand-off are committed; delivery is best-effort here and retried
        // from the outbox until memory has it.
        if self.hand_off {
            self.deliver(&payload.summary_id, &payload)?;
        }
        let s = new.summary;
        let first = ordinals.iter().min().copied().unwrap_or(0);
        let item = ContextItem {
            ordinal: first,
            tokens: s.token_count,
            item: ItemRef::Summary { id: s.id, depth: s.depth },
            time: s.latest,
        };
        Ok(Some((s.kind, item)))
    }

    /// Hand one summary to memory; on failure it stays in the outbox with its back-off.
    pub(crate) fn deliver(&self, summary_id: &str, payload: &SummaryPayload) -> Result<bool> {
        match self.bridge.ingest_summary(payload) {
            Ok(()) => {
                self.store.outbox_done(summary_id)?;
                Ok(true)
            }
            Err(e) => {
                tracing::warn!(summary = %summary_id, error = %e, "memory did not take a summary; it stays in the outbox");
                self.store.outbox_failed(summary_id, &e.to_string())?;
                Ok(false)
            }
        }
    }

    /// Deliver what earlier hand-offs of this conversation left in the outbox (due ones, oldest
    /// first); stops at the first failure, which has its back-off.
    pub fn drain_outbox(&self, conversation: &Conversation) -> Result<usize> {
        let mut delivered = 0;
        for (summary_id, json, _) in self.store.outbox_due(conversation.id, 256)? {
            let payload: SummaryPayload = match serde_json::from_str(&json) {
                Ok(p) => p,
                Err(e) => {
                    self.store.outbox_failed(&summary_id, &format!("unreadable payload: {e}"))?;
                    continue;
                }
            };
            if !self.deliver(&summary_id, &payload)? {
                break;
            }
            delivered += 1;
        }
        Ok(delivered)
    }
}

/// The raw messages a leaf hands to memory, and the one before them.
#[derive(Default)]
struct Bridged {
    messages: Vec<BridgeMessage>,
    lead_in: Vec<BridgeMessage>,
}

fn bridge_message(m: &StoredMessage) -> BridgeMessage {
    let speaker = serde_json::from_str(&m.raw).ok().and_then(|v| crate::message::AgentMessage::from_value(v).speaker());
    BridgeMessage {
        message_id: m.id,
        seq: m.seq,
        role: m.role.clone(),
        text: m.content.clone(),
        timestamp: m.timestamp,
        speaker,
    }
}

/// Tokens a rendered `<summary …>` wrapper and message framing add around a summary's text.
const SUMMARY_FRAME_TOKENS: usize = 40;
/// Below this a leaf cannot be usefully smaller than its source (see `leaf_chunk`).
const MIN_LEAF_SOURCE_TOKENS: usize = 3 * SUMMARY_FRAME_TOKENS;

enum Step {
    Leaf(std::ops::Range<usize>),
    Condense(std::ops::Range<usize>),
}

/// The oldest run of at least `fanout` contiguous summaries of one depth.
fn fanout_run(items: &[ContextItem], fanout: usize) -> Option<std::ops::Range<usize>> {
    let mut i = 0;
    while i < items.len() {
        if let ItemRef::Summary { depth, .. } = items[i].item {
            let mut j = i + 1;
            while j < items.len() && matches!(items[j].item, ItemRef::Summary { depth: d, .. } if d == depth) {
                j += 1;
            }
            if j - i >= fanout {
                return Some(i..i + fanout);
            }
            i = j;
        } else {
            i += 1;
        }
    }
    None
}

/// Under pressure with no raw messages left to fold: the oldest adjacent pair of summaries of the
/// same depth, shallowest first. Merging only equals, like a binary counter, keeps the DAG's
/// depth logarithmic in the number of leaves, so no early fact is re-summarised more than
/// log n times. When every depth differs, nothing is merged: the context stays over the
/// threshold and the assembler leaves the oldest summaries out of the prompt; they stay in the
/// DAG (lcm_grep / lcm_expand_query) and in memory.
fn pressure_run(items: &[ContextItem]) -> Option<std::ops::Range<usize>> {
    let depth = |i: &ContextItem| match i.item {
        ItemRef::Summary { depth, .. } => Some(depth),
        ItemRef::Message { .. } => None,
    };
    (0..items.len().saturating_sub(1))
        .filter_map(|i| Some((i, depth(&items[i])?, depth(&items[i + 1])?)))
        .filter(|&(_, a, b)| a == b)
        .min_by_key(|&(i, d, _)| (d, i))
        .map(|(i, _, _)| i..i + 2)
}

/// A summary's id: of its conversation (its `uid`, unique across stores and purges — row ids are
/// given out again after a purge, and two stores share one memory), what it covers, and what it
/// says, so memory's "already ingested" can never take a new summary for one it has.
fn summary_id(conversation: &Conversation, kind: &str, covered: impl Iterator<Item = String>, content: &str) -> String {
    let mut h = Sha256::new();
    h.update(conversation.id.to_le_bytes());
    h.update(conversation.uid.as_bytes());
    h.update([0u8]);
    h.update(content.as_bytes());
    h.update([0u8]);
    h.update(kind.as_bytes());
    for c in covered {
        h.update(c.as_bytes());
        h.update([0u8]);
    }
    format!("sum_{}", &hex::encode(h.finalize())[..16])
}

/// Messages as summariser input: one `[time] role: text` line each, relative dates grounded
/// against the message's time ("yesterday (7 May 2023)"), so a summary read weeks later still
/// says when.
pub fn render_messages(messages: &[StoredMessage]) -> String {
    let mut out = String::new();
    for m in messages {
        let when = m.timestamp.map(memcc_core::time::minute).unwrap_or_else(|| format!("#{}", m.seq));
        let text = memcc_core::time::ground_relative_dates(&m.content.replace('\n', " "), m.timestamp);
        out.push_str(&format!("[{when}] {}: {}\n", m.role, text.trim()));
    }
    out
}
