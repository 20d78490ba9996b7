//! `memcc ui`: the local web inspector.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;

use crate::globals::Globals;

#[derive(Args)]
pub struct UiArgs {
    /// Port on 127.0.0.1 (0: any free port; the URL is printed).
    #[arg(long, default_value_t = 7878)]
    port: u16,
}

pub fn run(cli: &Globals, args: &UiArgs) -> Result<()> {
    let memcc = cli.open_background()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let addr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), args.port);
    runtime
        .block_on(memcc_inspector::serve(Arc::new(memcc), cli.agent.clone(), addr, |bound| {
            // The one line a person (or a test) reads to find the inspector.
            eprintln!("memcc: inspector at http://{bound}/ (Ctrl-C stops it)");
        }))
        .with_context(|| format!("serving the inspector on {addr}"))?;
    Ok(())
}
