//! MemCC as hosts use it: the context engine and the memory runtime opened from one
//! configuration and wired together through the bridge. The CLI and the Node addon are thin
//! layers over [`Memcc`]; the choices here (which embedder, which summariser, which endpoint)
//! are made once, for every host.

// No panic on a path input can reach: outside tests, `unwrap`, `expect` and `panic!` are errors
// (a pattern in the source goes through `memcc_core::text::static_regex`).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

use std::sync::{Arc, Mutex};

use memcc_context::{ContextEngine, ContextStore, ExtractiveSummarizer, LlmSummarizer, Summarizer};
use memcc_core::llm::{ChatModel, OpenAiChat};
use memcc_memory::embed::usem3::Usem3;
use memcc_memory::embed::{Embedder, HashingEmbedder, OpenAiEmbedder};
use memcc_memory::{MemoryConfig, MemoryRuntime};

/// What hosts name of the context engine: the engine, its requests and answers, the transcript
/// import. The rest of `memcc-context` is its own.
pub mod context {
    pub use memcc_context::compact::SUMMARY_WRITTEN;
    pub use memcc_context::import::{FORMATS_READ, Format, LineError, parse_jsonl, unread_note};
    pub use memcc_context::message::ContentPart;
    pub use memcc_context::store::outbox::PARK_AFTER_ATTEMPTS;
    pub use memcc_context::store::transcripts::PARK_TRANSCRIPT_AFTER;
    pub use memcc_context::{
        AgentMessage, Assembled, CompactionOutcome, ContextConfig, ContextEngine, ContextError, ContextStore,
        ConversationMeta, ExpandRequest, GrepMode, GrepRequest, GrepScope, ImportReport, LeftOff, PromptPart,
        PromptSource, PurgeReport, SessionListing, SessionRef, SessionSource, StoreError, TranscriptJob, VerifyReport,
    };
    pub use memcc_core::project::{project_name, project_of};
}

/// What hosts name of the memory runtime: the runtime, its records, errors and settings, the
/// local model's installer.
pub mod memory {
    pub use memcc_memory::browse::RecordFilter;
    pub use memcc_memory::config::PG_URL_ENV;
    pub use memcc_memory::embed::prepared::FILE as PREPARED_MODEL_FILE;
    pub use memcc_memory::embed::{Embedder, install};
    pub use memcc_memory::forget::Forget;
    pub use memcc_memory::record::Triple;
    pub use memcc_memory::record::parse_ref;
    pub use memcc_memory::{
        MemoryConfig, MemoryError, MemoryRecord, MemoryRuntime, RecordKind, SearchHit, SearchMode, StoreBackend,
        VectorBackend,
    };
}

/// What hosts name of the shared vocabulary: error codes, dates, the chat-model seam.
pub mod core {
    pub use memcc_core::ErrorCode;
    pub use memcc_core::estimate_tokens;
    pub use memcc_core::framing::RECALL_IS_DATA;
    pub use memcc_core::llm::{ChatMessage, ChatModel, ChatRequest, LENT_MODEL_PAUSE, LlmError, Pausing};
    pub use memcc_core::sqlite::private_dir;
    pub use memcc_core::time::{day, minute, now_ms};
}

/// The engine crates whole, for the benchmark harness, which measures their parts (vector stores,
/// full-text ranking, date parsing) one by one. Only `memcc-bench` and tests enable it; a host
/// naming it fails `crates/memcc/tests/architecture.rs`.
#[cfg(feature = "lab")]
pub mod lab {
    pub use memcc_context as context;
    pub use memcc_core as core;
    pub use memcc_memory as memory;
}

mod config;
mod error;
pub mod hooks;
pub mod settings;
mod slot;
pub mod tools;
pub mod transcripts;
pub use config::{DEFAULT_TOKEN_BUDGET, MIN_TOKEN_BUDGET, MemccConfig};
pub use error::MemccError;
pub use memcc_core::budget::Budget;
pub use slot::MemorySlot;

/// When the memory runtime opens, and what its failure means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opening {
    /// Now; a failure fails the open.
    Now,
    /// On a thread of its own ([`MemorySlot::opening`]).
    Background,
    /// Now; a failure leaves memory unavailable and the context side open.
    ContextFirst,
}

