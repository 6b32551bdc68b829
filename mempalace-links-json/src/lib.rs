//! # mempalace-links-json
//!
//! [`PalaceLinks`] over MemPalace 3.11's sidecar files: explicit tunnels in `tunnels.json` (a
//! top-level JSON list of tunnel records) and hallways in `hallways.json` (`{"schema_version": 1,
//! "hallways": [...]}`; a bare list is read too). Records are kept as JSON values, so fields this
//! port does not know (and records it cannot read) survive every rewrite.
//!
//! Every load → mutate → save cycle runs under a cross-process [`FileWriteLock`] on a sibling
//! lock file (`tunnels.json.lock`, `hallways.json.lock`) and saves atomically (temp file, then
//! rename). A file that is not valid JSON of the expected shape is an error, never treated as
//! empty. Reads of a folder without the files return empty and create nothing.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::Utc;
use mempalace_core::palace_links::{
    Hallway, NewTunnel, PalaceLinks, RecordEdit, Tunnel, delete_record, hallways_from_records,
    record_tunnel_traversals, require_id, tunnels_from_records, upsert_tunnel_record,
};
use mempalace_core::{FileWriteLock, PalaceError, Result, WriteLock};
use serde_json::Value;

/// File name of the explicit tunnels.
pub const TUNNELS_FILE: &str = mempalace_core::PalaceLayout::TUNNELS;
/// File name of the hallways.
pub const HALLWAYS_FILE: &str = mempalace_core::PalaceLayout::HALLWAYS;
/// `schema_version` 3.11 writes into `hallways.json`.
pub const HALLWAYS_SCHEMA_VERSION: u64 = 1;

const BACKEND: &str = "links-json";

/// Which of the two files.
#[derive(Clone, Copy)]
enum Kind {
    Tunnels,
    Hallways,
}

/// One JSON sidecar file and its lock.
struct SidecarFile {
    path: PathBuf,
    lock: FileWriteLock,
    kind: Kind,
}

/// [`PalaceLinks`] over `tunnels.json` and `hallways.json` in one folder.
pub struct JsonFileLinks {
    dir: PathBuf,
    tunnels: Arc<SidecarFile>,
    hallways: Arc<SidecarFile>,
}

fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

impl JsonFileLinks {
    /// Links stored in `dir/tunnels.json` and `dir/hallways.json`. (3.11 keeps them next to its
    /// palace folder, in the palace path's parent.) Nothing is created until a write.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        let file = |name: &str, kind| {
            let path = dir.join(name);
            Arc::new(SidecarFile {
                lock: FileWriteLock::new(lock_path(&path)),
                path,
                kind,
            })
        };
        JsonFileLinks {
            tunnels: file(TUNNELS_FILE, Kind::Tunnels),
            hallways: file(HALLWAYS_FILE, Kind::Hallways),
            dir,
        }
    }

    /// Sets how long a writer waits for another process's lock before reporting the palace busy.
    pub fn with_lock_timeout(mut self, timeout: Duration) -> Self {
        for file in [&mut self.tunnels, &mut self.hallways] {
            *file = Arc::new(SidecarFile {
                path: file.path.clone(),
                lock: FileWriteLock::new(lock_path(&file.path)).with_timeout(timeout),
                kind: file.kind,
            });
        }
        self
    }

    /// The folder holding the two files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Path of `tunnels.json`.
    pub fn tunnels_path(&self) -> &Path {
        &self.tunnels.path
    }

    /// Path of `hallways.json`.
    pub fn hallways_path(&self) -> &Path {
        &self.hallways.path
    }
}

