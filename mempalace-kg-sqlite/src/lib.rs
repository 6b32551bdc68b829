//! # mempalace-kg-sqlite
//!
//! MemPalace's temporal knowledge graph over SQLite (bundled, no system library), using the
//! same schema as the Python MemPalace, so a `knowledge_graph.sqlite3` from an existing palace
//! opens here and one written here opens there.
//!
//! The database runs in WAL mode with a busy timeout and short `IMMEDIATE` transactions, so
//! several processes can share one file. The file is created on the first write: reads of a
//! graph that does not exist yet return empty results and create nothing.

mod facts;
mod graph;
mod rows;
mod schema;

pub use graph::SqliteKnowledgeGraph;
pub use schema::KG_FILE_NAME;
