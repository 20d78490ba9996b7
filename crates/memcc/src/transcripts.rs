//! Transcripts on disk, as hosts write them: one file, a directory of them (a backfill of
//! `~/.claude/projects/` or `~/.codex/sessions/`), and the queue a host's hooks leave
//! ([`crate::hooks`]) for a worker to import outside the host's time limit.
//!
//! A file's session is the one its host names: Claude Code names a transcript after its session
//! (a fork's first lines carry its parent's id, so the file name decides), Codex in its
//! `session_meta`, OpenClaw in its header; a file with none is named by its file name. Claude
//! Code writes each subagent's conversation beside its session's
//! (`<session>/subagents/agent-<id>.jsonl`): it is read with the session, in its place.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::{Memcc, MemccError};
use memcc_context::import::{Format, ParsedTranscript, parse_jsonl, parse_subagent_jsonl};
use memcc_context::{ConversationMeta, ImportReport, SessionRef, TranscriptJob};

/// What importing one file did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase", tag = "outcome")]
pub enum FileImport {
    /// Read into `report.session_id`; `flushed`: what the flush that was asked for did.
    Imported { report: ImportReport, flushed: Option<memcc_context::CompactionOutcome> },
    /// Not read again: imported whole before, and unchanged since. `flushed`: the flush that was
    /// asked for, done again — a no-op for a session flushed before, the rest of the work for
    /// one an earlier import left unflushed (imported without a flush, or stopped midway).
    Unchanged { flushed: Option<memcc_context::CompactionOutcome> },
    /// Nothing MemCC reads in it (an empty session, another kind of file).
    Empty,
    /// It could not be read or stored; the rest of a directory goes on.
    Failed { error: String },
}

/// How a file is imported.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// Into this session (default: the one the transcript names).
    pub session: Option<String>,
    /// What the session is, over what the transcript says (a hook's project).
    pub meta: ConversationMeta,
    /// Flush the session afterwards, within this token budget (a session that has ended).
    pub flush: Option<crate::Budget>,
    /// Pass over a file imported whole before and unchanged since (a backfill).
    pub skip_unchanged: bool,
}

/// The most of a transcript's end read for a prompt's context: the last turns of a long
/// session, not the session.
const TAIL_BYTES: u64 = 512 * 1024;

/// Open the transcript at `path` if it is a regular file (a symlink to one included). A FIFO
/// would block whoever opens it until something writes to it — a host's path, the one import
/// worker for good — and a device (`/dev/zero`) never ends: refused, with the reason. (Looked at
/// before it is opened, as opening a FIFO waits for a writer; and again once open, in case it
/// was swapped meanwhile.) An import reads a file twice (its format, then its messages), which
/// no pipe allows either: write a pipe's output to a file first.
pub fn open_transcript(path: &Path) -> std::io::Result<std::fs::File> {
    let refused = |what: &str| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is {what}, not a transcript file: nothing was read (write it to a file first)", path.display()),
        )
    };
    let kind = std::fs::metadata(path)?.file_type();
    if kind.is_dir() {
        return Err(refused("a directory"));
    }
    if !kind.is_file() {
        #[cfg(unix)]
        let fifo = std::os::unix::fs::FileTypeExt::is_fifo(&kind);
        #[cfg(not(unix))]
        let fifo = false;
        return Err(refused(if fifo { "a FIFO" } else { "a device or socket" }));
    }
    let file = std::fs::File::open(path)?;
    if file.metadata()?.is_file() { Ok(file) } else { Err(refused("no longer a regular file")) }
}