/// The `tracing` target of the warnings [`Memcc::warnings`] also keeps: a host that prints that
/// list itself (the CLI) leaves these events out rather than show each warning twice.
pub const WARNING_TARGET: &str = "memcc::warning";

/// What the model is told about long-term memory when memory is on: hosts put it in the system
/// prompt (OpenClaw's memory prompt builder, and [`Memcc::assemble_for`]).
pub const MEMORY_PROMPT: &str = "Long-term memory (MemCC): facts from earlier sessions appear in <memcc-*> blocks. Use \
memory_search to look for more and memory_get to read a memory in full; cite what you use.";

/// The local model is missing and the hashing embedder stands in: fine for a new store, but a
/// store the local model filled would silently lose semantic recall (and, before vectors were
/// kept per model, lost its vectors). Refuse, naming what is missing.
fn refuse_fallback_over_vectors(
    path: &std::path::Path,
    memory: &MemoryConfig,
    fallback: &str,
    model_dir: &std::path::Path,
) -> Result<(), MemccError> {
    let sqlite = memory.backend == memcc_memory::StoreBackend::Sqlite;
    if sqlite && !path.exists() {
        return Ok(());
    }
    let store = memcc_memory::store::open(path, memory)?;
    if let Some((model, n)) = store.vector_models()?.into_iter().find(|(m, _)| m != fallback) {
        let place = if sqlite { path.display().to_string() } else { "the PostgreSQL memory store".into() };
        return Err(MemccError::MemoryUnavailable(format!(
            "{place} holds {n} vectors of the {model} model, which is missing at {}; fetch it (`memcc model fetch`) \
             or set embeddingModel \"hashing\" on purpose",
            model_dir.display()
        )));
    }
    Ok(())
}

/// Dimensions of well-known remote embedding models.
fn known_dim(model: &str) -> Option<usize> {
    match model {
        "text-embedding-3-small" | "text-embedding-ada-002" => Some(1536),
        "text-embedding-3-large" => Some(3072),
        _ => None,
    }
}

/// MemCC opened: the context engine with the memory runtime behind its bridge.
pub struct Memcc {
    pub context: ContextEngine,
    memory: Option<Arc<MemorySlot>>,
    /// Things a user should know (e.g. the local model is missing and hashing is used); memory
    /// opened in the background adds its own when it is done.
    warnings: Arc<Mutex<Vec<String>>>,
    pub config: MemccConfig,
}

impl Memcc {
    pub fn open(config: MemccConfig) -> Result<Self, MemccError> {
        Self::open_with_host_model(config, None)
    }

    /// `host_model`: a chat model the host lends (OpenClaw's `runtimeContext.llm`), used for
    /// summaries when no `compactionModel` is configured.
    pub fn open_with_host_model(
        config: MemccConfig,
        host_model: Option<Arc<dyn ChatModel>>,
    ) -> Result<Self, MemccError> {
        Self::open_with(config, host_model, None)
    }

