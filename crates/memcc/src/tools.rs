//! The tools MemCC offers a model, said once for every host: each tool's name, title,
//! description and hints ([`ToolSpec`]), its arguments with their schema (the `*Args` types),
//! and the defaults and limits of those arguments ([`Limit`]). The MCP server serves all of
//! them; a host that fixes the agent and the conversation itself (OpenClaw) offers
//! [`HOST_TOOLS`] with [`host_tools`]'s schemas, which leave those two arguments out.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a model reads about a tool, and what a client may assume of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// Changes nothing (MCP's `readOnlyHint`).
    pub read_only: bool,
    /// May remove what it did not add (MCP's `destructiveHint`).
    pub destructive: bool,
}

const fn reads(name: &'static str, title: &'static str, description: &'static str) -> ToolSpec {
    ToolSpec { name, title, description, read_only: true, destructive: false }
}

pub const MEMORY_SEARCH: ToolSpec = reads(
    "memory_search",
    "Search memory",
    "Search long-term memory (earlier sessions) for facts, preferences and past exchanges. Returns scored \
     memories with ids (mem_…) for memory_get.",
);
pub const MEMORY_GET: ToolSpec = reads(
    "memory_get",
    "Read a memory",
    "Read one memory in full, with its date and provenance (ids from memory_search, e.g. mem_12).",
);
pub const MEMORY_ADD: ToolSpec = ToolSpec {
    name: "memory_add",
    title: "Remember",
    description: "Remember a text in long-term memory; pin it to have it recalled in every prompt.",
    read_only: false,
    destructive: false,
};
pub const MEMORY_FORGET: ToolSpec = ToolSpec {
    name: "memory_forget",
    title: "Forget a memory",
    description: "Forget a memory and what was made from the same words (later summaries that quote it do not \
                  bring it back); purge deletes it for good. The conversation it came from keeps its own messages.",
    read_only: false,
    destructive: true,
};
pub const MEMORY_EDIT: ToolSpec = ToolSpec {
    name: "memory_edit",
    title: "Correct a memory",
    description: "Correct a memory the user says is wrong or out of date: the new text replaces it from now on, and \
                  the old one stays as its history (marked superseded, pointing at the correction).",
    read_only: false,
    destructive: false,
};
pub const MEMORY_PIN: ToolSpec = ToolSpec {
    name: "memory_pin",
    title: "Pin a memory",
    description: "Pin a memory so it is recalled in every session (pinned: false unpins it).",
    read_only: false,
    destructive: false,
};
pub const MEMORY_FACTS: ToolSpec = reads(
    "memory_facts",
    "Facts about someone",
    "What memory knows about someone or something: the facts (subject, predicate, object) it learned from the \
     conversations, current ones first, each with when it started to hold and the memory it came from (mem_…, \
     for memory_get).",
);
pub const LCM_GREP: ToolSpec = reads(
    "lcm_grep",
    "Search this conversation",
    "Search this conversation's earlier messages and summaries (words, or a regex) for exact details that were \
     compacted. Returns ids for lcm_expand_query.",
);
pub const LCM_DESCRIBE: ToolSpec = reads(
    "lcm_describe",
    "Describe a summary",
    "Describe a summary: its span, token counts, the messages or summaries below it and above it.",
);
pub const LCM_EXPAND_QUERY: ToolSpec = reads(
    "lcm_expand_query",
    "Expand summaries",
    "Expand summary, message or file ids (from lcm_grep or <summary id=…>) back to the original messages, or \
     expand the best matches of a query.",
);
pub const CONVERSATION_APPEND: ToolSpec = ToolSpec {
    name: "conversation_append",
    title: "Append to a conversation",
    description: "Add messages to a conversation MemCC keeps for you (stored losslessly, then compacted under the \
                  budget, what is compacted going to long-term memory). For hosts without a context-engine API.",
    read_only: false,
    destructive: false,
};
pub const CONVERSATION_ASSEMBLE: ToolSpec = reads(
    "conversation_assemble",
    "Assemble the next prompt",
    "The prompt for the next model call of a conversation, within a token budget: summaries, the recent \
     messages, and recalled memory.",
);

