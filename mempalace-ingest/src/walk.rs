//! Finding a project's text files: .gitignore respected, build/vendor folders, binaries,
//! oversized files and symlinks skipped.

use std::path::{Path, PathBuf};

use ignore::WalkBuilder;

use mempalace_core::regular_file::{RegularFileError, read_regular};

use crate::project::PROJECT_CONFIG_FILE;

/// Folders never mined (build output, dependencies, caches, VCS).
pub const SKIPPED_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "__pycache__",
    ".venv",
    "venv",
    "env",
    "dist",
    "build",
    "target",
    "vendor",
    "third_party",
    ".next",
    ".nuxt",
    "coverage",
    ".mempalace",
    ".idea",
    ".vscode",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".cargo",
    "out",
    "bin",
    "obj",
];

/// Extensions of files that are never text.
const BINARY_EXTENSIONS: &[&str] = &[
    "png",
    "jpg",
    "jpeg",
    "gif",
    "bmp",
    "ico",
    "webp",
    "pdf",
    "zip",
    "gz",
    "tgz",
    "bz2",
    "xz",
    "7z",
    "tar",
    "exe",
    "dll",
    "so",
    "dylib",
    "a",
    "o",
    "rlib",
    "class",
    "jar",
    "wasm",
    "pyc",
    "bin",
    "dat",
    "db",
    "sqlite",
    "sqlite3",
    "lance",
    "safetensors",
    "onnx",
    "pt",
    "mp3",
    "mp4",
    "wav",
    "mov",
    "woff",
    "woff2",
    "ttf",
    "otf",
    "eot",
    "lock",
];

/// Largest file mined by default, in bytes.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Whether a folder name is one `mine` never enters.
pub fn is_skipped_dir(name: &str) -> bool {
    SKIPPED_DIRS.contains(&name) || name.ends_with(".egg-info")
}

/// A text file found in the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectFile {
    /// Absolute path (what drawers record as source_file).
    pub path: PathBuf,
    /// Path relative to the project root, with `/` separators (used for room routing).
    pub relative: String,
}

/// Why a file was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// Binary content or extension.
    Binary,
    /// Larger than the cap.
    TooLarge,
    /// Not readable as UTF-8.
    NotUtf8,
    /// A symlink, FIFO, device or folder where a regular file was listed.
    NotRegular,
    /// Could not be opened or read.
    Unreadable,
}

/// The project's candidate files in a stable (sorted) order, and how many were passed over.
pub fn project_files(root: &Path, max_file_bytes: u64) -> (Vec<ProjectFile>, usize) {
    walk_files(root, max_file_bytes, true)
}

/// Like [`project_files`], but entering every folder but the hidden and ignored ones: in a
/// folder of chat exports, `build` or `dist` is a Slack channel, not build output.
pub fn export_files(root: &Path, max_file_bytes: u64) -> (Vec<ProjectFile>, usize) {
    walk_files(root, max_file_bytes, false)
}

fn walk_files(
    root: &Path,
    max_file_bytes: u64,
    skip_build_dirs: bool,
) -> (Vec<ProjectFile>, usize) {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut files = Vec::new();
    let mut skipped = 0;
    let walker = WalkBuilder::new(&root)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .ignore(true)
        .follow_links(false)
        .sort_by_file_path(|a, b| a.cmp(b))
        .filter_entry(move |e| {
            !(skip_build_dirs
                && e.file_type().is_some_and(|t| t.is_dir())
                && is_skipped_dir(&e.file_name().to_string_lossy()))
        })
        .build();
    for entry in walker.flatten() {
        let Some(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() {
            // Symlinks are not followed: a target inside the tree is mined at its real path,
            // one outside the tree is not part of the project.
            skipped += 1;
            continue;
        }
        if !kind.is_file() || entry.file_name() == PROJECT_CONFIG_FILE {
            continue;
        }
        let path = entry.path().to_path_buf();
        // Drawers record their file as text: a name that is not UTF-8 would be recorded
        // lossily, and two such names could collide and overwrite each other's drawers.
        if path.to_str().is_none() {
            skipped += 1;
            continue;
        }
        let too_big = entry
            .metadata()
            .map(|m| m.len() > max_file_bytes)
            .unwrap_or(true);
        if too_big || has_binary_extension(&path) {
            skipped += 1;
            continue;
        }
        let relative = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        files.push(ProjectFile { path, relative });
    }
    (files, skipped)
}

fn has_binary_extension(path: &Path) -> bool {
    path.extension()
        .map(|e| BINARY_EXTENSIONS.contains(&e.to_string_lossy().to_lowercase().as_str()))
        .unwrap_or(false)
}

/// Reads a file as text: `Err(Skip::Binary)` when it has a NUL byte in its first 8 KiB,
/// `Err(Skip::NotUtf8)` when it is not UTF-8. The file is opened without following links and
/// checked on the open handle to be a regular file (it may have been swapped for a link or a
/// FIFO since the walk listed it), and at most `max_file_bytes + 1` bytes are read.
pub fn read_text(path: &Path, max_file_bytes: u64) -> Result<String, Skip> {
    let bytes = read_regular(path, max_file_bytes).map_err(|e| match e {
        RegularFileError::TooLarge { .. } => Skip::TooLarge,
        RegularFileError::Symlink { .. } | RegularFileError::NotRegular { .. } => Skip::NotRegular,
        _ => Skip::Unreadable,
    })?;
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return Err(Skip::Binary);
    }
    String::from_utf8(bytes).map_err(|_| Skip::NotUtf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_swapped_for_a_link_or_fifo_after_listing_is_not_read() {
        let project = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret.txt");
        std::fs::write(&secret, "outside the project").unwrap();
        let file = project.path().join("notes.md");
        std::fs::write(&file, "inside").unwrap();
        let (files, _) = project_files(project.path(), DEFAULT_MAX_FILE_BYTES);
        assert_eq!(files.len(), 1);
        // Swapped for a link between the walk and the read.
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(&secret, &file).unwrap();
        assert_eq!(
            read_text(&files[0].path, DEFAULT_MAX_FILE_BYTES),
            Err(Skip::NotRegular)
        );
        // Swapped for a FIFO: refused at once, not waited on.
        std::fs::remove_file(&file).unwrap();
        let c = std::ffi::CString::new(file.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        assert_eq!(
            read_text(&files[0].path, DEFAULT_MAX_FILE_BYTES),
            Err(Skip::NotRegular)
        );
        // Grown past the cap after the walk.
        std::fs::remove_file(&file).unwrap();
        std::fs::write(&file, vec![b'a'; 2048]).unwrap();
        assert_eq!(read_text(&files[0].path, 1024), Err(Skip::TooLarge));
    }

    #[test]
    fn names_that_are_not_utf8_are_skipped() {
        use std::os::unix::ffi::OsStrExt;
        let project = tempfile::tempdir().unwrap();
        for name in [&b"a\xff.md"[..], &b"a\xfe.md"[..]] {
            let path = project.path().join(std::ffi::OsStr::from_bytes(name));
            std::fs::write(path, "text").unwrap();
        }
        std::fs::write(project.path().join("ok.md"), "text").unwrap();
        let (files, skipped) = project_files(project.path(), DEFAULT_MAX_FILE_BYTES);
        assert_eq!(files.len(), 1);
        assert_eq!(skipped, 2);
    }
}
