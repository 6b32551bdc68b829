//! The palace graph as MemPalace 3.11 has it: rooms that share a name across wings are passive
//! tunnels, explicit tunnels link two (wing, room) locations, and hallways link two entities
//! that co-occur inside one wing.
//!
//! Policy lives here once: the record operations ([`upsert_tunnel_record`],
//! [`delete_record`], [`record_tunnel_traversals`], the dynamics of [`initialize_dynamics`] and
//! [`potentiate`]) work on records as 3.11 stores them (JSON objects), and the read payloads
//! ([`traverse`], [`find_tunnels`], [`graph_stats`], [`filter_tunnels_by_wing`],
//! [`follow_tunnels`], [`hallway_page`]) are pure functions. A [`PalaceLinks`] store only keeps
//! the records; [`MemoryLinks`] is the in-process reference.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Mutex;

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, NaiveDateTime, SecondsFormat, Timelike, Utc};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::error::{PalaceError, Result};

/// Kind of a tunnel an agent or user creates between real rooms.
pub const EXPLICIT_KIND: &str = "explicit";
/// Initial strength of a connection (3.11 `DEFAULT_STRENGTH`).
pub const DEFAULT_STRENGTH: f64 = 1.0;
/// Initial stability of a connection (3.11 `DEFAULT_STABILITY`).
pub const DEFAULT_STABILITY: f64 = 1.0;
/// Upper bound on strength (3.11 `MAX_STRENGTH`).
pub const MAX_STRENGTH: f64 = 5.0;
/// Strength added per traversal (3.11 `POTENTIATION_INCREMENT`).
pub const POTENTIATION_INCREMENT: f64 = 0.05;
/// Stability added per spaced traversal (3.11 `STABILITY_INCREMENT`).
pub const STABILITY_INCREMENT: f64 = 0.1;
/// Minimum gap in hours for a traversal to count as spaced (3.11 `SPACED_INTERVAL_HOURS`).
pub const SPACED_INTERVAL_HOURS: f64 = 1.0;
/// Most rooms a traversal returns.
pub const TRAVERSE_RESULT_CAP: usize = 50;
/// Most passive tunnels `find_tunnels` returns.
pub const FIND_TUNNELS_CAP: usize = 50;
/// Default page size of [`hallway_page`].
pub const DEFAULT_HALLWAY_LIMIT: i64 = 100;
/// Largest page size of [`hallway_page`].
pub const MAX_HALLWAY_LIMIT: i64 = 500;

const DYNAMICS_FIELDS: [&str; 4] = ["strength", "stability", "last_activated", "access_count"];

// ---------------------------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------------------------

/// One end of a tunnel: `{wing, room, drawer_id?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TunnelEndpoint {
    /// The wing, verbatim as the creator passed it.
    pub wing: String,
    /// The room, verbatim.
    pub room: String,
    /// A specific drawer at this end, when one was named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drawer_id: Option<String>,
    /// Fields written by other MemPalace versions, kept as they are.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An explicit tunnel as 3.11 stores it in `tunnels.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tunnel {
    /// Symmetric id, see [`canonical_tunnel_id`].
    pub id: String,
    /// The first location, in the order the creator passed them.
    pub source: TunnelEndpoint,
    /// The second location.
    pub target: TunnelEndpoint,
    /// Description of the connection.
    #[serde(default)]
    pub label: String,
    /// `"explicit"`, `"topic"` or `"entity"`.
    #[serde(default = "explicit_kind")]
    pub kind: String,
    /// ISO-8601 creation time (kept across updates).
    #[serde(default)]
    pub created_at: String,
    /// ISO-8601 time of the last re-creation, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    /// Hebbian connection weight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strength: Option<f64>,
    /// Decay resistance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stability: Option<f64>,
    /// ISO-8601 time of the last traversal (creation time until then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_activated: Option<String>,
    /// How many times the tunnel was traversed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_count: Option<u64>,
    /// Fields written by other MemPalace versions, kept as they are.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn explicit_kind() -> String {
    EXPLICIT_KIND.to_string()
}

/// A tunnel to create (or re-create: same endpoints update the stored record).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewTunnel {
    /// Wing of the source.
    pub source_wing: String,
    /// Room in the source wing.
    pub source_room: String,
    /// Wing of the target.
    pub target_wing: String,
    /// Room in the target wing.
    pub target_room: String,
    /// Description of the connection.
    #[serde(default)]
    pub label: String,
    /// Optional specific drawer at the source.
    #[serde(default)]
    pub source_drawer_id: Option<String>,
    /// Optional specific drawer at the target.
    #[serde(default)]
    pub target_drawer_id: Option<String>,
    /// Tunnel category, `"explicit"` by default.
    #[serde(default = "explicit_kind")]
    pub kind: String,
}

impl NewTunnel {
    /// An explicit tunnel between two locations, without label or drawer ids.
    pub fn new(
        source_wing: impl Into<String>,
        source_room: impl Into<String>,
        target_wing: impl Into<String>,
        target_room: impl Into<String>,
    ) -> Self {
        NewTunnel {
            source_wing: source_wing.into(),
            source_room: source_room.into(),
            target_wing: target_wing.into(),
            target_room: target_room.into(),
            label: String::new(),
            source_drawer_id: None,
            target_drawer_id: None,
            kind: explicit_kind(),
        }
    }

    /// Sets the label.
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// Sets the kind (`"explicit"`, `"topic"`, `"entity"`).
    pub fn with_kind(mut self, kind: impl Into<String>) -> Self {
        self.kind = kind.into();
        self
    }

    /// Sets the drawer ids of the two ends.
    pub fn with_drawer_ids(mut self, source: Option<String>, target: Option<String>) -> Self {
        self.source_drawer_id = source;
        self.target_drawer_id = target;
        self
    }
}

/// A within-wing hallway between two co-occurring entities, as 3.11 stores it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hallway {
    /// `hallway_{wing}_{a}_{b}_{8 hex}`, see [`hallway_id`].
    pub id: String,
    /// The wing both entities occur in.
    pub wing: String,
    /// First entity (sorted order).
    pub entity_a: String,
    /// Second entity.
    pub entity_b: String,
    /// In how many drawers of the wing both occur.
    #[serde(default)]
    pub co_occurrence_count: u64,
    /// Rooms of those drawers, sorted.
    #[serde(default)]
    pub rooms: Vec<String>,
    /// Human-readable summary.
    #[serde(default)]
    pub label: String,
    /// ISO-8601 creation time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Who made it (`"auto"` for the miner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// Hebbian connection weight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strength: Option<f64>,
    /// Decay resistance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stability: Option<f64>,
    /// ISO-8601 time of the last activation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_activated: Option<String>,
    /// Cumulative co-access events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_count: Option<u64>,
    /// Fields written by other MemPalace versions, kept as they are.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One page of hallways, strongest first: `{hallways, total, count, offset, limit}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HallwayPage {
    /// The hallways of this page.
    pub hallways: Vec<Hallway>,
    /// How many hallways matched in all.
    pub total: usize,
    /// How many are on this page.
    pub count: usize,
    /// Offset of the page.
    pub offset: usize,
    /// Page size after clamping.
    pub limit: usize,
}

