//! MemCC in a host that keeps its own conversation and runs commands at points of it — Claude
//! Code's and Codex's hooks. Such a host builds its prompt itself, so MemCC cannot put recall in
//! it as it does for OpenClaw; instead each hook's answer enters the model's context:
//!
//! - `SessionStart`: what the next session in this project should know — identity, essentials,
//!   where the project's last sessions left off — within a small budget;
//! - `UserPromptSubmit`: recall for the prompt, the project's memories first, and **nothing at
//!   all** when nothing clears the relevance floor ("thanks" gets no tokens);
//! - `Stop`, `SessionEnd`, `PreCompact`: the transcript is queued for import and flush, which a
//!   worker does outside the host's time limit ([`Memcc::drain_transcripts`]). `Stop` flushes
//!   too, at every turn's end: a session's end is not to be counted on (`HookEvent::flushes`).
//!
//! The host's JSON shapes are here too, so the cold command and the warm process answer alike.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Memcc, MemccError};
use memcc_context::{LeftOff, SessionSource};
use memcc_core::bridge::{ContextTurn, Role};
use memcc_core::framing::RECALL_IS_DATA;
use memcc_core::{RecallQuery, estimate_tokens};

/// The points of a host's session MemCC answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HookEvent {
    SessionStart,
    UserPromptSubmit,
    /// A turn ended (Claude Code and Codex).
    Stop,
    /// The session ended (Claude Code).
    SessionEnd,
    /// The host is about to compact its own context.
    PreCompact,
}

impl HookEvent {
    pub const ALL: [HookEvent; 5] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::Stop,
        HookEvent::SessionEnd,
        HookEvent::PreCompact,
    ];

    /// The event a name stands for, as the hosts write it ("SessionStart") or as a command line
    /// does ("session-start", "session_start"), in any case.
    pub fn parse(name: &str) -> Option<Self> {
        let folded: String = name.chars().filter(|c| *c != '-' && *c != '_').collect::<String>().to_lowercase();
        HookEvent::ALL.into_iter().find(|e| e.host_name().to_lowercase() == folded)
    }

    /// Its name in the hosts' configuration and JSON.
    pub fn host_name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::PreCompact => "PreCompact",
        }
    }

    /// Whether the host reads an answer into the model's context (the others are told nothing).
    pub fn answers(self) -> bool {
        matches!(self, HookEvent::SessionStart | HookEvent::UserPromptSubmit)
    }

    /// Whether the session's words are flushed into memory after the import: at its end, when
    /// its host compacts (what it folds away should be in memory first), and at every turn's
    /// end. A session end is not to be counted on — neither host runs it when its terminal is
    /// killed, and Codex cuts it at 3 s — so each turn reaches memory when it ends, and a
    /// session in another terminal can recall it at once; the worker does it outside the
    /// host's time limit ([`Memcc::answer_hook`]).
    fn flushes(self) -> bool {
        matches!(self, HookEvent::SessionEnd | HookEvent::PreCompact | HookEvent::Stop)
    }
}

/// What a hook is given on stdin (the fields MemCC reads; any other is ignored). Every field may
/// be missing: a host's odd payload gets a quiet answer, never a hook error.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct HookInput {
    #[serde(default)]
    pub session_id: String,
    #[serde(default)]
    pub transcript_path: Option<PathBuf>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default)]
    pub hook_event_name: Option<String>,
    /// The subagent a hook fires in (Claude Code's `agent_id`: present only inside a subagent,
    /// absent on the session's own thread).
    #[serde(default, rename = "agent_id")]
    pub subagent: Option<String>,
}

/// Settings of the hooks (`hooks` in the settings file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct HookConfig {
    /// Tokens of what a session is told as it starts (identity, essentials, the project's last
    /// sessions).
    pub session_start_tokens: usize,
    /// Tokens of recall one prompt may get (only what clears the relevance floor).
    pub prompt_tokens: usize,
    /// How many of the project's earlier sessions a new one is told about.
    pub recent_sessions: usize,
    /// Keep a MemCC process running for the hooks (`memcc daemon`), so a prompt's recall does
    /// not wait for the embedding model to load; off, every hook loads MemCC itself.
    pub warm: bool,
    /// Seconds the warm process waits for a request before it ends.
    pub idle_secs: u64,
    /// Projects (repository paths, or any directory: its sessions and those under it) whose
    /// sessions get nothing from MemCC — no session brief, no recall; what they say is still
    /// remembered. For one session instead, start its host with `MEMCC_QUIET=1`.
    pub quiet_projects: Vec<String>,
    /// Inject into subagents too (Claude Code's `Task` workers). Off: a subagent was given its
    /// task by the session that already had MemCC's recall, and a worker's prompts are not the
    /// user's.
    pub subagents: bool,
}

