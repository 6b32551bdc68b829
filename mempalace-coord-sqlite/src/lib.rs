//! # mempalace-coord-sqlite
//!
//! MemPalace's agent-coordination log ([`mempalace_core::coordination::CoordinationLog`]) over
//! SQLite (bundled), in MemPalace 3.11's `logstream.sqlite3` format: the same `events`,
//! `artifacts` and `event_artifacts` tables, columns and indexes, so a palace's log written by
//! 3.11 reads here and one written here reads there. Opening a 3.11 file from before the
//! provenance/topic columns migrates it as 3.11 does.
//!
//! - `seq` is the rowid (append order); `origin_seq` is set to the rowid, as 3.11 does for
//!   local events.
//! - `origin_replica` is the palace's replica id from `replica.json` beside the log (3.11's
//!   file; minted as `rep_{32 hex}` on the first open when absent, never overwritten).
//! - `hlc` is 3.11's hybrid-logical-clock format `{ms:013}-{counter:06x}-{replica}`, computed
//!   inside the insert transaction from the newest stamp in the file, so it increases with
//!   `seq` across processes.
//!
//! The file runs in WAL mode with a 30 s busy timeout and every append is one `IMMEDIATE`
//! transaction (artifact check, insert, links), so many processes can append at once without
//! losing or duplicating events. The file is created on the first write: reads of a log that
//! does not exist return empty results and create nothing.

mod log;
mod schema;

pub use log::SqliteCoordinationLog;
pub use schema::{CREATE_SCHEMA, replica_id};
