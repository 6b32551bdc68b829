//! The argument of every tool: field names as in MemPalace, JSON schemas from schemars.
//! Unknown argument names are refused (a misspelt filter must not silently widen a search).

use schemars::JsonSchema;
use serde::Deserialize;

/// No arguments.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// `mempalace_list_rooms`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListRoomsArgs {
    /// Only the rooms of this wing (all wings when omitted).
    #[serde(default)]
    pub wing: Option<String>,
}

fn default_search_limit() -> u32 {
    5
}

/// `mempalace_search`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to look for, in natural language.
    pub query: String,
    /// Most results to return (default 5, capped at 100).
    #[serde(default = "default_search_limit")]
    pub limit: u32,
    /// Only drawers in this wing.
    #[serde(default)]
    pub wing: Option<String>,
    /// Only drawers in this room.
    #[serde(default)]
    pub room: Option<String>,
    /// Only drawers from this source file (the full path, a hit's `source_path`).
    #[serde(default)]
    pub source_file: Option<String>,
    /// Only drawers filed at or after this ISO date or date-time.
    #[serde(default)]
    pub since: Option<String>,
    /// Only drawers filed before this ISO date or date-time.
    #[serde(default)]
    pub before: Option<String>,
    /// Drop hits whose cosine distance is above this (0 to 2; default: keep all).
    #[serde(default)]
    pub max_distance: Option<f64>,
    /// "hybrid" (default: meaning and words fused), "vector" (meaning only) or "lexical"
    /// (words only).
    #[serde(default)]
    pub mode: Option<String>,
}

fn default_threshold() -> f64 {
    0.9
}

/// `mempalace_check_duplicate`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckDuplicateArgs {
    /// The content to check.
    pub content: String,
    /// Similarity at or above which a drawer counts as a duplicate (default 0.9).
    #[serde(default = "default_threshold")]
    pub threshold: f64,
}

/// `mempalace_add_drawer`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddDrawerArgs {
    /// Wing to file under (a project, person or agent).
    pub wing: String,
    /// Room inside the wing (a topic).
    pub room: String,
    /// The verbatim content to remember.
    pub content: String,
    /// Where the content came from.
    #[serde(default)]
    pub source_file: Option<String>,
    /// Who files it: "mcp" (default) or "mine".
    #[serde(default)]
    pub added_by: Option<String>,
}

/// `mempalace_get_drawer` and `mempalace_delete_drawer`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DrawerIdArgs {
    /// The drawer's id (drawer_{wing}_{room}_{hash}).
    pub drawer_id: String,
}

fn default_list_limit() -> u32 {
    20
}

/// `mempalace_list_drawers`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDrawersArgs {
    /// Only drawers in this wing.
    #[serde(default)]
    pub wing: Option<String>,
    /// Only drawers in this room.
    #[serde(default)]
    pub room: Option<String>,
    /// Page size (default 20, capped at 1000).
    #[serde(default = "default_list_limit")]
    pub limit: u32,
    /// Drawers to skip.
    #[serde(default)]
    pub offset: u32,
}

/// `mempalace_kg_query`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KgQueryArgs {
    /// The entity's name (case-insensitive).
    pub entity: String,
    /// Only facts valid at this instant: YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ.
    #[serde(default)]
    pub as_of: Option<String>,
    /// "outgoing", "incoming" or "both" (default).
    #[serde(default)]
    pub direction: Option<String>,
}

fn default_confidence() -> f64 {
    1.0
}

/// `mempalace_kg_add`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KgAddArgs {
    /// The subject entity.
    pub subject: String,
    /// The relationship, e.g. "uses", "works_at".
    pub predicate: String,
    /// The object entity.
    pub object: String,
    /// When the fact became true: YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ.
    #[serde(default)]
    pub valid_from: Option<String>,
    /// When it stopped being true, same forms (omit for a current fact).
    #[serde(default)]
    pub valid_to: Option<String>,
    /// Confidence in [0, 1] (default 1.0).
    #[serde(default = "default_confidence")]
    pub confidence: f64,
    /// The drawer (or closet) id the fact was learnt from.
    #[serde(default)]
    pub source_closet: Option<String>,
    /// The source file the fact was extracted from.
    #[serde(default)]
    pub source_file: Option<String>,
    /// The drawer id the fact was extracted from (provenance).
    #[serde(default)]
    pub source_drawer_id: Option<String>,
}

/// `mempalace_kg_invalidate`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KgInvalidateArgs {
    /// The subject entity.
    pub subject: String,
    /// The relationship.
    pub predicate: String,
    /// The object entity.
    pub object: String,
    /// When the fact ended: YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ (default today).
    #[serde(default)]
    pub ended: Option<String>,
}

/// `mempalace_kg_supersede`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KgSupersedeArgs {
    /// The subject entity.
    pub subject: String,
    /// The single-valued relationship that changes.
    pub predicate: String,
    /// The value that stops being true.
    pub old_object: String,
    /// The value that becomes true.
    pub new_object: String,
    /// When the change happens, one instant for both facts: YYYY-MM-DD (its first second)
    /// or YYYY-MM-DDTHH:MM:SSZ (default now).
    #[serde(default)]
    pub at: Option<String>,
    /// Confidence of the new fact (default 1.0).
    #[serde(default = "default_confidence")]
    pub confidence: f64,
    /// The drawer id the change was learnt from.
    #[serde(default)]
    pub source_closet: Option<String>,
}

fn default_timeline_limit() -> u32 {
    100
}

/// `mempalace_kg_timeline`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KgTimelineArgs {
    /// One entity's timeline (all facts when omitted).
    #[serde(default)]
    pub entity: Option<String>,
    /// Most facts to return (default 100).
    #[serde(default = "default_timeline_limit")]
    pub limit: u32,
    /// Facts to skip.
    #[serde(default)]
    pub offset: u32,
}

/// `mempalace_diary_write`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiaryWriteArgs {
    /// The agent writing (its diary is `wing_<agent>/diary`).
    pub agent_name: String,
    /// The entry: what happened, what was learnt, what matters.
    pub entry: String,
    /// A topic for the entry (default "general").
    #[serde(default)]
    pub topic: Option<String>,
}

fn default_last_n() -> u32 {
    10
}

/// `mempalace_diary_read`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiaryReadArgs {
    /// The agent whose diary to read.
    pub agent_name: String,
    /// How many of the newest entries (default 10).
    #[serde(default = "default_last_n")]
    pub last_n: u32,
}
