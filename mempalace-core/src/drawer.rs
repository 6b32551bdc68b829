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
