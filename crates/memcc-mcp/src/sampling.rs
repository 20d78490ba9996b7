//! The MCP client's own model, through sampling (`sampling/createMessage`): when a client
//! offers it, the summaries of the compaction its call starts are written by its model; else
//! (or when it fails) by the offline summariser. Each compaction asks the client whose call
//! started it ([`for_client`]), never another's.

use std::cell::RefCell;
use std::time::Duration;

#[allow(deprecated)] // sampling is deprecated from protocol 2026-07-28; clients before it offer it
use rmcp::model::{CreateMessageRequestParams, Role, SamplingMessage};
use rmcp::{Peer, RoleServer};

use memcc::core::{ChatModel, ChatRequest, LlmError};

/// How long a summary waits for the client's model (a client may ask its user first).
const SAMPLING_TIMEOUT: Duration = Duration::from_secs(60);

thread_local! {
    /// The client whose call this (blocking) thread works for.
    static CLIENT: RefCell<Option<Peer<RoleServer>>> = const { RefCell::new(None) };
}

/// Run `work` on behalf of `client`: a summary it writes asks that client's model.
pub(crate) fn for_client<T>(client: Option<Peer<RoleServer>>, work: impl FnOnce() -> T) -> T {
    CLIENT.with(|c| *c.borrow_mut() = client);
    let out = work();
    CLIENT.with(|c| *c.borrow_mut() = None);
    out
}

/// The client's model as a [`ChatModel`], for MemCC's summaries. Its calls come from tokio's
/// blocking pool, so it waits on the runtime's `handle`.
pub struct ClientModel {
    handle: tokio::runtime::Handle,
}

impl ClientModel {
    pub fn new(handle: tokio::runtime::Handle) -> Self {
        ClientModel { handle }
    }
}

impl ChatModel for ClientModel {
    #[allow(deprecated)]
    fn complete(&self, request: &ChatRequest) -> Result<String, LlmError> {
        let Some(client) = CLIENT.with(|c| c.borrow().clone()) else {
            return Err(LlmError::Absent("no MCP client waits on this work".into()));
        };
        let offers = client.peer_info().is_some_and(|info| info.capabilities.sampling.is_some());
        if !offers {
            return Err(LlmError::Absent("the MCP client offers no sampling".into()));
        }
        let messages = request
            .messages
            .iter()
            .map(|m| match m.role.as_str() {
                "assistant" => SamplingMessage::assistant_text(m.content.clone()),
                _ => SamplingMessage::user_text(m.content.clone()),
            })
            .collect();
        let mut params = CreateMessageRequestParams::new(messages, request.max_tokens.unwrap_or(1024));
        if let Some(system) = &request.system {
            params = params.with_system_prompt(system.clone());
        }
        if let Some(t) = request.temperature {
            params = params.with_temperature(t);
        }
        // The timer is made in the runtime's context: this may be a thread of MemCC's own (a
        // compaction the call no longer waits for), not one of the runtime's.
        let asked =
            self.handle.block_on(async { tokio::time::timeout(SAMPLING_TIMEOUT, client.create_message(params)).await });
        let result = match asked {
            Ok(Ok(result)) => result,
            Ok(Err(e)) => return Err(LlmError::Host(format!("the MCP client's model failed: {e}"))),
            Err(_) => return Err(LlmError::Host("the MCP client's model did not answer in time".into())),
        };
        if result.message.role != Role::Assistant {
            return Err(LlmError::Host("the MCP client's model answered as the user".into()));
        }
        let text: String = result.message.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
        if text.trim().is_empty() {
            return Err(LlmError::Host("the MCP client's model answered with no text".into()));
        }
        Ok(text)
    }

    fn label(&self) -> String {
        "mcp-client".into()
    }
}