/// Where a followed tunnel leads from the asked-for room.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TunnelConnection {
    /// `"outgoing"` (the room is the tunnel's source) or `"incoming"`.
    pub direction: String,
    /// Wing at the other end.
    pub connected_wing: String,
    /// Room at the other end.
    pub connected_room: String,
    /// The tunnel's label.
    pub label: String,
    /// Drawer named at the other end (`null` when none).
    pub drawer_id: Option<String>,
    /// The tunnel followed.
    pub tunnel_id: String,
    /// First 300 characters of that drawer, filled in by the caller from the drawer store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drawer_preview: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// Ids and names
// ---------------------------------------------------------------------------------------------

/// 3.11's symmetric tunnel id: sha256 of the sorted `"wing/room"` endpoints joined by `"↔"`,
/// first 16 hex digits.
pub fn canonical_tunnel_id(
    source_wing: &str,
    source_room: &str,
    target_wing: &str,
    target_room: &str,
) -> String {
    let src = format!("{source_wing}/{source_room}");
    let tgt = format!("{target_wing}/{target_room}");
    let (a, b) = if src <= tgt { (src, tgt) } else { (tgt, src) };
    let digest = Sha256::digest(format!("{a}↔{b}").as_bytes());
    hex::encode(digest)[..16].to_string()
}

/// 3.11's hallway id: `hallway_{wing}_{a}_{b}_{8 hex of sha256("wing::a::b")}` with a, b sorted.
pub fn hallway_id(wing: &str, entity_a: &str, entity_b: &str) -> String {
    let (a, b) = if entity_a <= entity_b {
        (entity_a, entity_b)
    } else {
        (entity_b, entity_a)
    };
    let digest = Sha256::digest(format!("{wing}::{a}::{b}").as_bytes());
    format!("hallway_{wing}_{a}_{b}_{}", &hex::encode(digest)[..8])
}

/// 3.11's `_normalize_wing`: trimmed, lower case, spaces and hyphens to underscores, outer
/// underscores stripped; `None` for a missing or blank name.
pub fn normalize_wing(wing: Option<&str>) -> Option<String> {
    let wing = wing?.trim();
    if wing.is_empty() {
        return None;
    }
    Some(
        wing.to_lowercase()
            .replace([' ', '-'], "_")
            .trim_matches('_')
            .to_string(),
    )
}

/// A timestamp as Python's `datetime.isoformat()` writes an aware UTC time (microseconds,
/// left out when zero; `+00:00`).
pub fn iso_timestamp(now: DateTime<Utc>) -> String {
    let micros = now.timestamp_subsec_micros();
    let now = now.with_nanosecond(micros * 1000).unwrap_or(now);
    if micros == 0 {
        now.to_rfc3339_opts(SecondsFormat::Secs, false)
    } else {
        now.to_rfc3339_opts(SecondsFormat::Micros, false)
    }
}

/// Parses an ISO-8601 time as 3.11's `_parse_iso` does (naive times are UTC); `None` when
/// unreadable.
pub fn parse_iso(value: &str) -> Option<DateTime<Utc>> {
    let v = value.trim();
    if v.is_empty() {
        return None;
    }
    if let Ok(dt) = DateTime::parse_from_rfc3339(v) {
        return Some(dt.with_timezone(&Utc));
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f%:z", "%Y-%m-%d %H:%M:%S%.f%:z"] {
        if let Ok(dt) = DateTime::parse_from_str(v, format) {
            return Some(dt.with_timezone(&Utc));
        }
    }
    for format in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(dt) = NaiveDateTime::parse_from_str(v, format) {
            return Some(dt.and_utc());
        }
    }
    NaiveDate::parse_from_str(v, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|dt| dt.and_utc())
}

// ---------------------------------------------------------------------------------------------
// Dynamics (3.11 dynamics.py) on stored records
// ---------------------------------------------------------------------------------------------

fn as_f64(value: Option<&Value>, default: f64) -> f64 {
    match value {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(default),
        Some(Value::String(s)) => s.trim().parse().unwrap_or(default),
        _ => default,
    }
}

fn as_u64(value: Option<&Value>) -> u64 {
    match value {
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
            .unwrap_or(0),
        Some(Value::String(s)) => s.trim().parse().unwrap_or(0),
        _ => 0,
    }
}

fn float_value(f: f64) -> Value {
    serde_json::Number::from_f64(f)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

/// 3.11's `initialize_dynamics_fields`: fills strength, stability, last_activated (from
/// `created_at`) and access_count when missing; present fields are left alone.
pub fn initialize_dynamics(record: &mut Map<String, Value>, now: DateTime<Utc>) {
    let created_at = record
        .get("created_at")
        .cloned()
        .unwrap_or_else(|| Value::String(iso_timestamp(now)));
    record
        .entry("strength")
        .or_insert_with(|| float_value(DEFAULT_STRENGTH));
    record
        .entry("stability")
        .or_insert_with(|| float_value(DEFAULT_STABILITY));
    record.entry("last_activated").or_insert(created_at);
    record
        .entry("access_count")
        .or_insert_with(|| Value::from(0u64));
}

/// 3.11's `potentiate`: strength +0.05 (capped at 5), stability +0.1 when at least an hour passed
/// since the last activation, last_activated = now, access_count + 1.
pub fn potentiate(record: &mut Map<String, Value>, now: DateTime<Utc>) {
    initialize_dynamics(record, now);
    let last = [record.get("last_activated"), record.get("created_at")]
        .into_iter()
        .flatten()
        .find_map(|v| v.as_str().filter(|s| !s.is_empty()))
        .and_then(parse_iso);
    let hours_since = last
        .map(|last| (now - last).num_microseconds().unwrap_or(i64::MAX) as f64 / 3_600_000_000.0)
        .unwrap_or(0.0);
    let strength = as_f64(record.get("strength"), DEFAULT_STRENGTH);
    record.insert(
        "strength".into(),
        float_value(MAX_STRENGTH.min(strength + POTENTIATION_INCREMENT)),
    );
    if hours_since >= SPACED_INTERVAL_HOURS {
        let stability = as_f64(record.get("stability"), DEFAULT_STABILITY);
        record.insert(
            "stability".into(),
            float_value(stability + STABILITY_INCREMENT),
        );
    }
    record.insert("last_activated".into(), Value::String(iso_timestamp(now)));
    let count = as_u64(record.get("access_count"));
    record.insert("access_count".into(), Value::from(count.saturating_add(1)));
}

// ---------------------------------------------------------------------------------------------
// Record operations shared by every store
// ---------------------------------------------------------------------------------------------

fn record_id(record: &Value) -> Option<&str> {
    record.get("id").and_then(Value::as_str)
}

fn require_name(value: &str, field: &'static str) -> Result<String> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(PalaceError::invalid(
            field,
            format!("{field} must be a non-empty string"),
        ));
    }
    Ok(trimmed.to_string())
}

