//! The typed results of every `Palace` operation; each serialises to the JSON payload that
//! MemPalace's MCP tools return.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::drawer::{AddedBy, Drawer};
use crate::knowledge_graph::{EntityCandidate, Fact};

/// The hint shown when no palace exists.
pub const NO_PALACE_HINT: &str = "Run: mempalace init <dir> && mempalace mine <dir>";

/// `status` of an initialised palace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusReport {
    /// Number of drawers in the palace.
    pub total_drawers: u64,
    /// Drawers per wing.
    pub wings: BTreeMap<String, u64>,
    /// Drawers per room (summed over wings).
    pub rooms: BTreeMap<String, u64>,
    /// Where the palace lives.
    pub palace_path: String,
    /// The behaviour protocol ([`crate::PALACE_PROTOCOL`]).
    pub protocol: String,
    /// The AAAK dialect spec ([`crate::AAAK_SPEC`]).
    pub aaak_dialect: String,
}

/// The payload answered when no palace exists at the path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoPalaceReport {
    /// Always "No palace found".
    pub error: String,
    /// Where the palace was looked for.
    pub palace_path: String,
    /// How to create one.
    pub hint: String,
}

impl NoPalaceReport {
    /// The report for a palace path. A folder that holds a MemPalace 3.11 (ChromaDB) palace
    /// gets the hint to migrate it instead.
    pub fn new(palace_path: &std::path::Path) -> Self {
        let hint = if palace_path.join("chroma.sqlite3").is_file() {
            format!(
                "{} is a MemPalace 3.11 (Python, ChromaDB) palace. Run: mempalace --palace <new folder> migrate {}",
                palace_path.display(),
                palace_path.display()
            )
        } else {
            NO_PALACE_HINT.into()
        };
        NoPalaceReport {
            error: "No palace found".into(),
            palace_path: palace_path.display().to_string(),
            hint,
        }
    }
}

/// `status`: the report, or the no-palace payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Status {
    /// The palace exists.
    Ready(StatusReport),
    /// No palace at the path.
    NoPalace(NoPalaceReport),
}

/// The filters a search ran with.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchFilters {
    /// Wing filter, if any.
    pub wing: Option<String>,
    /// Room filter, if any.
    pub room: Option<String>,
    /// Source-file filter (full path), if any.
    #[serde(default)]
    pub source_file: Option<String>,
    /// Filed at or after, if set (canonical form).
    #[serde(default)]
    pub since: Option<String>,
    /// Filed before, if set (canonical form).
    #[serde(default)]
    pub before: Option<String>,
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    /// The drawer's id (for `get_drawer`, `delete_drawer`, a fact's `source_closet`).
    pub drawer_id: String,
    /// The drawer's verbatim text.
    pub text: String,
    /// Its wing.
    pub wing: String,
    /// Its room.
    pub room: String,
    /// The source file's name only (no folders).
    pub source_file: String,
    /// The source file's full stored path ("" when none).
    #[serde(default)]
    pub source_path: String,
    /// Position of the chunk in its file.
    #[serde(default)]
    pub chunk_index: u32,
    /// When the drawer was filed.
    #[serde(default)]
    pub filed_at: String,
    /// When its words were written, when known (a mined conversation's turns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authored_at: Option<String>,
    /// Its place in a mined conversation: which one, which turns, who spoke.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<crate::drawer::ConversationRef>,
    /// `round(max(0, 1 - cosine distance), 3)`.
    pub similarity: f64,
    /// Cosine distance to the query, `round(d, 4)`.
    #[serde(default)]
    pub distance: f64,
    /// BM25 of the drawer's text among the candidates, `round(b, 3)` (0 when no word matched).
    #[serde(default)]
    pub bm25_score: f64,
    /// The fused ranking score, `round(s, 4)` (hybrid); the similarity or BM25 otherwise.
    #[serde(default)]
    pub score: f64,
    /// Which channels found it: "vector", "lexical" or "vector+lexical", with "+closet" when
    /// its file's closet lifted it (its text is then the file's best passage).
    #[serde(default)]
    pub matched_via: String,
    /// The distance its file's closet took off for the candidate order (0 when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub closet_boost: f64,
    /// The start of the closet line that lifted it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closet_preview: Option<String>,
    /// Other drawers holding exactly the same text, folded into this hit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_in: Vec<String>,
}

/// Whether a score is zero (left out of the JSON).
fn is_zero(value: &f64) -> bool {
    *value == 0.0
}

/// `search` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResponse {
    /// The query text.
    pub query: String,
    /// The channels used: "hybrid", "vector" or "lexical".
    #[serde(default)]
    pub mode: String,
    /// The filters applied.
    pub filters: SearchFilters,
    /// Hits, most similar first.
    pub results: Vec<SearchHit>,
}

