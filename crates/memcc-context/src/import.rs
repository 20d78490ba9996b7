//! Reading transcripts, one JSON entry per line, each read as the format it is written in:
//! - OpenClaw session JSONL (`{"type":"message","message":{…}}` among header and bookkeeping
//!   entries) and plain `{role, content}` lines;
//! - Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`: `{"type":"user"|
//!   "assistant","message":{…Anthropic Messages shape…},"timestamp":…}`; `tool_use` blocks become
//!   tool calls, `tool_result` blocks tool results);
//! - Codex CLI rollouts (`~/.codex/sessions/…/rollout-*.jsonl`: `{"type":"response_item",
//!   "payload":{…}}` messages, function calls and their outputs; the session id from
//!   `session_meta`).
//!
//! Bad lines (invalid UTF-8, malformed JSON, non-objects) are reported by line number and
//! skipped; they never stop the good lines from being read.

use std::io::BufRead;

use serde::Serialize;
use serde_json::Value;

use crate::message::AgentMessage;
use crate::store::SessionSource;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LineError {
    pub line: usize,
    pub error: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ParsedTranscript {
    pub messages: Vec<AgentMessage>,
    /// Non-message entries (session headers, model changes…), skipped on purpose.
    pub other_entries: usize,
    pub errors: Vec<LineError>,
    /// Messages of no kind MemCC reads (a role other than user / assistant / toolResult, or one
    /// of those that did not parse): kept and assembled as given, which a host's own entries
    /// need, but a typo ("usr") or another format's role ("system") is worth a word.
    pub unread: Vec<LineError>,
    /// The session id from a session header (OpenClaw `session`, Codex `session_meta`, a
    /// Claude Code entry's `sessionId`), if the file has one.
    pub header_session_id: Option<String>,
    /// The format of the file's first message, when it has one.
    pub format: Option<Format>,
    /// What the transcript says of its session: where it was held, on which branch, its title.
    pub meta: TranscriptMeta,
    /// Tool names by call id, so a result names the tool that produced it.
    #[serde(skip)]
    tools: std::collections::HashMap<String, String>,
    /// Read as a Claude Code subagent's transcript, whose assistant speaks under this name
    /// ([`parse_subagent_jsonl`]).
    #[serde(skip)]
    subagent: Option<String>,
}

impl ParsedTranscript {
    /// Put a subagent's messages ([`parse_subagent_jsonl`]) where they happened: before the
    /// first of this transcript's messages said after the subagent's first (the result it
    /// handed back), else at the end. A subagent works between the parent's call that starts
    /// it and that call's result, so its messages stay together, in order, in between.
    pub fn merge_subagent(&mut self, subagent: ParsedTranscript) {
        let name = subagent.subagent.unwrap_or_default();
        self.errors.extend(
            subagent.errors.into_iter().map(|e| LineError { line: e.line, error: format!("{name}: {}", e.error) }),
        );
        let started = subagent.messages.iter().find_map(AgentMessage::timestamp);
        let after = |m: &AgentMessage| matches!((m.timestamp(), started), (Some(t), Some(s)) if t > s);
        let at = self.messages.iter().position(after).unwrap_or(self.messages.len());
        self.messages.splice(at..at, subagent.messages);
    }

    /// Where the session came from, by the format its messages are in (an OpenClaw session
    /// has its header; plain `{role, content}` lines are an import).
    pub fn source(&self) -> Option<SessionSource> {
        Some(match self.format? {
            Format::ClaudeCode => SessionSource::ClaudeCode,
            Format::Codex => SessionSource::Codex,
            Format::Openclaw if self.header_session_id.is_some() => SessionSource::Openclaw,
            Format::Openclaw => SessionSource::Import,
        })
    }
}

/// What a transcript says of its session, beside its messages.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptMeta {
    /// The working directory it was held in (Claude Code's `cwd`, Codex's `session_meta`,
    /// OpenClaw's session header).
    pub cwd: Option<String>,
    /// The git branch (Claude Code's `gitBranch`, Codex's `git.branch`), the newest named.
    pub branch: Option<String>,
    /// Its title: one its host wrote (Claude Code's `custom-title` over `ai-title` over a
    /// `summary` line), else the first line of its first user message.
    pub title: Option<String>,
    /// How the title was given (higher wins: a user's rename over the host's own over a first line).
    #[serde(skip)]
    title_rank: u8,
}

impl TranscriptMeta {
    /// Keep `title` when it ranks at least as high as the one kept (the newest of a rank wins:
    /// a session renamed twice has the second name).
    fn title(&mut self, title: Option<&str>, rank: u8) {
        let Some(t) = title.map(|t| t.split_whitespace().collect::<Vec<_>>().join(" ")).filter(|t| !t.is_empty())
        else {
            return;
        };
        if rank >= self.title_rank || self.title.is_none() {
            self.title = Some(cut_title(&t));
            self.title_rank = rank;
        }
    }
}