/// Rejects a blank id with 3.11's message (`"tunnel_id is required"`).
pub fn require_id(id: &str, field: &'static str) -> Result<()> {
    if id.is_empty() {
        return Err(PalaceError::invalid(field, format!("{field} is required")));
    }
    Ok(())
}

fn endpoint_value(wing: String, room: String, drawer_id: Option<&str>) -> Value {
    let mut map = Map::new();
    map.insert("wing".into(), Value::String(wing));
    map.insert("room".into(), Value::String(room));
    if let Some(drawer) = drawer_id.filter(|d| !d.is_empty()) {
        map.insert("drawer_id".into(), Value::String(drawer.to_string()));
    }
    Value::Object(map)
}

fn parse_tunnel(record: &Value) -> std::result::Result<Tunnel, serde_json::Error> {
    Tunnel::deserialize(record)
}

/// Creates or re-creates a tunnel in `records` as 3.11's `create_tunnel` does: the id is
/// symmetric; a record with that id is replaced by the new one (caller's endpoint order, label,
/// kind and drawer ids) keeping its `created_at` and dynamics, with `updated_at = now`; a new
/// record gets fresh dynamics. Bad input or an unusable result leaves `records` unchanged.
pub fn upsert_tunnel_record(
    records: &mut Vec<Value>,
    new: &NewTunnel,
    now: DateTime<Utc>,
) -> Result<Tunnel> {
    let source_wing = require_name(&new.source_wing, "source_wing")?;
    let source_room = require_name(&new.source_room, "source_room")?;
    let target_wing = require_name(&new.target_wing, "target_wing")?;
    let target_room = require_name(&new.target_room, "target_room")?;
    let id = canonical_tunnel_id(&source_wing, &source_room, &target_wing, &target_room);
    let now_iso = iso_timestamp(now);

    let mut record = Map::new();
    record.insert("id".into(), Value::String(id.clone()));
    record.insert(
        "source".into(),
        endpoint_value(source_wing, source_room, new.source_drawer_id.as_deref()),
    );
    record.insert(
        "target".into(),
        endpoint_value(target_wing, target_room, new.target_drawer_id.as_deref()),
    );
    record.insert("label".into(), Value::String(new.label.clone()));
    record.insert("kind".into(), Value::String(new.kind.clone()));
    record.insert("created_at".into(), Value::String(now_iso.clone()));

    let existing = records
        .iter()
        .position(|r| record_id(r) == Some(id.as_str()));
    if let Some(index) = existing {
        let old = records[index].as_object();
        if let Some(created) = old.and_then(|o| o.get("created_at")) {
            record.insert("created_at".into(), created.clone());
        }
        record.insert("updated_at".into(), Value::String(now_iso));
        for field in DYNAMICS_FIELDS {
            if let Some(value) = old.and_then(|o| o.get(field)) {
                record.insert(field.into(), value.clone());
            }
        }
    }
    initialize_dynamics(&mut record, now);
    let value = Value::Object(record);
    let tunnel =
        parse_tunnel(&value).map_err(|e| PalaceError::store("palace-links", "upsert_tunnel", e))?;
    match existing {
        Some(index) => records[index] = value,
        None => records.push(value),
    }
    Ok(tunnel)
}

/// Removes every record with this id (3.11's `delete_tunnel` / `delete_hallway`); whether one
/// existed. A blank id is rejected as `field`.
pub fn delete_record(records: &mut Vec<Value>, id: &str, field: &'static str) -> Result<bool> {
    require_id(id, field)?;
    let before = records.len();
    records.retain(|r| record_id(r) != Some(id));
    Ok(records.len() != before)
}

/// 3.11's `record_tunnel_traversal`: potentiates every record whose id is among `ids` (blank ids
/// ignored) and returns how many records were touched.
pub fn record_tunnel_traversals(
    records: &mut [Value],
    ids: &[String],
    now: DateTime<Utc>,
) -> usize {
    let wanted: HashSet<&str> = ids
        .iter()
        .map(String::as_str)
        .filter(|id| !id.is_empty())
        .collect();
    if wanted.is_empty() {
        return 0;
    }
    let mut touched = 0;
    for record in records.iter_mut() {
        let hit = record_id(record).is_some_and(|id| wanted.contains(id));
        if let (true, Some(map)) = (hit, record.as_object_mut()) {
            potentiate(map, now);
            touched += 1;
        }
    }
    touched
}

/// The readable tunnels among stored records, in file order; malformed records are skipped
/// (and logged), as 3.11's readers skip them.
pub fn tunnels_from_records(records: &[Value]) -> Vec<Tunnel> {
    records
        .iter()
        .filter_map(|r| match parse_tunnel(r) {
            Ok(t) => Some(t),
            Err(e) => {
                tracing::warn!(error = %e, "skipping a malformed tunnel record");
                None
            }
        })
        .collect()
}

