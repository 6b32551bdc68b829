//! Why a palace could not be opened.

use std::path::PathBuf;

use mempalace_core::PalaceError;

/// Why [`crate::PalaceBuilder`] could not open (or create) a palace.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The palace's `palace.json` is unreadable or not a palace record.
    #[error("{}: {reason}", path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// What was asked contradicts what the palace records (another backend, collection,
    /// graph or embedder).
    #[error("{0}")]
    Mismatch(String),
    /// A setting from the environment is not usable.
    #[error("{variable}={value:?} {problem}")]
    Setting {
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The palace needs a backend this build of the crate leaves out.
    #[error(
        "the palace uses {what}, which this build leaves out: enable the `{feature}` feature of the mempalace crate"
    )]
    BackendNotBuilt {
        /// The backend.
        what: &'static str,
        /// The crate feature that builds it.
        feature: &'static str,
    },
    /// No embedder was given, and this build has no MiniLM (feature `minilm`).
    #[error(
        "no embedder: give one with PalaceBuilder::embedder, or enable the `minilm` feature of the mempalace crate"
    )]
    NoEmbedder,
    /// A backend failed to open (its error is the source: a connection refused may be worth a
    /// retry).
    #[error(transparent)]
    Palace(#[from] PalaceError),
}
