//! [`MemoryRuntime`]: the facade over the memory store, the embedder and the vector index; the
//! real [`MemoryBridge`]; and the API behind `memory_search` / `memory_get`.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use crate::chunk::windows;
use crate::classify::Classifier;
use crate::config::{MemoryConfig, VectorBackend};
use crate::embed::Embedder;
use crate::error::{MemoryError, Result};
use crate::extract::{PrefCategory, about_speaker, preferences, triples};
use crate::forget::{Forget, Forgotten};
use crate::recall::Recall;
use crate::record::{MemoryRecord, NewRecord, NewTriple, RecordKind, parse_ref};
use crate::search::{Query, Search, SearchHit, SearchMode};
use crate::store::{Insert, Inserted, MemoryStats, MemoryStore};
use crate::vector::{ExactScan, VectorStore};
use memcc_core::bridge::{BridgeError, BridgeMessage, MemoryBridge, RecallQuery, RecallSection, SummaryPayload};
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

pub struct MemoryRuntime {
    store: Arc<dyn MemoryStore>,
    embedder: Arc<dyn Embedder>,
    index: Arc<dyn VectorStore>,
    config: MemoryConfig,
    classifier: Classifier,
    reranker: Option<Arc<dyn ChatModel>>,
    rerank_skip_logged: AtomicBool,
    triple_model: Option<Arc<dyn ChatModel>>,
    /// The highest record id whose vector the index has read from `memory.db`: another process
    /// writing the same store adds rows above it, which searches then read first. `None` when
    /// the store searches its own vectors (nothing to catch up).
    index_seen: Option<std::sync::atomic::AtomicI64>,
}

/// The vector index of `model`, loaded from the store (its source of truth).
fn open_index(
    path: &Path,
    config: &MemoryConfig,
    store: &Arc<dyn MemoryStore>,
    model: &str,
    dim: usize,
) -> Result<Arc<dyn VectorStore>> {
    match config.vector_backend {
        VectorBackend::Exact => {
            let source_store = store.clone();
            let source_model = model.to_string();
            let index: Arc<dyn VectorStore> = Arc::new(ExactScan::new(
                dim,
                Some(Box::new(move |ids: &[i64]| source_store.vectors(ids, &source_model).unwrap_or_default())),
            ));
            load_index(&*index, &**store, model)?;
            Ok(index)
        }
        #[cfg(feature = "lancedb")]
        VectorBackend::Lancedb => {
            // One table per model (spaces never mix), beside memory.db; rebuilt from memory.db
            // when its row count disagrees (a crash between the two stores, a forget offline).
            let dir = lance_dir(path, model);
            let open = |dir: &Path| {
                crate::vector::lance::LanceVectorStore::open(dir, dim)
                    .map_err(|e| MemoryError::Config(format!("vectorBackend lancedb at {}: {e}", dir.display())))
            };
            let mut index = open(&dir)?;
            let expected = store.vector_count(model)?;
            if index.len() != expected {
                tracing::info!(expected, found = index.len(), dir = %dir.display(), "rebuilding the LanceDB index from memory.db");
                drop(index);
                std::fs::remove_dir_all(&dir)
                    .or_else(|e| if e.kind() == std::io::ErrorKind::NotFound { Ok(()) } else { Err(e) })?;
                index = open(&dir)?;
                load_index(&index, &**store, model)?;
            }
            Ok(Arc::new(index))
        }
        #[cfg(not(feature = "lancedb"))]
        VectorBackend::Lancedb => {
            let _ = path;
            Err(MemoryError::Config(
                "vectorBackend \"lancedb\" needs MemCC built with `--features lancedb`; use \"exact\" (the default)"
                    .into(),
            ))
        }
    }
}

#[cfg(feature = "lancedb")]
fn lance_dir(path: &Path, model: &str) -> std::path::PathBuf {
    let name: String = model.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    path.with_file_name(format!("{}.vectors-{name}.lance", path.file_stem().unwrap_or_default().to_string_lossy()))
}

/// Every current vector of `model` into `index`, in batches.
fn load_index(index: &dyn VectorStore, store: &dyn MemoryStore, model: &str) -> Result<()> {
    load_index_after(index, store, model, i64::MIN)
}