/// Every tool, in the order a client lists them.
pub const ALL: [ToolSpec; 12] = [
    MEMORY_SEARCH,
    MEMORY_GET,
    MEMORY_ADD,
    MEMORY_EDIT,
    MEMORY_PIN,
    MEMORY_FORGET,
    MEMORY_FACTS,
    LCM_GREP,
    LCM_DESCRIBE,
    LCM_EXPAND_QUERY,
    CONVERSATION_APPEND,
    CONVERSATION_ASSEMBLE,
];

/// The tools a host with its own conversation API offers (OpenClaw): reading memory and this
/// conversation. Writing goes through the host's own context-engine calls.
pub const HOST_TOOLS: [ToolSpec; 4] = [MEMORY_SEARCH, MEMORY_GET, LCM_GREP, LCM_EXPAND_QUERY];

/// What a server that offers every tool (MCP) tells the model it has, after the memory prompt.
pub const SERVER_INSTRUCTIONS: &str = "Long-term memory (MemCC) keeps what this user told you in earlier sessions \
and the full history of long conversations. Where MemCC's hooks are installed (memcc setup claude-code|codex), what \
earlier sessions in this project left and what they said about the prompt at hand arrive by themselves in <memcc-*> \
blocks beside the user's message; cite a memory as (mem_N). For anything else, memory_search (then memory_get for a \
whole memory) finds what was said before; memory_facts lists what is known about the user or a name; memory_add \
keeps something the user wants remembered (pin: true to have it in every session); memory_edit corrects a memory \
(the old text stays as history), memory_pin pins or unpins one; memory_forget removes it. For a \
conversation MemCC keeps (conversation_append / conversation_assemble), lcm_grep finds an exact detail that was \
compacted and lcm_expand_query reads it back in full. The hooks also import each finished session's transcript, so \
it reaches memory without any call.";

/// The tool named `name`.
pub fn spec(name: &str) -> Option<&'static ToolSpec> {
    ALL.iter().find(|t| t.name == name)
}

/// A count argument's default and its allowed range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub default: u32,
    pub min: u32,
    pub max: u32,
}

impl Limit {
    /// `given`, or the default, within the range.
    pub fn resolve(&self, given: Option<u32>) -> usize {
        given.unwrap_or(self.default).clamp(self.min, self.max) as usize
    }

    /// Refuse a `given` out of the range the schema states (argument `name`).
    pub fn check(&self, name: &str, given: Option<u32>) -> Result<(), String> {
        match given {
            Some(n) if !(self.min..=self.max).contains(&n) => {
                Err(format!("{name} must be between {} and {}, not {n}", self.min, self.max))
            }
            _ => Ok(()),
        }
    }
}

/// `memory_search`'s `maxResults`.
pub const SEARCH_RESULTS: Limit = Limit { default: 8, min: 1, max: 100 };
/// `memory_facts`' `limit`.
pub const FACTS: Limit = Limit { default: 50, min: 1, max: 200 };
/// `lcm_grep`'s `limit` (the context engine's own default and cap).
pub const GREP_MATCHES: Limit = Limit {
    default: memcc_context::expand::DEFAULT_GREP_LIMIT as u32,
    min: 1,
    max: memcc_context::expand::MAX_GREP_LIMIT as u32,
};
/// `memory_search`'s default floor: a hit below it matched neither the words nor the meaning of
/// the query (a store of one record answers any query with it, at 0.000).
pub const DEFAULT_MIN_SCORE: f64 = 0.01;

