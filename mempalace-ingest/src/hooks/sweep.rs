//! `mempalace sweep`: files what the hooks and the miner missed in agent transcripts (a
//! `.jsonl` file, or every one under a folder), each into its project's wing, only the turns
//! not filed before. It takes the same per-transcript lock as the hooks, so a sweep running
//! beside a live session never files a turn twice.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mempalace_core::Palace;
use serde::Serialize;

use super::project_wing::project_wing;
use super::{HookSettings, HookState, TranscriptFile, TranscriptFiling, file_transcript};

/// Longest a sweep spends on one transcript (a huge one is finished by the next sweep).
const PER_TRANSCRIPT: Duration = Duration::from_secs(3600);

/// What a sweep did with one transcript.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweptTranscript {
    /// The transcript.
    #[serde(serialize_with = "mempalace_core::reports::path_as_text")]
    pub path: PathBuf,
    /// The wing its turns went to (none when it was refused before filing).
    pub wing: Option<String>,
    /// Turns filed for the first time.
    pub new_turns: u64,
    /// Drawers written.
    pub drawers_filed: u64,
    /// Why it was not (wholly) filed: refused, failed, or the time limit came first.
    pub problem: Option<String>,
}

/// What `sweep` did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepReport {
    /// The file or folder swept.
    #[serde(serialize_with = "mempalace_core::reports::path_as_text")]
    pub target: PathBuf,
    /// Each transcript found, in path order.
    pub transcripts: Vec<SweptTranscript>,
    /// Turns filed for the first time, in all.
    pub new_turns: u64,
    /// Transcripts with a problem.
    pub failed: usize,
}

/// Why a sweep could not start.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The target is neither a file nor a folder.
    #[error("Not a file or directory: {0}")]
    NotFound(PathBuf),
}

/// Files the new turns of `target` (a transcript, or every `*.jsonl` under a folder, links
/// not followed). A transcript named or found here needs no `allowed_roots`: the user chose
/// it. Every other check of [`TranscriptFile::check`] applies.
pub async fn sweep(
    palace: &Arc<Palace>,
    target: &Path,
    settings: &HookSettings,
) -> Result<SweepReport, SweepError> {
    // The path as given may be a link (the user chose it); links found inside are not followed.
    let not_found = || SweepError::NotFound(target.to_path_buf());
    let target = target.canonicalize().map_err(|_| not_found())?;
    let meta = std::fs::metadata(&target).map_err(|_| not_found())?;
    let (files, root) = if meta.is_dir() {
        (transcripts_under(&target), target.clone())
    } else if meta.is_file() {
        let parent = target
            .parent()
            .map_or_else(|| target.clone(), Path::to_path_buf);
        (vec![target.clone()], parent)
    } else {
        return Err(not_found());
    };
    let state = HookState::new(&settings.state_dir);
    let home = settings.home.to_string_lossy().into_owned();
    let mut report = SweepReport {
        target,
        transcripts: Vec::new(),
        new_turns: 0,
        failed: 0,
    };
    for path in files {
        let swept = sweep_one(palace, &path, &root, settings, &state, &home).await;
        report.new_turns += swept.new_turns;
        report.failed += usize::from(swept.problem.is_some());
        report.transcripts.push(swept);
    }
    Ok(report)
}

async fn sweep_one(
    palace: &Arc<Palace>,
    path: &Path,
    root: &Path,
    settings: &HookSettings,
    state: &HookState,
    home: &str,
) -> SweptTranscript {
    let mut swept = SweptTranscript {
        path: path.to_path_buf(),
        wing: None,
        new_turns: 0,
        drawers_filed: 0,
        problem: None,
    };
    let transcript = match TranscriptFile::check(
        &path.to_string_lossy(),
        &[root.to_path_buf()],
        settings.max_transcript_bytes,
    ) {
        Ok(t) => t,
        Err(refusal) => {
            swept.problem = Some(refusal.to_string());
            return swept;
        }
    };
    let wing = project_wing(
        transcript.working_folder().as_deref(),
        &transcript.path.to_string_lossy(),
        home,
    );
    swept.wing = Some(wing.clone());
    let deadline = Instant::now() + PER_TRANSCRIPT;
    match file_transcript(palace, &transcript, &wing, state, deadline, true).await {
        TranscriptFiling::Filed {
            wing,
            new_turns,
            drawers_filed,
            stopped_at_deadline,
        } => {
            // The wing the transcript was first filed into, when a hook filed it before.
            swept.wing = Some(wing);
            swept.new_turns = new_turns;
            swept.drawers_filed = drawers_filed;
            if stopped_at_deadline {
                swept.problem = Some("time limit reached; sweep again to file the rest".into());
            }
        }
        TranscriptFiling::Busy => {
            swept.problem = Some("another process was filing it".into());
        }
        TranscriptFiling::Failed { reason } => swept.problem = Some(reason),
    }
    swept
}

/// Every `*.jsonl` file under `dir`, sorted, symlinks (to files or folders) not followed.
fn transcripts_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file() && path.extension().is_some_and(|e| e == "jsonl") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}
