//! `memcc hook <event>`: what Claude Code's and Codex's hooks run. The host's JSON comes on
//! stdin; the answer (for `SessionStart` and `UserPromptSubmit`) goes to stdout in the shape
//! both hosts read, and nothing at all when there is nothing to add. A hook never fails its host:
//! whatever goes wrong is a line on stderr and in `<data dir>/run/hooks.log`, and the exit code
//! is 0. The warm process (`memcc daemon`) answers when it runs; the first hook without one
//! starts it and answers itself.

use std::io::{Read, Write};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::daemon_cmd::{self, Request};
use crate::globals::Globals;
use memcc::Memcc;
use memcc::hooks::{HookEvent, HookInput};

#[derive(Args)]
pub struct HookArgs {
    /// The host's event: SessionStart, UserPromptSubmit, Stop, SessionEnd or PreCompact (as the
    /// host names it, or session-start, …); default: the payload's hook_event_name.
    event: Option<String>,
}

/// The most of stdin a hook reads (the payload carries the prompt).
const MAX_PAYLOAD: u64 = 16 << 20;

/// How long a hook waits for the warm process: an answer the host shows the model may take a
/// moment (memory may still be loading there); queuing is a write.
fn patience(event: HookEvent) -> Duration {
    if event.answers() { Duration::from_secs(memcc::hooks::WARM_PATIENCE_SECS) } else { Duration::from_secs(2) }
}

pub fn run(cli: &Globals, args: &HookArgs) -> Result<()> {
    match answer(cli, args) {
        Ok(Some(output)) => {
            let mut out = std::io::stdout().lock();
            // A host that stopped reading is no error of ours.
            let _ = writeln!(out, "{output}");
        }
        Ok(None) => {}
        Err(e) => {
            let line = format!("memcc hook {}: {e:#}", args.event.as_deref().unwrap_or(""));
            eprintln!("{line}");
            log_error(cli, &line);
        }
    }
    Ok(())
}

fn answer(cli: &Globals, args: &HookArgs) -> Result<Option<serde_json::Value>> {
    let mut raw = Vec::new();
    std::io::stdin().lock().take(MAX_PAYLOAD).read_to_end(&mut raw).context("reading the hook's payload")?;
    let raw = String::from_utf8(raw).context("the hook's payload is not UTF-8")?;
    let value: serde_json::Value = if raw.trim().is_empty() {
        serde_json::json!({})
    } else {
        serde_json::from_str(&raw).context("the hook's payload is not JSON")?
    };
    let input: HookInput = serde_json::from_value(value.clone()).unwrap_or_default();
    let name = args.event.clone().or_else(|| input.hook_event_name.clone()).unwrap_or_default();
    let Some(event) = HookEvent::parse(&name) else {
        bail!("{name:?} is not an event MemCC answers (SessionStart, UserPromptSubmit, Stop, SessionEnd, PreCompact)");
    };
    // A session its user keeps quiet gets nothing, at no cost; what it says is still queued.
    if event.answers() && memcc::hooks::quiet(std::env::var(memcc::hooks::QUIET_ENV).ok().as_deref()) {
        return Ok(None);
    }
    let settings = cli.settings()?;
    if settings.hooks.warm {
        let socket = daemon_cmd::socket_path(cli)?;
        let made = socket.parent().is_some_and(std::path::Path::exists);
        match daemon_cmd::socket_is_ours(&socket) {
            // Someone else's directory: answered here, cold, and said why (`setup --check`
            // shows the log); no daemon is started into it.
            Err(why) if made => log_error(cli, &format!("memcc hook: {why}")),
            _ => {
                let request = Request { agent: cli.agent.clone(), event, input: value };
                if let Some(response) = daemon_cmd::ask(&socket, &request, patience(event)) {
                    if let Some(e) = response.error {
                        bail!(e);
                    }
                    return Ok(response.output);
                }
                // None runs: start one for the hooks to come (it drains what this one queues),
                // and answer this one here.
                if let Err(e) = daemon_cmd::spawn(cli, false) {
                    log_error(cli, &format!("memcc hook: could not start the daemon: {e:#}"));
                }
            }
        }
    }
    if !event.answers() {
        // Only a queue to write: no model to load.
        let memcc = cli.open(false)?;
        let answer = memcc.answer_hook(&cli.agent, event, &input)?;
        if answer.queued && !settings.hooks.warm {
            daemon_cmd::spawn(cli, true)?;
        }
        return Ok(None);
    }
    let memcc = Memcc::open_context_first(settings)?;
    Ok(memcc.answer_hook(&cli.agent, event, &input)?.host_output())
}

/// Keep a hook's failure where `memcc setup --check` reads it: the host shows a hook's stderr
/// only in its debug view.
fn log_error(cli: &Globals, line: &str) {
    let Ok(settings) = cli.settings() else { return };
    let dir = settings.data_dir().join("run");
    if crate::daemon_cmd::private_dir(&dir).is_err() {
        return;
    }
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("hooks.log")) {
        let _ = writeln!(f, "{} {line}", memcc::core::minute(memcc::core::now_ms()));
    }
}
