//! [`ContextEngine`]: the facade hosts and bindings use. It owns the store, the settings, the
//! summariser and the memory bridge, and exposes one method per host operation.

use std::io::BufRead;
use std::sync::Arc;

use serde::Serialize;

use crate::assemble::{Assembled, Assembler};
use crate::compact::{CompactionOutcome, Compactor, Mode};
use crate::config::ContextConfig;
use crate::error::{ContextError, Result};
use crate::expand::{self, Description, ExpandRequest, Expansion, GrepHit, GrepRequest};
use crate::import::{LineError, ParsedTranscript, parse_jsonl};
use crate::large_file::prepare;
use crate::message::AgentMessage;
use crate::store::{
    AppendOutcome, ContextStore, Conversation, ConversationMeta, SessionListing, SessionSource, StoreStats,
};
use crate::summarize::{ExtractiveSummarizer, Summarizer};
use memcc_core::bridge::{MemoryBridge, NoopBridge};

/// Identifies a conversation the way the host does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionRef {
    pub session_id: String,
    pub session_key: Option<String>,
    /// Defaults to the configured agent.
    pub agent_id: Option<String>,
    /// The project the host says the session is held in ([`memcc_core::project`]): recorded on
    /// the conversation, and recall favours its memories.
    pub project: Option<String>,
    /// Where the session comes from (the host's kind), recorded on the conversation when it is
    /// made.
    pub source: Option<SessionSource>,
}

impl SessionRef {
    pub fn new(session_id: &str) -> Self {
        SessionRef { session_id: session_id.to_string(), ..Default::default() }
    }
}

impl From<&str> for SessionRef {
    fn from(s: &str) -> Self {
        SessionRef::new(s)
    }
}

impl From<&String> for SessionRef {
    fn from(s: &String) -> Self {
        SessionRef::new(s)
    }
}

impl From<&SessionRef> for SessionRef {
    fn from(s: &SessionRef) -> Self {
        s.clone()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    pub session_id: String,
    pub added: usize,
    pub duplicates: usize,
    pub other_entries: usize,
    pub errors: Vec<LineError>,
    /// Messages stored as given, of no kind MemCC reads ([`crate::import::ParsedTranscript::unread`]).
    pub unread: Vec<LineError>,
}

/// Where a session left off: what it is, the last thing its user asked that says more than "ok"
/// and what the assistant answered to it, and the values its last messages set.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeftOff {
    #[serde(flatten)]
    pub listing: SessionListing,
    pub user: Option<String>,
    pub assistant: Option<String>,
    /// The newest sentences of its last messages that state a coded value (a port, a path, a
    /// limit: [`memcc_core::coded`]), newest first, each once.
    pub settled: Vec<String>,
}

/// The messages read back from a session's end for [`LeftOff`].
const LEFT_OFF_MESSAGES: usize = 40;
/// The most [`LeftOff::settled`] sentences kept.
const SETTLED: usize = 3;

impl LeftOff {
    /// Where `listing`'s session left off, from its last `tail` messages (oldest first).
    fn read(listing: SessionListing, tail: &[crate::store::StoredMessage]) -> LeftOff {
        use memcc_core::bridge::Role;
        use memcc_core::coded::{coded_values, says_little};
        let is = |m: &crate::store::StoredMessage, role: Role| m.role == role;
        let asked = tail
            .iter()
            .rposition(|m| is(m, Role::User) && !says_little(&m.content))
            .or_else(|| tail.iter().rposition(|m| is(m, Role::User)));
        let answered = asked
            .and_then(|at| {
                let after = &tail[at + 1..];
                after.iter().find(|m| is(m, Role::Assistant) && !says_little(&m.content)).or_else(|| after.first())
            })
            .or_else(|| tail.iter().rev().find(|m| is(m, Role::Assistant)));
        let user = asked.map(|at| tail[at].content.clone());
        let assistant = answered.filter(|m| is(m, Role::Assistant)).map(|m| m.content.clone());
        let mut settled: Vec<String> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        'messages: for m in tail.iter().rev() {
            let sentences: Vec<&str> = memcc_core::text::sentences_of(&m.content).collect();
            for s in sentences.into_iter().rev() {
                let values = coded_values(s);
                let shown = |t: &Option<String>| t.as_deref().is_some_and(|t| t.contains(s.trim()));
                if values.is_empty() || shown(&user) || shown(&assistant) {
                    continue;
                }
                // A sentence is kept for a value no newer one set.
                if values.iter().all(|v| seen.contains(v)) {
                    continue;
                }
                seen.extend(values);
                settled.push(s.trim().to_string());
                if settled.len() == SETTLED {
                    break 'messages;
                }
            }
        }
        LeftOff { listing, user, assistant, settled }
    }
}

