//! Secrets read from files (`--…-file` flags and `…_FILE` variables), so they stay out of the
//! command line and the environment of every process.

use std::io::Read;
use std::path::Path;

/// Largest secret file read, in bytes.
pub const MAX_SECRET_FILE_BYTES: u64 = 64 * 1024;

/// Why a secret file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SecretFileError {
    /// It could not be read.
    #[error("reading the secret file {}: {source}", path.display())]
    Unreadable {
        /// The file.
        path: std::path::PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// It is not a regular file of some text within the size limit.
    #[error("the secret file {} {problem}", path.display())]
    Unusable {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong ("is empty", "is not a regular file", ...).
        problem: String,
    },
}

/// The secret in `path`: its text without surrounding white space (a trailing newline is
/// ignored). Links are followed (secret mounts are often links); anything but a regular file
/// of at most [`MAX_SECRET_FILE_BYTES`] holding some text is an error. Warns when other users
/// can read the file.
pub fn read_secret(path: &Path) -> Result<String, SecretFileError> {
    let unreadable = |source| SecretFileError::Unreadable {
        path: path.to_path_buf(),
        source,
    };
    let unusable = |problem: &str| SecretFileError::Unusable {
        path: path.to_path_buf(),
        problem: problem.to_string(),
    };
    let too_large = format!("is larger than {MAX_SECRET_FILE_BYTES} bytes");
    let meta = std::fs::metadata(path).map_err(unreadable)?;
    if !meta.is_file() {
        return Err(unusable("is not a regular file"));
    }
    if meta.len() > MAX_SECRET_FILE_BYTES {
        return Err(unusable(&too_large));
    }
    // Read through one handle, capped: a file swapped after the check cannot be read whole.
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_SECRET_FILE_BYTES + 1).read_to_string(&mut text))
        .map_err(unreadable)?;
    if text.len() as u64 > MAX_SECRET_FILE_BYTES {
        return Err(unusable(&too_large));
    }
    let secret = text.trim();
    if secret.is_empty() {
        return Err(unusable("is empty"));
    }
    warn_if_others_can_read(path);
    Ok(secret.to_string())
}

/// Logs a warning when group or others may read `path`.
#[cfg(unix)]
pub fn warn_if_others_can_read(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(path)
        && meta.permissions().mode() & 0o077 != 0
    {
        tracing::warn!(
            file = %path.display(),
            "the secret file can be read by other users; chmod 600 it"
        );
    }
}

/// Logs a warning when group or others may read `path` (not checked on this platform).
#[cfg(not(unix))]
pub fn warn_if_others_can_read(_path: &Path) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_is_its_trimmed_text_and_bad_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("url");
        std::fs::write(&file, "postgres://u:p@db/x\n").unwrap();
        assert_eq!(read_secret(&file).unwrap(), "postgres://u:p@db/x");
        std::fs::write(&file, " \n").unwrap();
        assert!(
            read_secret(&file)
                .unwrap_err()
                .to_string()
                .contains("empty")
        );
        assert!(read_secret(dir.path()).is_err(), "a folder");
        assert!(read_secret(&dir.path().join("missing")).is_err());
        std::fs::write(&file, vec![b'x'; MAX_SECRET_FILE_BYTES as usize + 1]).unwrap();
        assert!(
            read_secret(&file)
                .unwrap_err()
                .to_string()
                .contains("larger")
        );
    }
}