#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(transform = one_type)]
pub struct SearchArgs {
    /// What to look for, in any words.
    pub query: String,
    /// How many results at most (1–100, default 8).
    #[schemars(range(min = 1, max = 100))]
    pub max_results: Option<u32>,
    /// Leave out results scoring below this (default 0.01: what matches neither the words nor the
    /// meaning of the query).
    #[schemars(range(min = 0.0, max = 1.0))]
    pub min_score: Option<f64>,
    /// Only this topic wing (a namespace MemCC files each memory under by its subject, e.g.
    /// "work", "health", "travel", or one configured in memory.wings); the hits name theirs.
    pub wing: Option<String>,
    /// Favour memories learnt in this project (a repository's path, as `memcc sessions` lists
    /// them; default: the server's own); the others are still found.
    pub project: Option<String>,
    /// The conversation's last turns before the query, oldest first (at most 8): what they are
    /// about helps find what the query means ("let's continue with the plan").
    #[schemars(length(max = 8))]
    pub context: Option<Vec<TurnArg>>,
    /// Whose memory: the server's agent (the default) or one its operator allowed.
    pub agent_id: Option<String>,
}

/// One turn of the conversation, as `memory_search` takes it.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TurnArg {
    /// Who said it: "user" or "assistant".
    pub role: TurnRole,
    /// What was said (the first 4,000 characters count).
    pub text: String,
}

/// Who said a turn.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum TurnRole {
    User,
    Assistant,
}

/// The most context turns `memory_search` takes, and the characters of each that count.
pub const CONTEXT_TURNS: usize = 8;
pub const CONTEXT_TURN_CHARS: usize = 4_000;

impl SearchArgs {
    /// The context turns as the engine takes them (each cut to its first characters).
    pub fn context_turns(&self) -> Vec<memcc_core::bridge::ContextTurn> {
        use memcc_core::bridge::{ContextTurn, Role};
        self.context
            .iter()
            .flatten()
            .map(|t| {
                let role = match t.role {
                    TurnRole::User => Role::User,
                    TurnRole::Assistant => Role::Assistant,
                };
                ContextTurn::new(role, t.text.chars().take(CONTEXT_TURN_CHARS).collect::<String>())
            })
            .collect()
    }

    /// The project asked for, named as MemCC names projects ([`memcc_core::project::project_of`]:
    /// a repository's root, no trailing separator or `.` parts), so "/home/ada/shop/" and a
    /// path inside the repository find the project its memories were learnt in.
    pub fn project(&self) -> Option<String> {
        let asked = self.project.as_deref().map(str::trim).filter(|p| !p.is_empty())?;
        Some(memcc_core::project::project_of(std::path::Path::new(asked)))
    }

    pub fn max_results(&self) -> usize {
        SEARCH_RESULTS.resolve(self.max_results)
    }

    pub fn min_score(&self) -> f64 {
        self.min_score.unwrap_or(DEFAULT_MIN_SCORE)
    }

    /// The arguments the schema refuses, refused here too: a client that skips validation gets
    /// the same answer as one that does not.
    pub fn check(&self) -> Result<(), String> {
        SEARCH_RESULTS.check("maxResults", self.max_results)?;
        if let Some(turns) = self.context.as_ref().filter(|t| t.len() > CONTEXT_TURNS) {
            return Err(format!("context holds at most {CONTEXT_TURNS} turns, not {}", turns.len()));
        }
        match self.min_score {
            Some(s) if !(0.0..=1.0).contains(&s) => Err(format!("minScore must be between 0 and 1, not {s}")),
            _ => Ok(()),
        }
    }
}

