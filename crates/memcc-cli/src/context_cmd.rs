//! Context-engine subcommands.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};

use crate::globals::{Globals, emit};
use crate::terminal::printable;
use memcc::context::{AgentMessage, SessionRef};
use memcc::context::{ExpandRequest, GrepMode, GrepRequest, GrepScope};

/// `memcc import --format`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    Auto,
    /// OpenClaw session JSONL or {role, content} lines.
    Openclaw,
    ClaudeCode,
    Codex,
}

#[derive(Subcommand)]
pub enum ContextCommand {
    /// Import a transcript, idempotently: OpenClaw session JSONL, {role, content} lines, a Claude
    /// Code transcript (~/.claude/projects/<project>/<session>.jsonl) or a Codex CLI rollout
    /// (~/.codex/sessions/…/rollout-*.jsonl), each line read as the format it is written in.
    ///
    /// Examples: `memcc import ~/.claude/projects/-home-me-shop/6f1c….jsonl --flush`;
    /// as a Claude Code SessionEnd hook: `memcc --agent claude import --hook --flush`.
    Import(ImportArgs),
    /// Ingest messages: JSON objects, one per line, from FILE or stdin.
    ///
    /// Example: `echo '{"role": "user", "content": "hi"}' | memcc ingest --session s --budget 8000`.
    Ingest {
        /// The conversation to add to (created on first use).
        #[arg(long)]
        session: String,
        /// A JSONL file of messages ({"role", "content", "timestamp"?}); default: standard input.
        file: Option<PathBuf>,
        /// Compact after ingesting, against this token budget.
        #[arg(long)]
        budget: Option<usize>,
    },
    /// Compact a session when it is over its threshold (always with --force).
    ///
    /// Example: `memcc compact --session s --budget 16000`.
    Compact {
        /// The conversation to compact.
        #[arg(long)]
        session: String,
        /// The host's context window, in tokens: compaction starts at its threshold share of it.
        #[arg(long)]
        budget: usize,
        /// Compact now, even under the threshold.
        #[arg(long)]
        force: bool,
    },
    /// End a session: fold everything, fresh tail included, so its last messages reach long-term
    /// memory (hosts call this when a conversation is over).
    Flush {
        /// The conversation that has ended.
        #[arg(long)]
        session: String,
        /// Token budget the flush compacts against.
        #[arg(long, default_value_t = 8000)]
        budget: usize,
    },
    /// Delete a session on request: its raw messages, summaries and every memory made from it.
    Purge {
        /// The conversation to delete.
        #[arg(long)]
        session: String,
    },
    /// Print the prompt that would be sent next, within a token budget.
    ///
    /// Examples: `memcc --json assemble --session s --budget 16000`; a new session's first prompt:
    /// `memcc assemble --session s2 --budget 8000 --query "where do I live?"`.
    Assemble {
        /// The conversation (a new one needs --query).
        #[arg(long)]
        session: String,
        /// Tokens the prompt may take (summaries, fresh tail and recalled memory together).
        #[arg(long)]
        budget: usize,
        /// The user's message about to be sent (not stored): what recall looks for.
        #[arg(long)]
        query: Option<String>,
    },
    /// Search messages and summaries (lcm_grep).
    Grep(GrepArgs),
    /// Show a summary's metadata, span, children and parents (lcm_describe).
    Describe {
        /// A summary id, e.g. sum_0123456789abcdef (from grep or a prompt's <summary id=…>).
        id: String,
    },
    /// Expand summaries, messages or files back to their sources (lcm_expand_query).
    ///
    /// Examples: `memcc expand sum_0123456789abcdef --deep`; `memcc expand --query "flight number" --session s`.
    Expand {
        /// Summary, message or file ids (sum_…, msg_…, file_…).
        ids: Vec<String>,
        /// Without ids: expand the best matches of this query.
        #[arg(long)]
        query: Option<String>,
        /// The conversation a query searches (default: all of the agent's).
        #[arg(long)]
        session: Option<String>,
        /// Token cap on what is printed (default 4000).
        #[arg(long)]
        max_tokens: Option<usize>,
        /// Go all the way down to raw messages.
        #[arg(long)]
        deep: bool,
        /// Each message as stored, with its structured parts (thinking, images, tool calls).
        #[arg(long)]
        raw: bool,
    },
    /// Check that the summary DAG still covers every message exactly once, and the file's integrity.
    Verify {
        /// The conversation to check.
        #[arg(long)]
        session: String,
    },
    /// The agent's sessions, the most recently spoken in first: when, how long, its title, project
    /// and where it came from (Claude Code, Codex, OpenClaw, MCP, an import).
    ///
    /// Example: `memcc --agent claude sessions --project .`.
    Sessions {
        /// Only this project's: a directory (its repository counts), e.g. `.`.
        #[arg(long)]
        project: Option<PathBuf>,
        /// Every agent's sessions, not only --agent's.
        #[arg(long)]
        all_agents: bool,
        /// How many at most.
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Counts of messages, summaries, depth and tokens: of --agent's conversations, one of them, or
    /// the whole store.
    Stats {
        /// One conversation (default: all of --agent's).
        #[arg(long)]
        session: Option<String>,
        /// The whole store, every agent's conversations (an operator's view).
        #[arg(long, conflicts_with = "session")]
        all_agents: bool,
    },
}

#[derive(Args)]
pub struct GrepArgs {
    /// Words that must all occur (full text), or a regular expression with --regex.
    pattern: String,
    /// One conversation (default: all of the agent's).
    #[arg(long)]
    session: Option<String>,
    /// Treat the pattern as a regular expression (default: full-text words).
    #[arg(long)]
    regex: bool,
    /// Search raw messages, summaries, or both.
    #[arg(long, value_parser = ["messages", "summaries", "both"], default_value = "both")]
    scope: String,
    /// Only hits at or after this time (RFC 3339, YYYY-MM-DD or epoch ms).
    #[arg(long, value_parser = parse_time)]
    since: Option<i64>,
    /// Only hits before this time.
    #[arg(long, value_parser = parse_time)]
    before: Option<i64>,
    /// How many hits at most (default 20, at most 500).
    #[arg(long)]
    limit: Option<usize>,
}

/// Run a long operation with a spinner, the summaries written so far and its elapsed time on
/// stderr, for a person at a terminal (quiet under `--json` or without one, and under `-v`, whose
/// log says more).
fn working<T>(cli: &Globals, what: &str, f: impl FnOnce() -> T) -> T {
    let show = !cli.json && cli.verbose == 0 && std::io::IsTerminal::is_terminal(&std::io::stderr());
    if !show {
        return f();
    }
    let spinner = indicatif::ProgressBar::new_spinner();
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    crate::progress::with_spinner(spinner, what, f)
}

fn parse_time(s: &str) -> Result<i64, String> {
    if let Ok(ms) = s.parse::<i64>() {
        return Ok(ms);
    }
    if let Ok(d) = chrono::DateTime::parse_from_rfc3339(s) {
        return Ok(d.timestamp_millis());
    }
    if let Ok(d) = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return Ok(d.and_hms_opt(0, 0, 0).map(|t| t.and_utc().timestamp_millis()).unwrap_or(0));
    }
    Err(format!("{s:?} is not RFC 3339, YYYY-MM-DD or epoch milliseconds"))
}

