//! # mempalace-ingest
//!
//! Bringing content into a MemPalace palace, as library calls that report progress
//! ([`progress::Progress`]) and stop when asked ([`mempalace_core::Cancellation`]):
//!
//! - [`mine::mine`]: a project folder's text files, or a folder of chat exports and
//!   transcripts, filed as drawers (re-mining files only what changed);
//! - [`migrate::migrate`]: a MemPalace 3.11 (ChromaDB) palace brought in whole;
//! - [`project`]: a project's `mempalace.yaml` (`init`) and the wing and rooms it mines into;
//! - [`sync`]: drawers of files a project no longer has or no longer mines;
//! - [`wing_links`]: a wing's hallways and entity tunnels, rebuilt after each mine;
//! - [`wing_split`]: a wing of many projects' transcripts split into one wing per project;
//! - [`hooks`]: what an agent harness's hooks (Claude Code, Codex) do: file each session as
//!   it goes and put the project's memory in a new session's context.
//!
//! The `mempalace` CLI, the MCP server's `mine` tool and an agent's own code call the same
//! functions.

#![warn(missing_docs)]

pub mod conversation_mine;
pub mod error;
pub mod hooks;
pub mod migrate;
pub mod mine;
pub mod progress;
pub mod project;
pub mod project_mine;
pub mod split;
pub mod sync;
pub mod walk;
pub mod wing_links;
pub mod wing_split;

pub use error::{IngestError, Result};
pub use mine::{MineMode, MineOutcome, MineRequest, mine};
pub use progress::{NoProgress, Progress, ProgressEvent, Work};
