//! MemPalace's export format: a whole palace as JSON Lines, one record per line, that any
//! backend writes and any backend (and any later release) reads back.
//!
//! Every line is a JSON object whose `row` names its kind:
//!
//! | `row` | fields |
//! | --- | --- |
//! | `header` (first line) | `format` ("mempalace-export"), `version`, `exported_at`, `embedder_model`, `dimension`, `vectors` |
//! | `drawer` | a [`crate::Drawer`] as stored (`id`, `text`, `wing`, `room`, `source_file`, `chunk_index`, `added_by`, `filed_at`, optional `authored_at`, `conversation`, `entities`), and `vector` when the export carries vectors |
//! | `closet` | a [`crate::closets::Closet`] |
//! | `entity` | a [`crate::kg_rows::EntityRow`] (3.11's `entities` columns) |
//! | `triple` | a [`crate::kg_rows::TripleRow`] (3.11's `triples` columns, validity interval included); a fact naming an entity the graph lacks (a file written without foreign keys) is preceded by an `entity` line for it, type `unknown`, so the export imports |
//! | `tunnel`, `hallway` | `value`: the link record as 3.11's `tunnels.json` / `hallways.json` hold it |
//! | `artifact` | a coordination [`crate::coordination::Artifact`] |
//! | `event` | a coordination [`crate::coordination::Event`] (acks, tasks and waits are events) |
//! | `end` (last line) | `counts`: how many records of each kind came before |
//!
//! Sections come in that order, so a reader meets entities before the triples naming them
//! and artifacts before the events referencing them. A file without its `end` line was cut
//! short. Diary entries are drawers (wing `wing_<agent>`, room `diary`).
//!
//! Versions: 1 is this table. A reader refuses a newer version than it knows; fields added
//! within a version are optional and ignored by older readers.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::closets::Closet;
use crate::coordination::{Artifact, Event};
use crate::drawer::Drawer;
use crate::kg_rows::{EntityRow, TripleRow};

/// The `format` of every export's header.
pub const EXPORT_FORMAT: &str = "mempalace-export";

/// The export version this release writes, and the newest it reads.
pub const EXPORT_VERSION: u32 = 1;

/// Longest line an import reads, in bytes: room for the largest record any palace stores
/// (a coordination artifact of 4 MiB, whose JSON escaping can grow it up to six times; a
/// drawer's text with its vector is far smaller).
pub const MAX_EXPORT_LINE_BYTES: usize = 32 * 1024 * 1024;

/// The first line: what wrote the export and what it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportHeader {
    /// Always [`EXPORT_FORMAT`].
    pub format: String,
    /// The format version ([`EXPORT_VERSION`] when written by this release).
    pub version: u32,
    /// When the export was written (UTC, RFC 3339).
    pub exported_at: String,
    /// The embedder the vectors come from.
    pub embedder_model: String,
    /// The vectors' dimension.
    pub dimension: usize,
    /// Whether drawer lines carry their vectors.
    pub vectors: bool,
}

/// One drawer line: the drawer as stored, and its vector when the export carries them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedDrawer {
    /// The drawer.
    #[serde(flatten)]
    pub drawer: Drawer,
    /// Its embedding (exports written with vectors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector: Option<Vec<f32>>,
}

/// A link record (tunnel or hallway) as its file holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedLink {
    /// The record.
    pub value: Value,
}

/// How many records of each kind an export holds (the `end` line), or an import added.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExportCounts {
    /// Drawers (chunks as stored).
    pub drawers: u64,
    /// Closets.
    pub closets: u64,
    /// Graph entities.
    pub entities: u64,
    /// Graph triples (facts with their intervals).
    pub triples: u64,
    /// Tunnels.
    pub tunnels: u64,
    /// Hallways.
    pub hallways: u64,
    /// Coordination artifacts.
    pub artifacts: u64,
    /// Coordination events.
    pub events: u64,
}

/// The last line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportEnd {
    /// The records before it.
    pub counts: ExportCounts,
}

/// One line of an export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "row", rename_all = "snake_case")]
pub enum ExportRecord {
    /// The first line.
    Header(ExportHeader),
    /// A drawer.
    Drawer(ExportedDrawer),
    /// A closet.
    Closet(Closet),
    /// A graph entity.
    Entity(EntityRow),
    /// A graph triple.
    Triple(TripleRow),
    /// A tunnel record.
    Tunnel(ExportedLink),
    /// A hallway record.
    Hallway(ExportedLink),
    /// A coordination artifact.
    Artifact(Artifact),
    /// A coordination event.
    Event(Event),
    /// The last line.
    End(ExportEnd),
}

/// What an export should include.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportOptions {
    /// Write each drawer's vector (an import into a palace with the same embedder then
    /// re-embeds nothing); vectors are most of the file (a 384-dimension vector is about 4 KB
    /// of text), so without them it is several times smaller.
    pub vectors: bool,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions { vectors: true }
    }
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ImportReport {
    /// Records read, by kind.
    pub read: ExportCounts,
    /// Records added (the rest were stored already: an import run twice adds nothing).
    pub added: ExportCounts,
    /// Drawers embedded here (the export had no vectors, or vectors of another embedder).
    pub embedded: u64,
}

impl ExportCounts {
    /// Adds one record of `record`'s kind (header and end lines count nothing).
    pub fn count(&mut self, record: &ExportRecord) {
        match record {
            ExportRecord::Drawer(_) => self.drawers += 1,
            ExportRecord::Closet(_) => self.closets += 1,
            ExportRecord::Entity(_) => self.entities += 1,
            ExportRecord::Triple(_) => self.triples += 1,
            ExportRecord::Tunnel(_) => self.tunnels += 1,
            ExportRecord::Hallway(_) => self.hallways += 1,
            ExportRecord::Artifact(_) => self.artifacts += 1,
            ExportRecord::Event(_) => self.events += 1,
            ExportRecord::Header(_) | ExportRecord::End(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_names_its_kind_and_reads_back() {
        let header = ExportRecord::Header(ExportHeader {
            format: EXPORT_FORMAT.into(),
            version: EXPORT_VERSION,
            exported_at: "2026-12-07T00:00:00Z".into(),
            embedder_model: "m".into(),
            dimension: 3,
            vectors: true,
        });
        let text = serde_json::to_string(&header).unwrap();
        assert!(
            text.starts_with(r#"{"row":"header","format":"mempalace-export""#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<ExportRecord>(&text).unwrap(), header);
        let artifact = ExportRecord::Artifact(Artifact {
            id: "art_1".into(),
            kind: "patch".into(),
            sha256: "x".into(),
            size_bytes: 0,
            content: String::new(),
            created_by: "a".into(),
            created_at: "2026-12-07T00:00:00Z".into(),
            origin_replica: None,
            metadata: serde_json::json!({}),
        });
        let text = serde_json::to_string(&artifact).unwrap();
        assert!(text.contains(r#""kind":"patch""#), "{text}");
        assert_eq!(
            serde_json::from_str::<ExportRecord>(&text).unwrap(),
            artifact
        );
        let unknown = serde_json::from_str::<ExportRecord>(r#"{"row":"spaceship"}"#);
        assert!(unknown.is_err());
    }
}
