//! Writing down how a palace was assembled the moment it is created, so every later open
//! (and every other host given the record) assembles it the same way: which vector store,
//! which collection, where the graph is. The palace calls the record once it has created its
//! store; what the record holds and where it lives is the opener's business (the CLI and the
//! facade write `palace.json`).

use crate::error::Result;

/// Records a palace's assembly when the palace is first created.
pub trait CreationRecord: Send + Sync {
    /// Writes the record unless an equivalent one is there already; called after every
    /// creation of the store (idempotent, cheap when the record exists).
    fn record(&self) -> Result<()>;
}
