//! Drawers: search, file, read, change and remove verbatim memories.

use std::path::PathBuf;
use std::sync::Arc;

use mempalace_core::conversations::ExtractMode;
use mempalace_core::palace::{
    Checkpoint, CheckpointDiary, CheckpointItem, DrawerListRequest, DrawerUpdate, NewDrawer,
    SyncRequest,
};
use mempalace_core::{
    AddedBy, Cancellation, CandidateSource, Page, PalaceError, SearchMode, SearchRequest,
};
use mempalace_ingest::{IngestError, MineMode, MineOutcome, MineRequest, NoProgress, mine};
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::MemPalaceServer;
use crate::answer::{ToolAnswer, failure, read, write};
use crate::parameters::Parameters;

fn default_search_limit() -> u32 {
    5
}

/// `mempalace_search`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Short search query ONLY — keywords or a question. Max 250 chars.
    pub query: String,
    /// Max results (default 5, at most 100).
    #[serde(default = "default_search_limit")]
    pub limit: u32,
    /// Filter by wing (optional).
    #[serde(default)]
    pub wing: Option<String>,
    /// Filter by room (optional).
    #[serde(default)]
    pub room: Option<String>,
    /// Filter to one exact source_file (the full stored path: a result's `source_path`).
    #[serde(default)]
    pub source_file: Option<String>,
    /// Only drawers filed on/after this ISO date or datetime (inclusive).
    #[serde(default)]
    pub since: Option<String>,
    /// Only drawers filed strictly before this ISO date or datetime (exclusive).
    #[serde(default)]
    pub before: Option<String>,
    /// Max cosine distance (0 = identical, 2 = opposite); further results are dropped. 0 or omitted: keep all.
    #[serde(default)]
    pub max_distance: Option<f64>,
    /// "hybrid" (default: meaning and words fused), "vector" (meaning only) or "lexical" (words only).
    #[serde(default)]
    pub mode: Option<String>,
    /// Where hybrid search takes its candidates from: "union" (this server's default: the nearest drawers by meaning and the best by words) or "vector" (the nearest by meaning only, re-ranked by words, as MemPalace 3.11 does by default).
    #[serde(default)]
    pub candidate_strategy: Option<String>,
    /// Accepted for MemPalace 3.11 clients; results are the same either way.
    #[serde(default)]
    pub cli_compatible: Option<bool>,
    /// Media search (images, audio) is not offered here: true is refused.
    #[serde(default)]
    pub include_media: Option<bool>,
    /// "search" (default) or "code"; the MiniLM embedder has no task prompts, so both rank alike.
    #[serde(default)]
    pub query_task: Option<String>,
    /// Background context for the search (optional). Not used for ranking.
    #[serde(default)]
    pub context: Option<String>,
}

impl SearchArgs {
    fn request(self) -> Result<SearchRequest, PalaceError> {
        let candidates = self
            .candidate_strategy
            .as_deref()
            .map(str::parse::<CandidateSource>)
            .transpose()?;
        if let Some(t) = self.query_task.as_deref()
            && !matches!(t, "search" | "code")
        {
            return Err(PalaceError::invalid(
                "query_task",
                format!("{t:?} is not one of: search, code"),
            ));
        }
        if self.include_media == Some(true) {
            return Err(PalaceError::invalid(
                "include_media",
                "media search is not offered by this server",
            ));
        }
        Ok(SearchRequest {
            query: self.query,
            wing: self.wing,
            room: self.room,
            source_file: self.source_file.map(|s| s.trim().to_string()),
            since: self.since,
            before: self.before,
            max_distance: self.max_distance.filter(|d| *d != 0.0),
            limit: self.limit as usize,
            mode: self
                .mode
                .as_deref()
                .map_or(Ok(SearchMode::Hybrid), str::parse)?,
            candidates,
        })
    }
}

fn default_threshold() -> f64 {
    0.9
}

/// `mempalace_check_duplicate`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckDuplicateArgs {
    /// Content to check.
    pub content: String,
    /// Similarity threshold 0-1 (default 0.9).
    #[serde(default = "default_threshold")]
    pub threshold: f64,
}

/// `mempalace_add_drawer`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddDrawerArgs {
    /// Wing (project name).
    pub wing: String,
    /// Room (aspect: backend, decisions, meetings...).
    pub room: String,
    /// Verbatim content to store — exact words, never summarized.
    pub content: String,
    /// Where this came from (optional).
    #[serde(default)]
    pub source_file: Option<String>,
    /// Who is filing this (default: mcp).
    #[serde(default)]
    pub added_by: Option<String>,
}

/// `mempalace_get_drawer` and `mempalace_delete_drawer`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DrawerIdArgs {
    /// The drawer's id.
    pub drawer_id: String,
}

