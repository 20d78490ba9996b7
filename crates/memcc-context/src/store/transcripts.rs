//! Transcripts waiting to be imported: a host's hook (Claude Code's `Stop`, `SessionEnd`,
//! `PreCompact`; Codex's `Stop`) names a transcript and must return within the host's time
//! limit, so it only queues the work here; whoever drains the queue imports and flushes. One row
//! per session: a later hook of the same session renews the row (the import reads the whole
//! file again, idempotently), so a worker that falls behind does the work once. A row stays
//! until its work is done, so a kill or a crash leaves it to be taken again. Beside the queue,
//! the files imported whole and as they were then, which a backfill passes over.

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use super::{ContextStore, Result};
use memcc_core::time::now_ms;

/// A claim older than this is taken to be a worker's that died (an import and flush of the
/// longest session takes well under it).
pub const CLAIM_EXPIRES_MS: i64 = 10 * 60_000;
/// After this many failures a job waits for `memcc stats` to be read, not for the next drain.
pub const PARK_TRANSCRIPT_AFTER: i64 = 8;

/// A transcript waiting to be imported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptJob {
    pub agent_id: String,
    pub session_id: String,
    pub path: String,
    /// The project the hook's working directory belongs to.
    pub project: Option<String>,
    /// Flush after importing (the session ended, or its host is about to compact).
    pub flush: bool,
    pub attempts: i64,
    pub last_error: Option<String>,
    /// When the hook queued it (the newest hook of the session), ms since the epoch.
    pub enqueued_at: i64,
}

impl ContextStore {
    /// Queue (or renew) the import of `path` into `agent`'s `session`; `flush` is kept once
    /// asked, until the job is done.
    pub fn queue_transcript(
        &self,
        agent: &str,
        session: &str,
        path: &str,
        project: Option<&str>,
        flush: bool,
    ) -> Result<()> {
        let now = now_ms();
        self.write(|tx| {
            tx.execute(
                "INSERT INTO transcript_queue (agent_id, session_id, path, project, flush, enqueued_at, next_attempt_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)
                 ON CONFLICT (agent_id, session_id) DO UPDATE SET
                     path = excluded.path, project = COALESCE(excluded.project, project),
                     flush = MAX(flush, excluded.flush), enqueued_at = excluded.enqueued_at,
                     next_attempt_at = MIN(next_attempt_at, excluded.next_attempt_at), attempts = 0",
                params![agent, session, path, project, flush, now],
            )?;
            Ok(())
        })
    }

    /// Claim, for process `owner`, the oldest job that is due and not being worked on (or whose
    /// claim expired), if any. The claim stays with the row: [`Self::finish_transcript`]
    /// settles it, [`Self::release_claims`] frees the claims of a worker that died.
    pub fn claim_transcript(&self, owner: u32) -> Result<Option<(TranscriptJob, i64)>> {
        let now = now_ms();
        self.write(|tx| {
            let job = tx
                .query_row(
                    "SELECT agent_id, session_id, path, project, flush, attempts, last_error, enqueued_at
                     FROM transcript_queue
                     WHERE next_attempt_at <= ?1 AND attempts < ?2 AND (claimed_at IS NULL OR claimed_at < ?3)
                     ORDER BY next_attempt_at, enqueued_at LIMIT 1",
                    params![now, PARK_TRANSCRIPT_AFTER, now - CLAIM_EXPIRES_MS],
                    job_from_row,
                )
                .optional()?;
            let Some(job) = job else { return Ok(None) };
            tx.execute(
                "UPDATE transcript_queue SET claimed_at = ?3, claimed_by = ?4 WHERE agent_id = ?1 AND session_id = ?2",
                params![job.agent_id, job.session_id, now, owner],
            )?;
            Ok(Some((job, now)))
        })
    }