pub struct ContextEngine {
    store: ContextStore,
    config: ContextConfig,
    summarizer: Arc<dyn Summarizer>,
    bridge: Arc<dyn MemoryBridge>,
}

impl ContextEngine {
    /// An engine with the offline defaults: extractive summaries, no memory.
    pub fn new(store: ContextStore, config: ContextConfig) -> Result<Self> {
        config.validate()?;
        Ok(ContextEngine { store, config, summarizer: Arc::new(ExtractiveSummarizer), bridge: Arc::new(NoopBridge) })
    }

    pub fn with_summarizer(mut self, summarizer: Arc<dyn Summarizer>) -> Self {
        self.summarizer = summarizer;
        self
    }

    pub fn with_bridge(mut self, bridge: Arc<dyn MemoryBridge>) -> Self {
        self.bridge = bridge;
        self
    }

    pub fn store(&self) -> &ContextStore {
        &self.store
    }

    pub fn config(&self) -> &ContextConfig {
        &self.config
    }

    fn agent_of<'a>(&'a self, session: &'a SessionRef) -> &'a str {
        session.agent_id.as_deref().unwrap_or(&self.config.agent_id)
    }

    /// The conversation for `session`, created on first use. A session id is its agent's own:
    /// another agent's session of the same id is a different conversation.
    pub fn session(&self, session: &SessionRef) -> Result<Conversation> {
        if session.session_id.trim().is_empty() {
            return Err(ContextError::Input("session id must not be empty".into()));
        }
        let agent = self.agent_of(session);
        let mut c = self.store.conversation(&session.session_id, session.session_key.as_deref(), agent)?;
        let new_project = session.project.as_ref().filter(|p| c.project.as_ref() != Some(*p));
        // Where it came from is said once (an import may have said it better already).
        let new_source = session.source.filter(|_| c.source.is_none());
        if new_project.is_some() || new_source.is_some() {
            let meta = ConversationMeta { project: new_project.cloned(), source: new_source, ..Default::default() };
            self.store.set_conversation_meta(c.id, &meta)?;
            c.project = c.project.or(new_project.cloned());
            c.source = c.source.or(new_source);
        }
        Ok(c)
    }

    /// Record what a conversation is (its project, title, source, branch), creating it on first
    /// use; each field given replaces the stored one.
    pub fn describe_session(&self, session: &SessionRef, meta: &ConversationMeta) -> Result<Conversation> {
        let mut c = self.session(session)?;
        self.store.set_conversation_meta(c.id, meta)?;
        if meta.project.is_some() {
            c.project = meta.project.clone();
        }
        Ok(c)
    }

    /// Where the agent's latest sessions in `project` left off (`except` left out), newest first:
    /// each with the last words of its user and of its assistant.
    pub fn left_off(&self, agent: &str, project: &str, except: &str, limit: usize) -> Result<Vec<LeftOff>> {
        let mut out = Vec::new();
        // A few more than asked, for the sessions left out (`except`, and any with nothing said).
        for listing in self.store.session_listing(Some(agent), Some(project), limit + 2)? {
            if out.len() == limit {
                break;
            }
            if listing.session_id == except || listing.messages == 0 {
                continue;
            }
            let Some(c) = self.store.find_conversation(agent, &listing.session_id)? else { continue };
            let tail = self.store.last_messages(c.id, LEFT_OFF_MESSAGES)?;
            out.push(LeftOff::read(listing, &tail));
        }
        Ok(out)
    }

    /// The agent's conversations (every agent's with `None`), in `project` when given, the most
    /// recently spoken in first.
    pub fn sessions(&self, agent: Option<&str>, project: Option<&str>, limit: usize) -> Result<Vec<SessionListing>> {
        Ok(self.store.session_listing(agent, project, limit)?)
    }

    /// A stored conversation of the session's agent; another agent's is "unknown".
    pub fn existing(&self, session: &SessionRef) -> Result<Conversation> {
        self.store
            .find_conversation(self.agent_of(session), &session.session_id)?
            .ok_or_else(|| ContextError::UnknownSession(session.session_id.clone()))
    }

