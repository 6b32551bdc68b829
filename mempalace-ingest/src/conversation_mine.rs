//! Mining chat exports and transcripts: every one in a folder (any mix of formats, each
//! recognised from its content) filed as conversations. Files are read
//! on a blocking thread one conversation at a time (a 200 MB export never sits in memory
//! whole) while the palace embeds and files the previous batch; each batch is one write, so a
//! conversation is filed whole or not at all. Re-mining files only turns not filed before.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use mempalace_core::conversations::conversation_drawers::ConversationFiling;
use mempalace_core::conversations::formats::{
    ExportError, ReadSummary, SourceName, read_conversations, slack_people,
};
use mempalace_core::conversations::{Conversation, ExtractMode};
use mempalace_core::palace::ConversationsFiled;
use mempalace_core::regular_file::{open_regular, read_regular};
use mempalace_core::{Cancellation, Palace, PalaceError};
use serde::Serialize;
use tokio::sync::mpsc;

use crate::error::Result;
use crate::progress::{Progress, ProgressEvent, Work};
use crate::walk::export_files;
use crate::wing_links::{WingLinks, rebuild_wing_links};

/// Largest export read (3.11's cap): bigger files are skipped with the reason.
pub const MAX_EXPORT_BYTES: u64 = 500 * 1024 * 1024;
/// Folders inside conversation sources that never hold conversations (Claude Code pages big
/// tool outputs into `tool-results/`).
const SKIPPED_CONVERSATION_DIRS: [&str; 1] = ["tool-results"];
/// Turns gathered before a batch is filed.
const TURNS_PER_BATCH: usize = 256;
/// Characters of turns gathered before a batch is filed (about 80 drawers): conversations
/// with long turns are filed a few at a time, so a stop loses little work.
const CHARS_PER_BATCH: usize = 64 * 1024;

/// How to mine conversations.
#[derive(Debug, Clone)]
pub struct ConversationMineOptions {
    /// The wing every conversation is filed under.
    pub wing: String,
    /// Whole exchanges, or 3.11's general extraction.
    pub extract: ExtractMode,
    /// Files larger than this are skipped.
    pub max_file_bytes: u64,
}

impl ConversationMineOptions {
    /// Defaults for a wing.
    pub fn new(wing: impl Into<String>) -> Self {
        ConversationMineOptions {
            wing: wing.into(),
            extract: ExtractMode::Exchange,
            max_file_bytes: MAX_EXPORT_BYTES,
        }
    }
}

/// A file that could not be read as conversations.
#[derive(Debug, Clone, Serialize)]
pub struct FileProblem {
    /// The file.
    pub file: String,
    /// What was wrong, with the position for a malformed export.
    pub reason: String,
}

/// What a conversation mine did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ConversationMineReport {
    /// The wing filed under.
    pub wing: String,
    /// Candidate files found.
    pub files_found: u64,
    /// Files that held conversations, by format.
    pub files_by_format: BTreeMap<String, u64>,
    /// Files passed over (not a conversation, too large, unreadable), each with the reason.
    pub files_skipped: Vec<FileProblem>,
    /// Symlinks, binary files and names that are not UTF-8 the walk passed over (hidden and
    /// git-ignored files are not walked at all).
    pub files_passed_over_by_walk: u64,
    /// Files that broke off (malformed or truncated): the conversations before the break
    /// are filed, the one it struck is not.
    pub errors: Vec<FileProblem>,
    /// Conversations read.
    pub conversations: u64,
    /// What the filing did (grown / unchanged conversations, new turns and exchanges, drawers).
    pub filed: ConversationsFiled,
    /// What was left out of turns by rule, and how often (tool outputs, hidden messages, ...).
    pub left_out: BTreeMap<String, u64>,
    /// Bytes of exports read.
    pub bytes_read: u64,
    /// Whole run, seconds.
    pub wall_seconds: f64,
    /// Stopped early by its cancellation (every filed batch is complete).
    pub interrupted: bool,
    /// The wing's hallways, rebuilt when this run filed drawers (3.11's rule).
    pub links: WingLinks,
}

/// What the reading thread hands over.
enum Reading {
    /// A file begins.
    Start { source: String },
    /// One complete conversation of the current file.
    Conversation(Conversation),
    /// The current file ended (or broke off).
    End(Result<ReadSummary, String>),
    /// The file could not be opened or is not a regular file: the file and why.
    Unopened(FileProblem),
}

/// Counts the bytes read through it, for the progress bar, and stops the read when the mine
/// is cancelled (Ctrl-C in the middle of a 200 MB export).
struct Counting<R> {
    inner: R,
    read: Arc<AtomicU64>,
    cancel: Cancellation,
    /// Raised when filing has stopped and nobody reads what is parsed.
    unwanted: Cancellation,
}

