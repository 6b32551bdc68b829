//! `backup` as a Palace method: a consistent copy of a palace into a new folder while other
//! processes keep serving it.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Palace;
use crate::error::{PalaceError, Result};
use crate::layout::PalaceLayout;

/// What a backup copied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BackupReport {
    /// The backup folder: a palace of its own (open it, verify it, or put it in place of a
    /// lost one).
    pub path: PathBuf,
    /// The parts copied: `drawers`, `knowledge_graph`, `closets`, `coordination_log`,
    /// `tunnels_and_hallways`, and the palace's own small files.
    pub parts: Vec<String>,
}

/// The palace's small files a backup carries as they are (its record, identity, codes).
const SMALL_FILES: [&str; 3] = [
    PalaceLayout::CONFIG,
    PalaceLayout::IDENTITY,
    PalaceLayout::ENTITY_CODES,
];

impl Palace {
    /// Copies the palace into the new folder `dest` while other processes go on writing:
    /// drawers, knowledge graph and closets as of one instant (copied under the palace's write
    /// lock, which every drawer and graph write holds: writers wait while the drawer table's
    /// newest version and the graph file are copied, and give up as busy past the lock's
    /// bound of 30 s), then the coordination log (one SQLite snapshot) and the link files.
    /// Every file is synced before the folder is named. The copy keeps the palace's replica
    /// id: it is for restoring, not for running beside the original.
    /// The copy is assembled in a temporary folder beside `dest` and renamed into place when
    /// complete, so `dest` is either a whole palace or absent. `dest` must not exist. Backends
    /// that cannot snapshot (servers) refuse with [`PalaceError::Unsupported`]: use
    /// [`Palace::export`] for them.
    pub async fn backup(&self, dest: &Path) -> Result<BackupReport> {
        self.require_palace().await?;
        if dest.exists() {
            return Err(PalaceError::invalid(
                "backup folder",
                format!("{} exists already; name a new folder", dest.display()),
            ));
        }
        let parent = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent).map_err(|e| PalaceError::io(&parent, e))?;
        let staging = tempfile::Builder::new()
            .prefix(".mempalace-backup-")
            .tempdir_in(&parent)
            .map_err(|e| PalaceError::io(&parent, e))?;
        let parts = self.snapshot_parts(staging.path()).await?;
        // On disk before it is named: a power cut leaves a whole backup or none.
        sync_tree(staging.path())?;
        let staged = staging.keep();
        if let Err(e) = std::fs::rename(&staged, dest) {
            let _ = std::fs::remove_dir_all(&staged);
            return Err(PalaceError::io(dest, e));
        }
        sync_path(&parent)?;
        Ok(BackupReport {
            path: dest.to_path_buf(),
            parts,
        })
    }

    /// Writes every part into `dir`; returns the names of those that held anything.
    async fn snapshot_parts(&self, dir: &Path) -> Result<Vec<String>> {
        let mut parts = Vec::new();
        let layout = PalaceLayout::new(&self.path);
        for name in SMALL_FILES {
            let from = layout.root().join(name);
            match std::fs::copy(&from, dir.join(name)) {
                Ok(_) => parts.push(name.to_string()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(PalaceError::io(from, e)),
            }
        }
        {
            let _guard = self.write_lock.acquire().await?;
            if self.store.snapshot_into(dir).await? {
                parts.push("drawers".into());
            }
            if self.kg.snapshot_into(dir).await? {
                parts.push("knowledge_graph".into());
            }
            if self.closets.snapshot_into(dir).await? {
                parts.push("closets".into());
            }
        }
        if self.coordination.log().snapshot_into(dir).await? {
            parts.push("coordination_log".into());
        }
        if self.links.snapshot_into(dir).await? {
            parts.push("tunnels_and_hallways".into());
        }
        Ok(parts)
    }
}

/// Syncs `path` (a file or a folder) to disk.
fn sync_path(path: &Path) -> Result<()> {
    std::fs::File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|e| PalaceError::io(path, e))
}

/// Syncs every file and folder below `dir`, and `dir` itself.
fn sync_tree(dir: &Path) -> Result<()> {
    for entry in std::fs::read_dir(dir).map_err(|e| PalaceError::io(dir, e))? {
        let entry = entry.map_err(|e| PalaceError::io(dir, e))?;
        let path = entry.path();
        if entry
            .file_type()
            .map_err(|e| PalaceError::io(&path, e))?
            .is_dir()
        {
            sync_tree(&path)?;
        } else {
            sync_path(&path)?;
        }
    }
    sync_path(dir)
}