    /// Like [`Memcc::open_with_host_model`], reusing an already loaded embedder (many stores,
    /// one model: benchmarks, multi-agent hosts).
    pub fn open_with(
        config: MemccConfig,
        host_model: Option<Arc<dyn ChatModel>>,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> Result<Self, MemccError> {
        Self::open_inner(config, host_model, embedder, Opening::Now)
    }

    /// For commands about the conversation (import, ingest, compact, flush, assemble): the
    /// context side must work whatever state memory is in. When memory cannot open (its model
    /// missing over a store of model vectors, a corrupt `memory.db`, a full disk, a store that
    /// is down) MemCC opens without it: turns are stored, what compaction hands to memory waits
    /// in the outbox, memory calls answer `memory_unavailable`, and a warning says so. Settings
    /// that are wrong in themselves are still an error.
    pub fn open_context_first(config: MemccConfig) -> Result<Self, MemccError> {
        Self::open_inner(config, None, None, Opening::ContextFirst)
    }

    /// For hosts with an event loop: the context engine opens now (migrations, a few ms) and the
    /// memory runtime (embedding model, vector index) on a thread of its own; see [`MemorySlot`].
    /// Configuration errors of either half are still reported here.
    /// Once memory is open, the vector index is read on a thread of its own too: a session's
    /// start (which needs no vectors) is answered meanwhile, and a search waits for the index.
    pub fn open_background(config: MemccConfig, host_model: Option<Arc<dyn ChatModel>>) -> Result<Self, MemccError> {
        let memcc = Self::open_inner(config, host_model, None, Opening::Background)?;
        if let Some(slot) = memcc.memory.clone() {
            let spawned = std::thread::Builder::new().name("memcc-index".into()).spawn(move || {
                // A memory that failed to open says so where it is asked for.
                if let Ok(runtime) = slot.get()
                    && let Err(e) = runtime.load_index()
                {
                    tracing::warn!(error = %e, "the vector index could not be read; searches try again");
                }
            });
            if let Err(e) = spawned {
                tracing::warn!(error = %e, "no thread to read the vector index; the first search reads it");
            }
        }
        Ok(memcc)
    }

    fn open_inner(
        config: MemccConfig,
        host_model: Option<Arc<dyn ChatModel>>,
        embedder: Option<Arc<dyn Embedder>>,
        opening: Opening,
    ) -> Result<Self, MemccError> {
        let warnings: Arc<Mutex<Vec<String>>> = Arc::default();
        let dir = config.data_dir();
        if config.data_dir.is_none()
            && let Some(notice) = memcc_core::paths::default_data_dir().notice
        {
            warnings.lock().unwrap_or_else(|p| p.into_inner()).push(notice);
        }
        let mut context_config = config.context.clone();
        context_config.context_optimization |= config.context_optimization;
        let store = ContextStore::open(&config.context_db.clone().unwrap_or_else(|| dir.join("context.db")))?;
        // The chat model for summaries (and knowledge-graph triples): configured, lent, or none.
        let chat: Option<Arc<dyn ChatModel>> = match (&config.compaction_model, host_model) {
            (Some(model), _) => {
                Some(Arc::new(OpenAiChat::new(config.openai(model)?).map_err(|e| MemccError::Config(e.to_string()))?))
            }
            (None, host) => host,
        };
        let summarizer: Arc<dyn Summarizer> = match &chat {
            Some(model) => Arc::new(LlmSummarizer::new(model.clone())),
            None => Arc::new(ExtractiveSummarizer),
        };
        if store.read_only() {
            warnings.lock().unwrap_or_else(|p| p.into_inner()).push(format!(
                "{} is read-only for this user: MemCC reads it, and commands that write are refused",
                dir.display()
            ));
        } else if let Some(open) = memcc_core::sqlite::wider_than_private(&dir) {
            warnings.lock().unwrap_or_else(|p| p.into_inner()).push(open);
        }
        let mut context = ContextEngine::new(store, context_config)?.with_summarizer(summarizer);
        let mut memory = None;
        if config.memory_enabled {
            // Settings that can only be wrong, checked before anything is loaded.
            let reranker =
                match (config.memory_config().llm_rerank, config.openai(&config.memory_config().rerank_model)) {
                    (true, Ok(c)) => Some(Arc::new(OpenAiChat::new(c).map_err(|e| MemccError::Config(e.to_string()))?)
                        as Arc<dyn ChatModel>),
                    (true, Err(_)) => {
                        tracing::info!("llmRerank is on but no endpoint is configured; the rerank is skipped");
                        None
                    }
                    (false, _) => None,
                };
            // Only the local model is slow to load; any other embedder is made (and its settings
            // checked) here.
            let embedder = match embedder {
                Some(e) => Some(e),
                None if config.wants_local_model() => None,
                None => Some(Self::embedder(&config, &mut Vec::new())?),
            };
            let open = {
                let config = config.clone();
                let warnings = warnings.clone();
                // Loaded once, even when opening is tried again (an unreachable store).
                let loaded: std::sync::OnceLock<Arc<dyn Embedder>> = std::sync::OnceLock::new();
                let embedder_given = embedder.as_ref().map(|_| ());
                move || -> Result<MemoryRuntime, MemccError> {
                    let embedder = match (&embedder, loaded.get()) {
                        (Some(e), _) | (None, Some(e)) => e.clone(),
                        (None, None) => {
                            let mut found = Vec::new();
                            let e = Self::embedder(&config, &mut found);
                            for w in &found {
                                tracing::warn!(target: WARNING_TARGET, "{w}");
                            }
                            warnings.lock().unwrap_or_else(|p| p.into_inner()).extend(found);
                            let e = e?;
                            loaded.get_or_init(|| e.clone()).clone()
                        }
                    };
                    // The local model is missing and a stand-in was chosen here (not by the caller).
                    if embedder_given.is_none() && embedder.model_id() != memcc_memory::embed::usem3::MODEL_ID {
                        refuse_fallback_over_vectors(
                            &dir.join("memory.db"),
                            &config.memory_config(),
                            &embedder.model_id(),
                            &config.model_dir(),
                        )?;
                    }
                    let mut rt = MemoryRuntime::open(&dir.join("memory.db"), config.memory_config(), embedder)?;
                    if let Some(r) = &reranker {
                        rt = rt.with_reranker(r.clone());
                    }
                    if let Some(model) = &chat {
                        rt = rt.with_triple_model(model.clone());
                    }
                    Ok(rt)
                }
            };
            let slot = match opening {
                Opening::Background => MemorySlot::opening(open),
                Opening::Now => MemorySlot::ready(Arc::new(open()?)),
                Opening::ContextFirst => match open() {
                    Ok(runtime) => MemorySlot::ready(Arc::new(runtime)),
                    Err(e) => {
                        let note = format!(
                            "long-term memory is unavailable ({e}); the conversation is stored, and what compaction \
                             hands to memory waits for a run where memory opens"
                        );
                        warnings.lock().unwrap_or_else(|p| p.into_inner()).push(note);
                        MemorySlot::unavailable(e.to_string())
                    }
                },
            };
            context = context.with_bridge(slot.clone());
            memory = Some(slot);
        }
        Ok(Memcc { context, memory, warnings, config })
    }

    /// Warnings so far (see the field).
    pub fn warnings(&self) -> Vec<String> {
        self.warnings.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The embedder `config` asks for (the local model, else a loud hashing fallback).
    pub fn embedder(config: &MemccConfig, warnings: &mut Vec<String>) -> Result<Arc<dyn Embedder>, MemccError> {
        Ok(match config.embedding_model.as_str() {
            "usem3" | "" => match Usem3::load(&config.model_dir()) {
                Ok(m) => Arc::new(m),
                Err(e) => {
                    warnings.push(format!(
                        "local embedding model unavailable ({e}); using the hashing embedder, which only matches \
                         shared words. Run `memcc model fetch` for semantic recall."
                    ));
                    Arc::new(HashingEmbedder::default())
                }
            },
            "hashing" => Arc::new(HashingEmbedder::default()),
            remote => {
                let dim = config.embedding_dim.or_else(|| known_dim(remote)).ok_or_else(|| {
                    MemccError::Config(format!("embeddingDim is required for the unknown embedding model {remote:?}"))
                })?;
                if dim == 0 {
                    return Err(MemccError::Config("embeddingDim must be at least 1".into()));
                }
                Arc::new(OpenAiEmbedder::new(config.openai(remote)?, dim))
            }
        })
    }

    /// The memory runtime (waiting for it if it is still opening), or a clear error when memory
    /// is disabled or could not be opened.
    pub fn memory(&self) -> Result<&MemoryRuntime, MemccError> {
        let slot = self.memory.as_deref().ok_or_else(|| {
            MemccError::MemoryUnavailable("long-term memory is disabled (memoryEnabled: false)".into())
        })?;
        Ok(&**slot.get()?)
    }

    /// Whether recall runs on the hashing fallback because the local model it was asked for
    /// could not load (a user should hear it, and a model using MemCC's tools too).
    pub fn recall_on_fallback(&self) -> bool {
        self.config.wants_local_model()
            && self.memory().is_ok_and(|m| m.embedder_model() != memcc_memory::embed::usem3::MODEL_ID)
    }

    /// What to tell whoever reads recall's results while it runs on the hashing fallback.
    pub const FALLBACK_NOTICE: &'static str = "MemCC's local embedding model is not installed, so memory search \
        matches shared words only, not meaning (run `memcc model fetch` to install it): search again in other \
        words before concluding something is not remembered.";

    /// Whether long-term memory is enabled (it may still be opening).
    pub fn memory_enabled(&self) -> bool {
        self.memory.is_some()
    }

    /// Hand memory the summaries an earlier process committed and could not deliver (it crashed,
    /// memory was away, it ended first); how many went. Every host does this as it starts, so a
    /// conversation that is never compacted again still reaches memory. Best effort: with memory
    /// off or unavailable, a store this user may not write, or a failure (a full disk), nothing
    /// goes now and nothing is lost — the summaries wait in the outbox for the next time — and the
    /// command that opened MemCC goes on (a prompt is still built); the failure is logged.
    pub fn deliver_waiting(&self) -> usize {
        if self.memory.is_none() || self.context.store().read_only() || self.memory().is_err() {
            return 0;
        }
        match self.context.hand_off_all() {
            Ok(delivered) => {
                if delivered > 0 {
                    tracing::info!(delivered, "handed summaries waiting from an earlier run to memory");
                }
                delivered
            }
            Err(error) => {
                tracing::warn!(%error, "summaries waiting for memory stay waiting (they are retried next time)");
                0
            }
        }
    }

    /// Delete a session on the user's request: its conversation (raw messages, summaries) and
    /// every memory made from it. Memory goes first, so a failure leaves the conversation to
    /// purge again rather than memories of a conversation that is gone.
    pub fn purge_session(&self, session: &memcc_context::SessionRef) -> Result<memcc_context::PurgeReport, MemccError> {
        let conversation = self.context.existing(session)?;
        // The records this conversation's summaries made, not those of another store's session
        // of the same id that shares this memory.
        let summaries: Vec<String> =
            self.context.store().summaries(conversation.id)?.into_iter().map(|s| s.id).collect();
        let memory_records = match &self.memory {
            Some(slot) => slot.get()?.purge_session(&conversation.agent_id, &session.session_id, Some(&summaries))?,
            None => 0,
        };
        let mut report = self.context.purge(session)?;
        report.memory_records = memory_records;
        Ok(report)
    }

    /// The budget a host's ask gets ([`MemccConfig::token_budget`]): what [`Self::compact`],
    /// [`Self::flush`], [`Self::assemble`] and [`Self::assemble_for`] take, so a host cannot
    /// hand the engine a number that skipped the configured cap or the floor.
    pub fn budget(&self, asked: Option<f64>) -> Budget {
        self.config.token_budget(asked)
    }

    /// Compact `session` (when over its threshold, always with `force`) within `budget`.
    pub fn compact(
        &self,
        session: &memcc_context::SessionRef,
        budget: Budget,
        force: bool,
    ) -> Result<memcc_context::CompactionOutcome, MemccError> {
        Ok(self.context.compact(session, budget.tokens(), force)?)
    }

    /// End `session`: everything, the fresh tail too, folded and handed to memory, within `budget`.
    pub fn flush(
        &self,
        session: &memcc_context::SessionRef,
        budget: Budget,
    ) -> Result<memcc_context::CompactionOutcome, MemccError> {
        Ok(self.context.flush(session, budget.tokens())?)
    }

    /// The next prompt of a stored session, within `budget`.
    pub fn assemble(
        &self,
        session: &memcc_context::SessionRef,
        budget: Budget,
        as_of: Option<i64>,
    ) -> Result<memcc_context::Assembled, MemccError> {
        Ok(self.context.assemble(session, budget.tokens(), as_of)?)
    }

    /// The prompt a host sends mid-turn ([`ContextEngine::assemble_for`]) with [`MEMORY_PROMPT`]
    /// added to the system-prompt addition when memory is on, all within `budget`.
    pub fn assemble_for(
        &self,
        session: &memcc_context::SessionRef,
        budget: Budget,
        as_of: Option<i64>,
        pending: &[memcc_context::AgentMessage],
    ) -> Result<memcc_context::Assembled, MemccError> {
        let budget = budget.tokens();
        let prompt = self.memory_enabled().then_some(MEMORY_PROMPT);
        let reserved = prompt.map_or(0, |p| memcc_core::estimate_tokens(p) + 2);
        if !memcc_core::budget::hint_fits(reserved, budget) {
            return Ok(self.context.assemble_for(session, budget, as_of, pending)?);
        }
        let mut a = self.context.assemble_for(session, budget - reserved, as_of, pending)?;
        if let Some(p) = prompt {
            a.system_prompt_addition = Some(match a.system_prompt_addition.take() {
                Some(hint) => format!("{hint}\n\n{p}"),
                None => p.to_string(),
            });
            a.estimated_tokens += reserved;
        }
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory_of(json: &str) -> MemoryConfig {
        serde_json::from_str::<MemccConfig>(json).unwrap().memory_config()
    }

    /// `{"memory": {"llmRerank": true}}` used to be accepted and silently overwritten by the
    /// top-level default; each nested key now holds unless its top-level twin is given.
    #[test]
    fn the_token_budget_is_the_host_s_within_the_configured_cap_and_the_floor() {
        let plain = MemccConfig::default();
        assert_eq!(plain.token_budget(None).tokens(), DEFAULT_TOKEN_BUDGET);
        assert_eq!(plain.token_budget(Some(9000.7)).tokens(), 9000);
        assert_eq!(plain.token_budget(Some(f64::NAN)).tokens(), DEFAULT_TOKEN_BUDGET);
        assert_eq!(plain.token_budget(Some(-5.0)).tokens(), MIN_TOKEN_BUDGET);
        assert_eq!(plain.token_budget(Some(1e30)).tokens(), u32::MAX as usize);
        let capped: MemccConfig = serde_json::from_str(r#"{"tokenBudget": 1500}"#).unwrap();
        assert_eq!(capped.token_budget(None).tokens(), 1500);
        assert_eq!(capped.token_budget(Some(100_000.0)).tokens(), 1500);
        assert_eq!(capped.token_budget(Some(900.0)).tokens(), 900);
        assert_eq!(capped.token_budget(Some(10.0)).tokens(), MIN_TOKEN_BUDGET);
        assert!(serde_json::from_str::<MemccConfig>(r#"{"tokenBudget": "lots"}"#).is_err());
        // A wrong setting is named by its path.
        let err = MemccConfig::from_json(r#"{"memory": {"tuning": {"lexical": "high"}}}"#).unwrap_err();
        assert!(err.starts_with("memory.tuning.lexical: invalid type"), "{err}");
        let err = MemccConfig::from_json(r#"{"tokenBudget": "lots"}"#).unwrap_err();
        assert!(err.starts_with("tokenBudget: "), "{err}");
        assert!(MemccConfig::from_json("{").unwrap_err().contains("EOF"), "not JSON: said so");
    }

    #[test]
    fn a_nested_memory_setting_holds_unless_its_top_level_twin_is_given() {
        let default = MemoryConfig::default();
        assert_eq!(memory_of("{}").llm_rerank, default.llm_rerank);
        assert!(memory_of(r#"{"memory": {"llmRerank": true}}"#).llm_rerank);
        assert!(!memory_of(r#"{"llmRerank": false, "memory": {"llmRerank": true}}"#).llm_rerank);
        assert!(memory_of(r#"{"llmRerank": true}"#).llm_rerank);

        assert_eq!(memory_of(r#"{"memory": {"rerankModel": "m-nested"}}"#).rerank_model, "m-nested");
        assert_eq!(
            memory_of(r#"{"rerankModel": "m-top", "memory": {"rerankModel": "m-nested"}}"#).rerank_model,
            "m-top"
        );

        assert!(memory_of(r#"{"memory": {"vectorDedupEnabled": true}}"#).vector_dedup_enabled);
        assert!(
            !memory_of(r#"{"vectorDedupEnabled": false, "memory": {"vectorDedupEnabled": true}}"#).vector_dedup_enabled
        );

        assert_eq!(memory_of(r#"{"memory": {"vectorDedupThreshold": 0.8}}"#).vector_dedup_threshold, 0.8);
        assert_eq!(
            memory_of(r#"{"vectorDedupThreshold": 0.9, "memory": {"vectorDedupThreshold": 0.8}}"#)
                .vector_dedup_threshold,
            0.9
        );
        assert_eq!(memory_of("{}").vector_dedup_threshold, default.vector_dedup_threshold);
    }
}
