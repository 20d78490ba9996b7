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
//! - triples whose source record is hidden are never recalled (the KG query checks it).
//!
//! Forgetting a summary itself hides just it (and what condenses it). Soft-forgotten records
//! stay on disk and in exports, marked; a purge leaves nothing of them.

use std::collections::HashSet;

use rusqlite::{Transaction, params};

use crate::error::Result;
use crate::record::{MemoryRecord, RecordKind};
use crate::store::{RECORD_SELECT, content_hash, now_ms, record_from_row};
use memcc_core::text::fts_document;

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
pub(crate) fn forget(tx: &Transaction<'_>, agent: &str, id: i64, how: Forget) -> Result<Option<Forgotten>> {
    let target: Option<MemoryRecord> = {
        let mut stmt = tx.prepare_cached(&format!("{RECORD_SELECT} WHERE id = ?1 AND agent_id = ?2"))?;
        let mut rows = stmt.query_map(params![id, agent], record_from_row)?;
        rows.next().transpose()?
    };
    let Some(target) = target.filter(|r| how == Forget::Purge || !r.forgotten) else { return Ok(None) };
    let mut out = Forgotten::default();
    remove(tx, target.id, how)?;
    out.removed.push(target.id);
    let mut summaries: Vec<String> = Vec::new();
    if target.kind == RecordKind::Summary {
        summaries.extend(target.source_summary_ids.first().cloned());
    }
    let said: HashSet<i64> = target.source_message_ids.iter().copied().collect();
    let shared = if target.kind == RecordKind::Summary || said.is_empty() {
        Vec::new()
    } else {
        sharing(tx, agent, target.id, &target.source_message_ids)?
    };
    for r in shared {
        match r.kind {
            RecordKind::Summary => {
                remove(tx, r.id, how)?;
                out.removed.push(r.id);
                summaries.extend(r.source_summary_ids.first().cloned());
            }
            RecordKind::Preference | RecordKind::Fact if r.source_message_ids.iter().all(|m| said.contains(m)) => {
                remove(tx, r.id, how)?;
                out.removed.push(r.id);
            }
            RecordKind::Verbatim => match without_lines(&r, &said) {
                Some((text, ids, dropped)) if !hash_taken(tx, agent, &text, r.id)? => {
                    rewrite(tx, r.id, &text, &ids, &dropped)?;
                    out.rewritten.push(r.id);
                }
                _ => {
                    remove(tx, r.id, how)?;
                    out.removed.push(r.id);
                }
            },
            _ => {}
        }
    }
    // Up the DAG: a condensed summary's record lists the summaries it condenses after its own id.
    while let Some(summary) = summaries.pop() {
        for r in condensing(tx, agent, &summary)? {
            remove(tx, r.id, how)?;
            out.removed.push(r.id);
            summaries.extend(r.source_summary_ids.first().cloned());
        }
    }
    Ok(Some(out))
}

