//! `mempalace migrate FROM`: brings a MemPalace 3.11 (Python, ChromaDB) palace into this one.
//! Every drawer keeps its id and metadata and is embedded again with the same MiniLM; its
//! closets (the pointer lines 3.11's ranking uses) are filed as they are; the
//! knowledge graph, the agents' coordination log (`logstream.sqlite3`, with its
//! `replica.json`) and the palace graph's `tunnels.json` / `hallways.json` (which 3.11 keeps
//! beside the palace folder) are copied when this palace has none. Re-running finishes an interrupted
//! migration without duplicates (drawers already here are left alone).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mempalace_core::Palace;
use mempalace_core::coordination::COORDINATION_FILE_NAME;
use mempalace_core::locations::KNOWLEDGE_GRAPH_FILE;
use mempalace_core::temporal::now_iso;
use mempalace_import_chroma::{ChromaPalace, Skipped, to_closet, to_drawer};
use mempalace_links_json::{HALLWAYS_FILE, TUNNELS_FILE};
use serde::Serialize;

/// The coordination log's replica id file (3.11's name).
const REPLICA_FILE: &str = "replica.json";

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
    /// Records that are no drawer, with the reason.
    pub skipped: Vec<SkippedDrawer>,
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

/// Migrates the 3.11 palace in `from` into `palace` (whose folder is `to`).
pub async fn migrate(
    palace: Arc<Palace>,
    from: &Path,
    to: &Path,
    quiet: bool,
) -> Result<MigrateReport> {
    let started = Instant::now();
    if same_folder(from, to) {
        bail!(
            "{} is the MemPalace 3.11 palace itself; migrate into another folder with --palace",
            from.display()
        );
    }
    let chroma = ChromaPalace::open(from)?;
    let total = chroma.drawer_count()?;
    // The graph first: creating the palace below creates an empty graph of its own.
    let knowledge_graph = copy_sqlite(from, to, KNOWLEDGE_GRAPH_FILE)?;
    let coordination_log = copy_sqlite(from, to, COORDINATION_FILE_NAME)?;
    if to.join(COORDINATION_FILE_NAME).is_file() {
        // The log's rows name their origin replica: keep the id that wrote them.
        copy_file(from, to, REPLICA_FILE)?;
    }
    let beside = from.parent().unwrap_or(from);
    let tunnels = copy_file(beside, to, TUNNELS_FILE)?;
    let hallways = copy_file(beside, to, HALLWAYS_FILE)?;
    let mut report = MigrateReport {
        from: from.to_path_buf(),
        drawers_found: total,
        ..MigrateReport::default()
    };
    let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} migrating [{bar:30}] {pos}/{len} drawers  {elapsed_precise}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar
    });
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
                Ok(d) => drawers.push(d),
                Err(s) => report.skipped.push(s.into()),
            }
        }
        let batch = palace
            .import_drawers(&drawers)
            .await
            .context("filing migrated drawers")?;
        report.imported += batch.imported;
        report.already_present += batch.already_present;
        if let Some(bar) = &bar {
            bar.inc(records.len() as u64);
        }
    }
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    report.closets_found = chroma.closet_count()?;
    let mut after = 0;
    loop {
        let records = chroma.closets_after(after, CLOSET_BATCH)?;
        let Some(last) = records.last() else { break };
        after = last.seq;
        let mut closets = Vec::with_capacity(records.len());
        for r in &records {
            match to_closet(r) {
                Ok(c) => closets.push(c),
                Err(s) => report.closets_skipped.push(s.into()),
            }
        }
        report.closets_imported += palace
            .import_closets(&closets)
            .await
            .context("filing migrated closets")? as u64;
    }
    palace.settle().await.context("indexing the palace")?;
    report.knowledge_graph = knowledge_graph;
    report.coordination_log = coordination_log;
    report.tunnels = tunnels;
    report.hallways = hallways;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
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
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    let conn =
        rusqlite::Connection::open_with_flags(&source, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .with_context(|| format!("opening {}", source.display()))?;
    conn.execute("VACUUM INTO ?1", [target.to_string_lossy().as_ref()])
        .with_context(|| format!("copying {} to {}", source.display(), target.display()))?;
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
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    let tmp = to.join(format!(".{name}.migrating"));
    std::fs::copy(&source, &tmp)
        .with_context(|| format!("copying {} to {}", source.display(), tmp.display()))?;
    std::fs::rename(&tmp, &target)
        .with_context(|| format!("moving {} to {}", tmp.display(), target.display()))?;
    Ok(format!("copied to {}", target.display()))
}