impl crate::Memcc {
    /// `memory_search` as `agent` (the tool's arguments, checked; their project, else
    /// `project`): each hit's score within the 0–1 the schema's `minScore` speaks of.
    pub fn memory_search(
        &self,
        agent: &str,
        args: &SearchArgs,
        project: Option<&str>,
    ) -> Result<Vec<memcc_memory::SearchHit>, crate::MemccError> {
        args.check().map_err(|e| crate::MemccError::Memory(memcc_memory::MemoryError::Input(e)))?;
        let context = args.context_turns();
        let asked = args.project();
        let asking = memcc_memory::Asking {
            wing: args.wing.as_deref(),
            project: asked.as_deref().or(project),
            context: &context,
            ..Default::default()
        };
        let mut hits =
            self.memory()?.memory_search_asked(agent, &args.query, args.max_results(), args.min_score(), &asking)?;
        for h in &mut hits {
            h.score = h.score.min(1.0);
        }
        Ok(hits)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(transform = one_type)]
pub struct IdArgs {
    /// A memory id from memory_search, e.g. mem_12.
    pub id: String,
    /// Act as this agent: the server's (the default) or one its operator allowed.
    pub agent_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(transform = one_type)]
pub struct AddArgs {
    /// What to remember.
    pub text: String,
    /// Always recall it.
    pub pin: Option<bool>,
    /// File it under this topic wing (default: the wing its subject suggests).
    pub wing: Option<String>,
    /// Act as this agent: the server's (the default) or one its operator allowed.
    pub agent_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(transform = one_type)]
pub struct EditArgs {
    /// The memory to correct, e.g. mem_12.
    pub id: String,
    /// What it should say now, whole.
    pub text: String,
    /// Act as this agent: the server's (the default) or one its operator allowed.
    pub agent_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(transform = one_type)]
pub struct PinArgs {
    /// The memory to pin, e.g. mem_12.
    pub id: String,
    /// Pin (the default) or unpin.
    pub pinned: Option<bool>,
    /// Pin it in every project, not only the one it was learnt in.
    pub everywhere: Option<bool>,
    /// Act as this agent: the server's (the default) or one its operator allowed.
    pub agent_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(transform = one_type)]
pub struct ForgetArgs {
    /// The memory to forget, e.g. mem_12.
    pub id: String,
    /// Delete it for good instead of hiding it.
    pub purge: Option<bool>,
    /// Act as this agent: the server's (the default) or one its operator allowed.
    pub agent_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(transform = one_type)]
pub struct FactsArgs {
    /// Whom or what the facts are about (their subject or object): "user" (the default) for the
    /// person MemCC serves, or a name as they said it (e.g. "Maria", "the boat").
    pub about: Option<String>,
    /// Also the facts that no longer hold (replaced by a later one), each with what replaced it.
    pub history: Option<bool>,
    /// How many facts at most (1–200, default 50).
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<u32>,
    /// Act as this agent: the server's (the default) or one its operator allowed.
    pub agent_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(transform = one_type)]
pub struct GrepArgs {
    /// Words (all of them must occur), or a regular expression with mode "regex".
    pub pattern: String,
    /// "text" (default) or "regex".
    #[schemars(extend("enum" = ["text", "regex"]))]
    pub mode: Option<String>,
    /// "messages", "summaries" or "both" (default).
    #[schemars(extend("enum" = ["messages", "summaries", "both"]))]
    pub scope: Option<String>,
    /// One conversation (default: the server's session, else all of the agent's).
    pub session_id: Option<String>,
    /// How many matches at most (1–500, default 20).
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
    /// Act as this agent: the server's (the default) or one its operator allowed.
    pub agent_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(transform = one_type)]
pub struct DescribeArgs {
    /// A summary id, e.g. sum_0123456789abcdef.
    pub id: String,
    /// Act as this agent: the server's (the default) or one its operator allowed.
    pub agent_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(transform = one_type)]
pub struct ExpandArgs {
    /// Summary, message or file ids (sum_…, msg_…, file_…) to expand.
    pub ids: Option<Vec<String>>,
    /// Without ids: expand the best matches of this query.
    pub query: Option<String>,
    /// The conversation a query searches (default: the server's session, else all of the agent's).
    pub session_id: Option<String>,
    /// Token cap on what comes back (default 4000).
    #[schemars(range(min = 100))]
    pub max_tokens: Option<u32>,
    /// Go all the way down to raw messages.
    pub deep: Option<bool>,
    /// Act as this agent: the server's (the default) or one its operator allowed.
    pub agent_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(transform = one_type)]
pub struct TurnMessage {
    /// "user", "assistant" or "toolResult".
    #[schemars(extend("enum" = ["user", "assistant", "toolResult"]))]
    pub role: String,
    /// The message's text.
    pub content: String,
    /// Milliseconds since the epoch.
    pub timestamp: Option<i64>,
    /// Who said it, when several people talk.
    pub name: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(transform = one_type)]
pub struct AppendArgs {
    /// The conversation (default: the server's session).
    pub session_id: Option<String>,
    /// The new messages, oldest first.
    pub messages: Vec<TurnMessage>,
    /// Compact against this token budget afterwards (default: the server's; at least 256).
    pub budget: Option<u32>,
    /// Act as this agent: the server's (the default) or one its operator allowed.
    pub agent_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(transform = one_type)]
pub struct AssembleArgs {
    /// The conversation (default: the server's session); it must exist (conversation_append starts one).
    pub session_id: Option<String>,
    /// Token budget (default: the server's; at least 256).
    pub budget: Option<u32>,
    /// The message about to be sent: it joins the recall query, not the output.
    pub pending: Option<String>,
    /// Act as this agent: the server's (the default) or one its operator allowed.
    pub agent_id: Option<String>,
}

/// Optional arguments as one type. Leaving one out is how a client says "none", so the `null`
/// alternative schemars writes for an `Option` only makes strict clients warn (the MCP
/// Inspector's `--strict` check flags `["string", "null"]`).
fn one_type(schema: &mut schemars::Schema) {
    let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) else { return };
    let is_null = |v: &Value| v == "null" || v.get("type").is_some_and(|t| t == "null") || v.is_null();
    for property in properties.values_mut().filter_map(Value::as_object_mut) {
        if let Some(Value::Array(types)) = property.get("type") {
            let rest: Vec<Value> = types.iter().filter(|t| !is_null(t)).cloned().collect();
            let one = if rest.len() == 1 { rest[0].clone() } else { Value::Array(rest) };
            property.insert("type".into(), one);
        }
        if let Some(Value::Array(any)) = property.get("anyOf") {
            let rest: Vec<Value> = any.iter().filter(|s| !is_null(s)).cloned().collect();
            if let [Value::Object(only)] = rest.as_slice() {
                property.shift_remove("anyOf");
                for (k, v) in only {
                    property.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
        }
        if let Some(Value::Array(values)) = property.get_mut("enum") {
            values.retain(|v| !v.is_null());
        }
    }
}

/// A tool as a host that fixes the agent and the conversation offers it.
#[derive(Debug, Clone, Serialize)]
pub struct HostTool {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// The arguments' JSON schema, without `agentId` and `sessionId` (the host supplies both).
    pub parameters: Value,
}

/// The JSON schema of tool `name`'s arguments, as the MCP server serves it; `None` for a name
/// the catalogue does not hold.
pub fn arguments_schema(name: &str) -> Option<Value> {
    use schemars::schema_for;
    let schema = match name {
        "memory_search" => schema_for!(SearchArgs),
        "memory_get" => schema_for!(IdArgs),
        "memory_add" => schema_for!(AddArgs),
        "memory_edit" => schema_for!(EditArgs),
        "memory_pin" => schema_for!(PinArgs),
        "memory_forget" => schema_for!(ForgetArgs),
        "memory_facts" => schema_for!(FactsArgs),
        "lcm_grep" => schema_for!(GrepArgs),
        "lcm_describe" => schema_for!(DescribeArgs),
        "lcm_expand_query" => schema_for!(ExpandArgs),
        "conversation_append" => schema_for!(AppendArgs),
        "conversation_assemble" => schema_for!(AssembleArgs),
        _ => return None,
    };
    Some(schema.to_value())
}

/// [`HOST_TOOLS`] with their schemas.
pub fn host_tools() -> Vec<HostTool> {
    HOST_TOOLS
        .iter()
        .map(|t| {
            let mut parameters = arguments_schema(t.name).unwrap_or_else(|| serde_json::json!({"type": "object"}));
            if let Some(obj) = parameters.as_object_mut() {
                obj.shift_remove("$schema");
                obj.shift_remove("title");
                if let Some(props) = obj.get_mut("properties").and_then(Value::as_object_mut) {
                    props.shift_remove("agentId");
                    props.shift_remove("sessionId");
                }
                obj.insert("additionalProperties".into(), Value::Bool(false));
            }
            HostTool { name: t.name, title: t.title, description: t.description, parameters }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_tools_are_the_catalogue_s_and_leave_agent_and_session_to_the_host() {
        let tools = host_tools();
        assert_eq!(tools.iter().map(|t| t.name).collect::<Vec<_>>(), HOST_TOOLS.map(|t| t.name).to_vec());
        for t in &tools {
            let props = t.parameters["properties"].as_object().unwrap();
            assert!(!props.contains_key("agentId") && !props.contains_key("sessionId"), "{}", t.name);
            assert_eq!(t.parameters["additionalProperties"], false, "{}", t.name);
            assert_eq!(t.description, spec(t.name).unwrap().description);
        }
        let search = &tools[0].parameters["properties"]["maxResults"];
        assert_eq!(search["maximum"], SEARCH_RESULTS.max);
        assert_eq!(search["type"], "integer", "one type, no null alternative");
        assert_eq!(tools[2].parameters["properties"]["limit"]["maximum"], GREP_MATCHES.max);
        assert_eq!(tools[0].parameters["required"], serde_json::json!(["query"]));
    }

    #[test]
    fn a_search_s_defaults_and_limits_are_the_catalogue_s() {
        let args = |v: Value| serde_json::from_value::<SearchArgs>(v).unwrap();
        let plain = args(serde_json::json!({"query": "boat"}));
        assert_eq!((plain.max_results(), plain.min_score()), (8, DEFAULT_MIN_SCORE));
        assert_eq!(args(serde_json::json!({"query": "q", "maxResults": 1000})).max_results(), 100);
        assert_eq!(args(serde_json::json!({"query": "q", "maxResults": 0})).max_results(), 1);
        assert!(serde_json::from_value::<SearchArgs>(serde_json::json!({"query": "q", "k": 3})).is_err());
        // What the schema refuses is refused, named.
        let err = args(serde_json::json!({"query": "q", "maxResults": 1000})).check().unwrap_err();
        assert!(err.contains("maxResults must be between 1 and 100, not 1000"), "{err}");
        assert!(args(serde_json::json!({"query": "q", "minScore": 1.5})).check().unwrap_err().contains("minScore"));
        assert!(args(serde_json::json!({"query": "q", "maxResults": 100, "minScore": 1})).check().is_ok());
    }

    #[test]
    fn a_search_s_project_is_named_as_memcc_names_projects() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("shop");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src")).unwrap();
        let learnt = memcc_core::project::project_of(&repo);
        let asked =
            |p: &str| serde_json::from_value::<SearchArgs>(serde_json::json!({"query": "q", "project": p})).unwrap();
        let root = repo.to_string_lossy().to_string();
        for p in [root.clone(), format!("{root}/"), format!("{root}/./src/")] {
            assert_eq!(asked(&p).project().as_deref(), Some(learnt.as_str()), "{p}");
        }
        assert_eq!(asked("  ").project(), None, "an empty project is no project");
    }

    #[test]
    fn every_tool_has_one_entry_and_a_schema() {
        assert!(ALL.iter().all(|t| arguments_schema(t.name).is_some()));
        assert!(arguments_schema("memory_teleport").is_none());
        let mut names: Vec<_> = ALL.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
        assert!(ALL.iter().all(|t| !(t.read_only && t.destructive)));
    }
}
