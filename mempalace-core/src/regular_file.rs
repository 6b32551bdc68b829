//! Reading and creating project files without following links: a project is untrusted input,
//! so a `mempalace.yaml` or source file that is a symlink, a FIFO or a device is refused, never
//! followed out of the project, waited on, or read without end.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Why a file could not be read or created.
#[derive(Debug, thiserror::Error)]
pub enum RegularFileError {
    /// The path does not exist.
    #[error("{path} does not exist")]
    Missing {
        /// The path.
        path: String,
    },
    /// The path is a symbolic link (links are never followed).
    #[error("{path} is a symbolic link; refusing to follow it")]
    Symlink {
        /// The path.
        path: String,
    },
    /// The path is a folder, FIFO, socket or device.
    #[error("{path} is not a regular file")]
    NotRegular {
        /// The path.
        path: String,
    },
    /// The file is larger than the cap.
    #[error("{path} is larger than {max} bytes")]
    TooLarge {
        /// The path.
        path: String,
        /// The cap.
        max: u64,
    },
    /// The path exists already (creation never replaces a file).
    #[error("{path} exists already")]
    Exists {
        /// The path.
        path: String,
    },
    /// Any other I/O error.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

fn classify(path: &Path, e: std::io::Error) -> RegularFileError {
    let path_text = path.display().to_string();
    match (e.kind(), e.raw_os_error()) {
        (std::io::ErrorKind::NotFound, _) => RegularFileError::Missing { path: path_text },
        (std::io::ErrorKind::AlreadyExists, _) => RegularFileError::Exists { path: path_text },
        // O_NOFOLLOW on a link answers ELOOP.
        (_, Some(libc::ELOOP)) => RegularFileError::Symlink { path: path_text },
        _ => RegularFileError::Io {
            path: path_text,
            source: e,
        },
    }
}

/// Opens `path` for reading without following a final symlink and without blocking on a FIFO,
/// and checks on the open handle that it is a regular file.
pub fn open_regular(path: &Path) -> Result<File, RegularFileError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| classify(path, e))?;
    let meta = file.metadata().map_err(|e| classify(path, e))?;
    if !meta.file_type().is_file() {
        return Err(RegularFileError::NotRegular {
            path: path.display().to_string(),
        });
    }
    Ok(file)
}

/// Reads a regular file of at most `max_bytes` (reading at most `max_bytes + 1`, so a file
/// that grows while it is read is still refused rather than read without end).
pub fn read_regular(path: &Path, max_bytes: u64) -> Result<Vec<u8>, RegularFileError> {
    let file = open_regular(path)?;
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| classify(path, e))?;
    if bytes.len() as u64 > max_bytes {
        return Err(RegularFileError::TooLarge {
            path: path.display().to_string(),
            max: max_bytes,
        });
    }
    Ok(bytes)
}

/// Whether anything (a file, a folder, a link, even a dangling one) is at `path`.
pub fn anything_at(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Creates `path` as a new regular file holding `text`; never follows a link (even a dangling
/// one) and never replaces anything that is there.
pub fn create_new_regular(path: &Path, text: &str) -> Result<(), RegularFileError> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .mode(0o644)
        .open(path)
        .map_err(|e| classify(path, e))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| classify(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_fifos_and_oversized_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("secret");
        std::fs::write(&target, "secret").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(matches!(
            read_regular(&link, 100),
            Err(RegularFileError::Symlink { .. })
        ));

        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        assert!(matches!(
            read_regular(&fifo, 100),
            Err(RegularFileError::NotRegular { .. })
        ));
        assert!(matches!(
            read_regular(Path::new("/dev/zero"), 100),
            Err(RegularFileError::NotRegular { .. })
        ));
        assert!(matches!(
            read_regular(dir.path(), 100),
            Err(RegularFileError::NotRegular { .. })
        ));

        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'a'; 101]).unwrap();
        assert!(matches!(
            read_regular(&big, 100),
            Err(RegularFileError::TooLarge { .. })
        ));
        assert_eq!(read_regular(&big, 101).unwrap().len(), 101);
        assert!(matches!(
            read_regular(&dir.path().join("none"), 100),
            Err(RegularFileError::Missing { .. })
        ));
    }

    #[test]
    fn creation_never_follows_or_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let dangling = dir.path().join("cfg");
        let target = outside.path().join("created-outside");
        std::os::unix::fs::symlink(&target, &dangling).unwrap();
        assert!(create_new_regular(&dangling, "x").is_err());
        assert!(!target.exists(), "nothing may be created through the link");
        assert!(anything_at(&dangling));

        let fresh = dir.path().join("fresh");
        create_new_regular(&fresh, "hello").unwrap();
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "hello");
        assert!(matches!(
            create_new_regular(&fresh, "again"),
            Err(RegularFileError::Exists { .. })
        ));
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "hello");
    }
}
