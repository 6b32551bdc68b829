//! Folders for tests: copying a fixture palace into a test's temporary folder.

use std::path::Path;

/// Copies the folder `from` (files and subfolders) to `to`, creating it.
///
/// # Panics
/// On any I/O error (a test helper).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
