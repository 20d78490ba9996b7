//! `memcc mcp`: MemCC as a Model Context Protocol server, over stdio or streamable HTTP.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Result;
use clap::Args;

use crate::Cli;
use memcc_mcp::{Defaults, MemccMcp};

#[derive(Args)]
pub struct McpArgs {
    /// Serve streamable HTTP at http://BIND:PORT/mcp instead of stdio (0: any free port, printed).
    #[arg(long)]
    http: Option<u16>,
    /// Address to listen on with --http; anything but loopback needs --token.
    #[arg(long, default_value = "127.0.0.1")]
    bind: std::net::IpAddr,
    /// Bearer token every HTTP request must carry.
    #[arg(long, env = "MEMCC_MCP_TOKEN")]
    token: Option<String>,
    /// The conversation conversation_* and lcm_* use when a call names none.
    #[arg(long)]
    session: Option<String>,
    /// Token budget of conversation_assemble and of compaction after conversation_append.
    #[arg(long, default_value_t = 16_000)]
    budget: usize,
    /// Another agent whose memory and conversations calls may reach by naming it in `agentId`
    /// (repeat for more). Without it the server acts for --agent alone, whatever a call asks.
    #[arg(long = "allow-agent", value_name = "AGENT")]
    allow_agents: Vec<String>,
}

pub fn run(cli: &Cli, args: &McpArgs) -> Result<()> {
    let memcc = cli.open_background()?;
    let defaults = Defaults {
        agent_id: cli.agent.clone(),
        allowed_agents: args.allow_agents.clone(),
        session_id: args.session.clone(),
        budget: args.budget,
    };
    let memcc = Arc::new(memcc);
    let server = MemccMcp::new(memcc.clone(), defaults);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    // Summaries an earlier process committed but could not hand to memory.
    runtime.spawn_blocking(move || memcc.context.hand_off_all());
    runtime.block_on(async {
        match args.http {
            None => memcc_mcp::serve_stdio(server).await,
            Some(port) => {
                let addr = SocketAddr::new(args.bind, port);
                memcc_mcp::serve_http(server, addr, args.token.clone(), |bound| {
                    // The one line a supervisor (or a test) reads to find the server.
                    eprintln!("memcc: MCP server listening on http://{bound}/mcp");
                })
                .await
            }
        }
    })?;
    Ok(())
}