/// The current vectors of `model` with a record id above `after` into `index`, in batches.
fn load_index_after(index: &dyn VectorStore, store: &dyn MemoryStore, model: &str, after: i64) -> Result<()> {
    const BATCH: usize = 2048;
    let mut rows: Vec<(i64, String, Vec<f32>)> = Vec::with_capacity(BATCH);
    let flush = |rows: &mut Vec<(i64, String, Vec<f32>)>| {
        let view: Vec<crate::vector::VectorRow<'_>> =
            rows.iter().map(|(id, a, v)| (*id, a.as_str(), v.as_slice())).collect();
        index.upsert_many(&view);
        rows.clear();
    };
    store.for_each_vector_after(model, after, &mut |id, agent, v| {
        rows.push((id, agent.to_string(), v));
        if rows.len() == BATCH {
            flush(&mut rows);
        }
    })?;
    flush(&mut rows);
    Ok(())
}

impl MemoryRuntime {
    /// Open the store (`memory.db` at `path`, or the PostgreSQL database `memory.backend`
    /// names), queue records without a vector of this embedder's model (a model change; other
    /// models' vectors stay), and load the current model's vectors into the index (unless the
    /// store searches them itself).
    pub fn open(path: &Path, mut config: MemoryConfig, embedder: Arc<dyn Embedder>) -> Result<Self> {
        for warning in config.sanitize() {
            tracing::warn!("{warning}");
        }
        let store = crate::store::open(path, &config)?;
        let model = embedder.model_id();
        let pending = store.use_model(&model, embedder.dim())?;
        if pending > 0 {
            tracing::warn!(pending, model, "records wait for embedding by this model (memcc memory reembed)");
        }
        let (index, index_seen) = match store.native_index(&model, embedder.dim())? {
            Some(index) => (index, None),
            None => {
                let seen = std::sync::atomic::AtomicI64::new(store.last_vector_id()?);
                (open_index(path, &config, &store, &model, embedder.dim())?, Some(seen))
            }
        };
        let classifier = if config.wings.is_empty() { Classifier::default() } else { Classifier::new(&config.wings) };
        Ok(MemoryRuntime {
            store,
            embedder,
            index,
            config,
            classifier,
            reranker: None,
            rerank_skip_logged: AtomicBool::new(false),
            triple_model: None,
            index_seen,
        })
    }

    /// The chat model used by `llmRerank`.
    pub fn with_reranker(mut self, model: Arc<dyn ChatModel>) -> Self {
        self.reranker = Some(model);
        self
    }

    /// A chat model that extracts knowledge-graph triples from each leaf, beside the rules.
    pub fn with_triple_model(mut self, model: Arc<dyn ChatModel>) -> Self {
        self.triple_model = Some(model);
        self
    }

