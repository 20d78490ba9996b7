//! Inserting a record: what is refused, what counts as already stored, and what a new statement
//! supersedes — written once, over the small steps each backend says how to store
//! ([`InsertTx`]), as [`crate::forget`] is for forgetting.
//!
//! One record, in its backend's transaction:
//! - a record without text is refused;
//! - a text the agent already has (same content hash) is not stored again: the existing id
//!   comes back as a duplicate;
//! - the record, its full-text row and its vector (when embedding succeeded) are stored;
//! - a statement about a subject and predicate supersedes the agent's current statements about
//!   the same ones made at or before its own time (kept, inspectable, no longer preferred);
//! - each triple it states is stored, valid from its own date, else the record's; it supersedes
//!   the agent's current triples with that subject and predicate and another object;
//! - an edit (a record that names the one it corrects) supersedes that one, which stays as its
//!   history;
//! - a verbatim window's messages are counted in their session's document of the session index
//!   ([`crate::sessions`]), each message once.

use serde::Serialize;

use crate::error::{MemoryError, Result};
use crate::record::{NewRecord, NewTriple, content_hash};
use crate::sessions::{MessageWords, message_words};
use memcc_core::time::now_ms;

/// The result of inserting one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Inserted {
    pub id: i64,
    /// The same text was already stored for this agent; `id` is the existing record.
    pub duplicate: bool,
}

/// One record to insert, with its vector if it has one, and the triples it states.
pub struct Insert<'a> {
    pub record: &'a NewRecord,
    pub vector: Option<(&'a str, &'a [f32])>,
    pub triples: &'a [NewTriple],
}

/// What inserting reads and writes, inside one transaction of a backend. The policy is
/// [`insert`]'s; a backend only says how each step is stored.
pub(crate) trait InsertTx {
    /// The id of `agent`'s record with content hash `hash`, if there is one.
    fn existing(&mut self, agent: &str, hash: &str) -> Result<Option<i64>>;
    /// Store `record` (content hash `hash`, stored at `now`) with its full-text row, embedded
    /// or waiting for a vector; its id. `None`, storing nothing, when the agent has that text
    /// already.
    fn add_record(&mut self, record: &NewRecord, hash: &str, now: i64, embedded: bool) -> Result<Option<i64>>;
    /// Store record `id`'s vector of `model`.
    fn add_vector(&mut self, id: i64, agent: &str, model: &str, vector: &[f32]) -> Result<()>;
    /// Mark `agent`'s current records about `subject` and `predicate` dated at or before `at`
    /// (other than `id`) as superseded by `id`, valid until `at`.
    fn supersede_records(&mut self, id: i64, agent: &str, subject: &str, predicate: &str, at: i64) -> Result<()>;
    /// Mark `agent`'s record `old` as superseded by `id` (an edit of it), valid until `at`;
    /// whether `old` was current (or already replaced by `id` in this transaction) and is now
    /// replaced: an edit of a record another edit replaced first changes nothing.
    fn supersede_record(&mut self, old: i64, id: i64, agent: &str, at: i64) -> Result<bool>;
    /// Store `triple` of `agent`, stated by record `source`; its id.
    fn add_triple(
        &mut self,
        agent: &str,
        triple: &NewTriple,
        valid_from: Option<i64>,
        source: i64,
        now: i64,
    ) -> Result<i64>;
    /// Mark `agent`'s current triples with `triple`'s subject and predicate and another object
    /// (other than `id`) as superseded by `id`, valid until `at`.
    fn supersede_triples(&mut self, id: i64, agent: &str, triple: &NewTriple, at: i64) -> Result<()>;
    /// Count one message's words in its session of the session index, unless the session has
    /// counted that message already (windows overlap).
    fn add_message_words(&mut self, agent: &str, words: &MessageWords) -> Result<()>;
}

/// Insert one record as the module documentation says.
pub(crate) fn insert(tx: &mut dyn InsertTx, item: &Insert<'_>) -> Result<Inserted> {
    let r = item.record;
    if r.text.trim().is_empty() {
        return Err(MemoryError::Input("a memory record needs text".into()));
    }
    let hash = content_hash(&r.text);
    let now = now_ms();
    // Stored unless the text is there already (the unique content index decides, in one step).
    let Some(id) = tx.add_record(r, &hash, now, item.vector.is_some())? else {
        let id = tx.existing(&r.agent_id, &hash)?.ok_or_else(|| {
            MemoryError::Input("a record with the same text was stored and is gone again; retry".into())
        })?;
        return Ok(Inserted { id, duplicate: true });
    };
    if let Some((model, vector)) = item.vector {
        tx.add_vector(id, &r.agent_id, model, vector)?;
    }
    if let (Some(subject), Some(predicate)) = (&r.subject, &r.predicate) {
        tx.supersede_records(id, &r.agent_id, subject, predicate, r.event_time.unwrap_or(now))?;
    }
    // An edit: the text it corrects stays, as its history.
    // Checked here, in the transaction: two edits of one record at once would otherwise both
    // replace it, and leave two current versions.
    if let Some(old) = r.supersedes
        && !tx.supersede_record(old, id, &r.agent_id, now)?
    {
        return Err(MemoryError::Input(format!(
            "mem_{old} was changed or forgotten meanwhile: nothing was stored; edit what holds now"
        )));
    }
    for t in item.triples {
        let valid_from = t.valid_from.or(r.event_time);
        let tid = tx.add_triple(&r.agent_id, t, valid_from, id, now)?;
        tx.supersede_triples(tid, &r.agent_id, t, valid_from.unwrap_or(now))?;
    }
    for words in message_words(r) {
        tx.add_message_words(&r.agent_id, &words)?;
    }
    Ok(Inserted { id, duplicate: false })
}
