//! Ingestion: what a bridged summary becomes (the summary record, verbatim windows, mined
//! preferences, knowledge-graph triples), embedded in one batch and stored in one transaction;
//! and the queue of records waiting for their embedding. It writes through what it is given
//! ([`Ingest`]); it knows nothing of the runtime that owns them.

use std::collections::HashMap;

use serde::Serialize;

use crate::chunk::windows;
use crate::classify::Classifier;
use crate::config::MemoryConfig;
use crate::embed::Embedder;
use crate::error::Result;
use crate::lang::preference::about_speaker;
use crate::lang::{PrefCategory, Sentences};
use crate::record::{MAX_RECORD_CHARS, NewRecord, NewTriple, RecordKind};
use crate::store::{IngestStore, Insert, Inserted, Records};
use crate::vector::VectorStore;
use memcc_core::bridge::{BridgeMessage, Role, SummaryPayload};
use memcc_core::llm::ChatModel;
use memcc_core::time::{date_header, ground_relative_dates};

/// What one bridged summary became.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IngestReport {
    pub records: usize,
    pub duplicates: usize,
    /// Stored without a vector (embedding failed); queued for retry.
    pub pending: usize,
    pub preferences: usize,
    pub triples: usize,
}

/// What ingestion writes to and reads: the store, the vector index beside it, the embedder, the
/// settings, the classifier naming each record's wing, and the chat model that finds triples
/// (when configured).
pub(crate) struct Ingest<'a> {
    pub store: &'a dyn IngestStore,
    pub index: &'a dyn VectorStore,
    pub embedder: &'a dyn Embedder,
    pub config: &'a MemoryConfig,
    pub classifier: &'a Classifier,
    pub triple_model: Option<&'a dyn ChatModel>,
}