impl Default for HookConfig {
    fn default() -> Self {
        HookConfig {
            session_start_tokens: 700,
            prompt_tokens: 900,
            recent_sessions: 3,
            warm: true,
            idle_secs: 1800,
            quiet_projects: Vec::new(),
            subagents: false,
        }
    }
}

/// The seconds MemCC asks a host to give its hooks that answer (`SessionStart`,
/// `UserPromptSubmit`): room for a cold start that loads the model on a loaded machine.
pub const ANSWER_TIMEOUT_SECS: u64 = 30;

/// The seconds it asks for the hooks that only queue a transcript (one write).
pub const QUEUE_TIMEOUT_SECS: u64 = 10;

/// How long a hook that answers waits for the warm process before it answers cold: what is left
/// of [`ANSWER_TIMEOUT_SECS`] must hold a cold answer (about a second, more on a loaded machine).
pub const WARM_PATIENCE_SECS: u64 = ANSWER_TIMEOUT_SECS - 10;

/// The environment variable that keeps one session quiet: a host started with it set (to
/// anything but "0", "false", "off" or "no") gets nothing injected by MemCC's hooks; what the
/// session says is still remembered.
pub const QUIET_ENV: &str = "MEMCC_QUIET";

/// Whether `value` (of [`QUIET_ENV`]) asks for quiet.
pub fn quiet(value: Option<&str>) -> bool {
    value
        .map(str::trim)
        .is_some_and(|v| !v.is_empty() && !["0", "false", "off", "no"].contains(&v.to_ascii_lowercase().as_str()))
}

impl HookConfig {
    /// Whether sessions in `project` get nothing injected ([`HookConfig::quiet_projects`]).
    pub fn quiet_in(&self, project: &str) -> bool {
        let project = std::path::Path::new(project);
        self.quiet_projects
            .iter()
            .filter(|q| !q.trim().is_empty())
            .any(|q| project.starts_with(memcc_core::project::project_of(std::path::Path::new(q.trim()))))
    }
}

/// What MemCC answers a hook.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookAnswer {
    pub event: HookEvent,
    /// Text for the model's context; `None`: say nothing.
    pub context: Option<String>,
    /// A transcript was queued for import (a worker must drain the queue).
    pub queued: bool,
}

impl HookAnswer {
    /// What to print on stdout for the host, which both Claude Code and Codex read:
    /// `{"hookSpecificOutput": {"hookEventName": …, "additionalContext": …}}`; `None` when there
    /// is nothing to add (print nothing: an empty answer is no error).
    pub fn host_output(&self) -> Option<serde_json::Value> {
        let context = self.context.as_ref().filter(|c| !c.trim().is_empty())?;
        self.event.answers().then(|| {
            serde_json::json!({
                "hookSpecificOutput": {"hookEventName": self.event.host_name(), "additionalContext": context}
            })
        })
    }
}

/// The turns before a prompt its recall reads as context (the session ranker weighs the
/// nearest four).
const PROMPT_CONTEXT_TURNS: usize = 4;

/// The longest a last word of a session is shown at session start, in characters.
const LEFT_OFF_CHARS: usize = 220;
/// The longest a session's title or a project's name is shown at session start, in characters.
const NAME_CHARS: usize = 80;
/// The longest a value a session set is shown at session start, in characters.
const SETTLED_CHARS: usize = 140;

impl Memcc {
    /// Answer `event` of a host's session as [`crate::hooks`] says. `agent` is whose memory.
    pub fn answer_hook(&self, agent: &str, event: HookEvent, input: &HookInput) -> Result<HookAnswer, MemccError> {
        let project = input.cwd.as_deref().map(memcc_core::project::project_of);
        let subagent = input.subagent.as_deref().is_some_and(|a| !a.trim().is_empty());
        let quiet = project.as_deref().is_some_and(|p| self.config.hooks.quiet_in(p))
            || (subagent && !self.config.hooks.subagents);
        let context = match event {
            _ if quiet => None,
            HookEvent::SessionStart => self.session_brief(agent, project.as_deref(), &input.session_id)?,
            HookEvent::UserPromptSubmit => {
                let prompt = input.prompt.as_deref().unwrap_or_default();
                let context = self.prompt_context(input, prompt);
                self.prompt_recall(agent, project.as_deref(), &input.session_id, prompt, context)?
            }
            HookEvent::Stop | HookEvent::SessionEnd | HookEvent::PreCompact => None,
        };
        let queued = match (&input.transcript_path, event.flushes()) {
            (Some(path), true) if !input.session_id.trim().is_empty() => {
                self.queue_transcript(agent, &input.session_id, path, project.as_deref(), true)?;
                true
            }
            _ => false,
        };
        Ok(HookAnswer { event, context, queued })
    }