/// The last `n` turns the user and the assistant said in the transcript at `path`, oldest first:
/// what a prompt's recall reads as its context ([`memcc_core::bridge::ContextTurn`]). Read from
/// its last [`TAIL_BYTES`], and only from a regular file (a FIFO or a device would block the
/// hook); anything unreadable gives no context, never an error: the prompt is still answered.
pub fn last_turns(path: &Path, n: usize) -> Vec<memcc_core::bridge::ContextTurn> {
    use memcc_core::bridge::{ContextTurn, Role};
    use std::io::{Read, Seek, SeekFrom};
    let read = || -> std::io::Result<Vec<u8>> {
        let mut file = open_transcript(path)?;
        let meta = file.metadata()?;
        let start = meta.len().saturating_sub(TAIL_BYTES);
        file.seek(SeekFrom::Start(start))?;
        let mut tail = Vec::new();
        file.take(TAIL_BYTES).read_to_end(&mut tail)?;
        // From inside a line: that line is cut, and goes.
        if start > 0 {
            let first = tail.iter().position(|b| *b == b'\n').map_or(tail.len(), |i| i + 1);
            tail.drain(..first);
        }
        Ok(tail)
    };
    let Ok(tail) = read() else { return Vec::new() };
    let Ok(parsed) = parse_jsonl(tail.as_slice()) else { return Vec::new() };
    let mut turns: Vec<ContextTurn> = parsed
        .messages
        .iter()
        .filter_map(|m| {
            let role = match m.role().as_str() {
                "user" => Role::User,
                "assistant" => Role::Assistant,
                _ => return None,
            };
            let text = m.text();
            (!text.trim().is_empty()).then(|| ContextTurn::new(role, text))
        })
        .collect();
    let from = turns.len().saturating_sub(n);
    turns.drain(..from);
    turns
}

impl Memcc {
    /// Import the transcript at `path` into `agent`'s memory, as `options` say.
    pub fn import_file(&self, agent: &str, path: &Path, options: &ImportOptions) -> Result<FileImport, MemccError> {
        let file = match open_transcript(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(FileImport::Empty),
            Err(e) => return Ok(FileImport::Failed { error: format!("opening {}: {e}", path.display()) }),
        };
        let (size, modified) = stamp(&file);
        let shown = path.to_string_lossy();
        if options.skip_unchanged
            && let Some(session_id) = self.context.store().imported_file_session(agent, &shown, size, modified)?
        {
            let session = SessionRef { agent_id: Some(agent.to_string()), ..SessionRef::new(&session_id) };
            let flushed = options.flush.map(|budget| self.flush(&session, budget)).transpose()?;
            return Ok(FileImport::Unchanged { flushed });
        }
        let mut parsed = match parse_jsonl(std::io::BufReader::new(file)) {
            Ok(p) => p,
            Err(e) => return Ok(FileImport::Failed { error: format!("reading {}: {e}", path.display()) }),
        };
        if parsed.format == Some(Format::ClaudeCode) {
            with_subagents(path, &mut parsed);
        }
        if parsed.messages.is_empty() {
            return Ok(FileImport::Empty);
        }
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).filter(|s| !s.is_empty());
        let named = match parsed.format {
            Some(Format::ClaudeCode) => stem.clone().or(parsed.header_session_id.clone()),
            _ => parsed.header_session_id.clone().or(stem),
        };
        let Some(session_id) = options.session.clone().or(named) else {
            return Ok(FileImport::Failed { error: format!("{}: no session id", path.display()) });
        };
        let session = SessionRef { agent_id: Some(agent.to_string()), ..SessionRef::new(&session_id) };
        let report = self.context.import_parsed_as(&session, &options.meta, parsed)?;
        let flushed = options.flush.map(|budget| self.flush(&session, budget)).transpose()?;
        self.context.store().note_file_imported(agent, &shown, size, modified, &report.session_id)?;
        Ok(FileImport::Imported { report, flushed })
    }

    /// Import every transcript under `dir` (its `*.jsonl` files, at any depth), one by one,
    /// passing over those unchanged since they were imported; `progress(done, total)` after
    /// each. A file that fails is reported and the rest go on.
    pub fn import_dir(
        &self,
        agent: &str,
        dir: &Path,
        flush: Option<crate::Budget>,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Vec<(PathBuf, FileImport)>, MemccError> {
        let (mut files, mut unreadable) = (Vec::new(), Vec::new());
        transcripts_under(dir, &mut files, &mut unreadable).map_err(|e| {
            MemccError::Context(memcc_context::ContextError::Input(format!("reading {}: {e}", dir.display())))
        })?;
        files.sort();
        let options = ImportOptions { flush, skip_unchanged: true, ..ImportOptions::default() };
        let mut out = Vec::with_capacity(files.len());
        let total = files.len();
        for (i, path) in files.into_iter().enumerate() {
            let done = self.import_file(agent, &path, &options)?;
            out.push((path, done));
            progress(i + 1, total);
        }
        // What could not be read is reported beside what was imported, not instead of it.
        out.extend(unreadable.into_iter().map(|(path, error)| (path, FileImport::Failed { error })));
        Ok(out)
    }

    /// Queue the import of a host's transcript into `agent`'s `session` (and a flush), for
    /// [`Memcc::drain_transcripts`]: a hook returns at once, and the work survives the hook.
    pub fn queue_transcript(
        &self,
        agent: &str,
        session: &str,
        path: &Path,
        project: Option<&str>,
        flush: bool,
    ) -> Result<(), MemccError> {
        let path = path.to_string_lossy();
        Ok(self.context.store().queue_transcript(agent, session, &path, project, flush)?)
    }

    /// Import (and flush) every queued transcript that is due, one by one, until none is:
    /// what a hook's worker does. A missing or empty transcript is done with (an empty session
    /// is not an error); a failure is kept with its job, tried again later.
    pub fn drain_transcripts(&self) -> Result<DrainReport, MemccError> {
        let mut report = DrainReport::default();
        while let Some((job, claimed_at)) = self.context.store().claim_transcript(std::process::id())? {
            let error = match self.import_queued(&job) {
                Ok(added) => {
                    report.imported += 1;
                    report.messages += added;
                    None
                }
                Err(e) => {
                    report.failed += 1;
                    tracing::warn!(session = %job.session_id, error = %e, "a queued transcript failed to import");
                    Some(e.to_string())
                }
            };
            self.context.store().finish_transcript(&job, claimed_at, error.as_deref())?;
        }
        Ok(report)
    }

    /// One queued import: the transcript read whole (idempotently) into the hook's session, its
    /// project as the hook saw it, then flushed when asked; the messages it added.
    fn import_queued(&self, job: &TranscriptJob) -> Result<usize, MemccError> {
        let options = ImportOptions {
            session: Some(job.session_id.clone()),
            meta: ConversationMeta { project: job.project.clone(), ..ConversationMeta::default() },
            flush: job.flush.then(|| self.budget(None)),
            skip_unchanged: false,
        };
        match self.import_file(&job.agent_id, Path::new(&job.path), &options)? {
            FileImport::Imported { report, .. } => Ok(report.added),
            FileImport::Unchanged { .. } | FileImport::Empty => Ok(0),
            FileImport::Failed { error } => Err(MemccError::Config(error)),
        }
    }
}

