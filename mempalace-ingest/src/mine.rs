//! `mine`, one orchestration for every caller (the CLI, the MCP `mine` tool, an agent's own
//! code): a project folder's files, or a folder of chat exports and transcripts, into a
//! palace. The wing and rooms come from the project's `mempalace.yaml` when it has one, else
//! from what `init` would detect; mining never writes into the folder it reads (as 3.11).

use mempalace_core::entity_extraction::{EntityTagger, KNOWN_ENTITIES_FILE};
use std::path::PathBuf;
use std::sync::Arc;

use mempalace_core::conversations::ExtractMode;
use mempalace_core::{Cancellation, Palace};
use serde::Serialize;

use crate::conversation_mine::{
    ConversationMineOptions, ConversationMineReport, MAX_EXPORT_BYTES, conversation_files,
    mine_conversations,
};
use crate::error::{IngestError, Result};
use crate::progress::Progress;
use crate::project::{project_plan, slug, wing_for_folder};
use crate::project_mine::{Chunking, MineOptions, MineReport, mine_project};
use crate::walk::{DEFAULT_MAX_FILE_BYTES, project_files};

/// Files a dry run names.
const DRY_RUN_SAMPLE: usize = 20;

/// What a folder holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MineMode {
    /// A project's text files (the default).
    #[default]
    Projects,
    /// Chat exports and transcripts (Claude Code, Codex, Gemini CLI, ChatGPT, Claude.ai,
    /// Slack, plain text; any mix).
    Convos,
}

/// What to mine, and how.
#[derive(Debug, Clone)]
pub struct MineRequest {
    /// The folder (for conversations, also a single file).
    pub source: PathBuf,
    /// What it holds.
    pub mode: MineMode,
    /// The wing to file under; default: the project's `mempalace.yaml`, else the folder's
    /// name.
    pub wing: Option<String>,
    /// Conversations: whole exchanges, or 3.11's extracted memories.
    pub extract: ExtractMode,
    /// Projects: how files are cut into drawers.
    pub chunking: Chunking,
    /// Projects: chunks per embedding batch.
    pub batch_size: usize,
    /// Files larger than this are skipped; default: 1 MiB for projects, 500 MB for exports.
    pub max_file_bytes: Option<u64>,
    /// Projects: mine at most this many files (in walk order).
    pub max_files: Option<usize>,
    /// Only list what would be mined; file nothing.
    pub dry_run: bool,
    /// Projects: the known-entity registry whose names tag drawers wherever they appear;
    /// default: 3.11's `known_entities.json` in the user's configuration folder (none when
    /// it is missing).
    pub known_entities: Option<PathBuf>,
}

impl MineRequest {
    /// A project folder, with the defaults.
    pub fn project(source: impl Into<PathBuf>) -> Self {
        MineRequest {
            source: source.into(),
            mode: MineMode::Projects,
            wing: None,
            extract: ExtractMode::Exchange,
            chunking: Chunking::default(),
            batch_size: 64,
            max_file_bytes: None,
            max_files: None,
            dry_run: false,
            known_entities: None,
        }
    }

    /// A folder of chat exports and transcripts, with the defaults.
    pub fn conversations(source: impl Into<PathBuf>) -> Self {
        MineRequest {
            mode: MineMode::Convos,
            ..Self::project(source)
        }
    }

    /// Files under this wing.
    pub fn wing(mut self, wing: impl Into<String>) -> Self {
        self.wing = Some(wing.into());
        self
    }
}

/// What a dry run found.
#[derive(Debug, Clone, Serialize)]
pub struct DryRun {
    /// Always true (an answer, not a failure).
    pub success: bool,
    /// Always true.
    pub dry_run: bool,
    /// What the folder holds (named for conversations).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<MineMode>,
    /// The folder.
    pub source: String,
    /// The wing a project would file under (a conversation mine's wing is in its report).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wing: Option<String>,
    /// Files that would be mined.
    pub files: usize,
    /// Files passed over.
    pub files_skipped: usize,
    /// The first files that would be mined.
    pub sample: Vec<String>,
}

