//! Export and import: a store's records as JSON lines, read back checked line by line (one bad
//! line is reported, the rest imported) — stored unembedded; the runtime embeds them after.

use std::io::{BufRead, Write};

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::record::{MAX_WEIGHT, NewRecord};
use crate::store::{Insert, Records};

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    pub added: usize,
    pub duplicates: usize,
    pub skipped_forgotten: usize,
    pub errors: Vec<(usize, String)>,
}

/// One line of an export / import file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Portable {
    #[serde(flatten)]
    record: NewRecord,
    forgotten: bool,
}

/// Every record of `agent` (or all) in `store` as JSON lines; returns the count.
pub(crate) fn export(store: &dyn Records, agent: Option<&str>, out: &mut dyn Write) -> Result<usize> {
    let mut n = 0;
    store.for_each_record(agent, &mut |r| {
        let line = Portable {
            record: NewRecord {
                agent_id: r.agent_id,
                wing: r.wing,
                room: r.room,
                kind: r.kind,
                text: r.text,
                source_summary_ids: r.source_summary_ids,
                source_session_ids: r.source_session_ids,
                source_message_ids: r.source_message_ids,
                event_time: r.event_time,
                weight: r.weight,
                pinned: r.pinned,
                subject: r.subject,
                predicate: r.predicate,
                project: r.project,
                supersedes: None,
            },
            forgotten: r.forgotten,
        };
        writeln!(out, "{}", serde_json::to_string(&line).unwrap_or_default())?;
        n += 1;
        Ok(())
    })?;
    Ok(n)
}

/// Records from JSON lines into `store`, optionally into another agent, without vectors (queued).
pub(crate) fn import(store: &dyn Records, reader: impl BufRead, into_agent: Option<&str>) -> Result<ImportReport> {
    let mut report = ImportReport::default();
    let mut batch: Vec<NewRecord> = Vec::new();
    for (i, line) in reader.split(b'\n').enumerate() {
        let line = line?;
        let Ok(text) = std::str::from_utf8(&line) else {
            report.errors.push((i + 1, "invalid UTF-8".into()));
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Portable>(text) {
            Ok(p) if p.forgotten => report.skipped_forgotten += 1,
            Ok(mut p) => {
                if let Some(a) = into_agent {
                    p.record.agent_id = a.to_string();
                }
                match checked(p.record) {
                    Ok(r) => batch.push(r),
                    Err(e) => report.errors.push((i + 1, e)),
                }
            }
            Err(e) => report.errors.push((i + 1, format!("malformed record: {e}"))),
        }
    }
    // What the agents forgot does not come back with an import (an export from before the forget).
    let before = batch.len();
    let batch: Vec<NewRecord> =
        crate::ingest::without_forgotten(store, batch.into_iter().map(|r| (r, Vec::new())).collect())?
            .into_iter()
            .map(|(r, _)| r)
            .collect();
    report.skipped_forgotten += before - batch.len();
    for chunk in batch.chunks(500) {
        let inserts: Vec<Insert<'_>> = chunk.iter().map(|r| Insert { record: r, vector: None, triples: &[] }).collect();
        for ins in store.insert_many(&inserts)? {
            if ins.duplicate { report.duplicates += 1 } else { report.added += 1 }
        }
    }
    Ok(report)
}

/// An imported record as it may be stored: text, an agent, times MemCC can show, a weight in
/// [0, 3] (a file cannot plant a record that outweighs every pinned one).
fn checked(mut r: NewRecord) -> std::result::Result<NewRecord, String> {
    r.make_storable(&mut []);
    if r.text.trim().is_empty() {
        return Err("record without text".into());
    }
    crate::record::check_record_size(&r.text)?;
    if r.agent_id.trim().is_empty() {
        return Err("record without agentId".into());
    }
    if let Some(t) = r.event_time {
        memcc_core::time::validate(t).map_err(|e| format!("eventTime: {e}"))?;
    }
    if !r.weight.is_finite() || !(0.0..=MAX_WEIGHT).contains(&r.weight) {
        return Err(format!("weight {} is outside [0, {MAX_WEIGHT}]", r.weight));
    }
    r.text = r.text.trim().to_string();
    Ok(r)
}
