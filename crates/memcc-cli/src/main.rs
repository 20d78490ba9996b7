//! `memcc`: a thin command line over the `memcc` crate. Argument parsing and printing only.

// No panic on a path input can reach: outside tests, `unwrap`, `expect` and `panic!` are errors
// (a pattern in the source goes through `memcc_core::text::static_regex`).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

#[cfg(feature = "bench")]
mod bench_cmd;
mod context_cmd;
#[cfg(unix)]
mod daemon_cmd;
mod demo;
#[cfg(unix)]
mod hook_cmd;
mod mcp_cmd;
mod memory_cmd;
mod model_cmd;
mod progress;
#[cfg(unix)]
mod setup_cmd;
mod terminal;
mod ui_cmd;

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

use memcc::{Memcc, MemccConfig};
use tracing_subscriber::filter::{LevelFilter, filter_fn};
use tracing_subscriber::prelude::*;

#[derive(Parser)]
#[command(name = "memcc", version, about = "MemCC: lossless context compaction and long-term memory for LLM agents")]
pub struct Cli {
    /// Data directory holding context.db, memory.db and models/ (default: $MEMCC_HOME, else $OPENCLAW_STATE_DIR/memcc, else the platform's data dir, ~/.local/share/memcc on Linux — or ~/.openclaw/memcc while only it holds a store).
    #[arg(long, global = true)]
    home: Option<PathBuf>,
    /// Context database file (default: <data dir>/context.db).
    #[arg(long, global = true, env = "MEMCC_DB")]
    db: Option<PathBuf>,
    /// Print machine-readable JSON.
    #[arg(long, global = true)]
    json: bool,
    /// Log more (repeat for more).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Settings as a JSON file (camelCase keys, as in the OpenClaw plugin's config; e.g. {"context": {"freshTailCount": 8}}).
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    /// Agent whose memory is used.
    #[arg(long, global = true, default_value = "main")]
    agent: String,
    /// Chat model for summaries (needs --llm-base-url or OPENAI_API_KEY); default: offline extractive summaries.
    #[arg(long, global = true)]
    compaction_model: Option<String>,
    /// usem3 (local, default), hashing, or an OpenAI embedding model name.
    #[arg(long, global = true)]
    embedding_model: Option<String>,
    /// OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1.
    #[arg(long, global = true, env = "MEMCC_LLM_BASE_URL")]
    llm_base_url: Option<String>,
    /// Seconds before a model request is abandoned (summaries then fall back to extractive).
    #[arg(long, global = true)]
    llm_timeout: Option<u64>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    #[command(flatten)]
    Context(context_cmd::ContextCommand),
    /// Long-term memory: add, search, get, forget, export, import, stats, reembed.
    #[command(subcommand)]
    Memory(memory_cmd::MemoryCommand),
    /// The local embedding model: `fetch` installs it, `status` says whether it is installed.
    #[command(subcommand)]
    Model(model_cmd::ModelCommand),
    /// Benchmarks: retrieval, answer in prompt, QA, speed, backends (LoCoMo, RealMem, LongMemEval);
    /// in a build with `--features bench`.
    #[cfg(feature = "bench")]
    #[command(subcommand)]
    Bench(bench_cmd::BenchCommand),
    /// Serve MemCC over the Model Context Protocol (stdio, or streamable HTTP with --http).
    Mcp(mcp_cmd::McpArgs),
    /// Open the local web inspector: sessions and their summary DAG, the assembled prompt and
    /// where each recalled line came from, memory records and triples.
    Ui(ui_cmd::UiArgs),
    /// Answer a Claude Code or Codex hook: its JSON on stdin; for SessionStart and
    /// UserPromptSubmit, what the model should know on stdout (nothing when nothing is relevant);
    /// Stop, SessionEnd and PreCompact queue the session's transcript for import. Never fails
    /// its host (errors go to stderr and <data dir>/run/hooks.log).
    #[cfg(unix)]
    Hook(hook_cmd::HookArgs),
    /// Set MemCC up in Claude Code or Codex: its MCP server (user scope) and its hooks, merged
    /// with what is there (a backup first; nothing written when nothing changes); --uninstall
    /// takes them out; --check says what is installed and whether each part answers.
    ///
    /// Example: `memcc setup claude-code`, then `memcc setup --check`.
    #[cfg(unix)]
    Setup(setup_cmd::SetupArgs),
    /// Keep MemCC warm for the hooks (started by the first hook; ends after hooks.idleSecs
    /// without one): answers them over a Unix socket and imports the transcripts they queue.
    #[cfg(unix)]
    Daemon(daemon_cmd::DaemonArgs),
    /// Run the end-to-end demo: compaction of a long conversation, exact recovery, and recall in a new session.
    Demo {
        /// Keep the demo's data here instead of a temporary directory.
        #[arg(long)]
        data: Option<PathBuf>,
    },
}