/// What a drain did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DrainReport {
    pub imported: usize,
    pub messages: usize,
    pub failed: usize,
}

/// A file's size and modification time (ms), which tell whether it changed since an import.
fn stamp(file: &std::fs::File) -> (i64, i64) {
    let meta = file.metadata().ok();
    let size = meta.as_ref().map_or(0, |m| i64::try_from(m.len()).unwrap_or(i64::MAX));
    let modified = meta
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    (size, modified)
}

/// Where Claude Code keeps a session's subagents: `<dir>/<session>/subagents/`.
const SUBAGENTS_DIR: &str = "subagents";

/// Merge into a Claude Code session's transcript (at `path`) the conversations of its subagents,
/// each named by its kind (`agent-<id>.meta.json`'s `agentType`: "Explore subagent"). A subagent
/// that cannot be read is noted among the transcript's errors; the session is read without it.
fn with_subagents(path: &Path, parsed: &mut ParsedTranscript) {
    let (Some(dir), Some(stem)) = (path.parent(), path.file_stem()) else { return };
    let mut files = Vec::new();
    if transcripts_under(&dir.join(stem).join(SUBAGENTS_DIR), &mut files, &mut Vec::new()).is_err() {
        return; // no subagents (the usual case)
    }
    files.sort();
    for file in files {
        let kind = open_transcript(&file.with_extension("meta.json"))
            .and_then(std::io::read_to_string)
            .ok()
            .and_then(|meta| serde_json::from_str::<serde_json::Value>(&meta).ok())
            .and_then(|meta| meta.get("agentType").and_then(serde_json::Value::as_str).map(str::to_owned))
            .filter(|kind| !kind.trim().is_empty());
        let name = kind.map_or_else(|| "subagent".to_string(), |kind| format!("{kind} subagent"));
        let read = open_transcript(&file).and_then(|f| parse_subagent_jsonl(std::io::BufReader::new(f), &name));
        match read {
            Ok(subagent) => parsed.merge_subagent(subagent),
            Err(e) => parsed
                .errors
                .push(memcc_context::import::LineError { line: 0, error: format!("subagent {}: {e}", file.display()) }),
        }
    }
}

