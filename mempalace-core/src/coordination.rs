//! Agent coordination, as MemPalace 3.11's logstream (RFC 003): an append-only log of events
//! (ordered by the store's sequence number) and artifacts (exact UTF-8 text plus its SHA-256),
//! kept in `logstream.sqlite3` in the palace folder.
//!
//! [`Coordination`] holds every rule once: validation with 3.11's limits and messages, ids and
//! timestamps, the `event_list` ordering default and preview, the `event_wait` long-poll, acks,
//! `task_create` and `patch_submit`. A [`CoordinationLog`] only stores prepared rows and answers
//! validated queries; [`MemoryCoordinationLog`] is the in-process reference implementation.
//!
//! Rejections are [`PalaceError::InvalidInput`] whose `reason` is 3.11's message word for word
//! (see [`error_message`] and [`tool_error`] for the MCP answers).

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::error::{PalaceError, Result};
use crate::python_repr::python_repr;
use crate::temporal::canonical_date;

/// The log's file name inside a palace folder.
pub const COORDINATION_FILE_NAME: &str = crate::PalaceLayout::COORDINATION_LOG;
/// Largest event body, in UTF-8 bytes.
pub const MAX_BODY_BYTES: usize = 256 * 1024;
/// Largest artifact content, in UTF-8 bytes.
pub const MAX_ARTIFACT_BYTES: usize = 4 * 1024 * 1024;
/// Largest metadata object, in bytes of its canonical JSON text.
pub const MAX_METADATA_BYTES: usize = 64 * 1024;
/// Longest `event_wait`, in milliseconds.
pub const MAX_WAIT_TIMEOUT_MS: i64 = 300_000;
/// `event_wait`'s timeout when none is given, in milliseconds.
pub const DEFAULT_WAIT_TIMEOUT_MS: i64 = 60_000;
/// Most events one list returns.
pub const MAX_LIST_LIMIT: i64 = 500;
/// Events a list returns when no limit is given.
pub const DEFAULT_LIST_LIMIT: i64 = 50;
/// Allowed event statuses.
pub const EVENT_STATUSES: [&str; 7] = [
    "applied",
    "blocked",
    "claimed",
    "failed",
    "open",
    "ready",
    "superseded",
];
/// Allowed artifact kinds.
pub const ARTIFACT_KINDS: [&str; 5] = ["file", "json", "log", "note", "patch"];
/// The type of the events `event_ack` appends.
pub const ACK_EVENT_TYPE: &str = "event.ack";
/// Characters of body an `event_list` preview keeps.
pub const PREVIEW_BODY_CHARS: usize = 200;
/// The note `event_list` / `event_wait` add when `from_agent` is given without `writer`.
pub const FROM_AGENT_NOTE: &str = "from_agent is your identity and does not filter event_list/event_wait. Filter by who wrote an event with writer=<agent>; for your inbox use to_agent=<you>.";

const MAX_ROUTING_CHARS: usize = 256;
const POLL_BASE_S: f64 = 0.25;
const POLL_MAX_S: f64 = 1.0;

// ── Payload types ────────────────────────────────────────────────────────

/// One stored event, field for field as 3.11 returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// `evt_{YYYYmmddTHHMMSS}_{12 hex}`.
    pub id: String,
    /// The local append order (SQLite rowid): the cursor order.
    pub seq: i64,
    /// The replica that authored the event.
    pub origin_replica: Option<String>,
    /// The author's own sequence number (its rowid for local events).
    pub origin_seq: Option<i64>,
    /// Hybrid logical clock stamp `{ms:013}-{counter:06x}-{replica}`.
    pub hlc: Option<String>,
    /// Dotted lowercase event type, e.g. `task.request`.
    #[serde(rename = "type")]
    pub event_type: String,
    /// Logical stream, e.g. `project/mempalace`.
    pub stream: String,
    /// Sub-channel, e.g. `delegation`.
    pub room: String,
    /// Optional topic grouping related work.
    pub topic: Option<String>,
    /// The writer.
    pub from_agent: String,
    /// The addressee, or `*` for broadcast.
    pub to_agent: Option<String>,
    /// Ties requests and replies together.
    pub correlation_id: Option<String>,
    /// Git branch.
    pub branch: Option<String>,
    /// Git commit the work started from.
    pub base_commit: Option<String>,
    /// One of [`EVENT_STATUSES`].
    pub status: Option<String>,
    /// Referenced artifact ids.
    pub artifact_ids: Vec<String>,
    /// Verbatim body (possibly truncated in a preview).
    pub body: String,
    /// `YYYY-MM-DDTHH:MM:SSZ`, UTC.
    pub created_at: String,
    /// Extra structured fields (a JSON object).
    pub metadata: Value,
    /// Present (true) only when a preview shortened the body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_truncated: Option<bool>,
    /// Present only when a preview shortened the body: its full length in characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_length: Option<usize>,
}

/// The arguments of `event_append`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NewEvent {
    /// Event type (required).
    #[serde(rename = "type")]
    pub event_type: String,
    /// Stream (required).
    pub stream: String,
    /// Room (required).
    pub room: String,
    /// Writer identity (required).
    pub from_agent: String,
    /// Addressee or `*`.
    pub to_agent: Option<String>,
    /// Correlation id.
    pub correlation_id: Option<String>,
    /// Git branch.
    pub branch: Option<String>,
    /// Git base commit.
    pub base_commit: Option<String>,
    /// Status.
    pub status: Option<String>,
    /// Verbatim body (none = empty).
    pub body: Option<String>,
    /// Metadata; must be a JSON object.
    pub metadata: Option<Value>,
    /// Ids of stored artifacts to reference.
    pub artifact_ids: Option<Vec<String>>,
    /// Topic.
    pub topic: Option<String>,
}

impl NewEvent {
    /// An event with the four required fields.
    pub fn new(
        event_type: impl Into<String>,
        stream: impl Into<String>,
        room: impl Into<String>,
        from_agent: impl Into<String>,
    ) -> Self {
        NewEvent {
            event_type: event_type.into(),
            stream: stream.into(),
            room: room.into(),
            from_agent: from_agent.into(),
            ..Default::default()
        }
    }
}

/// The filters of `event_list` / `event_wait`, as the tools take them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EventQuery {
    /// Stream filter.
    pub stream: Option<String>,
    /// Room filter.
    pub room: Option<String>,
    /// Topic filter.
    pub topic: Option<String>,
    /// Event type filter.
    #[serde(rename = "type")]
    pub event_type: Option<String>,
    /// Addressee filter; also matches broadcasts (`*`).
    pub to_agent: Option<String>,
    /// The caller's identity: never filters (adds a note when `writer` is absent).
    pub from_agent: Option<String>,
    /// Filters by the event's writer (`from_agent` column).
    pub writer: Option<String>,
    /// Correlation id filter.
    pub correlation_id: Option<String>,
    /// Status filter.
    pub status: Option<String>,
    /// Only events strictly after this one in append order.
    pub since_event_id: Option<String>,
    /// Only events strictly before this one in append order.
    pub before_event_id: Option<String>,
    /// Only events created at or after this date / UTC time (inclusive).
    pub since_created_at: Option<String>,
    /// Most events returned (default 50, capped at 500).
    pub limit: Option<i64>,
    /// `asc` or `desc`; default `asc` with `since_event_id`, else `desc` (`event_list` only).
    pub order: Option<String>,
    /// Truncate bodies to 200 characters (`event_list` only).
    pub preview: bool,
}

/// Append order of a listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Oldest first.
    Asc,
    /// Newest first.
    Desc,
}