    /// Settle a claimed job: done (`error` is `None`) removes it unless a hook renewed it since
    /// the claim (then it waits to run again); a failure counts an attempt and waits a while
    /// longer each time.
    pub fn finish_transcript(&self, job: &TranscriptJob, claimed_at: i64, error: Option<&str>) -> Result<()> {
        let now = now_ms();
        self.write(|tx| {
            match error {
                None => {
                    tx.execute(
                        "DELETE FROM transcript_queue
                         WHERE agent_id = ?1 AND session_id = ?2 AND enqueued_at <= ?3",
                        params![job.agent_id, job.session_id, job.enqueued_at],
                    )?;
                    // Renewed while it ran: free for the next drain.
                    tx.execute(
                        "UPDATE transcript_queue SET claimed_at = NULL WHERE agent_id = ?1 AND session_id = ?2",
                        params![job.agent_id, job.session_id],
                    )?;
                }
                Some(e) => {
                    let attempts = job.attempts + 1;
                    let wait = 30_000_i64.saturating_mul(1 << attempts.clamp(0, 10));
                    tx.execute(
                        "UPDATE transcript_queue SET claimed_at = NULL, attempts = ?3, last_error = ?4,
                                next_attempt_at = ?5
                         WHERE agent_id = ?1 AND session_id = ?2 AND claimed_at = ?6",
                        params![job.agent_id, job.session_id, attempts, e, now + wait, claimed_at],
                    )?;
                }
            }
            Ok(())
        })
    }

    /// Free the claims of the workers `gone` says are gone (killed mid-import: their jobs are
    /// taken again at once, not when the claim expires); how many.
    pub fn release_claims(&self, gone: &dyn Fn(u32) -> bool) -> Result<usize> {
        self.write(|tx| {
            let owners: Vec<u32> = {
                let mut stmt = tx.prepare(
                    "SELECT DISTINCT claimed_by FROM transcript_queue WHERE claimed_at IS NOT NULL AND claimed_by IS NOT NULL",
                )?;
                let rows = stmt.query_map([], |r| r.get(0))?;
                rows.collect::<std::result::Result<_, _>>()?
            };
            let mut freed = 0;
            for owner in owners.into_iter().filter(|o| gone(*o)) {
                freed += tx.execute(
                    "UPDATE transcript_queue SET claimed_at = NULL, claimed_by = NULL WHERE claimed_by = ?1",
                    [owner],
                )?;
            }
            Ok(freed)
        })
    }

