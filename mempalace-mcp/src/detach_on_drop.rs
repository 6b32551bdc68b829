//! `DetachOnDrop`: a future that runs where it is polled, and goes on in a task of its own if
//! it is dropped before it has finished.
//!
//! A write tool must run to its end even when nobody waits for its answer any more (its client
//! disconnected, its session was torn down). Spawning every write into a task of its own does
//! that at the cost of a hand-off between tasks on every call; this runs the write in the
//! caller's task and spawns only what is left of it when the caller gives up.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Runs the wrapped future in place; dropped unfinished, it spawns the rest on the current
/// runtime (when there is none, or it is shutting down, the rest is dropped).
pub struct DetachOnDrop<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    /// The future, until it has finished.
    future: Option<Pin<Box<F>>>,
}

impl<F> DetachOnDrop<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    /// Wraps `future`.
    pub fn new(future: F) -> Self {
        DetachOnDrop {
            future: Some(Box::pin(future)),
        }
    }
}

impl<F> Future for DetachOnDrop<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        let Some(future) = this.future.as_mut() else {
            // Polled again after it finished: there is nothing more to give.
            return Poll::Pending;
        };
        let output = std::task::ready!(future.as_mut().poll(cx));
        this.future = None;
        Poll::Ready(output)
    }
}

impl<F> Drop for DetachOnDrop<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn drop(&mut self) {
        if let Some(rest) = self.future.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(rest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    tokio::task_local! {
        static CALLER: u32;
    }

    #[tokio::test]
    async fn awaited_it_runs_in_the_callers_task() {
        // A task-local of the caller is visible only to code that runs in the caller's task.
        let seen = CALLER
            .scope(7, DetachOnDrop::new(async { CALLER.try_with(|c| *c) }))
            .await;
        assert_eq!(seen.ok(), Some(7));
    }

    #[tokio::test]
    async fn dropped_half_way_it_still_finishes() {
        let finished = Arc::new(AtomicBool::new(false));
        let (started_tx, started_rx) = tokio::sync::oneshot::channel();
        let write = DetachOnDrop::new({
            let finished = Arc::clone(&finished);
            async move {
                started_tx.send(()).unwrap();
                tokio::time::sleep(Duration::from_millis(50)).await;
                finished.store(true, Ordering::SeqCst);
            }
        });
        // The caller gives up once the write has started: `select!` drops the losing branch.
        tokio::select! {
            _ = write => panic!("the write cannot finish before it has started"),
            _ = started_rx => {}
        }
        assert!(!finished.load(Ordering::SeqCst));
        tokio::time::timeout(Duration::from_secs(10), async {
            while !finished.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("the rest of the write ran in a task of its own");
    }

    #[tokio::test]
    async fn dropped_before_it_started_it_still_runs() {
        let (done_tx, done_rx) = tokio::sync::oneshot::channel();
        drop(DetachOnDrop::new(async move {
            done_tx.send(()).unwrap();
        }));
        tokio::time::timeout(Duration::from_secs(10), done_rx)
            .await
            .expect("it ran")
            .unwrap();
    }
}
