//! Mining a project folder: read and chunk → skip unchanged files → embed → store, each stage
//! its own task joined by bounded channels, so the embedder never waits on the store.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mempalace_core::chunking::{chunk_document, chunk_text};
use mempalace_core::drawer_id::mined_drawer_id;
use mempalace_core::entity_extraction::EntityTagger;
use mempalace_core::room_routing::{RoomSpec, route_room};
use mempalace_core::temporal::now_iso;
use mempalace_core::{AddedBy, Cancellation, Drawer, DrawerMetadata, Palace};
use serde::Serialize;
use tokio::sync::mpsc;

use crate::error::{IngestError, Result};
use crate::progress::{Progress, ProgressEvent, Work};
use crate::walk::{DEFAULT_MAX_FILE_BYTES, ProjectFile, project_files, read_text};
use crate::wing_links::{WingLinks, rebuild_wing_links};

/// How to mine.
#[derive(Debug, Clone)]
pub struct MineOptions {
    /// The wing to file under.
    pub wing: String,
    /// The project's rooms.
    pub rooms: Vec<RoomSpec>,
    /// Chunks per embedding batch.
    pub batch_size: usize,
    /// Files larger than this are skipped.
    pub max_file_bytes: u64,
    /// How files are cut into drawers.
    pub chunking: Chunking,
    /// Mine at most this many files (in walk order); `None` mines them all.
    pub max_files: Option<usize>,
    /// Finds the names each drawer mentions (hallways and entity tunnels are built from
    /// them); by default without a known-entity registry.
    pub entity_tagger: Arc<EntityTagger>,
}

/// How `mine` cuts a file into drawers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Chunking {
    /// Whole lines and sentences, each chunk headed by the file's title and section
    /// ([`chunk_document`]; the default).
    #[default]
    Context,
    /// MemPalace 3.11's plain 800-character windows ([`chunk_text`]).
    Plain,
}

impl MineOptions {
    /// Defaults for a wing and its rooms.
    pub fn new(wing: impl Into<String>, rooms: Vec<RoomSpec>) -> Self {
        MineOptions {
            wing: wing.into(),
            rooms,
            batch_size: 64,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            chunking: Chunking::default(),
            max_files: None,
            entity_tagger: Arc::new(EntityTagger::default()),
        }
    }
}

/// What a mine did, and where its time went.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MineReport {
    /// Candidate files found.
    pub files_found: u64,
    /// Files whose chunks were (re)filed.
    pub files_mined: u64,
    /// Files unchanged since the last mine.
    pub files_unchanged: u64,
    /// Files passed over (binary, too large, not UTF-8, symlinks, no chunk).
    pub files_skipped: u64,
    /// Drawers written.
    pub drawers_filed: u64,
    /// Old chunks removed because their file shrank.
    pub drawers_removed: u64,
    /// Whole run, seconds.
    pub wall_seconds: f64,
    /// Time inside the embedder, seconds.
    pub embed_seconds: f64,
    /// Time inside store writes, seconds.
    pub store_seconds: f64,
    /// True when stopped early by its cancellation (everything written so far is complete).
    pub interrupted: bool,
    /// The wing's hallways and entity tunnels, rebuilt after the files (not when
    /// interrupted).
    pub links: WingLinks,
}

/// One file's chunks, ready to file.
struct FileChunks {
    source: PathBuf,
    drawers: Vec<Drawer>,
}

/// A batch for the embedder / the store.
struct Batch {
    drawers: Vec<Drawer>,
    stale: Vec<String>,
    files_done: u64,
}

/// Reads, routes and chunks one file into drawers with deterministic ids.
fn file_chunks(file: &ProjectFile, opts: &MineOptions, filed_at: &str) -> Option<FileChunks> {
    let text = read_text(&file.path, opts.max_file_bytes).ok()?;
    let room = route_room(&file.relative, &text, &opts.rooms);
    let source = file.path.to_string_lossy().into_owned();
    let chunks = match opts.chunking {
        Chunking::Context => chunk_document(&text),
        Chunking::Plain => chunk_text(&text),
    };
    let drawers = chunks
        .into_iter()
        .map(|c| Drawer {
            id: mined_drawer_id(&opts.wing, &room, &source, c.index),
            metadata: DrawerMetadata {
                wing: opts.wing.clone(),
                room: room.clone(),
                source_file: source.clone(),
                chunk_index: c.index,
                added_by: AddedBy::Mine,
                filed_at: filed_at.to_string(),
                authored_at: None,
                conversation: None,
                entities: opts.entity_tagger.tag(&c.text),
            },
            text: c.text,
        })
        .collect();
    Some(FileChunks {
        source: file.path.clone(),
        drawers,
    })
}

