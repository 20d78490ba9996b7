//! MemCC over the Model Context Protocol, for every agent that takes memory through MCP.
//!
//! [`MemccMcp`] maps MCP tool calls and resources onto the `memcc` facade — the same calls the
//! CLI and the OpenClaw addon make, and no logic of its own (ARCHITECTURE.md: bindings contain no
//! logic). [`serve_stdio`] and [`serve_http`] are the two transports. MemCC's calls are
//! synchronous (SQLite, the local model), so each runs on tokio's blocking pool.

// No panic on a path input can reach: outside tests, `unwrap`, `expect` and `panic!` are errors
// (a pattern in the source goes through `memcc_core::text::static_regex`).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod compactions;
mod sampling;
mod stdio;

pub use sampling::ClientModel;

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, CustomRequest, CustomResult, Implementation, ListResourcesResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ServerCapabilities, ServerConfig, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde_json::{Value, json};

use memcc::context::{AgentMessage, SessionRef};
use memcc::context::{ExpandRequest, GrepMode, GrepRequest, GrepScope};
use memcc::core::ErrorCode;
use memcc::memory::Forget;
use memcc::memory::RecordKind;
use memcc::tools::{
    AddArgs, AppendArgs, AssembleArgs, DescribeArgs, EditArgs, ExpandArgs, FactsArgs, ForgetArgs, GrepArgs, IdArgs,
    PinArgs, SearchArgs,
};
use memcc::{Memcc, MemccError};

#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("{0}")]
    Setup(String),
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
}

/// Who the server acts for, and what a call may change of it.
#[derive(Debug, Clone)]
pub struct Defaults {
    /// The agent every call acts as.
    pub agent_id: String,
    /// Other agents a call may name in `agentId`, as the operator allowed (`--allow-agent`):
    /// a client — or a prompt-injected model — cannot reach any other agent's memory or
    /// conversations, whatever it puts in a call.
    pub allowed_agents: Vec<String>,
    /// The conversation `conversation_*` and `lcm_*` use when a call names none.
    pub session_id: Option<String>,
    /// Token budget of `conversation_assemble` and of compaction after `conversation_append`
    /// when a call names none (`None`: what every host gets, `Memcc::budget`).
    pub budget: Option<usize>,
    /// The project the server's client works in (a stdio server's working directory's): its
    /// memories are favoured when a call names none.
    pub project: Option<String>,
}

/// The MCP server: MemCC's memory and context tools, and its memory prompt and identity files
/// as resources.
#[derive(Clone)]
pub struct MemccMcp {
    memcc: Arc<Memcc>,
    defaults: Defaults,
    tool_router: ToolRouter<Self>,
    compactions: compactions::Compactions,
}

/// Wait up to [`compactions::APPEND_WAIT`] for a compaction's first round, telling the client's
/// `progress` token once a second that it goes on; `None` when it is still running.
async fn wait_reporting(
    rx: std::sync::mpsc::Receiver<Result<memcc::context::CompactionOutcome, String>>,
    client: &Peer<RoleServer>,
    progress: Option<rmcp::model::ProgressToken>,
) -> Option<Result<memcc::context::CompactionOutcome, String>> {
    let started = std::time::Instant::now();
    let mut ticks = 0u32;
    loop {
        match rx.try_recv() {
            Ok(outcome) => return Some(outcome),
            Err(std::sync::mpsc::TryRecvError::Disconnected) => return None,
            Err(std::sync::mpsc::TryRecvError::Empty) => {}
        }
        if started.elapsed() >= compactions::APPEND_WAIT {
            return None;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        if started.elapsed().as_secs() > u64::from(ticks) {
            ticks += 1;
            if let Some(token) = &progress {
                let note = rmcp::model::ProgressNotificationParam::new(token.clone(), f64::from(ticks))
                    .with_message("compacting the conversation (summaries by your model when it offers sampling)");
                let _ = client.notify_progress(note).await;
            }
        }
    }
}

/// A MemCC error as an MCP error: the kind of failure (`ErrorCode`) decides the JSON-RPC code
/// and travels in `data.code`.
fn mcp_error(e: MemccError) -> ErrorData {
    let code = e.code();
    let data = Some(json!({"code": code.as_str()}));
    match code {
        ErrorCode::InvalidInput | ErrorCode::InvalidConfig => ErrorData::invalid_params(e.to_string(), data),
        ErrorCode::UnknownSession | ErrorCode::NotFound => ErrorData::resource_not_found(e.to_string(), data),
        _ => ErrorData::internal_error(e.to_string(), data),
    }
}

fn invalid(message: &str) -> ErrorData {
    ErrorData::invalid_params(message.to_string(), Some(json!({"code": ErrorCode::InvalidInput.as_str()})))
}

/// A failed call as the model should see it: a tool result marked `isError`, its text
/// `[code] message` (MemCC's error code first), so the model can read it and correct the call —
/// not a JSON-RPC error, which a client reports to a person. Errors of the protocol itself (a
/// missing or mistyped argument, which the schema states) stay JSON-RPC errors.
fn as_tool_result(outcome: Result<CallToolResult, ErrorData>) -> Result<CallToolResult, ErrorData> {
    match outcome {
        Err(e) => match e.data.as_ref().and_then(|d| d.get("code")).and_then(Value::as_str) {
            Some(code) => Ok(CallToolResult::error(vec![ContentBlock::text(format!("[{code}] {}", e.message))])),
            None => Err(e),
        },
        ok => ok,
    }
}

fn text_result(value: &Value) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(serde_json::to_string_pretty(value).unwrap_or_default())])
}

