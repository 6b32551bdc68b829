//! The schema MemPalace writes, and its migration for older files.

use rusqlite::Connection;

/// The file name of the graph inside a palace folder.
pub const KG_FILE_NAME: &str = "knowledge_graph.sqlite3";

/// Tables and indexes exactly as MemPalace creates them.
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
";

/// Columns newer MemPalace versions added to `triples`; older files lack them.
const LATER_TRIPLE_COLUMNS: [&str; 2] = ["source_drawer_id", "adapter_name"];

/// Creates missing tables and indexes and adds missing columns, in one transaction.
pub(crate) fn ensure_schema(conn: &mut Connection) -> rusqlite::Result<()> {
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

/// Sets the connection up for several processes: WAL, a busy timeout, NORMAL sync (durable
/// against a process crash, as WAL commits are appended before they return).
pub(crate) fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(())
}
