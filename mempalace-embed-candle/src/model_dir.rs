//! Where the model files are found: an explicit path, then `MEMPALACE_MODEL_DIR`, then the
//! user cache `~/.cache/mempalace/models/all-MiniLM-L6-v2`.

use std::path::{Path, PathBuf};

use crate::error::EmbedError;

/// The environment variable naming the model folder.
pub const MODEL_DIR_ENV: &str = "MEMPALACE_MODEL_DIR";
/// The files a model folder must hold.
pub const REQUIRED_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// The user-cache location of the model.
pub fn cache_dir() -> PathBuf {
    dirs::home_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join(".cache/mempalace/models/all-MiniLM-L6-v2")
}

/// The folder to load from: `explicit`, else `$MEMPALACE_MODEL_DIR`, else [`cache_dir`].
pub fn resolve(explicit: Option<&Path>) -> PathBuf {
    if let Some(p) = explicit {
        return p.to_path_buf();
    }
    match std::env::var_os(MODEL_DIR_ENV) {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => cache_dir(),
    }
}

/// Checks that `dir` holds every required file, naming the missing ones.
pub fn check(dir: &Path) -> Result<(), EmbedError> {
    let missing: Vec<String> = REQUIRED_FILES
        .iter()
        .filter(|f| !dir.join(f).is_file())
        .map(|f| f.to_string())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(EmbedError::ModelMissing {
            dir: dir.to_path_buf(),
            missing,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_path_wins_and_missing_files_are_named() {
        let dir = std::env::temp_dir().join(format!("mempalace-model-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.json"), "{}").unwrap();
        assert_eq!(resolve(Some(&dir)), dir);
        let err = check(&dir).unwrap_err().to_string();
        assert!(err.contains("tokenizer.json, model.safetensors"), "{err}");
        assert!(err.contains("fetch-model.sh"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
