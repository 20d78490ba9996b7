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
mod globals;
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

use clap::{Parser, Subcommand};

use globals::Globals;
use tracing_subscriber::filter::{LevelFilter, filter_fn};
use tracing_subscriber::prelude::*;

#[derive(Parser)]
#[command(name = "memcc", version, about = "MemCC: lossless context compaction and long-term memory for LLM agents")]
pub struct Cli {
    #[command(flatten)]
    globals: Globals,
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
    /// Whether this run is the warm process (a server: it logs its warnings as they come).
    fn is_daemon(&self) -> bool {
        #[cfg(unix)]
        return matches!(self.command, Command::Daemon(_));
        #[cfg(not(unix))]
        false
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
    let level = match cli.globals.verbose {
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
        Command::Context(c) => context_cmd::run(&cli.globals, c),
        Command::Memory(c) => memory_cmd::run(&cli.globals, c),
        Command::Model(c) => model_cmd::run(&cli.globals, c),
        #[cfg(feature = "bench")]
        Command::Bench(c) => bench_cmd::run(&cli.globals, c),
        Command::Mcp(a) => mcp_cmd::run(&cli.globals, a),
        Command::Ui(a) => ui_cmd::run(&cli.globals, a),
        #[cfg(unix)]
        Command::Hook(a) => hook_cmd::run(&cli.globals, a),
        #[cfg(unix)]
        Command::Daemon(a) => daemon_cmd::run(&cli.globals, a),
        #[cfg(unix)]
        Command::Setup(a) => setup_cmd::run(&cli.globals, a),
        Command::Demo { data } => demo::run(&cli.globals, data.clone()),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memcc: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
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
