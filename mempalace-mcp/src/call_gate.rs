//! `CallGate`: admits tool calls, bounds how many run at once, and drains them at shutdown.
//!
//! Every tool call holds a permit from the gate until it has finished (a write keeps its
//! permit even when the client that asked for it has gone). Shutting down closes the gate to
//! new calls and waits until every admitted call has given its permit back, so a server
//! stopped by SIGTERM loses no write it had accepted.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Why the gate did not admit a call.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CallRefused {
    /// Every permit is taken; the client should retry once a call has answered.
    #[error("server busy: {0} tool calls are in flight; retry when one has answered")]
    Busy(usize),
    /// The server is shutting down and admits no new calls.
    #[error("server is shutting down; no new tool calls are accepted")]
    ShuttingDown,
}

/// Admits at most `capacity` tool calls at once, until [`CallGate::drain`] closes it.
#[derive(Debug)]
pub struct CallGate {
    permits: Arc<Semaphore>,
    capacity: usize,
    closed: AtomicBool,
}

/// A call's right to run; given back when dropped.
#[derive(Debug)]
pub struct CallPermit(#[allow(dead_code)] OwnedSemaphorePermit);

impl CallGate {
    /// A gate admitting at most `capacity` calls at once (at least one).
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        CallGate {
            permits: Arc::new(Semaphore::new(capacity)),
            capacity,
            closed: AtomicBool::new(false),
        }
    }

    /// Admits one call now, or says why not (never waits).
    pub fn enter(&self) -> Result<CallPermit, CallRefused> {
        if self.closed.load(Ordering::Acquire) {
            return Err(CallRefused::ShuttingDown);
        }
        Arc::clone(&self.permits)
            .try_acquire_owned()
            .map(CallPermit)
            .map_err(|_| CallRefused::Busy(self.capacity))
    }

    /// How many admitted calls have not finished yet.
    pub fn in_flight(&self) -> usize {
        self.capacity - self.permits.available_permits()
    }

    /// Closes the gate to new calls and waits up to `within` for the admitted ones to finish;
    /// returns how many were still running when the wait ended (0: all finished).
    pub async fn drain(&self, within: Duration) -> usize {
        self.closed.store(true, Ordering::Release);
        let all = u32::try_from(self.capacity).unwrap_or(u32::MAX);
        match tokio::time::timeout(within, self.permits.acquire_many(all)).await {
            Ok(Ok(permits)) => {
                // Keep the permits: nothing runs after a drain.
                permits.forget();
                0
            }
            _ => self.in_flight(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_up_to_its_capacity() {
        let gate = CallGate::new(2);
        let a = gate.enter().unwrap();
        let _b = gate.enter().unwrap();
        assert_eq!(gate.enter().unwrap_err(), CallRefused::Busy(2));
        assert_eq!(gate.in_flight(), 2);
        drop(a);
        assert!(gate.enter().is_ok());
    }

    #[tokio::test]
    async fn drain_waits_for_admitted_calls_and_refuses_new_ones() {
        let gate = Arc::new(CallGate::new(4));
        let permit = gate.enter().unwrap();
        let finished = Arc::new(AtomicBool::new(false));
        let call = {
            let finished = Arc::clone(&finished);
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(200)).await;
                finished.store(true, Ordering::Release);
                drop(permit);
            })
        };
        let still_running = gate.drain(Duration::from_secs(10)).await;
        assert_eq!(still_running, 0);
        assert!(
            finished.load(Ordering::Acquire),
            "drain returned before the call ended"
        );
        assert_eq!(gate.enter().unwrap_err(), CallRefused::ShuttingDown);
        call.await.unwrap();
    }

    #[tokio::test]
    async fn drain_gives_up_after_its_deadline() {
        let gate = CallGate::new(3);
        let _stuck = gate.enter().unwrap();
        assert_eq!(gate.drain(Duration::from_millis(50)).await, 1);
    }
}