/// The most characters of a title (a first message can be a page long).
const TITLE_CHARS: usize = 80;

fn cut_title(t: &str) -> String {
    if t.chars().count() <= TITLE_CHARS {
        return t.to_string();
    }
    let mut cut: String = t.chars().take(TITLE_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// Ranks of [`TranscriptMeta::title`]'s sources.
const TITLE_FIRST_MESSAGE: u8 = 0;
const TITLE_SUMMARY: u8 = 1;
const TITLE_HOST: u8 = 2;
const TITLE_USER: u8 = 3;

/// The transcript formats MemCC reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// OpenClaw session JSONL, or plain `{role, content}` lines.
    Openclaw,
    ClaudeCode,
    Codex,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Openclaw => "OpenClaw / {role, content}",
            Format::ClaudeCode => "Claude Code",
            Format::Codex => "Codex CLI",
        }
    }
}

/// What an import that found no message says: which formats MemCC reads.
pub const FORMATS_READ: &str = "OpenClaw session JSONL, {role, content} lines, Claude Code transcripts \
(~/.claude/projects/<project>/<session>.jsonl) and Codex CLI rollouts (~/.codex/sessions/…/rollout-*.jsonl)";

/// [`read_entry`], noting a message of no kind MemCC reads by its line.
fn entry(value: Value, line: usize, parsed: &mut ParsedTranscript) -> Result<(), String> {
    let before = parsed.messages.len();
    let result = read_entry(value, parsed);
    if let Some(note) = parsed.messages.get(before).and_then(unread_note) {
        parsed.unread.push(LineError { line, error: note });
    }
    result
}

/// What to tell the sender of a message of no kind MemCC reads (a typo'd role such as "usr",
/// another format's "system", a user message whose content does not parse): it is kept as
/// given, but worth a word. `None` for a message MemCC reads.
pub fn unread_note(m: &AgentMessage) -> Option<String> {
    if !matches!(m, AgentMessage::Unknown(_)) {
        return None;
    }
    let role = m.role();
    Some(if matches!(role.as_str(), "user" | "assistant" | "toolResult") {
        format!("a {role} message that does not parse as one (kept as given)")
    } else {
        format!("role {role:?} is not user, assistant or toolResult (kept as given)")
    })
}

/// A message read from `format`: its messages joined in order, the file's format noted.
fn push(parsed: &mut ParsedTranscript, format: Format, messages: Vec<Value>) {
    if !messages.is_empty() && parsed.format.is_none() {
        parsed.format = Some(format);
    }
    for m in messages.into_iter().map(AgentMessage::from_value) {
        if parsed.meta.title.is_none() && m.role() == "user" {
            let text = m.text();
            parsed.meta.title(text.lines().find(|l| !l.trim().is_empty()), TITLE_FIRST_MESSAGE);
        }
        parsed.messages.push(m);
    }
}

/// The string at `key` of a JSON object, if there is one and it is not blank.
fn str_at<'a>(map: &'a serde_json::Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str).filter(|s| !s.trim().is_empty())
}

