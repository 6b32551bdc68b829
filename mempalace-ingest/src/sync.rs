//! `sync`: drawers of files a project no longer has, or no longer mines. A file that is gone
//! is stale (as [`Palace::sync`] finds); with a project folder, so is a file its ignore rules
//! (`.gitignore`, `.ignore`, `.git/info/exclude`, the ones mining obeys) now exclude.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use mempalace_core::palace::{SyncReport, SyncRequest};
use mempalace_core::{Palace, Result};

/// Ignore files read in each folder, as mining reads them.
const IGNORE_FILES: [&str; 2] = [".gitignore", ".ignore"];

/// The ignore rules of one project folder, each folder's file read once.
pub struct ProjectIgnoreRules {
    root: PathBuf,
    by_folder: Mutex<HashMap<PathBuf, Option<Gitignore>>>,
}

impl ProjectIgnoreRules {
    /// The rules under `root` (a canonical folder path, as mining records files).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        ProjectIgnoreRules {
            root: root.into(),
            by_folder: Mutex::new(HashMap::new()),
        }
    }

    /// The rules `folder`'s own files hold (with the repository's `.git/info/exclude` at the
    /// root), or `None` when it has none.
    fn rules_of(folder: &Path, is_root: bool) -> Option<Gitignore> {
        let mut builder = GitignoreBuilder::new(folder);
        let mut any = false;
        let mut files: Vec<PathBuf> = IGNORE_FILES.iter().map(|f| folder.join(f)).collect();
        if is_root {
            files.insert(0, folder.join(".git/info/exclude"));
        }
        for file in files {
            if file.is_file() && builder.add(&file).is_none() {
                any = true;
            }
        }
        any.then(|| builder.build().ok()).flatten()
    }

    /// Whether the project's rules exclude `path` (a file under the root): every folder from
    /// the root down to the file's own has its say, the deepest decision winning; a path
    /// outside the root is never ignored.
    pub fn is_ignored(&self, path: &Path) -> bool {
        let Ok(relative) = path.strip_prefix(&self.root) else {
            return false;
        };
        let mut folders = vec![self.root.clone()];
        let mut folder = self.root.clone();
        let parts: Vec<_> = relative.components().collect();
        for part in parts.iter().take(parts.len().saturating_sub(1)) {
            folder.push(part);
            folders.push(folder.clone());
        }
        let mut cache = self.by_folder.lock().unwrap_or_else(|e| e.into_inner());
        let mut ignored = false;
        for f in folders {
            let is_root = f == self.root;
            let rules = cache
                .entry(f.clone())
                .or_insert_with(|| Self::rules_of(&f, is_root));
            // The path relative to the rules' folder, rebuilt from its components: the
            // matcher compares bytes and insists the path is under its folder, and a stored
            // path may be spelled `/proj//a.md` or `/proj/./a.md`.
            let Ok(inside) = path.strip_prefix(&f) else {
                continue;
            };
            let inside: PathBuf = inside.components().collect();
            if let Some(rules) = rules {
                match rules.matched_path_or_any_parents(&inside, false) {
                    Match::Ignore(_) => ignored = true,
                    Match::Whitelist(_) => ignored = false,
                    Match::None => {}
                }
            }
        }
        ignored
    }
}

/// `sync` of a palace: with `request.project_dir`, the files that are gone and the ones the
/// project's ignore rules now exclude; without, the files that are gone. A dry run unless
/// `request.apply`.
pub async fn sync(palace: &Palace, request: &SyncRequest) -> Result<SyncReport> {
    let Some(dir) = &request.project_dir else {
        return palace.sync(request).await;
    };
    let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
    let rules = ProjectIgnoreRules::new(root);
    palace
        .sync_with_rules(request, &|path| rules.is_ignored(path))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn the_deepest_folder_decides_and_ignored_folders_cover_their_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        write(&root, ".gitignore", "*.log\nsecrets/\n/private.md\n");
        write(&root, "docs/.gitignore", "!keep.log\ndrafts/*\n");
        let rules = ProjectIgnoreRules::new(&root);
        let cases = [
            ("a.log", true),
            ("docs/a.log", true),
            ("docs/keep.log", false),
            ("secrets/key.md", true),
            ("docs/secrets/key.md", true),
            ("private.md", true),
            ("docs/private.md", false),
            ("docs/drafts/x.md", true),
            ("docs/readme.md", false),
            ("notes.md", false),
        ];
        for (rel, ignored) in cases {
            assert_eq!(rules.is_ignored(&root.join(rel)), ignored, "{rel}");
        }
        assert!(
            !rules.is_ignored(Path::new("/elsewhere/a.log")),
            "outside the root"
        );
    }
}