    /// What a read may see: one session of the agent, or every conversation of the agent.
    fn scope(&self, agent: Option<&str>, session_id: Option<&str>) -> Result<Vec<i64>> {
        let agent = agent.unwrap_or(&self.config.agent_id);
        match session_id {
            Some(s) => Ok(vec![
                self.existing(&SessionRef {
                    session_id: s.into(),
                    agent_id: Some(agent.into()),
                    ..Default::default()
                })?
                .id,
            ]),
            None => Ok(self.store.conversation_ids_of(agent)?),
        }
    }

    /// Store messages (idempotently; see [`ContextStore::append_messages`]).
    pub fn ingest_batch(&self, session: &SessionRef, messages: &[AgentMessage]) -> Result<AppendOutcome> {
        let conversation = self.session(session)?;
        let prepared: Vec<_> = messages.iter().map(|m| prepare(m, self.config.large_file_threshold_tokens)).collect();
        Ok(self.store.append_messages(conversation.id, &prepared)?)
    }

    pub fn ingest(&self, session: &SessionRef, message: &AgentMessage) -> Result<AppendOutcome> {
        self.ingest_batch(session, std::slice::from_ref(message))
    }

    /// Persist one turn exactly once per `advancement_key`; `None` when the key was seen before.
    pub fn commit_turn(
        &self,
        session: &SessionRef,
        advancement_key: &str,
        messages: &[AgentMessage],
    ) -> Result<Option<AppendOutcome>> {
        if advancement_key.is_empty() {
            return Err(ContextError::Input("advancement key must not be empty".into()));
        }
        let conversation = self.session(session)?;
        let prepared: Vec<_> = messages.iter().map(|m| prepare(m, self.config.large_file_threshold_tokens)).collect();
        Ok(self.store.append_turn(conversation.id, advancement_key, &prepared)?)
    }

    /// Import a JSONL transcript. Bad lines are reported and skipped; re-importing adds nothing.
    /// Without a session id, the file's OpenClaw session header names the session.
    pub fn import_jsonl(&self, session_id: Option<&str>, reader: impl BufRead) -> Result<ImportReport> {
        self.import_transcript(session_id, &ConversationMeta::default(), reader)
    }

    /// [`Self::import_jsonl`], recording what the session is: what the transcript says (its
    /// project — the repository of its working directory —, branch, title, and its format as
    /// its source), each field of `meta` given in its place.
    pub fn import_transcript(
        &self,
        session_id: Option<&str>,
        meta: &ConversationMeta,
        reader: impl BufRead,
    ) -> Result<ImportReport> {
        let parsed = parse_jsonl(reader)?;
        let session_id = session_id.map(String::from).or(parsed.header_session_id.clone()).ok_or_else(|| {
            ContextError::Input("no session id given and the transcript has no session header".into())
        })?;
        self.import_parsed_as(&SessionRef::new(&session_id), meta, parsed)
    }

    /// [`Self::import_transcript`] into `session` (of its agent), whatever the file's header says.
    pub fn import_transcript_as(
        &self,
        session: &SessionRef,
        meta: &ConversationMeta,
        reader: impl BufRead,
    ) -> Result<ImportReport> {
        self.import_parsed_as(session, meta, parse_jsonl(reader)?)
    }

    /// [`Self::import_transcript_as`] of a transcript already read.
    pub fn import_parsed_as(
        &self,
        session: &SessionRef,
        meta: &ConversationMeta,
        parsed: ParsedTranscript,
    ) -> Result<ImportReport> {
        let session_id = session.session_id.clone();
        let said = &parsed.meta;
        let meta = ConversationMeta {
            project: meta
                .project
                .clone()
                .or_else(|| said.cwd.as_deref().map(|d| memcc_core::project::project_of(std::path::Path::new(d)))),
            title: meta.title.clone().or_else(|| said.title.clone()),
            source: meta.source.or(parsed.source()),
            branch: meta.branch.clone().or_else(|| said.branch.clone()),
        };
        let outcome = if parsed.messages.is_empty()
            && self.store.find_conversation(self.agent_of(session), &session_id)?.is_none()
        {
            // Nothing said: no conversation is made of it.
            AppendOutcome::default()
        } else {
            self.describe_session(session, &meta)?;
            self.ingest_batch(session, &parsed.messages)?
        };
        Ok(ImportReport {
            session_id,
            added: outcome.inserted.len(),
            duplicates: outcome.duplicates,
            other_entries: parsed.other_entries,
            errors: parsed.errors,
            unread: parsed.unread,
        })
    }