impl Ingest<'_> {
    /// Triples a chat model finds in the user's messages; empty on any failure (logged).
    fn llm_triples(&self, s: &SummaryPayload) -> Vec<NewTriple> {
        let Some(model) = self.triple_model else { return Vec::new() };
        let said: Vec<&str> = s.messages.iter().filter(|m| m.role == Role::User).map(|m| m.text.as_str()).collect();
        if said.is_empty() {
            return Vec::new();
        }
        let request = memcc_core::llm::ChatRequest::simple(
            "Extract durable facts about people, places and organisations from what the user said, as a JSON array \
             of [subject, predicate, object] triples in snake_case predicates (e.g. [\"user\", \"lives_in\", \"Berlin\"]). \
             Use \"user\" for the speaker. Reply with only the JSON array; [] when there are none.",
            &said.join("\n"),
            400,
        );
        let reply = match model.complete(&request) {
            Ok(reply) => Some(reply),
            // No model lent for this work (a host's, a client's): rule-based triples, quietly.
            Err(memcc_core::llm::LlmError::Absent(_)) => return Vec::new(),
            Err(_) => None,
        };
        let parsed = reply.and_then(|reply| {
            let start = reply.find('[')?;
            let end = reply.rfind(']')?;
            serde_json::from_str::<Vec<Vec<String>>>(reply.get(start..=end)?).ok()
        });
        match parsed {
            Some(rows) => rows
                .into_iter()
                .filter(|r| r.len() == 3 && r.iter().all(|x| !x.trim().is_empty() && x.chars().count() <= 80))
                .take(32)
                .map(|r| NewTriple {
                    subject: r[0].trim().to_lowercase(),
                    predicate: r[1].trim().to_lowercase().replace(' ', "_"),
                    object: r[2].trim().to_string(),
                    valid_from: s.latest,
                })
                .collect(),
            None => {
                tracing::warn!(summary = %s.summary_id, "LLM triple extraction gave nothing usable; rule-based triples only");
                Vec::new()
            }
        }
    }

    /// Store records, embedding them in one batch; a failed embedding stores them queued.
    /// `summary`: (agent, summary id) the batch comes from, marked ingested with it.
    pub(crate) fn store_batch(
        &self,
        mut batch: Vec<(NewRecord, Vec<NewTriple>)>,
        summary: Option<(&str, &str)>,
        report: &mut IngestReport,
    ) -> Result<Vec<Inserted>> {
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        for (record, triples) in &mut batch {
            record.make_storable(triples);
        }
        let texts: Vec<&str> = batch.iter().map(|(r, _)| r.text.as_str()).collect();
        let model = self.embedder.model_id();
        let vectors = match self.embedder.embed(&texts) {
            Ok(v) if v.len() == texts.len() => Some(v),
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(error = %e, records = texts.len(), "embedding failed; records stored and queued for retry");
                None
            }
        };
        let mut keep = vec![true; batch.len()];
        if let (Some(vectors), true) = (&vectors, self.config.vector_dedup_enabled) {
            for (i, ((record, _), v)) in batch.iter().zip(vectors).enumerate() {
                // Persisted records only: earlier records of this very batch are not compared.
                let near = self.index.search(v, 1, std::slice::from_ref(&record.agent_id))?;
                if near.first().is_some_and(|h| f64::from(h.score) >= self.config.vector_dedup_threshold) {
                    keep[i] = false;
                    report.duplicates += 1;
                }
            }
        }
        let inserts: Vec<Insert<'_>> = batch
            .iter()
            .enumerate()
            .filter(|(i, _)| keep[*i])
            .map(|(i, (record, triples))| Insert {
                record,
                vector: vectors.as_ref().map(|v| (model.as_str(), v[i].as_slice())),
                triples,
            })
            .collect();
        let inserted = match summary {
            Some((agent, id)) => self.store.insert_summary(agent, id, &inserts)?,
            None => self.store.insert_many(&inserts)?,
        };
        for (ins, item) in inserted.iter().zip(&inserts) {
            if ins.duplicate {
                report.duplicates += 1;
                continue;
            }
            report.records += 1;
            report.triples += item.triples.len();
            match item.vector {
                Some((_, v)) => self.index.upsert(ins.id, &item.record.agent_id, v),
                None => report.pending += 1,
            }
        }
        Ok(inserted)
    }

    /// What the bridge delivers: a committed summary (and, for a leaf, the raw messages it covers).
    pub fn summary(&self, s: &SummaryPayload) -> Result<IngestReport> {
        let mut report = IngestReport::default();
        // A delivery repeated from the outbox (after a crash between the two stores).
        if self.store.summary_ingested(&s.agent_id, &s.summary_id)? {
            report.duplicates += 1;
            return Ok(report);
        }
        // Retry what an earlier failure left queued, before adding more.
        if let Err(e) = self.process_pending(256, &mut |_, _| {}) {
            tracing::warn!(error = %e, "pending embeddings still failing");
        }
        let base = |kind: RecordKind, text: String, event_time: Option<i64>, message_ids: Vec<i64>| {
            // Windows cut their messages to fit; this holds any other record to the same size.
            let text = if text.chars().count() > MAX_RECORD_CHARS {
                format!("{}…", text.chars().take(MAX_RECORD_CHARS - 1).collect::<String>())
            } else {
                text
            };
            let (wing, room) = self.classifier.classify(&text);
            NewRecord {
                agent_id: s.agent_id.clone(),
                wing,
                room,
                kind,
                text,
                source_summary_ids: vec![s.summary_id.clone()],
                source_session_ids: vec![s.session_id.clone()],
                source_message_ids: message_ids,
                event_time,
                project: s.project.clone(),
                ..NewRecord::default()
            }
        };
        let content = s.content_without_footer();
        let mut batch: Vec<(NewRecord, Vec<NewTriple>)> = Vec::new();
        let summary_ids = quoted_first(&s.messages, &content);
        let summary_triples = self.llm_triples(s);
        let mut summary = base(
            RecordKind::Summary,
            format!("{}\n{}", date_header(s.earliest, s.latest), content.trim()),
            s.earliest,
            summary_ids,
        );
        // Recall uses these to show a summary or its condensed parent, not both.
        summary.source_summary_ids.extend(s.child_summary_ids.iter().cloned());
        // The windows below hold every message whole, so a summary adds a record only when it
        // says something of its own: not when it kept no word (a truncation with no room for
        // one: "[…]"), which only its date and a meaningless vector could match, nor when it
        // quotes every message whole (a flush's span too short to shrink), which repeats them.
        let said: Vec<&str> = s.messages.iter().map(|m| m.text.trim()).filter(|t| !t.is_empty()).collect();
        let quotes_all = !said.is_empty() && said.iter().all(|t| content.contains(t));
        let mut unplaced = Vec::new();
        if quotes_all || memcc_core::text::terms(&content).is_empty() {
            unplaced = summary_triples;
        } else {
            batch.push((summary, summary_triples));
        }
        // What people said about themselves: the user's words, and any named speaker's.
        let speaking: Vec<&BridgeMessage> =
            s.messages.iter().filter(|m| m.role == Role::User || m.speaker.is_some()).collect();
        let mut mined: HashMap<i64, Vec<NewTriple>> = HashMap::new();
        for m in &speaking {
            let subject = m.speaker.as_deref().map(str::to_lowercase);
            for mut t in Sentences::of(&m.text).triples() {
                t.valid_from = m.timestamp;
                if let (Some(name), "user") = (&subject, t.subject.as_str()) {
                    t.subject = name.clone();
                }
                mined.entry(m.message_id).or_default().push(t);
            }
        }
        for chunk in windows(&s.lead_in, &s.messages, self.config.chunk_tokens) {
            // A message's triples go with the first window that holds it.
            let mut found: Vec<NewTriple> =
                chunk.message_ids.iter().filter_map(|id| mined.remove(id)).flatten().collect();
            // Facts a model read from the messages of a summary not kept go with the first window.
            found.append(&mut unplaced);
            batch.push((base(RecordKind::Verbatim, chunk.text, chunk.event_time, chunk.message_ids), found));
        }
        for m in &speaking {
            let said = ground_relative_dates(&m.text, m.timestamp);
            for p in Sentences::of(&said).preferences() {
                let weight = match p.category {
                    PrefCategory::Like | PrefCategory::Dislike | PrefCategory::Bio => {
                        crate::record::STANDING_PREFERENCE_WEIGHT
                    }
                    _ => crate::record::PREFERENCE_WEIGHT,
                };
                let document = about_speaker(&p.document, m.speaker.as_deref());
                let text = format!("{} {document}", date_header(m.timestamp, m.timestamp));
                let mut record = base(RecordKind::Preference, text, m.timestamp, vec![m.message_id]);
                record.weight = weight;
                record.subject = p.predicate.as_ref().map(|_| m.speaker.clone().unwrap_or_else(|| "user".into()));
                record.predicate = p.predicate;
                batch.push((record, Vec::new()));
                report.preferences += 1;
            }
        }
        // What the agent forgot is not brought back by a summary that quotes it.
        let batch = without_forgotten(self.store, batch)?;
        self.store_batch(batch, Some((&s.agent_id, &s.summary_id)), &mut report)?;
        Ok(report)
    }

    /// Embed up to `limit` queued records; `progress(done, total)` after each batch.
    pub fn process_pending(&self, limit: usize, progress: &mut dyn FnMut(usize, usize)) -> Result<usize> {
        let pending = self.store.pending(limit)?;
        let total = pending.len();
        let model = self.embedder.model_id();
        let mut done = 0;
        for batch in pending.chunks(64) {
            let texts: Vec<&str> = batch.iter().map(|(_, t)| t.as_str()).collect();
            let vectors = match self.embedder.embed(&texts) {
                Ok(v) => v,
                Err(e) => {
                    let ids: Vec<i64> = batch.iter().map(|(id, _)| *id).collect();
                    self.store.mark_embed_error(&ids, &e.to_string())?;
                    return Err(e.into());
                }
            };
            for ((id, _), v) in batch.iter().zip(&vectors) {
                self.store.set_vector(*id, &model, v)?;
                if let Some(r) = self.store.get(*id)? {
                    self.index.upsert(*id, &r.agent_id, v);
                }
            }
            done += batch.len();
            progress(done, total);
        }
        Ok(done)
    }
}

