//! The assembler: the token-budgeted prompt for the next model call.
//!
//! Side-effect free (the host calls it several times per turn). Output order: summaries, older
//! raw messages, recalled memory, then the newest user message and what follows it. What does
//! not fit is dropped oldest-first as a contiguous prefix, tool call/result pairs stay together,
//! and the estimate never exceeds the budget.

use memcc_core::text::{newest_words, static_regex};
use serde::Serialize;
use serde_json::{Value, json};

use crate::config::ContextConfig;
use crate::error::Result;
use crate::store::{ContextItem, ContextStore, Conversation, ItemRef, Summary};
use memcc_core::bridge::{ContextTurn, Layer, MemoryBridge, RecallQuery, RecallSection, Role};
use memcc_core::estimate_tokens;
use memcc_core::framing::RECALL_IS_DATA;

/// Added to the system prompt once compacted history exists.
pub const COMPACTION_HINT: &str = "Earlier turns of this conversation were compacted into <summary> blocks by MemCC. \
The summaries keep names, numbers, dates and decisions, but not every detail. When you need an exact detail from \
earlier (a value, a quote, a file content, a command), call lcm_grep to find where it was said, then \
lcm_expand_query with the summary or message ids it returns to read the original messages.";

/// Per-message framing tokens, as in `AgentMessage::token_count`.
const FRAME: usize = 4;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Assembled {
    /// Messages in the host's `AgentMessage` JSON shape.
    pub messages: Vec<Value>,
    pub estimated_tokens: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt_addition: Option<String>,
    pub summaries_included: usize,
    pub raw_messages_included: usize,
    /// Context items left out because they did not fit.
    pub items_dropped: usize,
    pub memory_sections: Vec<Layer>,
    pub memory_tokens: usize,
    /// The newest message did not fit and was cut (its full text stays in the store).
    pub truncated_latest: bool,
    /// The recalled sections with the record behind each line (for inspection; the messages
    /// already carry their text).
    #[serde(skip)]
    pub recalled: Vec<RecallSection>,
    /// Where each of `messages` came from, in the same order (for inspection).
    #[serde(skip)]
    pub parts: Vec<PromptPart>,
}

/// The origin of one message of an assembled prompt, and its estimated tokens.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptPart {
    pub source: PromptSource,
    pub tokens: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum PromptSource {
    /// A summary of older turns.
    Summary { id: String, depth: u32 },
    /// A raw message.
    Message { id: i64 },
    /// The date line before the first item of a day.
    DayMarker,
    /// The recalled memory sections (`Assembled::recalled`).
    Memory,
    /// The start of a newest message too long for the budget.
    TruncatedLatest { id: i64 },
}

static SECTION_TAG: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| static_regex(r"(?i)<(\s*/?\s*(?:summary|memcc-))"));

/// Escape text placed inside a `<summary>` element so it can neither close nor open one, nor
/// any of MemCC's `<memcc-…>` sections, in any letter case.
pub fn escape_summary_text(text: &str) -> String {
    memcc_core::framing::escape_as_read(text, &SECTION_TAG, |t| SECTION_TAG.replace_all(t, "&lt;$1").into_owned())
}

/// A summary as the model sees it.
pub fn render_summary(s: &Summary) -> String {
    let from = s.earliest.map(memcc_core::time::minute).unwrap_or_else(|| "?".into());
    let to = s.latest.map(memcc_core::time::minute).unwrap_or_else(|| "?".into());
    format!(
        "<summary id=\"{}\" kind=\"{}\" depth=\"{}\" from=\"{from}\" to=\"{to}\" messages=\"{}\">\n{}\n</summary>",
        s.id,
        s.kind.as_str(),
        s.depth,
        s.descendant_messages,
        escape_summary_text(&s.content)
    )
}

/// A run of items that must be kept or dropped together.
struct Unit {
    start: usize,
    end: usize,
    /// Its items' tokens, and its day marker's.
    tokens: usize,
    /// The day of its first raw message, when that differs from the item before it: raw
    /// messages carry their time only in fields a model never sees, so the prompt says when a
    /// new day starts (a long session spans weeks).
    day: Option<String>,
}

/// The marker shown before the first raw message of a new day.
fn day_marker(day: &str) -> String {
    format!("[MemCC: the messages below are from {day}]")
}

