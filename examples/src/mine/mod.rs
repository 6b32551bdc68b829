//! `mempalace mine <dir>`: walk a project, chunk its text files, file the chunks.

pub mod pipeline;
pub mod progress;
pub mod walk;

pub use pipeline::{Chunking, MineOptions, MineReport, mine_project};
