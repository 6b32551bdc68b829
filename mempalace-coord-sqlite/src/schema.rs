//! 3.11's `logstream.sqlite3` schema (`Logstream._init_db` + `_migrate_schema`) and the
//! connection setup for several processes.

use std::path::Path;
use std::time::{Duration, Instant};

use mempalace_core::coordination::{is_replica_id, new_replica_id, render_hlc};
use rusqlite::{Connection, ErrorCode, OptionalExtension, TransactionBehavior};

/// 3.11's `CREATE TABLE` / `CREATE INDEX` script, verbatim (minus its `PRAGMA`).
pub const CREATE_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS events (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    stream TEXT NOT NULL,
    room TEXT NOT NULL,
    topic TEXT,
    from_agent TEXT NOT NULL,
    to_agent TEXT,
    correlation_id TEXT,
    branch TEXT,
    base_commit TEXT,
    status TEXT,
    body TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    metadata_json TEXT NOT NULL DEFAULT '{}',
    origin_replica TEXT,
    origin_seq INTEGER,
    hlc TEXT
);

CREATE INDEX IF NOT EXISTS events_stream_created_idx
    ON events(stream, created_at);
CREATE INDEX IF NOT EXISTS events_correlation_idx
    ON events(correlation_id, created_at);
CREATE INDEX IF NOT EXISTS events_to_agent_idx
    ON events(to_agent, created_at);
CREATE INDEX IF NOT EXISTS events_type_idx
    ON events(type, created_at);

CREATE TABLE IF NOT EXISTS artifacts (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    content TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    metadata_json TEXT NOT NULL DEFAULT '{}',
    origin_replica TEXT
);

CREATE INDEX IF NOT EXISTS artifacts_sha256_idx ON artifacts(sha256);

CREATE TABLE IF NOT EXISTS event_artifacts (
    event_id TEXT NOT NULL,
    artifact_id TEXT NOT NULL,
    PRIMARY KEY (event_id, artifact_id)
);
";

/// Every table and index a current file has.
const SCHEMA_OBJECTS: [&str; 11] = [
    "events",
    "artifacts",
    "event_artifacts",
    "events_stream_created_idx",
    "events_correlation_idx",
    "events_to_agent_idx",
    "events_type_idx",
    "artifacts_sha256_idx",
    "events_topic_created_idx",
    "events_origin_seq_idx",
    "events_hlc_idx",
];

/// Columns later 3.11 releases added to `events`.
const LATER_EVENT_COLUMNS: [&str; 4] = ["topic", "origin_replica", "origin_seq", "hlc"];

/// How long a connection waits for another's lock.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Whether the schema is complete and every event is stamped (a read-only check).
fn schema_is_current(conn: &Connection) -> rusqlite::Result<bool> {
    let names = SCHEMA_OBJECTS.map(|n| format!("'{n}'")).join(",");
    let present: i64 = conn.query_row(
        &format!("SELECT COUNT(*) FROM sqlite_master WHERE name IN ({names})"),
        [],
        |r| r.get(0),
    )?;
    if present != SCHEMA_OBJECTS.len() as i64 {
        return Ok(false);
    }
    let cols = LATER_EVENT_COLUMNS.map(|n| format!("'{n}'")).join(",");
    let columns: i64 = conn.query_row(
        &format!("SELECT COUNT(*) FROM pragma_table_info('events') WHERE name IN ({cols})"),
        [],
        |r| r.get(0),
    )?;
    let art: i64 = conn.query_row(
        "SELECT COUNT(*) FROM pragma_table_info('artifacts') WHERE name = 'origin_replica'",
        [],
        |r| r.get(0),
    )?;
    if columns != LATER_EVENT_COLUMNS.len() as i64 || art != 1 {
        return Ok(false);
    }
    // Index-backed (events_origin_seq_idx starts with origin_replica).
    let unstamped: bool = conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM events WHERE origin_replica IS NULL)",
        [],
        |r| r.get(0),
    )?;
    Ok(!unstamped)
}

