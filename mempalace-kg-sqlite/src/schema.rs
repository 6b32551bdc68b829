//! The schema MemPalace writes, and its migration for older files.

use std::time::{Duration, Instant};

use std::path::Path;

use mempalace_core::knowledge_graph::entity_id;
use rusqlite::config::DbConfig;
use rusqlite::{Connection, ErrorCode, OpenFlags};

/// The file name of the graph inside a palace folder.
pub const KG_FILE_NAME: &str = mempalace_core::PalaceLayout::KNOWLEDGE_GRAPH;

/// Tables and indexes as MemPalace creates them, plus `idx_triples_spo`: without it the
/// duplicate check of every `add_triple` (same subject, predicate and object) searched one
/// single-column index and read every fact of a busy entity (13 ms per add at 50k facts on one
/// subject). An extra index leaves the file readable and writable by MemPalace.
const CREATE_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS entities (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    type TEXT DEFAULT 'unknown',
    properties TEXT DEFAULT '{}',
    created_at TEXT DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE IF NOT EXISTS triples (
    id TEXT PRIMARY KEY,
    subject TEXT NOT NULL,
    predicate TEXT NOT NULL,
    object TEXT NOT NULL,
    valid_from TEXT,
    valid_to TEXT,
    confidence REAL DEFAULT 1.0,
    source_closet TEXT,
    source_file TEXT,
    source_drawer_id TEXT,
    adapter_name TEXT,
    extracted_at TEXT DEFAULT CURRENT_TIMESTAMP,
    FOREIGN KEY (subject) REFERENCES entities(id),
    FOREIGN KEY (object) REFERENCES entities(id)
);
CREATE INDEX IF NOT EXISTS idx_triples_subject ON triples(subject);
CREATE INDEX IF NOT EXISTS idx_triples_object ON triples(object);
CREATE INDEX IF NOT EXISTS idx_triples_predicate ON triples(predicate);
CREATE INDEX IF NOT EXISTS idx_triples_valid ON triples(valid_from, valid_to);
CREATE INDEX IF NOT EXISTS idx_triples_spo ON triples(subject, predicate, object);
";

/// Columns newer MemPalace versions added to `triples`; older files lack them.
const LATER_TRIPLE_COLUMNS: [&str; 2] = ["source_drawer_id", "adapter_name"];

/// Tables and indexes [`CREATE_SCHEMA`] makes.
const SCHEMA_OBJECTS: [&str; 7] = [
    "entities",
    "triples",
    "idx_triples_subject",
    "idx_triples_object",
    "idx_triples_predicate",
    "idx_triples_valid",
    "idx_triples_spo",
];

/// Whether every table, index and column is already there (read-only check, no lock taken).
fn schema_is_current(conn: &Connection) -> rusqlite::Result<bool> {
    let present: i64 = conn.query_row(
        &format!(
            "SELECT COUNT(*) FROM sqlite_master WHERE name IN ({})",
            SCHEMA_OBJECTS.map(|n| format!("'{n}'")).join(",")
        ),
        [],
        |r| r.get(0),
    )?;
    if present != SCHEMA_OBJECTS.len() as i64 {
        return Ok(false);
    }
    let columns: i64 = conn.query_row(
        &format!(
            "SELECT COUNT(*) FROM pragma_table_info('triples') WHERE name IN ({})",
            LATER_TRIPLE_COLUMNS.map(|n| format!("'{n}'")).join(",")
        ),
        [],
        |r| r.get(0),
    )?;
    Ok(columns == LATER_TRIPLE_COLUMNS.len() as i64)
}

/// Creates missing tables and indexes and adds missing columns, in one transaction. A file
/// whose schema is complete is left alone, so reads never need a write lock (and a read-only
/// palace can be read).
fn ensure_schema(conn: &mut Connection) -> rusqlite::Result<()> {
    if schema_is_current(conn)? {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    tx.execute_batch(CREATE_SCHEMA)?;
    let existing: Vec<String> = {
        let mut stmt = tx.prepare("SELECT name FROM pragma_table_info('triples')")?;
        stmt.query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?
    };
    for column in LATER_TRIPLE_COLUMNS {
        if !existing.iter().any(|c| c == column) {
            tx.execute_batch(&format!("ALTER TABLE triples ADD COLUMN {column} TEXT"))?;
        }
    }
    tx.commit()
}

/// The entity id this project derived before it followed 3.11 (hyphens became underscores).
fn legacy_entity_id(name: &str) -> String {
    entity_id(name).replace('-', "_")
}

/// Re-keys entities that an earlier release of this project filed under its old id recipe
/// ("GPT-4" as `gpt_4`) to 3.11's (`gpt-4`), with their triples, so both programs find them;
/// where both ids exist the facts move to 3.11's. Only ids that equal the old recipe for their
/// own name are touched, so anything 3.11 wrote is left alone. Cheap when there is nothing to
/// do: one scan for names with a hyphen and ids without one.
fn rekey_legacy_entity_ids(conn: &mut Connection) -> rusqlite::Result<()> {
    let legacy: Vec<(String, String)> = {
        let mut stmt = conn.prepare(
            "SELECT id, name FROM entities WHERE instr(name, '-') > 0 AND instr(id, '-') = 0",
        )?;
        stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?
            .collect::<rusqlite::Result<Vec<_>>>()?
            .into_iter()
            .filter(|(id, name)| *id == legacy_entity_id(name) && *id != entity_id(name))
            .collect()
    };
    if legacy.is_empty() {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    for (old, name) in &legacy {
        let new = entity_id(name);
        let taken: bool = tx
            .prepare("SELECT 1 FROM entities WHERE id = ?1")?
            .exists([&new])?;
        // New row first, then the triples, then the old row: foreign keys hold throughout.
        if !taken {
            tx.execute(
                "INSERT INTO entities (id, name, type, properties, created_at)
                 SELECT ?2, name, type, properties, created_at FROM entities WHERE id = ?1",
                [old, &new],
            )?;
        }
        tx.execute(
            "UPDATE triples SET subject = ?2 WHERE subject = ?1",
            [old, &new],
        )?;
        tx.execute(
            "UPDATE triples SET object = ?2 WHERE object = ?1",
            [old, &new],
        )?;
        tx.execute("DELETE FROM entities WHERE id = ?1", [old])?;
    }
    tx.commit()
}

/// How long a connection waits for another connection's lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Makes a freshly opened connection ready: configured for several processes and with the
/// schema in place.
///
/// Several processes opening a new palace at once race to switch it to WAL and to create the
/// tables. SQLite answers some of those lock upgrades with an immediate "database is locked"
/// instead of waiting (to avoid deadlock), so the whole setup is retried with backoff until
/// [`BUSY_TIMEOUT`].
pub(crate) fn prepare(conn: &mut Connection) -> rusqlite::Result<()> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    let mut pause = Duration::from_millis(2);
    loop {
        match configure(conn)
            .and_then(|()| ensure_schema(conn))
            .and_then(|()| rekey_legacy_entity_ids(conn))
        {
            Err(e) if is_busy(&e) && Instant::now() + pause < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            outcome => return outcome,
        }
    }
}

/// True for errors that mean the file or its folder cannot be written (a read-only palace).
pub(crate) fn is_read_only(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied)
    )
}