/// A validated query, what a [`CoordinationLog`] answers.
#[derive(Debug, Clone, PartialEq)]
pub struct EventFilter {
    /// Exact stream.
    pub stream: Option<String>,
    /// Exact room.
    pub room: Option<String>,
    /// Exact topic.
    pub topic: Option<String>,
    /// Exact type.
    pub event_type: Option<String>,
    /// Addressee: matches `to_agent = value OR to_agent = '*'`.
    pub to_agent: Option<String>,
    /// Exact writer (`from_agent` column).
    pub from_agent: Option<String>,
    /// Exact correlation id.
    pub correlation_id: Option<String>,
    /// Exact status.
    pub status: Option<String>,
    /// Anchor id: only `seq` greater than this event's (unknown id: [`unknown_anchor`]).
    pub since_event_id: Option<String>,
    /// Anchor id: only `seq` smaller than this event's.
    pub before_event_id: Option<String>,
    /// `created_at >= value` (text comparison).
    pub since_created_at: Option<String>,
    /// 1..=500.
    pub limit: usize,
    /// Result order by `seq`.
    pub order: Order,
}

impl EventFilter {
    /// Every event after `since_event_id` (all when `None`), oldest first, at most `limit`.
    pub fn after(since_event_id: Option<String>, limit: usize) -> Self {
        EventFilter {
            stream: None,
            room: None,
            topic: None,
            event_type: None,
            to_agent: None,
            from_agent: None,
            correlation_id: None,
            status: None,
            since_event_id,
            before_event_id: None,
            since_created_at: None,
            limit,
            order: Order::Asc,
        }
    }

    /// Whether `event` passes every non-anchor filter (anchors are the store's to resolve).
    pub fn matches(&self, event: &Event) -> bool {
        fn eq(want: &Option<String>, have: Option<&str>) -> bool {
            want.as_deref().is_none_or(|w| have == Some(w))
        }
        eq(&self.stream, Some(&event.stream))
            && eq(&self.room, Some(&event.room))
            && eq(&self.topic, event.topic.as_deref())
            && eq(&self.event_type, Some(&event.event_type))
            && eq(&self.from_agent, Some(&event.from_agent))
            && eq(&self.correlation_id, event.correlation_id.as_deref())
            && eq(&self.status, event.status.as_deref())
            && self
                .to_agent
                .as_deref()
                .is_none_or(|w| matches!(event.to_agent.as_deref(), Some(t) if t == w || t == "*"))
            && self
                .since_created_at
                .as_deref()
                .is_none_or(|s| event.created_at.as_str() >= s)
    }
}

/// The arguments of `artifact_put`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NewArtifact {
    /// One of [`ARTIFACT_KINDS`].
    pub kind: String,
    /// Exact non-empty UTF-8 content.
    pub content: String,
    /// Writer identity.
    pub created_by: String,
    /// Metadata; must be a JSON object.
    pub metadata: Option<Value>,
}

/// What `artifact_put` returns: the record without the content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArtifactRecord {
    /// `art_{YYYYmmddTHHMMSS}_{12 hex}`.
    pub id: String,
    /// The kind.
    pub kind: String,
    /// Hex SHA-256 of the UTF-8 content.
    pub sha256: String,
    /// Content length in UTF-8 bytes.
    pub size_bytes: i64,
    /// Writer identity.
    pub created_by: String,
    /// `YYYY-MM-DDTHH:MM:SSZ`, UTC.
    pub created_at: String,
    /// The replica that stored it.
    pub origin_replica: Option<String>,
    /// Advisory problems with a patch (present only when there are some).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
}

/// A stored artifact with its exact content, as `artifact_get` returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Artifact {
    /// Artifact id.
    pub id: String,
    /// The kind.
    pub kind: String,
    /// Hex SHA-256 of the content.
    pub sha256: String,
    /// Content length in UTF-8 bytes.
    pub size_bytes: i64,
    /// The exact content.
    pub content: String,
    /// Writer identity.
    pub created_by: String,
    /// `YYYY-MM-DDTHH:MM:SSZ`, UTC.
    pub created_at: String,
    /// The replica that stored it.
    pub origin_replica: Option<String>,
    /// Extra structured fields.
    pub metadata: Value,
}

/// The arguments of `task_create` (all required).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NewTask {
    /// Project name; the stream becomes `project/{slug}`.
    pub project: String,
    /// Requesting agent.
    pub from_agent: String,
    /// Worker agent.
    pub to_agent: String,
    /// Verbatim goal.
    pub goal: String,
    /// Git branch.
    pub branch: String,
    /// Hexadecimal commit id (7 to 64 digits).
    pub base_commit: String,
    /// Verbatim definition of done.
    pub done: String,
}

/// The arguments of `patch_submit`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NewPatch {
    /// Unified diff.
    pub content: String,
    /// Submitting agent.
    pub from_agent: String,
    /// Stream.
    pub stream: String,
    /// Room (default `patches`).
    pub room: Option<String>,
    /// Addressee or `*`.
    pub to_agent: Option<String>,
    /// Correlation id.
    pub correlation_id: Option<String>,
    /// Git branch.
    pub branch: Option<String>,
    /// Git base commit.
    pub base_commit: Option<String>,
    /// Verbatim notes.
    pub body: Option<String>,
    /// Metadata for both the artifact and the event.
    pub metadata: Option<Value>,
    /// Topic.
    pub topic: Option<String>,
}

/// `event_append` / `event_ack` answer: `{success: true, event}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventWritten {
    /// Always true.
    pub success: bool,
    /// The stored event.
    pub event: Event,
}

/// `event_list` answer: `{events, count, note?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventList {
    /// Matching events.
    pub events: Vec<Event>,
    /// `events.len()`.
    pub count: usize,
    /// [`FROM_AGENT_NOTE`] when `from_agent` was given without `writer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `event_wait` answer: `{timed_out, events, count, note?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventWait {
    /// True when the timeout passed with no match (then `events` is empty).
    pub timed_out: bool,
    /// Matching events, oldest first.
    pub events: Vec<Event>,
    /// `events.len()`.
    pub count: usize,
    /// [`FROM_AGENT_NOTE`] when `from_agent` was given without `writer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `task_create` answer: `{success: true, task, handoff}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskCreated {
    /// Always true.
    pub success: bool,
    /// The stored `task.request` event.
    pub task: Event,
    /// One ready-to-paste wake-up line for the worker.
    pub handoff: String,
}

/// `artifact_put` answer: `{success: true, artifact}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArtifactStored {
    /// Always true.
    pub success: bool,
    /// The stored record (no content).
    pub artifact: ArtifactRecord,
}

/// `artifact_get` answer: `{artifact}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArtifactFound {
    /// The artifact with its content.
    pub artifact: Artifact,
}

/// `patch_submit` answer: `{success: true, artifact, event}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatchSubmitted {
    /// Always true.
    pub success: bool,
    /// The stored patch artifact.
    pub artifact: ArtifactRecord,
    /// The `patch.ready` event referencing it.
    pub event: Event,
}

// ── Storage trait ────────────────────────────────────────────────────────

/// A validated event ready to store; the store adds `seq`, `origin_*` and `hlc`.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedEvent {
    /// Event id.
    pub id: String,
    /// Event type.
    pub event_type: String,
    /// Stream.
    pub stream: String,
    /// Room.
    pub room: String,
    /// Topic.
    pub topic: Option<String>,
    /// Writer.
    pub from_agent: String,
    /// Addressee.
    pub to_agent: Option<String>,
    /// Correlation id.
    pub correlation_id: Option<String>,
    /// Branch.
    pub branch: Option<String>,
    /// Base commit.
    pub base_commit: Option<String>,
    /// Status.
    pub status: Option<String>,
    /// Body.
    pub body: String,
    /// `YYYY-MM-DDTHH:MM:SSZ`.
    pub created_at: String,
    /// Canonical JSON text of the metadata object (3.11's `metadata_json`).
    pub metadata_json: String,
    /// Referenced artifact ids, deduplicated, in the caller's order.
    pub artifact_ids: Vec<String>,
}

