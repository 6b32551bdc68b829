//! `SqliteCoordinationLog`: the `CoordinationLog` trait over one `logstream.sqlite3`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use mempalace_core::coordination::{
    Artifact, CoordinationLog, Event, EventFilter, Order, PreparedArtifact, PreparedEvent,
    author_position_taken, exported_metadata_json, next_hlc, parse_metadata, unknown_anchor,
    unknown_artifact, validate_exported_artifact, validate_exported_event,
};
use mempalace_core::{PalaceError, Result};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};

use crate::schema::{last_hlc, prepare, replica_id};

/// An open connection and the replica id it stamps.
struct Open {
    conn: Connection,
    replica: String,
}

struct Inner {
    path: PathBuf,
    open: Mutex<Option<Open>>,
}

/// A coordination log in one SQLite file with MemPalace 3.11's schema.
///
/// Cheap to clone (clones share the connection); every instance, in this process or another,
/// may append to the same file at once. SQLite work runs on tokio's blocking threads.
#[derive(Clone)]
pub struct SqliteCoordinationLog {
    inner: Arc<Inner>,
}

const EVENT_COLUMNS: &str = "rowid, id, origin_replica, origin_seq, hlc, type, stream, room, \
     topic, from_agent, to_agent, correlation_id, branch, base_commit, status, body, created_at, \
     metadata_json";

const ARTIFACT_COLUMNS: &str =
    "id, kind, sha256, size_bytes, content, created_by, created_at, origin_replica, metadata_json";

impl SqliteCoordinationLog {
    /// A log in the file at `path`; the file (and its folder) is created on the first write,
    /// and reads of a missing file return nothing and create nothing.
    pub fn open(path: impl Into<PathBuf>) -> Self {
        SqliteCoordinationLog {
            inner: Arc::new(Inner {
                path: path.into(),
                open: Mutex::new(None),
            }),
        }
    }

    /// A log in `palace_dir/logstream.sqlite3`.
    pub fn in_palace(palace_dir: &Path) -> Self {
        Self::open(palace_dir.join(mempalace_core::coordination::COORDINATION_FILE_NAME))
    }

    /// The file path.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Runs `f` on the connection in a blocking thread; `Ok(None)` when `create` is false and
    /// the file does not exist.
    async fn run<T: Send + 'static>(
        &self,
        operation: &'static str,
        create: bool,
        f: impl FnOnce(&mut Connection, &str) -> Result<T> + Send + 'static,
    ) -> Result<Option<T>> {
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || {
            let mut slot = inner.open.lock().unwrap_or_else(|p| p.into_inner());
            if slot.is_none() {
                if !create && !inner.path.exists() {
                    return Ok(None);
                }
                *slot = Some(open(&inner.path).map_err(|e| failure(&inner.path, operation, e))?);
            }
            match slot.as_mut() {
                Some(open) => f(&mut open.conn, &open.replica).map(Some),
                None => Ok(None),
            }
        })
        .await
        .map_err(|e| {
            failure(
                &self.inner.path,
                operation,
                format!("worker thread failed: {e}"),
            )
        })?
    }

    /// Like `run`, for writes (creates the file).
    async fn write<T: Send + 'static>(
        &self,
        operation: &'static str,
        f: impl FnOnce(&mut Connection, &str) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.run(operation, true, f)
            .await?
            .ok_or_else(|| failure(&self.inner.path, operation, "the log could not be opened"))
    }

    /// Like `run`, for reads: `default` when the file does not exist.
    async fn read<T: Send + 'static>(
        &self,
        operation: &'static str,
        default: T,
        f: impl FnOnce(&mut Connection, &str) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        Ok(self.run(operation, false, f).await?.unwrap_or(default))
    }
}

/// Opens (creating when missing) the file and readies it.
fn open(path: &Path) -> std::result::Result<Open, String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let replica = replica_id(dir).map_err(|e| e.to_string())?;
    let mut conn = Connection::open(path).map_err(|e| e.to_string())?;
    prepare(&mut conn, &replica).map_err(|e| e.to_string())?;
    Ok(Open { conn, replica })
}

/// A storage failure of `operation` on the file.
fn failure(path: &Path, operation: &'static str, err: impl std::fmt::Display) -> PalaceError {
    let message = format!("coordination log {operation}: {err}");
    PalaceError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(mempalace_core::disk_space::with_full_disk_note(
            message, path,
        )),
    }
}

fn sql(path: &Path, operation: &'static str) -> impl Fn(rusqlite::Error) -> PalaceError {
    let path = path.to_path_buf();
    move |e| failure(&path, operation, e)
}

