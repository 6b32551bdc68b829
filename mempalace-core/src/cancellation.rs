//! Stopping long work early: a flag the caller raises (Ctrl-C, a deadline, a shutdown) and
//! the work checks between its steps, so it stops without leaving anything half written.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A shared request to stop: clones see the same flag.
#[derive(Clone, Debug, Default)]
pub struct Cancellation(Arc<AtomicBool>);

impl Cancellation {
    /// A request not raised yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Wraps a flag the caller already shares (e.g. one a signal handler sets).
    pub fn from_flag(flag: Arc<AtomicBool>) -> Self {
        Cancellation(flag)
    }

    /// Raises the request: work that checks it stops at its next step.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether the request was raised.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// [`crate::PalaceError::Cancelled`] when the request was raised.
    pub fn check(&self) -> crate::Result<()> {
        if self.is_cancelled() {
            Err(crate::PalaceError::Cancelled)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_request() {
        let a = Cancellation::new();
        let b = a.clone();
        assert!(a.check().is_ok());
        b.cancel();
        assert!(a.is_cancelled());
        assert!(matches!(a.check(), Err(crate::PalaceError::Cancelled)));
    }
}