impl MemccMcp {
    pub fn new(memcc: Arc<Memcc>, defaults: Defaults) -> Self {
        MemccMcp {
            memcc,
            defaults,
            tool_router: catalogued(Self::tool_router()),
            compactions: compactions::Compactions::default(),
        }
    }

    /// The agent a call acts as: the server's, or one the operator allowed; any other is
    /// refused (invalid params, naming what the server allows), never served.
    fn agent(&self, given: &Option<String>) -> Result<String, ErrorData> {
        let own = &self.defaults.agent_id;
        match given.as_deref() {
            None => Ok(own.clone()),
            Some(a) if a == own || self.defaults.allowed_agents.iter().any(|x| x == a) => Ok(a.to_string()),
            Some(a) => {
                let mut allowed = vec![own.as_str()];
                allowed.extend(self.defaults.allowed_agents.iter().map(String::as_str));
                Err(invalid(&format!(
                    "agentId {a:?} is not allowed: this server acts for {} (the operator allows more agents \
                     with --allow-agent)",
                    allowed.join(", ")
                )))
            }
        }
    }

    /// The conversation a `conversation_*` call names (else the server's), as its agent.
    fn conversation(&self, session: &Option<String>, agent: &Option<String>) -> Result<SessionRef, ErrorData> {
        Ok(SessionRef {
            session_id: self.session(session)?,
            agent_id: Some(self.agent(agent)?),
            project: self.defaults.project.clone(),
            source: Some(memcc::context::SessionSource::Mcp),
            ..Default::default()
        })
    }

    /// The budget a call asked for (else the server's), within the configured cap and over the
    /// floor every host applies (`Memcc::budget`): a model's `budget: 1` does not fold the whole
    /// conversation.
    fn budget(&self, asked: Option<u32>) -> memcc::Budget {
        self.memcc.budget(asked.map(f64::from).or(self.defaults.budget.map(|b| b as f64)))
    }

    fn session(&self, given: &Option<String>) -> Result<String, ErrorData> {
        given
            .clone()
            .or_else(|| self.defaults.session_id.clone())
            .ok_or_else(|| invalid("no sessionId given and the server has no --session"))
    }

    /// Run MemCC's (blocking) call on the blocking pool.
    async fn call<T: serde::Serialize + Send + 'static>(
        &self,
        work: impl FnOnce(&Memcc) -> Result<T, MemccError> + Send + 'static,
    ) -> Result<CallToolResult, ErrorData> {
        let memcc = self.memcc.clone();
        let out = tokio::task::spawn_blocking(move || work(&memcc))
            .await
            .map_err(|e| ErrorData::internal_error(format!("memcc: the call failed: {e}"), None))?
            .map_err(mcp_error)?;
        let value = serde_json::to_value(out).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(text_result(&value))
    }
}

