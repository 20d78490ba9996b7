//! The JSON API the page reads: each handler converts its query, calls the facade on tokio's
//! blocking pool (MemCC's calls are synchronous: SQLite, the local model) and serialises.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use memcc::context::{AgentMessage, PromptSource, SessionRef};
use memcc::core::ErrorCode;
use memcc::memory::Forget;
use memcc::memory::RecordFilter;
use memcc::{Memcc, MemccError};

use crate::AppState;

/// The code of the inspector's own failures (a task that died, a value that would not serialise).
const INTERNAL: &str = "internal";
/// Characters of a prompt message shown inline (the page says when it cut).
const SHOWN_CHARS: usize = 3_000;
const MAX_PAGE: usize = 200;

/// A failure as the page sees it: an HTTP status from the kind of error, and its message.
pub(crate) struct ApiError(StatusCode, String, &'static str);

impl From<MemccError> for ApiError {
    fn from(e: MemccError) -> Self {
        let code = e.code();
        let status = match code {
            ErrorCode::InvalidInput | ErrorCode::InvalidConfig => StatusCode::BAD_REQUEST,
            ErrorCode::UnknownSession | ErrorCode::NotFound => StatusCode::NOT_FOUND,
            ErrorCode::MemoryUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError(status, e.to_string(), code.as_str())
    }
}

impl From<memcc::context::ContextError> for ApiError {
    fn from(e: memcc::context::ContextError) -> Self {
        MemccError::from(e).into()
    }
}

impl From<memcc::context::StoreError> for ApiError {
    fn from(e: memcc::context::StoreError) -> Self {
        MemccError::from(e).into()
    }
}

impl From<memcc::memory::MemoryError> for ApiError {
    fn from(e: memcc::memory::MemoryError) -> Self {
        MemccError::from(e).into()
    }
}

fn bad_request(message: impl Into<String>) -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, message.into(), ErrorCode::InvalidInput.as_str())
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({"error": self.1, "code": self.2}))).into_response()
    }
}

type ApiResult = Result<Json<Value>, ApiError>;

/// Run a facade call on the blocking pool and serialise what it returns.
async fn blocking<T: Serialize + Send + 'static>(
    state: &AppState,
    call: impl FnOnce(&Memcc) -> Result<T, ApiError> + Send + 'static,
) -> ApiResult {
    let memcc = state.memcc.clone();
    match tokio::task::spawn_blocking(move || call(&memcc)).await {
        Ok(Ok(value)) => serde_json::to_value(value)
            .map(Json)
            .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string(), INTERNAL)),
        Ok(Err(e)) => Err(e),
        Err(e) => Err(ApiError(StatusCode::INTERNAL_SERVER_ERROR, format!("the call failed: {e}"), INTERNAL)),
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct AgentQuery {
    agent: Option<String>,
}

