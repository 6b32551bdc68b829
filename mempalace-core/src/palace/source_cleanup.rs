//! Removing drawers by where they came from: `delete_by_source` (one source file) and `sync`
//! (every mined file that no longer exists).

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Palace;
use crate::drawer::{AddedBy, Drawer};
use crate::error::{PalaceError, Result};
use crate::filter::DrawerFilter;
use crate::validation::{validate_name, validate_source_file};
use crate::vector_store::Page;

/// Drawers read per store round trip while scanning.
const SCAN_PAGE: usize = 1000;
/// Most `(wing, room)` places a dry run names.
const SAMPLE_PLACES: usize = 5;

/// A place (wing and room) drawers live in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Place {
    /// The wing.
    pub wing: String,
    /// The room.
    pub room: String,
}

/// `delete_by_source` result (a dry run unless asked otherwise).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceDeletion {
    /// Always true (failures are errors).
    pub success: bool,
    /// True when nothing was deleted because only a preview was asked for.
    pub dry_run: bool,
    /// The source file matched (exactly).
    pub source_file: String,
    /// How many drawers match.
    pub match_count: u64,
    /// How many were deleted (0 in a dry run).
    pub deleted: u64,
    /// Up to 5 distinct places the matching drawers live in.
    pub sample: Vec<Place>,
    /// What to do next, in a dry run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// What `sync` looks at.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SyncRequest {
    /// Only drawers mined from files under this folder (default: every mined drawer).
    pub project_dir: Option<PathBuf>,
    /// Only drawers in this wing.
    pub wing: Option<String>,
    /// Delete the stale drawers (default: only report them).
    pub apply: bool,
}

/// A source file `sync` found gone, and its drawers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StaleSource {
    /// The file's path as filed.
    pub source_file: String,
    /// Why its drawers are stale ("missing": no file at that path any more; "ignored": the
    /// project's ignore rules now exclude it).
    pub reason: String,
    /// How many drawers were mined from it.
    pub drawers: u64,
}

/// `sync` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyncReport {
    /// Always true (failures are errors).
    pub success: bool,
    /// True when nothing was deleted because only a report was asked for.
    pub dry_run: bool,
    /// The folder looked at, when one was given.
    pub project_dir: Option<String>,
    /// The wing looked at, when one was given.
    pub wing: Option<String>,
    /// Mined drawers looked at.
    pub drawers_checked: u64,
    /// Distinct source files looked at.
    pub sources_checked: u64,
    /// The source files that are gone.
    pub stale_sources: Vec<StaleSource>,
    /// Drawers of those files (to delete, or deleted when applied).
    pub stale_drawers: u64,
    /// Drawers deleted (0 in a dry run).
    pub deleted: u64,
}

/// The drawers matching a filter, read a page at a time in id order (for passes that do
/// async work per page, such as reading the page's vectors).
pub(super) struct DrawerPages {
    filter: DrawerFilter,
    size: usize,
    offset: usize,
    done: bool,
}

impl DrawerPages {
    /// Pages of `size` drawers matching `filter`.
    pub(super) fn new(filter: DrawerFilter, size: usize) -> Self {
        DrawerPages {
            filter,
            size,
            offset: 0,
            done: false,
        }
    }

    /// The next page of `palace`'s drawers (`None` after the last).
    pub(super) async fn next(&mut self, palace: &Palace) -> Result<Option<Vec<Drawer>>> {
        if self.done {
            return Ok(None);
        }
        let page = palace
            .store
            .list(
                &self.filter,
                Page {
                    offset: self.offset,
                    limit: self.size,
                },
            )
            .await?;
        self.done = page.len() < self.size;
        self.offset += page.len();
        Ok(if page.is_empty() { None } else { Some(page) })
    }
}

impl Palace {
    /// Every drawer matching `filter`, read a page at a time.
    pub(super) async fn scan(
        &self,
        filter: &DrawerFilter,
        mut visit: impl FnMut(Drawer),
    ) -> Result<()> {
        self.scan_until(filter, |d| {
            visit(d);
            ControlFlow::Continue(())
        })
        .await
    }

