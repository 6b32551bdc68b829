//! # mempalace-import-chroma
//!
//! Reads a palace made by MemPalace 3.11 (Python, ChromaDB) straight from its
//! `chroma.sqlite3`, read-only, for `mempalace migrate`: the drawers of the
//! `mempalace_drawers` collection with their ids, documents and metadata, and the closets of
//! the `mempalace_closets` collection. Vectors are not
//! read (they live in ChromaDB's HNSW files); the importer re-embeds with the same MiniLM.
//!
//! ChromaDB keeps every record of a collection in the `embeddings` table of the collection's
//! METADATA segment, its document as the `chroma:document` metadata key and every other
//! metadata field as one `embedding_metadata` row (string, int, float or bool value).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mempalace_core::closets::Closet;
use mempalace_core::drawer::{AddedBy, Drawer, DrawerMetadata};
use mempalace_core::{PalaceError, Result};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use serde_json::Value;

/// ChromaDB's database file inside a 3.11 palace folder.
pub const CHROMA_FILE: &str = "chroma.sqlite3";
/// The collection holding 3.11's drawers.
pub const DRAWERS_COLLECTION: &str = "mempalace_drawers";
/// The collection holding 3.11's closets.
pub const CLOSETS_COLLECTION: &str = "mempalace_closets";
/// The metadata key holding a record's document.
const DOCUMENT_KEY: &str = "chroma:document";

/// Whether `dir` holds a MemPalace 3.11 (ChromaDB) palace.
pub fn is_chroma_palace(dir: &Path) -> bool {
    dir.join(CHROMA_FILE).is_file()
}

fn sql_err(operation: &'static str) -> impl Fn(rusqlite::Error) -> PalaceError {
    move |e| PalaceError::store("chroma", operation, e)
}

/// One record of a ChromaDB collection.
#[derive(Debug, Clone, PartialEq)]
pub struct ChromaRecord {
    /// Row number in the collection's segment (the paging key).
    pub seq: i64,
    /// The record's id (3.11's drawer id).
    pub id: String,
    /// The document text, if the record has one.
    pub document: Option<String>,
    /// Every other metadata field.
    pub metadata: BTreeMap<String, Value>,
}

/// Why a record does not become a drawer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The record's id.
    pub id: String,
    /// What is missing or wrong.
    pub reason: String,
}

/// A 3.11 palace opened read-only.
pub struct ChromaPalace {
    path: PathBuf,
    conn: Connection,
    segment: Option<String>,
    closets_segment: Option<String>,
}

