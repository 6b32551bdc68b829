//! Building a wing's hallways from its drawers' `entities`, as MemPalace 3.11's
//! `compute_hallways_for_wing` does: two names mentioned together in at least `min_count`
//! drawers of a wing make a hallway, spellings of one file counted as one name (its canonical
//! spelling) and names that could be two files left out. A rebuilt hallway keeps the
//! strength, stability and traversal count of the one it replaces.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::entity_spelling::{canonical_spellings, entity_spelling_key};
use crate::palace_links::{hallway_id, initialize_dynamics, iso_timestamp};

/// Drawers a pair of names must share for a hallway when nothing else is configured.
pub const DEFAULT_HALLWAY_MIN_COUNT: u32 = 2;
/// The environment variable that sets the threshold (3.11's name).
pub const HALLWAY_MIN_COUNT_ENV: &str = "MEMPALACE_KG_HALLWAY_MIN_COUNT";
/// The dynamics a rebuilt hallway keeps from the one it replaces.
const KEPT_DYNAMICS: [&str; 4] = ["strength", "stability", "last_activated", "access_count"];

/// The threshold as 3.11 reads it: `MEMPALACE_KG_HALLWAY_MIN_COUNT` when it is a whole number
/// of at least 1, else `hallway_min_count` in the config folder's `config.json`, else
/// [`DEFAULT_HALLWAY_MIN_COUNT`]; never below 1.
pub fn configured_hallway_min_count() -> u32 {
    if let Some(n) = std::env::var(HALLWAY_MIN_COUNT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|n| *n >= 1)
    {
        return n;
    }
    let from_file =
        crate::locations::config_file_value(&crate::locations::config_dir(), "hallway_min_count");
    let n = match from_file {
        Some(Value::Number(n)) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Some(Value::String(s)) => s.trim().parse::<i64>().ok(),
        Some(Value::Bool(b)) => Some(i64::from(b)),
        _ => None,
    };
    n.map_or(DEFAULT_HALLWAY_MIN_COUNT, |n| {
        u32::try_from(n.max(1)).unwrap_or(u32::MAX)
    })
}

/// One drawer's part in its wing's hallways: its room and the names it mentions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrawerNames {
    /// The drawer's room.
    pub room: String,
    /// The names it mentions, as stored.
    pub entities: Vec<String>,
}

/// Each spelling seen in the wing mapped to its file's canonical spelling; spellings that
/// could be two files are left out.
fn canonical_names(drawers: &[DrawerNames]) -> HashMap<String, String> {
    let mut by_key: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for d in drawers {
        for e in &d.entities {
            by_key
                .entry(entity_spelling_key(e))
                .or_default()
                .insert(e.clone());
        }
    }
    canonical_spellings(&by_key)
}

/// Python's `str(v)` of a stored entity (`None` when missing).
fn stored_name(record: &Value, key: &str) -> String {
    match record.get(key) {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => "None".to_string(),
        Some(other) => other.to_string(),
    }
}

/// 3.11's hallway label: `A ↔ B (co-occur in N drawers across K rooms: r1, r2, r3, +1 more)`.
fn hallway_label(a: &str, b: &str, count: u64, rooms: &[String]) -> String {
    let mut summary = if rooms.is_empty() {
        "(no room tags)".to_string()
    } else {
        rooms.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
    };
    if rooms.len() > 3 {
        summary.push_str(&format!(", +{} more", rooms.len() - 3));
    }
    let room_count = if rooms.is_empty() {
        "no".to_string()
    } else {
        rooms.len().to_string()
    };
    let plural = if rooms.len() == 1 { "" } else { "s" };
    format!("{a} ↔ {b} (co-occur in {count} drawers across {room_count} room{plural}: {summary})")
}

/// Which pairs of names a wing's drawers mention together, in how many drawers and rooms:
/// the counting half of a rebuild, done before the hallway file is locked.
#[derive(Debug, Clone, Default)]
pub struct WingPairs {
    /// Each spelling seen mapped to its file's canonical spelling.
    canonical: HashMap<String, String>,
    /// The canonical names, by number.
    names: Vec<String>,
    /// The rooms, by number.
    rooms: Vec<String>,
    /// Per pair of name numbers (smaller first): drawers, and the rooms (numbers, sorted).
    pairs: HashMap<(u32, u32), (u64, Vec<u32>)>,
}

