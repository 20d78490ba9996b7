//! Where MemCC keeps its data when nothing says: `$MEMCC_HOME`; else `memcc/` in OpenClaw's
//! state dir when `$OPENCLAW_STATE_DIR` names one (the plugin passes the host's own state dir
//! itself, so each OpenClaw profile has its own store); else the platform's data directory
//! (`$XDG_DATA_HOME/memcc` or `~/.local/share/memcc` on Linux, `~/Library/Application
//! Support/memcc` on macOS, `%APPDATA%\memcc` on Windows) — unless only the former default,
//! `~/.openclaw/memcc`, holds a store: that one is used, and said, so one memory is never split
//! in two by an upgrade.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The data directory (see the module's rules). Falls back to the current directory's `.memcc`
/// only when no home directory is known (a stripped service environment).
pub fn data_dir() -> PathBuf {
    default_data_dir().path
}

/// The data directory nothing named, and why, when it is not where a new store would go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultDataDir {
    pub path: PathBuf,
    /// Said once by a command that opens it: the store is the former default's.
    pub notice: Option<String>,
}

/// [`data_dir`] with its notice, read from this process's environment and file system.
pub fn default_data_dir() -> DefaultDataDir {
    resolve(&|name| std::env::var_os(name).filter(|v| !v.is_empty()), &|p| p.exists())
}

/// The rules of [`data_dir`] over an environment (`var`) and a file system (`exists`).
pub fn resolve(var: &dyn Fn(&str) -> Option<OsString>, exists: &dyn Fn(&Path) -> bool) -> DefaultDataDir {
    let plain = |path: PathBuf| DefaultDataDir { path, notice: None };
    if let Some(home) = var("MEMCC_HOME") {
        return plain(PathBuf::from(home));
    }
    if let Some(state) = var("OPENCLAW_STATE_DIR") {
        return plain(PathBuf::from(state).join("memcc"));
    }
    let Some(platform) = platform_data_dir(var) else {
        return plain(PathBuf::from(".memcc"));
    };
    let holds_store = |dir: &Path| exists(&dir.join("context.db")) || exists(&dir.join("memory.db"));
    if let Some(home) = var("HOME") {
        let former = PathBuf::from(home).join(".openclaw").join("memcc");
        if !holds_store(&platform) && holds_store(&former) {
            let notice = format!(
                "using the store in {} (OpenClaw's, and MemCC's former default); new stores outside OpenClaw \
                 go to {} — set MEMCC_HOME to choose",
                former.display(),
                platform.display()
            );
            return DefaultDataDir { path: former, notice: Some(notice) };
        }
    }
    plain(platform)
}

/// `memcc/` in the platform's directory for application data.
fn platform_data_dir(var: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    if cfg!(windows) {
        return var("APPDATA").or_else(|| var("LOCALAPPDATA")).map(|d| PathBuf::from(d).join("memcc"));
    }
    if cfg!(target_os = "macos") {
        return var("HOME").map(|h| PathBuf::from(h).join("Library").join("Application Support").join("memcc"));
    }
    // XDG: a relative XDG_DATA_HOME is to be ignored.
    if let Some(xdg) = var("XDG_DATA_HOME").map(PathBuf::from).filter(|p| p.is_absolute()) {
        return Some(xdg.join("memcc"));
    }
    var("HOME").map(|h| PathBuf::from(h).join(".local").join("share").join("memcc"))
}

/// Default path of the context store.
pub fn context_db() -> PathBuf {
    data_dir().join("context.db")
}

/// Default path of the memory store.
pub fn memory_db() -> PathBuf {
    data_dir().join("memory.db")
}

#[cfg(all(test, unix, not(target_os = "macos")))]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    fn resolved(vars: &[(&str, &str)], files: &[&str]) -> DefaultDataDir {
        let vars: HashMap<String, OsString> = vars.iter().map(|(k, v)| (k.to_string(), OsString::from(v))).collect();
        let files: HashSet<PathBuf> = files.iter().map(PathBuf::from).collect();
        resolve(&|name| vars.get(name).cloned(), &|p| files.contains(p))
    }

    #[test]
    fn the_data_dir_follows_memcc_home_openclaw_then_the_platform_and_keeps_a_former_store() {
        let home = [("HOME", "/home/ada")];
        assert_eq!(resolved(&home, &[]).path, PathBuf::from("/home/ada/.local/share/memcc"));
        let xdg = [("HOME", "/home/ada"), ("XDG_DATA_HOME", "/data")];
        assert_eq!(resolved(&xdg, &[]).path, PathBuf::from("/data/memcc"));
        let relative = [("HOME", "/home/ada"), ("XDG_DATA_HOME", "data")];
        assert_eq!(resolved(&relative, &[]).path, PathBuf::from("/home/ada/.local/share/memcc"));
        let state = [("HOME", "/home/ada"), ("OPENCLAW_STATE_DIR", "/srv/oc")];
        assert_eq!(resolved(&state, &[]).path, PathBuf::from("/srv/oc/memcc"));
        let mine = [("HOME", "/home/ada"), ("OPENCLAW_STATE_DIR", "/srv/oc"), ("MEMCC_HOME", "/m")];
        assert_eq!(resolved(&mine, &[]), DefaultDataDir { path: PathBuf::from("/m"), notice: None });
        assert_eq!(resolved(&[], &[]).path, PathBuf::from(".memcc"));

        // Only the former default holds a store: it is used, and said.
        let former = resolved(&home, &["/home/ada/.openclaw/memcc/memory.db"]);
        assert_eq!(former.path, PathBuf::from("/home/ada/.openclaw/memcc"));
        assert!(former.notice.is_some_and(|n| n.contains("/home/ada/.local/share/memcc") && n.contains("MEMCC_HOME")));
        // Both do: the new one, in silence.
        let both = resolved(&home, &["/home/ada/.openclaw/memcc/memory.db", "/home/ada/.local/share/memcc/context.db"]);
        assert_eq!(both, DefaultDataDir { path: PathBuf::from("/home/ada/.local/share/memcc"), notice: None });
    }
}
