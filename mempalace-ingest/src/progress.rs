//! How long work (mining, a migration) reports how far it is: events a caller renders as a
//! progress bar (the CLI, with indicatif), logs, or ignores ([`NoProgress`]).

/// What is being counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// Files of a project.
    Files,
    /// Bytes of chat exports read.
    Bytes,
    /// Drawer records of a palace being migrated.
    Drawers,
}

/// One step of the work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProgressEvent<'a> {
    /// The work's size is known: `total` of `work`.
    Started {
        /// What is counted.
        work: Work,
        /// How much there is.
        total: u64,
    },
    /// How far the work is: `done` of the total, and the drawers filed so far.
    Advanced {
        /// Done so far, in the started unit.
        done: u64,
        /// Drawers filed so far.
        drawers_filed: u64,
    },
    /// A file or record passed over, with the reason.
    Skipped {
        /// The file or record.
        item: &'a str,
        /// Why.
        reason: &'a str,
    },
    /// A file or record that broke off, with the error.
    Failed {
        /// The file or record.
        item: &'a str,
        /// What went wrong.
        reason: &'a str,
    },
    /// The work is over (finished, stopped or failed).
    Finished,
}

/// Receives the progress of long work; called from the task doing it, so it must be quick.
pub trait Progress: Send + Sync {
    /// One event.
    fn event(&self, event: ProgressEvent<'_>);
}

/// Reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn event(&self, _event: ProgressEvent<'_>) {}
}

/// Sends each event to `tracing` at debug level (target `mempalace::progress`).
#[derive(Debug, Clone, Copy, Default)]
pub struct TracingProgress;

impl Progress for TracingProgress {
    fn event(&self, event: ProgressEvent<'_>) {
        tracing::debug!(target: "mempalace::progress", ?event);
    }
}
