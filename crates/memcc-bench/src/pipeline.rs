//! MemCC as the benchmarks drive it: opened in a temporary directory with the user's settings,
//! and fed a haystack the way a host would (turn by turn, compacting as it goes).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use crate::haystack::{HQuestion, HTurn, Haystack};
use crate::{BenchError, Options};
use memcc::lab::context::SessionRef;
use memcc::lab::context::message::{AgentMessage, ContentPart};
use memcc::lab::memory::embed::Embedder;
use memcc::{Memcc, MemccConfig};

/// Message id → (session unit, turn unit): how hits are traced back to the dataset.
pub type Provenance = HashMap<i64, (String, String)>;

/// Open MemCC in `dir` with `settings` (the data directory overridden), reusing `embedder`.
pub fn open_with(settings: &MemccConfig, dir: &Path, embedder: &Arc<dyn Embedder>) -> Result<Memcc, BenchError> {
    let config = MemccConfig { data_dir: Some(dir.to_path_buf()), context_db: None, ..settings.clone() };
    Ok(Memcc::open_with(config, None, Some(embedder.clone()))?)
}

/// Give `memcc` the session ranker's models fit without haystack `h` when the options carry them.
pub fn held_out(options: &crate::Options, memcc: &Memcc, h: &Haystack) -> Result<(), BenchError> {
    if let Some(models) = options.ranker_folds.get(&h.id) {
        memcc.memory()?.set_ranking_models(Some(models.clone()));
    }
    Ok(())
}

/// Open MemCC for one haystack with the options' settings; `rerank` turns the LLM rerank on.
pub fn open(options: &Options, dir: &Path, embedder: &Arc<dyn Embedder>, rerank: bool) -> Result<Memcc, BenchError> {
    let settings = MemccConfig {
        llm_rerank: Some(rerank || options.settings.memory_config().llm_rerank),
        ..options.settings.clone()
    };
    open_with(&settings, dir, embedder)
}

/// A dataset turn as the host message it stands for: the dataset's first speaker is the user;
/// a named speaker is named in the text (as group chats do) and in the message's `name`.
pub fn message(turn: &HTurn, timestamp: i64) -> AgentMessage {
    let text = turn.display_text();
    let msg = if turn.role == "user" {
        AgentMessage::user(&text)
    } else {
        AgentMessage::assistant(vec![ContentPart::text(text)])
    };
    let msg = msg.with_timestamp(timestamp);
    match &turn.speaker {
        Some(name) => msg.with_speaker(name),
        None => msg,
    }
}

/// When the k-th turn of a session happened (sessions carry one date; turns are 30 s apart).
pub fn turn_time(session_time: Option<i64>, k: usize) -> i64 {
    session_time.unwrap_or(0) + k as i64 * 30_000
}

/// Refuse to pour haystack `h` into a memory that already holds records: its questions would
/// find another haystack's records. A temporary directory is always empty; a PostgreSQL backend
/// is one database that every run and haystack shares unless each is given its own.
pub fn ensure_empty(memcc: &Memcc, h: &Haystack) -> Result<(), BenchError> {
    let records = memcc.memory()?.stats()?.records;
    if records > 0 {
        return Err(BenchError::Input(format!(
            "memory already holds {records} records before {} is replayed: a benchmark needs an empty store per \
             conversation, and a PostgreSQL backend (memory.backend \"postgres\") is one database every run \
             shares — give each run a fresh database and one conversation (a file of one, or --limit 1)",
            h.id
        )));
    }
    Ok(())
}

/// Called with each question when it is asked: before the turn it stands for is replayed (see
/// [`crate::haystack::AskedAt`]), or after the whole history.
/// It is handed the provenance of every message replayed so far.
pub type Ask<'a> = &'a mut dyn FnMut(&Memcc, &HQuestion, &Provenance) -> Result<(), BenchError>;

/// Replay a haystack session by session, as separate host sessions: compaction after every
/// turn, a flush at each session's end so everything reaches memory. `ask` gets each question
/// where it is asked.
pub fn replay(
    memcc: &Memcc,
    h: &Haystack,
    budget: usize,
    ids: &mut Provenance,
    ask: Ask<'_>,
) -> Result<(), BenchError> {
    ensure_empty(memcc, h)?;
    for (si, s) in h.sessions.iter().enumerate() {
        let session_id = session_id(h, si);
        let sref = SessionRef { project: s.project.clone(), ..SessionRef::new(&session_id) };
        for (k, t) in s.turns.iter().enumerate() {
            ask_at(memcc, h, si, k, ids, ask)?;
            for id in memcc.context.ingest(&sref, &message(t, turn_time(s.time, k)))?.inserted {
                ids.insert(id, (s.unit.clone(), t.unit.clone()));
            }
            memcc.context.compact(&session_id, budget, false)?;
        }
        if !s.turns.is_empty() {
            memcc.context.flush(&session_id, budget)?;
        }
    }
    ask_at(memcc, h, h.sessions.len(), 0, ids, ask)
}

/// The host session id session `si` of `h` is replayed as (new-session replay).
pub fn session_id(h: &Haystack, si: usize) -> String {
    format!("{}/{}", h.id, h.sessions.get(si).map_or("end", |s| s.unit.as_str()))
}

/// Ask the questions asked at turn `k` of session `si` (`si == sessions`: at the end).
fn ask_at(memcc: &Memcc, h: &Haystack, si: usize, k: usize, ids: &Provenance, ask: Ask<'_>) -> Result<(), BenchError> {
    let n = h.sessions.len();
    for q in h.questions.iter().filter(|q| q.session_asked(n) == si && q.asked_at.is_none_or(|a| a.turn == k)) {
        ask(memcc, q, ids)?;
    }
    Ok(())
}

/// Replay every session of a haystack into one long host session (`session_id`), compacting
/// after every turn and never flushing: the conversation a long-running agent would have.
/// `ask` gets each question where it is asked. Returns how long each turn took to append
/// (ingest, compaction when due, hand-off to memory), in seconds.
pub fn replay_as_one_session(
    memcc: &Memcc,
    h: &Haystack,
    session_id: &str,
    budget: usize,
    ids: &mut Provenance,
    ask: Ask<'_>,
) -> Result<Vec<f64>, BenchError> {
    ensure_empty(memcc, h)?;
    let sref = SessionRef::new(session_id);
    let mut appended = Vec::new();
    for (si, s) in h.sessions.iter().enumerate() {
        for (k, t) in s.turns.iter().enumerate() {
            ask_at(memcc, h, si, k, ids, ask)?;
            let started = std::time::Instant::now();
            for id in memcc.context.ingest(&sref, &message(t, turn_time(s.time, k)))?.inserted {
                ids.insert(id, (s.unit.clone(), t.unit.clone()));
            }
            memcc.context.compact(session_id, budget, false)?;
            appended.push(started.elapsed().as_secs_f64());
        }
    }
    ask_at(memcc, h, h.sessions.len(), 0, ids, ask)?;
    Ok(appended)
}
