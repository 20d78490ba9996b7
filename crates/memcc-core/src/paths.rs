//! Where MemCC keeps its data: `$MEMCC_HOME`, else `memcc/` in OpenClaw's state dir
//! (`$OPENCLAW_STATE_DIR`, else `$HOME/.openclaw`), so each OpenClaw profile has its own store
//! and the CLI finds the one the host in the same environment uses.

use std::path::PathBuf;

/// The data directory. Falls back to the current directory's `.memcc` only when neither
/// `MEMCC_HOME` nor `HOME` is set (e.g. a stripped service environment).
pub fn data_dir() -> PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(home) = var("MEMCC_HOME") {
        return PathBuf::from(home);
    }
    if let Some(state) = var("OPENCLAW_STATE_DIR") {
        return PathBuf::from(state).join("memcc");
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
