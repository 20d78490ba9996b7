//! Errors of the context engine.

use memcc_core::llm::LlmError;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{}", memcc_core::sqlite::describe(.0))]
    Sqlite(#[from] rusqlite::Error),
    /// The file could not be opened or brought to this build's schema.
    #[error(transparent)]
    Open(memcc_core::sqlite::SqliteError),
    #[error("corrupt row: {0}")]
    Corrupt(String),
}

impl From<memcc_core::sqlite::SqliteError> for StoreError {
    fn from(e: memcc_core::sqlite::SqliteError) -> Self {
        use memcc_core::sqlite::SqliteError as E;
        match e {
            E::Sqlite(e) => StoreError::Sqlite(e),
            other => StoreError::Open(other),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("no conversation with session id {0:?}")]
    UnknownSession(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("invalid input: {0}")]
    Input(String),
    #[error("summariser: {0}")]
    Summarize(#[from] LlmError),
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
}

impl From<rusqlite::Error> for ContextError {
    fn from(e: rusqlite::Error) -> Self {
        ContextError::Store(StoreError::Sqlite(e))
    }
}

impl ContextError {
    pub fn code(&self) -> memcc_core::ErrorCode {
        use memcc_core::ErrorCode as C;
        match self {
            ContextError::Store(_) | ContextError::Io(_) => C::Storage,
            ContextError::Config(_) => C::InvalidConfig,
            ContextError::UnknownSession(_) => C::UnknownSession,
            ContextError::NotFound(_) => C::NotFound,
            ContextError::Input(_) => C::InvalidInput,
            ContextError::Summarize(_) => C::Model,
        }
    }
}

pub type Result<T, E = ContextError> = std::result::Result<T, E>;