/// Interpret one JSON value of a transcript.
fn read_entry(value: Value, parsed: &mut ParsedTranscript) -> Result<(), String> {
    let Value::Object(map) = &value else {
        return Err("expected a JSON object".into());
    };
    if map.contains_key("role") {
        // An older Codex rollout writes its items bare; any other is a plain message.
        if let Some(messages) = codex_item(&value, None, &mut parsed.tools) {
            if messages.is_empty() {
                parsed.other_entries += 1;
            }
            push(parsed, Format::Codex, messages);
            return Ok(());
        }
        push(parsed, Format::Openclaw, vec![value]);
        return Ok(());
    }
    match map.get("type").and_then(Value::as_str) {
        Some("user" | "assistant") if map.get("message").is_some_and(Value::is_object) => {
            if parsed.header_session_id.is_none() {
                parsed.header_session_id = map.get("sessionId").and_then(Value::as_str).map(String::from);
            }
            if parsed.meta.cwd.is_none() {
                parsed.meta.cwd = str_at(map, "cwd").map(String::from);
            }
            if let Some(branch) = str_at(map, "gitBranch") {
                parsed.meta.branch = Some(branch.to_string());
            }
            let messages = claude_code_entry(map, &mut parsed.tools, parsed.subagent.as_deref());
            if messages.is_empty() {
                parsed.other_entries += 1;
            }
            push(parsed, Format::ClaudeCode, messages);
            Ok(())
        }
        Some("response_item") => {
            let payload = map.get("payload").ok_or("response_item without a payload")?;
            let messages = codex_item(payload, map.get("timestamp"), &mut parsed.tools).unwrap_or_default();
            if messages.is_empty() {
                parsed.other_entries += 1;
            }
            push(parsed, Format::Codex, messages);
            Ok(())
        }
        Some("session_meta") => {
            let payload = map.get("payload").and_then(Value::as_object);
            parsed.header_session_id = payload.and_then(|p| str_at(p, "id")).map(String::from);
            if let Some(p) = payload {
                parsed.meta.cwd = str_at(p, "cwd").map(String::from).or(parsed.meta.cwd.take());
                if let Some(branch) = p.get("git").and_then(Value::as_object).and_then(|g| str_at(g, "branch")) {
                    parsed.meta.branch = Some(branch.to_string());
                }
            }
            parsed.other_entries += 1;
            Ok(())
        }
        // Claude Code's titles: a user's `/rename`, its own, and the older summary line.
        Some("custom-title") => {
            parsed.meta.title(str_at(map, "customTitle"), TITLE_USER);
            parsed.other_entries += 1;
            Ok(())
        }
        Some("ai-title") => {
            parsed.meta.title(str_at(map, "aiTitle"), TITLE_HOST);
            parsed.other_entries += 1;
            Ok(())
        }
        Some("summary") => {
            parsed.meta.title(str_at(map, "summary"), TITLE_SUMMARY);
            parsed.other_entries += 1;
            Ok(())
        }
        Some("message") => match map.get("message") {
            Some(Value::Object(_)) => {
                let mut message = map.get("message").cloned().unwrap_or(Value::Null);
                // Entry-level timestamps (ISO strings) stand in when the message has none.
                if message.get("timestamp").is_none()
                    && let (Some(ts), Value::Object(m)) = (map.get("timestamp"), &mut message)
                {
                    m.insert("timestamp".into(), ts.clone());
                }
                push(parsed, Format::Openclaw, vec![message]);
                Ok(())
            }
            _ => Err("message entry without a \"message\" object".into()),
        },
        // An older Codex rollout's bare items.
        Some(
            "function_call" | "function_call_output" | "custom_tool_call" | "custom_tool_call_output" | "reasoning",
        ) => {
            let messages = codex_item(&value, None, &mut parsed.tools).unwrap_or_default();
            if messages.is_empty() {
                parsed.other_entries += 1;
            }
            push(parsed, Format::Codex, messages);
            Ok(())
        }
        Some("session") => {
            parsed.header_session_id = map.get("id").and_then(Value::as_str).map(String::from);
            if let Some(cwd) = str_at(map, "cwd") {
                parsed.meta.cwd = Some(cwd.to_string());
            }
            parsed.other_entries += 1;
            Ok(())
        }
        Some(_) => {
            parsed.other_entries += 1;
            Ok(())
        }
        None => Err("neither a message (no \"role\") nor a typed transcript entry (no \"type\")".into()),
    }
}

/// The text of a content value: a string, or the `text` of its text blocks, joined.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                Value::String(s) => Some(s.clone()),
                _ if matches!(b.get("type").and_then(Value::as_str), Some("image" | "input_image")) => {
                    Some(IMAGE_MARK.to_string())
                }
                _ => b.get("text").and_then(Value::as_str).map(String::from),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// `message` with the entry's timestamp (an ISO string) when it has none of its own.
fn stamped(mut message: Value, timestamp: Option<&Value>) -> Value {
    if let (Some(ts), Value::Object(m)) = (timestamp, &mut message)
        && !m.contains_key("timestamp")
    {
        m.insert("timestamp".into(), ts.clone());
    }
    message
}