    /// Every job waiting, due or not, parked or not: what `stats` and a hook check report.
    pub fn transcript_jobs(&self) -> Result<Vec<TranscriptJob>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT agent_id, session_id, path, project, flush, attempts, last_error, enqueued_at
             FROM transcript_queue ORDER BY enqueued_at",
        )?;
        let rows = stmt.query_map([], job_from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// The session `agent` imported the file at `path` into, when it was imported whole as it
    /// is now (the same size and modification time); `None` when it is new or changed.
    pub fn imported_file_session(
        &self,
        agent: &str,
        path: &str,
        size: i64,
        modified_at: i64,
    ) -> Result<Option<String>> {
        let conn = self.conn();
        Ok(conn
            .query_row(
                "SELECT session_id FROM imported_files WHERE agent_id = ?1 AND path = ?2 AND size = ?3 AND modified_at = ?4",
                params![agent, path, size, modified_at],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Note that `agent` imported the file at `path` whole, as it was, into `session`.
    pub fn note_file_imported(
        &self,
        agent: &str,
        path: &str,
        size: i64,
        modified_at: i64,
        session: &str,
    ) -> Result<()> {
        self.write(|tx| {
            tx.execute(
                "INSERT INTO imported_files (agent_id, path, size, modified_at, session_id, imported_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (agent_id, path) DO UPDATE SET size = excluded.size, modified_at = excluded.modified_at,
                     session_id = excluded.session_id, imported_at = excluded.imported_at",
                params![agent, path, size, modified_at, session, now_ms()],
            )?;
            Ok(())
        })
    }

    /// Whether a job is due now (what a worker would take).
    pub fn transcript_due(&self) -> Result<bool> {
        let now = now_ms();
        let conn = self.conn();
        Ok(conn
            .query_row(
                "SELECT 1 FROM transcript_queue
                 WHERE next_attempt_at <= ?1 AND attempts < ?2 AND (claimed_at IS NULL OR claimed_at < ?3) LIMIT 1",
                params![now, PARK_TRANSCRIPT_AFTER, now - CLAIM_EXPIRES_MS],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }
}

fn job_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<TranscriptJob> {
    Ok(TranscriptJob {
        agent_id: r.get(0)?,
        session_id: r.get(1)?,
        path: r.get(2)?,
        project: r.get(3)?,
        flush: r.get(4)?,
        attempts: r.get(5)?,
        last_error: r.get(6)?,
        enqueued_at: r.get(7)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_is_queued_once_per_session_claimed_once_and_gone_when_done() {
        let store = ContextStore::open_in_memory().unwrap();
        store.queue_transcript("claude", "s1", "/t/s1.jsonl", Some("/repo"), false).unwrap();
        store.queue_transcript("claude", "s1", "/t/s1.jsonl", None, true).unwrap();
        store.queue_transcript("codex", "s1", "/t/other.jsonl", None, false).unwrap();
        let jobs = store.transcript_jobs().unwrap();
        assert_eq!(jobs.len(), 2, "one per agent and session: {jobs:?}");
        let first = jobs.iter().find(|j| j.agent_id == "claude").unwrap();
        assert!(first.flush, "a flush once asked is kept");
        assert_eq!(first.project.as_deref(), Some("/repo"), "a renewal without a project keeps it");

        let (a, at_a) = store.claim_transcript(7).unwrap().unwrap();
        let (b, at_b) = store.claim_transcript(7).unwrap().unwrap();
        assert_ne!((&a.agent_id, &a.session_id), (&b.agent_id, &b.session_id), "a claimed job is not taken twice");
        assert!(store.claim_transcript(7).unwrap().is_none());
        store.finish_transcript(&a, at_a, None).unwrap();
        store.finish_transcript(&b, at_b, Some("disk full")).unwrap();
        let left = store.transcript_jobs().unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!((left[0].attempts, left[0].last_error.as_deref()), (1, Some("disk full")));
        assert!(!store.transcript_due().unwrap(), "a failed job waits before it is tried again");
    }

    #[test]
    fn the_claims_of_a_worker_that_died_are_freed_and_only_those() {
        let store = ContextStore::open_in_memory().unwrap();
        store.queue_transcript("a", "s1", "/t1.jsonl", None, true).unwrap();
        store.queue_transcript("a", "s2", "/t2.jsonl", None, true).unwrap();
        let (killed, _) = store.claim_transcript(100).unwrap().unwrap();
        let (_, _) = store.claim_transcript(200).unwrap().unwrap();
        assert!(store.claim_transcript(300).unwrap().is_none());
        assert_eq!(store.release_claims(&|pid| pid == 100).unwrap(), 1);
        let (again, _) = store.claim_transcript(300).unwrap().unwrap();
        assert_eq!(again.session_id, killed.session_id, "the dead worker's job is taken again at once");
    }

    #[test]
    fn a_job_renewed_while_it_ran_stays_to_run_again() {
        let store = ContextStore::open_in_memory().unwrap();
        store.queue_transcript("a", "s", "/t.jsonl", None, false).unwrap();
        let (job, at) = store.claim_transcript(7).unwrap().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(3));
        store.queue_transcript("a", "s", "/t.jsonl", None, true).unwrap();
        store.finish_transcript(&job, at, None).unwrap();
        let left = store.transcript_jobs().unwrap();
        assert_eq!(left.len(), 1, "the hook after the claim still has work to do");
        assert!(store.transcript_due().unwrap());
    }
}
