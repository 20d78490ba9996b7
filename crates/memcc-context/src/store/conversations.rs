//! Conversations: one per host session, created on first use.

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::{ContextStore, Result};
use crate::error::StoreError;
use memcc_core::time::now_ms;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conversation {
    pub id: i64,
    pub session_id: String,
    pub session_key: Option<String>,
    pub agent_id: String,
    /// The project it belongs to ([`memcc_core::project`]), when its host said.
    pub project: Option<String>,
    /// Where it came from, when its host said.
    pub source: Option<SessionSource>,
    /// Unique across stores and purges, unlike `id`.
    pub uid: String,
}

/// What a conversation is, beside its messages, as whoever knows says it (a transcript, a
/// host's hook, an MCP client): each field given replaces what was stored, each left out keeps it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ConversationMeta {
    /// The repository root (else the directory) it was held in.
    pub project: Option<String>,
    pub title: Option<String>,
    /// Where it came from ([`SessionSource`]).
    pub source: Option<SessionSource>,
    /// The git branch it was on.
    pub branch: Option<String>,
}

impl ConversationMeta {
    pub fn is_empty(&self) -> bool {
        self == &ConversationMeta::default()
    }
}

/// Where a conversation came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionSource {
    ClaudeCode,
    Codex,
    Openclaw,
    Mcp,
    /// A transcript imported by hand, of another format.
    Import,
}

impl SessionSource {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionSource::ClaudeCode => "claude-code",
            SessionSource::Codex => "codex",
            SessionSource::Openclaw => "openclaw",
            SessionSource::Mcp => "mcp",
            SessionSource::Import => "import",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "claude-code" => SessionSource::ClaudeCode,
            "codex" => SessionSource::Codex,
            "openclaw" => SessionSource::Openclaw,
            "mcp" => SessionSource::Mcp,
            "import" => SessionSource::Import,
            _ => return None,
        })
    }

    /// How a person reads it ("Claude Code").
    pub fn label(self) -> &'static str {
        match self {
            SessionSource::ClaudeCode => "Claude Code",
            SessionSource::Codex => "Codex",
            SessionSource::Openclaw => "OpenClaw",
            SessionSource::Mcp => "MCP",
            SessionSource::Import => "import",
        }
    }
}

/// One conversation as a listing shows it: what it is, how long, when.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionListing {
    pub session_id: String,
    pub agent_id: String,
    #[serde(flatten)]
    pub meta: ConversationMeta,
    pub messages: i64,
    /// When it was first and last spoken in (the messages' times, else when they were stored;
    /// the conversation's own times when it has none), ms since the epoch.
    pub first_at: i64,
    pub last_at: i64,
}

impl ContextStore {
    /// `agent_id`'s conversation of `session_id` (a session id is its agent's own: another
    /// agent's session of that id is not found).
    pub fn find_conversation(&self, agent_id: &str, session_id: &str) -> Result<Option<Conversation>> {
        let conn = self.conn();
        find_conversation(&conn, agent_id, session_id)
    }

    /// `agent_id`'s conversation of `session_id`, created on first use.
    pub fn conversation(&self, session_id: &str, session_key: Option<&str>, agent_id: &str) -> Result<Conversation> {
        let conn = self.conn();
        if let Some(c) = find_conversation(&conn, agent_id, session_id)? {
            if session_key.is_some() && c.session_key.as_deref() != session_key {
                conn.execute(
                    "UPDATE conversations SET session_key = ?1, updated_at = ?2 WHERE id = ?3",
                    params![session_key, now_ms(), c.id],
                )?;
                return Ok(Conversation { session_key: session_key.map(String::from), ..c });
            }
            return Ok(c);
        }
        let now = now_ms();
        // Another process may create the same session at the same moment: the first wins, and
        // both then read the one row.
        conn.execute(
            "INSERT OR IGNORE INTO conversations (session_id, session_key, agent_id, created_at, updated_at, uid)
             VALUES (?1, ?2, ?3, ?4, ?4, lower(hex(randomblob(12))))",
            params![session_id, session_key, agent_id, now],
        )?;
        find_conversation(&conn, agent_id, session_id)?
            .ok_or_else(|| StoreError::Corrupt(format!("conversation {session_id} vanished after its insert")))
    }

