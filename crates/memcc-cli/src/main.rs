//! `memcc`: a thin command line over the MemCC engine. Argument parsing and printing only.

mod context_cmd;
mod demo;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};

use memcc_context::{ContextConfig, ContextEngine, ContextStore, ExtractiveSummarizer, LlmSummarizer, Summarizer};
use memcc_core::llm::{OpenAiChat, OpenAiConfig};

#[derive(Parser)]
#[command(name = "memcc", version, about = "MemCC: lossless context compaction and long-term memory for LLM agents")]
pub struct Cli {
    /// Context database (default: $MEMCC_HOME/context.db, else ~/.openclaw/memcc/context.db).
    #[arg(long, global = true, env = "MEMCC_DB")]
    db: Option<PathBuf>,
    /// Print machine-readable JSON.
    #[arg(long, global = true)]
    json: bool,
    /// Log more (repeat for more).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Context engine settings as a JSON file (camelCase keys, e.g. {"freshTailCount": 8}).
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    /// Who writes summaries.
    #[arg(long, global = true, value_enum, default_value_t = SummarizerKind::Extractive)]
    summarizer: SummarizerKind,
    /// OpenAI-compatible base URL for `--summarizer openai` (e.g. http://127.0.0.1:8080/v1).
    #[arg(long, global = true, env = "MEMCC_LLM_BASE_URL")]
    llm_base_url: Option<String>,
    #[arg(long, global = true, env = "MEMCC_LLM_MODEL", default_value = "gpt-4o-mini")]
    llm_model: String,
    /// Seconds before a summariser request is abandoned (then the extractive fallback is used).
    #[arg(long, global = true, default_value_t = 60)]
    llm_timeout: u64,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum SummarizerKind {
    /// Offline, deterministic (default).
    Extractive,
    /// An OpenAI-compatible chat endpoint; falls back to extractive on errors.
    Openai,
}

#[derive(Subcommand)]
enum Command {
    #[command(flatten)]
    Context(context_cmd::ContextCommand),
    /// Run the end-to-end demo: compaction of a long conversation, then exact recovery.
    Demo {
        /// Keep the demo's data here instead of a temporary directory.
        #[arg(long)]
        home: Option<PathBuf>,
    },
}

impl Cli {
    fn context_engine(&self) -> Result<ContextEngine> {
        let path = self.db.clone().unwrap_or_else(memcc_core::paths::context_db);
        let store = ContextStore::open(&path).with_context(|| format!("opening context store {}", path.display()))?;
        let config: ContextConfig = match &self.config {
            Some(file) => {
                let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
                serde_json::from_str(&text).with_context(|| format!("parsing settings in {}", file.display()))?
            }
            None => ContextConfig::default(),
        };
        let engine = ContextEngine::new(store, config)?;
        Ok(engine.with_summarizer(self.summarizer()?))
    }

    fn summarizer(&self) -> Result<Arc<dyn Summarizer>> {
        Ok(match self.summarizer {
            SummarizerKind::Extractive => Arc::new(ExtractiveSummarizer),
            SummarizerKind::Openai => {
                let Some(url) = &self.llm_base_url else {
                    bail!("--summarizer openai needs --llm-base-url (or MEMCC_LLM_BASE_URL)");
                };
                let mut cfg = OpenAiConfig::new(url, &self.llm_model);
                cfg.timeout = Duration::from_secs(self.llm_timeout.max(1));
                Arc::new(LlmSummarizer::new(Arc::new(OpenAiChat::new(cfg)?)))
            }
        })
    }
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let level = match cli.verbose {
        0 => tracing::Level::WARN,
        1 => tracing::Level::INFO,
        _ => tracing::Level::DEBUG,
    };
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(level).init();
    let result = match &cli.command {
        Command::Context(c) => context_cmd::run(&cli, c),
        Command::Demo { home } => demo::run(home.clone()),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memcc: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Print `value` as JSON, or `human` otherwise.
pub fn emit<T: serde::Serialize>(cli: &Cli, value: &T, human: impl FnOnce() -> String) -> Result<()> {
    use std::io::Write;
    let text = if cli.json { serde_json::to_string_pretty(value)? } else { human() };
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}") {
        // A closed pipe (`memcc … | head`) is the reader's choice, not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