    /// [`Self::scan`] that stops at the first drawer `visit` answers `Break` for (no further
    /// page is read).
    pub(super) async fn scan_until(
        &self,
        filter: &DrawerFilter,
        mut visit: impl FnMut(Drawer) -> ControlFlow<()>,
    ) -> Result<()> {
        let mut pages = DrawerPages::new(filter.clone(), SCAN_PAGE);
        while let Some(page) = pages.next(self).await? {
            for d in page {
                if visit(d).is_break() {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Deletes every drawer filed from `source_file` (an exact match on the stored path), or
    /// with `dry_run` only counts them and names where they live. Deleting a source with no
    /// drawers is not an error.
    pub async fn delete_by_source(
        &self,
        source_file: &str,
        dry_run: bool,
    ) -> Result<SourceDeletion> {
        let source_file = source_file.trim();
        if source_file.is_empty() {
            return Err(PalaceError::invalid(
                "source_file",
                "source_file must be a non-empty string",
            ));
        }
        validate_source_file(source_file)?;
        self.require_palace().await?;
        let filter = DrawerFilter::all().with_source_file(source_file);
        let _guard = if dry_run {
            None
        } else {
            Some(self.write_lock.acquire().await?)
        };
        let mut ids = Vec::new();
        let mut places: Vec<Place> = Vec::new();
        self.scan(&filter, |d| {
            let place = Place {
                wing: d.metadata.wing,
                room: d.metadata.room,
            };
            if places.len() < SAMPLE_PLACES && !places.contains(&place) {
                places.push(place);
            }
            ids.push(d.id);
        })
        .await?;
        let match_count = ids.len() as u64;
        let mut deleted = 0;
        if !dry_run {
            for batch in ids.chunks(SCAN_PAGE) {
                deleted += self.store.delete(batch).await? as u64;
            }
            self.closets
                .delete_for_sources(&[source_file.to_string()])
                .await?;
        }
        Ok(SourceDeletion {
            success: true,
            dry_run,
            source_file: source_file.to_string(),
            match_count,
            deleted,
            sample: places,
            hint: dry_run.then(|| {
                if match_count == 0 {
                    "No drawers match this source_file.".to_string()
                } else {
                    format!(
                        "No drawers were deleted. Re-run with dry_run=false to remove these {match_count} drawer(s)."
                    )
                }
            }),
        })
    }

    /// Finds drawers mined from files that no longer exist (optionally only under
    /// `project_dir` and in one wing) and, with `apply`, deletes them. Only mined drawers
    /// are looked at: what agents filed by hand names no file to check. (To prune files a
    /// project now ignores too, see `mempalace_ingest::sync`.)
    pub async fn sync(&self, request: &SyncRequest) -> Result<SyncReport> {
        self.sync_with_rules(request, &|_| false).await
    }

    /// [`Self::sync`] that also counts as stale the files that still exist but `ignored`
    /// says the project no longer mines (reason "ignored"; e.g. its .gitignore now names
    /// them).
    pub async fn sync_with_rules(
        &self,
        request: &SyncRequest,
        ignored: &(dyn Fn(&Path) -> bool + Send + Sync),
    ) -> Result<SyncReport> {
        if let Some(w) = &request.wing {
            validate_name("wing", w)?;
        }
        let project_dir = match &request.project_dir {
            Some(dir) => {
                let dir = std::fs::canonicalize(dir).map_err(|e| PalaceError::Io {
                    path: dir.clone(),
                    source: e,
                })?;
                if !dir.is_dir() {
                    return Err(PalaceError::invalid(
                        "project_dir",
                        format!("{} is not a folder", dir.display()),
                    ));
                }
                Some(dir)
            }
            None => None,
        };
        self.require_palace().await?;
        let filter = match &request.wing {
            Some(w) => DrawerFilter::wing(w.clone()),
            None => DrawerFilter::all(),
        };
        let _guard = if request.apply {
            Some(self.write_lock.acquire().await?)
        } else {
            None
        };
        let mut by_source: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut drawers_checked = 0u64;
        self.scan(&filter, |d| {
            let path = Path::new(&d.metadata.source_file);
            // Conversations are memories of what was said: a transcript that a harness
            // rotates away does not unsay them, so they are never pruned here.
            let mined = d.metadata.added_by == AddedBy::Mine
                && d.metadata.conversation.is_none()
                && path.is_absolute();
            let in_scope = project_dir
                .as_deref()
                .is_none_or(|dir| path.starts_with(dir));
            if mined && in_scope {
                drawers_checked += 1;
                by_source
                    .entry(d.metadata.source_file)
                    .or_default()
                    .push(d.id);
            }
        })
        .await?;
        let sources_checked = by_source.len() as u64;
        let mut stale_sources = Vec::new();
        let mut stale_ids = Vec::new();
        for (source, ids) in by_source {
            // Only a path that is not there any more is gone: a file that cannot be read now
            // (no permission, an unmounted disk, an I/O error) keeps its drawers.
            let gone = match std::fs::symlink_metadata(&source) {
                Ok(_) => false,
                Err(e) => {
                    e.kind() == std::io::ErrorKind::NotFound
                        || e.raw_os_error() == Some(libc::ENOTDIR)
                }
            };
            let reason = if gone {
                "missing"
            } else if ignored(Path::new(&source)) {
                "ignored"
            } else {
                continue;
            };
            stale_sources.push(StaleSource {
                source_file: source,
                reason: reason.into(),
                drawers: ids.len() as u64,
            });
            stale_ids.extend(ids);
        }
        let mut deleted = 0;
        if request.apply {
            for batch in stale_ids.chunks(SCAN_PAGE) {
                deleted += self.store.delete(batch).await? as u64;
            }
            let sources: Vec<String> = stale_sources
                .iter()
                .map(|s| s.source_file.clone())
                .collect();
            if !sources.is_empty() {
                self.closets.delete_for_sources(&sources).await?;
            }
        }
        Ok(SyncReport {
            success: true,
            dry_run: !request.apply,
            project_dir: project_dir.map(|d| d.display().to_string()),
            wing: request.wing.clone(),
            drawers_checked,
            sources_checked,
            stale_drawers: stale_ids.len() as u64,
            stale_sources,
            deleted,
        })
    }
}
