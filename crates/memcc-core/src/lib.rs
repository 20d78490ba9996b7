//! Shared vocabulary of MemCC's two halves.
//!
//! The context engine and the memory runtime never import each other. What they both need lives
//! here: the [`bridge`] contract they meet at, token estimation, CJK-aware text segmentation for
//! full-text search, [`time`] (validated timestamps, dates grounded), and the OpenAI-compatible chat client both use for optional LLM work.

// No panic on a path input can reach: outside tests, `unwrap`, `expect` and `panic!` are errors
// (a pattern in the source goes through `memcc_core::text::static_regex`).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod bridge;
pub mod budget;
pub mod coded;
pub mod errors;
pub mod framing;
pub mod llm;
pub mod paths;
pub mod project;
pub mod ranges;
pub mod said;
pub mod sqlite;
pub mod text;
pub mod time;
pub mod tokens;

pub use bridge::{
    BridgeError, ContextTurn, MemoryBridge, NoopBridge, RecallQuery, RecallSection, SummaryKind, SummaryPayload,
};
pub use errors::ErrorCode;
pub use tokens::estimate_tokens;