impl WingPairs {
    /// Counts the pairs of `drawers` (names are numbered, so a wing of many drawers and names
    /// costs little memory).
    pub fn count(drawers: &[DrawerNames]) -> Self {
        let canonical = canonical_names(drawers);
        let mut out = WingPairs {
            canonical,
            ..WingPairs::default()
        };
        let mut name_ids: HashMap<String, u32> = HashMap::new();
        let mut room_ids: HashMap<String, u32> = HashMap::new();
        let mut ids: Vec<u32> = Vec::new();
        for d in drawers {
            ids.clear();
            for e in &d.entities {
                let Some(name) = out.canonical.get(e) else {
                    continue;
                };
                let id = *name_ids.entry(name.clone()).or_insert_with(|| {
                    out.names.push(name.clone());
                    (out.names.len() - 1) as u32
                });
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            if ids.len() < 2 {
                continue;
            }
            let room = (!d.room.trim().is_empty()).then(|| {
                *room_ids.entry(d.room.clone()).or_insert_with(|| {
                    out.rooms.push(d.room.clone());
                    (out.rooms.len() - 1) as u32
                })
            });
            for (i, &a) in ids.iter().enumerate() {
                for &b in &ids[i + 1..] {
                    let key = (a.min(b), a.max(b));
                    let (count, rooms) = out.pairs.entry(key).or_default();
                    *count += 1;
                    if let Some(r) = room
                        && let Err(at) = rooms.binary_search(&r)
                    {
                        rooms.insert(at, r);
                    }
                }
            }
        }
        out
    }
}

/// The hallway records of `wing` from its counted pairs (at least `min_count` drawers),
/// sorted by their two names, each keeping the dynamics of the existing record of the same
/// pair in `existing`.
pub fn wing_hallways(
    wing: &str,
    pairs: &WingPairs,
    min_count: u32,
    existing: &[Value],
    now: DateTime<Utc>,
) -> Vec<Value> {
    let min_count = u64::from(min_count.max(1));
    let mut kept: HashMap<(String, String), Map<String, Value>> = HashMap::new();
    for record in existing {
        if record.get("wing").and_then(Value::as_str) != Some(wing) {
            continue;
        }
        let [a, b] = [
            stored_name(record, "entity_a"),
            stored_name(record, "entity_b"),
        ]
        .map(|n| pairs.canonical.get(&n).cloned().unwrap_or(n));
        let key = if a <= b { (a, b) } else { (b, a) };
        let dynamics: Map<String, Value> = KEPT_DYNAMICS
            .iter()
            .filter_map(|k| record.get(*k).map(|v| ((*k).to_string(), v.clone())))
            .collect();
        kept.insert(key, dynamics);
    }
    let mut strong: Vec<(&str, &str, u64, Vec<String>)> = pairs
        .pairs
        .iter()
        .filter(|(_, (count, _))| *count >= min_count)
        .map(|(&(x, y), (count, rooms))| {
            let (x, y) = (
                pairs.names[x as usize].as_str(),
                pairs.names[y as usize].as_str(),
            );
            let (a, b) = if x <= y { (x, y) } else { (y, x) };
            let mut rooms: Vec<String> = rooms
                .iter()
                .map(|r| pairs.rooms[*r as usize].clone())
                .collect();
            rooms.sort();
            (a, b, *count, rooms)
        })
        .collect();
    strong.sort_by(|p, q| (p.0, p.1).cmp(&(q.0, q.1)));
    let created_at = iso_timestamp(now);
    let mut created = Vec::with_capacity(strong.len());
    for (a, b, count, rooms) in strong {
        let mut record = Map::new();
        record.insert("id".into(), Value::String(hallway_id(wing, a, b)));
        record.insert("wing".into(), Value::String(wing.to_string()));
        record.insert("entity_a".into(), Value::String(a.to_string()));
        record.insert("entity_b".into(), Value::String(b.to_string()));
        record.insert("co_occurrence_count".into(), Value::from(count));
        record.insert(
            "rooms".into(),
            Value::Array(rooms.iter().cloned().map(Value::String).collect()),
        );
        record.insert(
            "label".into(),
            Value::String(hallway_label(a, b, count, &rooms)),
        );
        record.insert("created_at".into(), Value::String(created_at.clone()));
        record.insert("created_by".into(), Value::String("auto".into()));
        if let Some(dynamics) = kept.get(&(a.to_string(), b.to_string())) {
            record.extend(dynamics.clone());
        }
        initialize_dynamics(&mut record, now);
        created.push(Value::Object(record));
    }
    created
}

/// `records` with `wing`'s hallways replaced by `created` (other wings keep their order; the
/// wing's new records go last, as 3.11 saves them).
pub fn replace_wing_hallways(records: &mut Vec<Value>, wing: &str, created: Vec<Value>) {
    records.retain(|r| r.get("wing").and_then(Value::as_str) != Some(wing));
    records.extend(created);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drawer(room: &str, names: &[&str]) -> DrawerNames {
        DrawerNames {
            room: room.to_string(),
            entities: names.iter().map(|n| n.to_string()).collect(),
        }
    }

    fn labels(records: &[Value]) -> Vec<String> {
        records
            .iter()
            .map(|r| r["label"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn labels_and_spellings_are_3_11s() {
        // 3.11's own label vectors (captured with a fake collection).
        let drawers = vec![
            drawer("r1", &["A", "B"]),
            drawer("r2", &["A", "B"]),
            drawer("r3", &["A", "B"]),
            drawer("r4", &["A", "B", "C"]),
            drawer("  ", &["C", "D"]),
            drawer("", &["C", "D"]),
            drawer("r1", &["ChatStore.swift", "src/main.zig"]),
            drawer("r2", &["ChatStore", "main.zig"]),
            drawer(
                "r1",
                &["user.py", "src/models/user.py", "tests/models/user.py"],
            ),
        ];
        let now = Utc::now();
        assert_eq!(
            labels(&wing_hallways(
                "w",
                &WingPairs::count(&drawers),
                2,
                &[],
                now
            )),
            vec![
                "A ↔ B (co-occur in 4 drawers across 4 rooms: r1, r2, r3, +1 more)",
                "C ↔ D (co-occur in 2 drawers across no rooms: (no room tags))",
                "ChatStore ↔ src/main.zig (co-occur in 2 drawers across 2 rooms: r1, r2)",
            ]
        );
        let loose = labels(&wing_hallways(
            "w",
            &WingPairs::count(&drawers),
            1,
            &[],
            now,
        ));
        assert!(loose.contains(&"A ↔ C (co-occur in 1 drawers across 1 room: r4)".to_string()));
        assert!(
            loose
                .iter()
                .any(|l| l.starts_with("src/models/user.py ↔ tests/models/user.py")),
            "{loose:?}"
        );
        assert!(!loose.iter().any(|l| l.starts_with("user.py")));
    }

    #[test]
    fn a_rebuilt_hallway_keeps_its_dynamics_and_other_wings_stay() {
        let now = Utc::now();
        let drawers = vec![drawer("r", &["Aya", "Lumi"]), drawer("r", &["Lumi", "Aya"])];
        let pairs = WingPairs::count(&drawers);
        let first = wing_hallways("w", &pairs, 2, &[], now);
        assert_eq!(first[0]["id"], hallway_id("w", "Aya", "Lumi"));
        assert_eq!(first[0]["access_count"], 0);
        let mut old = first[0].clone();
        old["access_count"] = Value::from(7);
        old["strength"] = Value::from(2.5);
        let again = wing_hallways("w", &pairs, 2, std::slice::from_ref(&old), now);
        assert_eq!(again[0]["access_count"], 7);
        assert_eq!(again[0]["strength"], 2.5);
        let other = serde_json::json!({"wing": "x", "id": "keep"});
        let mut records = vec![old, other.clone()];
        replace_wing_hallways(&mut records, "w", again.clone());
        assert_eq!(records, vec![other, again[0].clone()]);
    }
}