#[tool_router]
impl MemccMcp {
    #[tool]
    async fn memory_search(&self, Parameters(a): Parameters<SearchArgs>) -> Result<CallToolResult, ErrorData> {
        let mut result = as_tool_result(
            async move {
                let agent = self.agent(&a.agent_id)?;
                let project = self.defaults.project.clone();
                self.call(move |m| m.memory_search(&agent, &a, project.as_deref())).await
            }
            .await,
        )?;
        if result.is_error != Some(true) && self.memcc.recall_on_fallback() {
            result.content.push(ContentBlock::text(format!("[notice] {}", Memcc::FALLBACK_NOTICE)));
        }
        Ok(result)
    }

    #[tool]
    async fn memory_get(&self, Parameters(a): Parameters<IdArgs>) -> Result<CallToolResult, ErrorData> {
        as_tool_result(
            async move {
                let agent = self.agent(&a.agent_id)?;
                self.call(move |m| {
                    let record = m.memory()?.memory_get(&agent, &a.id)?;
                    // Ids as memory_search gives them ("mem_12"), whatever the record's own type says.
                    let mut value = serde_json::to_value(&record).unwrap_or_default();
                    value["id"] = json!(record.ref_id());
                    Ok(value)
                })
                .await
            }
            .await,
        )
    }

    #[tool]
    async fn memory_add(&self, Parameters(a): Parameters<AddArgs>) -> Result<CallToolResult, ErrorData> {
        as_tool_result(
            async move {
                let agent = self.agent(&a.agent_id)?;
                let pin = a.pin.unwrap_or(false);
                let kind = if pin { RecordKind::Pinned } else { RecordKind::Fact };
                self.call(move |m| {
                    let added = m.memory()?.add(&agent, &a.text, kind, pin, a.wing.as_deref())?;
                    Ok(json!({"id": format!("mem_{}", added.id), "duplicate": added.duplicate}))
                })
                .await
            }
            .await,
        )
    }

    #[tool]
    async fn memory_forget(&self, Parameters(a): Parameters<ForgetArgs>) -> Result<CallToolResult, ErrorData> {
        as_tool_result(
            async move {
                let agent = self.agent(&a.agent_id)?;
                let how = if a.purge.unwrap_or(false) { Forget::Purge } else { Forget::Soft };
                self.call(move |m| {
                    let done = m.memory()?.forget_as(&agent, &a.id, how)?.ok_or_else(|| {
                        MemccError::Memory(memcc::memory::MemoryError::NotFound(format!("memory {}", a.id)))
                    })?;
                    let ids = |ids: &[i64]| ids.iter().map(|id| format!("mem_{id}")).collect::<Vec<_>>();
                    Ok(json!({"removed": ids(&done.removed), "rewritten": ids(&done.rewritten)}))
                })
                .await
            }
            .await,
        )
    }

    #[tool]
    async fn memory_edit(&self, Parameters(a): Parameters<EditArgs>) -> Result<CallToolResult, ErrorData> {
        as_tool_result(
            async move {
                let agent = self.agent(&a.agent_id)?;
                self.call(move |m| {
                    let done = m.memory()?.edit(&agent, &a.id, &a.text)?;
                    Ok(json!({"id": format!("mem_{}", done.id), "supersedes": a.id}))
                })
                .await
            }
            .await,
        )
    }

    #[tool]
    async fn memory_pin(&self, Parameters(a): Parameters<PinArgs>) -> Result<CallToolResult, ErrorData> {
        as_tool_result(
            async move {
                let agent = self.agent(&a.agent_id)?;
                let pinned = a.pinned.unwrap_or(true);
                let everywhere = pinned && a.everywhere.unwrap_or(false);
                self.call(move |m| {
                    let changed = m.memory()?.pin_in(&agent, &a.id, pinned, everywhere)?;
                    Ok(json!({"id": a.id, "pinned": pinned, "everywhere": everywhere, "changed": changed}))
                })
                .await
            }
            .await,
        )
    }