fn units(items: &[ContextItem]) -> Vec<Unit> {
    let mut out: Vec<Unit> = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let mut end = i + 1;
        if let ItemRef::Message { tool_call_ids, .. } = &items[i].item
            && !tool_call_ids.is_empty()
        {
            while end < items.len()
                && matches!(&items[end].item, ItemRef::Message { tool_result_for: Some(r), .. } if tool_call_ids.contains(r))
            {
                end += 1;
            }
        }
        let day_of = |item: &ContextItem| item.time.and_then(memcc_core::time::day);
        let day = match &items[i].item {
            ItemRef::Message { .. } if i > 0 => day_of(&items[i]).filter(|d| day_of(&items[i - 1]).as_ref() != Some(d)),
            ItemRef::Message { .. } => None,
            ItemRef::Summary { .. } => None,
        };
        let marker = day.as_deref().map_or(0, |d| FRAME + estimate_tokens(&day_marker(d)));
        out.push(Unit { start: i, end, tokens: items[i..end].iter().map(|x| x.tokens).sum::<usize>() + marker, day });
        i = end;
    }
    out
}

pub(crate) struct Assembler<'a> {
    pub store: &'a ContextStore,
    pub bridge: &'a dyn MemoryBridge,
    pub config: &'a ContextConfig,
}

