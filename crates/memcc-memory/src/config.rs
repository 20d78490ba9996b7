//! Settings of the memory runtime, with the seed's defaults.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::classify::WingRule;
use crate::tuning::Tuning;

pub const DEFAULT_DEDUP_THRESHOLD: f64 = 0.95;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// The agent's directory; its identity files are layer L0.
    pub agent_dir: Option<PathBuf>,
    /// Files of `agentDir` recalled verbatim as identity.
    pub identity_files: Vec<String>,
    /// Smaller injections: L1 400 tokens, no L2, at most 5 lines in L3 (`tuning`'s
    /// `essentialTokensCompact`, `compactLines`).
    pub context_optimization: bool,
    /// Rerank L3 with a chat model when one is configured.
    pub llm_rerank: bool,
    /// The chat model that reranks (on the configured OpenAI-compatible endpoint).
    pub rerank_model: String,
    /// Skip a new record whose vector is this close to a stored one of the same agent.
    pub vector_dedup_enabled: bool,
    /// The cosine at or above which a new record counts as a stored one (`vectorDedupEnabled`).
    #[schemars(range(min = 0.0, max = 1.0))]
    pub vector_dedup_threshold: f64,
    /// Agents whose records every agent may read (isolation is the default).
    pub shared_agents: Vec<String>,
    /// Records of at least this weight are "essential" (L1) even when not pinned.
    #[schemars(range(min = 0.0, max = 1000.0))]
    pub essential_min_weight: f64,
    /// Half-life of the recency boost, in days.
    #[schemars(range(min = 0.01, max = 100000.0))]
    pub recency_half_life_days: f64,
    /// Topic lexicons for the classifier; the built-in ones when empty.
    pub wings: Vec<WingRule>,
    /// Verbatim records are windows of consecutive messages of about this many tokens
    /// (overlapping by half a window).
    #[schemars(range(min = 32, max = 100000))]
    pub chunk_tokens: usize,
    /// Where vectors are searched; `memory.db` stays their source of truth either way. (The
    /// PostgreSQL backend searches its own pgvector index and ignores this.)
    pub vector_backend: VectorBackend,
    /// Where records live: `sqlite` (`memory.db` in the data directory, the default) or
    /// `postgres` (one database several MemCC processes share; the context DAG stays local).
    pub backend: StoreBackend,
    /// The PostgreSQL connection URL for `backend: "postgres"`; `$MEMCC_PG_URL` when unset.
    /// TLS follows its `sslmode` (`prefer` by default, `require`, `disable`).
    pub postgres_url: Option<String>,
    /// A PEM file of CA certificates the PostgreSQL server's certificate may chain to, beside
    /// the public (Mozilla) roots: a private or cloud provider's CA.
    pub postgres_ca_file: Option<PathBuf>,
    /// The weights and pool sizes of search and recall ([`Tuning`]: defaults with their evidence).
    pub tuning: Tuning,
}

/// The [`crate::store::MemoryStore`] records live in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StoreBackend {
    #[default]
    Sqlite,
    /// PostgreSQL with pgvector; needs MemCC built with the `postgres` feature (the default).
    Postgres,
}

/// Where the PostgreSQL URL comes from when the config has none.
pub const PG_URL_ENV: &str = "MEMCC_PG_URL";

/// The [`crate::vector::VectorStore`] the runtime searches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VectorBackend {
    /// `"flat"`, the default: [`crate::vector::FlatScan`], an int8 scan of in-memory copies
    /// (shortlisted by sign bits from 20k vectors) + f32 rerank, atomic with the records.
    /// `"exact"`, its name before the shortlist made it approximate above 20k, is still read.
    #[default]
    #[serde(alias = "exact")]
    Flat,
    /// A LanceDB table beside `memory.db`, rebuilt from it when out of step; needs a build
    /// with `--features lancedb`.
    Lancedb,
}

/// Written by hand: the derived schema would refuse `"exact"`, the name serde still reads.
impl schemars::JsonSchema for VectorBackend {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "VectorBackend".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "enum": ["flat", "lancedb", "exact"],
            "description": "`flat`: an int8 scan of in-memory copies of the vectors (shortlisted by sign bits above \
                20k) and an f32 rerank; `lancedb`: a LanceDB table beside memory.db (a build with the `lancedb` \
                feature); `exact`: flat's former name."
        })
    }
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            agent_dir: None,
            identity_files: vec!["IDENTITY.md".into(), "SOUL.md".into(), "USER.md".into()],
            context_optimization: false,
            llm_rerank: false,
            rerank_model: "gpt-4o-mini".into(),
            vector_dedup_enabled: false,
            vector_dedup_threshold: DEFAULT_DEDUP_THRESHOLD,
            shared_agents: Vec::new(),
            essential_min_weight: crate::record::STANDING_PREFERENCE_WEIGHT,
            recency_half_life_days: 30.0,
            wings: Vec::new(),
            chunk_tokens: 120,
            vector_backend: VectorBackend::Flat,
            backend: StoreBackend::Sqlite,
            postgres_url: None,
            postgres_ca_file: None,
            tuning: Tuning::default(),
        }
    }
}