    #[tool]
    async fn memory_facts(&self, Parameters(a): Parameters<FactsArgs>) -> Result<CallToolResult, ErrorData> {
        as_tool_result(
            async move {
                let agent = self.agent(&a.agent_id)?;
                let about = a.about.filter(|x| !x.trim().is_empty()).unwrap_or_else(|| "user".into());
                let limit = memcc::tools::FACTS.resolve(a.limit);
                let history = a.history.unwrap_or(false);
                self.call(move |m| {
                    let store = m.memory()?.store();
                    let mut facts = if history {
                        store.triple_history(&agent, &about)?
                    } else {
                        store.triples_about(std::slice::from_ref(&agent), std::slice::from_ref(&about), limit)?
                    };
                    // Current first, then newest first.
                    facts.sort_by_key(|t| (!t.is_current(), std::cmp::Reverse(t.id)));
                    facts.truncate(limit);
                    let shown: Vec<Value> = facts
                        .iter()
                        .map(|t| {
                            let mut v = json!({
                                "subject": t.subject,
                                "predicate": t.predicate,
                                "object": t.object,
                                "current": t.is_current(),
                                "validFrom": t.valid_from.and_then(memcc::core::day),
                            });
                            if let Some(until) = t.valid_until.and_then(memcc::core::day) {
                                v["validUntil"] = json!(until);
                            }
                            if let Some(r) = t.source_record {
                                v["source"] = json!(format!("mem_{r}"));
                            }
                            v
                        })
                        .collect();
                    Ok(json!({"about": about, "facts": shown}))
                })
                .await
            }
            .await,
        )
    }

    #[tool]
    async fn lcm_grep(&self, Parameters(a): Parameters<GrepArgs>) -> Result<CallToolResult, ErrorData> {
        as_tool_result(
            async move {
                let mode = match a.mode.as_deref() {
                    None | Some("text") => GrepMode::Text,
                    Some("regex") => GrepMode::Regex,
                    Some(other) => return Err(invalid(&format!("mode must be \"text\" or \"regex\", not {other:?}"))),
                };
                let scope = match a.scope.as_deref() {
                    None | Some("both") => GrepScope::Both,
                    Some("messages") => GrepScope::Messages,
                    Some("summaries") => GrepScope::Summaries,
                    Some(other) => {
                        return Err(invalid(&format!("scope must be messages, summaries or both, not {other:?}")));
                    }
                };
                let request = GrepRequest {
                    pattern: a.pattern,
                    mode,
                    scope,
                    session_id: a.session_id.or_else(|| self.defaults.session_id.clone()),
                    agent_id: Some(self.agent(&a.agent_id)?),
                    limit: Some(memcc::tools::GREP_MATCHES.resolve(a.limit)),
                    ..Default::default()
                };
                self.call(move |m| Ok(m.context.grep(&request)?)).await
            }
            .await,
        )
    }

    #[tool]
    async fn lcm_describe(&self, Parameters(a): Parameters<DescribeArgs>) -> Result<CallToolResult, ErrorData> {
        as_tool_result(
            async move {
                let agent = self.agent(&a.agent_id)?;
                self.call(move |m| Ok(m.context.describe(Some(&agent), &a.id)?)).await
            }
            .await,
        )
    }

    #[tool]
    async fn lcm_expand_query(&self, Parameters(a): Parameters<ExpandArgs>) -> Result<CallToolResult, ErrorData> {
        as_tool_result(
            async move {
                let request = ExpandRequest {
                    ids: a.ids.unwrap_or_default(),
                    query: a.query,
                    session_id: a.session_id.or_else(|| self.defaults.session_id.clone()),
                    agent_id: Some(self.agent(&a.agent_id)?),
                    max_tokens: a.max_tokens.map(|t| t as usize),
                    deep: a.deep.unwrap_or(false),
                    raw: false,
                };
                self.call(move |m| Ok(m.context.expand(&request)?)).await
            }
            .await,
        )
    }

