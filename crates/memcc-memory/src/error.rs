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

impl From<memcc_core::sqlite::SqliteError> for MemoryError {
    fn from(e: memcc_core::sqlite::SqliteError) -> Self {
        use memcc_core::sqlite::SqliteError as E;
        match e {
            E::Sqlite(e) => MemoryError::Sqlite(e),
            E::DataDir { path, source } => MemoryError::DataDir { path, source },
            E::NewerSchema { found, supported } => MemoryError::NewerSchema { found, supported },
        }
    }
}

pub type Result<T, E = MemoryError> = std::result::Result<T, E>;