    /// Triples a chat model finds in the user's messages; empty on any failure (logged).
    fn llm_triples(&self, s: &SummaryPayload) -> Vec<NewTriple> {
        let Some(model) = &self.triple_model else { return Vec::new() };
        let said: Vec<&str> = s.messages.iter().filter(|m| m.role == "user").map(|m| m.text.as_str()).collect();
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
        let parsed = model.complete(&request).ok().and_then(|reply| {
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

    pub fn config(&self) -> &MemoryConfig {
        &self.config
    }

    pub fn store(&self) -> &dyn MemoryStore {
        &*self.store
    }

    pub fn embedder_model(&self) -> String {
        self.embedder.model_id()
    }

    pub(crate) fn readable_agents(&self, agent: &str) -> Vec<String> {
        let mut agents = vec![agent.to_string()];
        agents.extend(self.config.shared_agents.iter().filter(|a| a.as_str() != agent).cloned());
        agents
    }

    /// Read into the index the vectors other processes wrote since it last looked (one indexed
    /// `MAX` when there are none).
    fn catch_up(&self) -> Result<()> {
        use std::sync::atomic::Ordering;
        let Some(index_seen) = &self.index_seen else { return Ok(()) };
        let seen = index_seen.load(Ordering::Acquire);
        let last = self.store.last_vector_id()?;
        if last > seen && index_seen.compare_exchange(seen, last, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            load_index_after(&*self.index, &*self.store, &self.embedder.model_id(), seen)?;
        }
        Ok(())
    }

    fn search(&self) -> Search<'_> {
        Search {
            store: &*self.store,
            index: &*self.index,
            embedder: &*self.embedder,
            config: &self.config,
            reranker: self.reranker.as_deref(),
            rerank_skip_logged: &self.rerank_skip_logged,
        }
    }

    /// L3 deep search for `agent` (plus shared agents), with a choice of retrievers: `Hybrid`
    /// is what recall uses; the benchmark compares the others on the same store.
    pub fn search_with(
        &self,
        agent: &str,
        query: &str,
        as_of: Option<i64>,
        wing: Option<&str>,
        top: usize,
        mode: SearchMode,
    ) -> Result<Vec<SearchHit>> {
        let agents = self.readable_agents(agent);
        self.catch_up()?;
        self.search().run(&Query {
            agents: &agents,
            text: query,
            as_of,
            wing,
            top,
            candidates: top,
            mode,
            lexical: None,
        })
    }

    /// Store records, embedding them in one batch; a failed embedding stores them queued.
    /// `summary`: (agent, summary id) the batch comes from, marked ingested with it.
    fn store_batch(
        &self,
        batch: Vec<(NewRecord, Vec<NewTriple>)>,
        summary: Option<(&str, &str)>,
        report: &mut IngestReport,
    ) -> Result<Vec<Inserted>> {
        if batch.is_empty() {
            return Ok(Vec::new());
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
                let near = self.index.search(v, 1, std::slice::from_ref(&record.agent_id));
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
    pub fn ingest_summary(&self, s: &SummaryPayload) -> Result<IngestReport> {
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
                ..NewRecord::default()
            }
        };
        let content: String =
            s.content.lines().filter(|l| !l.starts_with("Expand for details about:")).collect::<Vec<_>>().join("\n");
        let mut batch: Vec<(NewRecord, Vec<NewTriple>)> = Vec::new();
        let summary_ids = s.messages.iter().map(|m| m.message_id).collect();
        let summary_triples = self.llm_triples(s);
        let mut summary = base(
            RecordKind::Summary,
            format!("{}\n{}", date_header(s.earliest, s.latest), content.trim()),
            s.earliest,
            summary_ids,
        );
        // Recall uses these to show a summary or its condensed parent, not both.
        summary.source_summary_ids.extend(s.child_summary_ids.iter().cloned());
        batch.push((summary, summary_triples));
        // What people said about themselves: the user's words, and any named speaker's.
        let speaking: Vec<&BridgeMessage> =
            s.messages.iter().filter(|m| m.role == "user" || m.speaker.is_some()).collect();
        let mut mined: HashMap<i64, Vec<NewTriple>> = HashMap::new();
        for m in &speaking {
            let subject = m.speaker.as_deref().map(str::to_lowercase);
            for mut t in triples(&m.text) {
                t.valid_from = m.timestamp;
                if let (Some(name), "user") = (&subject, t.subject.as_str()) {
                    t.subject = name.clone();
                }
                mined.entry(m.message_id).or_default().push(t);
            }
        }
        for chunk in windows(&s.lead_in, &s.messages, self.config.chunk_tokens) {
            // A message's triples go with the first window that holds it.
            let found: Vec<NewTriple> = chunk.message_ids.iter().filter_map(|id| mined.remove(id)).flatten().collect();
            batch.push((base(RecordKind::Verbatim, chunk.text, chunk.event_time, chunk.message_ids), found));
        }
        for m in &speaking {
            let said = ground_relative_dates(&m.text, m.timestamp);
            for p in preferences(&said) {
                let weight = match p.category {
                    PrefCategory::Like | PrefCategory::Dislike | PrefCategory::Bio => 2.0,
                    _ => 1.5,
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

    /// Add a record by hand (`memcc memory add`, or a host's "remember this").
    pub fn add(&self, agent: &str, text: &str, kind: RecordKind, pinned: bool, wing: Option<&str>) -> Result<Inserted> {
        if text.trim().is_empty() {
            return Err(MemoryError::Input("nothing to remember: empty text".into()));
        }
        let (auto_wing, room) = self.classifier.classify(text);
        let record = NewRecord {
            agent_id: agent.to_string(),
            wing: wing.map_or(auto_wing, String::from),
            room,
            kind,
            text: text.to_string(),
            event_time: Some(crate::store::now_ms()),
            weight: if pinned { MAX_WEIGHT } else { 1.0 },
            pinned,
            ..NewRecord::default()
        };
        let mut report = IngestReport::default();
        let found = triples(text);
        let inserted = self.store_batch(vec![(record, found)], None, &mut report)?;
        inserted.into_iter().next().ok_or_else(|| MemoryError::Input("a near-identical memory already exists".into()))
    }

    /// `memory_search`: scored L3 hits for `agent`.
    pub fn memory_search(
        &self,
        agent: &str,
        query: &str,
        max_results: usize,
        min_score: f64,
        wing: Option<&str>,
    ) -> Result<Vec<SearchHit>> {
        if query.trim().is_empty() {
            return Err(MemoryError::Input("memory_search needs a query".into()));
        }
        let hits = self.search_with(agent, query, None, wing, max_results.clamp(1, 100), SearchMode::Hybrid)?;
        Ok(hits.into_iter().filter(|h| h.score >= min_score).collect())
    }

    /// `memory_get`: a record by id (`mem_12` or `12`), if `agent` may read it and it is not
    /// forgotten.
    pub fn memory_get(&self, agent: &str, id: &str) -> Result<MemoryRecord> {
        let n = parse_ref(id).ok_or_else(|| MemoryError::Input(format!("{id:?} is not a memory id (mem_<n>)")))?;
        self.store
            .get(n)?
            .filter(|r| !r.forgotten && self.readable_agents(agent).contains(&r.agent_id))
            .ok_or_else(|| MemoryError::NotFound(format!("memory {id}")))
    }

    /// Forget a record of `agent` and what was derived from the same words (see
    /// [`crate::forget`]): soft keeps it on disk, marked; purge deletes it. `None` when `agent`
    /// has no such (current) record.
    pub fn forget_as(&self, agent: &str, id: &str, how: Forget) -> Result<Option<Forgotten>> {
        let n = parse_ref(id).ok_or_else(|| MemoryError::Input(format!("{id:?} is not a memory id (mem_<n>)")))?;
        let done = self.store.forget(agent, n, how)?;
        if let Some(f) = &done {
            for id in f.removed.iter().chain(&f.rewritten) {
                self.index.remove(*id);
            }
            // Rewritten windows lost their vectors with their lines: embed what they say now.
            if !f.rewritten.is_empty()
                && let Err(e) = self.process_pending(f.rewritten.len().max(64), &mut |_, _| {})
            {
                tracing::warn!(error = %e, "rewritten records stay queued for embedding");
            }
        }
        Ok(done)
    }

    /// Soft forget (see [`MemoryRuntime::forget_as`]); whether there was such a record.
    pub fn forget(&self, agent: &str, id: &str) -> Result<bool> {
        Ok(self.forget_as(agent, id, Forget::Soft)?.is_some())
    }

    /// Delete every memory `agent` made from session `session_id`; how many records went.
    pub fn purge_session(&self, agent: &str, session_id: &str) -> Result<usize> {
        let ids = self.store.purge_session(agent, session_id)?;
        for id in &ids {
            self.index.remove(*id);
        }
        Ok(ids.len())
    }

    /// The assembler's recall, within `budget` tokens.
    pub fn retrieve(&self, query: &RecallQuery, budget: usize) -> Result<Vec<RecallSection>> {
        let agents = self.readable_agents(&query.agent_id);
        self.catch_up()?;
        Recall { search: self.search(), classifier: &self.classifier }.layers(&agents, &query.text, query.as_of, budget)
    }

    /// Every record of `agent` (or all) as JSON lines; returns the count.
    pub fn export_jsonl(&self, agent: Option<&str>, out: &mut dyn Write) -> Result<usize> {
        let mut n = 0;
        self.store.for_each_record(agent, &mut |r| {
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
                },
                forgotten: r.forgotten,
            };
            writeln!(out, "{}", serde_json::to_string(&line).unwrap_or_default())?;
            n += 1;
            Ok(())
        })?;
        Ok(n)
    }

    /// Import records from JSON lines (an export, or a legacy store converted to this shape),
    /// optionally into another agent; embeddings follow with `progress`.
    pub fn import_jsonl(
        &self,
        reader: impl BufRead,
        into_agent: Option<&str>,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<ImportReport> {
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
        for chunk in batch.chunks(500) {
            let inserts: Vec<Insert<'_>> =
                chunk.iter().map(|r| Insert { record: r, vector: None, triples: &[] }).collect();
            for ins in self.store.insert_many(&inserts)? {
                if ins.duplicate { report.duplicates += 1 } else { report.added += 1 }
            }
        }
        if let Err(e) = self.process_pending(usize::MAX, progress) {
            tracing::warn!(error = %e, "imported records stay queued for embedding");
        }
        Ok(report)
    }

    pub fn stats(&self) -> Result<MemoryStats> {
        self.store.stats()
    }
}

/// The heaviest weight a record can carry (a pinned record's).
const MAX_WEIGHT: f64 = 3.0;

/// An imported record as it may be stored: text, an agent, times MemCC can show, a weight in
/// [0, 3] (a file cannot plant a record that outweighs every pinned one).
fn checked(mut r: NewRecord) -> std::result::Result<NewRecord, String> {
    if r.text.trim().is_empty() {
        return Err("record without text".into());
    }
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

impl MemoryBridge for MemoryRuntime {
    fn ingest_summary(&self, summary: &SummaryPayload) -> Result<(), BridgeError> {
        MemoryRuntime::ingest_summary(self, summary).map(|_| ()).map_err(|e| BridgeError::Failed(e.to_string()))
    }

    fn retrieve(&self, query: &RecallQuery, budget: usize) -> Result<Vec<RecallSection>, BridgeError> {
        MemoryRuntime::retrieve(self, query, budget).map_err(|e| BridgeError::Failed(e.to_string()))
    }
}
