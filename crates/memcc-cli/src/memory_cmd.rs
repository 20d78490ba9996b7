//! Long-term memory subcommands.

use std::io::{BufReader, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use indicatif::{ProgressBar, ProgressStyle};

use crate::globals::{Globals, emit};
use memcc::memory::Forget;
use memcc::memory::RecordKind;

#[derive(Subcommand)]
pub enum MemoryCommand {
    /// Remember a text.
    ///
    /// Example: `memcc memory add "I am allergic to peanuts" --pin`.
    Add {
        /// What to remember (at most 32,000 characters).
        text: String,
        /// Always recall it (layer L1).
        #[arg(long)]
        pin: bool,
        /// File it under this topic wing (default: the one its subject suggests).
        #[arg(long)]
        wing: Option<String>,
    },
    /// Correct a memory: the new text replaces it from now on; the old one stays as its history,
    /// marked superseded and pointing at the correction.
    ///
    /// Example: `memcc memory edit mem_12 "The staging database listens on port 6432."`.
    Edit {
        /// The memory to correct, e.g. mem_12.
        id: String,
        /// What it should say now, whole.
        text: String,
    },
    /// Pin a memory (recalled in every session of the project it was learnt in), or unpin it.
    ///
    /// Example: `memcc memory pin mem_12`, `memcc memory pin mem_12 --everywhere`.
    Pin {
        /// The memory, e.g. mem_12.
        id: String,
        /// Unpin it instead.
        #[arg(long, conflicts_with = "everywhere")]
        unpin: bool,
        /// Pin it in every project, not only the one it was learnt in.
        #[arg(long)]
        everywhere: bool,
    },
    /// Search memory (memory_search).
    ///
    /// Example: `memcc memory search "what am I allergic to" --max 5`.
    Search {
        /// What to look for, in any words.
        query: String,
        /// How many results at most.
        #[arg(long, default_value_t = 10)]
        max: usize,
        /// Leave out results scoring below this (0–1).
        #[arg(long, default_value_t = 0.0)]
        min_score: f64,
        /// Only this topic wing.
        #[arg(long)]
        wing: Option<String>,
    },
    /// Show one record with its provenance (memory_get).
    Get {
        /// A memory id, e.g. mem_12 (from `memory search`).
        id: String,
    },
    /// Forget a record and what was mined from the same words (soft: never read again, kept on
    /// disk and in exports, marked; --purge: deleted).
    Forget {
        /// The memory to forget, e.g. mem_12.
        id: String,
        /// Delete it for good (FTS, vectors, triples too) instead of hiding it.
        #[arg(long)]
        purge: bool,
    },
    /// Write the agent's records as JSON lines.
    Export {
        /// Write here (default: standard output).
        #[arg(long)]
        file: Option<PathBuf>,
        /// Every agent's records (an operator's backup of the whole store).
        #[arg(long)]
        all_agents: bool,
    },
    /// Read records from JSON lines (an export) into the agent (`--agent`), embedding them with a
    /// progress bar. The agent a line names is ignored unless `--keep-agents`.
    Import {
        /// A JSONL file from `memory export` (one record per line).
        file: PathBuf,
        /// Keep the agent each line names (an operator restoring an `--all-agents` backup).
        #[arg(long)]
        keep_agents: bool,
    },
    /// The agent's counts by kind, wing, model; pending embeddings.
    Stats {
        /// Count the whole store, every agent's.
        #[arg(long)]
        all_agents: bool,
    },
    /// Embed what is queued (after a failure or a model change), with a progress bar.
    Reembed,
    /// Check the memory store: memory.db with SQLite's integrity check, or the PostgreSQL schema ("ok", or what is wrong; fails then).
    Verify,
}

fn bar(label: &str) -> ProgressBar {
    let style = ProgressStyle::with_template("{msg} {bar:40} {pos}/{len} ({eta})")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    ProgressBar::new(0).with_style(style).with_message(label.to_string())
}

pub fn run(cli: &Globals, command: &MemoryCommand) -> Result<()> {
    let memcc = cli.open(true)?;
    let rt = memcc.memory()?;
    let agent = cli.agent.as_str();
    match command {
        MemoryCommand::Add { text, pin, wing } => {
            let kind = if *pin { RecordKind::Pinned } else { RecordKind::Fact };
            let ins = rt.add(agent, text, kind, *pin, wing.as_deref())?;
            emit(cli, &ins, || {
                if ins.duplicate {
                    format!("already remembered as mem_{}", ins.id)
                } else {
                    format!("remembered as mem_{}", ins.id)
                }
            })?;
        }
        MemoryCommand::Edit { id, text } => {
            let ins = rt.edit(agent, id, text)?;
            let value = serde_json::json!({"id": format!("mem_{}", ins.id), "supersedes": id});
            emit(cli, &value, || format!("corrected: mem_{} supersedes {id}, which stays as its history", ins.id))?;
        }
        MemoryCommand::Pin { id, unpin, everywhere } => {
            if !rt.pin_in(agent, id, !*unpin, *everywhere)? {
                bail!("no current memory {id} for agent {agent}");
            }
            let value = serde_json::json!({"id": id, "pinned": !*unpin, "everywhere": *everywhere});
            emit(cli, &value, || {
                format!(
                    "{id} {}",
                    match (*unpin, *everywhere) {
                        (true, _) => "unpinned",
                        (false, true) => "pinned: recalled in every session, in every project",
                        (false, false) => "pinned: recalled in every session of the project it was learnt in",
                    }
                )
            })?;
        }
        MemoryCommand::Search { query, max, min_score, wing } => {
            let hits = rt.memory_search(agent, query, *max, *min_score, wing.as_deref())?;
            emit(cli, &hits, || {
                if hits.is_empty() {
                    return "no memories match".into();
                }
                hits.iter()
                    .map(|h| {
                        let state = h.standing_note();
                        format!(
                            "{:>6.3} {} [{}/{} {}] {}{state}",
                            h.score,
                            h.id,
                            h.wing,
                            h.room,
                            h.kind.as_str(),
                            h.text.replace('\n', " / ")
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })?;
        }
        MemoryCommand::Get { id } => {
            let r = rt.memory_get(agent, id)?;
            emit(cli, &r, || {
                format!(
                    "{} [{}/{} {}] weight {} pinned {} current {}\nsummaries {:?} sessions {:?} messages {:?}\n{}",
                    r.ref_id(),
                    r.wing,
                    r.room,
                    r.kind.as_str(),
                    r.weight,
                    r.pinned,
                    r.is_current(),
                    r.source_summary_ids,
                    r.source_session_ids,
                    r.source_message_ids,
                    r.text
                )
            })?;
        }
        MemoryCommand::Forget { id, purge } => {
            let how = if *purge { Forget::Purge } else { Forget::Soft };
            let Some(done) = rt.forget_as(agent, id, how)? else {
                bail!("no current memory {id} for agent {agent}");
            };
            emit(cli, &done, || {
                format!(
                    "{} {id}{}; later summaries and imports that quote it will not bring it back. The conversation \
                     it came from keeps its own messages (lcm_grep finds them there); `memcc purge --session S` \
                     deletes a conversation",
                    if *purge { "purged" } else { "forgot" },
                    match (done.removed.len() - 1, done.rewritten.len()) {
                        (0, 0) => String::new(),
                        (r, w) => format!(
                            " ({r} records mined from the same messages went too, {w} overlapping ones lost those lines)"
                        ),
                    }
                )
            })?;
        }
        MemoryCommand::Export { file, all_agents } => {
            let scope = if *all_agents { None } else { Some(agent) };
            let n = match file {
                Some(f) => {
                    // What memory holds is the user's alone, in a file too.
                    let mut options = std::fs::OpenOptions::new();
                    options.write(true).create(true).truncate(true);
                    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
                    let mut out =
                        std::io::BufWriter::new(options.open(f).with_context(|| format!("creating {}", f.display()))?);
                    let n = rt.export_jsonl(scope, &mut out)?;
                    out.flush()?;
                    n
                }
                None => rt.export_jsonl(scope, &mut std::io::stdout().lock())?,
            };
            if file.is_some() {
                emit(cli, &serde_json::json!({"exported": n}), || format!("exported {n} records"))?;
            }
        }
        MemoryCommand::Import { file, keep_agents } => {
            let reader =
                BufReader::new(std::fs::File::open(file).with_context(|| format!("opening {}", file.display()))?);
            let pb = bar("embedding");
            let into = (!*keep_agents).then_some(agent);
            let report = rt.import_jsonl(reader, into, &mut |done, total| {
                pb.set_length(total as u64);
                pb.set_position(done as u64);
            })?;
            pb.finish_and_clear();
            emit(cli, &report, || {
                let mut s = format!(
                    "{} added, {} already present, {} forgotten skipped",
                    report.added, report.duplicates, report.skipped_forgotten
                );
                for (line, e) in &report.errors {
                    s.push_str(&format!("\n  line {line}: {e}"));
                }
                s
            })?;
            if !report.errors.is_empty() && report.added + report.duplicates + report.skipped_forgotten == 0 {
                bail!("no record of {} could be imported ({} bad lines)", file.display(), report.errors.len());
            }
        }
        MemoryCommand::Stats { all_agents } => {
            let st = if *all_agents { rt.stats()? } else { rt.agent_stats(&cli.agent)? };
            emit(cli, &st, || {
                format!(
                    "{} records ({} current) in {}, {} vectors {:?}, {} pending embeddings, {} triples\nkinds {:?}\nwings {:?}\nembedder {}",
                    st.records,
                    st.current,
                    st.backend,
                    st.vectors,
                    st.vector_models,
                    st.pending_embeddings,
                    st.triples,
                    st.by_kind,
                    st.by_wing,
                    rt.embedder_model()
                )
            })?;
        }
        MemoryCommand::Verify => {
            let store = rt.store();
            let integrity = store.integrity_check()?;
            let name = if store.backend() == "sqlite" { "memory.db" } else { "the PostgreSQL memory store" };
            emit(cli, &serde_json::json!({ "backend": store.backend(), "integrity": integrity }), || {
                format!("{name} integrity: {integrity}")
            })?;
            if integrity != "ok" {
                bail!("{name} is damaged; restore it from a backup or `memcc memory export` what still reads");
            }
        }
        MemoryCommand::Reembed => {
            let pb = bar("re-embedding");
            let done = rt.process_pending(usize::MAX, &mut |done, total| {
                pb.set_length(total as u64);
                pb.set_position(done as u64);
            })?;
            pb.finish_and_clear();
            emit(cli, &serde_json::json!({"embedded": done}), || format!("embedded {done} records"))?;
        }
    }
    Ok(())
}
