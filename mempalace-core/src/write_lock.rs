//! The palace write lock: makes a check-then-write (such as `add_drawer`'s duplicate check and
//! insert) atomic across tasks and, with [`FileWriteLock`], across processes.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::sync::{Mutex, OwnedMutexGuard};

use crate::error::{PalaceError, Result};

/// Held while a write is in progress; dropping it releases the lock.
pub struct WriteGuard {
    _task_guard: OwnedMutexGuard<()>,
    _file: Option<File>,
}

/// A lock serialising palace writes.
#[async_trait]
pub trait WriteLock: Send + Sync {
    /// Waits for the lock (up to the implementation's timeout) and returns its guard.
    async fn acquire(&self) -> Result<WriteGuard>;
}

/// Serialises writes between the tasks of one process only.
#[derive(Default, Clone)]
pub struct ProcessWriteLock {
    mutex: Arc<Mutex<()>>,
}

impl ProcessWriteLock {
    /// A new, unlocked lock.
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl WriteLock for ProcessWriteLock {
    async fn acquire(&self) -> Result<WriteGuard> {
        Ok(WriteGuard {
            _task_guard: Arc::clone(&self.mutex).lock_owned().await,
            _file: None,
        })
    }
}

/// Serialises writes between all processes that open the same palace, with an advisory lock
/// (`flock`) on a lock file. The kernel releases it when the holder exits or is killed, so a
/// dead process never leaves a stale lock behind. Waiting is bounded: after `timeout` the
/// caller gets [`PalaceError::PalaceBusy`].
#[derive(Clone)]
pub struct FileWriteLock {
    path: PathBuf,
    timeout: Duration,
    in_process: ProcessWriteLock,
}

impl FileWriteLock {
    /// Default wait before reporting the palace busy.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

    /// A lock on the file at `path` (created, with its folder, on first use).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileWriteLock {
            path: path.into(),
            timeout: Self::DEFAULT_TIMEOUT,
            in_process: ProcessWriteLock::new(),
        }
    }

    /// Sets how long `acquire` waits before giving up.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn open(&self) -> Result<File> {
        let io = |source| PalaceError::Io {
            path: self.path.clone(),
            source,
        };
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&self.path)
            .map_err(io)
    }
}

#[async_trait]
impl WriteLock for FileWriteLock {
    async fn acquire(&self) -> Result<WriteGuard> {
        let started = Instant::now();
        // Tasks of this process queue here, so only one of them polls the file lock.
        let task_guard =
            tokio::time::timeout(self.timeout, self.in_process.mutex.clone().lock_owned())
                .await
                .map_err(|_| PalaceError::PalaceBusy {
                    path: self.path.clone(),
                    waited_ms: started.elapsed().as_millis() as u64,
                })?;
        let file = self.open()?;
        let mut pause = Duration::from_millis(1);
        loop {
            match file.try_lock() {
                Ok(()) => {
                    return Ok(WriteGuard {
                        _task_guard: task_guard,
                        _file: Some(file),
                    });
                }
                Err(TryLockError::WouldBlock) => {
                    if started.elapsed() >= self.timeout {
                        return Err(PalaceError::PalaceBusy {
                            path: self.path.clone(),
                            waited_ms: started.elapsed().as_millis() as u64,
                        });
                    }
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(25));
                }
                Err(TryLockError::Error(source)) => {
                    return Err(PalaceError::Io {
                        path: self.path.clone(),
                        source,
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn second_holder_waits_then_times_out_as_busy() {
        let dir = std::env::temp_dir().join(format!("mempalace-lock-{}", std::process::id()));
        let path = dir.join("write.lock");
        let first = FileWriteLock::new(&path);
        // A separate lock object models another process: its own in-process queue, own file handle.
        let other = FileWriteLock::new(&path).with_timeout(Duration::from_millis(100));
        let guard = first.acquire().await.unwrap();
        match other.acquire().await {
            Err(PalaceError::PalaceBusy { waited_ms, .. }) => assert!(waited_ms >= 100),
            Err(e) => panic!("unexpected error {e}"),
            Ok(_) => panic!("lock taken twice"),
        }
        drop(guard);
        let _again = other.acquire().await.unwrap();
        let _ = std::fs::remove_dir_all(dir);
    }
}