fn io_error(path: &Path, source: std::io::Error) -> PalaceError {
    PalaceError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn corrupt(path: &Path, reason: impl std::fmt::Display) -> PalaceError {
    PalaceError::store(
        BACKEND,
        "load",
        format!(
            "{} is not a valid MemPalace links file ({reason}); fix or move it away, it was left untouched",
            path.display()
        ),
    )
}

impl SidecarFile {
    /// The records in the file; empty when it does not exist.
    fn load(&self) -> Result<Vec<Value>> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_error(&self.path, e)),
        };
        let value: Value = serde_json::from_str(&text).map_err(|e| corrupt(&self.path, e))?;
        match (self.kind, value) {
            (_, Value::Array(records)) => Ok(records),
            (Kind::Hallways, Value::Object(mut doc)) => match doc.remove("hallways") {
                Some(Value::Array(records)) => Ok(records),
                Some(Value::Null) => Ok(Vec::new()),
                Some(_) => Err(corrupt(&self.path, "\"hallways\" is not a list")),
                None => Err(corrupt(&self.path, "no \"hallways\" list")),
            },
            (Kind::Tunnels, _) => Err(corrupt(&self.path, "the top level is not a list")),
            (Kind::Hallways, _) => Err(corrupt(&self.path, "the top level is not an object")),
        }
    }

    /// Writes the records in 3.11's layout: temp file in the same folder, fsync, rename.
    fn save(&self, records: Vec<Value>) -> Result<()> {
        let document = match self.kind {
            Kind::Tunnels => Value::Array(records),
            Kind::Hallways => serde_json::json!({
                "schema_version": HALLWAYS_SCHEMA_VERSION,
                "hallways": records,
            }),
        };
        let bytes = serde_json::to_vec_pretty(&document)
            .map_err(|e| PalaceError::store(BACKEND, "save", e))?;
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
        let mut tmp_name = self.path.as_os_str().to_owned();
        tmp_name.push(format!(".{}.tmp", std::process::id()));
        let tmp = PathBuf::from(tmp_name);
        let write = || -> std::io::Result<()> {
            let mut file = std::fs::File::create(&tmp)?;
            file.write_all(&bytes)?;
            file.sync_all()?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let _ = file.set_permissions(std::fs::Permissions::from_mode(0o600));
            }
            drop(file);
            std::fs::rename(&tmp, &self.path)
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io_error(&self.path, e)
        })
    }

    /// Reads the records on a blocking thread.
    async fn read(self: &Arc<Self>) -> Result<Vec<Value>> {
        let file = Arc::clone(self);
        tokio::task::spawn_blocking(move || file.load())
            .await
            .map_err(|e| PalaceError::store(BACKEND, "read", e))?
    }

    /// Runs one locked load → mutate → save cycle; saves only when `mutate` says it changed
    /// something, and never when it fails.
    async fn update<T, F>(self: &Arc<Self>, mutate: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Vec<Value>) -> Result<(T, bool)> + Send + 'static,
    {
        let _guard = self.lock.acquire().await?;
        let file = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            let mut records = file.load()?;
            let (out, changed) = mutate(&mut records)?;
            if changed {
                file.save(records)?;
            }
            Ok(out)
        })
        .await
        .map_err(|e| PalaceError::store(BACKEND, "update", e))?
    }
}

#[async_trait]
impl PalaceLinks for JsonFileLinks {
    async fn tunnel_records(&self) -> Result<Vec<Value>> {
        self.tunnels.read().await
    }

    async fn hallway_records(&self) -> Result<Vec<Value>> {
        self.hallways.read().await
    }

    async fn edit_tunnel_records(&self, edit: RecordEdit) -> Result<()> {
        self.tunnels
            .update(move |records| Ok(((), edit(records))))
            .await
    }

    async fn edit_hallway_records(&self, edit: RecordEdit) -> Result<()> {
        self.hallways
            .update(move |records| Ok(((), edit(records))))
            .await
    }
    async fn snapshot_into(&self, palace_dir: &Path) -> Result<bool> {
        // Each file is replaced whole by rename, so one copy reads one version of it.
        let mut copied = false;
        for path in [self.tunnels_path(), self.hallways_path()] {
            let Some(name) = path.file_name() else {
                continue;
            };
            let target = palace_dir.join(name);
            match std::fs::copy(path, &target) {
                Ok(_) => copied = true,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_error(&target, e)),
            }
        }
        Ok(copied)
    }

    async fn upsert_tunnel(&self, tunnel: NewTunnel) -> Result<Tunnel> {
        self.tunnels
            .update(move |records| {
                upsert_tunnel_record(records, &tunnel, Utc::now()).map(|t| (t, true))
            })
            .await
    }

    async fn list_tunnels(&self) -> Result<Vec<Tunnel>> {
        Ok(tunnels_from_records(&self.tunnels.read().await?))
    }

    async fn delete_tunnel(&self, tunnel_id: &str) -> Result<bool> {
        require_id(tunnel_id, "tunnel_id")?;
        let id = tunnel_id.to_string();
        self.tunnels
            .update(move |records| {
                delete_record(records, &id, "tunnel_id").map(|deleted| (deleted, deleted))
            })
            .await
    }

    async fn record_traversals(&self, tunnel_ids: &[String]) -> Result<usize> {
        if tunnel_ids.iter().all(String::is_empty) {
            return Ok(0);
        }
        let ids = tunnel_ids.to_vec();
        self.tunnels
            .update(move |records| {
                let touched = record_tunnel_traversals(records, &ids, Utc::now());
                Ok((touched, touched > 0))
            })
            .await
    }

    async fn list_hallways(&self, wing: Option<&str>) -> Result<Vec<Hallway>> {
        Ok(hallways_from_records(&self.hallways.read().await?, wing))
    }

    async fn delete_hallway(&self, hallway_id: &str) -> Result<bool> {
        require_id(hallway_id, "hallway_id")?;
        let id = hallway_id.to_string();
        self.hallways
            .update(move |records| {
                delete_record(records, &id, "hallway_id").map(|deleted| (deleted, deleted))
            })
            .await
    }
}