impl AppState {
    fn agent(&self, asked: Option<String>) -> String {
        asked.filter(|a| !a.is_empty()).unwrap_or_else(|| self.agent.clone())
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SessionRow {
    session_id: String,
    session_key: Option<String>,
    title: Option<String>,
    /// The project's short name, and its path.
    project: Option<String>,
    project_path: Option<String>,
    /// Where it came from, as a person reads it ("Claude Code").
    source: Option<&'static str>,
    messages: i64,
    summaries: i64,
    max_depth: i64,
    context_tokens: i64,
    pending_memory_handoffs: i64,
    first_message_at: Option<i64>,
    last_message_at: Option<i64>,
}

#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct AgentRow {
    agent_id: String,
    sessions: Vec<SessionRow>,
    memory_records: i64,
}

/// Agents (from conversations and from memory) and their sessions.
pub(crate) async fn overview(State(state): State<AppState>) -> ApiResult {
    let default_agent = state.agent.clone();
    blocking(&state, move |m| {
        let mut agents: BTreeMap<String, AgentRow> = BTreeMap::new();
        // Newest first, each with what it is.
        for listed in m.context.sessions(None, None, usize::MAX)? {
            let session = SessionRef { agent_id: Some(listed.agent_id.clone()), ..SessionRef::new(&listed.session_id) };
            let Ok(c) = m.context.existing(&session) else { continue };
            let stats = m.context.stats(Some(session))?;
            let row = agents.entry(c.agent_id.clone()).or_default();
            let meta = listed.meta;
            row.sessions.push(SessionRow {
                session_id: c.session_id,
                session_key: c.session_key,
                title: meta.title,
                project: meta.project.as_deref().map(|p| memcc::context::project_name(p).to_string()),
                project_path: meta.project,
                source: meta.source.map(|s| s.label()),
                messages: stats.messages,
                summaries: stats.summaries,
                max_depth: stats.max_depth,
                context_tokens: stats.context_tokens,
                pending_memory_handoffs: stats.pending_memory_handoffs,
                first_message_at: stats.first_message_at,
                last_message_at: stats.last_message_at,
            });
        }
        let mut memory_error = None;
        if m.memory_enabled() {
            match m.memory().and_then(|rt| Ok(rt.store().agents()?)) {
                Ok(counts) => {
                    for (agent, n) in counts {
                        agents.entry(agent).or_default().memory_records = n;
                    }
                }
                Err(e) => memory_error = Some(e.to_string()),
            }
        }
        let agents: Vec<AgentRow> = agents.into_iter().map(|(agent_id, row)| AgentRow { agent_id, ..row }).collect();
        Ok(json!({
            "defaultAgent": default_agent,
            "memoryEnabled": m.memory_enabled(),
            "memoryError": memory_error,
            "agents": agents,
        }))
    })
    .await
}

#[derive(Debug, Deserialize)]
pub(crate) struct SessionQuery {
    agent: Option<String>,
    session: String,
}

fn session_ref(state: &AppState, agent: Option<String>, session: &str) -> SessionRef {
    SessionRef { agent_id: Some(state.agent(agent)), ..SessionRef::new(session) }
}

/// The top of a session's summary DAG.
pub(crate) async fn dag(State(state): State<AppState>, Query(q): Query<SessionQuery>) -> ApiResult {
    let session = session_ref(&state, q.agent, &q.session);
    blocking(&state, move |m| Ok(m.context.dag(&session)?)).await
}

/// A summary and its direct sources.
pub(crate) async fn node(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<AgentQuery>,
) -> ApiResult {
    let agent = state.agent(q.agent);
    blocking(&state, move |m| Ok(m.context.dag_children(Some(&agent), &id)?)).await
}

#[derive(Debug, Deserialize)]
pub(crate) struct AssembleQuery {
    agent: Option<String>,
    session: String,
    budget: Option<usize>,
    /// A message as if the user had just sent it: it joins the recall query.
    pending: Option<String>,
    /// Only this message of the prompt (by position), whole: a part the page showed cut.
    part: Option<usize>,
}

/// The prompt MemCC would send next, each message with its origin and tokens, and each recalled
/// line with the record behind it.
pub(crate) async fn assemble(State(state): State<AppState>, Query(q): Query<AssembleQuery>) -> ApiResult {
    // A host's nonsense value is floored; a person who typed one is told.
    if let Some(b) = q.budget.filter(|&b| b < memcc::Budget::FLOOR) {
        return Err(bad_request(format!(
            "budget {b} is below the least a prompt is assembled in ({} tokens)",
            memcc::Budget::FLOOR
        )));
    }
    let agent = state.agent(q.agent.clone());
    let session = session_ref(&state, q.agent, &q.session);
    blocking(&state, move |m| {
        let pending: Vec<AgentMessage> =
            q.pending.iter().filter(|p| !p.trim().is_empty()).map(|p| AgentMessage::user(p)).collect();
        // As a host's ask is: within the configured cap, over the floor, the hosts' default
        // when the page names none.
        let budget = m.budget(q.budget.map(|b| b as f64));
        let a = m.assemble_for(&session, budget, None, &pending)?;
        if let Some(i) = q.part {
            let Some(message) = a.messages.get(i) else {
                return Err(ApiError(
                    StatusCode::NOT_FOUND,
                    format!("the prompt has {} messages; there is no message {i}", a.messages.len()),
                    "not_found",
                ));
            };
            return Ok(json!({"part": i, "text": AgentMessage::from_value(message.clone()).text()}));
        }
        let parts: Vec<Value> = a
            .messages
            .iter()
            .zip(&a.parts)
            .map(|(message, part)| {
                let message = AgentMessage::from_value(message.clone());
                let text = message.text();
                let cut = text.chars().count() > SHOWN_CHARS;
                let shown: String = if cut { text.chars().take(SHOWN_CHARS).collect() } else { text };
                json!({"source": part.source, "tokens": part.tokens, "role": message.role(), "text": shown, "cut": cut})
            })
            .collect();
        let runtime = m.memory_enabled().then(|| m.memory().ok()).flatten();
        let memory: Vec<Value> = a
            .recalled
            .iter()
            .map(|section| {
                // The body's lines between its tags, one per item.
                let body: Vec<&str> = section.body.lines().collect();
                let lines = body.get(1..body.len().saturating_sub(1)).unwrap_or_default();
                let items: Vec<Value> = if section.items.is_empty() {
                    vec![json!({"text": lines.join("\n")})]
                } else {
                    lines
                        .iter()
                        .zip(&section.items)
                        .map(|(line, item)| {
                            let record = runtime.and_then(|rt| rt.memory_get(&agent, &item.id).ok()).map(|r| {
                                json!({"kind": r.kind, "wing": r.wing, "room": r.room,
                                           "sourceSessionIds": r.source_session_ids,
                                           "sourceSummaryIds": r.source_summary_ids,
                                           "sourceMessageIds": r.source_message_ids,
                                           "eventTime": r.event_time, "current": r.is_current()})
                            });
                            json!({"text": line, "id": item.id, "score": item.score, "why": item.why,
                                   "matched": item.matched, "record": record})
                        })
                        .collect()
                };
                json!({"name": section.name, "tokens": section.tokens, "lines": items})
            })
            .collect();
        // What the estimate holds beyond the messages: the system-prompt addition, as MemCC counts it.
        let system_tokens = a.estimated_tokens.saturating_sub(a.parts.iter().map(|p| p.tokens).sum::<usize>());
        let memory_part = a.parts.iter().find(|p| matches!(p.source, PromptSource::Memory)).map(|p| p.tokens);
        Ok(json!({
            "budget": budget.tokens(),
            "estimatedTokens": a.estimated_tokens,
            "systemPromptAddition": a.system_prompt_addition,
            "systemTokens": system_tokens,
            "summariesIncluded": a.summaries_included,
            "rawMessagesIncluded": a.raw_messages_included,
            "itemsDropped": a.items_dropped,
            "memoryTokens": memory_part.unwrap_or(0),
            "parts": parts,
            "memory": memory,
        }))
    })
    .await
}

#[derive(Debug, Deserialize)]
pub(crate) struct MemoryQuery {
    agent: Option<String>,
    /// Search words; without them, a page of records newest first.
    q: Option<String>,
    wing: Option<String>,
    room: Option<String>,
    kind: Option<String>,
    #[serde(default)]
    forgotten: bool,
    #[serde(default)]
    offset: usize,
    limit: Option<usize>,
}

fn nonempty(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.trim().is_empty())
}