fn event_from_row(row: &Row<'_>) -> rusqlite::Result<Event> {
    let metadata: String = row.get(17)?;
    Ok(Event {
        seq: row.get(0)?,
        id: row.get(1)?,
        origin_replica: row.get(2)?,
        origin_seq: row.get(3)?,
        hlc: row.get(4)?,
        event_type: row.get(5)?,
        stream: row.get(6)?,
        room: row.get(7)?,
        topic: row.get(8)?,
        from_agent: row.get(9)?,
        to_agent: row.get(10)?,
        correlation_id: row.get(11)?,
        branch: row.get(12)?,
        base_commit: row.get(13)?,
        status: row.get(14)?,
        artifact_ids: Vec::new(),
        body: row.get(15)?,
        created_at: row.get(16)?,
        metadata: parse_metadata(&metadata),
        body_truncated: None,
        body_length: None,
    })
}

fn artifact_from_row(row: &Row<'_>) -> rusqlite::Result<Artifact> {
    let metadata: String = row.get(8)?;
    Ok(Artifact {
        id: row.get(0)?,
        kind: row.get(1)?,
        sha256: row.get(2)?,
        size_bytes: row.get(3)?,
        content: row.get(4)?,
        created_by: row.get(5)?,
        created_at: row.get(6)?,
        origin_replica: row.get(7)?,
        metadata: parse_metadata(&metadata),
    })
}

/// Fills `artifact_ids` (sorted, as 3.11 reads them).
fn attach_artifact_ids(conn: &Connection, events: &mut [Event]) -> rusqlite::Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    let placeholders = vec!["?"; events.len()].join(",");
    let mut stmt = conn.prepare(&format!(
        "SELECT event_id, artifact_id FROM event_artifacts WHERE event_id IN ({placeholders}) \
         ORDER BY artifact_id"
    ))?;
    let rows = stmt.query_map(
        rusqlite::params_from_iter(events.iter().map(|e| e.id.clone())),
        |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
    )?;
    for row in rows {
        let (event_id, artifact_id) = row?;
        if let Some(e) = events.iter_mut().find(|e| e.id == event_id) {
            e.artifact_ids.push(artifact_id);
        }
    }
    Ok(())
}

fn anchor(conn: &Connection, id: &Option<String>, field: &'static str) -> Result<Option<i64>> {
    let Some(id) = id else { return Ok(None) };
    conn.query_row("SELECT rowid FROM events WHERE id = ?1", [id], |r| r.get(0))
        .optional()
        .map_err(|e| PalaceError::invalid(field, e.to_string()))?
        .map(Some)
        .ok_or_else(|| unknown_anchor(field, id))
}

#[async_trait]
impl CoordinationLog for SqliteCoordinationLog {
    async fn insert_event(&self, event: PreparedEvent) -> Result<Event> {
        let path = self.inner.path.clone();
        self.write("insert_event", move |conn, replica| {
            let err = sql(&path, "insert_event");
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(&err)?;
            for artifact_id in &event.artifact_ids {
                let found = tx
                    .prepare_cached("SELECT 1 FROM artifacts WHERE id = ?1")
                    .and_then(|mut s| s.exists([artifact_id]))
                    .map_err(&err)?;
                if !found {
                    return Err(unknown_artifact(artifact_id));
                }
            }
            let hlc = next_hlc(last_hlc(&tx).map_err(&err)?.as_deref(), replica);
            tx.execute(
                "INSERT INTO events (id, type, stream, room, topic, from_agent, to_agent, \
                 correlation_id, branch, base_commit, status, body, created_at, metadata_json, \
                 origin_replica, hlc) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, \
                 ?13, ?14, ?15, ?16)",
                params![
                    event.id,
                    event.event_type,
                    event.stream,
                    event.room,
                    event.topic,
                    event.from_agent,
                    event.to_agent,
                    event.correlation_id,
                    event.branch,
                    event.base_commit,
                    event.status,
                    event.body,
                    event.created_at,
                    event.metadata_json,
                    replica,
                    hlc,
                ],
            )
            .map_err(&err)?;
            let seq = tx.last_insert_rowid();
            tx.execute(
                "UPDATE events SET origin_seq = rowid WHERE rowid = ?1",
                [seq],
            )
            .map_err(&err)?;
            for artifact_id in &event.artifact_ids {
                tx.execute(
                    "INSERT INTO event_artifacts (event_id, artifact_id) VALUES (?1, ?2)",
                    [&event.id, artifact_id],
                )
                .map_err(&err)?;
            }
            tx.commit().map_err(&err)?;
            Ok(event.into_event(seq, Some(replica.to_string()), Some(seq), Some(hlc)))
        })
        .await
    }

