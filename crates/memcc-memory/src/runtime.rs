//! [`MemoryRuntime`]: the facade over the memory store, the embedder and the vector index; the
//! real [`MemoryBridge`]; and the API behind `memory_search` / `memory_get`, forget and recall.
//! What a summary becomes is [`crate::ingest`]'s; export and import are [`crate::portable`]'s.

use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, RwLock};

use crate::classify::Classifier;
use crate::config::{MemoryConfig, VectorBackend};
use crate::embed::Embedder;
use crate::error::{MemoryError, Result};
use crate::forget::{Forget, Forgotten};
use crate::ingest::{Ingest, IngestReport};
use crate::lang::question::Question;
use crate::lang::triples;
use crate::portable::ImportReport;
use crate::rank::model::Models;
use crate::rank::{RankedSession, Ranking};
use crate::recall::Recall;
use crate::record::{MAX_WEIGHT, MemoryRecord, NewRecord, RecordKind, Triple, parse_ref};
use crate::search::{Asking, CONTEXT_CHARS, Found, Query, Search, SearchHit, SearchMode};
use crate::store::{Inserted, MemoryStats, MemoryStore, Sessions, Vectors};
use crate::vector::{FlatScan, VectorStore};
use memcc_core::bridge::{BridgeError, ContextTurn, MemoryBridge, RecallQuery, RecallSection, SummaryPayload};
use memcc_core::llm::ChatModel;

/// The most characters of a record's text one `memory_search` hit carries (cut around the
/// query's words, the hit marked `truncated`): 100 hits stay near 400 KB.
pub const SEARCH_HIT_CHARS: usize = 4_000;