/// 3.11's `_init_db` + `_migrate_schema` in one IMMEDIATE transaction: tables, indexes, later
/// columns, and the backfill that stamps pre-provenance rows as authored by `replica`.
fn ensure_schema(conn: &mut Connection, replica: &str) -> rusqlite::Result<()> {
    if schema_is_current(conn)? {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute_batch(CREATE_SCHEMA)?;
    let existing: Vec<String> = {
        let mut stmt = tx.prepare("SELECT name FROM pragma_table_info('events')")?;
        stmt.query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?
    };
    let has = |c: &str| existing.iter().any(|e| e == c);
    if !has("topic") {
        tx.execute_batch("ALTER TABLE events ADD COLUMN topic TEXT")?;
    }
    tx.execute_batch(
        "CREATE INDEX IF NOT EXISTS events_topic_created_idx ON events(topic, created_at)",
    )?;
    for (col, ty) in [
        ("origin_replica", "TEXT"),
        ("origin_seq", "INTEGER"),
        ("hlc", "TEXT"),
    ] {
        if !has(col) {
            tx.execute_batch(&format!("ALTER TABLE events ADD COLUMN {col} {ty}"))?;
        }
    }
    let art_has: bool = tx.query_row(
        "SELECT COUNT(*) FROM pragma_table_info('artifacts') WHERE name = 'origin_replica'",
        [],
        |r| r.get::<_, i64>(0).map(|n| n > 0),
    )?;
    if !art_has {
        tx.execute_batch("ALTER TABLE artifacts ADD COLUMN origin_replica TEXT")?;
    }
    let rows: Vec<(i64, String)> = {
        let mut stmt =
            tx.prepare("SELECT rowid, created_at FROM events WHERE origin_replica IS NULL")?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?
    };
    for (rowid, created_at) in rows {
        let ms = chrono::NaiveDateTime::parse_from_str(&created_at, "%Y-%m-%dT%H:%M:%SZ")
            .map(|t| t.and_utc().timestamp_millis())
            .unwrap_or(0);
        let counter = rowid.clamp(0, 0xFF_FFFF) as u32;
        tx.execute(
            "UPDATE events SET origin_replica = ?1, origin_seq = rowid, hlc = ?2 WHERE rowid = ?3",
            rusqlite::params![replica, render_hlc(ms, counter, replica), rowid],
        )?;
    }
    tx.execute(
        "UPDATE artifacts SET origin_replica = ?1 WHERE origin_replica IS NULL",
        [replica],
    )?;
    tx.execute_batch(
        "CREATE UNIQUE INDEX IF NOT EXISTS events_origin_seq_idx ON events(origin_replica, origin_seq);
         CREATE INDEX IF NOT EXISTS events_hlc_idx ON events(hlc);",
    )?;
    tx.commit()
}

/// True for "another connection holds the lock".
pub fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// WAL (switched only when needed: it is persistent and needs an exclusive lock), a busy
/// timeout, NORMAL sync.
fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // A cached statement keeps its plan when new values are bound: otherwise the bundled
    // SQLite (built with STAT4) parses and plans it again whenever a parameter changes.
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    let mode: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        conn.pragma_update(None, "journal_mode", "WAL")?;
    }
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(())
}

/// Configures a fresh connection and brings the schema up to date, retrying with backoff
/// while other processes set up the same new file (SQLite answers some of those lock
/// upgrades with an immediate "locked").
pub fn prepare(conn: &mut Connection, replica: &str) -> rusqlite::Result<()> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    let mut pause = Duration::from_millis(2);
    loop {
        match configure(conn).and_then(|()| ensure_schema(conn, replica)) {
            Err(e) if is_busy(&e) && Instant::now() + pause < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            outcome => return outcome,
        }
    }
}

/// The palace's replica id from `replica.json` beside the log (3.11's file), minted and
/// written without clobbering (temp file + hard link) when absent. A corrupt file is an error,
/// as in 3.11: two ids for one palace would fork its provenance.
pub fn replica_id(dir: &Path) -> std::io::Result<String> {
    let path = dir.join(mempalace_core::PalaceLayout::REPLICA);
    for _ in 0..3 {
        match std::fs::read_to_string(&path) {
            Ok(text) => return parse_replica(&path, &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        std::fs::create_dir_all(dir)?;
        let id = new_replica_id();
        let tmp = dir.join(format!(
            ".replica.json.{}.tmp",
            mempalace_core::coordination::random_hex(8)
        ));
        let body = serde_json::json!({"replica_id": id, "minted_at_note": "RFC 004 step 0"});
        let text = serde_json::to_string_pretty(&body).unwrap_or_default() + "\n";
        std::fs::write(&tmp, text)?;
        let linked = std::fs::hard_link(&tmp, &path);
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Ok(()) => return Ok(id),
            // Another process minted first: read theirs.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(format!(
        "could not read or mint {}",
        path.display()
    )))
}

fn parse_replica(path: &Path, text: &str) -> std::io::Result<String> {
    let id = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.get("replica_id")?.as_str().map(str::to_string));
    match id {
        Some(id) if is_replica_id(&id) => Ok(id),
        _ => Err(std::io::Error::other(format!(
            "{} is corrupt or holds an invalid replica_id; refusing to mint a second replica identity for this palace — restore or delete the file explicitly",
            path.display()
        ))),
    }
}

/// The newest HLC stamp in the log.
pub fn last_hlc(conn: &Connection) -> rusqlite::Result<Option<String>> {
    conn.query_row("SELECT max(hlc) FROM events", [], |r| r.get(0))
        .optional()
        .map(Option::flatten)
}
