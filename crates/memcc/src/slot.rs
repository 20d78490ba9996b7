//! [`MemorySlot`]: the memory runtime, either open already or opening on a thread of its own.
//!
//! Opening memory loads the embedding model and every vector of the index, which takes from a
//! fraction of a second to seconds. A host opens MemCC on its event loop, so `Memcc::open_background`
//! hands that work to a thread: ingesting and committing turns never wait for it, and whatever
//! needs memory (a compaction's hand-off, recall, `memory_search`) waits on its own worker thread.
//!
//! A store that cannot be reached (a PostgreSQL server that is down when the host starts) is not
//! a verdict for the life of the process: the thread keeps trying, backing off from 1 s to 5
//! minutes, while callers get `memory_unavailable` at once (summaries wait in the outbox) — and
//! memory is back as soon as the store is. Other failures (bad settings, a newer schema) stay.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use memcc_core::bridge::{BridgeError, MemoryBridge, RecallQuery, RecallSection, SummaryPayload};
use memcc_memory::{MemoryError, MemoryRuntime};

use crate::MemccError;

/// The first wait before opening again after the store could not be reached, and the longest.
const RETRY_FIRST: Duration = Duration::from_secs(1);
const RETRY_MAX: Duration = Duration::from_secs(300);

enum Status {
    /// The first attempt is running: callers wait for it.
    Opening,
    /// The runtime is in `MemorySlot::runtime`.
    Open,
    /// Not open; `retrying` when another attempt will follow.
    Failed { error: String, retrying: bool },
}

pub struct MemorySlot {
    runtime: OnceLock<Arc<MemoryRuntime>>,
    status: Mutex<Status>,
    settled: Condvar,
}

/// Whether opening may succeed later by itself: the store was unreachable.
fn worth_retrying(e: &MemccError) -> bool {
    matches!(e, MemccError::Memory(MemoryError::Unavailable(_)))
}

impl MemorySlot {
    pub fn ready(runtime: Arc<MemoryRuntime>) -> Arc<Self> {
        Arc::new(MemorySlot {
            runtime: OnceLock::from(runtime),
            status: Mutex::new(Status::Open),
            settled: Condvar::new(),
        })
    }

    /// Memory that could not be opened (`error`): every caller gets `memory_unavailable`, and
    /// what compaction hands to memory waits in the outbox for a later process.
    pub fn unavailable(error: String) -> Arc<Self> {
        Arc::new(MemorySlot {
            runtime: OnceLock::new(),
            status: Mutex::new(Status::Failed { error, retrying: false }),
            settled: Condvar::new(),
        })
    }

    /// Runs `open` on a new thread (again, with back-off, while the store is unreachable);
    /// [`MemorySlot::get`] waits for the first attempt.
    pub fn opening(open: impl Fn() -> Result<MemoryRuntime, MemccError> + Send + 'static) -> Arc<Self> {
        let slot = Arc::new(MemorySlot {
            runtime: OnceLock::new(),
            status: Mutex::new(Status::Opening),
            settled: Condvar::new(),
        });
        let filled = slot.clone();
        let spawned = std::thread::Builder::new().name("memcc-memory-open".into()).spawn(move || {
            let mut wait = RETRY_FIRST;
            loop {
                let (error, retrying) = match catch_unwind(AssertUnwindSafe(&open)) {
                    Ok(Ok(runtime)) => {
                        let _ = filled.runtime.set(Arc::new(runtime));
                        filled.settle(Status::Open);
                        return;
                    }
                    Ok(Err(e)) => {
                        let retrying = worth_retrying(&e);
                        (e.to_string(), retrying)
                    }
                    Err(_) => ("internal error (panic) while opening memory".to_string(), false),
                };
                if retrying {
                    tracing::warn!("long-term memory could not be opened: {error}; trying again in {wait:?}");
                } else {
                    tracing::error!("long-term memory could not be opened: {error}");
                }
                filled.settle(Status::Failed { error, retrying });
                if !retrying {
                    return;
                }
                std::thread::sleep(wait);
                wait = (wait * 2).min(RETRY_MAX);
            }
        });
        if let Err(e) = spawned {
            slot.settle(Status::Failed {
                error: format!("cannot start a thread to open memory: {e}"),
                retrying: false,
            });
        }
        slot
    }

    fn settle(&self, status: Status) {
        *self.status.lock().unwrap_or_else(|p| p.into_inner()) = status;
        self.settled.notify_all();
    }

    /// The runtime, waiting for the first attempt to open it if that is still running.
    pub fn get(&self) -> Result<&Arc<MemoryRuntime>, MemccError> {
        if let Some(runtime) = self.runtime.get() {
            return Ok(runtime);
        }
        let mut status = self.status.lock().unwrap_or_else(|p| p.into_inner());
        while matches!(*status, Status::Opening) && self.runtime.get().is_none() {
            status = self.settled.wait(status).unwrap_or_else(|p| p.into_inner());
        }
        if let Some(runtime) = self.runtime.get() {
            return Ok(runtime);
        }
        let error = match &*status {
            Status::Failed { error, retrying: true } => format!("{error} (retrying in the background)"),
            Status::Failed { error, retrying: false } => error.clone(),
            Status::Opening | Status::Open => "still opening".into(),
        };
        Err(MemccError::MemoryUnavailable(format!("long-term memory is unavailable: {error}")))
    }

    /// The runtime if it is open by now, without waiting.
    pub fn try_get(&self) -> Option<&Arc<MemoryRuntime>> {
        self.runtime.get()
    }
}

impl MemoryBridge for MemorySlot {
    fn ingest_summary(&self, summary: &SummaryPayload) -> Result<(), BridgeError> {
        MemoryBridge::ingest_summary(&**self.get().map_err(|e| BridgeError::Unavailable(e.to_string()))?, summary)
    }

    fn retrieve(&self, query: &RecallQuery, budget: usize) -> Result<Vec<RecallSection>, BridgeError> {
        MemoryBridge::retrieve(&**self.get().map_err(|e| BridgeError::Unavailable(e.to_string()))?, query, budget)
    }

    /// Not waited for: a compaction does not wait on memory opening to ask (what a summary then
    /// says is still checked where memory stores it).
    fn forgotten(&self, agent: &str, session_id: &str) -> Result<std::collections::HashSet<String>, BridgeError> {
        let runtime = self.try_get().ok_or_else(|| BridgeError::Unavailable("memory is still opening".into()))?;
        MemoryBridge::forgotten(&**runtime, agent, session_id)
    }
}