    #[tool]
    async fn conversation_append(
        &self,
        client: Peer<RoleServer>,
        meta: rmcp::model::RequestMetaObject,
        Parameters(a): Parameters<AppendArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        as_tool_result(
            async move {
                let session = self.conversation(&a.session_id, &a.agent_id)?;
                let budget = self.budget(a.budget);
                let messages: Vec<AgentMessage> = a
                    .messages
                    .into_iter()
                    .map(|t| {
                        let mut v = match t.role.as_str() {
                            "assistant" => {
                                json!({"role": "assistant", "content": [{"type": "text", "text": t.content}]})
                            }
                            role => json!({"role": role, "content": t.content}),
                        };
                        if let Some(ts) = t.timestamp {
                            v["timestamp"] = json!(ts);
                        }
                        if let Some(n) = t.name {
                            v["name"] = json!(n);
                        }
                        AgentMessage::from_value(v)
                    })
                    .collect();
                // A typo'd role is stored as given (lossless), and the model hears of it.
                let warnings: Vec<String> = messages
                    .iter()
                    .enumerate()
                    .filter_map(|(i, m)| Some(format!("message {}: {}", i + 1, memcc::context::unread_note(m)?)))
                    .collect();
                let stored = {
                    let session = session.clone();
                    let memcc = self.memcc.clone();
                    tokio::task::spawn_blocking(move || memcc.context.ingest_batch(&session, &messages))
                        .await
                        .map_err(|e| ErrorData::internal_error(format!("memcc: the call failed: {e}"), None))?
                        .map_err(|e| mcp_error(e.into()))?
                };
                // Summaries by this client's model when it offers sampling, on a thread of their
                // own: the call waits a few seconds for them, telling its progress token.
                let compaction = match self.compactions.start(self.memcc.clone(), session, budget, client.clone()) {
                    compactions::Started::Joined => {
                        json!({"inBackground": true, "note": "a compaction of this conversation is running; it will take these messages too"})
                    }
                    compactions::Started::Running(rx) => {
                        let progress = meta.get_progress_token();
                        let waited = wait_reporting(rx, &client, progress).await;
                        match waited {
                            Some(Ok(outcome)) => serde_json::to_value(outcome).unwrap_or_default(),
                            Some(Err(e)) => return Err(ErrorData::internal_error(format!("memcc: {e}"), None)),
                            None => json!({"inBackground": true, "note": "summaries are still being written (by your model, when it offers sampling); conversation_assemble works meanwhile"}),
                        }
                    }
                };
                let mut answer =
                    json!({"added": stored.inserted.len(), "duplicates": stored.duplicates, "compaction": compaction});
                if !warnings.is_empty() {
                    answer["warnings"] = json!(warnings);
                }
                Ok(text_result(&answer))
            }
            .await,
        )
    }

    #[tool]
    async fn conversation_assemble(
        &self,
        Parameters(a): Parameters<AssembleArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        as_tool_result(
            async move {
                let session = self.conversation(&a.session_id, &a.agent_id)?;
                let budget = self.budget(a.budget);
                let pending: Vec<AgentMessage> = a.pending.iter().map(|p| AgentMessage::user(p)).collect();
                self.call(move |m| {
                    // A session nobody appended to is most likely a mistaken id: said, not
                    // answered with the empty prompt of a conversation started on the spot.
                    m.context.existing(&session)?;
                    m.assemble_for(&session, budget, None, &pending)
                })
                .await
            }
            .await,
        )
    }
}

/// Each tool's description, title and hints from the one catalogue (`memcc::tools`) every host
/// reads, so what a model reads of a tool is the same over MCP and in OpenClaw.
fn catalogued(mut router: ToolRouter<MemccMcp>) -> ToolRouter<MemccMcp> {
    for route in router.map.values_mut() {
        if let Some(spec) = memcc::tools::spec(&route.attr.name) {
            route.attr.description = Some(spec.description.into());
            route.attr.title = Some(spec.title.into());
            route.attr.annotations = Some(ToolAnnotations::from_raw(
                Some(spec.title.into()),
                Some(spec.read_only),
                (!spec.read_only).then_some(spec.destructive),
                None,
                None,
            ));
        }
    }
    router
}