pub struct MemoryRuntime {
    store: Arc<dyn MemoryStore>,
    embedder: Arc<dyn Embedder>,
    index: Arc<dyn VectorStore>,
    config: MemoryConfig,
    classifier: Classifier,
    reranker: Option<Arc<dyn ChatModel>>,
    rerank_skip_logged: AtomicBool,
    /// The session ranker's models: those MemCC ships, unless a benchmark fitting its own
    /// set others ([`Self::set_ranking_models`]).
    ranking_models: RwLock<Option<Arc<Models>>>,
    triple_model: Option<Arc<dyn ChatModel>>,
    /// The highest record id whose vector the index has read from `memory.db`: another process
    /// writing the same store adds rows above it, which searches then read first (under the lock,
    /// so no search sees an index half read). `i64::MIN` until the flat index is first needed: a
    /// process that never searches (a session's start, a queued import) never reads the vectors.
    /// `None` when the store searches its own vectors (nothing to catch up).
    index_seen: Option<Mutex<i64>>,
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
        VectorBackend::Flat => {
            let source_store = store.clone();
            let source_model = model.to_string();
            // Read on first use ([`MemoryRuntime::catch_up`]).
            Ok(Arc::new(FlatScan::new(
                dim,
                Some(Box::new(move |ids: &[i64]| source_store.vectors(ids, &source_model))),
            )))
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
                "vectorBackend \"lancedb\" needs MemCC built with `--features lancedb`; use \"flat\" (the default)"
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
#[cfg(feature = "lancedb")]
fn load_index(index: &dyn VectorStore, store: &dyn Vectors, model: &str) -> Result<()> {
    load_index_after(index, store, model, i64::MIN)
}

/// The current vectors of `model` with a record id above `after` into `index`, in batches.
fn load_index_after(index: &dyn VectorStore, store: &dyn Vectors, model: &str, after: i64) -> Result<()> {
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

/// Build the session index from the records when the store's was built under other rules (or
/// never: a store from before it). A store this process may not write keeps ranking by records
/// alone until one that may opens it.
fn index_sessions(store: &dyn Sessions) {
    use crate::sessions::{SESSION_INDEX_VERSION, stored_message_words};
    match store.session_index_version() {
        Ok(Some(v)) if v == SESSION_INDEX_VERSION => return,
        Ok(_) => {}
        Err(e) => {
            tracing::warn!(error = %e, "the session index could not be read; ranking records alone");
            return;
        }
    }
    match store.reindex_sessions(&stored_message_words, SESSION_INDEX_VERSION) {
        Ok(0) => {}
        Ok(sessions) => tracing::info!(sessions, "session index built from the records"),
        Err(e) => tracing::warn!(error = %e, "the session index could not be built; ranking records alone"),
    }
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
        index_sessions(&*store);
        let (index, index_seen) = match store.native_index(&model, embedder.dim())? {
            Some(index) => (index, None),
            None => {
                // The flat index is read when first needed; another is read (or checked) now.
                let seen = match config.vector_backend {
                    VectorBackend::Flat => i64::MIN,
                    _ => store.last_vector_id()?,
                };
                (open_index(path, &config, &store, &model, embedder.dim())?, Some(Mutex::new(seen)))
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
            ranking_models: RwLock::new(crate::rank::model::SHIPPED.clone()),
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

    /// Read into the index the vectors it has not seen: all of them the first time, then those
    /// other processes wrote since it last looked (one indexed `MAX` when there are none).
    fn catch_up(&self) -> Result<()> {
        let Some(index_seen) = &self.index_seen else { return Ok(()) };
        let last = self.store.last_vector_id()?;
        let mut seen = index_seen.lock().unwrap_or_else(|p| p.into_inner());
        if last > *seen {
            load_index_after(&*self.index, &*self.store, &self.embedder.model_id(), *seen)?;
            *seen = last;
        }
        Ok(())
    }

    /// Read the vector index now rather than at the first search: a long-lived process (the
    /// warm process, a host's gateway) does it while nothing waits.
    pub fn load_index(&self) -> Result<()> {
        self.catch_up()
    }

    /// The `k` records of `agents` whose vectors are nearest to `vector` by the vector index alone
    /// (in the database on PostgreSQL): what a benchmark holds to an exact search.
    pub fn nearest(&self, vector: &[f32], k: usize, agents: &[String]) -> Result<Vec<crate::vector::VectorHit>> {
        self.catch_up()?;
        self.index.search(vector, k, agents)
    }

    fn search(&self) -> Search<'_> {
        Search {
            store: &*self.store,
            index: &*self.index,
            embedder: &*self.embedder,
            config: &self.config,
            reranker: self.reranker.as_deref(),
            rerank_skip_logged: &self.rerank_skip_logged,
            models: self.ranking_models.read().map_or(None, |m| m.clone()),
        }
    }

    /// Rank sessions with `models` from now on (`None`: by the second pass's score alone) —
    /// for a benchmark that scores each held-out dataset with models fit on the others.
    pub fn set_ranking_models(&self, models: Option<Arc<Models>>) {
        if let Ok(mut m) = self.ranking_models.write() {
            *m = models;
        }
    }

    /// Ingestion, with the index caught up first (it finds near-duplicates in it).
    fn ingest(&self) -> Result<Ingest<'_>> {
        self.catch_up()?;
        Ok(Ingest {
            store: &*self.store,
            index: &*self.index,
            embedder: &*self.embedder,
            config: &self.config,
            classifier: &self.classifier,
            triple_model: self.triple_model.as_deref(),
        })
    }

    /// What the bridge delivers: a committed summary (and, for a leaf, the raw messages it
    /// covers), stored as records (see [`crate::ingest`]).
    pub fn ingest_summary(&self, s: &SummaryPayload) -> Result<IngestReport> {
        self.ingest()?.summary(s)
    }

    /// Embed up to `limit` queued records; `progress(done, total)` after each batch.
    pub fn process_pending(&self, limit: usize, progress: &mut dyn FnMut(usize, usize)) -> Result<usize> {
        self.ingest()?.process_pending(limit, progress)
    }

    /// Every record of `agent` (or all) as JSON lines; returns the count.
    pub fn export_jsonl(&self, agent: Option<&str>, out: &mut dyn std::io::Write) -> Result<usize> {
        crate::portable::export(&*self.store, agent, out)
    }

    /// Import records from JSON lines (an export, or a legacy store converted to this shape),
    /// optionally into another agent; embeddings follow with `progress`.
    pub fn import_jsonl(
        &self,
        reader: impl std::io::BufRead,
        into_agent: Option<&str>,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<ImportReport> {
        let report = crate::portable::import(&*self.store, reader, into_agent)?;
        if let Err(e) = self.process_pending(usize::MAX, progress) {
            tracing::warn!(error = %e, "imported records stay queued for embedding");
        }
        Ok(report)
    }

    /// L3 deep search for `agent` (plus shared agents), with a choice of retrievers: `Hybrid`
    /// is what recall uses; the benchmark compares the others on the same store. The first
    /// `tuning.searchPool` hits are the same for every `top`, and so are those up to `tuning.widePool`:
    /// they come from a wider search and follow the first, whatever their scores.
    pub fn search_with(
        &self,
        agent: &str,
        query: &str,
        as_of: Option<i64>,
        wing: Option<&str>,
        top: usize,
        mode: SearchMode,
    ) -> Result<Vec<SearchHit>> {
        self.search_in_context(agent, query, &Asking { as_of, wing, ..Asking::default() }, top, mode)
    }

    /// [`Self::search_with`] for a query asked where `asking` says: in a conversation whose
    /// recent turns are its context ([`memcc_core::RecallQuery::context`]), as recall searches,
    /// and in a project whose records it favours.
    pub fn search_in_context(
        &self,
        agent: &str,
        query: &str,
        asking: &Asking<'_>,
        top: usize,
        mode: SearchMode,
    ) -> Result<Vec<SearchHit>> {
        Ok(self.search_explained(agent, query, asking, top, mode)?.0)
    }

    /// [`Self::search_in_context`], with the sessions the session ranker ranked for its first
    /// hits and their features ([`crate::rank`]): what `memcc bench ranker` fits the model on.
    pub fn search_explained(
        &self,
        agent: &str,
        query: &str,
        asking: &Asking<'_>,
        top: usize,
        mode: SearchMode,
    ) -> Result<(Vec<SearchHit>, Vec<RankedSession>)> {
        let Asking { context: turns, session, as_of, wing, project } = *asking;
        let agents = self.readable_agents(agent);
        self.catch_up()?;
        let question = Question::new(query);
        let context_text = ContextTurn::newest_text(turns, CONTEXT_CHARS);
        let context = (!context_text.trim().is_empty()).then(|| Question::new(&context_text));
        let search = |top: usize, candidates: usize, rerank: bool, ranking: Option<&Arc<Ranking>>| {
            self.search().find(&Query {
                agents: &agents,
                question: &question,
                as_of,
                wing,
                top,
                candidates,
                mode,
                also_in_wing: None,
                rerank,
                context: context.as_ref(),
                project,
                turns,
                session,
                ranking,
            })
        };
        // The first hits must not depend on how many are asked for, yet a record's score does
        // depend on the candidates it is ranked among (its cosine counts only within the vector
        // side's best). So the first `searchPool` always come from a search among that many per
        // retriever, and more hits follow from one among `widePool` (or `top`, if more).
        let (search_pool, wide_pool) = (self.config.tuning.search_pool, self.config.tuning.wide_pool);
        let Found { mut hits, ranking, .. } = search(top.min(search_pool), search_pool, true, None)?;
        if top > search_pool {
            let wide = top.max(wide_pool);
            let first: HashSet<String> = hits.iter().map(|h| h.id.clone()).collect();
            // The sessions keep the order the first search gave them.
            let more: Vec<SearchHit> = search(wide, wide, false, ranking.as_ref())?
                .hits
                .into_iter()
                .filter(|h| !first.contains(&h.id))
                .take(top - hits.len())
                .collect();
            hits.extend(more);
        }
        let sessions = ranking.map(|r| r.sessions.clone()).unwrap_or_default();
        Ok((hits, sessions))
    }

    /// Add a record by hand (`memcc memory add`, or a host's "remember this").
    pub fn add(&self, agent: &str, text: &str, kind: RecordKind, pinned: bool, wing: Option<&str>) -> Result<Inserted> {
        if text.trim().is_empty() {
            return Err(MemoryError::Input("nothing to remember: empty text".into()));
        }
        crate::record::check_record_size(text).map_err(MemoryError::Input)?;
        let (auto_wing, room) = self.classifier.classify(text);
        let record = NewRecord {
            agent_id: agent.to_string(),
            wing: wing.map_or(auto_wing, String::from),
            room,
            kind,
            text: text.to_string(),
            event_time: Some(memcc_core::time::now_ms()),
            pinned,
            ..NewRecord::default()
        };
        let mut report = IngestReport::default();
        let found = triples(text);
        let inserted = self.ingest()?.store_batch(vec![(record, found)], None, &mut report)?;
        inserted.into_iter().next().ok_or_else(|| MemoryError::Input("a near-identical memory already exists".into()))
    }

    /// Correct `agent`'s record `id` with `text`: a new record of the same kind, place and
    /// weight (pinned if it was) that supersedes it, in one transaction; the old text stays as
    /// its history, and what the new text states supersedes what the old one stated.
    pub fn edit(&self, agent: &str, id: &str, text: &str) -> Result<Inserted> {
        if text.trim().is_empty() {
            return Err(MemoryError::Input("an edit needs text: to remove a memory, forget it".into()));
        }
        crate::record::check_record_size(text).map_err(MemoryError::Input)?;
        let old = self.memory_get(agent, id)?;
        if !old.is_current() {
            return Err(MemoryError::Input(format!(
                "{id} no longer holds{}: edit what replaced it",
                old.superseded_by.map(|n| format!(" (mem_{n} replaced it)")).unwrap_or_default()
            )));
        }
        let record = NewRecord {
            agent_id: agent.to_string(),
            wing: old.wing.clone(),
            room: old.room.clone(),
            kind: old.kind,
            text: text.to_string(),
            source_summary_ids: old.source_summary_ids.clone(),
            source_session_ids: old.source_session_ids.clone(),
            source_message_ids: old.source_message_ids.clone(),
            event_time: Some(memcc_core::time::now_ms()),
            weight: old.weight,
            pinned: old.pinned,
            subject: old.subject.clone(),
            predicate: old.predicate.clone(),
            project: old.project.clone(),
            supersedes: Some(old.id),
        };
        let mut report = IngestReport::default();
        let inserted = self.ingest()?.store_batch(vec![(record, triples(text))], None, &mut report)?;
        let done = inserted.into_iter().next().ok_or_else(|| MemoryError::Input("the edit was not stored".into()))?;
        if done.duplicate {
            return Err(MemoryError::Input(format!("mem_{} already says that", done.id)));
        }
        Ok(done)
    }

    /// Pin `agent`'s record `id` (recalled in every prompt's essentials of the project it was
    /// learnt in, of every project when it was learnt in none) or unpin it; whether it changed a
    /// current record.
    pub fn pin(&self, agent: &str, id: &str, pinned: bool) -> Result<bool> {
        self.pin_in(agent, id, pinned, false)
    }

    /// [`Self::pin`], and a pin made `everywhere` holds in every project: learnt in one, the
    /// record no longer belongs to it (a rule the user said in one repository, for all of them).
    /// `everywhere` changes nothing of an unpin.
    pub fn pin_in(&self, agent: &str, id: &str, pinned: bool, everywhere: bool) -> Result<bool> {
        let record = self.memory_get(agent, id)?;
        // A pin orders first by itself and leaves the weight as it was, so an unpinned
        // preference is as heavy as before. (Pins made before kept `MAX_WEIGHT` only as a pin's
        // mark: unpinned, such a record weighs as an ordinary one.)
        let weight = if !pinned && record.pinned && record.weight >= MAX_WEIGHT { 1.0 } else { record.weight };
        self.store.set_pinned(agent, record.id, pinned, weight, pinned && everywhere)
    }

    /// `memory_search`: scored L3 hits for `agent`, each text at most [`SEARCH_HIT_CHARS`].
    pub fn memory_search(
        &self,
        agent: &str,
        query: &str,
        max_results: usize,
        min_score: f64,
        wing: Option<&str>,
    ) -> Result<Vec<SearchHit>> {
        self.memory_search_asked(agent, query, max_results, min_score, &Asking { wing, ..Asking::default() })
    }

    /// [`Self::memory_search`] asked where `asking` says (its project's records favoured).
    pub fn memory_search_asked(
        &self,
        agent: &str,
        query: &str,
        max_results: usize,
        min_score: f64,
        asking: &Asking<'_>,
    ) -> Result<Vec<SearchHit>> {
        if query.trim().is_empty() {
            return Err(MemoryError::Input("memory_search needs a query".into()));
        }
        let mut hits = self.search_in_context(
            agent,
            query,
            asking,
            max_results.clamp(1, self.config.tuning.wide_pool),
            SearchMode::Hybrid,
        )?;
        // A changed value before the one it replaced, as recall shows them.
        let needles = Question::new(query).needles;
        crate::restated::Coded::of(&hits, &needles).newer_first(&mut hits);
        // Each hit's text at most SEARCH_HIT_CHARS, cut around the query's words: 100 hits stay
        // well under a client's message limit, and `memory_get` returns a record whole.
        Ok(hits
            .into_iter()
            .filter(|h| h.score >= min_score)
            .map(|mut h| {
                if h.text.chars().count() > SEARCH_HIT_CHARS {
                    h.text = memcc_core::text::excerpt(&h.text, &needles, SEARCH_HIT_CHARS);
                    h.truncated = true;
                }
                h
            })
            .collect())
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

    /// The choices `record` (as [`Self::memory_get`] gave it to `agent`) names that were said
    /// later to be replaced ("we switched from Jest to Vitest"), as search marks them:
    /// `replaced_by` statements.
    pub fn choices_replaced(&self, agent: &str, record: &MemoryRecord) -> Result<Vec<Triple>> {
        let replacements = crate::search::Replacements::of(self.store.as_ref(), &self.readable_agents(agent))?;
        Ok(replacements.since(record).into_iter().cloned().collect())
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
    pub fn purge_session(&self, agent: &str, session_id: &str, summaries: Option<&[String]>) -> Result<usize> {
        let ids = self.store.purge_session(agent, session_id, summaries)?;
        for id in &ids {
            self.index.remove(*id);
        }
        Ok(ids.len())
    }

    /// The assembler's recall, within `budget` tokens.
    pub fn retrieve(&self, query: &RecallQuery, budget: usize) -> Result<Vec<RecallSection>> {
        let agents = self.readable_agents(&query.agent_id);
        self.catch_up()?;
        Recall { search: self.search(), classifier: &self.classifier }.layers(&agents, query, budget)
    }

    /// What a new session should know before anything is asked (identity and essentials), within
    /// `budget` tokens: a host that keeps its own conversation shows it once, as the session
    /// begins.
    pub fn standing(&self, agent: &str, budget: usize) -> Result<Vec<RecallSection>> {
        self.standing_in(agent, None, budget)
    }

    /// [`Self::standing`] for a session of `project`: the pins of other projects left out.
    pub fn standing_in(&self, agent: &str, project: Option<&str>, budget: usize) -> Result<Vec<RecallSection>> {
        let agents = self.readable_agents(agent);
        Recall { search: self.search(), classifier: &self.classifier }.standing(&agents, project, budget)
    }

    /// Recall for one prompt of a host that keeps its own conversation (a Claude Code or Codex
    /// hook): deep search alone, what `query`'s own session said left out (the host holds it),
    /// and only what clears the relevance floor; `None` when nothing does.
    pub fn recall_for_prompt(&self, query: &RecallQuery, budget: usize) -> Result<Option<RecallSection>> {
        let agents = self.readable_agents(&query.agent_id);
        self.catch_up()?;
        let own = |h: &SearchHit| {
            h.record.as_ref().is_some_and(|r| r.source_session_ids.iter().any(|s| s == &query.session_id))
        };
        Recall { search: self.search(), classifier: &self.classifier }.for_prompt(&agents, query, budget, &own)
    }

    /// Counts over the whole store (every agent).
    pub fn stats(&self) -> Result<MemoryStats> {
        self.store.stats(None)
    }

    /// Counts of `agent`'s memory alone.
    pub fn agent_stats(&self, agent: &str) -> Result<MemoryStats> {
        self.store.stats(Some(agent))
    }
}

impl MemoryBridge for MemoryRuntime {
    fn ingest_summary(&self, summary: &SummaryPayload) -> Result<(), BridgeError> {
        MemoryRuntime::ingest_summary(self, summary).map(|_| ()).map_err(|e| BridgeError::Failed(e.to_string()))
    }

    fn retrieve(&self, query: &RecallQuery, budget: usize) -> Result<Vec<RecallSection>, BridgeError> {
        MemoryRuntime::retrieve(self, query, budget).map_err(|e| BridgeError::Failed(e.to_string()))
    }

    fn forgotten(&self, agent: &str, session_id: &str) -> Result<std::collections::HashSet<String>, BridgeError> {
        self.store.tombstones(agent, &[session_id.to_string()]).map_err(|e| BridgeError::Failed(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::HashingEmbedder;

    fn open(path: &Path) -> MemoryRuntime {
        MemoryRuntime::open(path, MemoryConfig::default(), Arc::new(HashingEmbedder::default())).unwrap()
    }

    /// A process that never searches never reads the vectors; the first searches, however many
    /// at once, each see all of them.
    #[test]
    fn the_flat_index_is_read_at_the_first_search_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memory.db");
        {
            let rt = open(&path);
            for text in
                ["The spare key is under the blue flowerpot.", "The boiler was serviced in May.", "Ferry at nine."]
            {
                rt.add("main", text, RecordKind::Fact, false, None).unwrap();
            }
        }
        let rt = open(&path);
        assert_eq!(rt.index.len(), 0, "opening reads no vector");
        rt.standing("main", 1000).unwrap();
        assert_eq!(rt.index.len(), 0, "a session's standing layers read none either");
        let hits: Vec<Vec<i64>> = std::thread::scope(|s| {
            let searches: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        let hits =
                            rt.search_with("main", "blue flowerpot key", None, None, 3, SearchMode::Dense).unwrap();
                        hits.iter().map(|h| h.record.as_ref().map_or(0, |r| r.id)).collect()
                    })
                })
                .collect();
            searches.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(rt.index.len(), 3);
        assert_eq!(hits[0].len(), 3, "{hits:?}");
        assert!(hits.iter().all(|h| h == &hits[0]), "every search saw the whole index: {hits:?}");
        // An explicit load (a long-lived host's) reads it at once.
        let rt = open(&path);
        rt.load_index().unwrap();
        assert_eq!(rt.index.len(), 3);
    }
}
