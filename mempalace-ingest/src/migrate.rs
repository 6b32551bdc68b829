//! Migrating a MemPalace 3.11 (Python, ChromaDB) palace into this one.
//! Every drawer keeps its id and metadata and is embedded again with the same MiniLM; its
//! closets (the pointer lines 3.11's ranking uses) are filed as they are; the
//! knowledge graph, the agents' coordination log (`logstream.sqlite3`, with its
//! `replica.json`) and the palace graph's `tunnels.json` / `hallways.json` (which 3.11 keeps
//! beside the palace folder) are copied when this palace has none. Re-running finishes an interrupted
//! migration without duplicates (drawers already here are left alone).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use mempalace_core::temporal::now_iso;
use mempalace_core::validation::{validate_closet, validate_drawer};
use mempalace_core::{Drawer, Palace, PalaceLayout};
use mempalace_import_chroma::{ChromaPalace, Skipped, repaired_source_file, to_closet, to_drawer};
use serde::Serialize;

use crate::error::{IngestError, Result};
use crate::progress::{Progress, ProgressEvent, Work};

/// Drawers read, embedded and filed per step.
const BATCH: usize = 64;
/// Closets read and filed per step (nothing to embed).
const CLOSET_BATCH: usize = 1000;

/// What a migration did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MigrateReport {
    /// The 3.11 palace read.
    pub from: PathBuf,
    /// Drawer records found there.
    pub drawers_found: u64,
    /// Drawers filed now.
    pub imported: u64,
    /// Drawers already in this palace (an earlier, maybe interrupted, run).
    pub already_present: u64,
    /// Records that are no drawer, or one this palace cannot hold (a wing that is a path, a
    /// blank text), each with its id and the reason naming the value: the rest migrate.
    pub skipped: Vec<SkippedDrawer>,
    /// Records migrated after a repair 3.11 itself would have accepted (control characters
    /// in a source file, which 3.11 stores verbatim), each with what was changed.
    #[serde(default)]
    pub repaired: Vec<SkippedDrawer>,
    /// Closets (3.11's pointer index, used by its ranking) found there.
    pub closets_found: u64,
    /// Closets filed (again, on a re-run: they replace themselves).
    pub closets_imported: u64,
    /// Closet records that are no closet, with the reason.
    pub closets_skipped: Vec<SkippedDrawer>,
    /// What happened to the knowledge graph.
    pub knowledge_graph: String,
    /// What happened to the agents' coordination log.
    pub coordination_log: String,
    /// What happened to the explicit tunnels.
    pub tunnels: String,
    /// What happened to the hallways.
    pub hallways: String,
    /// Wall time in seconds.
    pub seconds: f64,
}

/// A record that was not imported.
#[derive(Debug, Clone, Serialize)]
pub struct SkippedDrawer {
    /// Its id.
    pub id: String,
    /// Why.
    pub reason: String,
}

impl From<Skipped> for SkippedDrawer {
    fn from(s: Skipped) -> Self {
        SkippedDrawer {
            id: s.id,
            reason: s.reason,
        }
    }
}

