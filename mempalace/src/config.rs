//! `palace.json`, the record of how a palace was assembled (vector store, collection, embedder
//! model and dimension, where the graph is), so every open, on every host, assembles it alike
//! and never with an incompatible embedder.

use std::path::{Path, PathBuf};

use mempalace_core::regular_file::{RegularFileError, read_regular};
use mempalace_core::{PalaceError, PalaceLayout};
use serde::{Deserialize, Serialize};

use crate::error::OpenError;

/// Largest `palace.json` read, in bytes.
pub const MAX_PALACE_CONFIG_BYTES: u64 = 64 * 1024;

/// Which vector store holds the drawers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// Embedded LanceDB in the palace folder (the default).
    Lancedb,
    /// A Qdrant server.
    Qdrant,
}

/// Where the knowledge graph lives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KgBackend {
    /// `knowledge_graph.sqlite3`, MemPalace 3.11's file (the default).
    #[default]
    Sqlite,
    /// A PostgreSQL schema shared by every host of a fleet.
    Postgres,
}

impl KgBackend {
    fn is_sqlite(&self) -> bool {
        *self == KgBackend::Sqlite
    }
}

/// How a palace was built.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PalaceConfig {
    /// The vector store.
    pub backend: BackendKind,
    /// The embedder's model.
    pub embedder_model: String,
    /// The embedder's dimension.
    pub dimension: usize,
    /// LanceDB table / Qdrant collection holding the drawers.
    #[serde(default = "default_collection")]
    pub table: String,
    /// Qdrant server URL (Qdrant backend).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qdrant_url: Option<String>,
    /// The palace's identity: recorded as the owner of its Qdrant collection, so no other
    /// palace can open that collection. Palaces made before it was recorded get
    /// [`palace_id_for`] their folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub palace_id: Option<String>,
    /// Where the knowledge graph lives.
    #[serde(default, skip_serializing_if = "KgBackend::is_sqlite")]
    pub knowledge_graph: KgBackend,
    /// The PostgreSQL schema of the graph (the PostgreSQL graph; the URL, which may hold a
    /// password, is never recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kg_schema: Option<String>,
    /// The on-disk format the palace was made in ([`PALACE_FORMAT_VERSION`] for a new one;
    /// absent in palaces made before it was recorded, format 1). Older formats are brought
    /// up to date as they are written; a newer one is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format_version: Option<u32>,
}

/// The palace format this release writes, and the newest it opens.
///
/// | format | what changed |
/// | --- | --- |
/// | 1 | (not recorded) drawers, dated drawers of conversations |
/// | 2 | drawers carry the names they mention (`entities`); a LanceDB table of format 1 gains the column on its first write |
pub const PALACE_FORMAT_VERSION: u32 = 2;

/// A palace id derived from the host and the palace folder's absolute path (16 hex digits):
/// stable for one palace, different for two palaces on one host or on two hosts.
pub fn palace_id_for(palace: &Path) -> String {
    use md5::{Digest, Md5};
    let absolute = std::path::absolute(palace).unwrap_or_else(|_| palace.to_path_buf());
    let mut hasher = Md5::new();
    hasher.update(host_name().as_bytes());
    hasher.update([0u8]);
    hasher.update(absolute.as_os_str().as_encoded_bytes());
    hex::encode(&hasher.finalize()[..8])
}

/// This host's name ("" when it cannot be read).
fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates within it or
    // truncates, and we stop at the first NUL or the end.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return String::new();
    }
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// The Qdrant collection of a new palace with this id: one palace, one collection.
pub fn collection_for(palace_id: &str) -> String {
    format!("mempalace_{palace_id}")
}

fn default_collection() -> String {
    "mempalace_drawers".into()
}

impl PalaceConfig {
    /// A config for a new palace.
    pub fn new(backend: BackendKind, embedder_model: &str, dimension: usize) -> Self {
        PalaceConfig {
            backend,
            embedder_model: embedder_model.to_string(),
            dimension,
            table: default_collection(),
            qdrant_url: None,
            palace_id: None,
            knowledge_graph: KgBackend::Sqlite,
            kg_schema: None,
            format_version: Some(PALACE_FORMAT_VERSION),
        }
    }

    /// The palace's format (1 when not recorded).
    pub fn format(&self) -> u32 {
        self.format_version.unwrap_or(1)
    }

