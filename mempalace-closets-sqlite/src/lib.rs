//! # mempalace-closets-sqlite
//!
//! A palace's closets (MemPalace 3.11's pointer lines, brought by `mempalace migrate`) in one
//! SQLite file, `closets.sqlite3` in the palace folder, found by their words through an FTS5
//! trigram index: the index ChromaDB gives 3.11's closets, so a query word matches anywhere in
//! a closet line, case-insensitively, as it does in 3.11.
//!
//! Reads of a missing file find nothing and create nothing; the first write creates it. Every
//! handle, in this process or another, may use the same file at once (WAL, busy timeout).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use mempalace_core::closets::{Closet, ClosetIndex, ClosetMove, ClosetScope};
use mempalace_core::{PalaceError, Result};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, TransactionBehavior, params, params_from_iter};

/// The closets' file inside a palace folder.
pub const CLOSETS_FILE: &str = mempalace_core::PalaceLayout::CLOSETS;

/// How long a statement waits for another writer.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS closets (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    text TEXT NOT NULL,
    wing TEXT NOT NULL,
    room TEXT NOT NULL,
    source_file TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS closets_by_source ON closets(source_file);
CREATE VIRTUAL TABLE IF NOT EXISTS closet_words
    USING fts5(text, content='closets', content_rowid='seq', tokenize='trigram');
CREATE TRIGGER IF NOT EXISTS closets_added AFTER INSERT ON closets BEGIN
    INSERT INTO closet_words(rowid, text) VALUES (new.seq, new.text);
END;
CREATE TRIGGER IF NOT EXISTS closets_removed AFTER DELETE ON closets BEGIN
    INSERT INTO closet_words(closet_words, rowid, text) VALUES ('delete', old.seq, old.text);
END;
CREATE TRIGGER IF NOT EXISTS closets_changed AFTER UPDATE ON closets BEGIN
    INSERT INTO closet_words(closet_words, rowid, text) VALUES ('delete', old.seq, old.text);
    INSERT INTO closet_words(rowid, text) VALUES (new.seq, new.text);
END;
";

struct Inner {
    path: PathBuf,
    conn: Mutex<Option<Connection>>,
}

/// A palace's closets in one SQLite file. Cheap to clone (clones share the connection); SQLite
/// work runs on tokio's blocking threads.
#[derive(Clone)]
pub struct SqliteClosets {
    inner: Arc<Inner>,
}

fn failure(path: &Path, operation: &'static str, e: impl std::fmt::Display) -> PalaceError {
    PalaceError::store("closets", operation, format!("{}: {e}", path.display()))
}

impl SqliteClosets {
    /// Closets in the file at `path`.
    pub fn open(path: impl Into<PathBuf>) -> Self {
        SqliteClosets {
            inner: Arc::new(Inner {
                path: path.into(),
                conn: Mutex::new(None),
            }),
        }
    }

    /// Closets in `palace_dir/closets.sqlite3`.
    pub fn in_palace(palace_dir: &Path) -> Self {
        Self::open(palace_dir.join(CLOSETS_FILE))
    }

    /// The file path.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Runs `f` on the connection in a blocking thread; `default` when `create` is false and
    /// the file does not exist.
    async fn run<T: Send + 'static>(
        &self,
        operation: &'static str,
        create: bool,
        default: T,
        f: impl FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T> {
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || {
            let mut slot = inner.conn.lock().unwrap_or_else(|p| p.into_inner());
            if slot.is_none() {
                if !create && !inner.path.exists() {
                    return Ok(default);
                }
                *slot = Some(open(&inner.path).map_err(|e| failure(&inner.path, operation, e))?);
            }
            match slot.as_mut() {
                Some(conn) => f(conn).map_err(|e| failure(&inner.path, operation, e)),
                None => Ok(default),
            }
        })
        .await
        .map_err(|e| failure(&self.inner.path, operation, format!("worker failed: {e}")))?
    }
}

/// Opens (creating when missing) the file and readies its schema.
fn open(path: &Path) -> std::result::Result<Connection, String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    }
    let conn = Connection::open(path).map_err(|e| e.to_string())?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| e.to_string())?;
    // A cached statement keeps its plan when new values are bound: otherwise the bundled
    // SQLite (built with STAT4) parses and plans it again whenever a parameter changes.
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )
    .map_err(|e| e.to_string())?;
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(|e| e.to_string())?;
    conn.execute_batch(SCHEMA).map_err(|e| e.to_string())?;
    Ok(conn)
}

/// An FTS5 query matching any of `words` (each quoted, so it is only ever a phrase).
fn any_of(words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" OR ")
}

