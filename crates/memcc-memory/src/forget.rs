//! Forgetting: a record, and what was derived from the same words, leaves every read path.
//!
//! Forgetting record R (of one agent) in one transaction:
//! - R is hidden (soft: `forgotten_at`; purge: deleted with its FTS row, vectors and triples);
//! - preferences and facts mined only from R's messages go the same way;
//! - verbatim windows that share messages with R (windows overlap) lose those messages' lines —
//!   their text, FTS row and vector are rewritten (re-embedded later), or the window goes too
//!   when nothing else is left;
//! - the summaries made from those messages go too, and the condensed summaries above them (a
//!   summary cannot be cut like a window: it may say the fact in other words); the windows of
//!   the other messages stay, so the rest of that conversation is still remembered;
//! - triples whose source record is hidden are never recalled (the KG query checks it);
//! - what it said is tombstoned in the conversations it was said in, so a later summary of
//!   them does not bring it back; another conversation that says it is a new statement;
//! - the sessions it touched are counted again in the session index from what is left.
//!
//! Forgetting a summary itself hides just it (and what condenses it). Soft-forgotten records
//! stay on disk and in exports, marked; a purge leaves nothing of them.

use std::collections::HashSet;

use crate::error::Result;
use crate::record::{MemoryRecord, RecordKind};
use crate::sessions::MessageWords;

/// What forgetting reads and writes, inside one transaction of a backend. The policy (what a
/// forget reaches) is [`forget`]'s; a backend only says how each step is stored.
pub(crate) trait ForgetTx {
    /// Record `id` if `agent` owns it (forgotten or not).
    fn target(&mut self, agent: &str, id: i64) -> Result<Option<MemoryRecord>>;
    /// Other records of `agent` (not forgotten) made from any of `messages`.
    fn sharing(&mut self, agent: &str, except: i64, messages: &[i64]) -> Result<Vec<MemoryRecord>>;
    /// Current summary records of `agent` that condense summary `summary_id` (a condensed
    /// summary's record lists the summaries it condenses after its own id).
    fn condensing(&mut self, agent: &str, summary_id: &str) -> Result<Vec<MemoryRecord>>;
    /// Whether another record of `agent` (not `except`) has content hash `hash`.
    fn hash_taken(&mut self, agent: &str, hash: &str, except: i64) -> Result<bool>;
    /// Give window `id` its new `text` and message `ids`: new hash and full-text row, its old
    /// vectors deleted (they embedded the forgotten words) and the record queued for embedding;
    /// the triples it carried whose object the `dropped` lines state are deleted.
    fn rewrite(&mut self, id: i64, text: &str, ids: &[i64], dropped: &str) -> Result<()>;
    /// Hide (soft) or delete (purge) record `id`. A purge deletes its full-text row, vectors
    /// and triples, and makes current again what it (or its triples) superseded.
    fn remove(&mut self, id: i64, how: Forget) -> Result<()>;
    /// Ids of every record of `agent` made from session `session_id` — of those, with
    /// `summaries`, only the ones made from one of these summaries (or from none).
    fn session_records(&mut self, agent: &str, session_id: &str, summaries: Option<&[String]>) -> Result<Vec<i64>>;
    /// Remember that `agent` forgot these sentences ([`memcc_core::said::said_key`]s) of these
    /// conversations (none named: of every conversation).
    fn tombstone(&mut self, agent: &str, sessions: &[String], said: &[String]) -> Result<()>;
    /// The current verbatim windows of `agent`'s session `session_id`.
    fn session_windows(&mut self, agent: &str, session_id: &str) -> Result<Vec<MemoryRecord>>;
    /// Empty what the session index counted of `agent`'s session `session_id` (it keeps its key).
    fn clear_session(&mut self, agent: &str, session_id: &str) -> Result<()>;
    /// Drop `agent`'s session `session_id` from the index if nothing of it is counted.
    fn drop_empty_session(&mut self, agent: &str, session_id: &str) -> Result<()>;
    /// Count one message's words in its session ([`crate::insert::InsertTx::add_message_words`]).
    fn add_message_words(&mut self, agent: &str, words: &MessageWords) -> Result<()>;
}

/// Soft (hidden, kept marked) or hard (gone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forget {
    Soft,
    Purge,
}

/// What a forget changed, so the vector index can follow.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Forgotten {
    /// Records hidden or deleted (the target first).
    pub removed: Vec<i64>,
    /// Windows whose text lost the forgotten lines; queued for re-embedding.
    pub rewritten: Vec<i64>,
}

