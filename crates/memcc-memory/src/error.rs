//! Errors of the memory runtime.

use crate::embed::EmbedError;

#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("memory.db schema v{found} is newer than this MemCC supports (v{supported}); upgrade MemCC")]
    NewerSchema { found: i64, supported: i64 },
    #[error("cannot create data directory {path}: {source}")]
    DataDir { path: String, source: std::io::Error },
    #[error("embedding: {0}")]
    Embed(#[from] EmbedError),
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("invalid input: {0}")]
    Input(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
}

pub type Result<T, E = MemoryError> = std::result::Result<T, E>;
