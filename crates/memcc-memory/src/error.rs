//! Errors of the memory runtime.

use crate::embed::EmbedError;

#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("{}", memcc_core::sqlite::describe(.0))]
    Sqlite(#[from] rusqlite::Error),
    #[cfg(feature = "postgres")]
    #[error("postgres: {}", pg_message(.0))]
    Postgres(#[from] postgres::Error),
    /// The configured store could not be opened (a database that is down, refuses the role, …).
    #[error("{0}")]
    Unavailable(String),
    #[error("memory.db schema v{found} is newer than this MemCC supports (v{supported}); upgrade MemCC")]
    NewerSchema { found: i64, supported: i64 },
    /// memory.db could not be opened or brought to this build's schema.
    #[error(transparent)]
    Open(memcc_core::sqlite::SqliteError),
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
    /// A fault in MemCC itself, not in the caller's request.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<memcc_core::sqlite::SqliteError> for MemoryError {
    fn from(e: memcc_core::sqlite::SqliteError) -> Self {
        use memcc_core::sqlite::SqliteError as E;
        match e {
            E::Sqlite(e) => MemoryError::Sqlite(e),
            E::NewerSchema { found, supported } => MemoryError::NewerSchema { found, supported },
            other => MemoryError::Open(other),
        }
    }
}

impl MemoryError {
    pub fn code(&self) -> memcc_core::ErrorCode {
        use memcc_core::ErrorCode as C;
        match self {
            // The store cannot be reached (a PostgreSQL server that is away): memory, not the
            // caller's data, is unavailable, and comes back by itself.
            MemoryError::Unavailable(_) => C::MemoryUnavailable,
            MemoryError::Sqlite(_) | MemoryError::NewerSchema { .. } | MemoryError::Open(_) | MemoryError::Io(_) => {
                C::Storage
            }
            #[cfg(feature = "postgres")]
            MemoryError::Postgres(_) => C::Storage,
            MemoryError::Embed(_) => C::Model,
            MemoryError::Config(_) => C::InvalidConfig,
            MemoryError::Input(_) => C::InvalidInput,
            MemoryError::NotFound(_) => C::NotFound,
            MemoryError::Internal(_) => C::Internal,
        }
    }
}

pub type Result<T, E = MemoryError> = std::result::Result<T, E>;

/// What went wrong in PostgreSQL, said whole: the client's own `Display` is only "db error"
/// for what the server reported.
#[cfg(feature = "postgres")]
pub fn pg_message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => {
            let mut s = format!("{} ({})", db.message(), db.code().code());
            if let Some(detail) = db.detail() {
                s.push_str(&format!("; {detail}"));
            }
            if let Some(hint) = db.hint() {
                s.push_str(&format!("; hint: {hint}"));
            }
            s
        }
        None => match std::error::Error::source(e) {
            Some(cause) => format!("{e}: {cause}"),
            None => e.to_string(),
        },
    }
}