/// Whether `error` says the file cannot be written now but may still be read: read-only
/// codes, and a disk with no space left (SQLite cannot create a WAL index there).
pub(crate) fn cannot_write_now(error: &rusqlite::Error) -> bool {
    is_read_only(error)
        || matches!(
            error.sqlite_error_code(),
            Some(ErrorCode::SystemIoFailure | ErrorCode::DiskFull)
        )
}

/// Whether the database at `path` has no write-ahead log holding commits (no `-wal` file, or
/// an empty one).
pub(crate) fn wal_is_empty(path: &Path) -> bool {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(std::path::PathBuf::from(wal)).map_or(true, |m| m.len() == 0)
}

/// Opens an existing graph for reading only, for a palace whose files or folder cannot be
/// written. A WAL file needs its `-shm` index, which a read-only folder may not let SQLite
/// create; then the file is opened as immutable (nothing else can be writing it either).
pub(crate) fn open_read_only(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    let conn = match conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    }) {
        Ok(_) => conn,
        // Immutable mode ignores a `-wal` file: only safe when it holds nothing.
        Err(e) if is_read_only(&e) || (cannot_write_now(&e) && wal_is_empty(path)) => {
            drop(conn);
            let uri = format!("file:{}?immutable=1", uri_path(path));
            Connection::open_with_flags(
                uri,
                OpenFlags::SQLITE_OPEN_READ_ONLY
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX
                    | OpenFlags::SQLITE_OPEN_URI,
            )?
        }
        Err(e) => return Err(e),
    };
    keep_plans(&conn)?;
    Ok(conn)
}

/// A path percent-encoded for an SQLite `file:` URI.
fn uri_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Keeps a cached statement's query plan when new values are bound (SQLite's query planner
/// stability guarantee). Without it the bundled SQLite (built with STAT4) re-prepares a
/// statement whose parameter meets an indexed or joined column every time that parameter
/// changes: each fact query was parsed and planned again on every call, 35 µs against the
/// 2 µs it takes to run. The plans lost depend on a bound value (a LIKE prefix, a partial
/// index), which the graph's queries do not use.
fn keep_plans(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
        .map(|_| ())
}

/// True for SQLite's "another connection holds the lock" errors.
fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Sets the connection up for several processes: WAL, a busy timeout, NORMAL sync (durable
/// against a process crash, as WAL commits are appended before they return).
///
/// WAL is persistent in the file, so the mode is only switched (which needs an exclusive
/// lock) when the file is not in WAL mode yet.
fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    keep_plans(conn)?;
    let mode: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        conn.pragma_update(None, "journal_mode", "WAL")?;
    }
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(())
}