/// A Claude Code `user` or `assistant` entry as MemCC's messages: a user's words; a user entry's
/// `tool_result` blocks as tool results (named after their call); an assistant's text and
/// `tool_use` blocks as one assistant message. What the user did not say is none: Claude Code's
/// own notes (`isMeta`), its compaction summary (`isCompactSummary`), a subagent's conversation
/// inline (`isSidechain`: the parent keeps its result), slash commands and their output, and
/// "[Request interrupted by user]". Thinking is the model's scratch work, not what it said, and
/// an image is an `[image]` mark.
fn claude_code_entry(
    entry: &serde_json::Map<String, Value>,
    tools: &mut std::collections::HashMap<String, String>,
    subagent: Option<&str>,
) -> Vec<Value> {
    use serde_json::json;
    let flag = |key: &str| entry.get(key).and_then(Value::as_bool) == Some(true);
    if flag("isMeta") || flag("isCompactSummary") || flag("isSidechain") != subagent.is_some() {
        return Vec::new();
    }
    let ts = entry.get("timestamp");
    let message = entry.get("message").cloned().unwrap_or(Value::Null);
    let content = message.get("content").cloned().unwrap_or(Value::Null);
    let blocks: Vec<Value> = match &content {
        Value::Array(b) => b.clone(),
        Value::String(s) => vec![json!({"type": "text", "text": s})],
        _ => Vec::new(),
    };
    let mut out = Vec::new();
    if entry.get("type").and_then(Value::as_str) == Some("assistant") {
        let mut parts = Vec::new();
        for b in &blocks {
            match b.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let text = b.get("text").and_then(Value::as_str).unwrap_or_default();
                    if text.trim().is_empty() {
                        continue;
                    }
                    // A subagent is named in its words, as a group chat names its speakers, so
                    // a summary or a search hit says who found it.
                    match subagent {
                        Some(name) if parts.is_empty() => {
                            parts.push(json!({"type": "text", "text": format!("{name}: {text}")}))
                        }
                        _ => parts.push(json!({"type": "text", "text": text})),
                    }
                }
                Some("tool_use") => {
                    let id = b.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
                    let name = b.get("name").and_then(Value::as_str).unwrap_or("tool").to_string();
                    tools.insert(id.clone(), name.clone());
                    parts.push(json!({"type": "toolCall", "id": id, "name": name,
                                      "arguments": b.get("input").cloned().unwrap_or(json!({}))}));
                }
                _ => {}
            }
        }
        if !parts.is_empty() {
            let mut said = json!({"role": "assistant", "content": parts});
            if let Some(name) = subagent {
                said["name"] = json!(name);
            }
            out.push(stamped(said, ts));
        }
        return out;
    }
    let mut words = Vec::new();
    for b in &blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("tool_result") => {
                let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or_default().to_string();
                let name = tools.get(&id).cloned().unwrap_or_else(|| "tool".into());
                let text = without_ansi(&text_of(b.get("content").unwrap_or(&Value::Null)));
                let mut result = json!({"role": "toolResult", "toolCallId": id, "toolName": name,
                                        "content": [{"type": "text", "text": text}]});
                if b.get("is_error").and_then(Value::as_bool) == Some(true) {
                    result["isError"] = json!(true);
                }
                out.push(stamped(result, ts));
            }
            Some("text") => {
                let text = b.get("text").and_then(Value::as_str).unwrap_or_default();
                if !is_host_chatter(text) {
                    words.push(without_ansi(text));
                }
            }
            Some("image") => words.push(IMAGE_MARK.to_string()),
            _ => {}
        }
    }
    let words = words.join("\n");
    // A subagent's "user" is the parent model (its task, a follow-up), already in the parent's
    // call: not the user's words.
    if !words.trim().is_empty() && subagent.is_none() {
        out.push(stamped(json!({"role": "user", "content": words}), ts));
    }
    out
}

/// What an image in a transcript becomes in its message's text.
const IMAGE_MARK: &str = "[image]";

/// Text in a user's turn that the user did not say: a slash command as the host records it
/// (`<command-name>/model</command-name>…`), a local command's output or caveat, an interruption.
fn is_host_chatter(text: &str) -> bool {
    let t = text.trim_start();
    const WRAPPERS: [&str; 6] = [
        "<command-name>",
        "<command-message>",
        "<local-command-stdout>",
        "<local-command-stderr>",
        "<local-command-caveat>",
        "[Request interrupted by user",
    ];
    WRAPPERS.iter().any(|w| t.starts_with(w))
}

/// `text` without terminal escape sequences (colours, cursor moves), which a command's output
/// carries into a transcript.
fn without_ansi(text: &str) -> String {
    if !text.contains('\u{1b}') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            // CSI: parameters, then one final byte in @..~.
            Some('[') => {
                chars.next();
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            // OSC: up to BEL or ESC \.
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\u{7}' || (c == '\u{1b}' && chars.peek() == Some(&'\\')) {
                        if c == '\u{1b}' {
                            chars.next();
                        }
                        break;
                    }
                }
            }
            _ => {
                chars.next();
            }
        }
    }
    out
}