/// The `*.jsonl` files under `dir`, at any depth, but for subagents (read with their session);
/// links are not followed (a loop of them would never end). A directory below `dir` that cannot
/// be read is put in `unreadable` with why, and the rest is still found; `dir` itself that
/// cannot be read is the error.
fn transcripts_under(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    unreadable: &mut Vec<(PathBuf, String)>,
) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let Ok(entry) = entry else { continue };
        let (Ok(kind), path) = (entry.file_type(), entry.path()) else { continue };
        if kind.is_dir() && entry.file_name() == SUBAGENTS_DIR {
            continue;
        } else if kind.is_dir() {
            if let Err(e) = transcripts_under(&path, out, unreadable) {
                unreadable.push((path, format!("reading the directory: {e}")));
            }
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use memcc_core::bridge::Role;

    fn line(role: &str, text: &str) -> String {
        let content =
            if role == "user" { serde_json::json!(text) } else { serde_json::json!([{"type": "text", "text": text}]) };
        serde_json::json!({"type": role, "sessionId": "s", "timestamp": "2026-12-05T10:00:00Z",
                           "message": {"role": role, "content": content}})
        .to_string()
    }

    #[test]
    fn the_last_turns_of_a_transcript_are_read_from_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        // Long enough that only its end is read: the first turns are past the tail.
        let mut text = String::new();
        for i in 0..400 {
            text.push_str(&line("user", &format!("question {i} {}", "x".repeat(1500))));
            text.push('\n');
        }
        text.push_str(&line("user", "How do we deploy the API?"));
        text.push('\n');
        text.push_str(&line("assistant", "With the blue-green script in ops/."));
        text.push('\n');
        std::fs::write(&path, text).unwrap();
        let turns = last_turns(&path, 2);
        assert_eq!(turns.len(), 2);
        assert_eq!((turns[0].role.clone(), turns[0].text.as_str()), (Role::User, "How do we deploy the API?"));
        assert_eq!(turns[1].role, Role::Assistant);
        assert!(turns[1].text.contains("blue-green"), "{turns:?}");
    }

    #[test]
    fn a_directory_that_cannot_be_read_is_reported_and_the_rest_found() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.jsonl"), "{}\n").unwrap();
        // A chain of directories deeper than a path may name (PATH_MAX): made by a shell that
        // walks into each, it cannot be read by its full path — even by root, whom permission
        // bits do not stop.
        let made = std::process::Command::new("bash")
            .arg("-c")
            .arg("set -P; cd \"$1\" && for i in $(seq 30); do d=$(printf '%0200d' $i); mkdir \"$d\" && cd \"$d\" || exit 1; done; echo '{}' > deep.jsonl")
            .arg("sh")
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(made.success());
        let (mut found, mut unreadable) = (Vec::new(), Vec::new());
        transcripts_under(dir.path(), &mut found, &mut unreadable).unwrap();
        assert_eq!(found, [dir.path().join("a.jsonl")]);
        assert_eq!(unreadable.len(), 1, "{unreadable:?}");
        assert!(unreadable[0].1.contains("reading the directory"), "{unreadable:?}");
        assert!(transcripts_under(&dir.path().join("missing"), &mut found, &mut unreadable).is_err(), "the top one");
    }

    #[test]
    fn what_is_not_a_readable_file_gives_no_turns() {
        let dir = tempfile::tempdir().unwrap();
        assert!(last_turns(&dir.path().join("missing.jsonl"), 4).is_empty());
        assert!(last_turns(dir.path(), 4).is_empty(), "a directory");
        std::fs::write(dir.path().join("junk.jsonl"), [0xff_u8, 0xfe, b'\n', b'{']).unwrap();
        assert!(last_turns(&dir.path().join("junk.jsonl"), 4).is_empty());
        #[cfg(unix)]
        {
            // A FIFO would block whoever opens it until a writer comes: it is not opened.
            let fifo = dir.path().join("fifo.jsonl");
            let made = std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success());
            if made {
                assert!(last_turns(&fifo, 4).is_empty());
                // Nor by an import.
                let refused = open_transcript(&fifo).unwrap_err();
                assert!(refused.to_string().contains("is a FIFO, not a transcript file"), "{refused}");
            }
            let device = open_transcript(Path::new("/dev/zero")).unwrap_err();
            assert!(device.to_string().contains("a device or socket"), "{device}");
            assert!(open_transcript(dir.path()).unwrap_err().to_string().contains("a directory"));
            assert!(open_transcript(&dir.path().join("junk.jsonl")).is_ok(), "a regular file is read");
        }
    }
}
