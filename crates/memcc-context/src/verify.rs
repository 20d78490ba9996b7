//! Checking the lossless invariant: the context items of a conversation, expanded down the
//! summary DAG, cover every stored message exactly once and in order.

use serde::Serialize;

use crate::error::Result;
use crate::store::{ContextStore, ItemRef};

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifyReport {
    pub session_id: String,
    pub messages: usize,
    pub covered: usize,
    /// Message ids reached more than once.
    pub duplicated: Vec<i64>,
    /// Message ids no context item reaches.
    pub missing: Vec<i64>,
    /// The DAG lists messages out of their stored order.
    pub out_of_order: bool,
    /// `PRAGMA integrity_check`.
    pub integrity: String,
}

impl VerifyReport {
    pub fn ok(&self) -> bool {
        self.duplicated.is_empty() && self.missing.is_empty() && !self.out_of_order && self.integrity == "ok"
    }
}

/// Guards against a corrupt file with a cycle; real DAGs are far shallower.
const MAX_DEPTH: usize = 256;

pub(crate) fn verify(store: &ContextStore, conversation_id: i64, session_id: &str) -> Result<VerifyReport> {
    fn walk(store: &ContextStore, id: &str, out: &mut Vec<i64>, depth: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            return Ok(());
        }
        let (messages, children) = store.summary_children(id)?;
        out.extend(messages);
        for c in children {
            walk(store, &c, out, depth + 1)?;
        }
        Ok(())
    }
    let mut covered = Vec::new();
    for item in store.context_items(conversation_id)? {
        match item.item {
            ItemRef::Message { id, .. } => covered.push(id),
            ItemRef::Summary { id, .. } => walk(store, &id, &mut covered, 0)?,
        }
    }
    let all = store.message_ids(conversation_id)?;
    let out_of_order = covered.windows(2).any(|w| w[0] >= w[1]);
    let mut sorted = covered.clone();
    sorted.sort_unstable();
    let duplicated: Vec<i64> = sorted.windows(2).filter(|w| w[0] == w[1]).map(|w| w[0]).collect();
    sorted.dedup();
    let missing: Vec<i64> = all.iter().filter(|id| sorted.binary_search(id).is_err()).copied().collect();
    Ok(VerifyReport {
        session_id: session_id.to_string(),
        messages: all.len(),
        covered: covered.len(),
        duplicated,
        missing,
        out_of_order,
        integrity: store.integrity_check()?,
    })
}