/// What `memcc import` is given.
#[derive(clap::Args)]
pub struct ImportArgs {
    /// The transcript file (with --hook: the hook's transcript_path instead).
    #[arg(required_unless_present = "hook")]
    pub file: Option<PathBuf>,
    /// Session id (default: the transcript's own — an OpenClaw header, Codex session_meta,
    /// Claude Code sessionId).
    #[arg(long)]
    pub session: Option<String>,
    /// Fail without importing anything if any line is bad.
    #[arg(long)]
    pub strict: bool,
    /// The format the file must be in; anything else fails (default: any).
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    pub format: FormatArg,
    /// Read a Claude Code hook's JSON from stdin ({"session_id", "transcript_path", …}): the
    /// transcript to import, into that session.
    #[arg(long)]
    pub hook: bool,
    /// Then flush the session (its fresh tail too is summarised and reaches memory): for a
    /// session that has ended. A directory's transcripts are past sessions: each is flushed
    /// without it being asked.
    #[arg(long)]
    pub flush: bool,
    /// A directory: import its transcripts' messages only, and leave memory as it is (a later
    /// run without it fills memory from them).
    #[arg(long, conflicts_with = "flush")]
    pub no_flush: bool,
    /// Token budget of that flush.
    #[arg(long, default_value_t = 8000)]
    pub budget: usize,
}

