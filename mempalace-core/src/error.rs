//! Typed errors for every palace operation.

use std::path::PathBuf;

/// A backend's own error, kept as the source of a [`PalaceError`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Result alias used throughout MemPalace.
pub type Result<T, E = PalaceError> = std::result::Result<T, E>;

/// Everything that can go wrong in a palace operation, with the context needed to act on it.
#[derive(Debug, thiserror::Error)]
pub enum PalaceError {
    /// The palace at this path was never initialised (no drawers store exists yet).
    #[error("No palace found at {}. Run: mempalace init <dir> && mempalace mine <dir>", palace_path.display())]
    NoPalace {
        /// Where the palace was looked for.
        palace_path: PathBuf,
    },
    /// A caller-supplied value was rejected before anything was written.
    #[error("invalid {field}: {reason}")]
    InvalidInput {
        /// The argument that was rejected (e.g. "content", "wing", "limit").
        field: &'static str,
        /// Why it was rejected.
        reason: String,
    },
    /// A vector's dimension differs from the store's or embedder's.
    #[error("vector dimension mismatch: expected {expected}, got {actual} ({context})")]
    DimensionMismatch {
        /// The dimension the store or palace was created with.
        expected: usize,
        /// The dimension that was offered.
        actual: usize,
        /// Where the mismatch was found.
        context: String,
    },
    /// A wing filter named a wing that holds no drawers.
    #[error("unknown wing {wing:?}; the palace has: {}", known.join(", "))]
    UnknownWing {
        /// The wing asked for.
        wing: String,
        /// The wings that exist.
        known: Vec<String>,
    },
    /// A room filter named a room that holds no drawers.
    #[error("unknown room {room:?}; the palace has: {}", known.join(", "))]
    UnknownRoom {
        /// The room asked for.
        room: String,
        /// The rooms that exist.
        known: Vec<String>,
    },
    /// A drawer id was not found.
    #[error("Drawer not found: {0}")]
    DrawerNotFound(String),
    /// The palace write lock could not be taken in time (another process holds it).
    #[error("palace busy: could not take the write lock at {} within {waited_ms} ms", path.display())]
    PalaceBusy {
        /// The lock file (`postgres:<schema>` for a fleet's lock on the server).
        path: PathBuf,
        /// How long we waited.
        waited_ms: u64,
    },
    /// The embedder failed (model missing, tokenizer error, ...).
    #[error("embedder error: {0}")]
    Embedder(String),
    /// The vector store backend failed.
    #[error("vector store error ({backend}, {operation}): {message}")]
    Store {
        /// Backend name, e.g. "lancedb".
        backend: &'static str,
        /// The operation that failed, e.g. "upsert".
        operation: &'static str,
        /// The backend's message.
        message: String,
        /// The backend's own error (downcast it to tell, say, a timeout worth a retry).
        #[source]
        source: BoxError,
    },
    /// The knowledge graph backend failed.
    #[error("knowledge graph error ({operation}): {message}")]
    KnowledgeGraph {
        /// The operation that failed, e.g. "add_triple".
        operation: &'static str,
        /// The backend's message.
        message: String,
        /// The backend's own error.
        #[source]
        source: BoxError,
    },
    /// The caller cancelled the work (see [`crate::cancellation::Cancellation`]); nothing of
    /// the step it stopped in was written.
    #[error("cancelled before it finished; nothing of the unfinished step was written")]
    Cancelled,
    /// A file-system operation on the palace failed.
    #[error("I/O error at {}: {source}", path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The backend does not offer this operation; the message says what to use instead.
    #[error("the {backend} backend cannot {operation}: {instead}")]
    Unsupported {
        /// The backend ("qdrant", "postgres", "memory", ...).
        backend: String,
        /// What was asked, e.g. "snapshot its data into a folder".
        operation: &'static str,
        /// What to do instead.
        instead: &'static str,
    },
}

impl PalaceError {
    /// A part that cannot be copied into a backup folder: its data is moved with `export`.
    pub fn no_snapshot(backend: impl Into<String>) -> Self {
        PalaceError::Unsupported {
            backend: backend.into(),
            operation: "snapshot its data into a backup folder",
            instead: "copy the palace with `mempalace export` (Palace::export) instead, or the server's own backups",
        }
    }

    /// Shorthand for an [`PalaceError::InvalidInput`].
    pub fn invalid(field: &'static str, reason: impl Into<String>) -> Self {
        PalaceError::InvalidInput {
            field,
            reason: reason.into(),
        }
    }

    /// A [`PalaceError::Io`] error at `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        PalaceError::Io {
            path: path.into(),
            source,
        }
    }

    /// A [`PalaceError::Store`] error from the backend's error (kept as the source) or a
    /// message.
    pub fn store(backend: &'static str, operation: &'static str, err: impl Into<BoxError>) -> Self {
        let source = err.into();
        PalaceError::Store {
            backend,
            operation,
            message: source.to_string(),
            source,
        }
    }

    /// A [`PalaceError::KnowledgeGraph`] error from the backend's error (kept as the source)
    /// or a message.
    pub fn kg(operation: &'static str, err: impl Into<BoxError>) -> Self {
        let source = err.into();
        PalaceError::KnowledgeGraph {
            operation,
            message: source.to_string(),
            source,
        }
    }
}