/// The readable hallways among stored records, all or those of one wing (compared verbatim,
/// as 3.11's `list_hallways` does), in file order.
pub fn hallways_from_records(records: &[Value], wing: Option<&str>) -> Vec<Hallway> {
    records
        .iter()
        .filter(|r| wing.is_none_or(|w| r.get("wing").and_then(Value::as_str) == Some(w)))
        .filter_map(|r| match Hallway::deserialize(r) {
            Ok(h) => Some(h),
            Err(e) => {
                tracing::warn!(error = %e, "skipping a malformed hallway record");
                None
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The storage trait and its in-process reference
// ---------------------------------------------------------------------------------------------

/// Storage of explicit tunnels and hallways. Implementations keep the records and apply the
/// record operations of this module; reads of a palace without links return empty and create
/// nothing.
#[async_trait]
pub trait PalaceLinks: Send + Sync {
    /// Every tunnel record as stored, unparsed (what `audit` and `tunnels prune` judge, odd
    /// values and all). The default re-serialises [`PalaceLinks::list_tunnels`].
    async fn tunnel_records(&self) -> Result<Vec<Value>> {
        Ok(self
            .list_tunnels()
            .await?
            .into_iter()
            .filter_map(|t| serde_json::to_value(t).ok())
            .collect())
    }
    /// Every hallway record as stored, unparsed. The default re-serialises
    /// [`PalaceLinks::list_hallways`].
    async fn hallway_records(&self) -> Result<Vec<Value>> {
        Ok(self
            .list_hallways(None)
            .await?
            .into_iter()
            .filter_map(|h| serde_json::to_value(h).ok())
            .collect())
    }
    /// Edits the stored tunnel records in one locked load, edit, save (saved only when
    /// `edit` says it changed them). The default refuses.
    async fn edit_tunnel_records(&self, edit: RecordEdit) -> Result<()> {
        let _ = edit;
        Err(PalaceError::store(
            "links",
            "edit_tunnel_records",
            "this links store cannot edit its records in place",
        ))
    }
    /// Edits the stored hallway records as [`PalaceLinks::edit_tunnel_records`] does tunnels.
    async fn edit_hallway_records(&self, edit: RecordEdit) -> Result<()> {
        let _ = edit;
        Err(PalaceError::store(
            "links",
            "edit_hallway_records",
            "this links store cannot edit its records in place",
        ))
    }

    /// Writes a consistent copy of the tunnel and hallway files into the palace folder
    /// `palace_dir` (`backup`); `false` when neither exists. The default refuses
    /// ([`crate::PalaceError::no_snapshot`]).
    async fn snapshot_into(&self, palace_dir: &std::path::Path) -> Result<bool> {
        let _ = palace_dir;
        Err(crate::PalaceError::no_snapshot("tunnels and hallways"))
    }

    /// Creates a tunnel or re-creates the one with the same (symmetric) endpoints; the stored
    /// record.
    async fn upsert_tunnel(&self, tunnel: NewTunnel) -> Result<Tunnel>;
    /// Every readable tunnel, in stored order.
    async fn list_tunnels(&self) -> Result<Vec<Tunnel>>;
    /// Deletes a tunnel by id; whether it existed.
    async fn delete_tunnel(&self, tunnel_id: &str) -> Result<bool>;
    /// Potentiates the tunnels an agent just followed; how many were touched.
    async fn record_traversals(&self, tunnel_ids: &[String]) -> Result<usize>;
    /// Hallways of one wing (verbatim match) or of all wings, in stored order.
    async fn list_hallways(&self, wing: Option<&str>) -> Result<Vec<Hallway>>;
    /// Deletes a hallway by id; whether it existed.
    async fn delete_hallway(&self, hallway_id: &str) -> Result<bool>;
}

/// An edit of a links file's raw records, made in place; it answers whether it changed them.
pub type RecordEdit = Box<dyn FnOnce(&mut Vec<Value>) -> bool + Send>;

/// In-process reference [`PalaceLinks`]: the records live in memory.
#[derive(Debug, Default)]
pub struct MemoryLinks {
    tunnels: Mutex<Vec<Value>>,
    hallways: Mutex<Vec<Value>>,
}

fn poisoned(operation: &'static str) -> PalaceError {
    PalaceError::store("memory-links", operation, "lock poisoned")
}

impl MemoryLinks {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// A store holding these hallway records (as 3.11 writes them into `hallways.json`).
    pub fn with_hallway_records(records: Vec<Value>) -> Self {
        MemoryLinks {
            tunnels: Mutex::new(Vec::new()),
            hallways: Mutex::new(records),
        }
    }

    /// A store holding these tunnel records (as 3.11 writes them into `tunnels.json`).
    pub fn with_tunnel_records(self, records: Vec<Value>) -> Self {
        MemoryLinks {
            tunnels: Mutex::new(records),
            hallways: self.hallways,
        }
    }
}

#[async_trait]
impl PalaceLinks for MemoryLinks {
    async fn upsert_tunnel(&self, tunnel: NewTunnel) -> Result<Tunnel> {
        let mut records = self.tunnels.lock().map_err(|_| poisoned("upsert_tunnel"))?;
        upsert_tunnel_record(&mut records, &tunnel, Utc::now())
    }

    async fn list_tunnels(&self) -> Result<Vec<Tunnel>> {
        let records = self.tunnels.lock().map_err(|_| poisoned("list_tunnels"))?;
        Ok(tunnels_from_records(&records))
    }

    async fn delete_tunnel(&self, tunnel_id: &str) -> Result<bool> {
        let mut records = self.tunnels.lock().map_err(|_| poisoned("delete_tunnel"))?;
        delete_record(&mut records, tunnel_id, "tunnel_id")
    }

    async fn record_traversals(&self, tunnel_ids: &[String]) -> Result<usize> {
        let mut records = self
            .tunnels
            .lock()
            .map_err(|_| poisoned("record_traversals"))?;
        Ok(record_tunnel_traversals(
            &mut records,
            tunnel_ids,
            Utc::now(),
        ))
    }

    async fn list_hallways(&self, wing: Option<&str>) -> Result<Vec<Hallway>> {
        let records = self
            .hallways
            .lock()
            .map_err(|_| poisoned("list_hallways"))?;
        Ok(hallways_from_records(&records, wing))
    }

    async fn delete_hallway(&self, hallway_id: &str) -> Result<bool> {
        let mut records = self
            .hallways
            .lock()
            .map_err(|_| poisoned("delete_hallway"))?;
        delete_record(&mut records, hallway_id, "hallway_id")
    }

    async fn tunnel_records(&self) -> Result<Vec<Value>> {
        Ok(self
            .tunnels
            .lock()
            .map_err(|_| poisoned("tunnel_records"))?
            .clone())
    }

    async fn hallway_records(&self) -> Result<Vec<Value>> {
        Ok(self
            .hallways
            .lock()
            .map_err(|_| poisoned("hallway_records"))?
            .clone())
    }

    async fn edit_tunnel_records(&self, edit: RecordEdit) -> Result<()> {
        let mut records = self
            .tunnels
            .lock()
            .map_err(|_| poisoned("edit_tunnel_records"))?;
        edit(&mut records);
        Ok(())
    }

    async fn edit_hallway_records(&self, edit: RecordEdit) -> Result<()> {
        let mut records = self
            .hallways
            .lock()
            .map_err(|_| poisoned("edit_hallway_records"))?;
        edit(&mut records);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Read payloads over explicit tunnels and hallways
// ---------------------------------------------------------------------------------------------

/// 3.11's `list_tunnels(wing)`: tunnels with the wing at either end, wings normalised on both
/// sides ([`normalize_wing`]); all tunnels when `wing` is missing or blank.
pub fn filter_tunnels_by_wing(tunnels: Vec<Tunnel>, wing: Option<&str>) -> Vec<Tunnel> {
    let Some(wanted) = normalize_wing(wing) else {
        return tunnels;
    };
    tunnels
        .into_iter()
        .filter(|t| {
            normalize_wing(Some(&t.source.wing)).as_deref() == Some(wanted.as_str())
                || normalize_wing(Some(&t.target.wing)).as_deref() == Some(wanted.as_str())
        })
        .collect()
}

/// 3.11's `follow_tunnels` connections from (wing, room): wings normalised, rooms verbatim;
/// `drawer_preview` left for the caller to fill.
pub fn follow_tunnels(tunnels: &[Tunnel], wing: &str, room: &str) -> Vec<TunnelConnection> {
    let wanted = normalize_wing(Some(wing)).unwrap_or_else(|| wing.to_string());
    let matches =
        |end: &TunnelEndpoint| normalize_wing(Some(&end.wing)).as_deref() == Some(&*wanted);
    let connection = |direction: &str, other: &TunnelEndpoint, t: &Tunnel| TunnelConnection {
        direction: direction.to_string(),
        connected_wing: other.wing.clone(),
        connected_room: other.room.clone(),
        label: t.label.clone(),
        drawer_id: other.drawer_id.clone(),
        tunnel_id: t.id.clone(),
        drawer_preview: None,
    };
    tunnels
        .iter()
        .filter_map(|t| {
            if matches(&t.source) && t.source.room == room {
                Some(connection("outgoing", &t.target, t))
            } else if matches(&t.target) && t.target.room == room {
                Some(connection("incoming", &t.source, t))
            } else {
                None
            }
        })
        .collect()
}

/// 3.11's `tool_list_hallways` page: sorted by `co_occurrence_count` descending (ties keep stored
/// order), `limit` clamped to 1..=500 (default 100), `offset` at least 0.
pub fn hallway_page(
    mut hallways: Vec<Hallway>,
    limit: Option<i64>,
    offset: Option<i64>,
) -> HallwayPage {
    let limit = limit
        .unwrap_or(DEFAULT_HALLWAY_LIMIT)
        .clamp(1, MAX_HALLWAY_LIMIT) as usize;
    let offset = usize::try_from(offset.unwrap_or(0).max(0)).unwrap_or(usize::MAX);
    hallways.sort_by_key(|h| std::cmp::Reverse(h.co_occurrence_count));
    let total = hallways.len();
    let page: Vec<Hallway> = hallways.into_iter().skip(offset).take(limit).collect();
    HallwayPage {
        count: page.len(),
        hallways: page,
        total,
        offset,
        limit,
    }
}

// ---------------------------------------------------------------------------------------------
// Passive graph over room placements
// ---------------------------------------------------------------------------------------------

/// One (wing, room) of the palace with its drawer count; the input of the passive graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoomPlacement {
    /// The wing.
    pub wing: String,
    /// The room.
    pub room: String,
    /// Drawers filed in this wing and room.
    pub drawer_count: u64,
    /// The latest filing date of those drawers, if known.
    pub latest_filed_at: Option<String>,
}

impl RoomPlacement {
    /// A placement without a date.
    pub fn new(wing: impl Into<String>, room: impl Into<String>, drawer_count: u64) -> Self {
        RoomPlacement {
            wing: wing.into(),
            room: room.into(),
            drawer_count,
            latest_filed_at: None,
        }
    }

    /// Sets the latest filing date.
    pub fn filed_at(mut self, date: impl Into<String>) -> Self {
        self.latest_filed_at = Some(date.into());
        self
    }
}

/// A room node of 3.11's `build_graph`.
struct Node {
    room: String,
    wings: Vec<String>,
    halls: Vec<String>,
    count: u64,
    recent: String,
}

/// Room nodes in the order rooms first appear in `placements` (3.11's dict order).
fn build_nodes(placements: &[RoomPlacement]) -> Vec<Node> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut acc: Vec<(&str, BTreeSet<&str>, u64, String)> = Vec::new();
    for p in placements {
        if p.room.is_empty() || p.wing.is_empty() {
            continue;
        }
        let i = *index.entry(p.room.as_str()).or_insert_with(|| {
            acc.push((p.room.as_str(), BTreeSet::new(), 0, String::new()));
            acc.len() - 1
        });
        let node = &mut acc[i];
        node.1.insert(p.wing.as_str());
        node.2 = node.2.saturating_add(p.drawer_count);
        if let Some(date) = p.latest_filed_at.as_deref()
            && date > node.3.as_str()
        {
            node.3 = date.to_string();
        }
    }
    acc.into_iter()
        .map(|(room, wings, count, recent)| Node {
            room: room.to_string(),
            wings: wings.into_iter().map(str::to_string).collect(),
            halls: Vec::new(),
            count,
            recent,
        })
        .collect()
}

/// One room reached by [`traverse`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraversalRoom {
    /// The room.
    pub room: String,
    /// Wings it appears in, sorted.
    pub wings: Vec<String>,
    /// Halls it appears in (always empty in this port).
    pub halls: Vec<String>,
    /// Drawers in it over all wings.
    pub count: u64,
    /// Hops from the start room.
    pub hop: u32,
    /// Wings shared with the room it was reached from (absent on the start room).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connected_via: Option<Vec<String>>,
}

/// The payload of [`traverse`]: the rooms reached, or 3.11's error with suggestions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Traversal {
    /// The start room and the rooms reached, by hop then drawer count descending.
    Rooms(Vec<TraversalRoom>),
    /// The start room does not exist.
    UnknownRoom {
        /// `"Room '<start>' not found"`.
        error: String,
        /// Up to five rooms whose names resemble it.
        suggestions: Vec<String>,
    },
}

/// 3.11's `_fuzzy_match`: rooms containing the lower-cased query, then rooms containing one of
/// its `-`-separated words; five at most.
fn fuzzy_match(query: &str, nodes: &[Node]) -> Vec<String> {
    let query = query.to_lowercase();
    let words: Vec<&str> = query.split('-').collect();
    let mut scored: Vec<(&str, u8)> = Vec::new();
    for node in nodes {
        if node.room.contains(&query) {
            scored.push((&node.room, 2));
        } else if words.iter().any(|w| node.room.contains(w)) {
            scored.push((&node.room, 1));
        }
    }
    scored.sort_by_key(|s| std::cmp::Reverse(s.1));
    scored
        .into_iter()
        .take(5)
        .map(|(r, _)| r.to_string())
        .collect()
}

/// 3.11's `traverse`: breadth-first walk from `start_room` over rooms sharing a wing, `max_hops`
/// clamped to 1..=10, sorted by hop then drawer count descending (ties in first-appearance order
/// of `placements`), 50 rooms at most.
pub fn traverse(placements: &[RoomPlacement], start_room: &str, max_hops: i64) -> Traversal {
    let max_hops = max_hops.clamp(1, 10) as u32;
    let nodes = build_nodes(placements);
    let Some(start) = nodes.iter().position(|n| n.room == start_room) else {
        return Traversal::UnknownRoom {
            error: format!("Room '{start_room}' not found"),
            suggestions: fuzzy_match(start_room, &nodes),
        };
    };
    let mut visited = vec![false; nodes.len()];
    visited[start] = true;
    let first = &nodes[start];
    let mut results = vec![TraversalRoom {
        room: first.room.clone(),
        wings: first.wings.clone(),
        halls: first.halls.clone(),
        count: first.count,
        hop: 0,
        connected_via: None,
    }];
    let mut frontier = std::collections::VecDeque::from([(start, 0u32)]);
    while let Some((current, depth)) = frontier.pop_front() {
        if depth >= max_hops {
            continue;
        }
        let current_wings: BTreeSet<&str> =
            nodes[current].wings.iter().map(String::as_str).collect();
        for (i, node) in nodes.iter().enumerate() {
            if visited[i] {
                continue;
            }
            let shared: Vec<String> = node
                .wings
                .iter()
                .filter(|w| current_wings.contains(w.as_str()))
                .cloned()
                .collect();
            if shared.is_empty() {
                continue;
            }
            visited[i] = true;
            results.push(TraversalRoom {
                room: node.room.clone(),
                wings: node.wings.clone(),
                halls: node.halls.clone(),
                count: node.count,
                hop: depth + 1,
                connected_via: Some(shared),
            });
            if depth + 1 < max_hops {
                frontier.push_back((i, depth + 1));
            }
        }
    }
    results.sort_by(|a, b| a.hop.cmp(&b.hop).then(b.count.cmp(&a.count)));
    results.truncate(TRAVERSE_RESULT_CAP);
    Traversal::Rooms(results)
}

/// A room shared by two or more wings, as [`find_tunnels`] returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassiveTunnel {
    /// The room.
    pub room: String,
    /// Wings it appears in, sorted.
    pub wings: Vec<String>,
    /// Halls it appears in (always empty in this port).
    pub halls: Vec<String>,
    /// Drawers in it over all wings.
    pub count: u64,
    /// Latest filing date, `""` when unknown.
    pub recent: String,
}

/// 3.11's `find_tunnels`: rooms in two or more wings, containing `wing_a` and `wing_b` when given
/// (normalised as [`normalize_wing`]), by drawer count descending, 50 at most.
pub fn find_tunnels(
    placements: &[RoomPlacement],
    wing_a: Option<&str>,
    wing_b: Option<&str>,
) -> Vec<PassiveTunnel> {
    let norm_a = normalize_wing(wing_a).filter(|w| !w.is_empty());
    let norm_b = normalize_wing(wing_b).filter(|w| !w.is_empty());
    let mut tunnels: Vec<PassiveTunnel> = build_nodes(placements)
        .into_iter()
        .filter(|n| n.wings.len() >= 2)
        .filter(|n| {
            [&norm_a, &norm_b]
                .iter()
                .all(|w| w.as_ref().is_none_or(|w| n.wings.contains(w)))
        })
        .map(|n| PassiveTunnel {
            room: n.room,
            wings: n.wings,
            halls: n.halls,
            count: n.count,
            recent: n.recent,
        })
        .collect();
    if tunnels.is_empty() && (wing_a.is_some() || wing_b.is_some()) {
        tracing::debug!(?wing_a, ?wing_b, "no tunnels found for the wing filter");
    }
    tunnels.sort_by_key(|t| std::cmp::Reverse(t.count));
    tunnels.truncate(FIND_TUNNELS_CAP);
    tunnels
}

/// Rooms per wing, most first; serialised as a JSON object in that order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RoomsPerWing(pub Vec<(String, u64)>);

impl Serialize for RoomsPerWing {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (wing, count) in &self.0 {
            map.serialize_entry(wing, count)?;
        }
        map.end()
    }
}