impl PreparedEvent {
    /// The stored event this becomes with the store's stamps.
    pub fn into_event(
        self,
        seq: i64,
        origin_replica: Option<String>,
        origin_seq: Option<i64>,
        hlc: Option<String>,
    ) -> Event {
        Event {
            id: self.id,
            seq,
            origin_replica,
            origin_seq,
            hlc,
            event_type: self.event_type,
            stream: self.stream,
            room: self.room,
            topic: self.topic,
            from_agent: self.from_agent,
            to_agent: self.to_agent,
            correlation_id: self.correlation_id,
            branch: self.branch,
            base_commit: self.base_commit,
            status: self.status,
            artifact_ids: self.artifact_ids,
            body: self.body,
            created_at: self.created_at,
            metadata: parse_metadata(&self.metadata_json),
            body_truncated: None,
            body_length: None,
        }
    }
}

/// A validated artifact ready to store; the store adds `origin_replica`.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedArtifact {
    /// Artifact id.
    pub id: String,
    /// Kind.
    pub kind: String,
    /// Hex SHA-256 of `content`.
    pub sha256: String,
    /// UTF-8 length of `content`.
    pub size_bytes: i64,
    /// Exact content.
    pub content: String,
    /// Writer.
    pub created_by: String,
    /// `YYYY-MM-DDTHH:MM:SSZ`.
    pub created_at: String,
    /// Canonical JSON text of the metadata object.
    pub metadata_json: String,
}

impl PreparedArtifact {
    /// The stored artifact this becomes.
    pub fn into_artifact(self, origin_replica: Option<String>) -> Artifact {
        Artifact {
            metadata: parse_metadata(&self.metadata_json),
            id: self.id,
            kind: self.kind,
            sha256: self.sha256,
            size_bytes: self.size_bytes,
            content: self.content,
            created_by: self.created_by,
            created_at: self.created_at,
            origin_replica,
        }
    }
}

/// Storage of the coordination log: prepared rows in, validated queries answered.
#[async_trait]
pub trait CoordinationLog: Send + Sync {
    /// Stores one event in a single transaction: `seq` is the next append position and
    /// `origin_seq` the author replica's own next number (a log with one author, like the
    /// SQLite file, uses the append position), every referenced artifact must exist (else [`unknown_artifact`], nothing
    /// stored). Returns the stored event, `artifact_ids` in the given order.
    async fn insert_event(&self, event: PreparedEvent) -> Result<Event>;
    /// Events passing `filter`, by `seq` in its order, at most `filter.limit`, each with its
    /// artifact ids sorted; unknown anchor ids fail with [`unknown_anchor`]. Empty when
    /// nothing was ever written.
    async fn list_events(&self, filter: &EventFilter) -> Result<Vec<Event>>;
    /// One event by id (artifact ids sorted).
    async fn get_event(&self, id: &str) -> Result<Option<Event>>;
    /// Stores one artifact; returns it as stored.
    async fn insert_artifact(&self, artifact: PreparedArtifact) -> Result<Artifact>;
    /// One artifact by id.
    async fn get_artifact(&self, id: &str) -> Result<Option<Artifact>>;
    /// Artifacts by id (byte order), those after `after_id` only, at most `limit` (export).
    async fn artifact_rows(&self, after_id: Option<&str>, limit: usize) -> Result<Vec<Artifact>>;
    /// Stores an exported event as it was (id, author replica and sequence, clock stamp,
    /// times, artifact ids) at the next local position; `false`, and nothing changed, when its
    /// id is stored already. Its artifacts must be stored ([`unknown_artifact`]).
    async fn import_event(&self, event: &Event) -> Result<bool>;
    /// Stores an exported artifact as it was; `false` when its id is stored already.
    async fn import_artifact(&self, artifact: &Artifact) -> Result<bool>;
    /// Writes a consistent copy of the log into the palace folder `palace_dir` (`backup`);
    /// `false` when nothing was ever written. The default refuses
    /// ([`PalaceError::no_snapshot`]).
    async fn snapshot_into(&self, palace_dir: &std::path::Path) -> Result<bool> {
        let _ = palace_dir;
        Err(PalaceError::no_snapshot("coordination log"))
    }

    /// A signal that changes whenever an event may have been appended, by this process or
    /// another host, so that `event_wait` wakes at once instead of at its next poll. `None`
    /// (the default) when the log cannot tell: waiters then poll.
    fn append_signal(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        None
    }
}

/// Checks an exported event before it is stored: the checks a new event passes (routing
/// fields, type, status, metadata size), and a usable id, time and artifact list.
pub fn validate_exported_event(event: &Event) -> Result<()> {
    exported_key("id", &event.id)?;
    exported_key("created_at", &event.created_at)?;
    for id in &event.artifact_ids {
        exported_key("artifact_ids", id)?;
    }
    if !event.metadata.is_object() {
        return Err(PalaceError::invalid("metadata", "must be a JSON object"));
    }
    sanitize_metadata(Some(&event.metadata))?;
    for (field, value, required) in [
        ("stream", Some(&event.stream), true),
        ("room", Some(&event.room), true),
        ("from_agent", Some(&event.from_agent), true),
        ("to_agent", event.to_agent.as_ref(), false),
        ("topic", event.topic.as_ref(), false),
        ("correlation_id", event.correlation_id.as_ref(), false),
    ] {
        match value {
            Some(v) => exported_key(field, v)?,
            None if required => return Err(PalaceError::invalid(field, "is required")),
            None => {}
        }
    }
    if let Some(status) = &event.status
        && !EVENT_STATUSES.contains(&status.as_str())
    {
        return Err(PalaceError::invalid(
            "status",
            format!(
                "{} is not one of: {}",
                python_repr(status),
                EVENT_STATUSES.join(", ")
            ),
        ));
    }
    if sanitize_event_type(&event.event_type)? != event.event_type {
        return Err(PalaceError::invalid(
            "type",
            format!(
                "{} is not a stored event type",
                python_repr(&event.event_type)
            ),
        ));
    }
    Ok(())
}

/// Checks an exported artifact: a usable id and writer, and content matching its digest and
/// size.
pub fn validate_exported_artifact(artifact: &Artifact) -> Result<()> {
    exported_key("id", &artifact.id)?;
    exported_key("created_by", &artifact.created_by)?;
    exported_key("created_at", &artifact.created_at)?;
    if !artifact.metadata.is_object() {
        return Err(PalaceError::invalid("metadata", "must be a JSON object"));
    }
    let digest = {
        use sha2::{Digest, Sha256};
        hex::encode(Sha256::digest(artifact.content.as_bytes()))
    };
    if digest != artifact.sha256 || artifact.size_bytes != artifact.content.len() as i64 {
        return Err(PalaceError::invalid(
            "content",
            format!(
                "artifact {} does not match its sha256 and size",
                python_repr(&artifact.id)
            ),
        ));
    }
    Ok(())
}

/// The error for an imported event whose author position (replica and sequence) a different
/// stored event holds: two logs wrote as one replica (e.g. a backup opened beside its
/// original), and merging them would lose one of the two.
pub fn author_position_taken(id: &str, replica: &str, seq: i64, stored: &str) -> PalaceError {
    PalaceError::invalid(
        "event",
        format!(
            "event {} was written by replica {} at position {seq}, which the stored event {} holds: the two logs wrote as one replica",
            python_repr(id),
            python_repr(replica),
            python_repr(stored)
        ),
    )
}

/// A field of an exported row: not blank, at most 1,024 characters, no control characters.
fn exported_key(field: &'static str, value: &str) -> Result<()> {
    if value.trim().is_empty()
        || value.chars().count() > 1024
        || value.chars().any(char::is_control)
    {
        return Err(PalaceError::invalid(
            field,
            format!("{} is not a usable value", python_repr(value)),
        ));
    }
    Ok(())
}

