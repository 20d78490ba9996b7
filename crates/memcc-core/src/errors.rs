//! What kind of failure an error is: hosts branch on the code, never on the English text.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// No conversation with that session id for that agent (another agent's counts as none).
    UnknownSession,
    /// An id (memory, summary, message, file) that does not exist for the caller.
    NotFound,
    /// The request itself is wrong: empty text, malformed JSON, a bad regex, a bad timestamp.
    InvalidInput,
    /// A setting is wrong.
    InvalidConfig,
    /// Long-term memory is disabled or could not be opened; the context side still works.
    MemoryUnavailable,
    /// The store failed (disk, lock, corruption, a newer schema).
    Storage,
    /// A model or remote endpoint failed.
    Model,
    /// A fault in MemCC itself (a part of a search that panicked), not in the request: nothing
    /// stored changed; worth a bug report.
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::UnknownSession => "unknown_session",
            ErrorCode::NotFound => "not_found",
            ErrorCode::InvalidInput => "invalid_input",
            ErrorCode::InvalidConfig => "invalid_config",
            ErrorCode::MemoryUnavailable => "memory_unavailable",
            ErrorCode::Storage => "storage",
            ErrorCode::Model => "model",
            ErrorCode::Internal => "internal",
        }
    }
}