/// What `mine` did.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum MineOutcome {
    /// A project was mined.
    Project {
        /// The wing filed under.
        wing: String,
        /// The miner's report.
        #[serde(flatten)]
        report: MineReport,
    },
    /// Conversations were mined (their report names the wing).
    Conversations(ConversationMineReport),
    /// Nothing was filed: what would be.
    DryRun(DryRun),
}

impl MineOutcome {
    /// Whether the run was stopped by its cancellation before the end.
    pub fn interrupted(&self) -> bool {
        match self {
            MineOutcome::Project { report, .. } => report.interrupted,
            MineOutcome::Conversations(report) => report.interrupted,
            MineOutcome::DryRun(_) => false,
        }
    }
}

/// Mines `request.source` into `palace` (creating the palace if needed), reporting to
/// `progress`; raising `cancel` stops it with everything filed so far whole.
pub async fn mine(
    palace: Arc<Palace>,
    request: &MineRequest,
    progress: &dyn Progress,
    cancel: &Cancellation,
) -> Result<MineOutcome> {
    let source = request.source.clone();
    // Conversations may also come one file at a time (a session transcript).
    // (A link is not followed to a file, as the walk follows none.)
    let one_conversation_file = request.mode == MineMode::Convos
        && std::fs::symlink_metadata(&source).is_ok_and(|m| m.file_type().is_file());
    if !source.is_dir() && !one_conversation_file {
        return Err(IngestError::NotAFolder(source));
    }
    if request.mode == MineMode::Projects && request.extract == ExtractMode::General {
        return Err(IngestError::Unsupported(
            "extract 'general' applies to mode 'convos'".into(),
        ));
    }
    match request.mode {
        MineMode::Convos => {
            let wing = request
                .wing
                .as_deref()
                .map(slug)
                .unwrap_or_else(|| wing_for_folder(&source));
            let max = request.max_file_bytes.unwrap_or(MAX_EXPORT_BYTES);
            if request.dry_run {
                let root = source.clone();
                let (files, skipped, _) =
                    tokio::task::spawn_blocking(move || conversation_files(&root, max)).await?;
                return Ok(MineOutcome::DryRun(DryRun {
                    success: true,
                    dry_run: true,
                    mode: Some(MineMode::Convos),
                    source: source.display().to_string(),
                    wing: None,
                    files: files.len(),
                    files_skipped: skipped.len(),
                    sample: files
                        .iter()
                        .take(DRY_RUN_SAMPLE)
                        .map(|f| f.0.display().to_string())
                        .collect(),
                }));
            }
            let mut opts = ConversationMineOptions::new(wing);
            opts.extract = request.extract;
            opts.max_file_bytes = max;
            let report = mine_conversations(palace, &source, opts, progress, cancel).await?;
            Ok(MineOutcome::Conversations(report))
        }
        MineMode::Projects => {
            let plan = project_plan(&source, request.wing.as_deref())?;
            let mut opts = MineOptions::new(plan.wing.clone(), plan.rooms);
            opts.batch_size = request.batch_size.max(1);
            opts.max_file_bytes = request.max_file_bytes.unwrap_or(DEFAULT_MAX_FILE_BYTES);
            opts.chunking = request.chunking;
            opts.max_files = request.max_files;
            let registry = request.known_entities.clone().unwrap_or_else(|| {
                mempalace_core::locations::config_dir().join(KNOWN_ENTITIES_FILE)
            });
            opts.entity_tagger = std::sync::Arc::new(EntityTagger::from_registry(&registry));
            if request.dry_run {
                let (max, root) = (opts.max_file_bytes, source.clone());
                let (mut files, skipped) =
                    tokio::task::spawn_blocking(move || project_files(&root, max)).await?;
                if let Some(n) = opts.max_files {
                    files.truncate(n);
                }
                return Ok(MineOutcome::DryRun(DryRun {
                    success: true,
                    dry_run: true,
                    mode: None,
                    source: source.display().to_string(),
                    wing: Some(plan.wing),
                    files: files.len(),
                    files_skipped: skipped,
                    sample: files
                        .iter()
                        .take(DRY_RUN_SAMPLE)
                        .map(|f| f.path.display().to_string())
                        .collect(),
                }));
            }
            let wing = opts.wing.clone();
            let report = mine_project(palace, &source, opts, progress, cancel).await?;
            Ok(MineOutcome::Project { wing, report })
        }
    }
}