/// The metadata text stored for an exported event (3.11's canonical JSON).
pub fn exported_metadata_json(event_metadata: &Value) -> String {
    python_json(event_metadata)
}

/// The error a store returns for an unknown `since_event_id` / `before_event_id`.
pub fn unknown_anchor(field: &'static str, id: &str) -> PalaceError {
    PalaceError::invalid(field, format!("{field} {} not found", python_repr(id)))
}

/// The error a store returns when an event references an artifact it does not hold.
pub fn unknown_artifact(id: &str) -> PalaceError {
    PalaceError::invalid(
        "artifact_ids",
        format!(
            "artifact_ids references unknown artifact {}",
            python_repr(id)
        ),
    )
}

/// 3.11's message for an error: the bare reason of a rejection, else the error's text.
pub fn error_message(err: &PalaceError) -> String {
    match err {
        PalaceError::InvalidInput { reason, .. } => reason.clone(),
        other => other.to_string(),
    }
}

/// The MCP answer of a failed coordination tool, as 3.11 shapes it: `{success: false, error}`
/// for the writing tools, `{error}` for `event_list`, `event_wait` and `artifact_get`.
pub fn tool_error(tool: &str, err: &PalaceError) -> Value {
    let message = Value::String(error_message(err));
    let bare = matches!(
        tool.trim_start_matches("mempalace_"),
        "event_list" | "event_wait" | "artifact_get"
    );
    let mut out = Map::new();
    if !bare {
        out.insert("success".into(), Value::Bool(false));
    }
    out.insert("error".into(), message);
    Value::Object(out)
}

/// The metadata object stored as `json`, or `{}` when it does not parse (as 3.11 reads it).
pub fn parse_metadata(json: &str) -> Value {
    match serde_json::from_str::<Value>(json) {
        Ok(v) => v,
        Err(_) => Value::Object(Map::new()),
    }
}

// ── Validation (3.11's sanitizers) ───────────────────────────────────────

/// A routing field (stream, room, agent, correlation id, ...): trimmed, ≤ 256 characters, no
/// control characters; `None` or empty is refused when `required`.
pub fn sanitize_routing(
    value: Option<&str>,
    field: &'static str,
    required: bool,
) -> Result<Option<String>> {
    let non_empty = || PalaceError::invalid(field, format!("{field} must be a non-empty string"));
    let value = match value {
        None | Some("") if required => return Err(non_empty()),
        None | Some("") => return Ok(None),
        Some(v) => v.trim(),
    };
    if value.is_empty() {
        return Err(non_empty());
    }
    if value.chars().count() > MAX_ROUTING_CHARS {
        return Err(PalaceError::invalid(
            field,
            format!("{field} exceeds maximum length of {MAX_ROUTING_CHARS} characters"),
        ));
    }
    if value.chars().any(|c| (c as u32) < 0x20 || c == '\x7f') {
        return Err(PalaceError::invalid(
            field,
            format!("{field} contains control characters"),
        ));
    }
    Ok(Some(value.to_string()))
}

fn required_routing(value: &str, field: &'static str) -> Result<String> {
    sanitize_routing(Some(value), field, true)?
        .ok_or_else(|| PalaceError::invalid(field, format!("{field} must be a non-empty string")))
}

/// An event type: trimmed, matching `^[a-z0-9][a-z0-9_.-]{0,63}$`.
pub fn sanitize_event_type(value: &str) -> Result<String> {
    let v = value.trim();
    if v.is_empty() {
        return Err(PalaceError::invalid(
            "type",
            "type must be a non-empty string",
        ));
    }
    let b = v.as_bytes();
    let ok = b.len() <= 64
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b[1..]
            .iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"_.-".contains(&c));
    if !ok {
        return Err(PalaceError::invalid(
            "type",
            format!(
                "type={} is not a valid event type (lowercase letters, digits, '.', '_', '-'; max 64 chars)",
                python_repr(v)
            ),
        ));
    }
    Ok(v.to_string())
}

/// A status: none or empty is `None`, else one of [`EVENT_STATUSES`] exactly.
pub fn sanitize_status(value: Option<&str>) -> Result<Option<String>> {
    match value {
        None | Some("") => Ok(None),
        Some(v) if EVENT_STATUSES.contains(&v) => Ok(Some(v.to_string())),
        Some(v) => Err(PalaceError::invalid(
            "status",
            format!(
                "status={} is not one of: {}",
                python_repr(v),
                EVENT_STATUSES.join(", ")
            ),
        )),
    }
}

/// A verbatim body: no NUL, at most `max_bytes` UTF-8 bytes; none is empty.
fn sanitize_body(value: Option<&str>, max_bytes: usize, field: &'static str) -> Result<String> {
    let v = value.unwrap_or("");
    if v.contains('\0') {
        return Err(PalaceError::invalid(
            field,
            format!("{field} contains null bytes"),
        ));
    }
    if v.len() > max_bytes {
        return Err(PalaceError::invalid(
            field,
            format!("{field} is {} bytes; maximum is {max_bytes} bytes", v.len()),
        ));
    }
    Ok(v.to_string())
}

/// Metadata: none is `{}`, else a JSON object of at most 64 KiB, returned as 3.11's canonical
/// text (`json.dumps(sort_keys=True, ensure_ascii=False)`: sorted keys, `", "` and `": "`).
pub fn sanitize_metadata(value: Option<&Value>) -> Result<String> {
    let v = match value {
        None | Some(Value::Null) => return Ok("{}".to_string()),
        Some(v @ Value::Object(_)) => v,
        Some(_) => {
            return Err(PalaceError::invalid(
                "metadata",
                "metadata must be an object",
            ));
        }
    };
    let encoded = python_json(v);
    if encoded.len() > MAX_METADATA_BYTES {
        return Err(PalaceError::invalid(
            "metadata",
            format!("metadata exceeds maximum size of {MAX_METADATA_BYTES} bytes"),
        ));
    }
    Ok(encoded)
}

/// `v` with every object's keys in sorted order (serde_json keeps insertion order when its
/// `preserve_order` feature is on somewhere in the build, so the order is made explicit).
fn sorted_keys(v: &Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), sorted_keys(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted_keys).collect()),
        other => other.clone(),
    }
}

/// JSON text as Python's `json.dumps(sort_keys=True)` writes it.
fn python_json(v: &Value) -> String {
    python_json_text(&sorted_keys(v))
}

/// JSON text as Python's `json.dumps(v, ensure_ascii=False)` writes it: keys in their order,
/// `", "` and `": "` between items (3.11's one-line JSON, e.g. `logstream watch --follow`).
pub fn python_json_text(v: &Value) -> String {
    struct PyFormatter;
    impl serde_json::ser::Formatter for PyFormatter {
        fn begin_array_value<W: ?Sized + std::io::Write>(
            &mut self,
            w: &mut W,
            first: bool,
        ) -> std::io::Result<()> {
            if first { Ok(()) } else { w.write_all(b", ") }
        }
        fn begin_object_key<W: ?Sized + std::io::Write>(
            &mut self,
            w: &mut W,
            first: bool,
        ) -> std::io::Result<()> {
            if first { Ok(()) } else { w.write_all(b", ") }
        }
        fn begin_object_value<W: ?Sized + std::io::Write>(
            &mut self,
            w: &mut W,
        ) -> std::io::Result<()> {
            w.write_all(b": ")
        }
    }
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, PyFormatter);
    // Serialising a Value into memory cannot fail.
    if v.serialize(&mut ser).is_err() {
        return v.to_string();
    }
    String::from_utf8(out).unwrap_or_else(|_| v.to_string())
}