const PROMPT_URI: &str = "memcc://memory-prompt";

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MemccMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new("memcc", env!("CARGO_PKG_VERSION")).with_title("MemCC"))
            .with_instructions(if self.memcc.config.local_model_missing() {
                format!("{}\n\n{}", memcc::tools::SERVER_INSTRUCTIONS, Memcc::FALLBACK_NOTICE)
            } else {
                memcc::tools::SERVER_INSTRUCTIONS.to_string()
            })
    }

    /// The one request MemCC adds: the stand-in [`stdio::BoundedLines`] puts after a line too
    /// long to read, so the client hears why its request got no answer.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        if request.method != stdio::TOO_LARGE_METHOD {
            return Err(ErrorData::new(rmcp::model::ErrorCode::METHOD_NOT_FOUND, request.method, None));
        }
        let bytes = request.params.as_ref().and_then(|p| p.get("bytes")).cloned().unwrap_or(Value::Null);
        Err(ErrorData::invalid_request(
            format!(
                "request too large: a line may hold at most {} bytes (16 MiB) and this one held {bytes}; \
                 send less (a memory record holds at most 32,000 characters)",
                stdio::MAX_LINE_BYTES
            ),
            Some(json!({ "maxLineBytes": stdio::MAX_LINE_BYTES, "bytes": bytes })),
        ))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let mut resources = vec![
            Resource::new(PROMPT_URI, "memory-prompt")
                .with_description("What a model is told about MemCC's memory")
                .with_mime_type("text/plain"),
        ];
        for (name, _) in self.identity_files() {
            resources.push(
                Resource::new(format!("memcc://identity/{name}"), name)
                    .with_description("An identity file of the agent (layer L0)")
                    .with_mime_type("text/markdown"),
            );
        }
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let text = if request.uri == PROMPT_URI {
            Some(memcc::MEMORY_PROMPT.to_string())
        } else {
            request
                .uri
                .strip_prefix("memcc://identity/")
                .and_then(|name| self.identity_files().into_iter().find(|(n, _)| n == name).map(|(_, text)| text))
        };
        match text {
            Some(t) => Ok(ReadResourceResult::new(vec![ResourceContents::text(t, request.uri)]).into()),
            None => Err(ErrorData::resource_not_found(format!("no resource {}", request.uri), None)),
        }
    }
}

impl MemccMcp {
    /// The agent's identity files (`memory.agentDir` + `memory.identityFiles`) that exist.
    fn identity_files(&self) -> Vec<(String, String)> {
        let memory = &self.memcc.config.memory;
        let Some(dir) = &memory.agent_dir else { return Vec::new() };
        memory
            .identity_files
            .iter()
            .filter(|f| !f.contains(['/', '\\']) && !f.starts_with('.'))
            .filter_map(|f| std::fs::read_to_string(dir.join(f)).ok().map(|t| (f.clone(), t)))
            .collect()
    }
}

/// Serve MCP over standard input and output until the client leaves. A request line over
/// [`stdio::MAX_LINE_BYTES`] is answered with an `invalid_request` error for its id.
pub async fn serve_stdio(server: MemccMcp) -> Result<(), McpError> {
    let (stdin, stdout) = rmcp::transport::stdio();
    let transport = rmcp::transport::async_rw::AsyncRwTransport::new_server(
        stdio::BoundedLines::new(stdin, stdio::MAX_LINE_BYTES),
        stdout,
    )
    .with_max_line_length(stdio::MAX_LINE_BYTES);
    let running = server.serve(transport).await.map_err(|e| McpError::Setup(format!("MCP over stdio: {e}")))?;
    running.waiting().await.map_err(|e| McpError::Setup(format!("MCP over stdio: {e}")))?;
    Ok(())
}

/// Who may reach the HTTP server, besides the address it listens on.
#[derive(Debug, Clone, Default)]
pub struct HttpAccess {
    /// Bearer token every request must carry (required off loopback).
    pub token: Option<String>,
    /// `Host` names (or `host:port`) requests may be addressed to, beside loopback and the bind
    /// address. Empty on an unspecified bind address (0.0.0.0, ::): any, the token guarding it.
    pub allowed_hosts: Vec<String>,
    /// Browser origins (`https://app.example.com:443`, `http://localhost:*`) allowed to call;
    /// a request carrying any other `Origin` is refused (403), as the MCP spec requires
    /// against DNS rebinding. Clients that send no `Origin` (every non-browser one) pass.
    pub allowed_origins: Vec<String>,
}

/// The `Host` names a server bound to `addr` answers: loopback's, the bind address, and what
/// the operator added; `None` (any) for an unspecified bind address with nothing added.
fn allowed_hosts(addr: SocketAddr, extra: &[String]) -> Option<Vec<String>> {
    let ip = addr.ip();
    if ip.is_unspecified() && extra.is_empty() {
        return None;
    }
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    if !ip.is_unspecified() && !ip.is_loopback() {
        hosts.push(ip.to_string());
    }
    hosts.extend(extra.iter().cloned());
    Some(hosts)
}