impl ChromaPalace {
    /// Opens `dir/chroma.sqlite3` read-only and finds the drawers collection (a palace without
    /// it has no drawers). Errors when the file is missing or is not a ChromaDB database.
    pub fn open(dir: &Path) -> Result<Self> {
        let path = dir.join(CHROMA_FILE);
        if !path.is_file() {
            return Err(PalaceError::invalid(
                "from",
                format!(
                    "{} has no {CHROMA_FILE}: not a MemPalace 3.11 palace",
                    dir.display()
                ),
            ));
        }
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sql_err("open"))?;
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .map_err(sql_err("open"))?;
        let segment = metadata_segment(&conn, DRAWERS_COLLECTION).map_err(|e| {
            PalaceError::store(
                "chroma",
                "open",
                format!("{} is not a ChromaDB database: {e}", path.display()),
            )
        })?;
        let closets_segment =
            metadata_segment(&conn, CLOSETS_COLLECTION).map_err(sql_err("open"))?;
        Ok(ChromaPalace {
            path,
            conn,
            segment,
            closets_segment,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Number of drawer records.
    pub fn drawer_count(&self) -> Result<u64> {
        self.record_count(self.segment.as_deref())
    }

    /// Number of closet records.
    pub fn closet_count(&self) -> Result<u64> {
        self.record_count(self.closets_segment.as_deref())
    }

    fn record_count(&self, segment: Option<&str>) -> Result<u64> {
        let Some(segment) = segment else {
            return Ok(0);
        };
        self.conn
            .query_row(
                "SELECT COUNT(*) FROM embeddings WHERE segment_id = ?1",
                params![segment],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
            .map_err(sql_err("count"))
    }

    /// Up to `limit` drawer records after `after_seq` (0 for the first page), in order.
    pub fn drawers_after(&self, after_seq: i64, limit: usize) -> Result<Vec<ChromaRecord>> {
        self.records_after(self.segment.as_deref(), after_seq, limit)
    }

    /// Up to `limit` closet records after `after_seq` (0 for the first page), in filing order.
    pub fn closets_after(&self, after_seq: i64, limit: usize) -> Result<Vec<ChromaRecord>> {
        self.records_after(self.closets_segment.as_deref(), after_seq, limit)
    }

    fn records_after(
        &self,
        segment: Option<&str>,
        after_seq: i64,
        limit: usize,
    ) -> Result<Vec<ChromaRecord>> {
        let Some(segment) = segment else {
            return Ok(Vec::new());
        };
        let mut ids = self
            .conn
            .prepare_cached(
                "SELECT id, embedding_id FROM embeddings WHERE segment_id = ?1 AND id > ?2
                 ORDER BY id LIMIT ?3",
            )
            .map_err(sql_err("read"))?;
        let rows: Vec<(i64, String)> = ids
            .query_map(params![segment, after_seq, limit as i64], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .map_err(sql_err("read"))?
            .collect::<rusqlite::Result<_>>()
            .map_err(sql_err("read"))?;
        let mut meta = self
            .conn
            .prepare_cached(
                "SELECT key, string_value, int_value, float_value, bool_value
                 FROM embedding_metadata WHERE id = ?1",
            )
            .map_err(sql_err("read"))?;
        let mut out = Vec::with_capacity(rows.len());
        for (seq, id) in rows {
            let mut record = ChromaRecord {
                seq,
                id,
                document: None,
                metadata: BTreeMap::new(),
            };
            let fields = meta
                .query_map(params![seq], |r| {
                    let key: String = r.get(0)?;
                    let value = if let Some(s) = r.get::<_, Option<String>>(1)? {
                        Value::from(s)
                    } else if let Some(i) = r.get::<_, Option<i64>>(2)? {
                        Value::from(i)
                    } else if let Some(f) = r.get::<_, Option<f64>>(3)? {
                        Value::from(f)
                    } else if let Some(b) = r.get::<_, Option<bool>>(4)? {
                        Value::from(b)
                    } else {
                        Value::Null
                    };
                    Ok((key, value))
                })
                .map_err(sql_err("read"))?;
            for field in fields {
                let (key, value) = field.map_err(sql_err("read"))?;
                if key == DOCUMENT_KEY {
                    record.document = value.as_str().map(str::to_string);
                } else {
                    record.metadata.insert(key, value);
                }
            }
            out.push(record);
        }
        Ok(out)
    }
}

/// The METADATA segment of the collection called `name`, if the collection exists.
fn metadata_segment(conn: &Connection, name: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "SELECT s.id FROM segments s JOIN collections c ON s.collection = c.id
         WHERE c.name = ?1 AND s.scope = 'METADATA'",
        params![name],
        |r| r.get(0),
    )
    .optional()
}

/// A metadata field as text (strings as they are, numbers printed).
fn text_field(record: &ChromaRecord, key: &str) -> Option<String> {
    match record.metadata.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The drawer a 3.11 record becomes: the same id, text, wing, room, source file, chunk index,
/// filer and filing time. A record without a document, wing or room is skipped with the
/// reason. `now` stands in for a missing `filed_at`.
pub fn to_drawer(record: &ChromaRecord, now: &str) -> std::result::Result<Drawer, Skipped> {
    let skip = |reason: &str| Skipped {
        id: record.id.clone(),
        reason: reason.to_string(),
    };
    let text = record
        .document
        .clone()
        .filter(|d| !d.trim().is_empty())
        .ok_or_else(|| skip("no document text"))?;
    let wing = text_field(record, "wing")
        .filter(|w| !w.trim().is_empty())
        .ok_or_else(|| skip("no wing"))?;
    let room = text_field(record, "room")
        .filter(|r| !r.trim().is_empty())
        .ok_or_else(|| skip("no room"))?;
    let chunk_index = record
        .metadata
        .get("chunk_index")
        .and_then(Value::as_u64)
        .and_then(|i| u32::try_from(i).ok())
        .unwrap_or(0);
    // 3.11's miner files as "mempalace"; its MCP tools as "mcp" (or an agent's name).
    let added_by = match text_field(record, "added_by").as_deref() {
        Some("mine") | Some("mempalace") => AddedBy::Mine,
        _ => AddedBy::Mcp,
    };
    Ok(Drawer {
        id: record.id.clone(),
        text,
        metadata: DrawerMetadata {
            wing,
            room,
            source_file: text_field(record, "source_file").unwrap_or_default(),
            chunk_index,
            added_by,
            filed_at: text_field(record, "filed_at").unwrap_or_else(|| now.to_string()),
            // 3.11's conversation miner records when a transcript was written (its latest
            // turn); it falls back to the filing time, which is no authored date.
            authored_at: text_field(record, "authored_at")
                .filter(|a| Some(a) != text_field(record, "filed_at").as_ref())
                .filter(|_| text_field(record, "ingest_mode").as_deref() == Some("convos"))
                .and_then(|a| mempalace_core::conversations::timestamps::from_iso(&a)),
            conversation: None,
            // The names 3.11's miners found, which its hallways were built from.
            entities: text_field(record, "entities")
                .map(|e| mempalace_core::drawer::entities_from_field(&e))
                .unwrap_or_default(),
        },
    })
}

/// A `source_file` 3.11 stored with control characters in it (3.11 files any source path
/// verbatim; this palace refuses control characters, which would garble every listing),
/// with each of them replaced by U+FFFD; `None` when it has none.
pub fn repaired_source_file(source_file: &str) -> Option<String> {
    source_file.chars().any(char::is_control).then(|| {
        source_file
            .chars()
            .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
            .collect()
    })
}

/// The closet a 3.11 closet record becomes: the same id, line, wing, room and source file. A
/// record without a line, wing, room or source file is skipped with the reason.
pub fn to_closet(record: &ChromaRecord) -> std::result::Result<Closet, Skipped> {
    let skip = |reason: &str| Skipped {
        id: record.id.clone(),
        reason: reason.to_string(),
    };
    let field = |key: &str, missing: &str| {
        text_field(record, key)
            .filter(|v| !v.trim().is_empty())
            .ok_or_else(|| skip(missing))
    };
    Ok(Closet {
        id: record.id.clone(),
        text: record
            .document
            .clone()
            .filter(|d| !d.trim().is_empty())
            .ok_or_else(|| skip("no closet line"))?,
        wing: field("wing", "no wing")?,
        room: field("room", "no room")?,
        source_file: field("source_file", "no source file")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_in_a_source_file_are_replaced_and_others_left_alone() {
        assert_eq!(
            repaired_source_file("/notes/bell\u{7}.md\n").as_deref(),
            Some("/notes/bell\u{FFFD}.md\u{FFFD}")
        );
        assert_eq!(repaired_source_file("/notes/café.md"), None);
    }

    fn record(document: Option<&str>, fields: &[(&str, Value)]) -> ChromaRecord {
        ChromaRecord {
            seq: 1,
            id: "drawer_w_r_0011".into(),
            document: document.map(str::to_string),
            metadata: fields
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        }
    }

    #[test]
    fn closet_records_become_closets_or_are_skipped_with_the_reason() {
        let line = "auth notes 2|GPT-4;Alice|2026-12-04:L1-L7|→drawer_w_r_0011";
        let fields = [
            ("wing", Value::from("w")),
            ("room", Value::from("r")),
            ("source_file", Value::from("/p/auth.md")),
            ("drawer_count", Value::from(1)),
        ];
        let c = to_closet(&record(Some(line), &fields)).unwrap();
        assert_eq!(
            (c.text.as_str(), c.wing.as_str(), c.room.as_str()),
            (line, "w", "r")
        );
        assert_eq!(c.source_file, "/p/auth.md");
        assert_eq!(
            to_closet(&record(None, &fields)).unwrap_err().reason,
            "no closet line"
        );
        assert_eq!(
            to_closet(&record(Some(line), &fields[..2]))
                .unwrap_err()
                .reason,
            "no source file"
        );
    }

    #[test]
    fn records_become_drawers_with_their_metadata() {
        let r = record(
            Some("the text"),
            &[
                ("wing", "w".into()),
                ("room", "r".into()),
                ("source_file", "/p/a.md".into()),
                ("chunk_index", 3.into()),
                ("added_by", "mempalace".into()),
                ("filed_at", "2026-01-02T03:04:05.000006".into()),
            ],
        );
        let d = to_drawer(&r, "now").unwrap();
        assert_eq!(d.id, "drawer_w_r_0011");
        assert_eq!(d.text, "the text");
        assert_eq!(
            (d.metadata.wing.as_str(), d.metadata.room.as_str()),
            ("w", "r")
        );
        assert_eq!(d.metadata.source_file, "/p/a.md");
        assert_eq!(d.metadata.chunk_index, 3);
        assert_eq!(d.metadata.added_by, AddedBy::Mine);
        assert_eq!(d.metadata.filed_at, "2026-01-02T03:04:05.000006");
        let agent = record(
            Some("x"),
            &[
                ("wing", "w".into()),
                ("room", "r".into()),
                ("added_by", "mcp".into()),
            ],
        );
        let d = to_drawer(&agent, "now").unwrap();
        assert_eq!(d.metadata.added_by, AddedBy::Mcp);
        assert_eq!(d.metadata.filed_at, "now");
    }

    #[test]
    fn records_missing_what_a_drawer_needs_are_skipped_with_the_reason() {
        let room = ("room", Value::from("r"));
        let wing = ("wing", Value::from("w"));
        for (r, reason) in [
            (
                record(None, &[wing.clone(), room.clone()]),
                "no document text",
            ),
            (
                record(Some("  "), &[wing.clone(), room.clone()]),
                "no document text",
            ),
            (record(Some("t"), std::slice::from_ref(&room)), "no wing"),
            (record(Some("t"), std::slice::from_ref(&wing)), "no room"),
        ] {
            assert_eq!(to_drawer(&r, "now").unwrap_err().reason, reason);
        }
    }

    #[test]
    fn a_folder_without_chroma_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!is_chroma_palace(dir.path()));
        assert!(ChromaPalace::open(dir.path()).is_err());
        std::fs::write(dir.path().join(CHROMA_FILE), b"not a database").unwrap();
        assert!(ChromaPalace::open(dir.path()).is_err());
    }
}