/// Validates a query into the filter a store answers (order resolved as 3.11's `event_list`).
pub fn validate_query(query: &EventQuery) -> Result<EventFilter> {
    let event_type = match query.event_type.as_deref() {
        None | Some("") => None,
        Some(t) => Some(sanitize_event_type(t)?),
    };
    let stream = sanitize_routing(query.stream.as_deref(), "stream", false)?;
    let room = sanitize_routing(query.room.as_deref(), "room", false)?;
    let topic = sanitize_routing(query.topic.as_deref(), "topic", false)?;
    let to_agent = sanitize_routing(query.to_agent.as_deref(), "to_agent", false)?;
    let from_agent = sanitize_routing(query.writer.as_deref(), "from_agent", false)?;
    let correlation_id =
        sanitize_routing(query.correlation_id.as_deref(), "correlation_id", false)?;
    let status = sanitize_status(query.status.as_deref())?;
    let since_event_id =
        sanitize_routing(query.since_event_id.as_deref(), "since_event_id", false)?;
    let before_event_id =
        sanitize_routing(query.before_event_id.as_deref(), "before_event_id", false)?;
    let since_created_at = match query.since_created_at.as_deref() {
        None | Some("") => None,
        Some(v) => Some(canonical_date("since_created_at", v)?),
    };
    let order = match query.order.as_deref() {
        None if query
            .since_event_id
            .as_deref()
            .is_some_and(|s| !s.is_empty()) =>
        {
            Order::Asc
        }
        None => Order::Desc,
        Some(o) => match o.trim().to_lowercase().as_str() {
            "asc" => Order::Asc,
            "desc" => Order::Desc,
            other => {
                return Err(PalaceError::invalid(
                    "order",
                    format!("order={} must be 'asc' or 'desc'", python_repr(other)),
                ));
            }
        },
    };
    let limit = query.limit.unwrap_or(DEFAULT_LIST_LIMIT);
    if limit < 1 {
        return Err(PalaceError::invalid(
            "limit",
            "limit must be a positive integer",
        ));
    }
    Ok(EventFilter {
        stream,
        room,
        topic,
        event_type,
        to_agent,
        from_agent,
        correlation_id,
        status,
        since_event_id,
        before_event_id,
        since_created_at,
        limit: limit.min(MAX_LIST_LIMIT) as usize,
        order,
    })
}

/// Validates `event_append`'s arguments into a prepared event with a fresh id and timestamp.
pub fn prepare_event(new: &NewEvent) -> Result<PreparedEvent> {
    let event_type = sanitize_event_type(&new.event_type)?;
    let stream = required_routing(&new.stream, "stream")?;
    let room = required_routing(&new.room, "room")?;
    let topic = sanitize_routing(new.topic.as_deref(), "topic", false)?;
    let from_agent = required_routing(&new.from_agent, "from_agent")?;
    let to_agent = sanitize_routing(new.to_agent.as_deref(), "to_agent", false)?;
    let correlation_id = sanitize_routing(new.correlation_id.as_deref(), "correlation_id", false)?;
    let branch = sanitize_routing(new.branch.as_deref(), "branch", false)?;
    let base_commit = sanitize_routing(new.base_commit.as_deref(), "base_commit", false)?;
    let status = sanitize_status(new.status.as_deref())?;
    let body = sanitize_body(new.body.as_deref(), MAX_BODY_BYTES, "body")?;
    let metadata_json = sanitize_metadata(new.metadata.as_ref())?;
    let mut artifact_ids: Vec<String> = Vec::new();
    for id in new.artifact_ids.iter().flatten() {
        if id.is_empty() {
            return Err(PalaceError::invalid(
                "artifact_ids",
                "artifact_ids must be a list of artifact id strings",
            ));
        }
        if !artifact_ids.contains(id) {
            artifact_ids.push(id.clone());
        }
    }
    Ok(PreparedEvent {
        id: new_id("evt"),
        event_type,
        stream,
        room,
        topic,
        from_agent,
        to_agent,
        correlation_id,
        branch,
        base_commit,
        status,
        body,
        created_at: utc_now_iso(),
        metadata_json,
        artifact_ids,
    })
}

/// Validates `artifact_put`'s arguments into a prepared artifact (id, timestamp, SHA-256).
pub fn prepare_artifact(new: &NewArtifact) -> Result<PreparedArtifact> {
    if !ARTIFACT_KINDS.contains(&new.kind.as_str()) {
        return Err(PalaceError::invalid(
            "kind",
            format!(
                "kind={} is not one of: {}",
                python_repr(&new.kind),
                ARTIFACT_KINDS.join(", ")
            ),
        ));
    }
    let created_by = required_routing(&new.created_by, "created_by")?;
    if new.content.is_empty() {
        return Err(PalaceError::invalid(
            "content",
            "content must be a non-empty string",
        ));
    }
    let content = sanitize_body(Some(&new.content), MAX_ARTIFACT_BYTES, "content")?;
    let metadata_json = sanitize_metadata(new.metadata.as_ref())?;
    Ok(PreparedArtifact {
        id: new_id("art"),
        kind: new.kind.clone(),
        sha256: hex::encode(Sha256::digest(content.as_bytes())),
        size_bytes: content.len() as i64,
        content,
        created_by,
        created_at: utc_now_iso(),
        metadata_json,
    })
}

/// 3.11's advisory checks for `kind=patch` content (the content is stored regardless).
pub fn patch_warnings(kind: &str, content: &str) -> Vec<String> {
    let mut warnings = Vec::new();
    if kind != "patch" {
        return warnings;
    }
    if !content.ends_with('\n') {
        warnings.push(
            "patch content does not end with a trailing newline; git apply will reject the final hunk as corrupt — store the diff byte-exactly including its trailing newline".to_string(),
        );
    }
    if content.contains('\r') {
        warnings.push(
            "patch content contains carriage returns (CRLF line endings); git apply often rejects CRLF diffs — generate the diff with LF endings".to_string(),
        );
    }
    warnings
}

/// A task's base commit: 7 to 64 hex digits, lower-cased.
pub fn validate_task_base_commit(value: &str) -> Result<String> {
    let v = task_text(value, "base commit", "base_commit")?;
    if !(7..=64).contains(&v.len()) || !v.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(PalaceError::invalid(
            "base_commit",
            "task base commit must be a hexadecimal Git object id (at least 7 characters), not a branch or tag",
        ));
    }
    Ok(v.to_lowercase())
}

fn task_text(value: &str, label: &str, field: &'static str) -> Result<String> {
    let v = value.trim();
    if v.is_empty() {
        return Err(PalaceError::invalid(
            field,
            format!("task {label} must not be empty"),
        ));
    }
    Ok(v.to_string())
}

/// 3.11's `task_slug`: lower case, runs of other characters as `_`, at most 40 characters.
pub fn task_slug(value: &str, fallback: &str) -> String {
    let mut slug = String::new();
    let mut gap = false;
    for c in value.to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            if gap && !slug.is_empty() {
                slug.push('_');
            }
            gap = false;
            slug.push(c);
        } else {
            gap = true;
        }
    }
    let cut: String = slug.chars().take(40).collect();
    let cut = cut.trim_end_matches('_');
    if cut.is_empty() {
        fallback.to_string()
    } else {
        cut.to_string()
    }
}

/// The one-line wake-up prompt for a stored task.
pub fn task_handoff(correlation_id: &str, agent: &str) -> String {
    format!(
        "Open MemPalace task {correlation_id} as {agent}. Claim it, follow its exact definition of done, and deliver through the logstream."
    )
}

/// Truncates a body to [`PREVIEW_BODY_CHARS`] characters, marking `body_truncated` and
/// `body_length` (unchanged when short enough).
pub fn preview_event(mut event: Event) -> Event {
    let length = event.body.chars().count();
    if length <= PREVIEW_BODY_CHARS {
        return event;
    }
    event.body = event.body.chars().take(PREVIEW_BODY_CHARS).collect();
    event.body_truncated = Some(true);
    event.body_length = Some(length);
    event
}

