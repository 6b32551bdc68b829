//! Drawer <-> Qdrant payload mapping.

use std::collections::HashMap;

use mempalace_core::drawer::{entities_from_field, entities_to_field};
use mempalace_core::{AddedBy, Drawer, DrawerMetadata};
use qdrant_client::Payload;
use qdrant_client::qdrant::Value;

/// Payload field holding the drawer id.
pub const DRAWER_ID: &str = "drawer_id";
/// Payload field holding the verbatim text.
pub const TEXT: &str = "text";
/// Payload field holding the wing.
pub const WING: &str = "wing";
/// Payload field holding the room.
pub const ROOM: &str = "room";
/// Payload field holding the source file.
pub const SOURCE_FILE: &str = "source_file";
/// Payload field holding the chunk index.
pub const CHUNK_INDEX: &str = "chunk_index";
/// Payload field holding who filed the drawer ("mcp" or "mine").
pub const ADDED_BY: &str = "added_by";
/// Payload field holding the filing time.
pub const FILED_AT: &str = "filed_at";
/// Payload field holding when the drawer's words were written (absent when unknown).
pub const AUTHORED_AT: &str = "authored_at";
/// Payload field holding the drawer's place in a conversation, as JSON (absent when none).
pub const CONVERSATION: &str = "conversation";
/// Payload field holding the names the drawer mentions, `;`-separated as 3.11 stores them
/// (absent when none).
pub const ENTITIES: &str = "entities";

/// The payload fields that get a keyword index (filters, facets and id look-ups use them).
pub const INDEXED_FIELDS: [&str; 4] = [WING, ROOM, SOURCE_FILE, DRAWER_ID];

/// The payload stored with a drawer's point.
pub fn drawer_to_payload(drawer: &Drawer) -> Payload {
    let m = &drawer.metadata;
    let mut p = Payload::with_capacity(8);
    p.insert(DRAWER_ID, drawer.id.as_str());
    p.insert(TEXT, drawer.text.as_str());
    p.insert(WING, m.wing.as_str());
    p.insert(ROOM, m.room.as_str());
    p.insert(SOURCE_FILE, m.source_file.as_str());
    p.insert(CHUNK_INDEX, i64::from(m.chunk_index));
    p.insert(ADDED_BY, m.added_by.as_str());
    p.insert(FILED_AT, m.filed_at.as_str());
    if let Some(at) = &m.authored_at {
        p.insert(AUTHORED_AT, at.as_str());
    }
    if let Some(c) = m
        .conversation
        .as_ref()
        .and_then(|c| serde_json::to_string(c).ok())
    {
        p.insert(CONVERSATION, c);
    }
    if let Some(names) = entities_to_field(&m.entities) {
        p.insert(ENTITIES, names);
    }
    p
}

/// Why a point's payload is not a drawer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PayloadError(pub String);

impl std::fmt::Display for PayloadError {
    /// The reason, naming the field.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn string_field<'a>(payload: &'a HashMap<String, Value>, key: &str) -> Option<&'a str> {
    payload.get(key).and_then(Value::as_str).map(String::as_str)
}

fn required(payload: &HashMap<String, Value>, key: &str) -> Result<String, PayloadError> {
    string_field(payload, key)
        .map(str::to_string)
        .ok_or_else(|| {
            let id = string_field(payload, DRAWER_ID).unwrap_or("<no drawer_id>");
            PayloadError(format!("point {id:?} has no string payload field {key:?}"))
        })
}

/// Only the drawer id of a payload (for listings that fetch ids first).
pub fn drawer_id_of(payload: &HashMap<String, Value>) -> Result<String, PayloadError> {
    required(payload, DRAWER_ID)
}

/// The drawer a point's payload describes. Id, text, wing and room are required; the other
/// fields fall back to "" / 0 / "mcp" as MemPalace's own reader does.
pub fn drawer_from_payload(payload: &HashMap<String, Value>) -> Result<Drawer, PayloadError> {
    let chunk_index = match payload.get(CHUNK_INDEX) {
        None => 0,
        Some(v) => match (v.as_integer(), v.as_double()) {
            (Some(i), _) => u32::try_from(i)
                .map_err(|_| PayloadError(format!("chunk_index {i} out of range")))?,
            (None, Some(d)) if d >= 0.0 && d <= f64::from(u32::MAX) && d.fract() == 0.0 => d as u32,
            _ => {
                return Err(PayloadError(format!(
                    "chunk_index is not an integer: {v:?}"
                )));
            }
        },
    };
    Ok(Drawer {
        id: required(payload, DRAWER_ID)?,
        text: required(payload, TEXT)?,
        metadata: DrawerMetadata {
            wing: required(payload, WING)?,
            room: required(payload, ROOM)?,
            source_file: string_field(payload, SOURCE_FILE)
                .unwrap_or_default()
                .to_string(),
            chunk_index,
            added_by: AddedBy::parse_lenient(string_field(payload, ADDED_BY).unwrap_or("mcp")),
            filed_at: string_field(payload, FILED_AT)
                .unwrap_or_default()
                .to_string(),
            authored_at: string_field(payload, AUTHORED_AT).map(str::to_string),
            conversation: string_field(payload, CONVERSATION)
                .and_then(|c| serde_json::from_str(c).ok()),
            entities: string_field(payload, ENTITIES)
                .map(entities_from_field)
                .unwrap_or_default(),
        },
    })
}

