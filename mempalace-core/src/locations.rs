//! Where a palace and its files live when nobody says, resolved as MemPalace 3.11 resolves
//! them, so a user who sets nothing finds the palace 3.11 would have used:
//!
//! - the config folder: `$MEMPALACE_CONFIG_DIR`; else `~/.mempalace` when it holds an install
//!   (`config.json`, `people_map.json`, a 3.11 palace `palace/chroma.sqlite3`, or one of ours,
//!   `palace/palace.json`); else `$XDG_CONFIG_HOME/mempalace` (an absolute one); else
//!   `~/.config/mempalace`;
//! - the palace: the `--palace` flag; else `$MEMPALACE_PALACE_PATH`, `$MEMPALACE_PALACE` or
//!   `$MEMPAL_PALACE_PATH` (in that order); else `palace_path` in the config folder's
//!   `config.json`; else `palace` in the config folder;
//! - the knowledge graph: the palace's own `knowledge_graph.sqlite3` when it exists or the
//!   palace was named with `--palace`; else, for the legacy default palace `~/.mempalace/palace`
//!   only, `~/.mempalace/knowledge_graph.sqlite3`; else the palace's own.

use std::path::{Path, PathBuf};

/// The knowledge-graph file inside a palace.
pub const KNOWLEDGE_GRAPH_FILE: &str = crate::PalaceLayout::KNOWLEDGE_GRAPH;

/// Variables naming the palace, highest priority first.
pub const PALACE_PATH_VARS: [&str; 3] = [
    "MEMPALACE_PALACE_PATH",
    "MEMPALACE_PALACE",
    "MEMPAL_PALACE_PATH",
];

/// The variable that overrides the config folder.
pub const CONFIG_DIR_VAR: &str = "MEMPALACE_CONFIG_DIR";

/// Largest `config.json` read, in bytes.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

fn home() -> PathBuf {
    dirs::home_dir().unwrap_or_else(|| PathBuf::from("."))
}

/// `~` or `~/…` expanded to the home folder.
pub fn expand_home(path: &str) -> PathBuf {
    match path.strip_prefix('~') {
        Some("") => home(),
        Some(rest) if rest.starts_with('/') => home().join(&rest[1..]),
        _ => PathBuf::from(path),
    }
}

/// A variable's value when set and not blank.
fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Whether `~/.mempalace` (or another folder) holds an install worth keeping.
fn is_install(dir: &Path) -> bool {
    ["config.json", "people_map.json"]
        .iter()
        .any(|f| dir.join(f).is_file())
        || dir.join("palace").join("chroma.sqlite3").is_file()
        || dir.join("palace").join("palace.json").is_file()
}

/// The config folder (see the module docs).
pub fn config_dir() -> PathBuf {
    if let Some(dir) = var(CONFIG_DIR_VAR) {
        return expand_home(&dir);
    }
    let legacy = home().join(".mempalace");
    if legacy.is_dir() && is_install(&legacy) {
        return legacy;
    }
    if let Some(xdg) = var("XDG_CONFIG_HOME").map(PathBuf::from)
        && xdg.is_absolute()
    {
        return xdg.join("mempalace");
    }
    home().join(".config").join("mempalace")
}

/// The value of `key` in the config folder's `config.json`, when the file is a readable JSON
/// object (anything else is ignored, as 3.11 ignores it with a warning).
pub fn config_file_value(config_dir: &Path, key: &str) -> Option<serde_json::Value> {
    let file = config_dir.join("config.json");
    let meta = std::fs::metadata(&file).ok()?;
    if !meta.is_file() || meta.len() > MAX_CONFIG_BYTES {
        return None;
    }
    let text = std::fs::read_to_string(&file).ok()?;
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(v) => v.get(key).cloned(),
        Err(e) => {
            tracing::warn!(file = %file.display(), error = %e, "config.json is not JSON; ignored");
            None
        }
    }
}

/// `palace_path` from the config folder's `config.json`, when it names one.
fn configured_palace_path(config_dir: &Path) -> Option<PathBuf> {
    config_file_value(config_dir, "palace_path")?
        .as_str()
        .filter(|p| !p.trim().is_empty())
        .map(expand_home)
}

/// `path` made absolute against the current folder (`..` and `.` kept as given).
fn absolute(path: PathBuf) -> PathBuf {
    std::path::absolute(&path).unwrap_or(path)
}

/// The palace folder for a `--palace` flag or none (see the module docs).
pub fn palace_path(flag: Option<&Path>) -> PathBuf {
    if let Some(p) = flag {
        return p.to_path_buf();
    }
    if let Some(v) = PALACE_PATH_VARS.iter().find_map(|name| var(name)) {
        return absolute(expand_home(&v));
    }
    let dir = config_dir();
    configured_palace_path(&dir).unwrap_or_else(|| dir.join("palace"))
}

/// The knowledge graph that belongs to `palace` (see the module docs); `explicit` when the
/// palace was named with `--palace`. Creates nothing.
pub fn knowledge_graph_path(palace: &Path, explicit: bool) -> PathBuf {
    let local = palace.join(KNOWLEDGE_GRAPH_FILE);
    if explicit || local.is_file() {
        return local;
    }
    let legacy_palace = home().join(".mempalace").join("palace");
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if same(palace, &legacy_palace) {
        return home().join(".mempalace").join(KNOWLEDGE_GRAPH_FILE);
    }
    local
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_is_expanded() {
        assert_eq!(expand_home("~"), home());
        assert_eq!(expand_home("~/a/b"), home().join("a/b"));
        assert_eq!(expand_home("/x/~"), PathBuf::from("/x/~"));
        assert_eq!(expand_home("~other"), PathBuf::from("~other"));
    }

    #[test]
    fn installs_and_the_knowledge_graph_beside_them() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!is_install(dir.path()));
        std::fs::create_dir_all(dir.path().join("palace")).unwrap();
        assert!(
            !is_install(dir.path()),
            "a bare palace folder is no install"
        );
        std::fs::write(dir.path().join("palace/chroma.sqlite3"), b"").unwrap();
        assert!(is_install(dir.path()));

        let palace = dir.path().join("palace");
        assert_eq!(
            knowledge_graph_path(&palace, false),
            palace.join(KNOWLEDGE_GRAPH_FILE),
            "not the legacy default palace: its own graph"
        );
        assert_eq!(
            knowledge_graph_path(&palace, true),
            palace.join(KNOWLEDGE_GRAPH_FILE)
        );

        std::fs::write(
            dir.path().join("config.json"),
            br#"{"palace_path": "~/somewhere/palace"}"#,
        )
        .unwrap();
        assert_eq!(
            configured_palace_path(dir.path()),
            Some(home().join("somewhere/palace"))
        );
        std::fs::write(dir.path().join("config.json"), b"{not json").unwrap();
        assert_eq!(configured_palace_path(dir.path()), None);
    }
}
