//! `mempalace init <dir>`: rooms from the project's top-level folders, a `mempalace.yaml`.

use std::path::Path;

use anyhow::{Context, Result, bail};
use mempalace_core::room_routing::{FALLBACK_ROOM, RoomSpec};
use mempalace_core::validation::validate_name;

use crate::mine::walk::is_skipped_dir;
use crate::project_config::{ProjectConfig, slug, wing_for_folder};
use crate::regular_file::anything_at;

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
        .with_context(|| format!("reading {}", project.display()))?
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
        bail!("{} is not a folder", project.display());
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
        bail!("{} is not a folder", project.display());
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
        bail!(
            "{} exists but is not a regular file; remove it or replace it with a config file",
            path.display()
        );
    }
    let wing = wing.map(slug).unwrap_or_else(|| wing_for_folder(project));
    validate_name("wing", &wing).context("choose another name with --wing")?;
    Ok(ProjectConfig {
        wing,
        rooms: detect_rooms(project)?,
    })
}
