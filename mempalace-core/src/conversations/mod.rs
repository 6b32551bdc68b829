//! Conversations with AI assistants (and between people) as memories: the exports and
//! transcripts they come in ([`formats`]), cut into drawers of whole exchanges ([`exchanges`]),
//! routed to topic rooms ([`topic_rooms`]) or, with `--extract general`, to memory-kind rooms
//! ([`general_extraction`]), and turned into drawers that remember who spoke when
//! ([`conversation_drawers`]). [`crate::Palace::file_conversations`] files them incrementally.

pub mod conversation_drawers;
pub mod exchanges;
pub mod formats;
pub mod general_extraction;
pub mod timestamps;
pub mod topic_rooms;

use serde::{Deserialize, Serialize};

/// Who speaks a turn.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person talking to the assistant.
    User,
    /// The AI assistant.
    Assistant,
    /// A named participant of a many-party chat (a Slack channel), or text outside any turn.
    Participant(String),
}

impl Role {
    /// The speaker's label as drawers record it: "user", "assistant" or the participant's name.
    pub fn label(&self) -> &str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Participant(name) => name,
        }
    }
}

/// One turn: a speaker's uninterrupted message (an assistant's tool loop is one turn).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// Who spoke.
    pub role: Role,
    /// What was said, with tool calls and outputs already summarised.
    pub text: String,
    /// When it was written, local ISO `YYYY-MM-DDTHH:MM:SS` (see [`timestamps`]), if the
    /// export records it.
    pub authored_at: Option<String>,
}

/// One conversation: an id stable across re-exports, a title, and its turns in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conversation {
    /// The export's id for it (session id, conversation id), else one derived from the file.
    pub id: String,
    /// Its title, when the export has one.
    pub title: Option<String>,
    /// Its turns, oldest first; a turn's index here is its position for incremental mining.
    pub turns: Vec<Turn>,
}

/// How a conversation's turns become drawers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExtractMode {
    /// Whole exchanges (a user turn and its reply), verbatim, in a topic room (the default).
    #[default]
    Exchange,
    /// 3.11's `--extract general`: decisions, preferences, milestones, problems and emotional
    /// moments, each in the room of its kind.
    General,
}

impl ExtractMode {
    /// The mode's name as 3.11 writes `extract_mode` ("exchange" or "general").
    pub fn as_str(self) -> &'static str {
        match self {
            ExtractMode::Exchange => "exchange",
            ExtractMode::General => "general",
        }
    }
}
