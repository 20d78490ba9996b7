//! Reading memory page by page, for inspection (`memcc ui`): the shapes of the pages (records by
//! filter, facets). Each backend answers them ([`crate::store::Inspection::list_records`] and
//! its neighbours); recall never uses them.

use serde::{Deserialize, Serialize};

/// Which records a page lists (all current records of the agent when empty).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RecordFilter {
    pub agent_id: Option<String>,
    pub wing: Option<String>,
    pub room: Option<String>,
    pub kind: Option<String>,
    pub include_forgotten: bool,
}

/// One page of a listing, and how many there are in all.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total: i64,
    pub offset: usize,
}

/// The values a record filter can take for one agent, with how many current records have each.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Facets {
    pub wings: Vec<(String, i64)>,
    pub rooms: Vec<(String, i64)>,
    pub kinds: Vec<(String, i64)>,
}