/// Forget record `id` of `agent` as [`Forget`] says; `None` when the agent has no such record
/// (or, for a soft forget, it is forgotten already).
pub(crate) fn forget(tx: &mut dyn ForgetTx, agent: &str, id: i64, how: Forget) -> Result<Option<Forgotten>> {
    let target = tx.target(agent, id)?;
    let Some(target) = target.filter(|r| how == Forget::Purge || !r.forgotten) else { return Ok(None) };
    let mut out = Forgotten::default();
    tx.remove(target.id, how)?;
    out.removed.push(target.id);
    // What it said stays forgotten where it was said: a later summary of that conversation
    // (condensing the ones removed here) or its import again may quote it. The same words said
    // in another conversation are a new statement, remembered as such.
    let mut sessions = target.source_session_ids.clone();
    let mut sentences = memcc_core::said::said_keys(&target.text);
    let mut summaries: Vec<String> = Vec::new();
    if target.kind == RecordKind::Summary {
        summaries.extend(target.source_summary_ids.first().cloned());
    }
    let said: HashSet<i64> = target.source_message_ids.iter().copied().collect();
    let shared = if target.kind == RecordKind::Summary || said.is_empty() {
        Vec::new()
    } else {
        tx.sharing(agent, target.id, &target.source_message_ids)?
    };
    for r in shared {
        match r.kind {
            RecordKind::Summary => {
                tx.remove(r.id, how)?;
                out.removed.push(r.id);
                summaries.extend(r.source_summary_ids.first().cloned());
                // A model's summary says it in its own words: those words, too, stay out of what
                // the conversation's later summaries are made from.
                sentences.extend(memcc_core::said::said_keys(&r.text));
                sessions.extend(r.source_session_ids.iter().cloned());
            }
            RecordKind::Preference | RecordKind::Fact if r.source_message_ids.iter().all(|m| said.contains(m)) => {
                tx.remove(r.id, how)?;
                out.removed.push(r.id);
            }
            RecordKind::Verbatim => match without_lines(&r, &said) {
                Some((text, ids, dropped)) if !tx.hash_taken(agent, &crate::record::content_hash(&text), r.id)? => {
                    sentences.extend(memcc_core::said::said_keys(&dropped));
                    sessions.extend(r.source_session_ids.iter().cloned());
                    tx.rewrite(r.id, &text, &ids, &dropped)?;
                    out.rewritten.push(r.id);
                }
                _ => {
                    tx.remove(r.id, how)?;
                    out.removed.push(r.id);
                }
            },
            _ => {}
        }
    }
    // Up the DAG: a condensed summary's record lists the summaries it condenses after its own id.
    while let Some(summary) = summaries.pop() {
        for r in tx.condensing(agent, &summary)? {
            tx.remove(r.id, how)?;
            out.removed.push(r.id);
            summaries.extend(r.source_summary_ids.first().cloned());
            sentences.extend(memcc_core::said::said_keys(&r.text));
        }
    }
    sentences.sort();
    sentences.dedup();
    sessions.sort();
    sessions.dedup();
    tx.tombstone(agent, &sessions, &sentences)?;
    for session in &sessions {
        reindex_session(tx, agent, session)?;
    }
    Ok(Some(out))
}

/// Count `agent`'s session `session_id` again in the session index from its current windows:
/// what a forget took from them no longer ranks the session.
fn reindex_session(tx: &mut dyn ForgetTx, agent: &str, session_id: &str) -> Result<()> {
    tx.clear_session(agent, session_id)?;
    for window in tx.session_windows(agent, session_id)? {
        for words in crate::sessions::stored_message_words(&window) {
            tx.add_message_words(agent, &words)?;
        }
    }
    tx.drop_empty_session(agent, session_id)
}

/// A window's text and message ids without the lines of `said` (and those lines); `None` when
/// nothing is left or its lines do not align with its messages (a record from before windows:
/// it goes whole).
fn without_lines(r: &MemoryRecord, said: &HashSet<i64>) -> Option<(String, Vec<i64>, String)> {
    let mut lines = r.text.lines();
    let header = lines.next()?.to_string();
    let body: Vec<&str> = lines.collect();
    if !header.starts_with("[Date:") || body.len() != r.source_message_ids.len() {
        return None;
    }
    type Lines<'a> = Vec<(&'a str, i64)>;
    let (dropped, kept): (Lines<'_>, Lines<'_>) =
        body.into_iter().zip(r.source_message_ids.iter().copied()).partition(|(_, id)| said.contains(id));
    if kept.is_empty() {
        return None;
    }
    let text = std::iter::once(header.as_str()).chain(kept.iter().map(|(l, _)| *l)).collect::<Vec<_>>().join("\n");
    let dropped = dropped.iter().map(|(l, _)| *l).collect::<Vec<_>>().join("\n");
    Some((text, kept.iter().map(|(_, id)| *id).collect(), dropped))
}

/// Delete every record of `agent` made from session `session_id` (with `summaries`, from that
/// conversation's summaries: two stores sharing one memory may each hold a session of the same
/// id, and one's purge must not take the other's), with all that hangs on them (a purged
/// conversation leaves nothing in memory). Returns the ids removed.
pub(crate) fn purge_session(
    tx: &mut dyn ForgetTx,
    agent: &str,
    session_id: &str,
    summaries: Option<&[String]>,
) -> Result<Vec<i64>> {
    let ids = tx.session_records(agent, session_id, summaries)?;
    for &id in &ids {
        tx.remove(id, Forget::Purge)?;
    }
    // What is left of the session (a store that shares it kept its own records) counts again.
    reindex_session(tx, agent, session_id)?;
    Ok(ids)
}
