//! The benchmark harness: every dataset becomes [`haystack::Haystack`]s, every system under test
//! runs in the same process on the same data and is scored by the same code.
//!
//! - [`retrieval`] — retrieval recall per mode (BM25, dense, hybrid, the full pipeline).
//! - [`prompt`] — does the prompt MemCC assembles contain the gold answer, beside plain
//!   baselines given the same number of characters ([`answer`] scores, [`baseline`] builds them).
//! - [`qa`] — answer from the assembled prompt with a model, grade with a judge.
//! - [`speed`] — throughput and latency beside same-run baselines.

// No panic on a path input can reach: outside tests, `unwrap`, `expect` and `panic!` are errors
// (a pattern in the source goes through `memcc_core::text::static_regex`).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod answer;
pub mod backends;
pub mod baseline;
pub mod evidence;
pub mod haystack;
#[cfg(unix)]
pub mod hook;
pub mod locomo;
pub mod longmemeval;
pub mod metrics;
pub mod pipeline;
pub mod prompt;
pub mod qa;
pub mod ranker;
pub mod realmem;
pub mod retrieval;
pub mod speed;

use std::path::Path;

use serde::Serialize;

use haystack::Haystack;
use memcc::MemccConfig;

pub use retrieval::{Mode, Report, markdown, run};

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("{0}")]
    Input(String),
    #[error(transparent)]
    Memcc(#[from] memcc::MemccError),
    #[error(transparent)]
    Memory(#[from] memcc::lab::memory::MemoryError),
    #[error(transparent)]
    Context(#[from] memcc::lab::context::ContextError),
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    #[error("QA: {0}")]
    Qa(String),
    #[error(transparent)]
    Store(#[from] memcc::lab::context::StoreError),
    #[error(transparent)]
    Embed(#[from] memcc::lab::memory::embed::EmbedError),
    #[error("baseline index: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dataset {
    Locomo,
    Longmemeval,
    Realmem,
}

#[derive(Debug, Clone, Serialize)]
pub struct Options {
    pub dataset: Dataset,
    /// Retrieval modes (`memcc bench retrieval`); other benches ignore them.
    pub modes: Vec<Mode>,
    /// MemCC's settings as a user would give them (`--config` and the CLI flags): every bench
    /// opens MemCC with these, overriding only the data directory and what it sweeps.
    pub settings: MemccConfig,
    /// Token budget the full pipeline compacts and assembles against.
    pub budget: usize,
    /// Only the first n haystacks (quick runs).
    pub limit: Option<usize>,
    /// Tell MemCC each session's project where the dataset has one (RealMem), as a host that
    /// knows it would: not the upstream protocol, and reported as such.
    pub projects: bool,
    /// Questions whose hits `memcc bench retrieval` lists (id, kind, score, turns, text): why a
    /// question was missed, read rather than guessed. Other benches ignore it.
    pub explain: Vec<String>,
    /// The session ranker's models per haystack, each fit without it ([`ranker::fold_models`]):
    /// the figures of a learned ranker on data it was not fit on. Empty: the shipped models.
    #[serde(skip)]
    pub ranker_folds: std::collections::HashMap<String, std::sync::Arc<memcc::lab::memory::rank::model::Models>>,
    /// How the session ranker's models were chosen, for the report ("shipped", or the folds' source).
    pub ranker: String,
}

impl Options {
    /// Options with MemCC's defaults and the given embedder.
    pub fn new(dataset: Dataset, embedding_model: &str) -> Self {
        Options {
            dataset,
            modes: Vec::new(),
            settings: MemccConfig { embedding_model: embedding_model.into(), ..Default::default() },
            budget: 8_000,
            limit: None,
            projects: false,
            explain: Vec::new(),
            ranker_folds: std::collections::HashMap::new(),
            ranker: "shipped".into(),
        }
    }
}

/// What every report says about its run: the data, the embedder, the settings, the machine.
#[derive(Debug, Clone, Serialize)]
pub struct RunInfo {
    pub path: String,
    pub dataset_sha256: String,
    pub embedder: String,
    pub settings: Options,
    pub machine: Machine,
}

impl RunInfo {
    pub fn new(path: &Path, options: &Options, embedder: String) -> Self {
        RunInfo {
            path: path.display().to_string(),
            dataset_sha256: sha256_file(path),
            embedder,
            settings: options.clone(),
            machine: machine(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub cores: usize,
    pub cpu: String,
    pub os: String,
}

/// Peak resident set size so far (Linux `VmHWM`), in MiB.
pub fn peak_rss_mib() -> Option<f64> {
    peak_rss_mib_of("self")
}

/// [`peak_rss_mib`] of process `pid` ("self": this one).
pub fn peak_rss_mib_of(pid: &str) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

pub fn machine() -> Machine {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    Machine {
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        cpu,
        os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
    }
}

/// The SHA-256 of a dataset file; of a directory (RealMem), the SHA-256 of its `*.json` files'
/// hashes in name order, so a run names exactly the data it read.
pub(crate) fn sha256_file(path: &Path) -> String {
    use sha2::{Digest, Sha256};
    if path.is_dir() {
        let Ok(files) = realmem::files(path) else { return String::new() };
        let joined: String = files.iter().map(|f| sha256_file(f)).collect::<Vec<_>>().join("\n");
        return hex::encode(Sha256::digest(joined.as_bytes()));
    }
    std::fs::read(path).map(|b| hex::encode(Sha256::digest(&b))).unwrap_or_default()
}

/// Load a dataset file into haystacks (the first `limit`); `issues` collects evidence problems.
/// What a report says of a run that told MemCC each session's project ([`Options::projects`]).
pub const PROJECTS_TOLD: &str = "**Projects told:** the host passed each session's project to MemCC (RealMem: the \
project of its session identifier), as Claude Code and Codex do — not the upstream protocol, where no system is told.\n";

pub fn load(options: &Options, path: &Path, issues: &mut Vec<String>) -> Result<Vec<Haystack>, BenchError> {
    let mut haystacks = match options.dataset {
        Dataset::Locomo => locomo::to_haystacks(&locomo::load(path)?, issues),
        Dataset::Longmemeval => longmemeval::to_haystacks(&longmemeval::load(path)?),
        Dataset::Realmem => realmem::to_haystacks(&realmem::load(path)?, issues),
    };
    if let Some(n) = options.limit {
        haystacks.truncate(n);
    }
    // Where a question's gold is, beside where it is asked (reported apart: another project's
    // preferences and constraints must still arrive).
    for h in &mut haystacks {
        let project_of: std::collections::HashMap<&str, Option<&str>> =
            h.sessions.iter().map(|s| (s.unit.as_str(), s.project.as_deref())).collect();
        let asked: Vec<Option<Option<bool>>> = h
            .questions
            .iter()
            .map(|q| {
                let here = q.asked_at.and_then(|a| h.sessions.get(a.session)).map(|s| s.project.as_deref())?;
                here?;
                Some(Some(q.gold_sessions.iter().any(|g| project_of.get(g.as_str()).is_some_and(|p| *p != here))))
            })
            .collect();
        for (q, elsewhere) in h.questions.iter_mut().zip(asked) {
            q.gold_elsewhere = elsewhere.flatten();
        }
    }
    // What the dataset knows of projects reaches MemCC only in a run that asks for it.
    if !options.projects {
        for s in haystacks.iter_mut().flat_map(|h| h.sessions.iter_mut()) {
            s.project = None;
        }
    }
    Ok(haystacks)
}
