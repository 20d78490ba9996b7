//! Where MemCC keeps its data: `$MEMCC_HOME`, else `$HOME/.openclaw/memcc/`.

use std::path::PathBuf;

/// The data directory. Falls back to the current directory's `.memcc` only when neither
/// `MEMCC_HOME` nor `HOME` is set (e.g. a stripped service environment).
pub fn data_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("MEMCC_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home);
    }
    match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        Some(home) => PathBuf::from(home).join(".openclaw").join("memcc"),
        None => PathBuf::from(".memcc"),
    }
}

/// Default path of the context store.
pub fn context_db() -> PathBuf {
    data_dir().join("context.db")
}

/// Default path of the memory store.
pub fn memory_db() -> PathBuf {
    data_dir().join("memory.db")
}