/// A Codex CLI item (a rollout's `response_item` payload, or an older rollout's bare line) as
/// MemCC's messages; `None` when it is not a Codex item. The user's and the assistant's words,
/// function calls and their outputs; instructions, reasoning and the environment context Codex
/// sends with each turn are none.
fn codex_item(
    item: &Value,
    timestamp: Option<&Value>,
    tools: &mut std::collections::HashMap<String, String>,
) -> Option<Vec<Value>> {
    use serde_json::json;
    let kind = item.get("type").and_then(Value::as_str)?;
    let ts = timestamp.or_else(|| item.get("timestamp"));
    let parts_text = |content: &Value| -> Option<String> {
        let blocks = content.as_array()?;
        let codex = blocks.iter().any(|b| {
            matches!(b.get("type").and_then(Value::as_str), Some("input_text" | "output_text" | "summary_text"))
        });
        codex.then(|| text_of(content))
    };
    match kind {
        "message" => {
            let role = item.get("role").and_then(Value::as_str).unwrap_or_default();
            let text = parts_text(item.get("content").unwrap_or(&Value::Null))?;
            let boilerplate = ["<environment_context>", "<user_instructions>", "# AGENTS.md instructions"]
                .iter()
                .any(|p| text.trim_start().starts_with(p));
            Some(match role {
                "user" if !boilerplate && !text.trim().is_empty() => {
                    vec![stamped(json!({"role": "user", "content": text}), ts)]
                }
                "assistant" if !text.trim().is_empty() => {
                    vec![stamped(json!({"role": "assistant", "content": [{"type": "text", "text": text}]}), ts)]
                }
                _ => Vec::new(),
            })
        }
        "function_call" | "custom_tool_call" | "local_shell_call" => {
            let id = item.get("call_id").and_then(Value::as_str).unwrap_or_default().to_string();
            let name = item.get("name").and_then(Value::as_str).unwrap_or(kind).to_string();
            let raw = item.get("arguments").or_else(|| item.get("input")).or_else(|| item.get("action"));
            let arguments = match raw {
                Some(Value::String(s)) => serde_json::from_str(s).unwrap_or_else(|_| json!({"input": s})),
                Some(v) => v.clone(),
                None => json!({}),
            };
            tools.insert(id.clone(), name.clone());
            Some(vec![stamped(
                json!({"role": "assistant", "content": [{"type": "toolCall", "id": id, "name": name, "arguments": arguments}]}),
                ts,
            )])
        }
        "function_call_output" | "custom_tool_call_output" => {
            let id = item.get("call_id").and_then(Value::as_str).unwrap_or_default().to_string();
            let name = tools.get(&id).cloned().unwrap_or_else(|| "tool".into());
            // The output is text, or a JSON string whose "output" field is the text.
            let output = match item.get("output") {
                Some(Value::String(s)) => serde_json::from_str::<Value>(s)
                    .ok()
                    .and_then(|v| v.get("output").and_then(Value::as_str).map(String::from))
                    .unwrap_or_else(|| s.clone()),
                Some(v) => v.get("output").and_then(Value::as_str).map_or_else(|| text_of(v), String::from),
                None => String::new(),
            };
            Some(vec![stamped(
                json!({"role": "toolResult", "toolCallId": id, "toolName": name,
                       "content": [{"type": "text", "text": output}]}),
                ts,
            )])
        }
        "reasoning" => Some(Vec::new()),
        _ => None,
    }
}

/// The longest line a transcript may have: a message with a pasted image or a tool's huge output
/// runs to megabytes, but a line past this is not a message (a `/dev/zero`, a corrupt file) and
/// is skipped unread rather than held in memory.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// Read the next line (its newline dropped) into `buf`, at most `max` bytes of it: `Ok(None)` at
/// the end, `Ok(Some(false))` for a line over `max`, whose rest is read past without being kept.
fn next_line(reader: &mut impl BufRead, buf: &mut Vec<u8>, max: usize) -> std::io::Result<Option<bool>> {
    buf.clear();
    let mut read_any = false;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            return Ok(read_any.then_some(buf.len() <= max));
        }
        read_any = true;
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if buf.len() <= max {
            let room = (max + 1 - buf.len()).min(take);
            buf.extend_from_slice(&chunk[..room]);
        }
        reader.consume(if done { take + 1 } else { take });
        if done {
            return Ok(Some(buf.len() <= max));
        }
    }
}

/// Parse a JSONL transcript. I/O errors abort; bad lines are collected in `errors`.
pub fn parse_jsonl(reader: impl BufRead) -> std::io::Result<ParsedTranscript> {
    parse_jsonl_within(reader, MAX_LINE_BYTES, ParsedTranscript::default())
}

/// Parse a Claude Code subagent's transcript (`<session>/subagents/agent-<id>.jsonl`, every
/// entry a sidechain) for [`ParsedTranscript::merge_subagent`]: what the subagent said and did,
/// its assistant named `name` (so a summary says the subagent found it, not the assistant); the
/// task the parent gave it is the parent's call, not read again.
pub fn parse_subagent_jsonl(reader: impl BufRead, name: &str) -> std::io::Result<ParsedTranscript> {
    parse_jsonl_within(reader, MAX_LINE_BYTES, ParsedTranscript { subagent: Some(name.into()), ..Default::default() })
}

