//! Where a palace lives and `palace.json`, the record of how it was built (backend, embedder
//! model and dimension), so it is never reopened with an incompatible embedder.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::regular_file::{RegularFileError, read_regular};

/// The config file inside the palace folder.
pub const PALACE_CONFIG_FILE: &str = "palace.json";
/// Largest `palace.json` read, in bytes.
pub const MAX_PALACE_CONFIG_BYTES: u64 = 64 * 1024;

/// The palace folder as MemPalace 3.11 finds it: `--palace`, else `$MEMPALACE_PALACE_PATH`
/// (or its aliases), else `config.json`'s `palace_path`, else `palace` in the config folder
/// (`mempalace_core::locations`).
pub fn resolve_palace_path(flag: Option<&Path>) -> PathBuf {
    mempalace_core::locations::palace_path(flag)
}

/// Which vector store holds the drawers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
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
}

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
        }
    }

    /// Reads `<palace>/palace.json`, or `None` when absent (a link or a non-regular file is an
    /// error, never followed).
    pub fn load(palace: &Path) -> Result<Option<Self>> {
        let path = palace.join(PALACE_CONFIG_FILE);
        let bytes = match read_regular(&path, MAX_PALACE_CONFIG_BYTES) {
            Ok(bytes) => bytes,
            Err(RegularFileError::Missing { .. }) => return Ok(None),
            Err(e) => return Err(e).context("reading the palace config"),
        };
        let text = String::from_utf8(bytes)
            .map_err(|_| anyhow::anyhow!("{} is not UTF-8 text", path.display()))?;
        Ok(Some(
            serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?,
        ))
    }

    /// Writes `<palace>/palace.json` atomically (temp file + rename).
    pub fn save(&self, palace: &Path) -> Result<()> {
        std::fs::create_dir_all(palace)
            .with_context(|| format!("creating {}", palace.display()))?;
        let path = palace.join(PALACE_CONFIG_FILE);
        let tmp = palace.join(format!(".{PALACE_CONFIG_FILE}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, serde_json::to_string_pretty(self)?)?;
        std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))?;
        Ok(())
    }

    /// Refuses an embedder whose dimension differs from the palace's.
    pub fn check_embedder(&self, model: &str, dimension: usize, palace: &Path) -> Result<()> {
        if self.dimension != dimension {
            bail!(
                "the palace at {} was built with {} ({} dimensions), but the embedder is {} ({} dimensions); \
                 use the same model or a new palace",
                palace.display(),
                self.embedder_model,
                self.dimension,
                model,
                dimension
            );
        }
        Ok(())
    }
}
