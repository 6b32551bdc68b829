//! What the facade's tests share: where the fixture palaces are.

use std::path::{Path, PathBuf};

/// The folder of committed palace-format fixtures.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}