/// The message a read stopped by Ctrl-C fails with.
const CANCELLED: &str = "mining was cancelled";

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.cancel.is_cancelled() || self.unwanted.is_cancelled() {
            return Err(std::io::Error::other(CANCELLED));
        }
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// The people of the Slack exports met so far: a day file `<export>/<channel>/<day>.json` is
/// read with `<export>/users.json`, loaded once per export.
#[derive(Default)]
struct SlackPeople(HashMap<PathBuf, Arc<HashMap<String, String>>>);

impl SlackPeople {
    /// The people for a file: those of the `users.json` two folders up, if there is one.
    fn of(&mut self, file: &Path) -> Arc<HashMap<String, String>> {
        let Some(export) = file.parent().and_then(Path::parent) else {
            return Arc::default();
        };
        self.0
            .entry(export.to_path_buf())
            .or_insert_with(|| {
                read_regular(&export.join("users.json"), 64 * 1024 * 1024)
                    .ok()
                    .and_then(|bytes| String::from_utf8(bytes).ok())
                    .map(|text| Arc::new(slack_people(&text)))
                    .unwrap_or_default()
            })
            .clone()
    }
}

/// The conversation files under `root` (path, size), the oversized ones with the reason, and
/// how many the walk passed over.
pub fn conversation_files(root: &Path, max: u64) -> (Vec<(PathBuf, u64)>, Vec<FileProblem>, usize) {
    let (files, walk_skipped) = export_files(root, u64::MAX);
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    for f in files {
        if f.relative
            .split('/')
            .any(|part| SKIPPED_CONVERSATION_DIRS.contains(&part))
        {
            continue;
        }
        let size = std::fs::symlink_metadata(&f.path).map_or(0, |m| m.len());
        if size > max {
            skipped.push(FileProblem {
                file: f.path.display().to_string(),
                reason: format!("larger than {max} bytes ({size})"),
            });
            continue;
        }
        found.push((f.path, size));
    }
    (found, skipped, walk_skipped)
}

/// The name a file gives conversations without an id of their own: its path without the
/// extension (a Slack day file's ends in `engineering/2025-03-10`).
fn source_name(path: &str) -> String {
    match path.rsplit_once('.') {
        Some((stem, ext)) if !ext.contains('/') => stem.to_string(),
        _ => path.to_string(),
    }
}