/// `mempalace_get_drawers` and `mempalace_delete_drawers`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DrawerIdsArgs {
    /// One or more drawer IDs (max 500).
    pub drawer_ids: Vec<String>,
}

fn default_list_limit() -> u32 {
    20
}

/// `mempalace_list_drawers`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDrawersArgs {
    /// Filter by wing (optional).
    #[serde(default)]
    pub wing: Option<String>,
    /// Filter by room (optional).
    #[serde(default)]
    pub room: Option<String>,
    /// Only drawers filed on or after this ISO date/time, inclusive (e.g. '2026-04-01').
    #[serde(default)]
    pub since: Option<String>,
    /// Only drawers filed before this ISO date/time, exclusive (e.g. '2026-05-01').
    #[serde(default)]
    pub before: Option<String>,
    /// Max results per page (default 20).
    #[serde(default = "default_list_limit")]
    pub limit: u32,
    /// Offset for pagination (default 0).
    #[serde(default)]
    pub offset: u32,
}

/// `mempalace_update_drawer`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateDrawerArgs {
    /// ID of the drawer to update.
    pub drawer_id: String,
    /// New content (optional — omit to keep existing).
    #[serde(default)]
    pub content: Option<String>,
    /// New wing (optional — omit to keep existing).
    #[serde(default)]
    pub wing: Option<String>,
    /// New room (optional — omit to keep existing).
    #[serde(default)]
    pub room: Option<String>,
}

fn yes() -> bool {
    true
}

/// `mempalace_delete_by_source`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteBySourceArgs {
    /// Exact source_file value to remove (e.g. the full path that was mined).
    pub source_file: String,
    /// Preview the match count without deleting (default true); false deletes.
    #[serde(default = "yes")]
    pub dry_run: bool,
}

/// `mempalace_sync`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyncArgs {
    /// Only drawers mined from files under this folder (optional).
    #[serde(default)]
    pub project_dir: Option<String>,
    /// Limit to one wing (optional).
    #[serde(default)]
    pub wing: Option<String>,
    /// Actually delete drawers; the default is a dry-run report.
    #[serde(default)]
    pub apply: bool,
}

/// One item of `mempalace_checkpoint`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckpointItemArgs {
    /// Wing (project name).
    pub wing: String,
    /// Room (short topic: decisions, backend...).
    pub room: String,
    /// Verbatim content to store.
    pub content: String,
}

/// The diary entry of `mempalace_checkpoint`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckpointDiaryArgs {
    /// Agent name (e.g. cursor-ide).
    pub agent_name: String,
    /// Diary entry in AAAK format.
    #[serde(default)]
    pub entry: Option<String>,
    /// Alias of `entry`.
    #[serde(default)]
    pub content: Option<String>,
    /// Topic tag (optional, default session-checkpoint).
    #[serde(default)]
    pub topic: Option<String>,
    /// Target wing (optional; default the agent's own diary wing).
    #[serde(default)]
    pub wing: Option<String>,
}

/// `mempalace_checkpoint`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckpointArgs {
    /// Verbatim items to file. Each is {wing, room, content} — content is the exact words, never summarized.
    pub items: Vec<CheckpointItemArgs>,
    /// Optional diary entry written after filing: {agent_name, entry, topic?, wing?}.
    #[serde(default)]
    pub diary: Option<CheckpointDiaryArgs>,
    /// Similarity threshold 0-1 for the per-item dedup check (default 0.9).
    #[serde(default = "default_threshold")]
    pub dedup_threshold: f64,
    /// Who is filing these drawers (accepted for MemPalace 3.11 clients; drawers record "mcp").
    #[serde(default)]
    pub added_by: Option<String>,
}

/// `mempalace_mine`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MineArgs {
    /// Directory to mine.
    pub source: String,
    /// "projects" (code/docs, default) or "convos" (chat transcripts, cut at whole turns); "extract" (office documents) is not offered.
    #[serde(default)]
    pub mode: Option<String>,
    /// Target wing (default: the folder's mempalace.yaml, else its name).
    #[serde(default)]
    pub wing: Option<String>,
    /// Who mines (accepted for MemPalace 3.11 clients; mined drawers record "mine").
    #[serde(default)]
    pub agent: Option<String>,
    /// Max files to process (0 = all; default 0).
    #[serde(default)]
    pub limit: u32,
    /// Report what would be mined without writing (default false).
    #[serde(default)]
    pub dry_run: bool,
    /// Convos extraction strategy: "exchange" (default); "general" is not offered yet.
    #[serde(default)]
    pub extract: Option<String>,
    /// Project-relative paths to mine even if ignored (not offered: must be empty).
    #[serde(default)]
    pub include_ignored: Vec<String>,
    /// Also mine Claude Code subagent transcripts (accepted; subagent folders are mined like any other).
    #[serde(default)]
    pub include_subagents: bool,
}