/// A drawer close to checked content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DuplicateMatch {
    /// The existing drawer's id.
    pub id: String,
    /// Its wing.
    pub wing: String,
    /// Its room.
    pub room: String,
    /// `round(1 - cosine distance, 3)`.
    pub similarity: f64,
    /// Its text, cut to 200 characters plus "..." when longer.
    pub content: String,
}

/// `check_duplicate` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DuplicateCheck {
    /// True when at least one match reaches the threshold.
    pub is_duplicate: bool,
    /// The matches at or above the threshold, most similar first.
    pub matches: Vec<DuplicateMatch>,
}

/// A drawer was filed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrawerAdded {
    /// Always true.
    pub success: bool,
    /// The new drawer's id (for content filed in chunks, the id of the whole).
    pub drawer_id: String,
    /// Its wing.
    pub wing: String,
    /// Its room.
    pub room: String,
    /// How many drawers hold the content: 1, or the number of chunks of long content.
    pub chunks: usize,
    /// The chunks' own ids, when the content was filed in chunks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunk_ids: Vec<String>,
}

/// A drawer was refused as a semantic duplicate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DuplicateRefused {
    /// Always false.
    pub success: bool,
    /// Always "duplicate".
    pub reason: String,
    /// The drawers it duplicates.
    pub matches: Vec<DuplicateMatch>,
}

/// `add_drawer` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AddDrawerOutcome {
    /// Filed.
    Added(DrawerAdded),
    /// Refused.
    Duplicate(DuplicateRefused),
}

impl AddDrawerOutcome {
    /// The new drawer's id, when one was filed.
    pub fn drawer_id(&self) -> Option<&str> {
        match self {
            AddDrawerOutcome::Added(a) => Some(&a.drawer_id),
            AddDrawerOutcome::Duplicate(_) => None,
        }
    }
}

/// One drawer in full (`get_drawer`): the seed's flat fields plus 3.11's nested `metadata`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrawerView {
    /// Its id.
    pub drawer_id: String,
    /// Its verbatim text.
    pub content: String,
    /// Its wing.
    pub wing: String,
    /// Its room.
    pub room: String,
    /// The source file as filed.
    pub source_file: String,
    /// Chunk position in the source.
    pub chunk_index: u32,
    /// Who filed it.
    pub added_by: AddedBy,
    /// When.
    pub filed_at: String,
    /// Every stored metadata field, as MemPalace 3.11 nests them.
    pub metadata: DrawerMetadataView,
    /// How many chunk drawers hold it (only for content filed in chunks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunks: Option<usize>,
    /// The ids of those chunk drawers, in order (only for content filed in chunks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunk_ids: Vec<String>,
}

/// A drawer's metadata as `get_drawer` nests it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrawerMetadataView {
    /// Its wing.
    pub wing: String,
    /// Its room.
    pub room: String,
    /// The source file as filed.
    pub source_file: String,
    /// Chunk position in the source.
    pub chunk_index: u32,
    /// Who filed it.
    pub added_by: AddedBy,
    /// When.
    pub filed_at: String,
}

impl From<Drawer> for DrawerView {
    fn from(d: Drawer) -> Self {
        let m = d.metadata;
        DrawerView {
            drawer_id: d.id,
            content: d.text,
            metadata: DrawerMetadataView {
                wing: m.wing.clone(),
                room: m.room.clone(),
                source_file: m.source_file.clone(),
                chunk_index: m.chunk_index,
                added_by: m.added_by,
                filed_at: m.filed_at.clone(),
            },
            wing: m.wing,
            room: m.room,
            source_file: m.source_file,
            chunk_index: m.chunk_index,
            added_by: m.added_by,
            filed_at: m.filed_at,
            chunks: None,
            chunk_ids: Vec::new(),
        }
    }
}

/// One drawer of a listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrawerSummary {
    /// Its id.
    pub drawer_id: String,
    /// Its wing.
    pub wing: String,
    /// Its room.
    pub room: String,
    /// The first 200 characters of its text ("..." appended when cut).
    pub content_preview: String,
    /// When it was filed.
    pub filed_at: String,
}

/// `list_drawers` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrawerListing {
    /// This page's drawers, in id order.
    pub drawers: Vec<DrawerSummary>,
    /// How many are on this page.
    pub count: usize,
    /// How many drawers match the filters, over all pages.
    pub total: u64,
    /// The page's offset.
    pub offset: usize,
    /// The page's limit.
    pub limit: usize,
}

/// `delete_drawer` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrawerDeleted {
    /// Always true.
    pub success: bool,
    /// The deleted drawer's id.
    pub drawer_id: String,
    /// Every stored row removed: the drawer itself, or all its chunk drawers.
    pub deleted_ids: Vec<String>,
    /// How many of those were chunk drawers (0 for a drawer filed whole).
    pub chunks_deleted: usize,
}

