//! The facade's error: what failed, and its kind for hosts to branch on.

#[derive(Debug, thiserror::Error)]
pub enum MemccError {
    #[error(transparent)]
    Context(#[from] memcc_context::ContextError),
    #[error(transparent)]
    Memory(#[from] memcc_memory::MemoryError),
    #[error(transparent)]
    Store(#[from] memcc_context::StoreError),
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("{0}")]
    MemoryUnavailable(String),
}

impl MemccError {
    /// What kind of failure this is, for hosts to branch on.
    pub fn code(&self) -> memcc_core::ErrorCode {
        match self {
            MemccError::Context(e) => e.code(),
            MemccError::Memory(e) => e.code(),
            MemccError::Store(_) => memcc_core::ErrorCode::Storage,
            MemccError::Config(_) => memcc_core::ErrorCode::InvalidConfig,
            MemccError::MemoryUnavailable(_) => memcc_core::ErrorCode::MemoryUnavailable,
        }
    }
}