/// The (wing, room) of a payload, for aggregating counts client-side.
pub fn wing_room_of(payload: &HashMap<String, Value>) -> Result<(String, String), PayloadError> {
    Ok((required(payload, WING)?, required(payload, ROOM)?))
}

/// The unnamed dense vector of a point as a query returned it, if it is there.
pub fn dense_vector(vectors: Option<&qdrant_client::qdrant::VectorsOutput>) -> Option<Vec<f32>> {
    match vectors?.get_vector_by_name("")? {
        qdrant_client::qdrant::vector_output::Vector::Dense(d) => Some(d.data),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Drawer {
        Drawer {
            id: "drawer_项目_🚀 launch_0123456789abcdef".into(),
            text: "line one\nline two\ttabbed \"quoted\" 'single' \\ back".into(),
            metadata: DrawerMetadata {
                wing: "项目".into(),
                room: "🚀 launch".into(),
                source_file: "/src/x y/notes.md".into(),
                chunk_index: u32::MAX,
                added_by: AddedBy::Mine,
                filed_at: "2026-01-02T03:04:05.000006".into(),
                authored_at: None,
                conversation: None,
                entities: Vec::new(),
            },
        }
    }

    #[test]
    fn round_trip_keeps_every_field() {
        for mut d in [
            sample(),
            {
                let mut d = sample();
                d.metadata.added_by = AddedBy::Mcp;
                d.metadata.source_file = String::new();
                d.metadata.chunk_index = 0;
                d
            },
            {
                let mut d = sample();
                d.metadata.entities = vec!["Aya".into(), "src/main.zig".into()];
                d
            },
        ] {
            let map: HashMap<String, Value> = drawer_to_payload(&d).into();
            assert_eq!(map.len(), 8 + usize::from(!d.metadata.entities.is_empty()));
            assert_eq!(drawer_from_payload(&map).unwrap(), d);
            assert_eq!(drawer_id_of(&map).unwrap(), d.id);
            assert_eq!(
                wing_room_of(&map).unwrap(),
                (d.metadata.wing.clone(), d.metadata.room.clone())
            );
            d.text.clear();
            let map: HashMap<String, Value> = drawer_to_payload(&d).into();
            assert_eq!(drawer_from_payload(&map).unwrap().text, "");
        }
    }

    #[test]
    fn payload_uses_the_documented_field_names_and_types() {
        let map: HashMap<String, Value> = drawer_to_payload(&sample()).into();
        assert_eq!(map[DRAWER_ID].as_str().unwrap(), &sample().id);
        assert_eq!(map[CHUNK_INDEX].as_integer(), Some(i64::from(u32::MAX)));
        assert_eq!(map[ADDED_BY].as_str().unwrap(), "mine");
        for f in [
            "drawer_id",
            "text",
            "wing",
            "room",
            "source_file",
            "chunk_index",
            "added_by",
            "filed_at",
        ] {
            assert!(map.contains_key(f), "{f}");
        }
    }

    #[test]
    fn optional_fields_default_and_required_fields_error() {
        let mut map: HashMap<String, Value> = drawer_to_payload(&sample()).into();
        for f in [SOURCE_FILE, CHUNK_INDEX, ADDED_BY, FILED_AT] {
            map.remove(f);
        }
        let d = drawer_from_payload(&map).unwrap();
        assert_eq!(d.metadata.source_file, "");
        assert_eq!(d.metadata.chunk_index, 0);
        assert_eq!(d.metadata.added_by, AddedBy::Mcp);
        assert_eq!(d.metadata.filed_at, "");
        for f in [DRAWER_ID, TEXT, WING, ROOM] {
            let mut m: HashMap<String, Value> = drawer_to_payload(&sample()).into();
            m.remove(f);
            let err = drawer_from_payload(&m).unwrap_err();
            assert!(err.0.contains(f), "{err}");
        }
        let mut m: HashMap<String, Value> = drawer_to_payload(&sample()).into();
        m.insert(CHUNK_INDEX.into(), Value::from(-1i64));
        assert!(drawer_from_payload(&m).is_err());
        m.insert(CHUNK_INDEX.into(), Value::from(7.0f64));
        assert_eq!(drawer_from_payload(&m).unwrap().metadata.chunk_index, 7);
        m.insert(CHUNK_INDEX.into(), Value::from("7"));
        assert!(drawer_from_payload(&m).is_err());
    }
}