#[tool_router(router = drawer_tools, vis = "pub(crate)")]
impl MemPalaceServer {
    /// Search past-session memories by meaning and words. Returns matching drawers (drawer_id, verbatim text, wing, room, source, filed_at, distance, similarity). Not for the current conversation — if it happened in this session, answer from context instead.
    #[tool(name = "mempalace_search", annotations(read_only_hint = true))]
    async fn search(&self, Parameters(a): Parameters<SearchArgs>) -> ToolAnswer {
        match a.request() {
            Ok(request) => read(self.palace.search_with(&request).await),
            Err(e) => read::<()>(Err(e)),
        }
    }

    /// Check if content already exists in the palace before filing: drawers with similarity at or above the threshold.
    #[tool(name = "mempalace_check_duplicate", annotations(read_only_hint = true))]
    async fn check_duplicate(&self, Parameters(a): Parameters<CheckDuplicateArgs>) -> ToolAnswer {
        read(self.palace.check_duplicate(&a.content, a.threshold).await)
    }

    /// File verbatim content into the palace. Checks for duplicates first: refused (success false, reason duplicate) when a drawer with similarity ≥ 0.9 exists.
    #[tool(name = "mempalace_add_drawer")]
    async fn add_drawer(&self, Parameters(a): Parameters<AddDrawerArgs>) -> ToolAnswer {
        let mut d = NewDrawer::new(a.wing, a.room, a.content);
        d.source_file = a.source_file;
        d.added_by = a
            .added_by
            .as_deref()
            .map_or(AddedBy::Mcp, AddedBy::parse_lenient);
        write(self.palace.add_drawer(d).await)
    }

    /// Fetch a single drawer by ID — returns full content and metadata.
    #[tool(name = "mempalace_get_drawer", annotations(read_only_hint = true))]
    async fn get_drawer(&self, Parameters(a): Parameters<DrawerIdArgs>) -> ToolAnswer {
        read(self.palace.get_drawer(&a.drawer_id).await)
    }

    /// Fetch many drawers by ID in one call (1 to 500 IDs), each as mempalace_get_drawer returns it; an ID that does not resolve is an item with `error`, counted in `errors`, and the rest still return.
    #[tool(name = "mempalace_get_drawers", annotations(read_only_hint = true))]
    async fn get_drawers(&self, Parameters(a): Parameters<DrawerIdsArgs>) -> ToolAnswer {
        read(self.palace.get_drawers(&a.drawer_ids).await)
    }

    /// List drawers with pagination. Optional wing/room filter and since/before filter on filed_at (since inclusive, before exclusive). Returns IDs, wings, rooms, content previews, and the total matching count.
    #[tool(name = "mempalace_list_drawers", annotations(read_only_hint = true))]
    async fn list_drawers(&self, Parameters(a): Parameters<ListDrawersArgs>) -> ToolAnswer {
        read(
            self.palace
                .list_drawers_with(&DrawerListRequest {
                    wing: a.wing,
                    room: a.room,
                    since: a.since,
                    before: a.before,
                    page: Page {
                        offset: a.offset as usize,
                        limit: a.limit as usize,
                    },
                })
                .await,
        )
    }

    /// Update an existing drawer's content and/or metadata (wing, room); it keeps its ID. Returns an error if the drawer is not found.
    #[tool(name = "mempalace_update_drawer")]
    async fn update_drawer(&self, Parameters(a): Parameters<UpdateDrawerArgs>) -> ToolAnswer {
        let update = DrawerUpdate {
            content: a.content,
            wing: a.wing,
            room: a.room,
        };
        write(self.palace.update_drawer(&a.drawer_id, update).await)
    }

    /// Delete a drawer by ID (a drawer filed in chunks goes whole). Irreversible. Reports the stored rows it removed.
    #[tool(name = "mempalace_delete_drawer")]
    async fn delete_drawer(&self, Parameters(a): Parameters<DrawerIdArgs>) -> ToolAnswer {
        write(self.palace.delete_drawer(&a.drawer_id).await)
    }

    /// Delete many drawers by ID in one call (1 to 500 IDs), each as mempalace_delete_drawer does. Irreversible. A missing ID is an item with `error`, counted in `errors`; the rest are still deleted.
    #[tool(name = "mempalace_delete_drawers")]
    async fn delete_drawers(&self, Parameters(a): Parameters<DrawerIdsArgs>) -> ToolAnswer {
        write(self.palace.delete_drawers(&a.drawer_ids).await)
    }