/// Mines every conversation file under `dir` into `palace` (creating the palace if needed),
/// reporting to `progress`. Raising `cancel` stops it between embedding steps: what was
/// filed is whole, and mining again finishes the rest.
pub async fn mine_conversations(
    palace: Arc<Palace>,
    dir: &Path,
    opts: ConversationMineOptions,
    progress: &dyn Progress,
    cancel: &Cancellation,
) -> Result<ConversationMineReport> {
    let started = Instant::now();
    mempalace_core::validation::validate_name("wing", &opts.wing)?;
    palace.init().await?;
    let root = dir.to_path_buf();
    let max = opts.max_file_bytes;
    let (files, oversized, walk_skipped) =
        tokio::task::spawn_blocking(move || conversation_files(&root, max)).await?;
    let mut report = ConversationMineReport {
        wing: opts.wing.clone(),
        files_found: (files.len() + oversized.len()) as u64,
        files_skipped: oversized,
        files_passed_over_by_walk: walk_skipped as u64,
        ..ConversationMineReport::default()
    };
    let total_bytes: u64 = files.iter().map(|(_, size)| size).sum();
    let bytes_read = Arc::new(AtomicU64::new(0));

    let (tx, mut rx) = mpsc::channel::<Reading>(64);
    // Raised when filing stops early (cancelled, or an error): the reader stops at its next
    // read instead of parsing the rest of a large export for nobody.
    let reading = Cancellation::new();
    let reader = {
        let (bytes_read, cancel, unwanted) =
            (Arc::clone(&bytes_read), cancel.clone(), reading.clone());
        tokio::task::spawn_blocking(move || {
            let mut people = SlackPeople::default();
            for (path, _) in files {
                if cancel.is_cancelled() || unwanted.is_cancelled() {
                    break;
                }
                let source = path.display().to_string();
                let file = match open_regular(&path) {
                    Ok(f) => f,
                    Err(e) => {
                        if tx
                            .blocking_send(Reading::Unopened(FileProblem {
                                file: source,
                                reason: e.to_string(),
                            }))
                            .is_err()
                        {
                            return;
                        }
                        continue;
                    }
                };
                // Conversations without an id of their own are named by the file's full path,
                // so mining the folder or its parent names them alike.
                let name = source_name(&source);
                if tx
                    .blocking_send(Reading::Start {
                        source: source.clone(),
                    })
                    .is_err()
                {
                    return;
                }
                let counted = Counting {
                    inner: file,
                    read: Arc::clone(&bytes_read),
                    cancel: cancel.clone(),
                    unwanted: unwanted.clone(),
                };
                let mut gone = false;
                let result = read_conversations(
                    BufReader::with_capacity(256 * 1024, counted),
                    &SourceName::new(name).with_people(people.of(&path)),
                    &mut |c| {
                        if !gone {
                            gone = tx.blocking_send(Reading::Conversation(c)).is_err();
                        }
                    },
                );
                let end = result.map_err(|e: ExportError| e.to_string());
                if gone || tx.blocking_send(Reading::End(end)).is_err() {
                    return;
                }
            }
        })
    };

    // The cancellation reaches the embedding of a batch too: a 100,000-character message is
    // over a hundred drawers.
    progress.event(ProgressEvent::Started {
        work: Work::Bytes,
        total: total_bytes,
    });
    let mut drawers_filed = 0u64;
    let advance = |filed: u64| ProgressEvent::Advanced {
        done: bytes_read.load(Ordering::Relaxed),
        drawers_filed: filed,
    };
    let mut filing: Option<ConversationFiling> = None;
    let mut file_progress = Default::default();
    let mut batch: Vec<Conversation> = Vec::new();
    let (mut batch_turns, mut batch_chars) = (0usize, 0usize);
    let mut outcome: Result<()> = Ok(());
    while let Some(item) = rx.recv().await {
        let step: Result<()> = async {
            match item {
                Reading::Unopened(problem) => report.files_skipped.push(problem),
                Reading::Start { source } => {
                    let f = ConversationFiling {
                        wing: opts.wing.clone(),
                        source_file: source,
                        extract: opts.extract,
                    };
                    match palace.conversation_progress(&f).await {
                        Ok(p) => {
                            file_progress = p;
                            filing = Some(f);
                        }
                        // A file whose name cannot be a drawer's source (a control
                        // character in it): passed over, the rest is mined.
                        Err(e @ PalaceError::InvalidInput { .. }) => {
                            report.files_skipped.push(FileProblem {
                                file: f.source_file.escape_debug().to_string(),
                                reason: e.to_string(),
                            });
                        }
                        Err(e) => return Err(e.into()),
                    }
                }
                Reading::Conversation(_) if filing.is_none() => {}
                Reading::Conversation(c) => {
                    report.conversations += 1;
                    batch_turns += c.turns.len();
                    batch_chars += c.turns.iter().map(|t| t.text.len()).sum::<usize>();
                    batch.push(c);
                    if (batch_turns >= TURNS_PER_BATCH || batch_chars >= CHARS_PER_BATCH)
                        && let Some(f) = &filing
                    {
                        let filed = palace
                            .file_conversations_cancellable(&batch, f, &mut file_progress, cancel)
                            .await?;
                        report.filed.add(&filed);
                        drawers_filed += filed.drawers_filed;
                        progress.event(advance(drawers_filed));
                        batch.clear();
                        (batch_turns, batch_chars) = (0, 0);
                    }
                }
                Reading::End(result) => {
                    if let Some(f) = filing.take() {
                        if !batch.is_empty() {
                            let filed = palace
                                .file_conversations_cancellable(
                                    &batch,
                                    &f,
                                    &mut file_progress,
                                    cancel,
                                )
                                .await?;
                            report.filed.add(&filed);
                            drawers_filed += filed.drawers_filed;
                        }
                        progress.event(advance(drawers_filed));
                        batch.clear();
                        (batch_turns, batch_chars) = (0, 0);
                        let problem = |reason: String| FileProblem {
                            file: f.source_file.clone(),
                            reason,
                        };
                        match result {
                            Ok(summary) => {
                                if let Some(format) = summary.format {
                                    *report
                                        .files_by_format
                                        .entry(format.name().to_string())
                                        .or_default() += 1;
                                }
                                for (reason, n) in summary.skipped {
                                    *report.left_out.entry(reason).or_default() += n;
                                }
                            }
                            Err(e) if e.starts_with("not a conversation") => {
                                report.files_skipped.push(problem(e))
                            }
                            // Stopped by Ctrl-C: the conversations handed out were filed.
                            Err(_) if cancel.is_cancelled() => {}
                            Err(e) => {
                                progress.event(ProgressEvent::Failed {
                                    item: &f.source_file,
                                    reason: &e,
                                });
                                report.errors.push(problem(e))
                            }
                        }
                    }
                }
            }
            Ok(())
        }
        .await;
        if let Err(e) = step {
            // Stopped by its cancellation in the middle of a batch: nothing of it was written.
            if !e.is_cancelled() {
                outcome = Err(e);
            }
            break;
        }
    }
    reading.cancel();
    drop(rx);
    progress.event(ProgressEvent::Finished);
    reader.await?;
    outcome?;
    if !cancel.is_cancelled() {
        palace.settle().await?;
    }
    report.bytes_read = bytes_read.load(Ordering::Relaxed);
    report.interrupted = cancel.is_cancelled();
    if !report.interrupted && report.filed.drawers_filed > 0 {
        report.links = rebuild_wing_links(&palace, &report.wing, false, cancel).await;
    }
    report.wall_seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_names_its_conversations_by_its_place_in_the_folder() {
        assert_eq!(
            source_name("engineering/2025-03-10.json"),
            "engineering/2025-03-10"
        );
        assert_eq!(source_name("notes"), "notes");
        assert_eq!(source_name("v1.2/chat"), "v1.2/chat");
    }
}