impl MemoryConfig {
    /// Replace out-of-range values by their defaults; returns one warning per fix.
    pub fn sanitize(&mut self) -> Vec<String> {
        let mut warnings = Vec::new();
        // A number outside the range on its field (`#[schemars(range)]`) takes its default.
        let schema = schemars::schema_for!(MemoryConfig);
        let defaults = serde_json::to_value(MemoryConfig::default()).unwrap_or_default();
        if let Ok(mut values) = serde_json::to_value(&*self) {
            let mut reset: Vec<String> = Vec::new();
            while let Some(o) = memcc_core::ranges::first_out_of_range(schema.as_value(), &values, "") {
                let (Some(default), Some(fields)) = (defaults.get(&o.field).cloned(), values.as_object_mut()) else {
                    break;
                };
                if reset.contains(&o.field) {
                    break;
                }
                warnings.push(format!("{}; using the default {default}", o.message));
                fields.insert(o.field.clone(), default);
                reset.push(o.field);
            }
            if !reset.is_empty()
                && let Ok(fixed) = serde_json::from_value::<MemoryConfig>(values)
            {
                *self = fixed;
            }
        }
        if let Err(e) = self.tuning.check() {
            warnings.push(format!("{e}; using the default tuning"));
            self.tuning = Tuning::default();
        }
        warnings
    }

    /// The PostgreSQL URL to connect to: the config's, else `$MEMCC_PG_URL`.
    pub fn postgres_url(&self) -> Option<String> {
        self.postgres_url
            .clone()
            .filter(|u| !u.trim().is_empty())
            .or_else(|| std::env::var(PG_URL_ENV).ok().filter(|u| !u.trim().is_empty()))
    }

    pub fn essential_budget(&self) -> usize {
        if self.context_optimization { self.tuning.essential_tokens_compact } else { self.tuning.essential_tokens }
    }

    pub fn context_budget(&self) -> usize {
        if self.context_optimization { 0 } else { self.tuning.on_demand_tokens }
    }

    /// Most L3 lines in one prompt: the budget and the value floor decide, except that
    /// `contextOptimization` keeps recall to a few lines.
    pub fn recall_line_limit(&self) -> usize {
        if self.context_optimization { self.tuning.compact_lines } else { usize::MAX }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedup_threshold_is_validated() {
        for bad in [f64::NAN, -0.1, 1.5, f64::INFINITY] {
            let mut c = MemoryConfig { vector_dedup_threshold: bad, ..Default::default() };
            let w = c.sanitize();
            assert_eq!(c.vector_dedup_threshold, DEFAULT_DEDUP_THRESHOLD);
            assert_eq!(w.len(), 1, "{bad}: {w:?}");
        }
        for good in [0.0, 0.5, 1.0] {
            let mut c = MemoryConfig { vector_dedup_threshold: good, ..Default::default() };
            assert!(c.sanitize().is_empty());
            assert_eq!(c.vector_dedup_threshold, good);
        }
    }

    #[test]
    fn a_number_outside_its_range_takes_its_default_with_a_warning() {
        let mut c = MemoryConfig {
            chunk_tokens: 5,
            recency_half_life_days: 0.0,
            essential_min_weight: f64::NAN,
            shared_agents: vec!["team".into()],
            ..Default::default()
        };
        let w = c.sanitize();
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(
            w.iter().any(|w| w.contains("chunkTokens must be between 32 and 100000, not 5; using the default 120"))
        );
        assert_eq!(c.chunk_tokens, 120);
        assert_eq!(c.recency_half_life_days, MemoryConfig::default().recency_half_life_days);
        assert_eq!(c.essential_min_weight, MemoryConfig::default().essential_min_weight);
        assert_eq!(c.shared_agents, ["team"], "the rest kept as given");
    }

    #[test]
    fn the_vector_backend_is_read_by_its_name_and_its_old_one() {
        let read = |v: &str| serde_json::from_value::<VectorBackend>(serde_json::json!(v));
        assert_eq!(read("flat").ok(), Some(VectorBackend::Flat));
        assert_eq!(read("exact").ok(), Some(VectorBackend::Flat), "configs written before the rename still open");
        assert_eq!(read("lancedb").ok(), Some(VectorBackend::Lancedb));
        assert!(read("hnsw").is_err());
        assert_eq!(MemoryConfig::default().vector_backend, VectorBackend::Flat);
    }
}