impl Assembler<'_> {
    /// `pending`: text of messages the host will append after the assembled ones (the turn in
    /// progress); it joins the recall query but is not part of the output or the budget.
    pub fn assemble(
        &self,
        conversation: &Conversation,
        budget: usize,
        as_of: Option<i64>,
        pending: &str,
    ) -> Result<Assembled> {
        // A conversation not stored yet (id 0) simply has no items.
        let items = if conversation.id == 0 { Vec::new() } else { self.store.context_items(conversation.id)? };
        let has_summaries = items.iter().any(|i| !i.is_message());
        let mut remaining = budget;
        let mut system_prompt_addition = None;
        let hint_tokens = estimate_tokens(COMPACTION_HINT);
        if has_summaries && memcc_core::budget::hint_fits(hint_tokens, remaining) {
            system_prompt_addition = Some(COMPACTION_HINT.to_string());
            remaining -= hint_tokens;
        }

        // Recalled memory, defensively re-checked against its share.
        // The sections come after a line saying they are quoted data (prompt injection in what
        // was recalled), inside the same share.
        let memory_budget = self.config.memory_budget(remaining);
        let framing = FRAME + estimate_tokens(RECALL_IS_DATA) + 1;
        let mut sections: Vec<RecallSection> = Vec::new();
        if memory_budget > framing {
            let query = self.recall_query(conversation, &items, as_of, pending)?;
            if !query.text.trim().is_empty() {
                match self.bridge.retrieve(&query, memory_budget - framing) {
                    Ok(found) => {
                        let mut used = framing;
                        for s in found {
                            let t = estimate_tokens(&s.body) + 1;
                            if used + t <= memory_budget {
                                used += t;
                                sections.push(s);
                            }
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "memory recall failed; assembling without it")
                    }
                }
            }
        }
        let memory_text = std::iter::once(RECALL_IS_DATA)
            .chain(sections.iter().map(|s| s.body.as_str()))
            .collect::<Vec<_>>()
            .join("\n");
        let memory_tokens = if sections.is_empty() { 0 } else { FRAME + estimate_tokens(&memory_text) };
        remaining -= memory_tokens.min(remaining);

        // Newest-first, whole units, stop at the first that does not fit. The first shown raw
        // message gets a day marker of its own when it has none and is not from today (the
        // model would take it for today's): a tail that starts mid-way through an earlier day,
        // or the first day of a long session.
        let units = units(&items);
        let today = memcc_core::time::day(as_of.unwrap_or_else(memcc_core::time::now_ms));
        let opening_day = |u: &Unit| -> Option<String> {
            let item = &items[u.start];
            if u.day.is_some() || !item.is_message() {
                return None;
            }
            item.time.and_then(memcc_core::time::day).filter(|d| Some(d) != today.as_ref())
        };
        let marker_tokens = |day: &str| FRAME + estimate_tokens(&day_marker(day));
        let mut first_kept = items.len();
        let mut opening: Option<String> = None;
        let mut used = 0usize;
        for unit in units.iter().rev() {
            let day = opening_day(unit);
            if used + unit.tokens + day.as_deref().map_or(0, marker_tokens) > remaining {
                break;
            }
            used += unit.tokens;
            first_kept = unit.start;
            opening = day;
        }
        used += opening.as_deref().map_or(0, marker_tokens);
        let mut truncated_latest = false;
        let mut messages: Vec<Value> = Vec::new();
        let mut parts: Vec<PromptPart> = Vec::new();
        let mut summaries_included = 0;
        let mut raw_included = 0;
        let kept = &items[first_kept..];
        let last_user = kept.iter().rposition(|i| matches!(&i.item, ItemRef::Message { role: Role::User, .. }));
        let memory_message = (!sections.is_empty()).then(
            || json!({"role": "user", "content": memory_text, "timestamp": as_of.unwrap_or_else(memcc_core::time::now_ms)}),
        );
        let mut markers: std::collections::HashMap<usize, &str> =
            units.iter().filter_map(|u| Some((u.start, u.day.as_deref()?))).collect();
        if let Some(day) = &opening {
            markers.insert(first_kept, day);
        }
        for (pos, item) in kept.iter().enumerate() {
            if Some(pos) == last_user
                && let Some(m) = &memory_message
            {
                messages.push(m.clone());
                parts.push(PromptPart { source: PromptSource::Memory, tokens: memory_tokens });
            }
            if let Some(day) = markers.get(&(first_kept + pos)) {
                let marker = day_marker(day);
                parts.push(PromptPart { source: PromptSource::DayMarker, tokens: FRAME + estimate_tokens(&marker) });
                messages.push(json!({"role": "user", "content": marker, "timestamp": item.time}));
            }
            match &item.item {
                ItemRef::Summary { id, depth } => {
                    if let Some(s) = self.store.summary(id)? {
                        messages.push(json!({"role": "user", "content": render_summary(&s), "timestamp": s.latest}));
                        parts.push(PromptPart {
                            source: PromptSource::Summary { id: id.clone(), depth: *depth },
                            tokens: item.tokens,
                        });
                        summaries_included += 1;
                    }
                }
                ItemRef::Message { id, .. } => {
                    if let Some(m) = self.store.messages(&[*id])?.pop() {
                        let mut raw = serde_json::from_str(&m.raw)
                            .unwrap_or_else(|_| json!({"role": m.role, "content": m.content}));
                        // A message cannot pass for MemCC's own notes or citations.
                        memcc_core::framing::defang_message(&mut raw);
                        messages.push(raw);
                        parts.push(PromptPart { source: PromptSource::Message { id: *id }, tokens: item.tokens });
                        raw_included += 1;
                    }
                }
            }
        }
        if last_user.is_none()
            && let Some(m) = memory_message
        {
            messages.push(m);
            parts.push(PromptPart { source: PromptSource::Memory, tokens: memory_tokens });
        }
        // Not even the newest unit fits: send the start of the newest message instead of nothing
        // (when the budget holds the note and a useful start of it).
        if kept.is_empty()
            && let Some(ItemRef::Message { id, .. }) = units.last().map(|u| &items[u.end - 1].item)
            && let Some(m) = self.store.messages(&[*id])?.pop()
        {
            let note = format!(
                "[MemCC: this {} message is {} tokens, more than the context budget allows; its start \
                         follows. Use lcm_expand_query ids=[\"msg_{}\"] to read it in parts.]\n",
                m.role, m.token_count, m.id
            );
            let frame = FRAME + estimate_tokens(&note);
            if let Some(room) = remaining.checked_sub(frame).filter(|&r| r >= 16) {
                // MemCC presents this cut, so it may not open or close a section either.
                let text = cut_to_tokens(&escape_summary_text(&cut_to_tokens(&m.content, room)), room);
                used = frame + estimate_tokens(&text);
                messages.push(json!({"role": "user", "content": format!("{note}{text}"), "timestamp": m.timestamp}));
                parts.push(PromptPart { source: PromptSource::TruncatedLatest { id: m.id }, tokens: used });
                truncated_latest = true;
            }
        }
        let estimated_tokens = used + memory_tokens + system_prompt_addition.as_ref().map_or(0, |_| hint_tokens);
        Ok(Assembled {
            messages,
            estimated_tokens,
            system_prompt_addition,
            summaries_included,
            raw_messages_included: raw_included,
            items_dropped: first_kept.min(items.len()) + usize::from(truncated_latest),
            memory_sections: sections.iter().map(|s| s.name).collect(),
            memory_tokens,
            truncated_latest,
            recalled: sections,
            parts,
        })
    }

    /// [`Self::recall_query`] for a conversation that may not be stored yet (id 0: no items).
    pub fn recall_query_for(
        &self,
        conversation: &Conversation,
        as_of: Option<i64>,
        pending: &str,
    ) -> Result<RecallQuery> {
        let items = if conversation.id == 0 { Vec::new() } else { self.store.context_items(conversation.id)? };
        self.recall_query(conversation, &items, as_of, pending)
    }

    /// The recall query: the newest user message (`pending`, else the last raw message when the
    /// user wrote it) when it says what it is about, with the turns before it as its context;
    /// else the last three raw messages with it (capped); see [`focused_query`].
    fn recall_query(
        &self,
        conversation: &Conversation,
        items: &[ContextItem],
        as_of: Option<i64>,
        pending: &str,
    ) -> Result<RecallQuery> {
        let ids: Vec<i64> = items
            .iter()
            .rev()
            .filter_map(|i| match &i.item {
                ItemRef::Message { id, .. } => Some(*id),
                _ => None,
            })
            .take(CONTEXT_TURNS)
            .collect();
        let mut messages = self.store.messages(&ids)?;
        messages.reverse();
        let mut turns: Vec<(Role, &str)> = messages.iter().map(|m| (m.role.clone(), m.content.as_str())).collect();
        if !pending.trim().is_empty() {
            turns.push((Role::User, pending));
        }
        let newest_is_user = turns.last().is_some_and(|(role, _)| *role == Role::User);
        // A focused message is the query; the turns before it still say what the conversation
        // is about, and go along as its context.
        let mut context = Vec::new();
        let focus = turns.last().map(|(_, t)| *t).filter(|t| newest_is_user && focused_query(t));
        let text = match focus {
            Some(focus) => {
                context = turns[..turns.len() - 1]
                    .iter()
                    .map(|(role, t)| ContextTurn::new(role.clone(), cut_chars(t, CONTEXT_TURN_CHARS)))
                    .collect();
                newest_words(focus, RECALL_QUERY_CHARS)
            }
            None => {
                // The last three stored messages, and the pending one.
                let from = turns.len().saturating_sub(QUERY_MESSAGES + usize::from(!pending.trim().is_empty()));
                let last: Vec<&str> = turns[from..].iter().map(|(_, t)| *t).collect();
                newest_words(&last.join("\n"), RECALL_QUERY_CHARS)
            }
        };
        let as_of = as_of.or_else(|| messages.iter().filter_map(|m| m.timestamp).max());
        Ok(RecallQuery {
            agent_id: conversation.agent_id.clone(),
            session_id: conversation.session_id.clone(),
            text,
            as_of,
            context,
            project: conversation.project.clone(),
        })
    }
}

