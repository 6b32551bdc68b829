//! The palace write lock: makes a check-then-write (such as `add_drawer`'s duplicate check and
//! insert) atomic across tasks and, with [`FileWriteLock`], across processes.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::sync::Mutex;

use crate::error::{PalaceError, Result};

/// Held while a write is in progress; dropping it releases the lock.
pub struct WriteGuard {
    _held: Box<dyn Send + Sync>,
}

impl WriteGuard {
    /// A guard that holds `held` (whatever keeps the lock taken: a mutex guard, a locked file,
    /// a database session) until it is dropped; for [`WriteLock`] implementations.
    pub fn holding(held: impl Send + Sync + 'static) -> Self {
        WriteGuard {
            _held: Box::new(held),
        }
    }
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
        Ok(WriteGuard::holding(
            Arc::clone(&self.mutex).lock_owned().await,
        ))
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
        self.open_file(&self.path)
    }

    /// Opens (creating it and its folder when missing) a lock file.
    fn open_file(&self, path: &Path) -> Result<File> {
        let io = |source| PalaceError::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(io)
    }
}

/// Pause between two tries of a lock another process holds. Short, so a waiter notices a
/// release within a couple of milliseconds.
const MAX_POLL_PAUSE: Duration = Duration::from_millis(2);

/// How long a process about to take the lock steps aside when another process is waiting for
/// it: longer than [`MAX_POLL_PAUSE`], so the waiter's next try falls inside the gap. Without
/// it, a process with a queue of writes re-takes the lock microseconds after each release and
/// a polling process starves until it times out as busy.
const HANDOFF_PAUSE: Duration = Duration::from_millis(5);

impl FileWriteLock {
    /// The file whose shared locks announce "a process is waiting for the write lock".
    fn waiting_path(&self) -> PathBuf {
        let mut name = self.path.as_os_str().to_owned();
        name.push(".waiting");
        PathBuf::from(name)
    }

    /// Whether another process has announced that it waits for the write lock: its shared
    /// lock on the waiting file makes a probe for an exclusive one fail.
    fn someone_waits(&self) -> bool {
        let Ok(probe) = self.open_file(&self.waiting_path()) else {
            return false;
        };
        matches!(probe.try_lock(), Err(TryLockError::WouldBlock))
    }

    /// Announces that this process waits for the write lock (until the returned file is
    /// dropped). `None` when the announcement could not be made this time (a probe held the
    /// file for an instant); the next try announces again.
    fn announce_waiting(&self) -> Option<File> {
        let file = self.open_file(&self.waiting_path()).ok()?;
        file.try_lock_shared().ok()?;
        Some(file)
    }
}

#[async_trait]
impl WriteLock for FileWriteLock {
    #[tracing::instrument(level = "debug", skip_all)]
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
        if self.someone_waits() {
            tokio::time::sleep(HANDOFF_PAUSE).await;
        }
        let mut waiting: Option<File> = None;
        let mut pause = Duration::from_millis(1);
        loop {
            match file.try_lock() {
                Ok(()) => {
                    return Ok(WriteGuard::holding((task_guard, file)));
                }
                Err(TryLockError::WouldBlock) => {
                    if started.elapsed() >= self.timeout {
                        return Err(PalaceError::PalaceBusy {
                            path: self.path.clone(),
                            waited_ms: started.elapsed().as_millis() as u64,
                        });
                    }
                    if waiting.is_none() {
                        waiting = self.announce_waiting();
                    }
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(MAX_POLL_PAUSE);
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

    /// A process with a queue of writes (8 tasks re-taking the lock back to back, on its own
    /// runtime and thread) does not starve another process that wants the lock once.
    #[tokio::test]
    async fn a_busy_process_lets_a_waiting_process_in() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let dir = std::env::temp_dir().join(format!("mempalace-fair-{}", std::process::id()));
        let path = dir.join("write.lock");
        let stop = Arc::new(AtomicBool::new(false));
        let busy_process = {
            let (busy, stop) = (FileWriteLock::new(&path), Arc::clone(&stop));
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_time()
                    .build()
                    .unwrap();
                rt.block_on(async move {
                    let mut writers = tokio::task::JoinSet::new();
                    for _ in 0..8 {
                        let (busy, stop) = (busy.clone(), Arc::clone(&stop));
                        writers.spawn(async move {
                            while !stop.load(Ordering::Relaxed) {
                                let _guard = busy.acquire().await.unwrap();
                                tokio::time::sleep(Duration::from_millis(3)).await;
                            }
                        });
                    }
                    writers.join_all().await;
                });
            })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        let other = FileWriteLock::new(&path).with_timeout(Duration::from_secs(2));
        let outcome = other.acquire().await.map(drop);
        stop.store(true, Ordering::Relaxed);
        busy_process.join().unwrap();
        let _ = std::fs::remove_dir_all(dir);
        outcome.expect("the waiting process gets the lock while the busy one keeps writing");
    }
}
