//! `memcc mcp`: MemCC as a Model Context Protocol server, over stdio or streamable HTTP.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;
use clap::Args;

use crate::globals::Globals;
use memcc::core::{LENT_MODEL_PAUSE, Pausing};
use memcc_mcp::{ClientModel, Defaults, MemccMcp};

#[derive(Args)]
pub struct McpArgs {
    /// Serve streamable HTTP at http://BIND:PORT/mcp instead of stdio (0: any free port, printed).
    #[arg(long)]
    http: Option<u16>,
    /// Address to listen on with --http; anything but loopback needs --token.
    #[arg(long, default_value = "127.0.0.1")]
    bind: std::net::IpAddr,
    /// Bearer token every HTTP request must carry. Prefer the environment variable: a flag's
    /// value shows in the process list.
    #[arg(long, env = "MEMCC_MCP_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// A `Host` name (or host:port) clients may address, beside loopback and the --bind
    /// address (repeatable). Bound to 0.0.0.0 or :: without any, every Host is accepted and
    /// the token guards the server.
    #[arg(long = "allowed-host", value_name = "HOST")]
    allowed_hosts: Vec<String>,
    /// A browser origin allowed to call (e.g. https://app.example.com:443; repeatable). A
    /// request carrying any other Origin header is refused with 403.
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    allowed_origins: Vec<String>,
    /// The conversation conversation_* and lcm_* use when a call names none.
    #[arg(long)]
    session: Option<String>,
    /// Token budget of conversation_assemble and of compaction after conversation_append, when a
    /// call names none (default: the configured tokenBudget, else 128000, as for every host).
    #[arg(long)]
    budget: Option<usize>,
    /// The project the client works in: its memories are favoured (default over stdio: the
    /// repository of the directory the client starts the server in, as Claude Code and Codex
    /// do per session; over HTTP, which serves many: none). `none` turns it off.
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Another agent whose memory and conversations calls may reach by naming it in `agentId`
    /// (repeat for more). Without it the server acts for --agent alone, whatever a call asks.
    #[arg(long = "allow-agent", value_name = "AGENT")]
    allow_agents: Vec<String>,
}

pub fn run(cli: &Globals, args: &McpArgs) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    // Summaries by the client's own model when it offers sampling (unless a compactionModel is
    // configured); paused a while after it fails; else the offline summariser.
    let client_model = Pausing::new(ClientModel::new(runtime.handle().clone()), LENT_MODEL_PAUSE);
    let memcc = cli.open_background_with(Some(Arc::new(client_model)))?;
    let defaults = Defaults {
        agent_id: cli.agent.clone(),
        allowed_agents: args.allow_agents.clone(),
        session_id: args.session.clone(),
        budget: args.budget,
        project: match &args.project {
            Some(p) if p.as_os_str() == "none" => None,
            Some(p) => Some(memcc::context::project_of(&std::path::absolute(p)?)),
            None if args.http.is_none() => std::env::current_dir().ok().map(|d| memcc::context::project_of(&d)),
            None => None,
        },
    };
    let memcc = Arc::new(memcc);
    let server = MemccMcp::new(memcc.clone(), defaults);
    runtime.spawn_blocking(move || memcc.deliver_waiting());
    runtime.block_on(async {
        match args.http {
            None => memcc_mcp::serve_stdio(server).await,
            Some(port) => {
                let addr = SocketAddr::new(args.bind, port);
                let access = memcc_mcp::HttpAccess {
                    token: args.token.clone(),
                    allowed_hosts: args.allowed_hosts.clone(),
                    allowed_origins: args.allowed_origins.clone(),
                };
                memcc_mcp::serve_http(server, addr, access, |bound| {
                    // The one line a supervisor (or a test) reads to find the server.
                    eprintln!("memcc: MCP server listening on http://{bound}/mcp");
                })
                .await
            }
        }
    })?;
    Ok(())
}
