//! Room sets: a wing's closed set of rooms (`<palace>/rooms/<wing>.json`, the file MemPalace
//! 3.11's `rooms propose` writes and a user may edit), and how `rooms apply` picks a drawer's
//! room from it: the nearest room prototype by cosine (the mean of the room's exemplar drawers'
//! stored vectors, else the embedded description), moved only at or above a threshold.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::validation::validate_name;

/// Lowest cosine that moves a drawer (3.11's default).
pub const DEFAULT_THRESHOLD: f64 = 0.30;
/// Rooms `rooms apply` reclassifies by default: the miner's generic ones.
pub const GENERIC_ROOMS: [&str; 5] = crate::palace_audit::GENERIC_ROOMS;

/// One room of a set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetRoom {
    /// Its name (a valid room name).
    pub name: String,
    /// What belongs in it.
    pub description: String,
    /// Words that mark it.
    pub keywords: Vec<String>,
    /// Drawer ids that belong in it (their vectors make its prototype).
    pub exemplars: Vec<String>,
}

impl SetRoom {
    /// The text embedded when no exemplar is found: name (dashes as spaces), description,
    /// keywords, joined by ". " (3.11's `prototype_text`).
    pub fn prototype_text(&self) -> String {
        let keywords = self.keywords.join(", ");
        [
            self.name.replace('-', " "),
            self.description.clone(),
            keywords,
        ]
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(". ")
    }
}

/// Why a room set cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RoomSetError {
    /// There is no room set for the wing.
    #[error("No room set for {wing}. Run: mempalace rooms propose --wing {wing}")]
    Missing {
        /// The wing.
        wing: String,
    },
    /// The file is not a usable room set.
    #[error("Room set at {} is invalid: {reason}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// The room set file of `wing` in `palace_dir`.
pub fn room_set_path(palace_dir: &Path, wing: &str) -> PathBuf {
    palace_dir.join("rooms").join(format!("{wing}.json"))
}

/// Python's `str(v)` of a JSON scalar.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Reads `wing`'s room set: rooms in file order, names valid and distinct, entries that are
/// not objects skipped; a set with no rooms is invalid.
pub fn load_room_set(palace_dir: &Path, wing: &str) -> Result<Vec<SetRoom>, RoomSetError> {
    let path = room_set_path(palace_dir, wing);
    let invalid = |reason: String| RoomSetError::Invalid {
        path: path.clone(),
        reason,
    };
    if !crate::regular_file::anything_at(&path) {
        return Err(RoomSetError::Missing {
            wing: wing.to_string(),
        });
    }
    let bytes =
        crate::regular_file::read_regular(&path, 16 << 20).map_err(|e| invalid(e.to_string()))?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| invalid(e.to_string()))?;
    let Value::Object(set) = value else {
        return Err(invalid("room set is not an object".into()));
    };
    let mut rooms = Vec::new();
    let mut names = HashSet::new();
    for raw in set
        .get("rooms")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Value::Object(raw) = raw else {
            continue;
        };
        let name = raw
            .get("name")
            .map(text)
            .unwrap_or_default()
            .trim()
            .to_string();
        validate_name("room", &name).map_err(|e| invalid(e.to_string()))?;
        if !names.insert(name.clone()) {
            return Err(invalid(format!(
                "room set lists {} twice",
                crate::python_repr::python_repr(&name)
            )));
        }
        let list = |key: &str| -> Vec<String> {
            raw.get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(text)
                .filter(|s| !s.trim().is_empty())
                .collect()
        };
        rooms.push(SetRoom {
            name,
            description: raw
                .get("description")
                .map(text)
                .unwrap_or_default()
                .trim()
                .to_string(),
            keywords: list("keywords")
                .into_iter()
                .map(|k| k.trim().to_string())
                .collect(),
            exemplars: list("exemplars"),
        });
    }
    if rooms.is_empty() {
        return Err(invalid("room set has no rooms".into()));
    }
    Ok(rooms)
}

/// Which rooms `rooms apply` may move drawers out of: `all`, a comma list, or (none given)
/// the generic rooms.
pub fn from_rooms(arg: Option<&str>) -> Option<BTreeSet<String>> {
    match arg {
        Some("all") => None,
        Some(list) if !list.is_empty() => Some(
            list.split(',')
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .map(str::to_string)
                .collect(),
        ),
        _ => Some(GENERIC_ROOMS.iter().map(|r| r.to_string()).collect()),
    }
}

/// Cosine of a stored vector and a prototype, in double precision (0 when either is zero).
pub fn cosine(a: &[f32], b: &[f64]) -> f64 {
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), *y);
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// The nearest prototype to `vector` (the first wins a tie) and its cosine, clamped at 0.
pub fn nearest_room<'a>(vector: &[f32], prototypes: &'a [(String, Vec<f64>)]) -> (&'a str, f64) {
    let mut best = ("", -1.0f64);
    for (name, proto) in prototypes {
        let sim = cosine(vector, proto);
        if sim > best.1 {
            best = (name.as_str(), sim);
        }
    }
    (best.0, best.1.max(0.0))
}