impl Cli {
    pub fn settings(&self) -> Result<MemccConfig> {
        let mut config: MemccConfig = match &self.config {
            Some(file) => {
                let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
                MemccConfig::from_json(&text)
                    .map_err(anyhow::Error::msg)
                    .with_context(|| format!("parsing settings in {}", file.display()))?
            }
            None => MemccConfig::default(),
        };
        if self.home.is_some() {
            config.data_dir = self.home.clone();
        }
        if self.db.is_some() {
            config.context_db = self.db.clone();
        }
        if self.compaction_model.is_some() {
            config.compaction_model = self.compaction_model.clone();
        }
        if let Some(m) = &self.embedding_model {
            config.embedding_model = m.clone();
        }
        if self.llm_base_url.is_some() {
            config.llm_base_url = self.llm_base_url.clone();
        }
        if let Some(t) = self.llm_timeout {
            config.llm_timeout_secs = t;
        }
        config.context.agent_id = self.agent.clone();
        Ok(config)
    }

    /// Open MemCC; `with_memory: false` skips loading the memory runtime (and its model).
    pub fn open(&self, with_memory: bool) -> Result<Memcc> {
        self.open_as(with_memory, false)
    }

    /// Open MemCC for a command about the conversation: when memory cannot open, the command
    /// still runs on the context side and a warning says memory is unavailable.
    pub fn open_context_first(&self) -> Result<Memcc> {
        self.open_as(true, true)
    }

    fn open_as(&self, with_memory: bool, context_first: bool) -> Result<Memcc> {
        let mut config = self.settings()?;
        config.memory_enabled &= with_memory;
        let dir = config.data_dir();
        let memcc = if context_first { Memcc::open_context_first(config) } else { Memcc::open(config) }
            .with_context(|| format!("opening MemCC in {}", dir.display()))?;
        print_warnings(&memcc.warnings());
        memcc.deliver_waiting();
        Ok(memcc)
    }

    /// Whether this run is the warm process (a server: it logs its warnings as they come).
    fn is_daemon(&self) -> bool {
        #[cfg(unix)]
        return matches!(self.command, Command::Daemon(_));
        #[cfg(not(unix))]
        false
    }

    /// The global options of this run as arguments, the data dir resolved: what a process this
    /// one starts (the hooks' daemon) needs to open the same MemCC with the same settings.
    pub fn global_args(&self) -> Result<Vec<std::ffi::OsString>> {
        let mut args: Vec<std::ffi::OsString> = vec!["--home".into(), self.settings()?.data_dir().into()];
        let mut flag = |name: &str, value: Option<std::ffi::OsString>| {
            if let Some(v) = value {
                args.push(name.into());
                args.push(v);
            }
        };
        flag("--db", self.db.clone().map(Into::into));
        flag("--config", self.config.clone().map(Into::into));
        flag("--compaction-model", self.compaction_model.clone().map(Into::into));
        flag("--embedding-model", self.embedding_model.clone().map(Into::into));
        flag("--llm-base-url", self.llm_base_url.clone().map(Into::into));
        flag("--llm-timeout", self.llm_timeout.map(|t| t.to_string().into()));
        flag("--agent", Some(self.agent.clone().into()));
        Ok(args)
    }

    /// The embedder the settings ask for, for a bench that builds its own stores; its warnings printed.
    pub fn embedder(&self) -> Result<std::sync::Arc<dyn memcc::memory::Embedder>> {
        let mut warnings = Vec::new();
        let embedder = Memcc::embedder(&self.settings()?, &mut warnings)?;
        print_warnings(&warnings);
        Ok(embedder)
    }