    /// Compact when over `contextThreshold × budget` (always, with `force`), handing each
    /// summary to memory as it commits.
    pub fn compact(&self, session: impl Into<SessionRef>, budget: usize, force: bool) -> Result<CompactionOutcome> {
        self.compact_with(&session.into(), budget, if force { Mode::Force } else { Mode::Normal }, true)
    }

    /// End of a session: summarise everything, the fresh tail included, so every message has
    /// been handed to memory. The next assemble then starts from summaries only.
    pub fn flush(&self, session: impl Into<SessionRef>, budget: usize) -> Result<CompactionOutcome> {
        self.compact_with(&session.into(), budget, Mode::Flush, true)
    }

    /// [`ContextEngine::compact`] (or, with `flush`, [`ContextEngine::flush`]) that leaves the
    /// hand-offs to memory in the outbox: a host returns to its user sooner and calls
    /// [`ContextEngine::hand_off`] afterwards, where embedding and triple extraction happen.
    pub fn compact_deferred(
        &self,
        session: impl Into<SessionRef>,
        budget: usize,
        force: bool,
        flush: bool,
    ) -> Result<CompactionOutcome> {
        let mode = match (flush, force) {
            (true, _) => Mode::Flush,
            (false, true) => Mode::Force,
            (false, false) => Mode::Normal,
        };
        self.compact_with(&session.into(), budget, mode, false)
    }

    /// Deliver the session's summaries waiting in the outbox to memory; how many went.
    pub fn hand_off(&self, session: impl Into<SessionRef>) -> Result<usize> {
        let conversation = self.existing(&session.into())?;
        self.compactor(Mode::Normal, true).drain_outbox(&conversation)
    }

    /// Deliver every conversation's summaries waiting in the outbox (what a crash, or a process
    /// that ended before its hand-off, left behind); how many went. Hosts call it as they
    /// start, so a conversation that is never compacted again still reaches memory.
    pub fn hand_off_all(&self) -> Result<usize> {
        let compactor = self.compactor(Mode::Normal, true);
        let mut delivered = 0;
        for conversation in self.store.conversations_with_handoffs()? {
            delivered += compactor.drain_outbox(&conversation)?;
        }
        // Parked after a long outage: when memory takes the oldest now, the rest go too.
        if let Some((summary_id, json)) = self.store.outbox_oldest_parked()? {
            let taken = match serde_json::from_str::<memcc_core::SummaryPayload>(&json) {
                Ok(payload) => compactor.deliver(&summary_id, &payload)?,
                Err(_) => false,
            };
            if taken {
                delivered += 1;
                let unparked = self.store.outbox_unpark()?;
                tracing::info!(unparked, "memory answers again: the hand-offs parked during its outage are retried");
                for conversation in self.store.conversations_with_handoffs()? {
                    delivered += compactor.drain_outbox(&conversation)?;
                }
            }
        }
        Ok(delivered)
    }

