//! MemCC's context engine: lossless summary-DAG compaction of a conversation, token-budgeted
//! assembly, and the expansion API that recovers any summarised detail.
//!
//! Start at [`ContextEngine`]. This crate never depends on the memory runtime; it reaches memory
//! only through [`memcc_core::MemoryBridge`].

// No panic on a path input can reach: outside tests, `unwrap`, `expect` and `panic!` are errors
// (a pattern in the source goes through `memcc_core::text::static_regex`).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod assemble;
pub mod compact;
pub(crate) mod config;
pub mod dag;
pub(crate) mod engine;
pub mod error;
pub mod expand;
pub mod import;
pub(crate) mod large_file;
pub mod message;
pub(crate) mod purge;
mod schema;
pub mod store;
pub(crate) mod summarize;
pub(crate) mod verify;

pub use assemble::{Assembled, COMPACTION_HINT, PromptPart, PromptSource};
pub use compact::CompactionOutcome;
pub use config::ContextConfig;
pub use engine::{ContextEngine, ImportReport, LeftOff, SessionRef};
pub use error::{ContextError, StoreError};
pub use expand::{ExpandRequest, GrepMode, GrepRequest, GrepScope};
pub use message::AgentMessage;
pub use purge::PurgeReport;
pub use schema::SCHEMA_VERSION;
pub use store::{ContextStore, ConversationMeta, SessionListing, SessionSource, TranscriptJob};
pub use summarize::{EXPAND_FOOTER, ExtractiveSummarizer, LlmSummarizer, Summarizer, SummaryInput};
pub use verify::VerifyReport;
