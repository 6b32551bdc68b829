//! `mempalace mine <dir>`: walk a project, chunk its text files, file the chunks; or, with
//! `--mode convos`, file the chat exports and transcripts in a folder as conversations.

pub mod conversations;
pub mod pipeline;
pub mod progress;
pub mod walk;

pub use conversations::{ConversationMineOptions, ConversationMineReport, mine_conversations};
pub use pipeline::{Chunking, MineOptions, MineReport, mine_project};