/// One of the most connected rooms in [`GraphStats`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopTunnel {
    /// The room.
    pub room: String,
    /// Its wings, sorted.
    pub wings: Vec<String>,
    /// Drawers in it over all wings.
    pub count: u64,
}

/// 3.11's `graph_stats` payload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GraphStats {
    /// Distinct room names.
    pub total_rooms: usize,
    /// Distinct (wing, room) placements.
    pub total_room_instances: usize,
    /// Rooms in two or more wings (historical name).
    pub tunnel_rooms: usize,
    /// Rooms in two or more wings.
    pub passive_tunnel_rooms: usize,
    /// Explicit tunnel records.
    pub explicit_tunnels: usize,
    /// Per-hall wing crossings (0 here: halls are empty in this port).
    pub total_edges: usize,
    /// `total_edges + explicit_tunnels`.
    pub total_connections: usize,
    /// Rooms per wing, most first.
    pub rooms_per_wing: RoomsPerWing,
    /// Up to ten rooms with the most wings (ties by name), those in two or more wings.
    pub top_tunnels: Vec<TopTunnel>,
}

/// 3.11's `graph_stats` (the grouped-rows form the MCP tool serves) over `placements` and the
/// number of explicit tunnels. `rooms_per_wing` ties keep first-appearance order.
pub fn graph_stats(placements: &[RoomPlacement], explicit_tunnel_count: usize) -> GraphStats {
    let nodes = build_nodes(placements);
    let passive = nodes.iter().filter(|n| n.wings.len() >= 2).count();
    let instances = nodes.iter().map(|n| n.wings.len()).sum();
    let edges = nodes
        .iter()
        .filter(|n| n.wings.len() >= 2)
        .map(|n| n.wings.len() * (n.wings.len() - 1) / 2 * n.halls.len())
        .sum::<usize>();
    let mut wing_counts: Vec<(String, u64)> = Vec::new();
    for node in &nodes {
        for wing in &node.wings {
            match wing_counts.iter_mut().find(|(w, _)| w == wing) {
                Some((_, c)) => *c += 1,
                None => wing_counts.push((wing.clone(), 1)),
            }
        }
    }
    wing_counts.sort_by_key(|w| std::cmp::Reverse(w.1));
    let mut ranked: Vec<&Node> = nodes.iter().collect();
    ranked.sort_by(|a, b| b.wings.len().cmp(&a.wings.len()).then(a.room.cmp(&b.room)));
    let top_tunnels = ranked
        .into_iter()
        .take(10)
        .filter(|n| n.wings.len() >= 2)
        .map(|n| TopTunnel {
            room: n.room.clone(),
            wings: n.wings.clone(),
            count: n.count,
        })
        .collect();
    GraphStats {
        total_rooms: nodes.len(),
        total_room_instances: instances,
        tunnel_rooms: passive,
        passive_tunnel_rooms: passive,
        explicit_tunnels: explicit_tunnel_count,
        total_edges: edges,
        total_connections: edges + explicit_tunnel_count,
        rooms_per_wing: RoomsPerWing(wing_counts),
        top_tunnels,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The placements of the Python run that produced the pinned payloads below
    /// (`_nodes_edges_from_grouped_rows` / `_graph_stats_from_grouped_rows` of 3.11 over the same
    /// rows, in this order).
    fn placements() -> Vec<RoomPlacement> {
        vec![
            RoomPlacement::new("wing_code", "auth", 5).filed_at("2026-01-03"),
            RoomPlacement::new("wing_team", "auth", 2).filed_at("2026-01-05"),
            RoomPlacement::new("wing_code", "database", 7).filed_at("2026-01-01"),
            RoomPlacement::new("wing_team", "planning", 3),
            RoomPlacement::new("wing_myproject", "planning", 4).filed_at("2026-02-01"),
            RoomPlacement::new("wing_myproject", "auth", 1).filed_at("2026-01-04"),
            RoomPlacement::new("wing_user", "riley-school", 2).filed_at("2026-03-01"),
            RoomPlacement::new("wing_user", "diary", 6),
            RoomPlacement::new("wing_myproject", "ideas", 4),
        ]
    }

    fn to_json(value: impl Serialize) -> Value {
        serde_json::to_value(value).unwrap()
    }

    #[test]
    fn palace_links_canonical_ids_match_python() {
        // Computed with mempalace 3.11's `_canonical_tunnel_id`.
        assert_eq!(
            canonical_tunnel_id("wing_code", "auth", "wing_team", "auth"),
            "31639cdab7ed3839"
        );
        assert_eq!(
            canonical_tunnel_id("wing_team", "auth", "wing_code", "auth"),
            "31639cdab7ed3839"
        );
        assert_eq!(
            canonical_tunnel_id("wing_a", "r1", "wing_b", "r2"),
            "60db8072f18bad78"
        );
        assert_eq!(
            canonical_tunnel_id("wing-ü", "räum", "w", "x"),
            "769ee10fe84b895b"
        );
        assert_eq!(
            canonical_tunnel_id("project_api", "api-design", "project_database", "schema"),
            "0d8790be3647d6eb"
        );
        // `_hallway_id`.
        assert_eq!(
            hallway_id("wing_code", "RootView", "ChatStore"),
            "hallway_wing_code_ChatStore_RootView_86a48e3f"
        );
        assert_eq!(
            hallway_id("wing_code", "Parser.c", "lexer"),
            "hallway_wing_code_Parser.c_lexer_6887845f"
        );
    }

    #[test]
    fn palace_links_traverse_matches_python() {
        let p = placements();
        assert_eq!(
            to_json(traverse(&p, "auth", 2)),
            json!([
                {"room": "auth", "wings": ["wing_code", "wing_myproject", "wing_team"], "halls": [], "count": 8, "hop": 0},
                {"room": "database", "wings": ["wing_code"], "halls": [], "count": 7, "hop": 1, "connected_via": ["wing_code"]},
                {"room": "planning", "wings": ["wing_myproject", "wing_team"], "halls": [], "count": 7, "hop": 1, "connected_via": ["wing_myproject", "wing_team"]},
                {"room": "ideas", "wings": ["wing_myproject"], "halls": [], "count": 4, "hop": 1, "connected_via": ["wing_myproject"]}
            ])
        );
        let database_1 = json!([
            {"room": "database", "wings": ["wing_code"], "halls": [], "count": 7, "hop": 0},
            {"room": "auth", "wings": ["wing_code", "wing_myproject", "wing_team"], "halls": [], "count": 8, "hop": 1, "connected_via": ["wing_code"]}
        ]);
        assert_eq!(to_json(traverse(&p, "database", 1)), database_1);
        // Hops clamp to 1..=10, as the MCP tool does.
        assert_eq!(to_json(traverse(&p, "database", 0)), database_1);
        assert_eq!(to_json(traverse(&p, "database", -7)), database_1);
        assert_eq!(
            to_json(traverse(&p, "database", 3)),
            json!([
                {"room": "database", "wings": ["wing_code"], "halls": [], "count": 7, "hop": 0},
                {"room": "auth", "wings": ["wing_code", "wing_myproject", "wing_team"], "halls": [], "count": 8, "hop": 1, "connected_via": ["wing_code"]},
                {"room": "planning", "wings": ["wing_myproject", "wing_team"], "halls": [], "count": 7, "hop": 2, "connected_via": ["wing_myproject", "wing_team"]},
                {"room": "ideas", "wings": ["wing_myproject"], "halls": [], "count": 4, "hop": 2, "connected_via": ["wing_myproject"]}
            ])
        );
        assert_eq!(
            to_json(traverse(&p, "diary", 5)),
            json!([
                {"room": "diary", "wings": ["wing_user"], "halls": [], "count": 6, "hop": 0},
                {"room": "riley-school", "wings": ["wing_user"], "halls": [], "count": 2, "hop": 1, "connected_via": ["wing_user"]}
            ])
        );
        assert_eq!(
            to_json(traverse(&p, "school-plan", 2)),
            json!({"error": "Room 'school-plan' not found", "suggestions": ["planning", "riley-school"]})
        );
        assert_eq!(
            to_json(traverse(&p, "Auth", 2)),
            json!({"error": "Room 'Auth' not found", "suggestions": ["auth"]})
        );
        assert_eq!(
            to_json(traverse(&[], "auth", 2)),
            json!({"error": "Room 'auth' not found", "suggestions": []})
        );
    }

    #[test]
    fn palace_links_traverse_caps_results_at_fifty() {
        let p: Vec<RoomPlacement> = (0..80)
            .map(|i| RoomPlacement::new("wing", format!("room{i}"), i))
            .collect();
        let Traversal::Rooms(rooms) = traverse(&p, "room0", 2) else {
            panic!("room0 exists");
        };
        assert_eq!(rooms.len(), 50);
        assert_eq!(rooms[0].room, "room0");
        assert_eq!(rooms[1].room, "room79");
    }

    #[test]
    fn palace_links_find_tunnels_matches_python() {
        let p = placements();
        let auth = json!({"room": "auth", "wings": ["wing_code", "wing_myproject", "wing_team"], "halls": [], "count": 8, "recent": "2026-01-05"});
        let planning = json!({"room": "planning", "wings": ["wing_myproject", "wing_team"], "halls": [], "count": 7, "recent": "2026-02-01"});
        assert_eq!(
            to_json(find_tunnels(&p, None, None)),
            json!([auth.clone(), planning.clone()])
        );
        assert_eq!(
            to_json(find_tunnels(&p, Some("Wing-Code"), None)),
            json!([auth.clone()])
        );
        assert_eq!(
            to_json(find_tunnels(&p, Some("wing_team"), Some("wing myproject"))),
            json!([auth, planning])
        );
        assert_eq!(
            to_json(find_tunnels(&p, Some("wing_user"), None)),
            json!([])
        );
        // A blank filter is no filter.
        assert_eq!(find_tunnels(&p, Some("  "), None).len(), 2);
    }

    #[test]
    fn palace_links_graph_stats_matches_python() {
        let stats = graph_stats(&placements(), 3);
        assert_eq!(
            to_json(&stats),
            json!({"total_rooms": 6, "total_room_instances": 9, "tunnel_rooms": 2,
            "passive_tunnel_rooms": 2, "explicit_tunnels": 3, "total_edges": 0,
            "total_connections": 3,
            "rooms_per_wing": {"wing_myproject": 3, "wing_code": 2, "wing_team": 2, "wing_user": 2},
            "top_tunnels": [
                {"room": "auth", "wings": ["wing_code", "wing_myproject", "wing_team"], "count": 8},
                {"room": "planning", "wings": ["wing_myproject", "wing_team"], "count": 7}
            ]})
        );
        // Key order of rooms_per_wing is 3.11's most_common order.
        assert_eq!(
            serde_json::to_string(&stats.rooms_per_wing).unwrap(),
            r#"{"wing_myproject":3,"wing_code":2,"wing_team":2,"wing_user":2}"#
        );
        let empty = graph_stats(&[], 0);
        assert_eq!(empty.total_rooms, 0);
        assert!(empty.top_tunnels.is_empty());
    }

    fn at(s: &str) -> DateTime<Utc> {
        parse_iso(s).unwrap()
    }

    #[test]
    fn palace_links_potentiate_matches_python() {
        let mut r = json!({"id": "x", "created_at": "2026-01-01T00:00:00+00:00"});
        let map = r.as_object_mut().unwrap();
        initialize_dynamics(map, at("2026-01-01T00:10:00+00:00"));
        potentiate(map, at("2026-01-01T00:30:00+00:00"));
        assert_eq!(
            r,
            json!({"id": "x", "created_at": "2026-01-01T00:00:00+00:00", "strength": 1.05,
                "stability": 1.0, "last_activated": "2026-01-01T00:30:00+00:00", "access_count": 1})
        );
        potentiate(
            r.as_object_mut().unwrap(),
            at("2026-01-01T02:00:00.000005+00:00"),
        );
        assert_eq!(
            r,
            json!({"id": "x", "created_at": "2026-01-01T00:00:00+00:00", "strength": 1.1,
                "stability": 1.1, "last_activated": "2026-01-01T02:00:00.000005+00:00", "access_count": 2})
        );
        let mut r2 = json!({"id": "y", "created_at": "2026-01-01T00:00:00Z", "strength": 4.99});
        potentiate(r2.as_object_mut().unwrap(), at("2026-01-03T00:00:00+00:00"));
        assert_eq!(
            r2,
            json!({"id": "y", "created_at": "2026-01-01T00:00:00Z", "strength": 5.0,
                "stability": 1.1, "last_activated": "2026-01-03T00:00:00+00:00", "access_count": 1})
        );
    }

    #[test]
    fn palace_links_upsert_rejects_blank_endpoints_and_changes_nothing() {
        let mut records = vec![json!({"id": "keep"})];
        let err = upsert_tunnel_record(
            &mut records,
            &NewTunnel::new("w", " ", "v", "r"),
            Utc::now(),
        )
        .unwrap_err();
        assert!(matches!(
            err,
            PalaceError::InvalidInput {
                field: "source_room",
                ..
            }
        ));
        assert_eq!(records, vec![json!({"id": "keep"})]);
        assert!(delete_record(&mut records, "", "tunnel_id").is_err());
        assert_eq!(records.len(), 1);
    }

    #[test]
    fn palace_links_upsert_recreates_as_python() {
        let t0 = at("2026-01-01T00:00:00+00:00");
        let mut records = Vec::new();
        let first = upsert_tunnel_record(
            &mut records,
            &NewTunnel::new(" wing_code ", "auth", "wing_team", "auth")
                .with_label("a")
                .with_drawer_ids(Some("d1".into()), Some(String::new())),
            t0,
        )
        .unwrap();
        assert_eq!(first.source.wing, "wing_code");
        assert_eq!(first.source.drawer_id.as_deref(), Some("d1"));
        assert_eq!(first.target.drawer_id, None);
        assert_eq!(first.created_at, "2026-01-01T00:00:00+00:00");
        assert_eq!(
            first.last_activated.as_deref(),
            Some("2026-01-01T00:00:00+00:00")
        );
        assert_eq!(
            record_tunnel_traversals(&mut records, &[first.id.clone(), String::new()], t0),
            1
        );
        let second = upsert_tunnel_record(
            &mut records,
            &NewTunnel::new("wing_team", "auth", "wing_code", "auth").with_label("b"),
            at("2026-01-02T00:00:00+00:00"),
        )
        .unwrap();
        assert_eq!(records.len(), 1);
        assert_eq!(second.id, first.id);
        assert_eq!(second.source.wing, "wing_team");
        assert_eq!(second.label, "b");
        assert_eq!(second.source.drawer_id, None);
        assert_eq!(second.created_at, first.created_at);
        assert_eq!(
            second.updated_at.as_deref(),
            Some("2026-01-02T00:00:00+00:00")
        );
        assert_eq!(second.access_count, Some(1));
        assert_eq!(second.strength, Some(1.05));
    }

    #[test]
    fn palace_links_filters_and_follows_with_normalised_wings() {
        let mut records = Vec::new();
        let now = Utc::now();
        for new in [
            NewTunnel::new("Wing-Code", "auth", "wing_team", "auth")
                .with_drawer_ids(None, Some("dt".into())),
            NewTunnel::new("wing_team", "planning", "wing_code", "auth").with_label("plan"),
            NewTunnel::new("wing_x", "a", "wing_y", "b"),
        ] {
            upsert_tunnel_record(&mut records, &new, now).unwrap();
        }
        let tunnels = tunnels_from_records(&records);
        assert_eq!(
            filter_tunnels_by_wing(tunnels.clone(), Some("wing code")).len(),
            2
        );
        assert_eq!(filter_tunnels_by_wing(tunnels.clone(), Some(" ")).len(), 3);
        assert_eq!(
            filter_tunnels_by_wing(tunnels.clone(), Some("wing_y")).len(),
            1
        );
        let follow = follow_tunnels(&tunnels, "wing-code", "auth");
        assert_eq!(
            to_json(&follow),
            json!([
                {"direction": "outgoing", "connected_wing": "wing_team", "connected_room": "auth",
                 "label": "", "drawer_id": "dt", "tunnel_id": tunnels[0].id},
                {"direction": "incoming", "connected_wing": "wing_team", "connected_room": "planning",
                 "label": "plan", "drawer_id": null, "tunnel_id": tunnels[1].id}
            ])
        );
        assert!(follow_tunnels(&tunnels, "wing_code", "Auth").is_empty());
    }

    #[test]
    fn palace_links_hallway_page_sorts_and_clamps() {
        let records: Vec<Value> = (0..7u64)
            .map(|i| json!({"id": format!("h{i}"), "wing": "w", "entity_a": "a", "entity_b": format!("b{i}"), "co_occurrence_count": i % 4}))
            .collect();
        let all = hallways_from_records(&records, None);
        let page = hallway_page(all.clone(), Some(2), Some(1));
        let ids: Vec<&str> = page.hallways.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, ["h2", "h6"]);
        assert_eq!(
            (page.total, page.count, page.offset, page.limit),
            (7, 2, 1, 2)
        );
        let clamped = hallway_page(all.clone(), Some(0), Some(-5));
        assert_eq!((clamped.count, clamped.offset, clamped.limit), (1, 0, 1));
        assert_eq!(hallway_page(all.clone(), Some(10_000), None).limit, 500);
        assert_eq!(hallway_page(all.clone(), None, None).limit, 100);
        assert_eq!(hallway_page(all, None, Some(99)).count, 0);
    }
}
