//! `mempalace.yaml`: a project's wing and rooms, written by `init` and edited by people.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use mempalace_core::room_routing::RoomSpec;
use serde::{Deserialize, Serialize};

use crate::regular_file::{RegularFileError, create_new_regular, read_regular};

/// The file name, at the project's root.
pub const PROJECT_CONFIG_FILE: &str = "mempalace.yaml";
/// Largest `mempalace.yaml` read, in bytes.
pub const MAX_PROJECT_CONFIG_BYTES: u64 = 1024 * 1024;

/// What `mine` needs to know about a project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectConfig {
    /// The wing the project's drawers are filed under.
    pub wing: String,
    /// Rooms and the keywords that route files to them.
    #[serde(default)]
    pub rooms: Vec<RoomSpec>,
}

impl ProjectConfig {
    /// The config file's path for a project folder.
    pub fn path_in(project: &Path) -> PathBuf {
        project.join(PROJECT_CONFIG_FILE)
    }

    /// Reads `<project>/mempalace.yaml`, or `None` when there is none. The file must be a
    /// regular file of at most [`MAX_PROJECT_CONFIG_BYTES`]: a symlink, FIFO or device is an
    /// error, never followed or waited on.
    pub fn load(project: &Path) -> Result<Option<Self>> {
        let path = Self::path_in(project);
        let bytes = match read_regular(&path, MAX_PROJECT_CONFIG_BYTES) {
            Ok(bytes) => bytes,
            Err(RegularFileError::Missing { .. }) => return Ok(None),
            Err(e) => return Err(e).context("reading the project config"),
        };
        let text = String::from_utf8(bytes)
            .map_err(|_| anyhow::anyhow!("{} is not UTF-8 text", path.display()))?;
        let config: ProjectConfig = serde_yaml_ng::from_str(&text)
            .with_context(|| format!("parsing {}", path.display()))?;
        mempalace_core::validation::validate_name("wing", &config.wing)
            .with_context(|| format!("in {}", path.display()))?;
        for room in &config.rooms {
            mempalace_core::validation::validate_name("room", &room.name)
                .with_context(|| format!("in {}", path.display()))?;
        }
        Ok(Some(config))
    }

    /// Creates `<project>/mempalace.yaml` with a short comment header. Never replaces or
    /// follows anything already at that path (a dangling symlink included).
    pub fn save(&self, project: &Path) -> Result<PathBuf> {
        let path = Self::path_in(project);
        let body = serde_yaml_ng::to_string(self)?;
        let text = format!(
            "# MemPalace project config: the wing this project files into, and its rooms.\n\
             # A file goes to the room whose name or keyword matches one of its folders, then its\n\
             # file name, then the words in it; else to \"general\". Edit freely, then re-run mine.\n{body}"
        );
        create_new_regular(&path, &text).context("writing the project config")?;
        Ok(path)
    }
}

/// The wing name for a folder: its name in lower case, spaces and hyphens to `_`.
pub fn wing_for_folder(folder: &Path) -> String {
    let name = folder
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .or_else(|| folder.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "project".into());
    slug(&name)
}

/// Lower case, spaces and hyphens to `_`, path separators and control characters dropped.
pub fn slug(name: &str) -> String {
    let s: String = name
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| !c.is_control() && *c != '/' && *c != '\\')
        .map(|c| if c == ' ' || c == '-' { '_' } else { c })
        .collect();
    if s.is_empty() { "project".into() } else { s }
}