    /// Bulk-delete every drawer filed from one source_file (exact match). Returns a dry-run match count and sample by default; pass dry_run=false to commit. Irreversible.
    #[tool(name = "mempalace_delete_by_source")]
    async fn delete_by_source(&self, Parameters(a): Parameters<DeleteBySourceArgs>) -> ToolAnswer {
        write(
            self.palace
                .delete_by_source(&a.source_file, a.dry_run)
                .await,
        )
    }

    /// Prune drawers mined from files that no longer exist (or, with project_dir, that its .gitignore now excludes). Returns a dry-run report by default; pass apply=true to delete.
    #[tool(name = "mempalace_sync")]
    async fn sync(&self, Parameters(a): Parameters<SyncArgs>) -> ToolAnswer {
        let request = SyncRequest {
            project_dir: a.project_dir.map(PathBuf::from),
            wing: a.wing,
            apply: a.apply,
        };
        write(mempalace_ingest::sync::sync(&self.palace, &request).await)
    }

    /// Save a whole session in one call: semantic-dedups each item, files non-duplicates as drawers, then writes one diary entry. Use this instead of many separate check_duplicate/add_drawer/diary_write calls.
    #[tool(name = "mempalace_checkpoint")]
    async fn checkpoint(&self, Parameters(a): Parameters<CheckpointArgs>) -> ToolAnswer {
        let diary = match a.diary {
            None => None,
            Some(d) => match d.entry.or(d.content) {
                Some(entry) => Some(CheckpointDiary {
                    agent_name: d.agent_name,
                    entry,
                    topic: d.topic,
                    wing: d.wing,
                }),
                None => return Ok(failure("diary entry must be a non-empty string")),
            },
        };
        let checkpoint = Checkpoint {
            items: a
                .items
                .into_iter()
                .map(|i| CheckpointItem {
                    wing: i.wing,
                    room: i.room,
                    content: i.content,
                })
                .collect(),
            diary,
            dedup_threshold: a.dedup_threshold,
        };
        write(self.palace.checkpoint(checkpoint).await)
    }

    /// Mine a directory into the palace — the MCP equivalent of `mempalace mine`. mode='projects' (default) ingests code/docs; mode='convos' ingests chat transcripts. Runs to the end and returns the miner's report.
    #[tool(name = "mempalace_mine")]
    async fn mine(&self, Parameters(a): Parameters<MineArgs>) -> ToolAnswer {
        match self.run_mine(a).await {
            Ok(v) => Ok(crate::answer::json_answer(&v)),
            Err(e) => Ok(failure(e.to_string())),
        }
    }
}

impl MemPalaceServer {
    /// `mempalace_mine`'s arguments as a request to [`mempalace_ingest::mine`], its outcome
    /// as 3.11's payload.
    async fn run_mine(&self, a: MineArgs) -> Result<serde_json::Value, IngestError> {
        let unsupported = |why: String| IngestError::Unsupported(why);
        let mode = match a.mode.as_deref().unwrap_or("projects") {
            "projects" => MineMode::Projects,
            "convos" => MineMode::Convos,
            "extract" => {
                return Err(unsupported(
                    "mode 'extract' (office documents) is not offered".into(),
                ));
            }
            other => {
                return Err(unsupported(format!(
                    "mode {other:?} is not one of: projects, convos, extract"
                )));
            }
        };
        let extract = match a.extract.as_deref().unwrap_or("exchange") {
            "exchange" => ExtractMode::Exchange,
            // `mine` refuses it for a project.
            "general" => ExtractMode::General,
            other => {
                return Err(unsupported(format!(
                    "extract {other:?} is not one of: exchange, general"
                )));
            }
        };
        if !a.include_ignored.is_empty() {
            return Err(unsupported(
                "include_ignored is not offered: ignored files are never mined".into(),
            ));
        }
        let source = PathBuf::from(a.source.trim());
        let mut request = MineRequest::project(&source);
        request.mode = mode;
        request.wing = a.wing;
        request.extract = extract;
        request.max_files = (a.limit > 0 && mode == MineMode::Projects).then_some(a.limit as usize);
        request.dry_run = a.dry_run;
        let outcome = mine(
            Arc::clone(&self.palace),
            &request,
            &NoProgress,
            &Cancellation::new(),
        )
        .await?;
        let success = match &outcome {
            MineOutcome::Conversations(report) => report.errors.is_empty(),
            _ => true,
        };
        let mut value = serde_json::to_value(&outcome)
            .map_err(|e| unsupported(format!("the report could not be written: {e}")))?;
        if let (Some(map), false) = (value.as_object_mut(), a.dry_run) {
            map.insert("success".into(), success.into());
            map.insert("source".into(), source.display().to_string().into());
        }
        Ok(value)
    }
}