fn parse_jsonl_within(
    mut reader: impl BufRead,
    max_line: usize,
    mut parsed: ParsedTranscript,
) -> std::io::Result<ParsedTranscript> {
    let mut buf = Vec::new();
    let mut line_no = 0usize;
    while let Some(fits) = next_line(&mut reader, &mut buf, max_line)? {
        line_no += 1;
        if !fits {
            parsed.errors.push(LineError {
                line: line_no,
                error: format!("line longer than {} MiB, skipped unread", max_line >> 20),
            });
            continue;
        }
        let text = match std::str::from_utf8(&buf) {
            Ok(t) => t.trim(),
            Err(e) => {
                parsed
                    .errors
                    .push(LineError { line: line_no, error: format!("invalid UTF-8 at byte {}", e.valid_up_to()) });
                continue;
            }
        };
        if text.is_empty() {
            continue;
        }
        let result = serde_json::from_str::<Value>(text)
            .map_err(|e| format!("malformed JSON: {e}"))
            .and_then(|v| entry(v, line_no, &mut parsed));
        if let Err(error) = result {
            parsed.errors.push(LineError { line: line_no, error });
        }
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_formats_and_reports_bad_lines() {
        let mut data = Vec::new();
        data.extend_from_slice(b"{\"type\":\"session\",\"id\":\"s-1\",\"timestamp\":\"2026-01-01T00:00:00Z\"}\n");
        data.extend_from_slice(b"{\"type\":\"message\",\"timestamp\":\"2026-01-01T00:00:01Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n");
        data.extend_from_slice(b"{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"hello\"}]}\n");
        data.extend_from_slice(b"{\"role\": \"user\", \"content\": \"unterminated\n");
        data.extend_from_slice(b"\xff\xfe not utf8\n");
        data.extend_from_slice(b"\n[1,2]\n");
        data.extend_from_slice(b"{\"type\":\"model_change\",\"model\":\"x\"}\n");
        data.extend_from_slice(b"{\"foo\":1}\n");
        let parsed = parse_jsonl(&data[..]).unwrap();
        assert_eq!(parsed.messages.len(), 2);
        assert_eq!(parsed.header_session_id.as_deref(), Some("s-1"));
        assert_eq!(parsed.other_entries, 2);
        assert_eq!(parsed.messages[0].timestamp(), Some(1_767_225_601_000));
        let lines: Vec<usize> = parsed.errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![4, 5, 7, 9]);
        assert!(parsed.errors[1].error.contains("UTF-8"));
        assert!(parsed.unread.is_empty(), "{:?}", parsed.unread);
    }

    #[test]
    fn messages_of_no_kind_memcc_reads_are_kept_and_named_by_line() {
        let data = b"{\"role\":\"user\",\"content\":\"hi\"}\n\
                     {\"role\":\"usr\",\"content\":\"typo\"}\n\
                     {\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":123}}\n";
        let parsed = parse_jsonl(&data[..]).unwrap();
        assert_eq!(parsed.messages.len(), 3, "kept, as a host's own entries must be");
        let lines: Vec<usize> = parsed.unread.iter().map(|n| n.line).collect();
        assert_eq!(lines, vec![2, 3]);
        assert!(parsed.unread[0].error.contains("\"usr\""), "{:?}", parsed.unread);
        assert!(parsed.unread[1].error.contains("does not parse"), "{:?}", parsed.unread);
    }

    #[test]
    fn claude_code_and_codex_lines_become_messages_with_their_tool_calls_and_results() {
        let claude = concat!(
            "{\"type\":\"summary\",\"summary\":\"t\"}\n",
            "{\"type\":\"user\",\"sessionId\":\"cc\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"list files\"}}\n",
            "{\"type\":\"assistant\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Bash\",\"input\":{\"command\":\"ls\"}}]}}\n",
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":[{\"type\":\"text\",\"text\":\"a.txt\"}]}]}}\n",
            "{\"type\":\"user\",\"isMeta\":true,\"message\":{\"role\":\"user\",\"content\":\"<command-name>/cost</command-name>\"}}\n",
        );
        let parsed = parse_jsonl(claude.as_bytes()).unwrap();
        assert_eq!(parsed.format, Some(Format::ClaudeCode));
        assert_eq!(parsed.header_session_id.as_deref(), Some("cc"));
        let roles: Vec<String> = parsed.messages.iter().map(AgentMessage::role).collect();
        assert_eq!(roles, ["user", "assistant", "toolResult"]);
        assert_eq!(parsed.messages[0].timestamp(), Some(1_767_225_600_000));
        assert_eq!(parsed.messages[1].tool_call_ids(), vec!["t1".to_string()]);
        assert_eq!(parsed.messages[2].tool_result_for(), Some("t1"));
        assert!(parsed.messages[2].text().contains("a.txt"));
        assert_eq!(parsed.other_entries, 2, "the title and Claude Code's own note");
        assert!(parsed.unread.is_empty() && parsed.errors.is_empty(), "{parsed:?}");

        let codex = concat!(
            "{\"type\":\"session_meta\",\"payload\":{\"id\":\"cx\"}}\n",
            "{\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"<environment_context>x</environment_context>\"}]}}\n",
            "{\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"run the tests\"}]}}\n",
            "{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call\",\"name\":\"shell\",\"arguments\":\"{\\\"command\\\":[\\\"cargo\\\",\\\"test\\\"]}\",\"call_id\":\"c1\"}}\n",
            "{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call_output\",\"call_id\":\"c1\",\"output\":\"{\\\"output\\\":\\\"ok\\\"}\"}}\n",
            "{\"type\":\"event_msg\",\"payload\":{\"type\":\"user_message\",\"message\":\"run the tests\"}}\n",
        );
        let parsed = parse_jsonl(codex.as_bytes()).unwrap();
        assert_eq!(parsed.format, Some(Format::Codex));
        assert_eq!(parsed.header_session_id.as_deref(), Some("cx"));
        let roles: Vec<String> = parsed.messages.iter().map(AgentMessage::role).collect();
        assert_eq!(roles, ["user", "assistant", "toolResult"], "the environment context is no message");
        assert_eq!(parsed.messages[2].text(), "[tool result shell] ok", "the output's text, named after its call");
        assert!(parsed.errors.is_empty(), "{parsed:?}");
    }

    #[test]
    fn a_claude_code_transcript_says_where_it_was_held_on_which_branch_and_its_newest_title() {
        let claude = concat!(
            "{\"type\":\"user\",\"sessionId\":\"cc\",\"cwd\":\"/home/ada/shop/src\",\"gitBranch\":\"main\",\"message\":{\"role\":\"user\",\"content\":\"Why does checkout time out?\\nIt started today.\"}}\n",
            "{\"type\":\"ai-title\",\"aiTitle\":\"Checkout timeout\"}\n",
            "{\"type\":\"custom-title\",\"customTitle\":\"Flaky checkout\"}\n",
            "{\"type\":\"ai-title\",\"aiTitle\":\"Checkout timeouts in CI\"}\n",
            "{\"type\":\"assistant\",\"cwd\":\"/home/ada/shop\",\"gitBranch\":\"fix/checkout\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"The pool is too small.\"}]}}\n",
        );
        let parsed = parse_jsonl(claude.as_bytes()).unwrap();
        assert_eq!(parsed.meta.cwd.as_deref(), Some("/home/ada/shop/src"));
        assert_eq!(parsed.meta.branch.as_deref(), Some("fix/checkout"), "the newest branch named");
        assert_eq!(parsed.meta.title.as_deref(), Some("Flaky checkout"), "a user's rename over the host's titles");
        assert_eq!(parsed.source(), Some(SessionSource::ClaudeCode));

        let untitled = "{\"type\":\"user\",\"sessionId\":\"cc\",\"message\":{\"role\":\"user\",\"content\":\"  \\nWhy does checkout time out?\\nIt started today.\"}}\n";
        let parsed = parse_jsonl(untitled.as_bytes()).unwrap();
        assert_eq!(parsed.meta.title.as_deref(), Some("Why does checkout time out?"), "its first line said");

        let codex = "{\"type\":\"session_meta\",\"payload\":{\"id\":\"cx\",\"cwd\":\"/home/ada/api\",\"git\":{\"branch\":\"dev\"}}}\n";
        let parsed = parse_jsonl(codex.as_bytes()).unwrap();
        assert_eq!((parsed.meta.cwd.as_deref(), parsed.meta.branch.as_deref()), (Some("/home/ada/api"), Some("dev")));
    }

    #[test]
    fn a_subagent_is_read_between_the_call_that_starts_it_and_its_result() {
        let parent = concat!(
            "{\"type\":\"user\",\"timestamp\":\"2026-03-01T10:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"Where is the retry logic?\"}}\n",
            "{\"type\":\"assistant\",\"timestamp\":\"2026-03-01T10:00:01Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"task1\",\"name\":\"Task\",\"input\":{\"prompt\":\"Find the retry logic.\"}}]}}\n",
            "{\"type\":\"user\",\"timestamp\":\"2026-03-01T10:00:30Z\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"task1\",\"content\":\"In src/net/retry.rs.\"}]}}\n",
            "{\"type\":\"assistant\",\"timestamp\":\"2026-03-01T10:00:31Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"It is in src/net/retry.rs.\"}]}}\n",
        );
        let subagent = concat!(
            "{\"type\":\"user\",\"isSidechain\":true,\"timestamp\":\"2026-03-01T10:00:02Z\",\"message\":{\"role\":\"user\",\"content\":\"Find the retry logic.\"}}\n",
            "{\"type\":\"assistant\",\"isSidechain\":true,\"timestamp\":\"2026-03-01T10:00:03Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"g1\",\"name\":\"Grep\",\"input\":{\"pattern\":\"retry\"}}]}}\n",
            "{\"type\":\"user\",\"isSidechain\":true,\"timestamp\":\"2026-03-01T10:00:04Z\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"g1\",\"content\":\"src/net/retry.rs:12: fn backoff\"}]}}\n",
            "{\"type\":\"assistant\",\"isSidechain\":true,\"timestamp\":\"2026-03-01T10:00:20Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"The backoff is exponential, capped at 30 s.\"}]}}\n",
            "not json\n",
        );
        let mut parsed = parse_jsonl(parent.as_bytes()).unwrap();
        parsed.merge_subagent(parse_subagent_jsonl(subagent.as_bytes(), "Explore subagent").unwrap());
        let said: Vec<(String, Option<String>, String)> =
            parsed.messages.iter().map(|m| (m.role(), m.speaker(), m.text())).collect();
        let roles: Vec<&str> = said.iter().map(|(r, _, _)| r.as_str()).collect();
        assert_eq!(roles, ["user", "assistant", "assistant", "toolResult", "assistant", "toolResult", "assistant"]);
        assert_eq!(said[4].1.as_deref(), Some("Explore subagent"), "the subagent speaks under its name: {said:?}");
        assert!(said[4].2.starts_with("Explore subagent: The backoff"), "and in its words: {said:?}");
        assert!(
            said.iter().all(|(r, _, t)| !(r == "user" && t.contains("Find the retry"))),
            "its task is not the user's"
        );
        assert_eq!(parsed.messages[5].tool_result_for(), Some("task1"), "the parent's result follows the subagent");
        assert_eq!(parsed.errors.len(), 1);
        assert!(parsed.errors[0].error.starts_with("Explore subagent: malformed JSON"), "{:?}", parsed.errors);
        // Read on its own, as the parent reads it inline, a subagent is nobody's words.
        assert!(parse_jsonl(subagent.as_bytes()).unwrap().messages.is_empty());
    }

    #[test]
    fn what_the_user_did_not_say_is_not_stored_as_their_words() {
        let claude = concat!(
            "{\"type\":\"user\",\"isCompactSummary\":true,\"message\":{\"role\":\"user\",\"content\":\"This session is being continued from a previous conversation.\"}}\n",
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"<command-name>/model</command-name>\\n<command-message>model</command-message>\"}}\n",
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"<local-command-stdout>Set model to \\u001b[1mopus\\u001b[22m</local-command-stdout>\"}}\n",
            "{\"type\":\"user\",\"isSidechain\":true,\"message\":{\"role\":\"user\",\"content\":\"Search the codebase for the retry logic.\"}}\n",
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"[Request interrupted by user]\"}]}}\n",
            "{\"type\":\"assistant\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"x\"}]}}\n",
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"data\":\"AAAA\"}},{\"type\":\"text\",\"text\":\"What is wrong with this \\u001b[31mred\\u001b[0m chart?\"}]}}\n",
            "{\"type\":\"assistant\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"hmm\"},{\"type\":\"text\",\"text\":\"The axis is log-scaled.\"}]}}\n",
        );
        let parsed = parse_jsonl(claude.as_bytes()).unwrap();
        let said: Vec<(String, String)> = parsed.messages.iter().map(|m| (m.role(), m.text())).collect();
        assert_eq!(
            said,
            vec![
                ("user".to_string(), "[image]\nWhat is wrong with this red chart?".to_string()),
                ("assistant".to_string(), "The axis is log-scaled.".to_string()),
            ]
        );
        assert_eq!(parsed.other_entries, 6, "each skipped entry is counted");
        assert_eq!(parsed.meta.title.as_deref(), Some("[image]"));
    }

    #[test]
    fn a_line_past_the_limit_is_skipped_unread_and_the_next_one_is_read() {
        let mut data = b"{\"role\":\"user\",\"content\":\"before\"}\n".to_vec();
        data.extend(std::iter::repeat_n(b'x', 5000));
        data.extend_from_slice(b"\n{\"role\":\"user\",\"content\":\"after\"}");
        let parsed = parse_jsonl_within(&data[..], 1024, ParsedTranscript::default()).unwrap();
        let texts: Vec<String> = parsed.messages.iter().map(AgentMessage::text).collect();
        assert_eq!(texts, ["before", "after"]);
        assert_eq!(parsed.errors.len(), 1);
        assert_eq!(parsed.errors[0].line, 2);
        assert!(parsed.errors[0].error.contains("longer than"), "{:?}", parsed.errors);
        // A reader with no newline at all, larger than the limit: one error, memory bounded.
        let endless = std::io::BufReader::new(std::io::Read::take(std::io::repeat(b'y'), 200_000));
        let parsed = parse_jsonl_within(endless, 1024, ParsedTranscript::default()).unwrap();
        assert_eq!(parsed.errors.len(), 1);
    }
}