/// Serve MCP over streamable HTTP at `http://ADDR/mcp` until Ctrl-C. Anywhere but loopback a
/// bearer token is required; with one, every request must carry it. `Host` and `Origin` are
/// checked as [`HttpAccess`] says.
pub async fn serve_http(
    server: MemccMcp,
    addr: SocketAddr,
    access: HttpAccess,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), McpError> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };
    let token = access.token.filter(|t| !t.is_empty());
    if !addr.ip().is_loopback() && token.is_none() {
        return Err(McpError::Setup(format!(
            "listening on {addr} (not loopback) needs a bearer token: MEMCC_MCP_TOKEN (or --token)"
        )));
    }
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_origins(access.allowed_origins.clone())
        .enforce_origin_validation();
    config = match allowed_hosts(addr, &access.allowed_hosts) {
        Some(hosts) => config.with_allowed_hosts(hosts),
        None => config.disable_allowed_hosts(),
    };
    let service =
        StreamableHttpService::new(move || Ok(server.clone()), Arc::new(LocalSessionManager::default()), config);
    let mcp = axum::Router::new().nest_service("/mcp", service);
    let mcp = match token {
        Some(t) => mcp.layer(axum::middleware::from_fn(move |req, next| bearer(t.clone(), req, next))),
        None => mcp,
    };
    // Any other path — OAuth's discovery documents among them — is not found, token or not: a
    // client that met a 401 there would start an OAuth flow MemCC does not offer, instead of
    // saying that a bearer token is needed.
    let router = axum::Router::new().merge(mcp).fallback(|| async {
        (
            axum::http::StatusCode::NOT_FOUND,
            "memcc: not found; MCP is served at /mcp (with a bearer token when the server has one; no OAuth)",
        )
    });
    // Outermost: a browser's preflight carries no token, and is answered here.
    let router = match cors(access.allowed_origins) {
        Some(layer) => router.layer(layer),
        None => router,
    };
    let listener = tokio::net::TcpListener::bind(addr).await?;
    ready(listener.local_addr()?);
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}

/// What lets a page of an allowed origin call from a browser (CORS): the preflight answered,
/// the MCP headers a client sends and reads allowed. `None` without allowed origins (browsers
/// are then refused, as before).
fn cors(allowed: Vec<String>) -> Option<tower_http::cors::CorsLayer> {
    use axum::http::{HeaderName, HeaderValue, Method, header};
    use tower_http::cors::{AllowOrigin, CorsLayer};
    if allowed.is_empty() {
        return None;
    }
    let session = HeaderName::from_static("mcp-session-id");
    let allow = AllowOrigin::predicate(move |origin: &HeaderValue, _| {
        origin.to_str().is_ok_and(|o| origin_allowed(o, &allowed))
    });
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([Method::GET, Method::POST, Method::DELETE])
            .allow_headers([
                header::AUTHORIZATION,
                header::CONTENT_TYPE,
                header::ACCEPT,
                session.clone(),
                HeaderName::from_static("mcp-protocol-version"),
                HeaderName::from_static("last-event-id"),
            ])
            .expose_headers([session])
            .max_age(std::time::Duration::from_secs(600)),
    )
}

/// Whether a browser's `Origin` is one an `--allowed-origin` entry names, read as rmcp reads the
/// entries: scheme and host equal (any letter case); the port equal (a scheme's default port
/// implied), any with `:*`, or any when the entry names none.
fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    fn parts(origin: &str) -> Option<(String, String, Option<u16>)> {
        let uri: axum::http::Uri = origin.trim().parse().ok()?;
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let port = uri.port_u16().or(match scheme.as_str() {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        });
        Some((scheme, uri.host()?.to_ascii_lowercase(), port))
    }
    let Some((scheme, host, port)) = parts(origin) else { return false };
    allowed.iter().any(|entry| {
        let entry = entry.trim();
        let (base, any_port) = entry.strip_suffix(":*").map_or((entry, false), |b| (b, true));
        let names_port = any_port || base.parse::<axum::http::Uri>().is_ok_and(|u| u.port_u16().is_some());
        parts(base).is_some_and(|(s, h, p)| s == scheme && h == host && (any_port || !names_port || p == port))
    })
}