    async fn list_events(&self, filter: &EventFilter) -> Result<Vec<Event>> {
        let path = self.inner.path.clone();
        let filter = filter.clone();
        self.read("list_events", Vec::new(), move |conn, _| {
            let err = sql(&path, "list_events");
            let mut clauses: Vec<String> = Vec::new();
            let mut values: Vec<SqlValue> = Vec::new();
            for (column, value) in [
                ("stream", &filter.stream),
                ("room", &filter.room),
                ("topic", &filter.topic),
                ("type", &filter.event_type),
                ("from_agent", &filter.from_agent),
                ("correlation_id", &filter.correlation_id),
                ("status", &filter.status),
            ] {
                if let Some(v) = value {
                    clauses.push(format!("{column} = ?"));
                    values.push(SqlValue::Text(v.clone()));
                }
            }
            if let Some(v) = &filter.to_agent {
                clauses.push("(to_agent = ? OR to_agent = '*')".into());
                values.push(SqlValue::Text(v.clone()));
            }
            if let Some(v) = &filter.since_created_at {
                clauses.push("created_at >= ?".into());
                values.push(SqlValue::Text(v.clone()));
            }
            if let Some(seq) = anchor(conn, &filter.since_event_id, "since_event_id")? {
                clauses.push("rowid > ?".into());
                values.push(SqlValue::Integer(seq));
            }
            if let Some(seq) = anchor(conn, &filter.before_event_id, "before_event_id")? {
                clauses.push("rowid < ?".into());
                values.push(SqlValue::Integer(seq));
            }
            let mut query = format!("SELECT {EVENT_COLUMNS} FROM events");
            if !clauses.is_empty() {
                query.push_str(" WHERE ");
                query.push_str(&clauses.join(" AND "));
            }
            let order = match filter.order {
                Order::Asc => "ASC",
                Order::Desc => "DESC",
            };
            query.push_str(&format!(" ORDER BY rowid {order} LIMIT ?"));
            values.push(SqlValue::Integer(filter.limit as i64));
            let mut stmt = conn.prepare(&query).map_err(&err)?;
            let mut events = stmt
                .query_map(rusqlite::params_from_iter(values), event_from_row)
                .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
                .map_err(&err)?;
            attach_artifact_ids(conn, &mut events).map_err(&err)?;
            Ok(events)
        })
        .await
    }

    async fn get_event(&self, id: &str) -> Result<Option<Event>> {
        let path = self.inner.path.clone();
        let id = id.to_string();
        self.read("get_event", None, move |conn, _| {
            let err = sql(&path, "get_event");
            let event = conn
                .query_row(
                    &format!("SELECT {EVENT_COLUMNS} FROM events WHERE id = ?1"),
                    [&id],
                    event_from_row,
                )
                .optional()
                .map_err(&err)?;
            let mut events: Vec<Event> = event.into_iter().collect();
            attach_artifact_ids(conn, &mut events).map_err(&err)?;
            Ok(events.pop())
        })
        .await
    }

    async fn insert_artifact(&self, artifact: PreparedArtifact) -> Result<Artifact> {
        let path = self.inner.path.clone();
        self.write("insert_artifact", move |conn, replica| {
            let err = sql(&path, "insert_artifact");
            conn.execute(
                "INSERT INTO artifacts (id, kind, sha256, size_bytes, content, created_by, \
                 created_at, metadata_json, origin_replica) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, \
                 ?8, ?9)",
                params![
                    artifact.id,
                    artifact.kind,
                    artifact.sha256,
                    artifact.size_bytes,
                    artifact.content,
                    artifact.created_by,
                    artifact.created_at,
                    artifact.metadata_json,
                    replica,
                ],
            )
            .map_err(&err)?;
            Ok(artifact.into_artifact(Some(replica.to_string())))
        })
        .await
    }

    async fn get_artifact(&self, id: &str) -> Result<Option<Artifact>> {
        let path = self.inner.path.clone();
        let id = id.to_string();
        self.read("get_artifact", None, move |conn, _| {
            conn.query_row(
                &format!("SELECT {ARTIFACT_COLUMNS} FROM artifacts WHERE id = ?1"),
                [&id],
                artifact_from_row,
            )
            .optional()
            .map_err(sql(&path, "get_artifact"))
        })
        .await
    }

    async fn artifact_rows(&self, after_id: Option<&str>, limit: usize) -> Result<Vec<Artifact>> {
        let path = self.inner.path.clone();
        let after = after_id.map(str::to_string);
        self.read("artifact_rows", Vec::new(), move |conn, _| {
            let err = sql(&path, "artifact_rows");
            let mut stmt = conn
                .prepare(&format!(
                    "SELECT {ARTIFACT_COLUMNS} FROM artifacts WHERE ?1 IS NULL OR id > ?1 \
                     ORDER BY id LIMIT ?2"
                ))
                .map_err(&err)?;
            stmt.query_map(params![after, limit as i64], artifact_from_row)
                .and_then(|rows| rows.collect())
                .map_err(&err)
        })
        .await
    }