/// Memory records: a search, or a filtered page.
pub(crate) async fn memory(State(state): State<AppState>, Query(q): Query<MemoryQuery>) -> ApiResult {
    let agent = state.agent(q.agent);
    let limit = q.limit.unwrap_or(50).clamp(1, MAX_PAGE);
    blocking(&state, move |m| {
        let rt = m.memory()?;
        if let Some(query) = nonempty(q.q) {
            let wing = nonempty(q.wing);
            let hits = rt.memory_search(&agent, &query, limit.min(100), 0.0, wing.as_deref())?;
            let (room, kind) = (nonempty(q.room), nonempty(q.kind));
            let items: Vec<Value> = hits
                .into_iter()
                .filter(|h| room.as_ref().is_none_or(|r| &h.room == r))
                .filter(|h| kind.as_ref().is_none_or(|k| h.kind.as_str() == k))
                .map(|h| {
                    let record = h.record.clone();
                    json!({"hit": h, "record": record})
                })
                .collect();
            return Ok(json!({"search": query, "total": items.len(), "offset": 0, "items": items}));
        }
        let filter = RecordFilter {
            agent_id: Some(agent),
            wing: nonempty(q.wing),
            room: nonempty(q.room),
            kind: nonempty(q.kind),
            include_forgotten: q.forgotten,
        };
        let page = rt.store().list_records(&filter, q.offset, limit)?;
        let items: Vec<Value> = page.items.into_iter().map(|r| json!({"record": r})).collect();
        Ok(json!({"total": page.total, "offset": page.offset, "items": items}))
    })
    .await
}

/// The wings, rooms and kinds an agent's records have, for the filters.
pub(crate) async fn facets(State(state): State<AppState>, Query(q): Query<AgentQuery>) -> ApiResult {
    let agent = state.agent(q.agent);
    blocking(&state, move |m| Ok(m.memory()?.store().facets(&agent)?)).await
}

fn record_id(id: &str) -> Result<i64, ApiError> {
    memcc::memory::parse_ref(id).ok_or_else(|| bad_request(format!("{id:?} is not a memory id (mem_<n>)")))
}