    /// Open MemCC for a server (`mcp`, `ui`): memory opens in the background, so the first
    /// request that needs it waits, not the start-up.
    pub fn open_background(&self) -> Result<Memcc> {
        self.open_background_with(None)
    }

    /// [`Cli::open_background`], with a chat model the server's client lends for summaries.
    pub fn open_background_with(&self, lent: Option<std::sync::Arc<dyn memcc::core::ChatModel>>) -> Result<Memcc> {
        let settings = self.settings()?;
        let dir = settings.data_dir();
        Memcc::open_background(settings, lent).with_context(|| format!("opening MemCC in {}", dir.display()))
    }
}

/// What a user should know ([`Memcc::warnings`]), one `memcc: warning:` line each on stderr.
fn print_warnings(warnings: &[String]) {
    for w in warnings {
        eprintln!("memcc: warning: {w}");
    }
}

/// Commands that print a result end quietly when their reader goes away (`memcc grep … | head`),
/// as Unix tools do, instead of panicking on the closed pipe. Servers (`mcp`, `ui`) keep Rust's
/// default of ignoring SIGPIPE: a client that disconnects must not end them.
fn quiet_on_closed_pipe(command: &Command) {
    #[cfg(unix)]
    let server = matches!(command, Command::Mcp(_) | Command::Ui(_));
    #[cfg(unix)]
    let server = server || matches!(command, Command::Daemon(_));
    if !server {
        // SAFETY: called once at start-up, before any thread exists; SIG_DFL is a valid handler.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    quiet_on_closed_pipe(&cli.command);
    let level = match cli.verbose {
        0 => tracing::Level::WARN,
        1 => tracing::Level::INFO,
        _ => tracing::Level::DEBUG,
    };
    // Servers learn of late warnings (memory opens in the background) from the log; every other
    // command prints `Memcc::warnings` itself once it has opened.
    let server = matches!(cli.command, Command::Mcp(_) | Command::Ui(_)) || cli.is_daemon();
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                // Colour only for a person at a terminal; a log file or a pipe gets plain text.
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                .with_filter(LevelFilter::from_level(level))
                .with_filter(filter_fn(move |m| server || m.target() != memcc::WARNING_TARGET)),
        )
        // The compactor's "summary written" events (INFO) count on the spinner at any -v.
        .with(progress::SummaryCounter.with_filter(LevelFilter::INFO))
        .init();
    let result = match &cli.command {
        Command::Context(c) => context_cmd::run(&cli, c),
        Command::Memory(c) => memory_cmd::run(&cli, c),
        Command::Model(c) => model_cmd::run(&cli, c),
        #[cfg(feature = "bench")]
        Command::Bench(c) => bench_cmd::run(&cli, c),
        Command::Mcp(a) => mcp_cmd::run(&cli, a),
        Command::Ui(a) => ui_cmd::run(&cli, a),
        #[cfg(unix)]
        Command::Hook(a) => hook_cmd::run(&cli, a),
        #[cfg(unix)]
        Command::Daemon(a) => daemon_cmd::run(&cli, a),
        #[cfg(unix)]
        Command::Setup(a) => setup_cmd::run(&cli, a),
        Command::Demo { data } => demo::run(&cli, data.clone()),
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

#[cfg(test)]
mod docs_check;

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// `memcc help …` says what every subcommand and argument is: none is bare (`<FILE>`,
    /// `--session`, `--budget` without a word).
    #[test]
    fn every_subcommand_and_argument_says_what_it_is() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let builtin = ["help", "version"].contains(&arg.get_id().as_str());
                if !builtin && !arg.is_hide_set() && arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path} {}", arg.get_id()));
                }
            }
            for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
                if sub.get_about().is_none() && sub.get_long_about().is_none() {
                    missing.push(format!("{path} {}", sub.get_name()));
                }
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&super::Cli::command(), "memcc", &mut missing);
        assert!(missing.is_empty(), "no help text: {missing:#?}");
    }
}