/// The ids of `messages`, those whose words `summary` quotes first (each group in conversation
/// order): a summary rests on what it kept, and a reader following its evidence should meet that
/// before the messages it left out. A sentence counts as quoted when its first 60 characters are
/// in the summary (the extractive summariser keeps sentences whole, or cut with "…").
fn quoted_first(messages: &[BridgeMessage], summary: &str) -> Vec<i64> {
    let quoted = |m: &BridgeMessage| {
        memcc_core::text::sentences_of(&m.text).any(|sentence| {
            let head: String = sentence.trim().chars().take(60).collect();
            head.chars().count() >= 12 && summary.contains(head.as_str())
        })
    };
    let (kept, left): (Vec<&BridgeMessage>, Vec<&BridgeMessage>) = messages.iter().partition(|m| quoted(m));
    kept.into_iter().chain(left).map(|m| m.message_id).collect()
}

/// `batch` without what its agents forgot: the sentences a tombstone of a record's
/// conversations names ([`crate::store::Records::tombstones`]) are taken out of it (a summary condensing
/// forgotten ones may quote them), with the triples whose object only they stated, and a
/// record left with nothing to say is not stored. For what memory derives (bridged summaries, imports); a
/// person saying it again (`add`) is a new statement and is stored as said.
pub(crate) fn without_forgotten(
    store: &dyn Records,
    batch: Vec<(NewRecord, Vec<NewTriple>)>,
) -> Result<Vec<(NewRecord, Vec<NewTriple>)>> {
    // A batch is a summary's records (one agent, one conversation) or an import's: read each
    // agent's and conversations' tombstones once.
    let mut tombstones: HashMap<(String, Vec<String>), std::collections::HashSet<String>> = HashMap::new();
    let mut kept = Vec::with_capacity(batch.len());
    for (mut record, mut triples) in batch {
        let key = (record.agent_id.clone(), record.source_session_ids.clone());
        if !tombstones.contains_key(&key) {
            let found = store.tombstones(&key.0, &key.1)?;
            tombstones.insert(key.clone(), found);
        }
        let gone = &tombstones[&key];
        if let Some((text, taken)) = memcc_core::said::without_said(&record.text, gone) {
            let taken = taken.to_lowercase();
            triples.retain(|t| {
                !taken.contains(&t.object.to_lowercase()) || text.to_lowercase().contains(&t.object.to_lowercase())
            });
            let body = text.strip_prefix('[').and_then(|t| t.split_once('\n')).map_or(text.as_str(), |(_, rest)| rest);
            if memcc_core::text::terms(body).is_empty() {
                tracing::info!(agent = %record.agent_id, "a delivered record held only forgotten sentences; not stored");
                continue;
            }
            record.text = text;
        }
        kept.push((record, triples));
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(id: i64, text: &str) -> BridgeMessage {
        BridgeMessage { message_id: id, seq: id, role: Role::User, text: text.into(), timestamp: None, speaker: None }
    }

    #[test]
    fn a_summary_rests_first_on_the_messages_it_quotes() {
        let messages = [
            message(1, "Hey, good to see you! How was the week?"),
            message(2, "Busy. I ran a charity race for mental health on Saturday. It was rewarding."),
            message(3, "Nice."),
            message(4, "We adopted a dog from the shelter in May, her name is Luna."),
        ];
        let summary = "- [2023-05-25 13:14] user: I ran a charity race for mental health on Saturday.\n\
                       - [2023-05-25 13:16] user: We adopted a dog from the shelter in May, her name is Luna.";
        assert_eq!(quoted_first(&messages, summary), vec![2, 4, 1, 3]);
        // A summary in its own words (a model's) quotes nothing: conversation order.
        assert_eq!(
            quoted_first(&messages, "They caught up; one ran a race, the other adopted a dog."),
            vec![1, 2, 3, 4]
        );
    }
}