    /// What a new session should know: the agent's identity and essentials, and where the
    /// project's last sessions left off, within `hooks.sessionStartTokens`; `None` when there is
    /// nothing yet.
    pub fn session_brief(
        &self,
        agent: &str,
        project: Option<&str>,
        session: &str,
    ) -> Result<Option<String>, MemccError> {
        let budget = self.config.hooks.session_start_tokens;
        let left_off = match project {
            Some(p) => self.context.left_off(agent, p, session, self.config.hooks.recent_sessions)?,
            None => Vec::new(),
        };
        let sessions = left_off_section(&left_off, budget / 2);
        let header = match project {
            Some(p) => format!(
                "MemCC memory for this project ({}), from earlier sessions. memory_search finds more; cite a \
                 memory as (mem_N).",
                // A directory's name is the user's, but it is not the model's to read as markup.
                memcc_core::framing::escape_in_section(&cut(memcc_core::project::project_name(p), NAME_CHARS))
                    .chars()
                    .filter(|c| !c.is_control())
                    .collect::<String>()
            ),
            None => "MemCC memory from earlier sessions. memory_search finds more; cite a memory as (mem_N).".into(),
        };
        // The standing layers get what the header lines and the sessions leave (a line break each).
        let taken = [Some(header.as_str()), Some(RECALL_IS_DATA), sessions.as_deref()]
            .into_iter()
            .flatten()
            .map(|t| estimate_tokens(t) + 1)
            .sum::<usize>();
        // Memory that cannot open leaves the session list standing.
        let standing = match self.memory() {
            Ok(m) => m.standing_in(agent, project, budget.saturating_sub(taken))?,
            Err(e) => {
                tracing::warn!(error = %e, "session start without long-term memory");
                Vec::new()
            }
        };
        if standing.is_empty() && sessions.is_none() {
            return Ok(None);
        }
        let mut out = vec![header];
        out.push(RECALL_IS_DATA.to_string());
        out.extend(standing.into_iter().map(|s| s.body));
        out.extend(sessions);
        Ok(Some(out.join("\n")))
    }

    /// The turns before a prompt, read from the end of its session's transcript (the prompt
    /// itself left out when the host wrote it there already): the session ranker's context.
    fn prompt_context(&self, input: &HookInput, prompt: &str) -> Vec<ContextTurn> {
        let Some(path) = &input.transcript_path else { return Vec::new() };
        let mut turns = crate::transcripts::last_turns(path, PROMPT_CONTEXT_TURNS + 1);
        if turns.last().is_some_and(|t| t.role == Role::User && t.text.trim() == prompt.trim()) {
            turns.pop();
        }
        let from = turns.len().saturating_sub(PROMPT_CONTEXT_TURNS);
        turns.drain(..from);
        turns
    }

    /// Recall for one prompt, the project's memories first, within `hooks.promptTokens`; `None`
    /// when nothing clears the relevance floor (or memory is unavailable: a prompt never waits
    /// on an error).
    pub fn prompt_recall(
        &self,
        agent: &str,
        project: Option<&str>,
        session: &str,
        prompt: &str,
        context: Vec<ContextTurn>,
    ) -> Result<Option<String>, MemccError> {
        if prompt.trim().is_empty() {
            return Ok(None);
        }
        let memory = match self.memory() {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(error = %e, "a prompt without long-term memory");
                return Ok(None);
            }
        };
        let query = RecallQuery {
            agent_id: agent.to_string(),
            session_id: session.to_string(),
            text: prompt.to_string(),
            as_of: Some(memcc_core::time::now_ms()),
            context,
            project: project.map(String::from),
        };
        let lead = format!("MemCC recalled these for this prompt (memory_get reads one whole); {RECALL_IS_DATA}");
        let budget = self.config.hooks.prompt_tokens.saturating_sub(estimate_tokens(&lead) + 1);
        Ok(memory.recall_for_prompt(&query, budget)?.map(|s| format!("{lead}\n{}", s.body)))
    }
}