/// Whether an `Authorization` header carries `token`: the scheme in any letter case (RFC 9110),
/// the token compared in constant time.
fn carries_token(header: Option<&str>, token: &str) -> bool {
    use subtle::ConstantTimeEq;
    let Some((scheme, given)) = header.and_then(|h| h.trim().split_once(' ')) else { return false };
    scheme.eq_ignore_ascii_case("bearer") && bool::from(given.trim().as_bytes().ct_eq(token.as_bytes()))
}

async fn bearer(
    token: String,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let given = request.headers().get("authorization").and_then(|v| v.to_str().ok());
    if carries_token(given, &token) {
        return next.run(request).await;
    }
    axum::response::Response::builder()
        .status(401)
        .header("www-authenticate", "Bearer")
        .body(axum::body::Body::from(
            "memcc: a bearer token is required (Authorization: Bearer <the server's MEMCC_MCP_TOKEN>; no OAuth)",
        ))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_served_is_the_catalogue_s_and_every_catalogued_tool_is_served() {
        let router = catalogued(MemccMcp::tool_router());
        let mut served: Vec<_> = router.list_all().into_iter().map(|t| t.name.to_string()).collect();
        served.sort();
        let mut catalogued: Vec<_> = memcc::tools::ALL.iter().map(|t| t.name.to_string()).collect();
        catalogued.sort();
        assert_eq!(served, catalogued);
        for tool in router.list_all() {
            let spec = memcc::tools::spec(&tool.name).unwrap();
            assert_eq!(tool.description.as_deref(), Some(spec.description));
            let hints = tool.annotations.unwrap();
            assert_eq!(hints.read_only_hint, Some(spec.read_only), "{}", spec.name);
            // The schema the plugin is handed is the one served here.
            let served = serde_json::Value::Object((*tool.input_schema).clone());
            let catalogued = memcc::tools::arguments_schema(spec.name).unwrap();
            assert_eq!(served["properties"], catalogued["properties"], "{}", spec.name);
        }
    }

    #[test]
    fn an_origin_is_allowed_as_its_entry_says() {
        let allowed =
            |o: &str, entries: &[&str]| origin_allowed(o, &entries.iter().map(|e| e.to_string()).collect::<Vec<_>>());
        assert!(allowed("https://app.example", &["https://app.example:443"]), "default port implied");
        assert!(allowed("HTTPS://App.Example:443", &["https://app.example"]), "no port named: any");
        assert!(allowed("http://localhost:5173", &["http://localhost:*"]));
        assert!(!allowed("http://localhost:5173", &["http://localhost:3000"]));
        assert!(!allowed("http://app.example", &["https://app.example"]), "another scheme");
        assert!(!allowed("https://app.example.evil", &["https://app.example"]));
        assert!(!allowed("null", &["https://app.example"]));
    }

    #[test]
    fn a_bearer_token_is_read_in_any_letter_case_and_only_whole() {
        assert!(carries_token(Some("Bearer s3cret"), "s3cret"));
        assert!(carries_token(Some("bearer s3cret"), "s3cret"));
        assert!(carries_token(Some("BEARER  s3cret "), "s3cret"));
        assert!(!carries_token(Some("Bearer s3cre"), "s3cret"));
        assert!(!carries_token(Some("Bearer s3cretX"), "s3cret"));
        assert!(!carries_token(Some("Basic s3cret"), "s3cret"));
        assert!(!carries_token(Some("s3cret"), "s3cret"));
        assert!(!carries_token(None, "s3cret"));
    }

    #[test]
    fn allowed_hosts_follow_the_bind_address() {
        let at = |a: &str| a.parse::<SocketAddr>().unwrap();
        let hosts = allowed_hosts(at("192.0.2.7:8080"), &[]).unwrap();
        assert!(hosts.contains(&"192.0.2.7".to_string()) && hosts.contains(&"localhost".to_string()));
        assert_eq!(allowed_hosts(at("0.0.0.0:8080"), &[]), None, "any host: the token guards it");
        let named = allowed_hosts(at("0.0.0.0:8080"), &["mem.example.com".into()]).unwrap();
        assert!(named.contains(&"mem.example.com".to_string()) && !named.contains(&"0.0.0.0".to_string()));
    }
}