/// Current summary records of `agent` that condense summary `id`.
fn condensing(tx: &Transaction<'_>, agent: &str, id: &str) -> Result<Vec<MemoryRecord>> {
    let mut stmt = tx.prepare_cached(&format!(
        "{RECORD_SELECT} WHERE agent_id = ?1 AND kind = 'summary' AND forgotten_at IS NULL
           AND EXISTS (SELECT 1 FROM json_each(records.source_summary_ids) s WHERE s.key > 0 AND s.value = ?2)"
    ))?;
    let rows = stmt.query_map(params![agent, id], record_from_row)?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// Other records of `agent` (not forgotten) made from any of `messages`.
fn sharing(tx: &Transaction<'_>, agent: &str, except: i64, messages: &[i64]) -> Result<Vec<MemoryRecord>> {
    let ids = serde_json::to_string(messages).unwrap_or_else(|_| "[]".into());
    let mut stmt = tx.prepare_cached(&format!(
        "{RECORD_SELECT} WHERE agent_id = ?1 AND id <> ?2 AND forgotten_at IS NULL
           AND EXISTS (SELECT 1 FROM json_each(records.source_message_ids) m
                       WHERE m.value IN (SELECT value FROM json_each(?3)))"
    ))?;
    let rows = stmt.query_map(params![agent, except, ids], record_from_row)?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
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

fn hash_taken(tx: &Transaction<'_>, agent: &str, text: &str, except: i64) -> Result<bool> {
    let n: i64 = tx.query_row(
        "SELECT COUNT(*) FROM records WHERE agent_id = ?1 AND content_hash = ?2 AND id <> ?3",
        params![agent, content_hash(text), except],
        |r| r.get(0),
    )?;
    Ok(n > 0)
}

/// Give window `id` its new `text` and `ids`; the triples it carried that the `dropped` lines
/// stated go with those lines.
fn rewrite(tx: &Transaction<'_>, id: i64, text: &str, ids: &[i64], dropped: &str) -> Result<()> {
    tx.execute(
        "UPDATE records SET text = ?2, content_hash = ?3, source_message_ids = ?4, embed_status = 'pending'
         WHERE id = ?1",
        params![id, text, content_hash(text), serde_json::to_string(ids).unwrap_or_else(|_| "[]".into())],
    )?;
    tx.execute("DELETE FROM records_fts WHERE rowid = ?1", [id])?;
    tx.execute("INSERT INTO records_fts (rowid, body) VALUES (?1, ?2)", params![id, fts_document(text)])?;
    // The old vector embedded the forgotten words.
    tx.execute("DELETE FROM vectors WHERE record_id = ?1", [id])?;
    delete_triples(tx, "source_record = ?1 AND instr(lower(?2), lower(object)) > 0", params![id, dropped])
}

/// Delete the triples `condition` selects. A triple they superseded is current again (as a
/// record is when the record that superseded it is purged), so no reference dangles.
fn delete_triples(tx: &Transaction<'_>, condition: &str, params: &[&dyn rusqlite::ToSql]) -> Result<()> {
    tx.execute(
        &format!(
            "UPDATE triples SET superseded_by = NULL, valid_until = NULL
              WHERE superseded_by IN (SELECT id FROM triples WHERE {condition})"
        ),
        params,
    )?;
    tx.execute(&format!("DELETE FROM triples WHERE {condition}"), params)?;
    Ok(())
}

fn remove(tx: &Transaction<'_>, id: i64, how: Forget) -> Result<()> {
    match how {
        Forget::Soft => {
            tx.execute(
                "UPDATE records SET forgotten_at = COALESCE(forgotten_at, ?2) WHERE id = ?1",
                params![id, now_ms()],
            )?;
        }
        Forget::Purge => {
            delete_triples(tx, "source_record = ?1", params![id])?;
            tx.execute("DELETE FROM vectors WHERE record_id = ?1", [id])?;
            tx.execute("DELETE FROM records_fts WHERE rowid = ?1", [id])?;
            // What it superseded is current again: the newer statement is gone.
            tx.execute("UPDATE records SET superseded_by = NULL, valid_until = NULL WHERE superseded_by = ?1", [id])?;
            tx.execute("DELETE FROM records WHERE id = ?1", [id])?;
        }
    }
    Ok(())
}

/// Delete every record of `agent` made from session `session_id`, with all that hangs on them
/// (a purged conversation leaves nothing in memory). Returns the ids removed.
pub(crate) fn purge_session(tx: &Transaction<'_>, agent: &str, session_id: &str) -> Result<Vec<i64>> {
    let ids: Vec<i64> = {
        let mut stmt = tx.prepare_cached(
            "SELECT id FROM records WHERE agent_id = ?1
               AND EXISTS (SELECT 1 FROM json_each(records.source_session_ids) s WHERE s.value = ?2)",
        )?;
        let rows = stmt.query_map(params![agent, session_id], |r| r.get(0))?;
        rows.collect::<std::result::Result<_, _>>()?
    };
    for &id in &ids {
        remove(tx, id, Forget::Purge)?;
    }
    Ok(ids)
}
