//! [`MemorySlot`]: the memory runtime, either open already or opening on a thread of its own.
//!
//! Opening memory loads the embedding model and every vector of the index, which takes from a
//! fraction of a second to seconds. A host opens MemCC on its event loop, so `Memcc::open_background`
//! hands that work to a thread: ingesting and committing turns never wait for it, and whatever
//! needs memory (a compaction's hand-off, recall, `memory_search`) waits on its own worker thread.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, OnceLock};

use memcc_core::bridge::{BridgeError, MemoryBridge, RecallQuery, RecallSection, SummaryPayload};
use memcc_memory::MemoryRuntime;

use crate::MemccError;

pub struct MemorySlot {
    cell: OnceLock<Result<Arc<MemoryRuntime>, String>>,
}

impl MemorySlot {
    pub fn ready(runtime: Arc<MemoryRuntime>) -> Arc<Self> {
        Arc::new(MemorySlot { cell: OnceLock::from(Ok(runtime)) })
    }

    /// Runs `open` on a new thread; [`MemorySlot::get`] waits for it.
    pub fn opening(open: impl FnOnce() -> Result<MemoryRuntime, MemccError> + Send + 'static) -> Arc<Self> {
        let slot = Arc::new(MemorySlot { cell: OnceLock::new() });
        let filled = slot.clone();
        let spawned = std::thread::Builder::new().name("memcc-memory-open".into()).spawn(move || {
            let opened = match catch_unwind(AssertUnwindSafe(open)) {
                Ok(Ok(runtime)) => Ok(Arc::new(runtime)),
                Ok(Err(e)) => Err(e.to_string()),
                Err(_) => Err("internal error (panic) while opening memory".to_string()),
            };
            if let Err(e) = &opened {
                tracing::error!("long-term memory could not be opened: {e}");
            }
            let _ = filled.cell.set(opened);
        });
        if let Err(e) = spawned {
            let _ = slot.cell.set(Err(format!("cannot start a thread to open memory: {e}")));
        }
        slot
    }

    /// The runtime, waiting for it to open if it is still opening.
    pub fn get(&self) -> Result<&Arc<MemoryRuntime>, MemccError> {
        self.cell
            .wait()
            .as_ref()
            .map_err(|e| MemccError::MemoryUnavailable(format!("long-term memory is unavailable: {e}")))
    }

    /// The runtime if it is open by now, without waiting.
    pub fn try_get(&self) -> Option<&Arc<MemoryRuntime>> {
        self.cell.get().and_then(|r| r.as_ref().ok())
    }
}

impl MemoryBridge for MemorySlot {
    fn ingest_summary(&self, summary: &SummaryPayload) -> Result<(), BridgeError> {
        MemoryBridge::ingest_summary(&**self.get().map_err(|e| BridgeError::Unavailable(e.to_string()))?, summary)
    }

    fn retrieve(&self, query: &RecallQuery, budget: usize) -> Result<Vec<RecallSection>, BridgeError> {
        MemoryBridge::retrieve(&**self.get().map_err(|e| BridgeError::Unavailable(e.to_string()))?, query, budget)
    }
}