/// Every statement of the record's subject and predicate, oldest first.
pub(crate) async fn history(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<AgentQuery>,
) -> ApiResult {
    let agent = state.agent(q.agent);
    let n = record_id(&id)?;
    blocking(&state, move |m| {
        let chain = m.memory()?.store().supersession(&agent, n)?;
        if chain.is_empty() {
            return Err(MemccError::from(memcc::memory::MemoryError::NotFound(format!("memory {id}"))).into());
        }
        Ok(chain)
    })
    .await
}

/// What a record states that has changed since (and where the change was said), and what its
/// statements replaced: a record's history beyond its own supersession chain.
pub(crate) async fn statements(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<AgentQuery>,
) -> ApiResult {
    let agent = state.agent(q.agent);
    let n = record_id(&id)?;
    blocking(&state, move |m| {
        let rt = m.memory()?;
        // Another agent's record, or one forgotten: not found, as everywhere.
        let record = rt.memory_get(&agent, &id)?;
        let line = |t: &memcc::memory::Triple| format!("{} — {} — {}", t.subject, t.predicate.replace('_', " "), t.object);
        let mut changed: Vec<Value> = rt
            .store()
            .superseded_statements(&[n])?
            .iter()
            .map(|(old, new)| json!({"statement": line(old), "now": new.object, "in": new.source_record.map(|r| format!("mem_{r}"))}))
            .collect();
        // A choice it names that was replaced later ("switched from Jest to Vitest"): "Jest, now Vitest".
        changed.extend(rt.choices_replaced(&agent, &record)?.iter().map(|t| {
            json!({"statement": t.subject, "now": t.object, "in": t.source_record.map(|r| format!("mem_{r}"))})
        }));
        let replaced: Vec<Value> = rt
            .store()
            .replaced_statements(n)?
            .iter()
            .map(|(old, new)| json!({"statement": line(old), "now": new.object, "was_in": old.source_record.map(|r| format!("mem_{r}"))}))
            .collect();
        Ok(json!({"changed": changed, "replaced": replaced}))
    })
    .await
}

#[derive(Debug, Deserialize)]
pub(crate) struct EditBody {
    text: String,
}

/// Correct a record: the new text supersedes it, which stays as its history.
pub(crate) async fn edit(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<AgentQuery>,
    Json(body): Json<EditBody>,
) -> ApiResult {
    let agent = state.agent(q.agent);
    record_id(&id)?;
    blocking(&state, move |m| {
        let done = m.memory()?.edit(&agent, &id, &body.text)?;
        Ok(json!({"id": format!("mem_{}", done.id), "supersedes": id}))
    })
    .await
}

#[derive(Debug, Deserialize)]
pub(crate) struct PinBody {
    pinned: bool,
    /// In every project, not only the one it was learnt in.
    #[serde(default)]
    everywhere: bool,
}

/// Pin a record (recalled in every prompt) or unpin it.
pub(crate) async fn pin(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<AgentQuery>,
    Json(body): Json<PinBody>,
) -> ApiResult {
    let agent = state.agent(q.agent);
    record_id(&id)?;
    blocking(&state, move |m| {
        let everywhere = body.pinned && body.everywhere;
        let changed = m.memory()?.pin_in(&agent, &id, body.pinned, everywhere)?;
        Ok(json!({"id": id, "pinned": body.pinned, "everywhere": everywhere, "changed": changed}))
    })
    .await
}

#[derive(Debug, Deserialize, Default)]
pub(crate) struct ForgetBody {
    #[serde(default)]
    purge: bool,
}

/// Forget a record (the page asks the person to confirm first).
pub(crate) async fn forget(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<AgentQuery>,
    body: Option<Json<ForgetBody>>,
) -> ApiResult {
    let agent = state.agent(q.agent);
    record_id(&id)?;
    let how = if body.is_some_and(|b| b.purge) { Forget::Purge } else { Forget::Soft };
    blocking(&state, move |m| match m.memory()?.forget_as(&agent, &id, how)? {
        Some(done) => Ok(done),
        None => Err(MemccError::from(memcc::memory::MemoryError::NotFound(format!("memory {id}"))).into()),
    })
    .await
}

#[derive(Debug, Deserialize)]
pub(crate) struct PageQuery {
    agent: Option<String>,
    #[serde(default)]
    offset: usize,
    limit: Option<usize>,
}

/// Knowledge-graph triples, newest first.
pub(crate) async fn triples(State(state): State<AppState>, Query(q): Query<PageQuery>) -> ApiResult {
    let agent = state.agent(q.agent);
    let limit = q.limit.unwrap_or(50).clamp(1, MAX_PAGE);
    blocking(&state, move |m| Ok(m.memory()?.store().list_triples(&agent, q.offset, limit)?)).await
}