    /// Reads `<palace>/palace.json`, or `None` when absent (a link or a non-regular file is an
    /// error, never followed).
    pub fn load(palace: &Path) -> Result<Option<Self>, OpenError> {
        let path = PalaceLayout::new(palace).config();
        let bytes = match read_regular(&path, MAX_PALACE_CONFIG_BYTES) {
            Ok(bytes) => bytes,
            Err(RegularFileError::Missing { .. }) => return Ok(None),
            Err(e) => {
                return Err(OpenError::Config {
                    path,
                    reason: e.to_string(),
                });
            }
        };
        let invalid = |reason: String| OpenError::Config {
            path: path.clone(),
            reason,
        };
        let text = String::from_utf8(bytes).map_err(|_| invalid("not UTF-8 text".into()))?;
        let config: Self = serde_json::from_str(&text)
            .map_err(|e| invalid(format!("not a palace record: {e}")))?;
        if config.format() > PALACE_FORMAT_VERSION {
            return Err(invalid(format!(
                "made in palace format {} by a newer MemPalace; this release opens formats up to {PALACE_FORMAT_VERSION}: upgrade it",
                config.format()
            )));
        }
        Ok(Some(config))
    }

    /// Writes `<palace>/palace.json` atomically (temp file + rename).
    pub fn save(&self, palace: &Path) -> Result<(), PalaceError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| PalaceError::Io { path, source }
        };
        std::fs::create_dir_all(palace).map_err(io(palace))?;
        let path = PalaceLayout::new(palace).config();
        let tmp = palace.join(format!(
            ".{}.{}.tmp",
            PalaceLayout::CONFIG,
            std::process::id()
        ));
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| PalaceError::invalid("palace.json", e.to_string()))?;
        std::fs::write(&tmp, text).map_err(io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io(&path))
    }

    /// Refuses an embedder whose dimension differs from the palace's.
    pub fn check_embedder(
        &self,
        model: &str,
        dimension: usize,
        palace: &Path,
    ) -> Result<(), OpenError> {
        if self.dimension != dimension {
            return Err(OpenError::Mismatch(format!(
                "the palace at {} was built with {} ({} dimensions), but the embedder is {} ({} dimensions); \
                 use the same model or a new palace",
                palace.display(),
                self.embedder_model,
                self.dimension,
                model,
                dimension
            )));
        }
        Ok(())
    }
}

/// Writes `palace.json` the moment its palace is created (the palace's first write or
/// `init`), so the next open, and every host given the file, assembles the palace as the
/// creating command was told to (backend, collection, graph).
pub struct PalaceJsonRecord {
    palace: PathBuf,
    config: PalaceConfig,
}

impl PalaceJsonRecord {
    /// The record of `config` for the palace folder `palace`.
    pub fn new(palace: impl Into<PathBuf>, config: PalaceConfig) -> Self {
        PalaceJsonRecord {
            palace: palace.into(),
            config,
        }
    }
}

impl mempalace_core::creation_record::CreationRecord for PalaceJsonRecord {
    fn record(&self) -> mempalace_core::Result<()> {
        let recorded = PalaceConfig::load(&self.palace).ok().flatten();
        if recorded.is_some_and(|r| r.palace_id.is_some()) {
            return Ok(());
        }
        self.config.save(&self.palace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, text: &str) {
        std::fs::write(PalaceLayout::new(dir).config(), text).unwrap();
    }

    #[test]
    fn a_record_without_a_format_is_format_1_and_a_newer_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let record = PalaceConfig::new(BackendKind::Lancedb, "all-MiniLM-L6-v2", 384);
        assert_eq!(record.format(), PALACE_FORMAT_VERSION);
        let mut old = serde_json::to_value(&record).unwrap();
        old.as_object_mut().unwrap().remove("format_version");
        write(dir.path(), &old.to_string());
        let loaded = PalaceConfig::load(dir.path()).unwrap().unwrap();
        assert_eq!(loaded.format(), 1);
        let mut newer = old.clone();
        newer["format_version"] = serde_json::json!(PALACE_FORMAT_VERSION + 1);
        write(dir.path(), &newer.to_string());
        let err = PalaceConfig::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("newer MemPalace"), "{err}");
        assert!(
            err.contains(&format!("up to {PALACE_FORMAT_VERSION}")),
            "{err}"
        );
    }
}