#[async_trait]
impl ClosetIndex for SqliteClosets {
    fn backend_name(&self) -> &'static str {
        "sqlite"
    }

    async fn upsert(&self, closets: &[Closet]) -> Result<()> {
        if closets.is_empty() {
            return Ok(());
        }
        let closets = closets.to_vec();
        self.run("upsert", true, (), move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            {
                let mut put = tx.prepare_cached(
                    "INSERT INTO closets (id, text, wing, room, source_file)
                     VALUES (?1, ?2, ?3, ?4, ?5)
                     ON CONFLICT(id) DO UPDATE SET text = excluded.text, wing = excluded.wing,
                         room = excluded.room, source_file = excluded.source_file",
                )?;
                for c in &closets {
                    put.execute(params![c.id, c.text, c.wing, c.room, c.source_file])?;
                }
            }
            tx.commit()
        })
        .await
    }

    async fn insert_missing(&self, closets: &[Closet]) -> Result<usize> {
        if closets.is_empty() {
            return Ok(0);
        }
        let closets = closets.to_vec();
        self.run("insert_missing", true, 0, move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut added = 0;
            {
                let mut put = tx.prepare_cached(
                    "INSERT OR IGNORE INTO closets (id, text, wing, room, source_file)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )?;
                for c in &closets {
                    added += put.execute(params![c.id, c.text, c.wing, c.room, c.source_file])?;
                }
            }
            tx.commit()?;
            Ok(added)
        })
        .await
    }

    async fn containing_any(
        &self,
        words: &[String],
        scope: &ClosetScope,
        cap: usize,
    ) -> Result<Vec<Closet>> {
        // The trigram index cannot match a word shorter than three characters.
        let words: Vec<String> = words
            .iter()
            .filter(|w| w.chars().count() >= 3)
            .map(|w| w.to_lowercase())
            .collect();
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let scope = scope.clone();
        self.run("search", false, Vec::new(), move |conn| {
            let mut sql = String::from(
                "SELECT c.id, c.text, c.wing, c.room, c.source_file
                 FROM closet_words JOIN closets c ON c.seq = closet_words.rowid
                 WHERE closet_words MATCH ?1",
            );
            let mut values: Vec<SqlValue> = vec![SqlValue::Text(any_of(&words))];
            for (column, value) in [
                ("wing", &scope.wing),
                ("room", &scope.room),
                ("source_file", &scope.source_file),
            ] {
                if let Some(v) = value {
                    values.push(SqlValue::Text(v.clone()));
                    sql.push_str(&format!(" AND c.{column} = ?{}", values.len()));
                }
            }
            if scope.is_everything() {
                values.push(SqlValue::Integer(i64::try_from(cap).unwrap_or(i64::MAX)));
                sql.push_str(&format!(
                    " ORDER BY closet_words.rank, c.seq LIMIT ?{}",
                    values.len()
                ));
            } else {
                sql.push_str(" ORDER BY c.seq");
            }
            let mut stmt = conn.prepare_cached(&sql)?;
            let rows = stmt.query_map(params_from_iter(values), |r| {
                Ok(Closet {
                    id: r.get(0)?,
                    text: r.get(1)?,
                    wing: r.get(2)?,
                    room: r.get(3)?,
                    source_file: r.get(4)?,
                })
            })?;
            rows.collect()
        })
        .await
    }

    async fn delete_for_sources(&self, sources: &[String]) -> Result<usize> {
        if sources.is_empty() {
            return Ok(0);
        }
        let sources = sources.to_vec();
        self.run("delete", false, 0, move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut deleted = 0;
            {
                let mut drop = tx.prepare_cached("DELETE FROM closets WHERE source_file = ?1")?;
                for s in &sources {
                    deleted += drop.execute(params![s])?;
                }
            }
            tx.commit()?;
            Ok(deleted)
        })
        .await
    }

    async fn relocate_sources(&self, moves: &[ClosetMove]) -> Result<usize> {
        if moves.is_empty() {
            return Ok(0);
        }
        let moves = moves.to_vec();
        self.run("relocate", false, 0, move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut moved = 0;
            {
                let mut relabel = tx.prepare_cached(
                    "UPDATE closets SET wing = ?3, room = COALESCE(?5, room) \
                     WHERE source_file = ?1 AND wing = ?2 AND (?4 IS NULL OR room = ?4)",
                )?;
                for m in &moves {
                    moved += relabel.execute(params![
                        m.source_file,
                        m.from_wing,
                        m.wing,
                        m.from_room,
                        m.room
                    ])?;
                }
            }
            tx.commit()?;
            Ok(moved)
        })
        .await
    }

    async fn count(&self) -> Result<u64> {
        self.run("count", false, 0, |conn| {
            conn.query_row("SELECT COUNT(*) FROM closets", [], |r| r.get::<_, i64>(0))
                .map(|n| n as u64)
        })
        .await
    }

    async fn snapshot_into(&self, palace_dir: &Path) -> Result<bool> {
        let target = palace_dir.join(mempalace_core::PalaceLayout::CLOSETS);
        self.run("snapshot", false, false, move |conn| {
            conn.execute("VACUUM INTO ?1", [target.to_string_lossy().into_owned()])
                .map(|_| true)
        })
        .await
    }

    async fn closet_rows(&self, after_id: Option<&str>, limit: usize) -> Result<Vec<Closet>> {
        let after = after_id.map(str::to_string);
        self.run("closet_rows", false, Vec::new(), move |conn| {
            let mut stmt = conn.prepare(
                "SELECT id, text, wing, room, source_file FROM closets \
                 WHERE ?1 IS NULL OR id > ?1 ORDER BY id LIMIT ?2",
            )?;
            stmt.query_map(params![after, limit as i64], |r| {
                Ok(Closet {
                    id: r.get(0)?,
                    text: r.get(1)?,
                    wing: r.get(2)?,
                    room: r.get(3)?,
                    source_file: r.get(4)?,
                })
            })?
            .collect()
        })
        .await
    }
}
