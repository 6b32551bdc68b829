//! # mempalace-kg-postgres
//!
//! MemPalace's temporal knowledge graph over PostgreSQL, for a fleet: every host that opens
//! the same server and schema shares one graph. The tables are the SQLite graph's (MemPalace
//! 3.11's columns, text compared byte-wise), one schema per palace ([`SchemaName::for_palace`]),
//! and the rules are the same: the conformance suite runs against both.
//!
//! What holds across hosts: writes are transactions; a unique index on open facts means two
//! hosts filing the same current fact at once file it once (the loser gets the winner's id);
//! supersede and invalidate lock the facts they close, so a fact is never closed twice or
//! closed while another host supersedes it. Reads of a schema that does not exist yet return
//! nothing and create nothing.
//!
//! Connections: a pool of up to 16 per process (tokio-postgres via deadpool), without TLS
//! (for a server on a private network or loopback).

mod graph;
mod schema;

pub use graph::PostgresKnowledgeGraph;
pub use schema::SchemaName;
