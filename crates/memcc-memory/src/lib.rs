//! MemCC's long-term memory runtime: what the agent learned in one session, recalled in the
//! next. Summaries arrive through [`memcc_core::MemoryBridge`] (implemented by
//! [`MemoryRuntime`]); recall is layered L0–L3. This crate never depends on the context engine.

// No panic on a path input can reach: outside tests, `unwrap`, `expect` and `panic!` are errors
// (a pattern in the source goes through `memcc_core::text::static_regex`).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod browse;
pub(crate) mod chunk;
pub(crate) mod classify;
pub mod config;
pub mod embed;
pub mod error;
pub mod forget;
pub(crate) mod ingest;
mod insert;
pub mod lang;
pub(crate) mod portable;
pub mod rank;
pub(crate) mod recall;
pub mod record;
pub(crate) mod restated;
pub mod runtime;
pub(crate) mod search;
pub mod sessions;
pub mod store;
pub mod terms;
pub(crate) mod tuning;
pub mod vector;

pub use config::{MemoryConfig, StoreBackend, VectorBackend};
pub use error::MemoryError;
pub use ingest::IngestReport;
pub use portable::ImportReport;
pub use record::{MemoryRecord, RecordKind};
pub use runtime::MemoryRuntime;
pub use search::{Asking, SearchHit, SearchMode};
pub use store::sqlite::schema::SCHEMA_VERSION;