    /// Record what `meta` says of conversation `id` (each field given replaces the stored one).
    pub fn set_conversation_meta(&self, id: i64, meta: &ConversationMeta) -> Result<()> {
        if meta.is_empty() {
            return Ok(());
        }
        self.write(|tx| {
            tx.execute(
                "UPDATE conversations SET project = COALESCE(?2, project), title = COALESCE(?3, title),
                        source = COALESCE(?4, source), branch = COALESCE(?5, branch), updated_at = ?6
                 WHERE id = ?1",
                params![id, meta.project, meta.title, meta.source.map(SessionSource::as_str), meta.branch, now_ms()],
            )?;
            Ok(())
        })
    }

    /// `agent`'s conversations (every agent's with `None`), in `project` when given, the most
    /// recently spoken in first, at most `limit`.
    pub fn session_listing(
        &self,
        agent: Option<&str>,
        project: Option<&str>,
        limit: usize,
    ) -> Result<Vec<SessionListing>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT c.session_id, c.agent_id, c.project, c.title, c.source, c.branch,
                    (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id),
                    COALESCE((SELECT MIN(COALESCE(m.timestamp, m.created_at)) FROM messages m
                              WHERE m.conversation_id = c.id), c.created_at) AS first_at,
                    COALESCE((SELECT MAX(COALESCE(m.timestamp, m.created_at)) FROM messages m
                              WHERE m.conversation_id = c.id), c.updated_at) AS last_at
             FROM conversations c
             WHERE (?1 IS NULL OR c.agent_id = ?1) AND (?2 IS NULL OR c.project = ?2)
             ORDER BY last_at DESC, c.id DESC
             LIMIT ?3",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt.query_map(params![agent, project, limit], |r| {
            Ok(SessionListing {
                session_id: r.get(0)?,
                agent_id: r.get(1)?,
                meta: ConversationMeta {
                    project: r.get(2)?,
                    title: r.get(3)?,
                    source: r.get::<_, Option<String>>(4)?.as_deref().and_then(SessionSource::parse),
                    branch: r.get(5)?,
                },
                messages: r.get(6)?,
                first_at: r.get(7)?,
                last_at: r.get(8)?,
            })
        })?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// The ids of `agent`'s conversations.
    pub fn conversation_ids_of(&self, agent_id: &str) -> Result<Vec<i64>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached("SELECT id FROM conversations WHERE agent_id = ?1 ORDER BY id")?;
        let rows = stmt.query_map([agent_id], |r| r.get(0))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    pub fn conversations(&self) -> Result<Vec<Conversation>> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!("SELECT {CONVERSATION_COLUMNS} FROM conversations ORDER BY id"))?;
        let rows = stmt.query_map([], conversation_from_row)?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }
}

fn find_conversation(conn: &Connection, agent_id: &str, session_id: &str) -> Result<Option<Conversation>> {
    Ok(conn
        .query_row(
            &format!("SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE agent_id = ?1 AND session_id = ?2"),
            [agent_id, session_id],
            conversation_from_row,
        )
        .optional()?)
}

/// The columns [`conversation_from_row`] reads, in its order.
pub(crate) const CONVERSATION_COLUMNS: &str = "id, session_id, session_key, agent_id, project, source, uid";

pub(crate) fn conversation_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Conversation> {
    Ok(Conversation {
        id: r.get(0)?,
        session_id: r.get(1)?,
        session_key: r.get(2)?,
        agent_id: r.get(3)?,
        project: r.get(4)?,
        source: r.get::<_, Option<String>>(5)?.as_deref().and_then(SessionSource::parse),
        uid: r.get::<_, Option<String>>(6)?.unwrap_or_default(),
    })
}
