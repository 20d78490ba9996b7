//! `memcc bench`: retrieval benchmarks.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use indicatif::{ProgressBar, ProgressStyle};

use crate::Cli;
use memcc_bench::{Mode, Options};

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Retrieval recall on a LoCoMo file (locomo10.json format), every mode on the same data.
    Locomo {
        path: PathBuf,
        /// Comma-separated: bm25, dense, hybrid, full.
        #[arg(long, default_value = "bm25,dense,hybrid,full")]
        modes: String,
        /// Token budget the full pipeline compacts against.
        #[arg(long, default_value_t = 8000)]
        budget: usize,
        /// Only the first N conversations.
        #[arg(long)]
        limit: Option<usize>,
        /// Write the report (JSON) here, and a Markdown copy beside it.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write one JSON line per question and mode here.
        #[arg(long)]
        per_question: Option<PathBuf>,
    },
}

pub fn run(cli: &Cli, command: &BenchCommand) -> Result<()> {
    match command {
        BenchCommand::Locomo { path, modes, budget, limit, out, per_question } => {
            let modes = modes
                .split(',')
                .map(|m| {
                    Mode::parse(m.trim()).with_context(|| format!("unknown mode {m:?} (bm25, dense, hybrid, full)"))
                })
                .collect::<Result<Vec<_>>>()?;
            if modes.is_empty() {
                bail!("no modes to run");
            }
            let settings = cli.settings()?;
            let options = Options {
                modes,
                embedding_model: settings.embedding_model.clone(),
                model_dir: Some(settings.model_dir()),
                budget: *budget,
                limit: *limit,
            };
            let bar = ProgressBar::new(0).with_style(
                ProgressStyle::with_template("{msg:24} {bar:40} {pos}/{len} conversations ({elapsed})")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            let report = memcc_bench::run_locomo(path, &options, &mut |done, total, label| {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
                bar.set_message(label.to_string());
            })?;
            bar.finish_and_clear();
            let md = memcc_bench::markdown(&report);
            if cli.json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                println!("{md}");
            }
            if let Some(out) = out {
                std::fs::write(out, serde_json::to_string_pretty(&report)?)
                    .with_context(|| format!("writing {}", out.display()))?;
                std::fs::write(out.with_extension("md"), &md)?;
            }
            if let Some(p) = per_question {
                let mut f = std::io::BufWriter::new(
                    std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?,
                );
                for q in &report.per_question {
                    writeln!(f, "{}", serde_json::to_string(q)?)?;
                }
            }
        }
    }
    Ok(())
}
