//! A project folder as mining sees it: `mempalace.yaml` (its wing and rooms, written by
//! `init` and edited by people), or else what `init` would detect from its folders.

use std::path::{Path, PathBuf};

use mempalace_core::regular_file::{
    RegularFileError, anything_at, create_new_regular, read_regular,
};
use mempalace_core::room_routing::{FALLBACK_ROOM, RoomSpec};
use mempalace_core::validation::{normalize_wing_name, validate_name};
use serde::{Deserialize, Serialize};

use crate::error::{IngestError, Result};
use crate::walk::is_skipped_dir;

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
            Err(e) => return Err(e.into()),
        };
        let invalid = |reason: String| IngestError::ProjectConfig {
            path: path.clone(),
            reason,
        };
        let text = String::from_utf8(bytes).map_err(|_| invalid("not UTF-8 text".into()))?;
        let config: ProjectConfig =
            serde_yaml_ng::from_str(&text).map_err(|e| invalid(format!("not valid YAML: {e}")))?;
        validate_name("wing", &config.wing).map_err(|e| invalid(e.to_string()))?;
        for room in &config.rooms {
            validate_name("room", &room.name).map_err(|e| invalid(e.to_string()))?;
        }
        Ok(Some(config))
    }

    /// Creates `<project>/mempalace.yaml` with a short comment header. Never replaces or
    /// follows anything already at that path (a dangling symlink included).
    pub fn save(&self, project: &Path) -> Result<PathBuf> {
        let path = Self::path_in(project);
        let body = serde_yaml_ng::to_string(self).map_err(|e| IngestError::ProjectConfig {
            path: path.clone(),
            reason: format!("cannot be written as YAML: {e}"),
        })?;
        let text = format!(
            "# MemPalace project config: the wing this project files into, and its rooms.\n\
             # A file goes to the room whose name or keyword matches one of its folders, then its\n\
             # file name, then the words in it; else to \"general\". Edit freely, then re-run mine.\n{body}"
        );
        create_new_regular(&path, &text)?;
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

/// MemPalace 3.11's wing spelling ([`normalize_wing_name`]: lower case, spaces and hyphens to
/// `_`, none at the ends) with path separators and control characters dropped; `project`
/// when nothing is left.
pub fn slug(name: &str) -> String {
    let kept: String = name
        .trim()
        .chars()
        .filter(|c| !c.is_control() && *c != '/' && *c != '\\')
        .collect();
    let s = normalize_wing_name(&kept);
    if s.is_empty() { "project".into() } else { s }
}

/// Keywords that usually mean the same room, by folder name.
const FOLDER_KEYWORDS: &[(&str, &[&str])] = &[
    (
        "frontend",
        &["ui", "client", "web", "components", "react", "css"],
    ),
    (
        "backend",
        &["server", "api", "service", "handler", "database"],
    ),
    (
        "docs",
        &["doc", "documentation", "readme", "guide", "notes"],
    ),
    ("tests", &["test", "spec", "fixture", "assert"]),
    ("scripts", &["script", "tool", "ci", "build"]),
    ("config", &["config", "settings", "env", "yaml", "toml"]),
];

/// The rooms of a project: one per top-level folder (build, vendor and hidden folders
/// excluded), with keywords, plus "general".
pub fn detect_rooms(project: &Path) -> Result<Vec<RoomSpec>> {
    let mut names: Vec<String> = std::fs::read_dir(project)
        .map_err(|e| IngestError::io(project, e))?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.') && !is_skipped_dir(n))
        // A folder whose name would make an invalid room (control characters, over the
        // length limit) gets no room of its own: its files go to "general".
        .filter(|n| validate_name("room", &slug(n)).is_ok() && !n.chars().any(char::is_control))
        .collect();
    names.sort();
    let mut rooms: Vec<RoomSpec> = names
        .iter()
        .map(|folder| {
            let name = slug(folder);
            let mut keywords = vec![folder.to_lowercase()];
            if let Some((_, extra)) = FOLDER_KEYWORDS.iter().find(|(k, _)| *k == name) {
                keywords.extend(extra.iter().map(|s| s.to_string()));
            }
            RoomSpec {
                description: Some(format!("Files under {folder}/")),
                name,
                keywords,
            }
        })
        .collect();
    rooms.dedup_by(|a, b| a.name == b.name);
    rooms.push(RoomSpec {
        name: FALLBACK_ROOM.into(),
        keywords: Vec::new(),
        description: Some("Everything that matches no other room".into()),
    });
    Ok(rooms)
}

/// Writes `<project>/mempalace.yaml` (unless one exists) and returns the project's config.
pub fn init_project(project: &Path, wing: Option<&str>) -> Result<(ProjectConfig, bool)> {
    if !project.is_dir() {
        return Err(IngestError::NotAFolder(project.to_path_buf()));
    }
    if let Some(existing) = ProjectConfig::load(project)? {
        return Ok((existing, false));
    }
    let config = detect_project(project, wing)?;
    config.save(project)?;
    Ok((config, true))
}

/// The wing and rooms `project` mines into: its `mempalace.yaml` (with `wing` overriding the
/// file's), or else what `init` would detect, without writing anything into the project.
pub fn project_plan(project: &Path, wing: Option<&str>) -> Result<ProjectConfig> {
    if !project.is_dir() {
        return Err(IngestError::NotAFolder(project.to_path_buf()));
    }
    match ProjectConfig::load(project)? {
        Some(mut existing) => {
            if let Some(w) = wing {
                existing.wing = slug(w);
                validate_name("wing", &existing.wing)?;
            }
            Ok(existing)
        }
        None => detect_project(project, wing),
    }
}

/// The config `init` writes for `project`: the wing (given, else the folder's name) and the
/// rooms detected from its folders.
fn detect_project(project: &Path, wing: Option<&str>) -> Result<ProjectConfig> {
    let path = ProjectConfig::path_in(project);
    if anything_at(&path) {
        return Err(IngestError::ProjectConfig {
            path,
            reason: "exists but is not a regular file; remove it or replace it with a config file"
                .into(),
        });
    }
    let wing = wing.map(slug).unwrap_or_else(|| wing_for_folder(project));
    validate_name("wing", &wing)?;
    Ok(ProjectConfig {
        wing,
        rooms: detect_rooms(project)?,
    })
}