    fn compactor(&self, mode: Mode, hand_off: bool) -> Compactor<'_> {
        Compactor {
            store: &self.store,
            config: &self.config,
            summarizer: &*self.summarizer,
            bridge: &*self.bridge,
            mode,
            hand_off,
        }
    }

    fn compact_with(
        &self,
        session: &SessionRef,
        budget: usize,
        mode: Mode,
        hand_off: bool,
    ) -> Result<CompactionOutcome> {
        let conversation = self.existing(session)?;
        self.compactor(mode, hand_off).run(&conversation, budget)
    }

    /// The prompt for the next model call within `budget` tokens. Read-only.
    pub fn assemble(&self, session: impl Into<SessionRef>, budget: usize, as_of: Option<i64>) -> Result<Assembled> {
        let conversation = self.existing(&session.into())?;
        self.assembler().assemble(&conversation, budget, as_of, "")
    }

    /// Assemble as a host does mid-turn: the session may not be stored yet (a new session's
    /// first turn), and `pending` messages (the turn in progress, appended by the host after the
    /// assembled history) join the recall query. Still read-only.
    pub fn assemble_for(
        &self,
        session: &SessionRef,
        budget: usize,
        as_of: Option<i64>,
        pending: &[AgentMessage],
    ) -> Result<Assembled> {
        let conversation = self.conversation_for(session)?;
        self.assembler().assemble(&conversation, budget, as_of, &pending_text(pending))
    }

    /// The query [`Self::assemble_for`] would hand to memory for the same arguments. Read-only.
    pub fn recall_query(
        &self,
        session: &SessionRef,
        as_of: Option<i64>,
        pending: &[AgentMessage],
    ) -> Result<memcc_core::RecallQuery> {
        let conversation = self.conversation_for(session)?;
        self.assembler().recall_query_for(&conversation, as_of, &pending_text(pending))
    }

    /// The session's conversation as stored, or (not stored yet) the one its first turn creates.
    fn conversation_for(&self, session: &SessionRef) -> Result<Conversation> {
        Ok(match self.store.find_conversation(self.agent_of(session), &session.session_id)? {
            Some(c) => c,
            None => Conversation {
                id: 0,
                session_id: session.session_id.clone(),
                session_key: session.session_key.clone(),
                agent_id: session.agent_id.clone().unwrap_or_else(|| self.config.agent_id.clone()),
                project: session.project.clone(),
                source: session.source,
                uid: String::new(),
            },
        })
    }

    fn assembler(&self) -> Assembler<'_> {
        Assembler { store: &self.store, bridge: &*self.bridge, config: &self.config }
    }

    /// `lcm_grep`: search one session of the request's agent, or all of that agent's.
    pub fn grep(&self, request: &GrepRequest) -> Result<Vec<GrepHit>> {
        let scope = self.scope(request.agent_id.as_deref(), request.session_id.as_deref())?;
        expand::grep(&self.store, &scope, request)
    }

    /// `lcm_describe`: a summary's metadata, span, children and parents, if it is `agent`'s.
    pub fn describe(&self, agent: Option<&str>, summary_id: &str) -> Result<Description> {
        expand::describe(&self.store, &self.scope(agent, None)?, summary_id)
    }

    /// The top of a session's summary DAG, for inspection.
    pub fn dag(&self, session: &SessionRef) -> Result<crate::dag::DagView> {
        crate::dag::view(&self.store, &self.existing(session)?)
    }

    /// A summary of the agent's conversations and its direct sources, for inspection.
    pub fn dag_children(&self, agent: Option<&str>, summary_id: &str) -> Result<crate::dag::DagChildren> {
        crate::dag::children(&self.store, &self.scope(agent, None)?, summary_id)
    }

    /// `lcm_expand_query`: the raw messages / child summaries under ids or a query, within the
    /// request's scope (one session, or the agent's conversations).
    pub fn expand(&self, request: &ExpandRequest) -> Result<Expansion> {
        let scope = self.scope(request.agent_id.as_deref(), request.session_id.as_deref())?;
        expand::expand(&self.store, &scope, request)
    }

    /// Delete a session of the agent and everything stored for it, on the user's request.
    pub fn purge(&self, session: impl Into<SessionRef>) -> Result<crate::purge::PurgeReport> {
        let session = session.into();
        let conversation = self.existing(&session)?;
        let (messages, summaries) = self.store.purge_conversation(conversation.id)?;
        Ok(crate::purge::PurgeReport { session_id: session.session_id, messages, summaries, memory_records: 0 })
    }

    /// Check the lossless invariant and the file's integrity for one session.
    pub fn verify(&self, session: impl Into<SessionRef>) -> Result<crate::verify::VerifyReport> {
        let session = session.into();
        let conversation = self.existing(&session)?;
        crate::verify::verify(&self.store, conversation.id, &session.session_id)
    }

    /// Counts for one session, or for the whole store (every agent: an operator's view).
    pub fn stats(&self, session: Option<SessionRef>) -> Result<StoreStats> {
        match session {
            Some(s) => Ok(self.store.stats(Some(&[self.existing(&s)?.id]))?),
            None => Ok(self.store.stats(None)?),
        }
    }

    /// Counts over `agent`'s conversations (the configured agent's with `None`).
    pub fn agent_stats(&self, agent: Option<&str>) -> Result<StoreStats> {
        Ok(self.store.stats(Some(&self.scope(agent, None)?))?)
    }
}

/// The text of the messages a host will append after the assembled ones.
fn pending_text(pending: &[AgentMessage]) -> String {
    pending.iter().map(AgentMessage::text).collect::<Vec<_>>().join("\n")
}