/// Migrates the 3.11 palace in `from` into `palace` (its folder, `palace.path()`), reporting
/// to `progress`. Records this palace cannot hold are skipped and named in the report, the
/// rest migrate; running it again finishes an interrupted migration without duplicates.
pub async fn migrate(
    palace: Arc<Palace>,
    from: &Path,
    progress: &dyn Progress,
) -> Result<MigrateReport> {
    let started = Instant::now();
    let to = palace.path().to_path_buf();
    let to = to.as_path();
    if same_folder(from, to) {
        return Err(IngestError::Unsupported(format!(
            "{} is the MemPalace 3.11 palace itself; migrate into another folder",
            from.display()
        )));
    }
    let chroma = ChromaPalace::open(from)?;
    let total = chroma.drawer_count()?;
    // The graph first: creating the palace below creates an empty graph of its own.
    let knowledge_graph = copy_sqlite(from, to, PalaceLayout::KNOWLEDGE_GRAPH)?;
    let coordination_log = copy_sqlite(from, to, PalaceLayout::COORDINATION_LOG)?;
    if PalaceLayout::new(to).coordination_log().is_file() {
        // The log's rows name their origin replica: keep the id that wrote them.
        copy_file(from, to, PalaceLayout::REPLICA)?;
    }
    let beside = from.parent().unwrap_or(from);
    let tunnels = copy_file(beside, to, PalaceLayout::TUNNELS)?;
    let hallways = copy_file(beside, to, PalaceLayout::HALLWAYS)?;
    let mut report = MigrateReport {
        from: from.to_path_buf(),
        drawers_found: total,
        ..MigrateReport::default()
    };
    progress.event(ProgressEvent::Started {
        work: Work::Drawers,
        total,
    });
    let mut done = 0u64;
    palace.init().await?;
    let now = now_iso();
    let mut after = 0;
    loop {
        let records = chroma.drawers_after(after, BATCH)?;
        let Some(last) = records.last() else { break };
        after = last.seq;
        let mut drawers = Vec::with_capacity(records.len());
        for r in &records {
            match to_drawer(r, &now) {
                Ok(d) => {
                    if let Some(d) = fit_for_this_palace(d, &mut report) {
                        drawers.push(d);
                    }
                }
                Err(s) => report.skipped.push(s.into()),
            }
        }
        let batch = palace.import_drawers(&drawers).await?;
        report.imported += batch.imported;
        report.already_present += batch.already_present;
        done += records.len() as u64;
        progress.event(ProgressEvent::Advanced {
            done,
            drawers_filed: report.imported,
        });
    }
    progress.event(ProgressEvent::Finished);
    report.closets_found = chroma.closet_count()?;
    let mut after = 0;
    loop {
        let records = chroma.closets_after(after, CLOSET_BATCH)?;
        let Some(last) = records.last() else { break };
        after = last.seq;
        let mut closets = Vec::with_capacity(records.len());
        for r in &records {
            match to_closet(r) {
                Ok(mut c) => {
                    if let Some(fixed) = repaired_source_file(&c.source_file) {
                        c.source_file = fixed;
                    }
                    match validate_closet(&c) {
                        Ok(()) => closets.push(c),
                        Err(e) => report.closets_skipped.push(SkippedDrawer {
                            id: c.id.escape_debug().to_string(),
                            reason: e.to_string(),
                        }),
                    }
                }
                Err(s) => report.closets_skipped.push(s.into()),
            }
        }
        report.closets_imported += palace.import_closets(&closets).await? as u64;
    }
    palace.settle().await?;
    report.knowledge_graph = knowledge_graph;
    report.coordination_log = coordination_log;
    report.tunnels = tunnels;
    report.hallways = hallways;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// `d` as this palace can hold it: a source file with control characters repaired (3.11
/// accepts them), noted in `report.repaired`; `None`, noted in `report.skipped` with the
/// field and value, for a record no repair makes valid (a wing that is a path, say).
fn fit_for_this_palace(mut d: Drawer, report: &mut MigrateReport) -> Option<Drawer> {
    if let Some(fixed) = repaired_source_file(&d.metadata.source_file) {
        report.repaired.push(SkippedDrawer {
            id: d.id.escape_debug().to_string(),
            reason: format!(
                "source_file {:?} had control characters, each replaced by U+FFFD",
                d.metadata.source_file
            ),
        });
        d.metadata.source_file = fixed;
    }
    match validate_drawer(&d) {
        Ok(()) => Some(d),
        Err(e) => {
            report.skipped.push(SkippedDrawer {
                id: d.id.escape_debug().to_string(),
                reason: e.to_string(),
            });
            None
        }
    }
}

fn same_folder(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Copies the SQLite file `name` of the 3.11 palace (a consistent snapshot, WAL included)
/// unless this palace already has one; says what it did.
fn copy_sqlite(from: &Path, to: &Path, name: &str) -> Result<String> {
    let source = from.join(name);
    let target = to.join(name);
    if !source.is_file() {
        return Ok("none in the 3.11 palace".into());
    }
    if target.exists() {
        return Ok(format!("kept {} (not overwritten)", target.display()));
    }
    std::fs::create_dir_all(to).map_err(|e| IngestError::io(to, e))?;
    let copy_error = |e| IngestError::SqliteCopy {
        from: source.clone(),
        to: target.clone(),
        source: e,
    };
    let conn =
        rusqlite::Connection::open_with_flags(&source, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(copy_error)?;
    conn.execute("VACUUM INTO ?1", [target.to_string_lossy().as_ref()])
        .map_err(copy_error)?;
    Ok(format!("copied to {}", target.display()))
}

/// Largest sidecar file copied (a bigger one is not MemPalace's).
const MAX_SIDECAR_BYTES: u64 = 512 << 20;

/// Copies the regular file `name` from the folder `from` into `to` unless `to` has one; says
/// what it did. Links and special files are not followed.
fn copy_file(from: &Path, to: &Path, name: &str) -> Result<String> {
    let source = from.join(name);
    let target = to.join(name);
    match std::fs::symlink_metadata(&source) {
        Ok(m) if m.is_file() && m.len() <= MAX_SIDECAR_BYTES => {}
        Ok(_) => {
            return Ok(format!(
                "{} is not a regular file; not copied",
                source.display()
            ));
        }
        Err(_) => return Ok(format!("none at {}", source.display())),
    }
    if target.exists() {
        return Ok(format!("kept {} (not overwritten)", target.display()));
    }
    std::fs::create_dir_all(to).map_err(|e| IngestError::io(to, e))?;
    let tmp = to.join(format!(".{name}.migrating"));
    std::fs::copy(&source, &tmp).map_err(|e| IngestError::io(&source, e))?;
    std::fs::rename(&tmp, &target).map_err(|e| IngestError::io(&target, e))?;
    Ok(format!("copied to {}", target.display()))
}