/// Mines the project folder `project` into `palace` (creating the palace if needed),
/// reporting to `progress`. Raising `cancel` stops it after the batches in flight, leaving
/// every written batch complete; mining again finishes the job.
pub async fn mine_project(
    palace: Arc<Palace>,
    project: &Path,
    opts: MineOptions,
    progress: &dyn Progress,
    cancel: &Cancellation,
) -> Result<MineReport> {
    let started = Instant::now();
    palace.init().await?;
    let root = project.to_path_buf();
    let max = opts.max_file_bytes;
    let (mut files, walk_skipped) =
        tokio::task::spawn_blocking(move || project_files(&root, max)).await?;
    if let Some(n) = opts.max_files {
        files.truncate(n);
    }
    let mut report = MineReport {
        files_found: files.len() as u64,
        files_skipped: walk_skipped as u64,
        ..MineReport::default()
    };
    let opts = Arc::new(opts);

    // Stage 1: read + chunk on a blocking thread.
    let (chunk_tx, mut chunk_rx) = mpsc::channel::<Option<FileChunks>>(64);
    let reader = {
        let (opts, cancel) = (Arc::clone(&opts), cancel.clone());
        tokio::task::spawn_blocking(move || {
            let filed_at = now_iso();
            for f in &files {
                if cancel.is_cancelled() {
                    break;
                }
                if chunk_tx
                    .blocking_send(file_chunks(f, &opts, &filed_at))
                    .is_err()
                {
                    break;
                }
            }
        })
    };

    // Stage 2: skip unchanged files, find stale chunks, cut batches.
    let (batch_tx, mut batch_rx) = mpsc::channel::<Batch>(2);
    let planner = {
        let (palace, opts) = (Arc::clone(&palace), Arc::clone(&opts));
        tokio::spawn(async move {
            let (mut unchanged, mut skipped, mut mined) = (0u64, 0u64, 0u64);
            let mut batch = Batch {
                drawers: Vec::new(),
                stale: Vec::new(),
                files_done: 0,
            };
            while let Some(item) = chunk_rx.recv().await {
                let Some(file) = item else {
                    skipped += 1;
                    batch.files_done += 1;
                    continue;
                };
                let source = file.source.to_string_lossy().into_owned();
                let existing = palace.mined_chunks(&opts.wing, &source).await?;
                let same = existing.len() == file.drawers.len()
                    && file
                        .drawers
                        .iter()
                        .all(|d| existing.get(&d.id) == Some(&d.text));
                batch.files_done += 1;
                if same && !file.drawers.is_empty() {
                    unchanged += 1;
                    continue;
                }
                if file.drawers.is_empty() {
                    skipped += 1;
                } else {
                    mined += 1;
                }
                let new_ids: HashSet<&str> = file.drawers.iter().map(|d| d.id.as_str()).collect();
                batch.stale.extend(
                    existing
                        .keys()
                        .filter(|id| !new_ids.contains(id.as_str()))
                        .cloned(),
                );
                batch.drawers.extend(file.drawers);
                while batch.drawers.len() >= opts.batch_size {
                    let rest = batch.drawers.split_off(opts.batch_size);
                    let full = std::mem::replace(
                        &mut batch,
                        Batch {
                            drawers: rest,
                            stale: Vec::new(),
                            files_done: 0,
                        },
                    );
                    if batch_tx.send(full).await.is_err() {
                        return Ok((unchanged, skipped, mined));
                    }
                }
            }
            if !batch.drawers.is_empty() || !batch.stale.is_empty() || batch.files_done > 0 {
                let _ = batch_tx.send(batch).await;
            }
            Ok::<_, IngestError>((unchanged, skipped, mined))
        })
    };

    // Stage 3: embed.
    let (embedded_tx, mut embedded_rx) = mpsc::channel::<(Batch, Vec<Vec<f32>>)>(2);
    let embedder_task = {
        let palace = Arc::clone(&palace);
        tokio::spawn(async move {
            let mut spent = Duration::ZERO;
            while let Some(batch) = batch_rx.recv().await {
                let texts: Vec<String> = batch.drawers.iter().map(|d| d.text.clone()).collect();
                let t = Instant::now();
                let vectors = if texts.is_empty() {
                    Vec::new()
                } else {
                    palace.embed_documents(&texts).await?
                };
                spent += t.elapsed();
                if embedded_tx.send((batch, vectors)).await.is_err() {
                    break;
                }
            }
            Ok::<_, IngestError>(spent)
        })
    };

    // Stage 4: store, here, so progress is reported as batches land.
    progress.event(ProgressEvent::Started {
        work: Work::Files,
        total: report.files_found,
    });
    let (mut files_done, mut drawers_done) = (0u64, 0u64);
    let mut store_time = Duration::ZERO;
    let mut store_result = Ok(());
    while let Some((batch, vectors)) = embedded_rx.recv().await {
        let t = Instant::now();
        if let Err(e) = palace
            .file_mined(&batch.drawers, &vectors, &batch.stale)
            .await
        {
            store_result = Err(e);
            break;
        }
        store_time += t.elapsed();
        report.drawers_filed += batch.drawers.len() as u64;
        report.drawers_removed += batch.stale.len() as u64;
        files_done += batch.files_done;
        drawers_done += batch.drawers.len() as u64;
        progress.event(ProgressEvent::Advanced {
            done: files_done,
            drawers_filed: drawers_done,
        });
    }
    drop(embedded_rx);
    progress.event(ProgressEvent::Finished);
    store_result?;
    if !cancel.is_cancelled() {
        let t = Instant::now();
        palace.settle().await?;
        store_time += t.elapsed();
    }
    reader.await?;
    let (unchanged, skipped, mined) = planner.await??;
    let embed_time = embedder_task.await??;
    report.files_unchanged = unchanged;
    report.files_skipped += skipped;
    report.files_mined = mined;
    report.embed_seconds = embed_time.as_secs_f64();
    report.store_seconds = store_time.as_secs_f64();
    report.interrupted = cancel.is_cancelled();
    if !report.interrupted {
        report.links = rebuild_wing_links(&palace, &opts.wing, true, cancel).await;
    }
    report.wall_seconds = started.elapsed().as_secs_f64();
    Ok(report)
}
