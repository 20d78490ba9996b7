//! The compaction a `conversation_append` starts, out of the call's way. With sampling, every
//! summary is a request to the client's model — a 40-turn append once asked 107 of them one
//! after another and took minutes — so the call waits only [`APPEND_WAIT`] for its compaction
//! (telling the client's progress token how it goes) and returns; the compaction goes on on a
//! thread of its own and its summaries follow. One compaction per conversation at a time: an
//! append while one runs asks it to run once more when it is done, so nothing appended is left
//! uncompacted.

use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::{Peer, RoleServer};

use memcc::Memcc;
use memcc::context::{CompactionOutcome, SessionRef};

use crate::sampling;

/// How long `conversation_append` waits for its compaction before it returns without it.
pub(crate) const APPEND_WAIT: Duration = Duration::from_secs(5);

/// Conversations being compacted, each with whether an append asked for another round.
#[derive(Clone, Default)]
pub(crate) struct Compactions {
    running: Arc<Mutex<HashMap<(String, String), bool>>>,
}

/// What became of an append's compaction.
pub(crate) enum Started {
    /// It runs; its first round's outcome comes on the receiver.
    Running(Receiver<Result<CompactionOutcome, String>>),
    /// One was running already: it will run again for what was appended.
    Joined,
}

impl Compactions {
    /// Compact `session` within `budget` on a thread of its own, the summaries by `client`'s
    /// model when it offers sampling.
    pub(crate) fn start(
        &self,
        memcc: Arc<Memcc>,
        session: SessionRef,
        budget: memcc::Budget,
        client: Peer<RoleServer>,
    ) -> Started {
        let key = (session.agent_id.clone().unwrap_or_default(), session.session_id.clone());
        {
            let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(again) = running.get_mut(&key) {
                *again = true;
                return Started::Joined;
            }
            running.insert(key.clone(), false);
        }
        let (tx, rx) = mpsc::channel();
        let running = self.running.clone();
        std::thread::spawn(move || {
            let mut first = Some(tx);
            loop {
                let outcome = sampling::for_client(Some(client.clone()), || {
                    memcc.compact(&session, budget, false).map_err(|e| e.to_string())
                });
                if let Err(e) = &outcome {
                    tracing::warn!(session = %session.session_id, error = %e, "a background compaction failed");
                }
                if let Some(tx) = first.take() {
                    // The call may have stopped waiting; its answer said the work goes on.
                    let _ = tx.send(outcome);
                }
                let mut map = running.lock().unwrap_or_else(|p| p.into_inner());
                match map.get_mut(&key) {
                    Some(again) if *again => *again = false,
                    _ => {
                        map.remove(&key);
                        break;
                    }
                }
            }
        });
        Started::Running(rx)
    }
}
