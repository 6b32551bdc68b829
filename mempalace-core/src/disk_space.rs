//! Telling a full disk from other storage failures: an error on a disk with no space left says
//! so, since SQLite reports a failed open there only as a "disk I/O error".

use std::path::Path;

/// Free bytes below which a disk counts as full.
pub const FULL_BELOW_BYTES: u64 = 1 << 20;

/// Bytes free for unprivileged writers on the file system holding `path` (or its nearest
/// existing ancestor); `None` when that cannot be read.
pub fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let existing = path.ancestors().find(|p| p.exists())?;
    let c_path = std::ffi::CString::new(existing.as_os_str().as_bytes()).ok()?;
    let mut stats = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: c_path is a valid NUL-terminated string and stats a writable statvfs.
    let rc = unsafe { libc::statvfs(c_path.as_ptr(), stats.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: statvfs returned 0, so it filled the struct.
    let stats = unsafe { stats.assume_init() };
    Some(stats.f_bavail.saturating_mul(stats.f_frsize))
}

/// "the disk holding PATH is full (N bytes free)…" when it is, for an error at `path`.
pub fn full_disk_note(path: &Path) -> Option<String> {
    let free = free_bytes(path)?;
    (free < FULL_BELOW_BYTES).then(|| {
        format!(
            "the disk holding {} is full ({free} bytes free): free some space and run it again",
            path.display()
        )
    })
}

/// `message`, with the full-disk note for `path` appended when its disk is full.
pub fn with_full_disk_note(message: String, path: &Path) -> String {
    match full_disk_note(path) {
        Some(note) => format!("{message} ({note})"),
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disk_with_space_gets_no_note() {
        let dir = tempfile::tempdir().unwrap();
        assert!(free_bytes(&dir.path().join("not/yet/made")).is_some());
        if free_bytes(dir.path()).unwrap() >= FULL_BELOW_BYTES {
            assert_eq!(with_full_disk_note("x".into(), dir.path()), "x");
        }
    }
}