/// `list_wings` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WingList {
    /// Drawers per wing.
    pub wings: BTreeMap<String, u64>,
}

/// `list_rooms` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoomList {
    /// The wing listed, or "all".
    pub wing: String,
    /// Drawers per room.
    pub rooms: BTreeMap<String, u64>,
}

/// `taxonomy` result: wing → room → drawer count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Taxonomy {
    /// wing → room → count.
    pub taxonomy: BTreeMap<String, BTreeMap<String, u64>>,
}

/// What [`crate::Palace::import_drawers`] did with a batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportedBatch {
    /// Drawers filed now.
    pub imported: u64,
    /// Drawers whose id was already in the palace (left as they were).
    pub already_present: u64,
}

/// `kg_query` result, MemPalace 3.11's payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KgQueryResult {
    /// The entity the facts are about: the name asked for, or the one entity it resolved to.
    pub entity: String,
    /// The instant asked about, if any.
    pub as_of: Option<String>,
    /// Facts valid now (without `as_of`), or all of them (with it). As in MemPalace 3.11, a
    /// date-only `valid_to` ends at that day's last second (UTC): a fact invalidated today
    /// without an end date (`valid_to` = today) stays here, with `current: false` (which
    /// means only "has an end date"), until the day is over; from tomorrow it is historical.
    pub active_facts: Vec<Fact>,
    /// Facts that ended before now (only without `as_of`).
    pub historical_facts: Vec<Fact>,
    /// Facts that start after now (only without `as_of`).
    pub future_facts: Vec<Fact>,
    /// Every matching fact.
    pub facts: Vec<Fact>,
    /// Number of facts.
    pub count: usize,
    /// The name asked for, when the facts are about another entity it resolved to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_from: Option<String>,
    /// Entities the name may mean, when it matched no facts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidates: Option<Vec<EntityCandidate>>,
}

/// `kg_add` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KgAdded {
    /// Always true.
    pub success: bool,
    /// The triple's id.
    pub triple_id: String,
    /// "subject → predicate → object".
    pub fact: String,
}

/// `kg_invalidate` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KgInvalidated {
    /// True when a current fact was closed.
    pub success: bool,
    /// "subject → predicate → object".
    pub fact: String,
    /// The end date set.
    pub ended: String,
    /// How many facts were closed.
    pub closed: u64,
}

/// `kg_supersede` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KgSuperseded {
    /// Always true.
    pub success: bool,
    /// The new fact, "subject → predicate → new_object".
    pub fact: String,
    /// The fact it replaced, "subject → predicate → old_object".
    pub replaced: String,
    /// The new triple's id.
    pub triple_id: String,
    /// The old fact's new valid_to.
    pub ended: String,
    /// The new fact's valid_from.
    pub started: String,
}

/// `kg_timeline` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KgTimeline {
    /// The entity, or "all".
    pub entity: String,
    /// Facts in chronological order.
    pub timeline: Vec<Fact>,
    /// Number of facts on this page.
    pub count: usize,
    /// Number of facts in the whole timeline, over every page.
    pub total: u64,
    /// The page's offset.
    pub offset: usize,
    /// The page's limit.
    pub limit: usize,
}

/// `diary_write` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiaryWritten {
    /// Always true.
    pub success: bool,
    /// The diary drawer's id.
    pub entry_id: String,
    /// The agent.
    pub agent: String,
    /// The entry's topic.
    pub topic: String,
    /// When it was written.
    pub timestamp: String,
}

/// One diary entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiaryEntry {
    /// The day, YYYY-MM-DD.
    pub date: String,
    /// The full timestamp.
    pub timestamp: String,
    /// The topic.
    pub topic: String,
    /// The entry text.
    pub content: String,
}

/// `diary_read` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiaryRead {
    /// The agent.
    pub agent: String,
    /// Newest entries first.
    pub entries: Vec<DiaryEntry>,
    /// Entries the agent has in all.
    pub total: u64,
    /// Entries returned.
    pub showing: usize,
}

/// Cuts text to `max_chars` characters, appending "..." when it was longer.
pub fn preview(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

/// Serialises a path as text, bytes that are not UTF-8 shown as U+FFFD: serde's own `Path`
/// serialisation fails on them, which would lose a report after its work was done.
pub fn path_as_text<S: serde::Serializer>(
    path: &std::path::Path,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    serializer.serialize_str(&path.to_string_lossy())
}

/// [`path_as_text`] for an optional path (`null` when absent).
pub fn optional_path_as_text<S: serde::Serializer>(
    path: &Option<std::path::PathBuf>,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    match path {
        Some(p) => serializer.serialize_some(&p.to_string_lossy()),
        None => serializer.serialize_none(),
    }
}