/// The turns before a focused question that go along as its context: the ranker weighs the
/// nearest four (RealMem dev, whole sessions: depth 4 over 1 and 2, `../shared/research/ranking`).
const CONTEXT_TURNS: usize = 4;

/// The most of one context turn passed on: a long answer's words past it add little and cost a
/// count each.
const CONTEXT_TURN_CHARS: usize = 4_000;

/// The stored messages an unfocused recall query is made of, with the pending one.
const QUERY_MESSAGES: usize = 3;

/// The first `max` characters of `text`.
fn cut_chars(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// The longest prefix of `text` (on a char boundary) of at most `max_tokens`.
pub fn cut_to_tokens(text: &str, max_tokens: usize) -> String {
    if estimate_tokens(text) <= max_tokens {
        return text.to_string();
    }
    // Binary search on the char count; estimate_tokens is monotonic in prefix length.
    let boundaries: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
    let (mut lo, mut hi) = (0usize, boundaries.len() - 1);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if estimate_tokens(&text[..boundaries[mid]]) <= max_tokens {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    text[..boundaries[lo]].to_string()
}

/// The most characters of recent messages a recall query carries. Embedding a query costs about
/// 1.5 ms per 100 characters with the local model and each distinct word is counted and searched,
/// so a query made of long messages (up to 2,000 characters, ~30 ms) would cost the host more per
/// turn than the whole search behind a short question; about 100 words hold the turn being
/// answered and the end of the one before it.
pub(crate) const RECALL_QUERY_CHARS: usize = 600;

/// Whether a user message is a query of its own: it names at least two things (content words of
/// four letters or more; a CJK run, unsegmented, counts one per two characters). Then it alone
/// is the recall query: the turns before it are often about something else (in a long session,
/// always), and their words would outvote the question's. A short follow-up ("and her sister?",
/// "为什么？") names less, so it borrows the words of the turns before it.
pub(crate) fn focused_query(text: &str) -> bool {
    use memcc_core::text::{Term, is_stop_word, terms};
    let mut seen: Vec<Term> = Vec::new();
    let mut named = 0;
    for t in terms(text) {
        if seen.contains(&t) {
            continue;
        }
        named += match &t {
            Term::Word(w) => usize::from(w.chars().count() >= 4 && !is_stop_word(w)),
            Term::Cjk(c) => c.len() / 2,
        };
        seen.push(t);
    }
    named >= 2
}
