//! What hooks keep between calls, in 3.11's folder `~/.mempalace/hook_state/`: each
//! session's save marker (`<session>_last_save`: the message count at the last checkpoint),
//! the log (`hook.log`), and one lock per transcript so that two hooks never file it at once.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

/// The log file in the state folder.
const LOG_FILE: &str = "hook.log";
/// The folder of transcript locks in the state folder.
const LOCKS_DIR: &str = "locks";
/// How often a hook that waits for a lock tries again.
const LOCK_POLL: Duration = Duration::from_millis(50);

/// The hooks' state folder.
#[derive(Debug, Clone)]
pub struct HookState {
    dir: PathBuf,
}

impl HookState {
    /// The state kept in `dir` (created, private to the user, on first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        HookState { dir: dir.into() }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn ensure_dir(&self) -> std::io::Result<()> {
        if !self.dir.is_dir() {
            std::fs::create_dir_all(&self.dir)?;
            std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700))?;
        }
        Ok(())
    }

    fn marker_path(&self, session_id: &str) -> PathBuf {
        self.dir.join(format!("{session_id}_last_save"))
    }

    /// The message count at the session's last checkpoint (0 when none, or unreadable).
    pub fn last_save(&self, session_id: &str) -> u64 {
        std::fs::read_to_string(self.marker_path(session_id))
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Records the message count of a checkpoint just written.
    pub fn set_last_save(&self, session_id: &str, count: u64) -> std::io::Result<()> {
        self.ensure_dir()?;
        // Written whole, then renamed over the marker: a reader never sees a half-written one.
        let marker = self.marker_path(session_id);
        let tmp = self
            .dir
            .join(format!(".{session_id}_last_save.{}", std::process::id()));
        std::fs::write(&tmp, count.to_string())?;
        std::fs::rename(&tmp, &marker)
    }

    /// Forgets the session's marker (the session ended).
    pub fn clear_last_save(&self, session_id: &str) {
        let _ = std::fs::remove_file(self.marker_path(session_id));
    }

    /// Appends `[HH:MM:SS] message` to `hook.log` (the file 3.11's hooks log to); a log that
    /// cannot be written is passed over.
    pub fn log(&self, message: &str) {
        tracing::info!(target: "mempalace::hooks", "{message}");
        let write = || -> std::io::Result<()> {
            self.ensure_dir()?;
            let mut f = OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(self.dir.join(LOG_FILE))?;
            let now = chrono::Local::now().format("%H:%M:%S");
            writeln!(f, "[{now}] {message}")
        };
        let _ = write();
    }

    fn lock_path(&self, transcript: &Path) -> PathBuf {
        let digest = Sha256::digest(transcript.as_os_str().as_encoded_bytes());
        let name: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(LOCKS_DIR).join(format!("{name}.lock"))
    }

    /// The transcript's lock if no other hook holds it now.
    pub fn try_lock(&self, transcript: &Path) -> std::io::Result<Option<TranscriptLock>> {
        let path = self.lock_path(transcript);
        self.ensure_dir()?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&path)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(TranscriptLock { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    }

    /// The transcript's lock, waiting for another hook to let it go until `deadline`.
    pub async fn lock_by(
        &self,
        transcript: &Path,
        deadline: Instant,
    ) -> std::io::Result<Option<TranscriptLock>> {
        loop {
            if let Some(lock) = self.try_lock(transcript)? {
                return Ok(Some(lock));
            }
            if Instant::now() + LOCK_POLL >= deadline {
                return Ok(None);
            }
            tokio::time::sleep(LOCK_POLL).await;
        }
    }
}

/// Held while a hook files a transcript; released when dropped (or when the process ends,
/// however it ends).
#[derive(Debug)]
pub struct TranscriptLock {
    _file: File,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_round_trip_and_locks_exclude() {
        let dir = tempfile::tempdir().unwrap();
        let state = HookState::new(dir.path().join("hook_state"));
        assert_eq!(state.last_save("s1"), 0);
        state.set_last_save("s1", 16).unwrap();
        assert_eq!(state.last_save("s1"), 16);
        state.clear_last_save("s1");
        assert_eq!(state.last_save("s1"), 0);
        let t = Path::new("/home/me/t.jsonl");
        let held = state.try_lock(t).unwrap().expect("free");
        assert!(state.try_lock(t).unwrap().is_none(), "held");
        assert!(state.try_lock(Path::new("/other.jsonl")).unwrap().is_some());
        drop(held);
        assert!(state.try_lock(t).unwrap().is_some());
        state.log("hello");
        let log = std::fs::read_to_string(state.dir().join(LOG_FILE)).unwrap();
        assert!(log.ends_with("] hello\n"));
    }
}