/// `<memcc-sessions>`: the project's last sessions, newest first, each with its title, what its
/// user last asked (more than "ok") and the answer, and the values it set, within `budget`
/// tokens (a session's values go before the session does).
fn left_off_section(left_off: &[LeftOff], budget: usize) -> Option<String> {
    let mut lines = Vec::new();
    let mut used = estimate_tokens("<memcc-sessions>\n</memcc-sessions>");
    for l in left_off {
        let s = &l.listing;
        let day = memcc_core::time::day(s.last_at).unwrap_or_default();
        let source = s.meta.source.map(SessionSource::label).unwrap_or("session");
        let title = s.meta.title.as_deref().map(|t| format!(" \"{}\"", cut(t, NAME_CHARS))).unwrap_or_default();
        let mut line = format!("- {day} {source}{title}");
        if let Some(u) = &l.user {
            line.push_str(&format!(" — last asked: {}", cut(u, LEFT_OFF_CHARS)));
        }
        if let Some(a) = &l.assistant {
            line.push_str(&format!(" — answer: {}", cut(a, LEFT_OFF_CHARS)));
        }
        let settled: Vec<String> = l.settled.iter().map(|s| cut(s, SETTLED_CHARS)).collect();
        let with_settled = format!("{line} — set: {}", settled.join(" · "));
        let fits = |line: &str| {
            let line = memcc_core::framing::escape_in_section(line);
            let t = estimate_tokens(&line) + 1;
            (used + t <= budget).then_some((line, t))
        };
        let Some((line, t)) = (if settled.is_empty() { None } else { fits(&with_settled) }).or_else(|| fits(&line))
        else {
            break;
        };
        used += t;
        lines.push(line);
    }
    (!lines.is_empty()).then(|| format!("<memcc-sessions>\n{}\n</memcc-sessions>", lines.join("\n")))
}

/// `text` on one line, at most `max` characters.
fn cut(text: &str, max: usize) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= max {
        return one;
    }
    let mut c: String = one.chars().take(max.saturating_sub(1)).collect();
    c.push('…');
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_reads_as_the_hosts_and_a_command_line_write_it() {
        for e in HookEvent::ALL {
            assert_eq!(HookEvent::parse(e.host_name()), Some(e));
        }
        assert_eq!(HookEvent::parse("user-prompt-submit"), Some(HookEvent::UserPromptSubmit));
        assert_eq!(HookEvent::parse("session_end"), Some(HookEvent::SessionEnd));
        assert_eq!(HookEvent::parse("PostToolUse"), None);
    }

    #[test]
    fn an_answer_is_the_json_both_hosts_read_and_nothing_when_there_is_nothing() {
        let said = HookAnswer { event: HookEvent::UserPromptSubmit, context: Some("x".into()), queued: false };
        assert_eq!(
            said.host_output().unwrap(),
            serde_json::json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "x"}})
        );
        let quiet = HookAnswer { context: None, ..said.clone() };
        assert_eq!(quiet.host_output(), None);
        let blank = HookAnswer { context: Some(" \n".into()), ..said };
        assert_eq!(blank.host_output(), None);
    }

    #[test]
    fn quiet_is_asked_by_any_value_but_a_no() {
        for v in ["1", "true", "yes", "on", " 1 "] {
            assert!(quiet(Some(v)), "{v}");
        }
        for v in [None, Some(""), Some("0"), Some("false"), Some("OFF"), Some("no")] {
            assert!(!quiet(v), "{v:?}");
        }
    }

    #[test]
    fn a_quiet_project_is_its_directory_and_what_is_under_it() {
        let dir = tempfile::tempdir().unwrap();
        let shop = dir.path().join("shop");
        std::fs::create_dir_all(shop.join(".git")).unwrap();
        std::fs::create_dir_all(shop.join("web/src")).unwrap();
        let blog = dir.path().join("blog");
        let config = HookConfig { quiet_projects: vec![format!("{}/web/", shop.display())], ..HookConfig::default() };
        let project = |p: &std::path::Path| memcc_core::project::project_of(p);
        assert!(config.quiet_in(&project(&shop.join("web/src"))), "a path inside the repository names it");
        assert!(config.quiet_in(&project(&shop)));
        assert!(!config.quiet_in(&project(&blog)));
        assert!(!HookConfig::default().quiet_in(&project(&shop)));
    }

    #[test]
    fn a_payload_missing_every_field_still_reads() {
        let input: HookInput = serde_json::from_str(r#"{"extra": 1}"#).unwrap();
        assert_eq!(input, HookInput::default());
    }
}