    async fn import_event(&self, event: &Event) -> Result<bool> {
        validate_exported_event(event)?;
        let path = self.inner.path.clone();
        let event = event.clone();
        self.write("import_event", move |conn, _| {
            let err = sql(&path, "import_event");
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(&err)?;
            let present = tx
                .prepare_cached("SELECT 1 FROM events WHERE id = ?1")
                .and_then(|mut s| s.exists([&event.id]))
                .map_err(&err)?;
            if present {
                return Ok(false);
            }
            if let (Some(replica), Some(seq)) = (&event.origin_replica, event.origin_seq) {
                let clash: Option<String> = tx
                    .query_row(
                        "SELECT id FROM events WHERE origin_replica = ?1 AND origin_seq = ?2",
                        params![replica, seq],
                        |r| r.get(0),
                    )
                    .optional()
                    .map_err(&err)?;
                if let Some(other) = clash {
                    return Err(author_position_taken(&event.id, replica, seq, &other));
                }
            }
            for artifact_id in &event.artifact_ids {
                let found = tx
                    .prepare_cached("SELECT 1 FROM artifacts WHERE id = ?1")
                    .and_then(|mut s| s.exists([artifact_id]))
                    .map_err(&err)?;
                if !found {
                    return Err(unknown_artifact(artifact_id));
                }
            }
            tx.execute(
                "INSERT INTO events (id, type, stream, room, topic, from_agent, to_agent, \
                 correlation_id, branch, base_commit, status, body, created_at, metadata_json, \
                 origin_replica, origin_seq, hlc) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, \
                 ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
                params![
                    event.id,
                    event.event_type,
                    event.stream,
                    event.room,
                    event.topic,
                    event.from_agent,
                    event.to_agent,
                    event.correlation_id,
                    event.branch,
                    event.base_commit,
                    event.status,
                    event.body,
                    event.created_at,
                    exported_metadata_json(&event.metadata),
                    event.origin_replica,
                    event.origin_seq,
                    event.hlc,
                ],
            )
            .map_err(&err)?;
            for artifact_id in &event.artifact_ids {
                tx.execute(
                    "INSERT OR IGNORE INTO event_artifacts (event_id, artifact_id) VALUES (?1, ?2)",
                    [&event.id, artifact_id],
                )
                .map_err(&err)?;
            }
            tx.commit().map_err(&err)?;
            Ok(true)
        })
        .await
    }

    async fn snapshot_into(&self, palace_dir: &Path) -> Result<bool> {
        let path = self.inner.path.clone();
        let target = palace_dir.join(mempalace_core::PalaceLayout::COORDINATION_LOG);
        let replica = path
            .parent()
            .map(|dir| dir.join(mempalace_core::PalaceLayout::REPLICA));
        let replica_target = palace_dir.join(mempalace_core::PalaceLayout::REPLICA);
        self.read("snapshot", false, move |conn, _| {
            conn.execute("VACUUM INTO ?1", [target.to_string_lossy().into_owned()])
                .map_err(sql(&path, "snapshot"))?;
            // The replica id stays the palace's: a restored backup is the same replica.
            if let Some(replica) = replica.filter(|r| r.is_file()) {
                std::fs::copy(&replica, &replica_target)
                    .map_err(|e| PalaceError::io(replica_target.clone(), e))?;
            }
            Ok(true)
        })
        .await
    }

    async fn import_artifact(&self, artifact: &Artifact) -> Result<bool> {
        validate_exported_artifact(artifact)?;
        let path = self.inner.path.clone();
        let artifact = artifact.clone();
        self.write("import_artifact", move |conn, _| {
            let inserted = conn
                .execute(
                    "INSERT OR IGNORE INTO artifacts (id, kind, sha256, size_bytes, content, \
                     created_by, created_at, metadata_json, origin_replica) VALUES (?1, ?2, ?3, \
                     ?4, ?5, ?6, ?7, ?8, ?9)",
                    params![
                        artifact.id,
                        artifact.kind,
                        artifact.sha256,
                        artifact.size_bytes,
                        artifact.content,
                        artifact.created_by,
                        artifact.created_at,
                        exported_metadata_json(&artifact.metadata),
                        artifact.origin_replica,
                    ],
                )
                .map_err(sql(&path, "import_artifact"))?;
            Ok(inserted > 0)
        })
        .await
    }
}
