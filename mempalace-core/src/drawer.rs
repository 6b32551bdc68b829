//! Drawers: verbatim text chunks filed under a wing and a room.

use serde::{Deserialize, Serialize};

/// Who filed a drawer: an agent through MCP/the library, or the `mine` command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AddedBy {
    /// Filed by an agent (MCP tool or library call).
    Mcp,
    /// Filed by `mempalace mine`.
    Mine,
}

impl AddedBy {
    /// The metadata string ("mcp" or "mine").
    pub fn as_str(self) -> &'static str {
        match self {
            AddedBy::Mcp => "mcp",
            AddedBy::Mine => "mine",
        }
    }

    /// Parses the metadata string; anything other than "mine" counts as "mcp".
    pub fn parse_lenient(s: &str) -> Self {
        if s.eq_ignore_ascii_case("mine") {
            AddedBy::Mine
        } else {
            AddedBy::Mcp
        }
    }
}

/// The metadata stored beside every drawer (same keys as MemPalace's ChromaDB metadata).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrawerMetadata {
    /// The wing (a project, person or agent) the drawer belongs to.
    pub wing: String,
    /// The room (a topic inside the wing).
    pub room: String,
    /// The file the text came from (full path as filed), or "" when none.
    pub source_file: String,
    /// Position of this chunk within its source file (0 for single drawers).
    pub chunk_index: u32,
    /// Who filed it.
    pub added_by: AddedBy,
    /// When it was filed (ISO 8601, local time, as MemPalace writes it).
    pub filed_at: String,
    /// When its words were written, when known (a mined conversation's first turn), in the
    /// same local ISO form as `filed_at`; time filters read it before `filed_at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authored_at: Option<String>,
    /// Where in a conversation the drawer comes from (drawers mined from chats only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<ConversationRef>,
    /// Names the text mentions (people, projects, files, identifiers), found when it was
    /// mined; hallways and entity tunnels are built from them (3.11's `entities`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entities: Vec<String>,
}

impl DrawerMetadata {
    /// The instant time filters compare: `authored_at` when known, else `filed_at`.
    pub fn dated_at(&self) -> &str {
        self.authored_at.as_deref().unwrap_or(&self.filed_at)
    }
}

/// The stored form of a drawer's `entities`: 3.11's `;`-separated string, or `None` when it
/// has none.
pub fn entities_to_field(entities: &[String]) -> Option<String> {
    (!entities.is_empty()).then(|| entities.join(";"))
}

/// The names of a stored `entities` value, parsed as 3.11 does: split at `;`, trimmed, empty
/// names dropped, the first spelling of a repeat kept.
pub fn entities_from_field(stored: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for name in stored.split(';').map(str::trim).filter(|n| !n.is_empty()) {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    names
}

/// A drawer's place in a mined conversation: which conversation, which turns, who spoke.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConversationRef {
    /// The conversation's id in its export (a session id, a ChatGPT conversation id, ...).
    pub id: String,
    /// The conversation's title, when the export has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Who speaks in the drawer, in order of first appearance ("user", "assistant", or a
    /// participant's name).
    #[serde(default)]
    pub speakers: Vec<String>,
    /// Index of the drawer's first turn in the conversation (from 0).
    pub first_turn: u32,
    /// Index of its last turn (equal to `first_turn` for a single turn or a piece of one).
    pub last_turn: u32,
    /// When the drawer's last turn was written, when known (local ISO, like `authored_at`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authored_until: Option<String>,
    /// How the drawer was cut from the conversation (whole exchanges or an extracted memory).
    #[serde(default)]
    pub extract: crate::conversations::ExtractMode,
}

/// A drawer: id, verbatim text and metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drawer {
    /// Unique id, `drawer_{wing}_{room}_{16 hex}`.
    pub id: String,
    /// The verbatim text.
    pub text: String,
    /// Wing, room, source and filing metadata.
    #[serde(flatten)]
    pub metadata: DrawerMetadata,
}
