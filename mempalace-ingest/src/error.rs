//! What can go wrong bringing content into a palace, with the path or record it concerns.

use std::path::PathBuf;

use mempalace_core::PalaceError;
use mempalace_core::regular_file::RegularFileError;

/// Result alias of this crate.
pub type Result<T, E = IngestError> = std::result::Result<T, E>;

/// Why mining, a migration or a project's setup failed.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The palace refused or failed (its source kept: a store error may be worth a retry).
    #[error(transparent)]
    Palace(#[from] PalaceError),
    /// A project or export file could not be read or written safely.
    #[error(transparent)]
    File(#[from] RegularFileError),
    /// A folder or file operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The folder to mine or initialise is not a folder.
    #[error("{} is not a folder", .0.display())]
    NotAFolder(PathBuf),
    /// A `mempalace.yaml` that cannot be used.
    #[error("{}: {reason}", path.display())]
    ProjectConfig {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A request this crate does not offer (a mining mode, an option), with why.
    #[error("{0}")]
    Unsupported(String),
    /// Copying a 3.11 SQLite file (graph, coordination log) failed.
    #[error("copying {} to {}: {source}", from.display(), to.display())]
    SqliteCopy {
        /// The 3.11 file.
        from: PathBuf,
        /// Where it was going.
        to: PathBuf,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// A `wings split` plan that cannot be applied.
    #[error(transparent)]
    SplitPlan(#[from] crate::wing_split::SplitPlanError),
    /// A worker thread of the pipeline panicked or was cancelled by the runtime.
    #[error("a mining worker stopped unexpectedly: {0}")]
    Worker(#[from] tokio::task::JoinError),
}

impl IngestError {
    /// An I/O error at `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        IngestError::Io {
            path: path.into(),
            source,
        }
    }

    /// Whether the work was stopped by its [`mempalace_core::Cancellation`].
    pub fn is_cancelled(&self) -> bool {
        matches!(self, IngestError::Palace(PalaceError::Cancelled))
    }
}