// ── Ids, times, clocks ───────────────────────────────────────────────────

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_now_iso() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// 64 unpredictable bits from std's randomly keyed hasher, the time, pid and a counter.
pub fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    h.write_u128(nanos);
    h.write_u32(std::process::id());
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.finish()
}

/// `n` random lowercase hex digits (n ≤ 64).
pub fn random_hex(n: usize) -> String {
    let mut out = String::with_capacity(n + 16);
    while out.len() < n {
        out.push_str(&format!("{:016x}", random_u64()));
    }
    out.truncate(n);
    out
}

/// A new id `{prefix}_{YYYYmmddTHHMMSS}_{12 hex}`.
pub fn new_id(prefix: &str) -> String {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S");
    format!("{prefix}_{stamp}_{}", random_hex(12))
}

/// A new replica id as 3.11 mints them: `rep_{32 hex}`.
pub fn new_replica_id() -> String {
    format!("rep_{}", random_hex(32))
}

/// Whether `id` has 3.11's replica id shape (`rep_` and 12 or 32 lowercase hex digits).
pub fn is_replica_id(id: &str) -> bool {
    id.strip_prefix("rep_").is_some_and(|h| {
        (h.len() == 12 || h.len() == 32)
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Renders a hybrid-logical-clock stamp `{ms:013}-{counter:06x}-{replica}` (3.11's format).
pub fn render_hlc(ms: i64, counter: u32, replica: &str) -> String {
    format!("{ms:013}-{counter:06x}-{replica}")
}

/// Parses an HLC stamp into `(ms, counter)`.
pub fn parse_hlc(hlc: &str) -> Option<(i64, u32)> {
    let mut parts = hlc.splitn(3, '-');
    let ms = parts.next().filter(|p| p.len() == 13)?;
    let counter = parts.next().filter(|p| p.len() == 6)?;
    parts.next().filter(|r| !r.is_empty())?;
    if !ms.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((ms.parse().ok()?, u32::from_str_radix(counter, 16).ok()?))
}

/// The next local HLC stamp after `last` (the newest in the log): wall-clock milliseconds
/// when they advanced, else `last`'s with the counter raised, as 3.11's `tick()`.
pub fn next_hlc(last: Option<&str>, replica: &str) -> String {
    let now = chrono::Utc::now().timestamp_millis();
    let (ms, counter) = match last.and_then(parse_hlc) {
        // 3.11 ignores a seed more than 60 s in the future.
        Some((ms, c)) if ms >= now && ms <= now + 60_000 => {
            if c < 0xFF_FFFF {
                (ms, c + 1)
            } else {
                (ms + 1, 0)
            }
        }
        _ => (now, 0),
    };
    render_hlc(ms, counter, replica)
}

// ── The service ──────────────────────────────────────────────────────────

/// The eight coordination tools over one [`CoordinationLog`]; all policy lives here.
#[derive(Clone)]
pub struct Coordination {
    log: Arc<dyn CoordinationLog>,
}

impl Coordination {
    /// The service over `log`.
    pub fn new(log: Arc<dyn CoordinationLog>) -> Self {
        Coordination { log }
    }

    /// The underlying store.
    pub fn log(&self) -> &Arc<dyn CoordinationLog> {
        &self.log
    }

    /// `mempalace_event_append`: validates and stores one immutable event.
    pub async fn event_append(&self, new: &NewEvent) -> Result<EventWritten> {
        let event = self.log.insert_event(prepare_event(new)?).await?;
        Ok(EventWritten {
            success: true,
            event,
        })
    }

    /// `mempalace_event_list`: events matching the filters (desc by default, asc from a cursor).
    pub async fn event_list(&self, query: &EventQuery) -> Result<EventList> {
        let filter = validate_query(query)?;
        let mut events = self.log.list_events(&filter).await?;
        if query.preview {
            events = events.into_iter().map(preview_event).collect();
        }
        Ok(EventList {
            count: events.len(),
            events,
            note: note_for(query),
        })
    }

    /// `mempalace_event_wait`: polls (250 ms growing to 1 s, jittered; at once when the log's
    /// [`CoordinationLog::append_signal`] says something was appended) until a matching event
    /// exists, oldest first, or `timeout_ms` (default 60 000, capped at 300 000) passes.
    /// `order` and `preview` are not used; a timeout is an answer, not an error.
    pub async fn event_wait(
        &self,
        query: &EventQuery,
        timeout_ms: Option<i64>,
    ) -> Result<EventWait> {
        let timeout_ms = timeout_ms.unwrap_or(DEFAULT_WAIT_TIMEOUT_MS);
        if timeout_ms < 0 {
            return Err(PalaceError::invalid(
                "timeout_ms",
                "timeout_ms must be a non-negative number",
            ));
        }
        let deadline =
            Instant::now() + Duration::from_millis(timeout_ms.min(MAX_WAIT_TIMEOUT_MS) as u64);
        let mut filter = validate_query(&EventQuery {
            order: Some("asc".into()),
            ..query.clone()
        })?;
        filter.order = Order::Asc;
        // Taken (and marked seen) before each look, so an append that lands after the look
        // wakes the sleep below.
        let mut appended = self.log.append_signal();
        let mut attempt: i32 = 0;
        loop {
            if let Some(signal) = appended.as_mut() {
                signal.borrow_and_update();
            }
            let events = self.log.list_events(&filter).await?;
            if !events.is_empty() {
                return Ok(EventWait {
                    timed_out: false,
                    count: events.len(),
                    events,
                    note: note_for(query),
                });
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(EventWait {
                    timed_out: true,
                    events: Vec::new(),
                    count: 0,
                    note: note_for(query),
                });
            }
            let base = (POLL_BASE_S * 1.5f64.powi(attempt)).min(POLL_MAX_S);
            let jitter = 0.75 + (random_u64() % 1000) as f64 / 1000.0 * 0.25;
            let delay = Duration::from_secs_f64(base * jitter).min(deadline - now);
            match appended.as_mut() {
                Some(signal) => {
                    tokio::select! {
                        () = tokio::time::sleep(delay) => {}
                        changed = signal.changed() => {
                            // A closed signal (its listener gone) leaves plain polling.
                            if changed.is_err() {
                                appended = None;
                            }
                        }
                    }
                }
                None => tokio::time::sleep(delay).await,
            }
            attempt = attempt.saturating_add(1).min(16);
        }
    }

    /// `mempalace_event_ack`: appends an `event.ack` routed to the target's writer, with the
    /// target's stream/room/topic (topic overridable), its correlation id (or its id) and
    /// `metadata {ack_of}`. The target is never changed.
    pub async fn event_ack(
        &self,
        event_id: &str,
        from_agent: &str,
        status: Option<&str>,
        body: Option<&str>,
        topic: Option<&str>,
    ) -> Result<EventWritten> {
        let event_id = required_routing(event_id, "event_id")?;
        let target = self.log.get_event(&event_id).await?.ok_or_else(|| {
            PalaceError::invalid(
                "event_id",
                format!("event {} not found", python_repr(&event_id)),
            )
        })?;
        let mut metadata = Map::new();
        metadata.insert("ack_of".into(), Value::String(event_id));
        let new = NewEvent {
            event_type: ACK_EVENT_TYPE.into(),
            stream: target.stream,
            room: target.room,
            topic: topic.map(str::to_string).or(target.topic),
            from_agent: from_agent.to_string(),
            to_agent: Some(target.from_agent),
            correlation_id: Some(target.correlation_id.unwrap_or(target.id)),
            status: status.map(str::to_string),
            body: body.map(str::to_string),
            metadata: Some(Value::Object(metadata)),
            ..Default::default()
        };
        self.event_append(&new).await
    }

    /// `mempalace_task_create`: one canonical `task.request` (stream `project/{slug}`, room
    /// `delegation`, status `open`, correlation `task_{slug(goal)}_{8 hex}`) and its handoff.
    pub async fn task_create(&self, task: &NewTask) -> Result<TaskCreated> {
        let project = task_text(&task.project, "project", "project")?;
        let from_agent = task_text(&task.from_agent, "requesting agent", "from_agent")?;
        let to_agent = task_text(&task.to_agent, "destination agent", "to_agent")?;
        let branch = task_text(&task.branch, "branch", "branch")?;
        let base_commit = validate_task_base_commit(&task.base_commit)?;
        if task.goal.trim().is_empty() {
            return Err(PalaceError::invalid("goal", "task goal must not be empty"));
        }
        if task.done.trim().is_empty() {
            return Err(PalaceError::invalid(
                "done",
                "task definition of done must not be empty",
            ));
        }
        let correlation_id = format!("task_{}_{}", task_slug(&task.goal, "work"), random_hex(8));
        let body = format!(
            "Goal:\n{}\n\nDefinition of done:\n{}\n\nDelivery:\nClose the loop through MemPalace: claim the request, then submit a patch with mempalace_patch_submit or reply with blocked/failed evidence.",
            task.goal, task.done
        );
        let new = NewEvent {
            event_type: "task.request".into(),
            stream: format!("project/{}", task_slug(&project, "project")),
            room: "delegation".into(),
            from_agent,
            to_agent: Some(to_agent.clone()),
            correlation_id: Some(correlation_id.clone()),
            branch: Some(branch),
            base_commit: Some(base_commit),
            status: Some("open".into()),
            body: Some(body),
            ..Default::default()
        };
        let event = self.event_append(&new).await?.event;
        Ok(TaskCreated {
            success: true,
            task: event,
            handoff: task_handoff(&correlation_id, &to_agent),
        })
    }

    /// `mempalace_artifact_put`: stores exact content; patches get advisory `warnings`.
    pub async fn artifact_put(&self, new: &NewArtifact) -> Result<ArtifactStored> {
        let prepared = prepare_artifact(new)?;
        let warnings = patch_warnings(&prepared.kind, &prepared.content);
        let stored = self.log.insert_artifact(prepared).await?;
        Ok(ArtifactStored {
            success: true,
            artifact: ArtifactRecord {
                id: stored.id,
                kind: stored.kind,
                sha256: stored.sha256,
                size_bytes: stored.size_bytes,
                created_by: stored.created_by,
                created_at: stored.created_at,
                origin_replica: stored.origin_replica,
                warnings: (!warnings.is_empty()).then_some(warnings),
            },
        })
    }

    /// `mempalace_artifact_get`: the artifact with its exact content; unknown ids are an error
    /// (`artifact '…' not found`).
    pub async fn artifact_get(&self, artifact_id: &str) -> Result<ArtifactFound> {
        let id = required_routing(artifact_id, "artifact_id")?;
        match self.log.get_artifact(&id).await? {
            Some(artifact) => Ok(ArtifactFound { artifact }),
            None => Err(PalaceError::invalid(
                "artifact_id",
                format!("artifact {} not found", python_repr(artifact_id)),
            )),
        }
    }

    /// `mempalace_patch_submit`: a patch artifact plus its `patch.ready` event (room default
    /// `patches`, status `ready`). Both are validated before either is stored.
    pub async fn patch_submit(&self, patch: &NewPatch) -> Result<PatchSubmitted> {
        let artifact = prepare_artifact(&NewArtifact {
            kind: "patch".into(),
            content: patch.content.clone(),
            created_by: patch.from_agent.clone(),
            metadata: patch.metadata.clone(),
        })?;
        let mut event = prepare_event(&NewEvent {
            event_type: "patch.ready".into(),
            stream: patch.stream.clone(),
            room: patch.room.clone().unwrap_or_else(|| "patches".into()),
            topic: patch.topic.clone(),
            from_agent: patch.from_agent.clone(),
            to_agent: patch.to_agent.clone(),
            correlation_id: patch.correlation_id.clone(),
            branch: patch.branch.clone(),
            base_commit: patch.base_commit.clone(),
            status: Some("ready".into()),
            body: patch.body.clone(),
            metadata: patch.metadata.clone(),
            artifact_ids: None,
        })?;
        let warnings = patch_warnings("patch", &artifact.content);
        let stored = self.log.insert_artifact(artifact).await?;
        event.artifact_ids = vec![stored.id.clone()];
        let event = self.log.insert_event(event).await?;
        Ok(PatchSubmitted {
            success: true,
            artifact: ArtifactRecord {
                id: stored.id,
                kind: stored.kind,
                sha256: stored.sha256,
                size_bytes: stored.size_bytes,
                created_by: stored.created_by,
                created_at: stored.created_at,
                origin_replica: stored.origin_replica,
                warnings: (!warnings.is_empty()).then_some(warnings),
            },
            event,
        })
    }
}

fn note_for(query: &EventQuery) -> Option<String> {
    let given = |v: &Option<String>| v.as_deref().is_some_and(|s| !s.is_empty());
    (given(&query.from_agent) && !given(&query.writer)).then(|| FROM_AGENT_NOTE.to_string())
}

// ── In-memory reference store ────────────────────────────────────────────

#[derive(Default)]
struct MemoryState {
    events: Vec<Event>,
    artifacts: HashMap<String, Artifact>,
}

/// The in-process reference [`CoordinationLog`] (tests, palaces without a file).
pub struct MemoryCoordinationLog {
    replica_id: String,
    state: Mutex<MemoryState>,
}

impl Default for MemoryCoordinationLog {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryCoordinationLog {
    /// An empty log with a fresh replica id.
    pub fn new() -> Self {
        MemoryCoordinationLog {
            replica_id: new_replica_id(),
            state: Mutex::new(MemoryState::default()),
        }
    }

    /// The replica id stamped on everything this log stores.
    pub fn replica_id(&self) -> &str {
        &self.replica_id
    }

    fn state(&self) -> std::sync::MutexGuard<'_, MemoryState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn sorted_ids(mut event: Event) -> Event {
    event.artifact_ids.sort();
    event
}

#[async_trait]
impl CoordinationLog for MemoryCoordinationLog {
    async fn insert_event(&self, event: PreparedEvent) -> Result<Event> {
        let mut state = self.state();
        if let Some(missing) = event
            .artifact_ids
            .iter()
            .find(|id| !state.artifacts.contains_key(*id))
        {
            return Err(unknown_artifact(missing));
        }
        let seq = state.events.last().map_or(1, |e| e.seq + 1);
        let hlc = next_hlc(
            state.events.last().and_then(|e| e.hlc.as_deref()),
            &self.replica_id,
        );
        let stored = event.into_event(seq, Some(self.replica_id.clone()), Some(seq), Some(hlc));
        state.events.push(stored.clone());
        Ok(stored)
    }

    async fn list_events(&self, filter: &EventFilter) -> Result<Vec<Event>> {
        let state = self.state();
        let anchor = |id: &Option<String>, field: &'static str| -> Result<Option<i64>> {
            match id {
                None => Ok(None),
                Some(id) => state
                    .events
                    .iter()
                    .find(|e| &e.id == id)
                    .map(|e| Some(e.seq))
                    .ok_or_else(|| unknown_anchor(field, id)),
            }
        };
        let since = anchor(&filter.since_event_id, "since_event_id")?;
        let before = anchor(&filter.before_event_id, "before_event_id")?;
        let passes = |e: &&Event| {
            since.is_none_or(|s| e.seq > s) && before.is_none_or(|b| e.seq < b) && filter.matches(e)
        };
        let out: Vec<Event> = match filter.order {
            Order::Asc => state
                .events
                .iter()
                .filter(passes)
                .take(filter.limit)
                .cloned()
                .map(sorted_ids)
                .collect(),
            Order::Desc => state
                .events
                .iter()
                .rev()
                .filter(passes)
                .take(filter.limit)
                .cloned()
                .map(sorted_ids)
                .collect(),
        };
        Ok(out)
    }

    async fn get_event(&self, id: &str) -> Result<Option<Event>> {
        Ok(self
            .state()
            .events
            .iter()
            .find(|e| e.id == id)
            .cloned()
            .map(sorted_ids))
    }

    async fn insert_artifact(&self, artifact: PreparedArtifact) -> Result<Artifact> {
        let stored = artifact.into_artifact(Some(self.replica_id.clone()));
        self.state()
            .artifacts
            .insert(stored.id.clone(), stored.clone());
        Ok(stored)
    }

    async fn get_artifact(&self, id: &str) -> Result<Option<Artifact>> {
        Ok(self.state().artifacts.get(id).cloned())
    }

    async fn artifact_rows(&self, after_id: Option<&str>, limit: usize) -> Result<Vec<Artifact>> {
        let state = self.state();
        let mut rows: Vec<&Artifact> = state
            .artifacts
            .values()
            .filter(|a| after_id.is_none_or(|after| a.id.as_str() > after))
            .collect();
        rows.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(rows.into_iter().take(limit).cloned().collect())
    }

    async fn import_event(&self, event: &Event) -> Result<bool> {
        validate_exported_event(event)?;
        let mut state = self.state();
        if state.events.iter().any(|e| e.id == event.id) {
            return Ok(false);
        }
        if let (Some(replica), Some(seq)) = (&event.origin_replica, event.origin_seq)
            && let Some(other) = state.events.iter().find(|e| {
                e.origin_replica.as_deref() == Some(replica.as_str()) && e.origin_seq == Some(seq)
            })
        {
            return Err(author_position_taken(&event.id, replica, seq, &other.id));
        }
        if let Some(missing) = event
            .artifact_ids
            .iter()
            .find(|id| !state.artifacts.contains_key(*id))
        {
            return Err(unknown_artifact(missing));
        }
        let mut stored = event.clone();
        stored.seq = state.events.last().map_or(1, |e| e.seq + 1);
        stored.body_truncated = None;
        stored.body_length = None;
        state.events.push(stored);
        Ok(true)
    }

    async fn import_artifact(&self, artifact: &Artifact) -> Result<bool> {
        validate_exported_artifact(artifact)?;
        let mut state = self.state();
        if state.artifacts.contains_key(&artifact.id) {
            return Ok(false);
        }
        state
            .artifacts
            .insert(artifact.id.clone(), artifact.clone());
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordination_routing_rules_match_3_11() {
        assert_eq!(
            sanitize_routing(Some("  a/b "), "stream", true).unwrap(),
            Some("a/b".to_string())
        );
        assert_eq!(sanitize_routing(None, "stream", false).unwrap(), None);
        let e = sanitize_routing(Some("   "), "room", false).unwrap_err();
        assert_eq!(error_message(&e), "room must be a non-empty string");
        let e = sanitize_routing(Some("a\x01"), "room", true).unwrap_err();
        assert_eq!(error_message(&e), "room contains control characters");
        let long = "é".repeat(257);
        assert!(sanitize_routing(Some(&long), "room", true).is_err());
        assert!(sanitize_routing(Some(&"é".repeat(256)), "room", true).is_ok());
    }

    #[test]
    fn coordination_event_types_and_statuses() {
        for ok in ["task.request", "a", "0-x_y.z"] {
            assert!(sanitize_event_type(ok).is_ok(), "{ok}");
        }
        for bad in ["Task", ".x", "a b", "", &"a".repeat(65), "é"] {
            assert!(sanitize_event_type(bad).is_err(), "{bad}");
        }
        assert!(sanitize_event_type(&"a".repeat(64)).is_ok());
        assert_eq!(
            error_message(&sanitize_status(Some("done")).unwrap_err()),
            "status='done' is not one of: applied, blocked, claimed, failed, open, ready, superseded"
        );
        assert_eq!(sanitize_status(Some("")).unwrap(), None);
    }

    #[test]
    fn coordination_metadata_is_python_json() {
        let v = serde_json::json!({"b": [1, "x"], "a": {"é": null}});
        assert_eq!(
            sanitize_metadata(Some(&v)).unwrap(),
            r#"{"a": {"é": null}, "b": [1, "x"]}"#
        );
        assert!(sanitize_metadata(Some(&serde_json::json!([1]))).is_err());
        let big = serde_json::json!({"k": "x".repeat(MAX_METADATA_BYTES)});
        assert!(sanitize_metadata(Some(&big)).is_err());
    }

    #[test]
    fn coordination_query_defaults() {
        let f = validate_query(&EventQuery::default()).unwrap();
        assert_eq!((f.order, f.limit), (Order::Desc, 50));
        let f = validate_query(&EventQuery {
            since_event_id: Some("evt_x".into()),
            limit: Some(10_000),
            ..Default::default()
        })
        .unwrap();
        assert_eq!((f.order, f.limit), (Order::Asc, 500));
        let f = validate_query(&EventQuery {
            order: Some(" DESC ".into()),
            since_event_id: Some("evt_x".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(f.order, Order::Desc);
        for bad in [
            EventQuery {
                limit: Some(0),
                ..Default::default()
            },
            EventQuery {
                order: Some("up".into()),
                ..Default::default()
            },
            EventQuery {
                since_created_at: Some("2026-13-01".into()),
                ..Default::default()
            },
        ] {
            assert!(validate_query(&bad).is_err());
        }
    }

    #[test]
    fn coordination_ids_slugs_hlc() {
        let id = new_id("evt");
        assert_eq!(id.len(), "evt_20260101T000000_".len() + 12);
        assert_ne!(new_id("evt"), new_id("evt"));
        assert!(is_replica_id(&new_replica_id()));
        assert_eq!(
            task_slug("Fix search: echo ranking!", "work"),
            "fix_search_echo_ranking"
        );
        assert_eq!(task_slug("!!!", "work"), "work");
        assert_eq!(task_slug(&"abc ".repeat(30), "work").len(), 39);
        let a = next_hlc(None, "rep_x");
        let b = next_hlc(Some(&a), "rep_x");
        assert!(b > a, "{b} > {a}");
        assert!(parse_hlc(&b).is_some());
        assert!(validate_task_base_commit("ABCDEF1").is_ok());
        assert!(validate_task_base_commit("main").is_err());
        let e = Event {
            body: "é".repeat(300),
            ..MemoryEventFixture::event()
        };
        let p = preview_event(e);
        assert_eq!(p.body.chars().count(), 200);
        assert_eq!((p.body_truncated, p.body_length), (Some(true), Some(300)));
    }

    struct MemoryEventFixture;
    impl MemoryEventFixture {
        fn event() -> Event {
            prepare_event(&NewEvent::new("t", "s", "r", "a"))
                .unwrap()
                .into_event(1, None, None, None)
        }
    }

    #[test]
    fn coordination_event_serialises_like_3_11() {
        let v = serde_json::to_value(MemoryEventFixture::event()).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        let mut expected = vec![
            "id",
            "seq",
            "origin_replica",
            "origin_seq",
            "hlc",
            "type",
            "stream",
            "room",
            "topic",
            "from_agent",
            "to_agent",
            "correlation_id",
            "branch",
            "base_commit",
            "status",
            "artifact_ids",
            "body",
            "created_at",
            "metadata",
        ];
        expected.sort();
        let mut keys = keys;
        keys.sort();
        assert_eq!(keys, expected);
    }
}