/// The budget a command is given: a host's ask, within the configured `tokenBudget`, over the
/// floor, as every host gets it (`Memcc::budget`).
fn grant(memcc: &memcc::Memcc, asked: usize) -> memcc::Budget {
    memcc.budget(Some(asked as f64))
}

pub fn run(cli: &Globals, command: &ContextCommand) -> Result<()> {
    // Writing and assembling go through the memory bridge; reading the DAG does not need it.
    let with_memory = matches!(
        command,
        ContextCommand::Import(_)
            | ContextCommand::Ingest { .. }
            | ContextCommand::Compact { .. }
            | ContextCommand::Flush { .. }
            | ContextCommand::Purge { .. }
            | ContextCommand::Assemble { .. }
    );
    // Purge deletes what memory made from the conversation too: it needs memory, and says so.
    // The rest store and read the conversation whatever state memory is in.
    let memcc = if with_memory && !matches!(command, ContextCommand::Purge { .. }) {
        cli.open_context_first()?
    } else {
        cli.open(with_memory)?
    };
    let engine = &memcc.context;
    match command {
        ContextCommand::Import(args) => import(cli, &memcc, args)?,
        ContextCommand::Ingest { session, file, budget } => {
            let reader: Box<dyn BufRead> = match file {
                Some(f) => Box::new(BufReader::new(
                    std::fs::File::open(f).with_context(|| format!("opening {}", f.display()))?,
                )),
                None => Box::new(BufReader::new(std::io::stdin())),
            };
            let parsed = memcc::context::parse_jsonl(reader)?;
            if let Some(first) = parsed.errors.first() {
                bail!("line {}: {} (nothing ingested)", first.line, first.error);
            }
            warn_unread(&parsed.unread);
            // One batch: a message repeated inside it is kept each time (see docs/reference.md, idempotency).
            let out = engine.ingest_batch(&SessionRef::new(session), &parsed.messages)?;
            let (added, duplicates) = (out.inserted.len(), out.duplicates);
            let mut compactions = Vec::new();
            if let Some(b) = budget {
                let c = memcc.compact(&SessionRef::new(session), grant(&memcc, *b), false)?;
                if c.compacted {
                    compactions.push(c);
                }
            }
            let value = serde_json::json!({"added": added, "duplicates": duplicates, "compactions": compactions});
            emit(cli, &value, || format!("{added} added, {duplicates} duplicates, {} compactions", compactions.len()))?;
        }
        ContextCommand::Compact { session, budget, force } => {
            let started = std::time::Instant::now();
            let out = working(cli, "compacting", || {
                memcc.compact(&SessionRef::new(session), grant(&memcc, *budget), *force)
            })?;
            emit(cli, &out, || {
                format!(
                    "compacted: {} ({} leaf, {} condensed); tokens {} -> {} (threshold {}); {}; {:.1} s",
                    out.compacted,
                    out.leaf_summaries,
                    out.condensed_summaries,
                    out.tokens_before,
                    out.tokens_after,
                    out.threshold_tokens,
                    out.reason,
                    started.elapsed().as_secs_f64()
                )
            })?;
        }
        ContextCommand::Purge { session } => {
            let out = memcc.purge_session(&SessionRef::new(session))?;
            emit(cli, &out, || {
                format!(
                    "purged session {}: {} messages, {} summaries, {} memory records",
                    out.session_id, out.messages, out.summaries, out.memory_records
                )
            })?;
        }
        ContextCommand::Flush { session, budget } => {
            let started = std::time::Instant::now();
            let out = working(cli, "flushing", || memcc.flush(&SessionRef::new(session), grant(&memcc, *budget)))?;
            emit(cli, &out, || {
                format!(
                    "flushed: {} leaf and {} condensed summaries; tokens {} -> {}; {:.1} s",
                    out.leaf_summaries,
                    out.condensed_summaries,
                    out.tokens_before,
                    out.tokens_after,
                    started.elapsed().as_secs_f64()
                )
            })?;
        }
        ContextCommand::Assemble { session, budget, query } => {
            assemble(cli, &memcc, session, *budget, query.as_deref())?
        }
        ContextCommand::Grep(a) => {
            let scope = match a.scope.as_str() {
                "messages" => GrepScope::Messages,
                "summaries" => GrepScope::Summaries,
                _ => GrepScope::Both,
            };
            let req = GrepRequest {
                pattern: a.pattern.clone(),
                mode: if a.regex { GrepMode::Regex } else { GrepMode::Text },
                scope,
                session_id: a.session.clone(),
                // The engine's agent: `--agent`.
                agent_id: None,
                since: a.since,
                before: a.before,
                limit: a.limit,
            };
            let hits = engine.grep(&req)?;
            emit(cli, &hits, || {
                if hits.is_empty() {
                    return "no matches".into();
                }
                hits.iter()
                    .map(|h| {
                        let under = h.summary_id.as_deref().map(|s| format!(" (in {s})")).unwrap_or_default();
                        format!("{} {}{}: {}", h.kind, h.id, under, h.snippet.replace('\n', " "))
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })?;
        }
        ContextCommand::Describe { id } => {
            let d = engine.describe(None, id)?;
            emit(cli, &d, || {
                let s = &d.summary;
                let mut out = format!(
                    "{} {} depth {} seq {}..{} ({} messages, {} summaries below, {} tokens from {})\nparents: {:?}\n",
                    s.id,
                    s.kind.as_str(),
                    s.depth,
                    s.first_seq,
                    s.last_seq,
                    s.descendant_messages,
                    s.descendant_summaries,
                    s.token_count,
                    s.source_tokens,
                    d.parents
                );
                for c in &d.children {
                    out.push_str(&format!("  {} {} ({} tokens)\n", c.id, c.kind, c.tokens));
                }
                out.push_str(&s.content);
                out
            })?;
        }
        ContextCommand::Expand { ids, query, session, max_tokens, deep, raw } => expand(
            cli,
            engine,
            ExpandRequest {
                ids: ids.clone(),
                query: query.clone(),
                session_id: session.clone(),
                agent_id: None,
                max_tokens: *max_tokens,
                deep: *deep,
                raw: *raw,
            },
        )?,
        ContextCommand::Verify { session } => {
            let report = engine.verify(session)?;
            emit(cli, &report, || {
                format!(
                    "{}: {} messages, {} reached through the DAG, {} missing, {} duplicated, order {}, integrity {}",
                    if report.ok() { "ok" } else { "BROKEN" },
                    report.messages,
                    report.covered,
                    report.missing.len(),
                    report.duplicated.len(),
                    if report.out_of_order { "broken" } else { "ok" },
                    report.integrity
                )
            })?;
            if !report.ok() {
                bail!("session {session} failed verification");
            }
        }
        ContextCommand::Sessions { project, all_agents, limit } => {
            sessions(cli, engine, project.as_deref(), *all_agents, *limit)?
        }
        ContextCommand::Stats { session, all_agents } => stats(cli, engine, session.as_deref(), *all_agents)?,
    }
    Ok(())
}

/// `memcc import DIR`: every transcript under it (a backfill of `~/.claude/projects/` or
/// `~/.codex/sessions/`), with a bar at a terminal; those unchanged since their import are passed
/// over.
fn import_dir(cli: &Globals, memcc: &memcc::Memcc, dir: &std::path::Path, flush: Option<memcc::Budget>) -> Result<()> {
    use memcc::transcripts::FileImport;
    let show = !cli.json && cli.verbose == 0 && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let bar = show.then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} transcripts, {elapsed}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let done = memcc.import_dir(&cli.agent, dir, flush, &mut |done, total| {
        if let Some(b) = &bar {
            b.set_length(total as u64);
            b.set_position(done as u64);
        }
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let count = |f: &dyn Fn(&FileImport) -> bool| done.iter().filter(|(_, d)| f(d)).count();
    let imported = count(&|d| matches!(d, FileImport::Imported { .. }));
    let unchanged = count(&|d| matches!(d, FileImport::Unchanged { .. }));
    // Unchanged files whose sessions an earlier run left unflushed, flushed now.
    let finished = count(&|d| matches!(d, FileImport::Unchanged { flushed: Some(f) } if f.leaf_summaries > 0));
    let empty = count(&|d| matches!(d, FileImport::Empty));
    let added: usize =
        done.iter().map(|(_, d)| if let FileImport::Imported { report, .. } = d { report.added } else { 0 }).sum();
    let failed: Vec<String> = done
        .iter()
        .filter_map(|(p, d)| match d {
            // A file's name is whatever was put there: shown, not obeyed by the terminal.
            FileImport::Failed { error } => Some(printable(&format!("  {}: {error}", p.display()))),
            _ => None,
        })
        .collect();
    let value: Vec<serde_json::Value> = done.iter().map(|(p, d)| serde_json::json!({"path": p, "import": d})).collect();
    emit(cli, &value, || {
        let mut s = format!(
            "{} transcripts: {imported} imported ({added} messages added), {unchanged} unchanged since their import{}, \
             {empty} with nothing to import, {} failed",
            done.len(),
            if finished > 0 { format!(" ({finished} of them now handed to memory)") } else { String::new() },
            failed.len()
        );
        for f in failed.iter().take(20) {
            s.push('\n');
            s.push_str(f);
        }
        s
    })
}

/// One `memcc: warning:` line per message stored as given (of no kind MemCC reads), the first
/// few by line: lossless for a host's own entries, but a typo'd role should not pass unseen.
fn warn_unread(unread: &[memcc::context::LineError]) {
    for note in unread.iter().take(5) {
        eprintln!("memcc: warning: line {}: {}", note.line, note.error);
    }
    if unread.len() > 5 {
        eprintln!("memcc: warning: {} more such lines", unread.len() - 5);
    }
}

/// `memcc import`: a transcript (or a hook's, or a directory of them) into its session.
fn import(cli: &Globals, memcc: &memcc::Memcc, args: &ImportArgs) -> Result<()> {
    let ImportArgs { file, session, strict, format, hook, flush, no_flush, budget } = args;
    let (file, session) = if *hook {
        let input: memcc::hooks::HookInput = serde_json::from_reader(std::io::stdin().lock())
            .context("reading the hook's JSON on stdin (session_id, transcript_path)")?;
        match input.transcript_path {
            Some(path) => (path, session.clone().or(Some(input.session_id).filter(|s| !s.is_empty()))),
            // A session that wrote no transcript said nothing: no error for its host.
            None => return emit(cli, &serde_json::json!({"added": 0}), || "nothing to import".into()),
        }
    } else {
        (file.clone().unwrap_or_default(), session.clone())
    };
    if file.is_dir() {
        // A hook names its own session's transcript: a directory there is not one.
        if *hook {
            bail!(
                "the hook's transcript_path {} is a directory, not a transcript: nothing imported",
                printable(&file.display().to_string())
            );
        }
        // Each file of a directory is its own session, in the format it is written in.
        let given: Vec<&str> =
            [(session.is_some(), "--session"), (*strict, "--strict"), (!matches!(format, FormatArg::Auto), "--format")]
                .into_iter()
                .filter_map(|(set, name)| set.then_some(name))
                .collect();
        if !given.is_empty() {
            bail!(
                "{} applies to one transcript, not a directory (each file is its own session): nothing imported",
                given.join(", ")
            );
        }
        // A backfill is how a new user's memory starts: past sessions go to memory.
        return import_dir(cli, memcc, &file, (!no_flush).then(|| grant(memcc, *budget)));
    }
    let open = || -> Result<BufReader<std::fs::File>> {
        let f = memcc::transcripts::open_transcript(&file).with_context(|| format!("opening {}", file.display()))?;
        Ok(BufReader::new(f))
    };
    // A hook's session that ended before it wrote anything.
    if *hook && !file.exists() {
        return emit(cli, &serde_json::json!({"added": 0}), || "nothing to import".into());
    }
    let parsed = memcc::context::parse_jsonl(open()?)?;
    if *strict && let Some(first) = parsed.errors.first() {
        bail!("{} bad line(s); first: line {}: {} (nothing imported)", parsed.errors.len(), first.line, first.error);
    }
    use memcc::context::{FORMATS_READ, Format};
    let Some(found) = parsed.format else {
        if *hook {
            return emit(cli, &serde_json::json!({"added": 0}), || "nothing to import".into());
        }
        bail!(
            "no message found in {} ({} other entries, {} bad lines): MemCC reads {FORMATS_READ}",
            file.display(),
            parsed.other_entries,
            parsed.errors.len()
        );
    };
    let wanted = match format {
        FormatArg::Auto => None,
        FormatArg::Openclaw => Some(Format::Openclaw),
        FormatArg::ClaudeCode => Some(Format::ClaudeCode),
        FormatArg::Codex => Some(Format::Codex),
    };
    if let Some(w) = wanted.filter(|w| *w != found) {
        bail!("{} reads as a {} transcript, not {} (nothing imported)", file.display(), found.name(), w.name());
    }
    let options = memcc::transcripts::ImportOptions {
        session,
        flush: flush.then(|| grant(memcc, *budget)),
        ..Default::default()
    };
    let (report, flushed) = match memcc.import_file(&cli.agent, &file, &options)? {
        memcc::transcripts::FileImport::Imported { report, flushed } => (report, flushed),
        memcc::transcripts::FileImport::Failed { error } => bail!(error),
        _ => bail!("no message found in {}", file.display()),
    };
    warn_unread(&report.unread);
    emit(cli, &report, || {
        let mut s = format!(
            "session {} ({}): {} added, {} already present, {} non-message entries skipped",
            printable(&report.session_id),
            found.name(),
            report.added,
            report.duplicates,
            report.other_entries
        );
        if let Some(f) = &flushed {
            s.push_str(&format!(
                "; flushed: {} leaf and {} condensed summaries",
                f.leaf_summaries, f.condensed_summaries
            ));
        }
        for e in &report.errors {
            s.push_str(&format!("\n  line {}: {}", e.line, e.error));
        }
        s
    })?;
    Ok(())
}

/// `memcc assemble`: the prompt a host would get for the session.
fn assemble(cli: &Globals, memcc: &memcc::Memcc, session: &str, budget: usize, query: Option<&str>) -> Result<()> {
    let budget = grant(memcc, budget);
    let out = match query {
        Some(q) => {
            memcc.assemble_for(&SessionRef::new(session), budget, None, &[memcc::context::AgentMessage::user(q)])?
        }
        None => memcc.assemble(&SessionRef::new(session), budget, None).map_err(|e| match e {
            memcc::MemccError::Context(memcc::context::ContextError::UnknownSession(_)) => {
                anyhow::anyhow!("{e}: a new session has no messages yet; give its first message with --query")
            }
            e => e.into(),
        })?,
    };
    emit(cli, &out, || {
        let mut s = String::new();
        if let Some(sys) = &out.system_prompt_addition {
            s.push_str(&format!("[system addition] {sys}\n\n"));
        }
        for m in &out.messages {
            let msg = AgentMessage::from_value(m.clone());
            s.push_str(&format!("[{}] {}\n", msg.role(), msg.text()));
        }
        s.push_str(&format!(
            "\n~{} tokens of {}; {} summaries, {} raw messages, {} items dropped",
            out.estimated_tokens,
            budget.tokens(),
            out.summaries_included,
            out.raw_messages_included,
            out.items_dropped
        ));
        s
    })?;
    Ok(())
}

/// `memcc expand`: summaries, messages or files back to their sources.
fn expand(cli: &Globals, engine: &memcc::context::ContextEngine, req: ExpandRequest) -> Result<()> {
    let out = engine.expand(&req)?;
    emit(cli, &out, || {
        let mut s: String = out
            .items
            .iter()
            .map(|i| {
                let body = i.raw.as_ref().map_or_else(|| i.text.clone(), |r| r.to_string());
                format!(
                    "{} [{}{}] {body}",
                    i.id,
                    i.kind,
                    i.role.as_deref().map(|r| format!(" {r}")).unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        if out.truncated {
            s.push_str(&format!("\n[{} tokens shown; {} item(s) cut or omitted]", out.tokens, out.omitted.max(1)));
        }
        s
    })?;
    Ok(())
}

/// `memcc sessions`: the conversations, newest first.
fn sessions(
    cli: &Globals,
    engine: &memcc::context::ContextEngine,
    project: Option<&std::path::Path>,
    all_agents: bool,
    limit: usize,
) -> Result<()> {
    let project = project
        .map(|p| std::path::absolute(p).map(|p| memcc::context::project_of(&p)))
        .transpose()
        .context("reading the project's directory")?;
    let agent = (!all_agents).then_some(cli.agent.as_str());
    let sessions = engine.sessions(agent, project.as_deref(), limit)?;
    emit(cli, &sessions, || {
        if sessions.is_empty() {
            return "no sessions".into();
        }
        sessions
            .iter()
            .map(|s| {
                let when = memcc::core::minute(s.last_at);
                let source = s.meta.source.map_or("—", |x| x.label());
                let project = s.meta.project.as_deref().map_or("—", memcc::context::project_name);
                let title = s.meta.title.as_deref().unwrap_or("(untitled)");
                let agent = if all_agents { format!(" [{}]", s.agent_id) } else { String::new() };
                // A transcript's words reach the terminal: escapes shown, never run.
                format!(
                    "{when}  {source:<11} {:<16} {:>5} msgs  {}  ({}){agent}",
                    printable(project),
                    s.messages,
                    printable(title),
                    printable(&s.session_id)
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    Ok(())
}

/// `memcc stats`: what the store holds, and where it and the model are.
fn stats(cli: &Globals, engine: &memcc::context::ContextEngine, session: Option<&str>, all_agents: bool) -> Result<()> {
    let st = match (session, all_agents) {
        (Some(s), _) => engine.stats(Some(SessionRef::new(s)))?,
        (None, true) => engine.stats(None)?,
        (None, false) => engine.agent_stats(None)?,
    };
    // Where the store and the model are: the data dir follows MEMCC_HOME, then the
    // OpenClaw state dir, so "which store is this?" deserves an answer here.
    let settings = cli.settings()?;
    let model = settings.model_dir();
    let model_state = if settings.local_model_present() {
        "present"
    } else if !settings.wants_local_model() {
        "missing, and not used: another embedding model is configured"
    } else {
        "missing: recall runs on the hashing fallback, which matches shared words only; `memcc model fetch` \
         installs it"
    };
    emit(cli, &st, || {
        format!(
            "data in {}; local model in {} ({model_state})\n{} conversations, {} messages ({} tokens), {} summaries ({} leaf, {} condensed, max depth {}), \
             {} context items ({} tokens), {} large files, {} summaries waiting for memory{}",
            settings.data_dir().display(),
            model.display(),
            st.conversations,
            st.messages,
            st.message_tokens,
            st.summaries,
            st.leaf_summaries,
            st.condensed_summaries,
            st.max_depth,
            st.context_items,
            st.context_tokens,
            st.large_files,
            st.pending_memory_handoffs,
            if st.parked_memory_handoffs > 0 {
                format!(
                    " ({} parked after failing {} times; the next run that finds memory answering retries \
                     them, and their messages stay here meanwhile)",
                    st.parked_memory_handoffs,
                    memcc::context::PARK_AFTER_ATTEMPTS
                )
            } else {
                String::new()
            },
        ) + &match (st.transcripts_waiting, st.transcripts_failing) {
            (0, _) => String::new(),
            (n, 0) => format!("; {n} transcripts waiting for import (a hook's worker takes them)"),
            (n, f) => {
                format!("; {n} transcripts waiting for import, {f} failing (`memcc setup --check` says why)")
            }
        }
    })?;
    Ok(())
}
